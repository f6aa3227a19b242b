"""`GET /v1/events` and `GET /v1/events/{id}`: the caller's event log, 30 days, the same bodies as the webhooks."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from compliance_api.auth.dependencies import CurrentCaller
from compliance_api.events import service, views
from compliance_api.events.schemas import Event, EventList
from compliance_api.events.types import EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.page_query import PageQuery
from compliance_api.kit.pagination import cursor_page
from compliance_api.kit.schemas import IsoDateTime
from compliance_api.kit.strict_query import StrictQueryRoute
from compliance_api.sessions import DbSession

router = APIRouter(prefix="/v1/events", tags=["events"], route_class=StrictQueryRoute)

NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"description": "`event_not_found`: no event with this id of yours in this environment in the last 30 days."}
}


@router.get(
    "",
    summary="Your events, newest first",
    operation_id="event-list",
    response_model=EventList,
)
async def list_events(
    caller: CurrentCaller,
    session: DbSession,
    paging: PageQuery,
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
) -> EventList:
    """The events of your account in this environment from the last 30 days (and the environment-wide ones, such as
    `wtta.admission.updated`), whether or not a webhook endpoint received them: the way to recover missed deliveries."""
    reader = service.Reader(caller.user_id, caller.environment)
    page = await service.list_events(
        session,
        reader,
        types=[str(t) for t in type or ()],
        created_after=created_after,
        limit=paging.limit,
        cursor=paging.cursor,
        cursors=paging.cursors,
        now=utcnow(),
    )
    return cursor_page(EventList, page, views.event)


@router.get("/{event_id}", summary="One event", operation_id="event-get", response_model=Event, responses=NOT_FOUND)
async def get_event(
    event_id: Annotated[uuid.UUID, Path(description="The event id (the `webhook-id` of its deliveries).")],
    caller: CurrentCaller,
    session: DbSession,
) -> Event:
    """One event of yours, with the body its webhook deliveries carry."""
    reader = service.Reader(caller.user_id, caller.environment)
    return views.event(await service.get_event(session, reader, event_id, utcnow()))
