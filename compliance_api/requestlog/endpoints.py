"""`GET /v1/requests`: the calling token's account's requests in this environment over the last 30 days."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from compliance_api.auth.dependencies import CurrentCaller
from compliance_api.kit.clock import utcnow
from compliance_api.kit.page_query import PageQuery
from compliance_api.kit.pagination import cursor_page
from compliance_api.kit.strict_query import StrictQueryRoute
from compliance_api.requestlog import service, views
from compliance_api.requestlog.schemas import LIST_EXAMPLE, RequestList
from compliance_api.sessions import DbSession

router = APIRouter(prefix="/v1/requests", tags=["requests"], route_class=StrictQueryRoute)


@router.get(
    "",
    summary="Your requests, newest first",
    operation_id="request-list",
    response_model=RequestList,
    openapi_extra={"responses": {"200": {"content": {"application/json": {"example": LIST_EXAMPLE}}}}},
)
async def list_requests(
    caller: CurrentCaller,
    session: DbSession,
    paging: PageQuery,
    status_class: Annotated[
        service.StatusClass | None,
        Query(description="Only answers of this status class.", examples=["4xx"]),
    ] = None,
    path: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=200,
            description="Only requests whose path template starts with this, e.g. `/v1/wtta`.",
            examples=["/v1/wtta/lookup"],
        ),
    ] = None,
    request_id: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=128,
            description="Only the request with this `X-Request-Id`.",
            examples=["req_5f0c3a9e1b2d4c6f8a7e9b10"],
        ),
    ] = None,
) -> RequestList:
    """The requests made with any token of your account in this environment over the last 30 days (the request log
    of the dashboard): method, path template, status, latency, token, request id, rate-limit remaining, and the
    problem body of 4xx and 5xx answers. Requests appear within a few seconds; `GET /v1/health` is not logged."""
    page = await service.list_requests(
        session,
        service.LogOwner(caller.user_id, caller.environment),
        service.Filters(status_class, path, request_id),
        limit=paging.limit,
        cursor=paging.cursor,
        cursors=paging.cursors,
        now=utcnow(),
    )
    return cursor_page(RequestList, page, views.logged_request)
