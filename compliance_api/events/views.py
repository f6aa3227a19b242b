"""The event log's rows as the API's schemas."""

from __future__ import annotations

from compliance_api.events.models import OutboxEvent
from compliance_api.events.schemas import Event
from compliance_api.events.types import EventName
from compliance_api.kit.environment import Environment


def event(row: OutboxEvent) -> Event:
    return Event(
        id=row.id,
        type=EventName(row.type),
        created_at=row.created_at,
        environment=row.environment.value,
        livemode=row.environment is Environment.live,
        data=row.payload,
    )
