"""`/freelancer/events`: the signed-in user's event log in one environment (the events of `GET /v1/events`, through
the events service), each with its deliveries to the user's webhook endpoints and their attempts; a page per event
with the body its deliveries carry."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from compliance_api.dashboard import query
from compliance_api.dashboard.i18n import N_, text
from compliance_api.dashboard.nav import DashboardPage, NavItem
from compliance_api.dashboard.web import CurrentAccount, not_found, render
from compliance_api.errors import ApiError
from compliance_api.events import service as events_service
from compliance_api.events.types import ROUTES, EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.invalid import InvalidFields
from compliance_api.kit.pagination import DEFAULT_LIMIT, cursors_of
from compliance_api.sessions import DbSession
from compliance_api.webhooks import service as webhooks_service

router = APIRouter()
PATH = "/events"
LOGGED_TYPES = {name.value: name for name in EventName if ROUTES[name].routing != "endpoint"}
STALE_CURSOR = text(
    N_("This page link belongs to another list or is out of date: the list starts again from the newest.")
)
TYPES, CREATED_AFTER, CURSOR = N_("Types"), N_("Created after"), N_("Cursor")


@dataclass(frozen=True, slots=True)
class ShownEvent:
    environment: Environment
    types: list[str]
    created_after: str
    cursor: str | None


def _shown(request: Request) -> ShownEvent:
    """The filters of `GET /v1/events` from the query string; FilterError when one is not usable."""
    params = request.query_params
    types = query.texts(params, "type", TYPES)
    for name in types:
        query.choice(name, LOGGED_TYPES, TYPES)
    created_after = query.text(params, "created_after", CREATED_AFTER)
    query.moment(created_after, CREATED_AFTER)
    cursor = query.text(params, "cursor", CURSOR) or None
    return ShownEvent(query.environment(params), sorted(set(types)), created_after, cursor)


def _list_page(request: Request, account: CurrentAccount, *, status_code: int = 200, **context: Any) -> HTMLResponse:
    return render(
        request,
        "events/list.html",
        account=account,
        status_code=status_code,
        types=list(LOGGED_TYPES),
        environments=list(Environment),
        **{"environment": Environment.live, "chosen": [], "created_after": "", "rows": [], **context},
    )


@router.get(PATH, include_in_schema=False)
async def events_page(request: Request, account: CurrentAccount, session: DbSession) -> HTMLResponse:
    try:
        shown = _shown(request)
    except query.FilterError as exc:
        echoed = query.echoed(request.query_params, ("created_after",))
        return _list_page(request, account, status_code=400, error=exc.message, **echoed)
    context: dict[str, Any] = {
        "environment": shown.environment,
        "chosen": shown.types,
        "created_after": shown.created_after,
        "paged": shown.cursor is not None,
    }
    reader = events_service.Reader(account.id, shown.environment)
    try:
        page = await events_service.list_events(
            session,
            reader,
            types=shown.types,
            created_after=query.moment(shown.created_after, CREATED_AFTER),
            limit=DEFAULT_LIMIT,
            cursor=shown.cursor,
            cursors=cursors_of(request),
            now=utcnow(),
        )
    except (ApiError, InvalidFields):
        return _list_page(request, account, status_code=400, error=STALE_CURSOR, **context)
    owner = webhooks_service.EndpointOwner(account.id, shown.environment)
    deliveries = await webhooks_service.deliveries_of_events(session, owner, [row.id for row in page.rows])
    links: dict[str, str | list[str]] = {
        "environment": shown.environment.value,
        "type": shown.types,
        "created_after": shown.created_after,
    }
    next_link = query.link(PATH, {**links, "cursor": page.next_cursor or ""}) if page.next_cursor else None
    return _list_page(
        request,
        account,
        rows=[(row, deliveries[row.id]) for row in page.rows],
        next_link=next_link,
        first_link=query.link(PATH, links),
        **context,
    )


@router.get(PATH + "/{environment}/{event_id}", include_in_schema=False)
async def event_page(
    request: Request, environment: Environment, event_id: uuid.UUID, account: CurrentAccount, session: DbSession
) -> Response:
    reader = events_service.Reader(account.id, environment)
    try:
        event = await events_service.get_event(session, reader, event_id, utcnow())
    except ApiError:  # another account's, the other environment's, past retention or unknown
        return not_found(request, account)
    owner = webhooks_service.EndpointOwner(account.id, environment)
    deliveries = (await webhooks_service.deliveries_of_events(session, owner, [event.id]))[event.id]
    return render(
        request,
        "events/detail.html",
        account=account,
        event=event,
        environment=environment,
        deliveries=deliveries,
        data=orjson.dumps(event.payload, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode(),
    )


PAGE = DashboardPage(router, NavItem(N_("Events"), PATH, order=60))
