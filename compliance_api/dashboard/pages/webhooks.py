"""`/freelancer/webhooks`: the signed-in user's webhook endpoints per environment, through the webhooks service (the
same rules as `/v1/webhook-endpoints`: request schema, SSRF policy, the 20-endpoint limit)."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts.models import User
from compliance_api.dashboard.i18n import N_, Text, text
from compliance_api.dashboard.nav import DashboardPage, NavItem
from compliance_api.dashboard.web import (
    CheckedForm,
    CurrentAccount,
    FormFieldRejected,
    api_problem,
    field,
    not_found,
    redirect,
    render,
    state_of,
)
from compliance_api.errors import ApiError
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.pagination import cursors_of
from compliance_api.sessions import DbSession
from compliance_api.webhooks import service as webhooks_service
from compliance_api.webhooks import ssrf
from compliance_api.webhooks.catalogue import EVENT_TYPES
from compliance_api.webhooks.dependencies import secret_box_of
from compliance_api.webhooks.schemas import EndpointCreate

router = APIRouter()
DELIVERY_LOG_LIMIT = 50
REFUSALS = {
    "webhook_endpoint_limit": text(
        N_("An account has at most %(maximum)s webhook endpoints per environment; delete one first."),
        maximum=webhooks_service.MAX_ENDPOINTS,
    ),
}
SUBSCRIBABLE = {name: event for name, event in EVENT_TYPES.items() if event.routing != "endpoint"}


def _owner(account: User, environment: Environment) -> webhooks_service.EndpointOwner:
    return webhooks_service.EndpointOwner(account.id, environment)


async def _page(
    request: Request, account: User, session: AsyncSession, *, status_code: int = 200, **context: Any
) -> HTMLResponse:
    endpoints = {
        environment: await webhooks_service.list_endpoints(session, _owner(account, environment))
        for environment in Environment
    }
    return render(
        request,
        "webhooks/page.html",
        account=account,
        status_code=status_code,
        endpoints=endpoints,
        events=SUBSCRIBABLE,
        **{"form": {}, **context},
    )


@router.get("/webhooks", include_in_schema=False)
async def webhooks_page(request: Request, account: CurrentAccount, session: DbSession) -> HTMLResponse:
    return await _page(request, account, session)


def _problem(exc: ValidationError) -> Text:
    names = {str(error["loc"][0] if error["loc"] else error.get("ctx", {}).get("field")) for error in exc.errors()}
    if "url" in names:
        return text(N_("Enter the URL as http(s)://host/path, at most 2048 characters."))
    if "enabled_events" in names:
        return text(N_("Choose at least one event from the list."))
    return text(N_("The description may have at most 500 characters."))


@router.post("/webhooks/{environment}/endpoints", include_in_schema=False)
async def create_endpoint(
    request: Request, environment: Environment, account: CurrentAccount, form: CheckedForm, session: DbSession
) -> Response:
    form_values: dict[str, object] = {"environment": environment}
    try:
        values = {
            "url": field(form, "url").strip(),
            "enabled_events": [v for v in form.getlist("events") if isinstance(v, str)],
            "description": field(form, "description"),
        }
        form_values.update(values)
        body = EndpointCreate.model_validate(values)
        policy = ssrf.policy_for(state_of(request).settings, environment)
        ssrf.check_url(body.url, policy)  # the service checks it again; here, for the reason in the page's words
        row, secret = await webhooks_service.create(
            session,
            _owner(account, environment),
            url=body.url,
            enabled_events=[str(e) for e in body.enabled_events],
            description=body.description,
            enabled=True,
            policy=policy,
            box=secret_box_of(request),
            now=utcnow(),
        )
    except FormFieldRejected as exc:
        return await _page(request, account, session, status_code=400, error=exc.message, form=form_values)
    except ValidationError as exc:
        return await _page(request, account, session, status_code=400, error=_problem(exc), form=form_values)
    except ssrf.UnsafeUrl as exc:
        error = text(N_("The webhook URL is not allowed: %(reason)s."), reason=str(exc))
        return await _page(request, account, session, status_code=403, error=error, form=form_values)
    except ApiError as exc:
        return await _page(
            request, account, session, status_code=exc.status_code, error=api_problem(exc, REFUSALS), form=form_values
        )
    return render(request, "webhooks/created.html", account=account, endpoint=row, secret=secret)


@router.get("/webhooks/{environment}/{endpoint_id}", include_in_schema=False)
async def endpoint_page(
    request: Request, environment: Environment, endpoint_id: uuid.UUID, account: CurrentAccount, session: DbSession
) -> Response:
    owner = _owner(account, environment)
    try:
        endpoint = await webhooks_service.get(session, owner, endpoint_id)
        deliveries = (
            await webhooks_service.list_deliveries(
                session, owner, endpoint_id, limit=DELIVERY_LOG_LIMIT, cursors=cursors_of(request)
            )
        ).rows
    except ApiError:
        return not_found(request, account)
    return render(request, "webhooks/endpoint.html", account=account, endpoint=endpoint, deliveries=deliveries)


@dataclass(frozen=True, slots=True)
class EndpointForm:
    """A checked form posted about one of the signed-in user's endpoints, with the request's session."""

    request: Request
    account: User
    owner: webhooks_service.EndpointOwner
    endpoint_id: uuid.UUID
    session: AsyncSession

    async def done(self, action: Awaitable[object], then: str) -> Response:
        """Carry out `action` and go to `then`; an endpoint that is not the user's is the not-found page."""
        try:
            await action
        except ApiError:
            return not_found(self.request, self.account)
        return redirect(then)

    def page(self, done: str) -> str:
        return f"/webhooks/{self.owner.environment.value}/{self.endpoint_id}?done={done}"


async def _endpoint_form(
    request: Request,
    environment: Environment,
    endpoint_id: uuid.UUID,
    account: CurrentAccount,
    _: CheckedForm,
    session: DbSession,
) -> EndpointForm:
    return EndpointForm(request, account, _owner(account, environment), endpoint_id, session)


PostedAboutEndpoint = Annotated[EndpointForm, Depends(_endpoint_form)]


@router.post("/webhooks/{environment}/{endpoint_id}/test", include_in_schema=False)
async def send_test(form: PostedAboutEndpoint) -> Response:
    sent = webhooks_service.send_test(form.session, form.owner, form.endpoint_id, now=utcnow())
    return await form.done(sent, form.page("webhook_test_sent"))


@router.post("/webhooks/{environment}/{endpoint_id}/deliveries/{delivery_id}/retry", include_in_schema=False)
async def retry_delivery(form: PostedAboutEndpoint, delivery_id: uuid.UUID) -> Response:
    retried = webhooks_service.retry(form.session, form.owner, form.endpoint_id, delivery_id, now=utcnow())
    return await form.done(retried, form.page("webhook_retried"))


@router.get("/webhooks/{environment}/{endpoint_id}/delete", include_in_schema=False)
async def confirm_delete(
    request: Request, environment: Environment, endpoint_id: uuid.UUID, account: CurrentAccount, session: DbSession
) -> Response:
    try:
        endpoint = await webhooks_service.get(session, _owner(account, environment), endpoint_id)
    except ApiError:
        return not_found(request, account)
    return render(request, "webhooks/delete.html", account=account, endpoint=endpoint)


@router.post("/webhooks/{environment}/{endpoint_id}/delete", include_in_schema=False)
async def delete_endpoint(form: PostedAboutEndpoint) -> Response:
    return await form.done(
        webhooks_service.remove(form.session, form.owner, form.endpoint_id), "/webhooks?done=webhook_deleted"
    )


PAGE = DashboardPage(router, NavItem(N_("Webhooks"), "/webhooks", order=30))
