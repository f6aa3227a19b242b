"""The event log's answers: each event as the body a webhook delivery of it carries."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Literal

from pydantic import Field, field_serializer

from compliance_api.events.types import EventName
from compliance_api.kit.pagination import Page
from compliance_api.kit.schemas import Livemode, ResponseSchema


class Event(ResponseSchema):
    """An event, exactly as a webhook delivery of it is sent (the contract's `webhooks` section has `data` per type)."""

    id: uuid.UUID = Field(description="The event id, also the `webhook-id` header of its deliveries.")
    type: EventName
    created_at: dt.datetime = Field(
        description="When the event happened (ISO 8601, UTC).", json_schema_extra={"format": "date-time"}
    )
    environment: Literal["live", "test"] = Field(description="`live` (production) or `test` (sandbox).")
    livemode: Livemode
    data: dict[str, Any] = Field(description="The event's data; its schema per `type` is in the contract's webhooks.")

    @field_serializer("created_at")
    def _as_delivered(self, created_at: dt.datetime) -> str:
        """The deliveries' own spelling of the time (`+00:00`), so a logged event equals its delivered body; a string
        to pydantic, so the field states its `date-time` format itself."""
        return created_at.isoformat()


class EventList(Page[Event]):
    """A page of events, newest first."""
