"""Every dashboard page, in one list (the seam for the webhooks and DAC7 pages: add their `PAGE` here)."""

from __future__ import annotations

from compliance_api.dashboard.nav import DashboardPage
from compliance_api.dashboard.pages import account, dac7, logs, passport, tokens, usage, webhooks

DASHBOARD_PAGES: tuple[DashboardPage, ...] = (
    account.PAGE,
    tokens.PAGE,
    passport.PAGE,
    webhooks.PAGE,
    dac7.PAGE,
    logs.PAGE,
    usage.PAGE,
)
