"""`GET /v1/requests`: the calling token's account's requests in this environment over the last 30 days."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from compliance_api.auth.dependencies import CurrentCaller
from compliance_api.kit.clock import utcnow
from compliance_api.kit.page_query import Cursor, Limit
from compliance_api.kit.pagination import DEFAULT_LIMIT, cursors_of
from compliance_api.kit.strict_query import StrictQueryRoute
from compliance_api.requestlog import service
from compliance_api.requestlog.schemas import LIST_EXAMPLE, LoggedRequest, RequestList, RequestToken
from compliance_api.sessions import DbSession

router = APIRouter(prefix="/v1/requests", tags=["requests"], route_class=StrictQueryRoute)


def logged_request(logged: service.LoggedRequest) -> LoggedRequest:
    row = logged.row
    return LoggedRequest(
        id=row.id,
        request_id=row.request_id,
        created_at=row.created_at,
        environment=row.environment.value,
        livemode=row.livemode,
        method=row.method,
        path=row.path,
        status=row.status,
        latency_ms=round(row.latency_us / 1000, 3),
        token=RequestToken(id=row.token_id, name=logged.token_name, last4=row.token_last4),
        rate_limit_remaining=row.rate_limit_remaining,
        problem=logged.problem,
    )


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
    request: Request,
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
    limit: Limit = DEFAULT_LIMIT,
    cursor: Cursor = None,
) -> RequestList:
    """The requests made with any token of your account in this environment over the last 30 days (the request log
    of the dashboard): method, path template, status, latency, token, request id, rate-limit remaining, and the
    problem body of 4xx and 5xx answers. Requests appear within a few seconds; `GET /v1/health` is not logged."""
    page = await service.list_requests(
        session,
        service.Owner(caller.user_id, caller.environment),
        service.Filters(status_class, path, request_id),
        limit=limit,
        cursor=cursor,
        cursors=cursors_of(request),
        now=utcnow(),
    )
    return RequestList(
        data=[logged_request(row) for row in page.rows], has_more=page.has_more, next_cursor=page.next_cursor
    )
