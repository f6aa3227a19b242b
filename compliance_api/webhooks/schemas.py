"""Request and response bodies of `/v1/webhook-endpoints`."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from compliance_api.kit.pagination import Page
from compliance_api.kit.patterns import UUID_PATTERN, described
from compliance_api.kit.schemas import IsoDateTime, Livemode, NamedEnum, RequestSchema, ResponseSchema
from compliance_api.webhooks.catalogue import EVENT_TYPES
from compliance_api.webhooks.models import REPLAY_LIMIT, DeliveryStatus, EndpointStatus, ReplayMode

if TYPE_CHECKING:
    EventFilter = str
else:
    # `*` (every event) or one of the catalogue's types; `webhook.test` is always sent on request. Generated clients
    # name the members as here (`ALL`, `PASSPORT_UPDATED`…).
    EventType = NamedEnum("EventType", [("all", "*")] + [(n.replace(".", "_"), n) for n in EVENT_TYPES])
    # Strict bodies take no strings for enums; an event type is sent as its string value.
    EventFilter = Annotated[EventType, Field(strict=False)]

# Strict bodies take no strings for enums or UUIDs: a mode is sent as its string value, an event id as a string.
ReplayModeField = Annotated[ReplayMode, Field(strict=False)]
EventId = Annotated[str, Field(pattern=UUID_PATTERN, json_schema_extra={"format": "uuid"})]

URL_PATTERN = described(r"^https?://[^\s/?#@]+[^\s]*$", "an http or https URL with a host and no spaces or credentials")
# The contract's patterns are ECMAScript regexes, whose `\s` is not the server's (U+0085 is whitespace to Rust and
# Python, not to ECMAScript), so the server checks the same class written out: both accept exactly the same URLs.
_ECMA_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_URL = re.compile(f"https?://[^{_ECMA_SPACE}/?#@]+[^{_ECMA_SPACE}]*")


def _url_as_the_contract_says(value: str) -> str:
    if _URL.fullmatch(value) is None:
        raise PydanticCustomError(
            "string_pattern_mismatch", "String should match pattern '{pattern}'", {"pattern": URL_PATTERN}
        )
    return value


WebhookUrl = Annotated[
    str, AfterValidator(_url_as_the_contract_says), Field(json_schema_extra={"pattern": URL_PATTERN})
]
URL_RULES: dict[str, Any] = dict(
    max_length=2048,
    description="Where deliveries are POSTed. Production: https and a public address (403 `webhook_url_forbidden`).",
    examples=["https://example.com/hooks/compliance"],
)
EVENTS_RULES: dict[str, Any] = dict(
    min_length=1,
    max_length=len(EVENT_TYPES) + 1,
    description="Event types to receive; `*` for all.",
    examples=[["passport.updated", "wtta.admission.updated"]],
)
DESCRIPTION_RULES: dict[str, Any] = dict(max_length=500, description="Your note on this endpoint.")


class EndpointCreate(RequestSchema):
    url: WebhookUrl = Field(**URL_RULES)
    enabled_events: list[EventFilter] = Field(**EVENTS_RULES)
    description: str = Field(default="", **DESCRIPTION_RULES)
    enabled: bool = True


class EndpointUpdate(RequestSchema):
    url: WebhookUrl | None = Field(default=None, **URL_RULES)
    enabled_events: list[EventFilter] | None = Field(default=None, **EVENTS_RULES)
    description: str | None = Field(default=None, **DESCRIPTION_RULES)
    enabled: bool | None = Field(default=None, description="`true` also clears `failing` and a 410's disabling.")


class Endpoint(ResponseSchema):
    id: uuid.UUID
    url: str
    description: str
    enabled_events: list[str]
    enabled: bool
    status: EndpointStatus = Field(
        description="`active`; `failing`: a delivery exhausted its retries (deliveries go on); `disabled`: by you "
        "or by a 410 answer (`status_reason`), nothing is sent."
    )
    status_reason: str | None
    livemode: Livemode
    created_at: dt.datetime
    updated_at: dt.datetime
    previous_secret_expires_at: dt.datetime | None = Field(
        description="After a rotation, the old secret also signs deliveries until then."
    )


class EndpointWithSecret(Endpoint):
    secret: str = Field(description="The `whsec_` signing secret, shown once (create and rotate-secret).")


class EndpointList(Page[Endpoint]):
    """A page of webhook endpoints, newest first."""


class DeliveryAttempt(ResponseSchema):
    number: int = Field(description="1 for the first attempt.")
    attempted_at: dt.datetime
    status_code: int | None = Field(description="The receiver's status code; null when no answer came.")
    latency_ms: int | None
    error: str | None


class Delivery(ResponseSchema):
    id: uuid.UUID
    endpoint_id: uuid.UUID
    event_id: uuid.UUID = Field(description="Also the `webhook-id` header: the same on every attempt.")
    event_type: str
    status: DeliveryStatus
    attempts: int
    created_at: dt.datetime
    last_attempt_at: dt.datetime | None
    last_status_code: int | None
    last_latency_ms: int | None = Field(description="How long the last attempt took; null when nothing was sent.")
    last_error: str | None = Field(
        description="Why the last attempt failed: `HTTP <status>`, a network error, or `refused by the target guard: "
        "<reason>` when the URL or an address its host resolved to at delivery is not public (nothing was sent)."
    )
    last_response_body: str | None = Field(
        description="The receiver's answer to the last attempt, its first 1024 bytes; null when no answer came "
        "(network error, timeout) and always when the target guard refused the address."
    )
    next_attempt_at: dt.datetime | None = Field(description="When the next attempt is due (pending only).")
    delivered_at: dt.datetime | None
    livemode: Livemode
    attempt_log: list[DeliveryAttempt] = Field(
        default_factory=list, description="Every attempt, oldest first (the `last_…` fields repeat the newest)."
    )


class ReplayRequest(RequestSchema):
    since: IsoDateTime | None = Field(
        default=None,
        description="Re-send the events from this moment on (ISO 8601 with a time zone); an earlier moment than 30 "
        "days ago means 30 days ago: older events are not kept. Give `since` or `event_ids`.",
        examples=["2026-11-24T00:00:00Z"],
    )
    event_ids: list[EventId] | None = Field(
        default=None,
        min_length=1,
        max_length=REPLAY_LIMIT,
        description=f"Re-send these events (at most {REPLAY_LIMIT}; ids from `GET /v1/events` or a delivery's "
        "`event_id`), instead of those since a moment. Each must be one of your events in this environment from the "
        "last 30 days, of a type the endpoint subscribes to: a 400 names each one that is not.",
    )
    mode: ReplayModeField = Field(
        default=ReplayMode.all,
        description="`all`: every selected event. `undelivered`: only those no attempt delivered to this endpoint "
        "(never sent, failed, cancelled or still retrying).",
    )
    cursor: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="`next_cursor` of the previous answer, with the same `since` and `mode`: continues a replay of "
        f"more than {REPLAY_LIMIT} events after the last one it queued.",
    )


class ReplayAccepted(ResponseSchema):
    replayed: int = Field(
        description=f"How many events were queued for this endpoint (at most {REPLAY_LIMIT}); follow them in the "
        "delivery log."
    )
    already_pending: int = Field(
        description="How many of the selected events already had a delivery waiting to be sent: not queued a second "
        "time (one waiting for a retry is sent now). Replaying the same events again answers them here.",
    )
    since: dt.datetime = Field(
        description="The moment replayed from: `since`, or 30 days ago if that was earlier (with `event_ids`: 30 "
        "days ago)."
    )
    has_more: bool = Field(
        description=f"Whether more than {REPLAY_LIMIT} events were selected: send the same request with `cursor` "
        "set to `next_cursor` for the next ones.",
    )
    next_cursor: str | None = Field(description="Pass as `cursor` to continue; null when done.")
    livemode: Livemode


class DeliveryList(Page[Delivery]):
    """A page of deliveries, newest first."""
