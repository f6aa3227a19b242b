"""The one list of event types, and who an event belongs to: the owner's id is in the payload, or the event is for
the whole environment. The webhook catalogue adds each type's summary and `data` schema."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

Routing = Literal["environment", "owner", "endpoint"]


class EventName(StrEnum):
    WTTA_ADMISSION_UPDATED = "wtta.admission.updated"
    PASSPORT_UPDATED = "passport.updated"
    PASSPORT_SHARE_VIEWED = "passport.share.viewed"
    DAC7_SNAPSHOT_UPDATED = "dac7.snapshot.updated"
    CLASSIFICATION_CREATED = "classification.created"
    CLASSIFICATION_VERDICT_CHANGED = "classification.verdict_changed"
    API_TOKEN_CREATED = "api_token.created"  # noqa: S105 (an event name, not a secret)
    API_TOKEN_REVOKED = "api_token.revoked"  # noqa: S105 (an event name, not a secret)
    WEBHOOK_ENDPOINT_FAILING = "webhook.endpoint.failing"
    WEBHOOK_TEST = "webhook.test"


@dataclass(frozen=True, slots=True)
class Route:
    """`environment`: every account of the environment; `owner`: the account named by `owner_field` of the payload;
    `endpoint`: one webhook endpoint only (never in the outbox)."""

    routing: Routing
    owner_field: str | None = None


ROUTES: dict[EventName, Route] = {
    EventName.WTTA_ADMISSION_UPDATED: Route("environment"),
    EventName.PASSPORT_UPDATED: Route("owner", "freelancer_id"),
    EventName.PASSPORT_SHARE_VIEWED: Route("owner", "freelancer_id"),
    EventName.DAC7_SNAPSHOT_UPDATED: Route("owner", "freelancer_id"),
    EventName.CLASSIFICATION_CREATED: Route("owner", "user_id"),
    EventName.CLASSIFICATION_VERDICT_CHANGED: Route("owner", "user_id"),
    EventName.API_TOKEN_CREATED: Route("owner", "user_id"),
    EventName.API_TOKEN_REVOKED: Route("owner", "user_id"),
    EventName.WEBHOOK_ENDPOINT_FAILING: Route("owner", "user_id"),
    EventName.WEBHOOK_TEST: Route("endpoint"),
}

ENVIRONMENT_WIDE: frozenset[str] = frozenset(name for name, route in ROUTES.items() if route.routing == "environment")


def owner_of(name: str, payload: dict[str, Any]) -> uuid.UUID | None:
    """The account an event of type `name` belongs to; None for an environment-wide event (or an owner-routed one
    whose payload names nobody, which no webhook receives either). An unknown `name` is a ValueError."""
    route = ROUTES[EventName(name)]
    owner = payload.get(route.owner_field) if route.owner_field else None
    return uuid.UUID(str(owner)) if route.routing == "owner" and owner is not None else None
