"""Every dashboard page, in one list (the seam for the webhooks and DAC7 pages: add their `PAGE` here)."""

from __future__ import annotations

from compliance_api.dashboard.nav import DashboardPage
from compliance_api.dashboard.pages import (
    account,
    assessments,
    classifications,
    dac7,
    events,
    language,
    logs,
    passport,
    rates,
    tokens,
    usage,
    webhooks,
)

DASHBOARD_PAGES: tuple[DashboardPage, ...] = (
    account.PAGE,
    language.PAGE,
    tokens.PAGE,
    passport.PAGE,
    webhooks.PAGE,
    dac7.PAGE,
    assessments.PAGE,
    classifications.PAGE,
    events.PAGE,
    rates.PAGE,
    logs.PAGE,
    usage.PAGE,
)
