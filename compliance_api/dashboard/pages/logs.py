"""`/freelancer/logs`: the signed-in user's API requests per environment, newest first, filtered and paged as
`GET /v1/requests` pages them; a page per request with the problem body of an error answer."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from compliance_api.dashboard.i18n import N_, text
from compliance_api.dashboard.nav import DashboardPage, NavItem
from compliance_api.dashboard.web import CurrentAccount, not_found, render
from compliance_api.errors import ApiError
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.invalid import InvalidFields
from compliance_api.kit.pagination import cursors_of
from compliance_api.requestlog import service
from compliance_api.sessions import DbSession

router = APIRouter()
STATUS_CLASSES = (service.StatusClass.success, service.StatusClass.client_error, service.StatusClass.server_error)
MAX_FILTER_LENGTH = 200
PAGE_SIZE = 50


def _environment(value: str | None) -> Environment:
    return Environment.test if value == Environment.test.value else Environment.live


def _filters(request: Request) -> service.Filters:
    """The filters in the query string; a value that is not one of the choices (or too long) is no filter."""
    query = request.query_params
    status = query.get("status_class", "")
    path = query.get("path", "").strip()[:MAX_FILTER_LENGTH]
    request_id = query.get("request_id", "").strip()[:MAX_FILTER_LENGTH]
    return service.Filters(
        service.StatusClass(status) if status in {s.value for s in STATUS_CLASSES} else None,
        path or None,
        request_id or None,
    )


def _query(environment: Environment, filters: service.Filters, cursor: str | None = None) -> str:
    values = {
        "environment": environment.value,
        "status_class": filters.status_class.value if filters.status_class else "",
        "path": filters.path or "",
        "request_id": filters.request_id or "",
        "cursor": cursor or "",
    }
    return urlencode({name: value for name, value in values.items() if value})


@router.get("/logs", include_in_schema=False)
async def logs_page(request: Request, account: CurrentAccount, session: DbSession) -> HTMLResponse:
    environment = _environment(request.query_params.get("environment"))
    filters = _filters(request)
    cursor = request.query_params.get("cursor") or None
    owner = service.LogOwner(account.id, environment, dashboard_too=True)
    context: dict[str, Any] = {
        "environment": environment,
        "environments": list(Environment),
        "filters": filters,
        "status_classes": STATUS_CLASSES,
    }
    try:
        page = await service.list_requests(
            session,
            owner,
            filters,
            limit=PAGE_SIZE,
            cursor=cursor,
            cursors=cursors_of(request),
            now=utcnow(),
        )
    except (ApiError, InvalidFields):  # a cursor of another list or account, or not one at all
        error = text(N_("This page link is out of date: start again from the newest request."))
        return render(request, "logs/list.html", account=account, status_code=400, error=error, rows=[], **context)
    return render(
        request,
        "logs/list.html",
        account=account,
        rows=page.rows,
        older=f"?{_query(environment, filters, page.next_cursor)}" if page.next_cursor else None,
        newest=f"?{_query(environment, filters)}" if cursor else None,
        **context,
    )


@router.get("/logs/{environment}/{entry_id}", include_in_schema=False)
async def request_page(
    request: Request, environment: Environment, entry_id: uuid.UUID, account: CurrentAccount, session: DbSession
) -> Response:
    logged = await service.get_request(
        session, service.LogOwner(account.id, environment, dashboard_too=True), entry_id, utcnow()
    )
    if logged is None:
        return not_found(request, account)
    return render(request, "logs/request.html", account=account, logged=logged, environment=environment)


PAGE = DashboardPage(router, NavItem(N_("Logs"), "/logs", order=80))
