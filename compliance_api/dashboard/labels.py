"""Words the dashboard shows that come from other domains' data (statuses, verdicts, environments, sector names,
event summaries, passport checks), marked here for the catalogues: templates translate them with the `translated`
filter. Their message ids are those domains' English texts; tests/dashboard/test_i18n.py holds each list to its
source, so a new status, sector or event fails a test until it is listed (and translated) here."""

from __future__ import annotations

from compliance_api.dashboard.i18n import N_

ENVIRONMENTS = (N_("production"), N_("sandbox"))
"""`Environment.label`."""

VERDICTS = (N_("safe"), N_("risky"), N_("unsafe"))
"""`Verdict` values."""

STATUSES = (
    N_("active"),
    N_("revoked"),
    N_("expired"),
    N_("failing"),
    N_("disabled"),
    N_("pending"),
    N_("succeeded"),
    N_("failed"),
    N_("cancelled"),
)
"""Statuses of tokens, share links, DAC7 grants, webhook endpoints and deliveries."""

PASSPORT_LEVELS = (N_("none"), N_("low"), N_("medium"), N_("high"))
"""The passport catalogue's levels."""

PASSPORT_CHECKS = (
    N_("KvK registration"),
    N_("VAT number"),
    N_("Identity"),
    N_("Professional liability insurance"),
    N_("Certificate of conduct"),
)
"""The passport catalogue's check names."""

SECTORS = (
    N_("Accountants and bookkeepers"),
    N_("Agriculture"),
    N_("Business services and consultancy"),
    N_("Coaches and trainers"),
    N_("Communications"),
    N_("Construction (contractors)"),
    N_("Cooks"),
    N_("Copywriters"),
    N_("Teachers"),
    N_("Financial advisers"),
    N_("Financial-sector professionals"),
    N_("Gardeners"),
    N_("Work for government clients"),
    N_("Hospitality (horeca)"),
    N_("Human resources"),
    N_("ICT"),
    N_("ICT consultants"),
    N_("Interim managers"),
    N_("Legal (jurists)"),
    N_("Mechanics"),
    N_("Nurses"),
    N_("Painters"),
    N_("Psychologists"),
    N_("Security guards"),
    N_("System administrators"),
)
"""The rate benchmark's sector names."""

EVENT_SUMMARIES = (
    N_("A cached WTTA admission changed status (every subscribed endpoint of the environment)."),
    N_("The freelancer's passport changed."),
    N_("Someone verified one of the freelancer's share-tokens."),
    N_("The freelancer's DAC7 figures for a year changed."),
    N_("The account made a classification."),
    N_("A monitored classification's verdict changed when it was re-scored under the law in force on a date."),
    N_("An API token of the account was created."),
    N_("An API token of the account was revoked."),
    N_("One of the account's endpoints exhausted a delivery's retry schedule (3 days of failures)."),
)
"""The summaries of the events a webhook endpoint can subscribe to."""

LEGAL_STATUSES = (
    N_("consultation draft"),
    N_("draft bill"),
    N_("bill"),
    N_("adopted not in force"),
    N_("in force"),
)
"""The Dutch tariefgrens's `legal_status` values, underscores as spaces."""

CHANGE_CAUSES = (N_("ruleset"), N_("threshold"), N_("criterion"), N_("rule"))
"""What made a re-scored verdict differ (`VerdictChangeCause.what`)."""
