"""`/freelancer/api-tokens`: list, create (shown once) and revoke the signed-in user's API tokens.

The same service as `compliance-api tokens`, so a token made here is the same `sk_live_`/`sk_test_` token, stored the
same way (keyed hash and last four characters).
"""

from __future__ import annotations

import uuid
from typing import Any

import structlog
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from compliance_api.auth import service as auth_service
from compliance_api.auth.dependencies import token_cache_of
from compliance_api.auth.models import ApiToken
from compliance_api.auth.tokens import PREFIXES
from compliance_api.dashboard.i18n import N_, Text, text
from compliance_api.dashboard.nav import DashboardPage, NavItem
from compliance_api.dashboard.web import (
    CheckedForm,
    CurrentAccount,
    FormFieldRejected,
    field,
    not_found,
    redirect,
    render,
    state_of,
)
from compliance_api.kit.environment import Environment
from compliance_api.sessions import DbSession

log = structlog.get_logger()
router = APIRouter()
MAX_NAME_LENGTH = 100


def _page(
    request: Request, account: CurrentAccount, rows: list[ApiToken], *, status_code: int = 200, **context: Any
) -> HTMLResponse:
    by_environment = {environment: [r for r in rows if r.environment is environment] for environment in Environment}
    return render(
        request,
        "tokens/list.html",
        account=account,
        status_code=status_code,
        by_environment=by_environment,
        prefixes=PREFIXES,
        **{"name": "", "environment": "test", **context},
    )


@router.get("/api-tokens", include_in_schema=False)
async def list_tokens(request: Request, account: CurrentAccount, session: DbSession) -> HTMLResponse:
    return _page(request, account, await auth_service.list_for_user(session, user_id=account.id))


def _problem(name: str, environment: str) -> Text | None:
    """What is wrong with a new token's form, if anything."""
    if environment not in set(Environment):
        return text(N_("Choose production or sandbox."))
    if not 1 <= len(name) <= MAX_NAME_LENGTH:
        return text(N_("Give the token a name of 1 to %(maximum)s characters."), maximum=MAX_NAME_LENGTH)
    return None


@router.post("/api-tokens", include_in_schema=False)
async def create_token(request: Request, account: CurrentAccount, form: CheckedForm, session: DbSession) -> Response:
    error: Text | None
    try:
        name, environment = field(form, "name").strip(), field(form, "environment")
    except FormFieldRejected as exc:
        name, environment, error = "", "test", exc.message
    else:
        error = _problem(name, environment)
    if error is not None:
        rows = await auth_service.list_for_user(session, user_id=account.id)
        return _page(request, account, rows, status_code=400, error=error, name=name, environment=environment)
    row, secret = await auth_service.create(
        session, user=account, environment=Environment(environment), name=name, pepper=state_of(request).pepper
    )
    log.info(
        "dashboard_token_created", user_id=str(account.id), environment=str(row.environment), token_last4=row.last4
    )
    return render(request, "tokens/created.html", account=account, token=row, secret=secret)


@router.get("/api-tokens/{token_id}/revoke", include_in_schema=False)
async def confirm_revoke(
    request: Request, token_id: uuid.UUID, account: CurrentAccount, session: DbSession
) -> Response:
    try:
        row = await auth_service.get_owned(session, user_id=account.id, token_id=token_id)
    except auth_service.TokenNotFound:
        return not_found(request, account)
    return render(request, "tokens/revoke.html", account=account, token=row)


@router.post("/api-tokens/{token_id}/revoke", include_in_schema=False)
async def revoke(
    request: Request, token_id: uuid.UUID, account: CurrentAccount, _: CheckedForm, session: DbSession
) -> Response:
    try:
        row = await auth_service.revoke_owned(session, user_id=account.id, token_id=token_id)
    except auth_service.TokenNotFound:
        return not_found(request, account)
    token_cache_of(request).discard(row.token_hash)  # this worker refuses it at once
    log.info("dashboard_token_revoked", user_id=str(account.id), token_id=str(row.id), token_last4=row.last4)
    return redirect("/api-tokens?done=token_revoked")


PAGE = DashboardPage(router, NavItem(N_("API tokens"), "/api-tokens", order=10))
