"""The event catalogue: every event type, its `data` schema, and who receives it; published as OpenAPI `webhooks`."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from fastapi import APIRouter, FastAPI
from pydantic import BaseModel, Field, create_model

from compliance_api.events.types import ROUTES, EventName, Routing
from compliance_api.kit.schemas import Livemode, ResponseSchema


class WttaAdmissionUpdated(ResponseSchema):
    kvk_number: str
    legal_name: str
    from_status: str
    to_status: str
    changed_at: dt.datetime
    source: str = Field(description="Where the register file came from.")


class PassportUpdated(ResponseSchema):
    freelancer_id: uuid.UUID
    updated_at: dt.datetime
    change: str = Field(description="`sector` or `verification`.")
    sector: str | None = None
    check: str | None = None
    expires_on: dt.date | None = None


class PassportShareViewed(ResponseSchema):
    freelancer_id: uuid.UUID
    share_id: uuid.UUID
    viewer_id: uuid.UUID
    viewed_at: dt.datetime


class Dac7SnapshotUpdated(ResponseSchema):
    freelancer_id: uuid.UUID
    year: int
    total_consideration: str = Field(description="The amount, a decimal number written as a string.")
    currency: str
    number_of_activities: int


class ClassificationCreated(ResponseSchema):
    classification_id: uuid.UUID
    user_id: uuid.UUID = Field(description="The account that asked.")
    kind: str
    verdict: str
    created_at: dt.datetime


class RulesetVersion(ResponseSchema):
    id: str
    version: dt.date


class VerdictChangeCause(ResponseSchema):
    what: Literal["ruleset", "threshold", "criterion", "rule"]
    name: str = Field(description="The ruleset id, `tariefgrens`, the criterion, or the rule's reason.")
    previous: str | float | bool | None
    new: str | float | bool | None


class ClassificationVerdictChanged(ResponseSchema):
    classification_id: uuid.UUID
    user_id: uuid.UUID = Field(description="The account that asked for the classification.")
    kind: str
    reference: str | None = Field(description="The `reference` sent with the classification.")
    previous_verdict: str
    new_verdict: str
    previous_ruleset: RulesetVersion
    new_ruleset: RulesetVersion
    as_of: dt.date = Field(description="The date whose law and thresholds the new verdict applies.")
    causes: list[VerdictChangeCause] = Field(description="What made the difference.")


class ApiTokenCreated(ResponseSchema):
    user_id: uuid.UUID
    token_id: uuid.UUID
    name: str
    last4: str
    created_at: dt.datetime


class ApiTokenRevoked(ResponseSchema):
    user_id: uuid.UUID
    token_id: uuid.UUID
    name: str
    last4: str
    revoked_at: dt.datetime


class WebhookEndpointFailing(ResponseSchema):
    user_id: uuid.UUID
    endpoint_id: uuid.UUID
    url: str
    failing_since: dt.datetime
    last_error: str | None


class WebhookTest(ResponseSchema):
    endpoint_id: uuid.UUID
    message: str


@dataclass(frozen=True, slots=True)
class EventType:
    name: EventName
    summary: str
    data: type[BaseModel]

    @property
    def routing(self) -> Routing:
        return ROUTES[self.name].routing

    @property
    def owner_field(self) -> str | None:
        return ROUTES[self.name].owner_field


EVENT_TYPES: dict[str, EventType] = {
    e.name: e
    for e in (
        EventType(
            EventName.WTTA_ADMISSION_UPDATED,
            "A cached WTTA admission changed status (every subscribed endpoint of the environment).",
            WttaAdmissionUpdated,
        ),
        EventType(EventName.PASSPORT_UPDATED, "The freelancer's passport changed.", PassportUpdated),
        EventType(
            EventName.PASSPORT_SHARE_VIEWED,
            "Someone verified one of the freelancer's share-tokens.",
            PassportShareViewed,
        ),
        EventType(
            EventName.DAC7_SNAPSHOT_UPDATED,
            "The freelancer's DAC7 figures for a year changed.",
            Dac7SnapshotUpdated,
        ),
        EventType(EventName.CLASSIFICATION_CREATED, "The account made a classification.", ClassificationCreated),
        EventType(
            EventName.CLASSIFICATION_VERDICT_CHANGED,
            "A monitored classification's verdict changed when it was re-scored under the law in force on a date.",
            ClassificationVerdictChanged,
        ),
        EventType(EventName.API_TOKEN_CREATED, "An API token of the account was created.", ApiTokenCreated),
        EventType(EventName.API_TOKEN_REVOKED, "An API token of the account was revoked.", ApiTokenRevoked),
        EventType(
            EventName.WEBHOOK_ENDPOINT_FAILING,
            "One of the account's endpoints exhausted a delivery's retry schedule (3 days of failures).",
            WebhookEndpointFailing,
        ),
        EventType(
            EventName.WEBHOOK_TEST,
            "Sent by `POST /v1/webhook-endpoints/{id}/test` to that endpoint only.",
            WebhookTest,
        ),
    )
}

DESCRIPTION = """Deliveries follow Standard Webhooks: headers `webhook-id` (the event id, the same on every retry: \
de-duplicate on it), `webhook-timestamp` (unix seconds of this attempt) and `webhook-signature` (`v1,<base64 \
HMAC-SHA256 of "{id}.{timestamp}.{body}">`, two space-separated signatures for 24 hours after a secret rotation). \
Answer any 2xx within 15 seconds; anything else (redirects included) is retried after 5 s, 5 min, 30 min, 2 h, 5 h, \
10 h, 14 h, 20 h and 20 h (each minus up to 20 % jitter: at most 3 days; a later `Retry-After` is honoured). 410 \
disables the endpoint; an exhausted schedule marks it `failing` and sends `webhook.endpoint.failing`."""


def _envelope(event: EventType) -> type[BaseModel]:
    name = "".join(part.capitalize() for part in event.name.replace("_", ".").split(".")) + "Event"
    fields: dict[str, Any] = {
        "id": (uuid.UUID, Field(description="The event id, also the `webhook-id` header.")),
        "type": (Literal[event.name], ...),
        "created_at": (dt.datetime, ...),
        "environment": (Literal["live", "test"], Field(description="`live` (production) or `test` (sandbox).")),
        "livemode": (Livemode, ...),
        "data": (event.data, ...),
    }
    return create_model(name, __base__=ResponseSchema, **fields)


ENVELOPES: dict[str, type[BaseModel]] = {name: _envelope(event) for name, event in EVENT_TYPES.items()}


def _described_webhooks() -> APIRouter:
    """Every event as a webhook operation (documentation only: nothing is served)."""
    described = APIRouter()
    for name, event in EVENT_TYPES.items():
        envelope = ENVELOPES[name]

        async def receive(body: Any) -> None:
            """A delivery of this event to your endpoint."""

        receive.__annotations__ = {"body": envelope, "return": None}  # the class itself, not a postponed name

        described.post(
            name,
            summary=event.summary,
            description=DESCRIPTION,
            operation_id=f"webhook-{name.replace('.', '-').replace('_', '-')}",
            status_code=200,
            responses={200: {"description": "Any 2xx acknowledges the delivery."}},
        )(receive)
    return described


WEBHOOKS = _described_webhooks()
"""Built once: FastAPI analyses each operation's signature as it is added, a few milliseconds an app otherwise."""


def register_webhooks(app: FastAPI) -> None:
    """Describe every event in the contract's `webhooks` section."""
    app.webhooks.include_router(WEBHOOKS)
