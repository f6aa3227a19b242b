"""`/freelancer/dac7`: the signed-in seller's DAC7 figures for the current year and the read grants they gave, per
environment, through the DAC7 service (the same rules as `/v1/dac7/seller/{id}` and `/v1/dac7/grants`).

A grantee is named by user id, as in the API: the page never looks up e-mail addresses, so it reveals no more about
other accounts than the API does (`grantee_not_found` for an unknown id)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData

from compliance_api.accounts.models import User, UserKind
from compliance_api.config import settings_of
from compliance_api.dac7 import service as dac7_service
from compliance_api.dac7 import views as dac7_views
from compliance_api.dac7.identity import SellerIdentity, refusals
from compliance_api.dac7.schemas import Dac7IdentityOut, Dac7SellerOut, Grant, GrantCreate
from compliance_api.dac7.sealing import IdentityBox, identity_box
from compliance_api.dashboard.i18n import N_, text
from compliance_api.dashboard.nav import DashboardPage, NavItem
from compliance_api.dashboard.service import Acting
from compliance_api.dashboard.web import CheckedForm, CurrentAccount, api_problem, field, not_found, redirect, render
from compliance_api.errors import ApiError
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.sessions import DbSession

router = APIRouter()
REFUSALS = {
    "seller_only": text(N_("DAC7 grants belong to sellers (freelancer accounts).")),
    "grantee_not_found": text(N_("No user has this id; ask the grantee for its user id.")),
    "validation_failed": text(N_("You always read your own snapshot; grant another user.")),
}


@dataclass(frozen=True, slots=True)
class EnvironmentDac7:
    environment: Environment
    snapshot: Dac7SellerOut | None
    identity: Dac7IdentityOut | None
    grants: list[Grant]


async def _dac7_in(session: AsyncSession, account: User, environment: Environment, box: IdentityBox) -> EnvironmentDac7:
    caller = Acting.of(account, environment)
    try:
        found = await dac7_service.snapshot(session, caller, account.id, utcnow(), box)
    except ApiError:  # no seller record in this environment
        snapshot, identity = None, None
    else:
        snapshot, identity = dac7_views.seller(found), dac7_views.identity(found.seller, found.identity)
    grants = [dac7_views.grant(found) for found in await dac7_service.list_grants(session, caller)]
    return EnvironmentDac7(environment, snapshot, identity, list(reversed(grants)))


async def _page(
    request: Request, account: User, session: AsyncSession, *, status_code: int = 200, **context: Any
) -> HTMLResponse:
    entries: list[EnvironmentDac7] = []
    if account.kind is UserKind.freelancer:
        box = identity_box(settings_of(request))
        entries = [await _dac7_in(session, account, environment, box) for environment in Environment]
    return render(
        request,
        "dac7/page.html",
        account=account,
        status_code=status_code,
        entries=entries,
        **{"grantee_id": "", **context},
    )


@router.get("/dac7", include_in_schema=False)
async def dac7_page(request: Request, account: CurrentAccount, session: DbSession) -> HTMLResponse:
    return await _page(request, account, session)


@router.post("/dac7/{environment}/grants", include_in_schema=False)
async def create_grant(
    request: Request, environment: Environment, account: CurrentAccount, form: CheckedForm, session: DbSession
) -> Response:
    grantee_id = field(form, "grantee_id").strip()
    try:
        body = GrantCreate.model_validate({"grantee_id": grantee_id})
        await dac7_service.create_grant(session, Acting.of(account, environment), body.grantee_uuid, utcnow())
    except ValidationError:
        error = text(N_("Enter the grantee's user id (a UUID)."))
        return await _page(request, account, session, status_code=400, error=error, grantee_id=grantee_id)
    except ApiError as exc:
        return await _page(
            request,
            account,
            session,
            status_code=exc.status_code,
            error=api_problem(exc, REFUSALS),
            grantee_id=grantee_id,
        )
    return redirect("/dac7?done=grant_created")


IDENTITY_FIELDS = (
    "first_name",
    "last_name",
    "date_of_birth",
    "birth_city",
    "birth_country",
    "street",
    "building",
    "post_code",
    "city",
    "country",
    "tin",
    "tin_issued_by",
    "vat",
    "iban",
    "holder",
)


def _identity_body(form: FormData, current: SellerIdentity | None) -> dict[str, Any]:
    """An individual's identity from the form; TINs beyond the first (which the form does not show) are kept."""
    v = {name: field(form, name).strip() for name in IDENTITY_FIELDS}
    other_tins = [t.model_dump(exclude={"rule"}) for t in current.tins[1:]] if current is not None else []
    tins = [{"tin": v["tin"], "issued_by": v["tin_issued_by"]}] if v["tin"] else []
    return {
        "first_name": v["first_name"] or None,
        "last_name": v["last_name"] or None,
        "date_of_birth": v["date_of_birth"] or None,
        "place_of_birth": {"city": v["birth_city"], "country": v["birth_country"]} if v["birth_city"] else None,
        "address": {
            "country": v["country"],
            "street": v["street"] or None,
            "building": v["building"] or None,
            "post_code": v["post_code"] or None,
            "city": v["city"],
        },
        "tins": [*tins, *other_tins],
        "tin_not_issued": not tins and not other_tins,
        "vat": v["vat"] or None,
        "financial_account": {"iban": v["iban"], "holder": v["holder"] or None} if v["iban"] else None,
    }


@router.post("/dac7/{environment}/identity", include_in_schema=False)
async def save_identity(
    request: Request, environment: Environment, account: CurrentAccount, form: CheckedForm, session: DbSession
) -> Response:
    """The seller corrects its own identity: the same checks and rules as `PUT /v1/dac7/seller/{id}/identity`."""
    box = identity_box(settings_of(request))
    caller = Acting.of(account, environment)
    try:
        _, current = await dac7_service.read_identity(session, caller, account.id, box)
        identity = SellerIdentity.model_validate(_identity_body(form, current))
        await dac7_service.put_identity(session, caller, account.id, identity, box, utcnow())
    except ValidationError as exc:
        error = "; ".join(f"{name}: {message}" for name, message in refusals(exc))
        return await _page(request, account, session, status_code=400, error=error)
    except ApiError as exc:
        return await _page(request, account, session, status_code=exc.status_code, error=str(exc.detail))
    return redirect("/dac7?done=identity_saved")


@router.get("/dac7/{environment}/grants/{grant_id}/revoke", include_in_schema=False)
async def confirm_revoke(
    request: Request, environment: Environment, grant_id: uuid.UUID, account: CurrentAccount, session: DbSession
) -> Response:
    try:
        grant = dac7_views.grant(await dac7_service.get_grant(session, Acting.of(account, environment), grant_id))
    except ApiError:  # another user's grant, a business account, or an unknown id
        return not_found(request, account)
    return render(request, "dac7/revoke.html", account=account, grant=grant, environment=environment)


@router.post("/dac7/{environment}/grants/{grant_id}/revoke", include_in_schema=False)
async def revoke_grant(
    request: Request,
    environment: Environment,
    grant_id: uuid.UUID,
    account: CurrentAccount,
    _: CheckedForm,
    session: DbSession,
) -> Response:
    try:
        await dac7_service.revoke_grant(session, Acting.of(account, environment), grant_id, utcnow())
    except ApiError:
        return not_found(request, account)
    return redirect("/dac7?done=grant_revoked")


PAGE = DashboardPage(router, NavItem(N_("DAC7"), "/dac7", order=40))
