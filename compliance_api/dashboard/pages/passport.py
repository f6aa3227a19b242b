"""`/freelancer/passport`: the signed-in freelancer's passports (production, and sandbox if any), share links and
who verified them, through the passport service (the same rules as `/v1/passport/shares`)."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts.models import User, UserKind
from compliance_api.dashboard.i18n import N_, text
from compliance_api.dashboard.nav import DashboardPage, NavItem
from compliance_api.dashboard.service import Acting
from compliance_api.dashboard.web import (
    CheckedForm,
    CurrentAccount,
    api_problem,
    field,
    int_field,
    not_found,
    redirect,
    render,
    state_of,
)
from compliance_api.errors import ApiError
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.passport import service as passport_service
from compliance_api.passport import views as passport_views
from compliance_api.passport.catalogue import packaged_catalogue
from compliance_api.passport.schemas import MAX_TTL_DAYS, OwnPassport, Share, ShareView
from compliance_api.sessions import DbSession

router = APIRouter()
FREELANCERS_ONLY = text(N_("Passports belong to freelancer accounts."))


@dataclass(frozen=True, slots=True)
class EnvironmentPassport:
    environment: Environment
    passport: OwnPassport
    shares: list[tuple[Share, list[ShareView]]]


async def _passport_in(
    session: AsyncSession, account: User, environment: Environment, now: dt.datetime
) -> EnvironmentPassport | None:
    acting = Acting.of(account, environment)
    catalogue = packaged_catalogue()
    try:
        standing = await passport_service.own_passport(session, acting, catalogue, now)
    except ApiError as exc:
        if exc.code == "no_passport":
            return None
        raise
    shares = [
        (passport_views.share(share, now), [passport_views.viewing(seen) for seen in seen_by])
        for share, seen_by in await passport_service.shares_with_views(session, acting)
    ]
    return EnvironmentPassport(environment, passport_views.own_passport(standing, catalogue), list(reversed(shares)))


async def _page(
    request: Request, account: User, session: AsyncSession, *, status_code: int = 200, **context: Any
) -> HTMLResponse:
    passports: dict[Environment, EnvironmentPassport | None] = {}
    if account.kind is UserKind.freelancer:
        now = utcnow()
        passports = {environment: await _passport_in(session, account, environment, now) for environment in Environment}
    return render(
        request,
        "passport/page.html",
        account=account,
        status_code=status_code,
        passports=passports,
        max_ttl_days=MAX_TTL_DAYS,
        **context,
    )


@router.get("/passport", include_in_schema=False)
async def passport_page(request: Request, account: CurrentAccount, session: DbSession) -> HTMLResponse:
    return await _page(request, account, session)


def _environment(form_value: str) -> Environment | None:
    return Environment(form_value) if form_value in set(Environment) else None


@router.post("/passport/shares", include_in_schema=False)
async def create_share(request: Request, account: CurrentAccount, form: CheckedForm, session: DbSession) -> Response:
    environment = _environment(field(form, "environment"))
    ttl_days = int_field(form, "ttl_days", minimum=1, maximum=MAX_TTL_DAYS)
    if environment is None or ttl_days is None:
        error = text(N_("Choose a lifetime of 1 to %(maximum)s days."), maximum=MAX_TTL_DAYS)
        return await _page(request, account, session, status_code=400, error=error)
    try:
        created = await passport_service.create_share(
            session,
            Acting.of(account, environment),
            ttl_days=ttl_days,
            pepper=state_of(request).pepper,
            now=utcnow(),
        )
    except ApiError as exc:  # a business account, or no passport in that environment
        refusals = {
            "freelancer_only": FREELANCERS_ONLY,
            "no_passport": text(
                N_("You have no passport in %(environment)s yet."), environment=text(environment.label)
            ),
        }
        return await _page(request, account, session, status_code=exc.status_code, error=api_problem(exc, refusals))
    share = passport_views.share_created(created, utcnow())
    return render(request, "passport/share_created.html", account=account, share=share, environment=environment)


@router.get("/passport/shares/{environment}/{share_id}/revoke", include_in_schema=False)
async def confirm_revoke(
    request: Request, environment: Environment, share_id: uuid.UUID, account: CurrentAccount, session: DbSession
) -> Response:
    try:
        found = await passport_service.get_share(session, Acting.of(account, environment), share_id)
    except ApiError:  # another user's share, a business account, no passport, or an unknown id
        return not_found(request, account)
    share = passport_views.share(found, utcnow())
    return render(request, "passport/revoke.html", account=account, share=share, environment=environment)


@router.post("/passport/shares/{environment}/{share_id}/revoke", include_in_schema=False)
async def revoke_share(
    request: Request,
    environment: Environment,
    share_id: uuid.UUID,
    account: CurrentAccount,
    _: CheckedForm,
    session: DbSession,
) -> Response:
    try:
        await passport_service.revoke_share(session, Acting.of(account, environment), share_id, utcnow())
    except ApiError:
        return not_found(request, account)
    return redirect("/passport?done=share_revoked")


PAGE = DashboardPage(router, NavItem(N_("Passport"), "/passport", order=20))
