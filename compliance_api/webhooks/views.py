"""The webhook endpoints and deliveries as the API's schemas."""

from __future__ import annotations

from collections.abc import Sequence

from compliance_api.kit.environment import Environment
from compliance_api.webhooks.models import WebhookDelivery, WebhookDeliveryAttempt, WebhookEndpoint
from compliance_api.webhooks.schemas import Delivery, DeliveryAttempt, Endpoint, EndpointWithSecret, ReplayAccepted
from compliance_api.webhooks.service import Replay


def endpoint(row: WebhookEndpoint) -> Endpoint:
    return Endpoint(
        id=row.id,
        url=row.url,
        description=row.description,
        enabled_events=row.enabled_events,
        enabled=row.enabled,
        status=row.status,
        status_reason=row.status_reason,
        livemode=row.environment is Environment.live,
        created_at=row.created_at,
        updated_at=row.updated_at,
        previous_secret_expires_at=row.previous_secret_expires_at,
    )


def endpoint_with_secret(row: WebhookEndpoint, secret: str) -> EndpointWithSecret:
    """The endpoint with its signing secret, shown once (on creation and rotation)."""
    return EndpointWithSecret(**endpoint(row).model_dump(), secret=secret)


def delivery(row: WebhookDelivery) -> Delivery:
    return Delivery.model_validate(row)


def delivery_with_attempts(row: WebhookDelivery, attempts: Sequence[WebhookDeliveryAttempt]) -> Delivery:
    """The delivery with every attempt made, oldest first."""
    return delivery(row).model_copy(update={"attempt_log": [DeliveryAttempt.model_validate(a) for a in attempts]})


def replay_accepted(done: Replay, environment: Environment) -> ReplayAccepted:
    return ReplayAccepted(
        replayed=done.replayed,
        already_pending=done.already_pending,
        since=done.since,
        has_more=done.has_more,
        next_cursor=done.next_cursor,
        livemode=environment is Environment.live,
    )
