"""`/v1/webhook-endpoints`: thin routes over the webhooks service."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response

from compliance_api.auth.dependencies import CurrentCaller
from compliance_api.config import settings_of
from compliance_api.errors import ApiError, FieldError
from compliance_api.idempotency.dependencies import idempotency_of
from compliance_api.idempotency.service import IdempotencyKey, fingerprint
from compliance_api.kit.clock import utcnow
from compliance_api.kit.page_query import PageQuery
from compliance_api.kit.pagination import cursor_page, cursors_of
from compliance_api.kit.strict_query import StrictQueryRoute
from compliance_api.sessions import DbSession
from compliance_api.webhooks import service, ssrf, views
from compliance_api.webhooks.dependencies import secret_box_of
from compliance_api.webhooks.schemas import (
    Delivery,
    DeliveryList,
    Endpoint,
    EndpointCreate,
    EndpointList,
    EndpointUpdate,
    EndpointWithSecret,
    ReplayAccepted,
    ReplayRequest,
)

router = APIRouter(prefix="/v1/webhook-endpoints", tags=["webhooks"], route_class=StrictQueryRoute)

NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"description": "`webhook_endpoint_not_found`: no endpoint with this id of yours in this environment."}
}
FORBIDDEN_URL: dict[int | str, dict[str, Any]] = {
    403: {"description": "`webhook_url_forbidden`: the URL may not be called from this environment."}
}
ENDPOINT_ID = Annotated[uuid.UUID, Path(examples=["0b6f4f1e-2a43-4c55-9a0e-2f4f1c3d5e6a"])]
DELIVERY_ID = Annotated[uuid.UUID, Path(examples=["5d2c3b4a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"])]


def _policy(request: Request, caller: CurrentCaller) -> ssrf.Policy:
    return ssrf.policy_for(settings_of(request), caller.environment)


@router.post(
    "",
    summary="Create a webhook endpoint",
    operation_id="webhook-endpoint-create",
    status_code=201,
    response_model=EndpointWithSecret,
    responses={
        **FORBIDDEN_URL,
        409: {
            "description": "`webhook_endpoint_limit`: 20 endpoints per account and environment; or the "
            "Idempotency-Key was reused with another body, or is still in progress."
        },
    },
)
async def create(
    body: EndpointCreate,
    caller: CurrentCaller,
    session: DbSession,
    request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    """A new endpoint for your account in this environment; the `whsec_` secret is shown this once (a retry with the
    same Idempotency-Key replays it)."""

    async def run() -> EndpointWithSecret:
        row, secret = await service.create(
            session,
            service.EndpointOwner.of(caller),
            url=body.url,
            enabled_events=[str(e) for e in body.enabled_events],
            description=body.description,
            enabled=body.enabled,
            policy=_policy(request, caller),
            box=secret_box_of(request),
            now=utcnow(),
        )
        return views.endpoint_with_secret(row, secret)

    return await idempotency_of(request).answer(
        caller,
        session,
        idempotency_key,
        fingerprint("POST", request.url.path, body),
        run,
        status_code=201,
    )


@router.get(
    "",
    summary="Your webhook endpoints",
    operation_id="webhook-endpoint-list",
    response_model=EndpointList,
)
async def list_endpoints(
    caller: CurrentCaller,
    session: DbSession,
    paging: PageQuery,
) -> EndpointList:
    """Your webhook endpoints in this environment, newest first."""
    owner = service.EndpointOwner.of(caller)
    page = await service.page_of_endpoints(
        session, owner, limit=paging.limit, cursor=paging.cursor, cursors=paging.cursors
    )
    return cursor_page(EndpointList, page, views.endpoint)


@router.get(
    "/{endpoint_id}",
    summary="One webhook endpoint",
    operation_id="webhook-endpoint-get",
    response_model=Endpoint,
    responses=NOT_FOUND,
)
async def get(endpoint_id: ENDPOINT_ID, caller: CurrentCaller, session: DbSession) -> Endpoint:
    return views.endpoint(await service.get(session, service.EndpointOwner.of(caller), endpoint_id))


@router.patch(
    "/{endpoint_id}",
    summary="Change a webhook endpoint",
    operation_id="webhook-endpoint-update",
    response_model=Endpoint,
    responses={**NOT_FOUND, **FORBIDDEN_URL},
)
async def update(
    endpoint_id: ENDPOINT_ID, body: EndpointUpdate, caller: CurrentCaller, session: DbSession, request: Request
) -> Endpoint:
    """Change the URL, events, description or `enabled`; fields left out (or null) stay as they are."""
    changes = service.EndpointChanges(
        url=body.url,
        enabled_events=None if body.enabled_events is None else [str(e) for e in body.enabled_events],
        description=body.description,
        enabled=body.enabled,
    )
    row = await service.update(
        session, service.EndpointOwner.of(caller), endpoint_id, changes, policy=_policy(request, caller), now=utcnow()
    )
    return views.endpoint(row)


@router.delete(
    "/{endpoint_id}",
    summary="Delete a webhook endpoint",
    operation_id="webhook-endpoint-delete",
    status_code=204,
    response_class=Response,
    responses=NOT_FOUND,
)
async def remove(endpoint_id: ENDPOINT_ID, caller: CurrentCaller, session: DbSession) -> Response:
    """Delete the endpoint with its delivery log; nothing more is sent to it."""
    await service.remove(session, service.EndpointOwner.of(caller), endpoint_id)
    return Response(status_code=204)


@router.post(
    "/{endpoint_id}/rotate-secret",
    summary="Rotate the signing secret",
    operation_id="webhook-endpoint-rotate-secret",
    response_model=EndpointWithSecret,
    responses={
        **NOT_FOUND,
        409: {
            "description": "`secret_rotation_in_progress`: the endpoint was rotated less than 24 hours ago and its "
            "previous secret still signs; `idempotency_mismatch`, `idempotency_in_progress`: as for any "
            "Idempotency-Key."
        },
    },
)
async def rotate_secret(
    endpoint_id: ENDPOINT_ID,
    caller: CurrentCaller,
    session: DbSession,
    request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    """A new `whsec_` secret, shown once; for 24 hours deliveries carry signatures with the old and the new one. A
    second rotation within those 24 hours is refused (409 `secret_rotation_in_progress`), so that the secret your
    receiver still checks keeps signing; a retry with the same Idempotency-Key replays the first answer."""

    async def run() -> EndpointWithSecret:
        row, secret = await service.rotate_secret(
            session, service.EndpointOwner.of(caller), endpoint_id, box=secret_box_of(request), now=utcnow()
        )
        return views.endpoint_with_secret(row, secret)

    return await idempotency_of(request).answer(
        caller, session, idempotency_key, fingerprint("POST", request.url.path, None), run
    )


@router.post(
    "/{endpoint_id}/replay",
    summary="Re-send past events",
    operation_id="webhook-endpoint-replay",
    status_code=202,
    response_model=ReplayAccepted,
    responses={
        **NOT_FOUND,
        400: {
            "description": "`validation_failed`: neither or both of `since` and `event_ids`, an id that is not one "
            "of your events here from the last 30 days or of a type the endpoint does not subscribe to (`errors` "
            "names each, as `event_ids.<index>`), or a `cursor` of another replay; `malformed_body`: the body is "
            "not valid JSON or is empty."
        },
    },
)
async def replay(
    endpoint_id: ENDPOINT_ID, body: ReplayRequest, caller: CurrentCaller, session: DbSession, request: Request
) -> ReplayAccepted:
    """Queue again the events this endpoint subscribes to since `since`, or those in `event_ids` (the event log
    keeps 30 days), oldest first, 1,000 at most per request: `has_more` and `next_cursor` continue. With `mode`
    `undelivered`, only the events no attempt delivered to it. The ones it never had get a delivery, the ones it had
    are re-sent with the same `webhook-id`, so your de-duplication holds; a delivery still waiting to be sent is not
    queued twice (`already_pending`)."""
    _check_replay_selection(body)
    ask = service.ReplayAsk(
        since=body.since,
        event_ids=[uuid.UUID(event_id) for event_id in body.event_ids or ()],
        mode=body.mode,
        cursor=body.cursor,
    )
    settings = settings_of(request)
    done = await service.replay(
        session,
        service.EndpointOwner.of(caller),
        endpoint_id,
        ask,
        now=utcnow(),
        lease=dt.timedelta(seconds=settings.webhooks_lease_seconds),
        cursors=cursors_of(request),
    )
    return views.replay_accepted(done, caller.environment)


def _check_replay_selection(body: ReplayRequest) -> None:
    """One of `since` and `event_ids`; a cursor continues a replay by `since` only."""
    if body.since is None and body.event_ids is None:
        error = FieldError("since", "give `since` (replay from a moment) or `event_ids` (replay these events)")
    elif body.since is not None and body.event_ids is not None:
        error = FieldError("event_ids", "give either `since` or `event_ids`, not both")
    elif body.cursor is not None and body.event_ids is not None:
        error = FieldError("cursor", "a cursor continues a replay by `since`; `event_ids` are replayed at once")
    else:
        return
    raise ApiError("validation_failed", f"{error.field}: {error.message}", errors=[error])


@router.post(
    "/{endpoint_id}/test",
    summary="Send a test event",
    operation_id="webhook-endpoint-test",
    status_code=202,
    response_model=Delivery,
    responses=NOT_FOUND,
)
async def send_test(endpoint_id: ENDPOINT_ID, caller: CurrentCaller, session: DbSession) -> Delivery:
    """Queue a `webhook.test` event to this endpoint; follow it in the delivery log."""
    delivery = await service.send_test(session, service.EndpointOwner.of(caller), endpoint_id, now=utcnow())
    return views.delivery(delivery)


@router.get(
    "/{endpoint_id}/deliveries",
    summary="The delivery log",
    operation_id="webhook-delivery-list",
    response_model=DeliveryList,
    responses=NOT_FOUND,
)
async def list_deliveries(
    endpoint_id: ENDPOINT_ID,
    caller: CurrentCaller,
    session: DbSession,
    paging: PageQuery,
) -> DeliveryList:
    """Deliveries to this endpoint, newest first: every attempt (time, status code, latency, error), the last
    answer and the next attempt."""
    owner = service.EndpointOwner.of(caller)
    page = await service.list_deliveries(
        session, owner, endpoint_id, limit=paging.limit, cursor=paging.cursor, cursors=paging.cursors
    )
    logs = await service.attempt_logs(session, page.rows)
    return cursor_page(DeliveryList, page, lambda row: views.delivery_with_attempts(row, logs[row.id]))


@router.post(
    "/{endpoint_id}/deliveries/{delivery_id}/retry",
    summary="Retry a delivery",
    operation_id="webhook-delivery-retry",
    status_code=202,
    response_model=Delivery,
    responses={
        404: {"description": "`webhook_endpoint_not_found`, or `webhook_delivery_not_found` for this endpoint."}
    },
)
async def retry(
    endpoint_id: ENDPOINT_ID, delivery_id: DELIVERY_ID, caller: CurrentCaller, session: DbSession
) -> Delivery:
    """Send the delivery again now, with the same `webhook-id` and a fresh retry schedule."""
    row = await service.retry(session, service.EndpointOwner.of(caller), endpoint_id, delivery_id, now=utcnow())
    logs = await service.attempt_logs(session, [row])
    return views.delivery_with_attempts(row, logs[row.id])
