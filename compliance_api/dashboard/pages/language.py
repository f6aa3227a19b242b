"""`/freelancer/language`: the language switch in every page's header (a form, so it works without JavaScript),
remembered in a cookie for a year; without it, pages follow the browser's `Accept-Language`."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse

from compliance_api.classify.language import CODES
from compliance_api.dashboard.i18n import LANGUAGE_COOKIE
from compliance_api.dashboard.nav import DashboardPage
from compliance_api.dashboard.web import CheckedForm, field, redirect, safe_next, set_cookie

router = APIRouter()
REMEMBERED_SECONDS = 365 * 24 * 3600


@router.post("/language", include_in_schema=False)
async def switch_language(request: Request, form: CheckedForm) -> RedirectResponse:
    """Remember the chosen language and go back to the page the switch was on (a dashboard page only)."""
    response = redirect(safe_next(field(form, "next")))
    chosen = field(form, "language")
    if chosen in CODES:
        set_cookie(response, request, LANGUAGE_COOKIE, chosen, REMEMBERED_SECONDS)
    return response


PAGE = DashboardPage(router)
