"""`GET /v1/events` and `GET /v1/events/{id}`: the caller's event log, 30 days, the same bodies as the webhooks."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from compliance_api.auth.dependencies import CurrentCaller
from compliance_api.events import service
from compliance_api.events.models import OutboxEvent
from compliance_api.events.schemas import Event, EventList
from compliance_api.events.types import EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.page_query import Cursor, Limit
from compliance_api.kit.pagination import DEFAULT_LIMIT, cursors_of
from compliance_api.kit.schemas import IsoDateTime
from compliance_api.kit.strict_query import StrictQueryRoute
from compliance_api.sessions import DbSession

router = APIRouter(prefix="/v1/events", tags=["events"], route_class=StrictQueryRoute)

NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"description": "`event_not_found`: no event with this id of yours in this environment in the last 30 days."}
}


def _event(row: OutboxEvent) -> Event:
    return Event(
        id=row.id,
        type=EventName(row.type),
        created_at=row.created_at,
        environment=row.environment.value,
        livemode=row.environment is Environment.live,
        data=row.payload,
    )


@router.get(
    "",
    summary="Your events, newest first",
    operation_id="event-list",
    response_model=EventList,
)
async def list_events(
    caller: CurrentCaller,
    session: DbSession,
    request: Request,
    type: Annotated[
        list[EventName] | None,
        Query(
            description="Only events of these types (repeat the parameter for several).",
            examples=[["passport.updated"]],
        ),
    ] = None,
    created_after: Annotated[
        IsoDateTime | None,
        Query(
            description="Only events after this moment (ISO 8601 with a time zone).", examples=["2026-11-01T00:00:00Z"]
        ),
    ] = None,
    limit: Limit = DEFAULT_LIMIT,
    cursor: Cursor = None,
) -> EventList:
    """The events of your account in this environment from the last 30 days (and the environment-wide ones, such as
    `wtta.admission.updated`), whether or not a webhook endpoint received them: the way to recover missed deliveries."""
    reader = service.Reader(caller.user_id, caller.environment)
    page = await service.list_events(
        session,
        reader,
        types=[str(t) for t in type or ()],
        created_after=created_after,
        limit=limit,
        cursor=cursor,
        cursors=cursors_of(request),
        now=utcnow(),
    )
    return EventList(data=[_event(row) for row in page.rows], has_more=page.has_more, next_cursor=page.next_cursor)


@router.get("/{event_id}", summary="One event", operation_id="event-get", response_model=Event, responses=NOT_FOUND)
async def get_event(
    event_id: Annotated[uuid.UUID, Path(description="The event id (the `webhook-id` of its deliveries).")],
    caller: CurrentCaller,
    session: DbSession,
) -> Event:
    """One event of yours, with the body its webhook deliveries carry."""
    reader = service.Reader(caller.user_id, caller.environment)
    return _event(await service.get_event(session, reader, event_id, utcnow()))
