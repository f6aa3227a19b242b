"""Webhook endpoints (one user, one environment) and their deliveries (one row per event and endpoint)."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, LargeBinary, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from compliance_api.db import Base, str_enum
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import EnvironmentOwned


class EndpointStatus(StrEnum):
    """`active`; `failing`: a delivery exhausted its retry schedule (still tried); `disabled`: by its owner or a 410."""

    active = "active"
    failing = "failing"
    disabled = "disabled"


class DeliveryStatus(StrEnum):
    pending = "pending"
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"


REPLAY_LIMIT = 1000
"""Events one replay queues at most; its answer's `next_cursor` continues it."""


class ReplayMode(StrEnum):
    """What a replay sends: `all` the selected events, or only those `undelivered` (no attempt reached the endpoint)."""

    all = "all"
    undelivered = "undelivered"


class WebhookEndpoint(EnvironmentOwned, Base):
    __tablename__ = "webhook_endpoint"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"), index=True)
    url: Mapped[str] = mapped_column(String(2048))
    description: Mapped[str] = mapped_column(String(500), default="")
    enabled_events: Mapped[list[str]] = mapped_column(JSON)
    status: Mapped[EndpointStatus] = mapped_column(
        str_enum(EndpointStatus, "webhook_endpoint_status"), default=EndpointStatus.active
    )
    status_reason: Mapped[str | None] = mapped_column(String(200), default=None)
    secret_sealed: Mapped[bytes] = mapped_column(LargeBinary)
    previous_secret_sealed: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)
    previous_secret_expires_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)

    @property
    def enabled(self) -> bool:
        return self.status is not EndpointStatus.disabled

    def wants(self, event_type: str) -> bool:
        return "*" in self.enabled_events or event_type in self.enabled_events


class WebhookDelivery(EnvironmentOwned, Base):
    __tablename__ = "webhook_delivery"
    __table_args__ = (
        UniqueConstraint("endpoint_id", "event_id"),
        Index("ix_webhook_delivery_due", "status", "next_attempt_at"),
        Index("ix_webhook_delivery_due_type", "status", "event_type", "next_attempt_at"),
        Index("ix_webhook_delivery_endpoint_created", "endpoint_id", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    endpoint_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("webhook_endpoint.id", ondelete="CASCADE"))
    event_id: Mapped[uuid.UUID] = mapped_column()
    event_type: Mapped[str] = mapped_column(String(64))
    body: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[DeliveryStatus] = mapped_column(
        str_enum(DeliveryStatus, "webhook_delivery_status"), default=DeliveryStatus.pending
    )
    attempts: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(default=utcnow)
    last_attempt_at: Mapped[datetime | None] = mapped_column(default=None)
    last_status_code: Mapped[int | None] = mapped_column(default=None)
    last_latency_ms: Mapped[int | None] = mapped_column(default=None)
    last_error: Mapped[str | None] = mapped_column(String(500), default=None)
    last_response_body: Mapped[str | None] = mapped_column(String(1024), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    delivered_at: Mapped[datetime | None] = mapped_column(default=None)


class WebhookDeliveryAttempt(EnvironmentOwned, Base):
    """One attempt of a delivery, as the delivery log shows it (the delivery row keeps only the last one)."""

    __tablename__ = "webhook_delivery_attempt"
    __table_args__ = (Index("ix_webhook_delivery_attempt_delivery", "delivery_id", "attempted_at"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    delivery_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("webhook_delivery.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column()
    attempted_at: Mapped[datetime] = mapped_column()
    status_code: Mapped[int | None] = mapped_column(default=None)
    latency_ms: Mapped[int | None] = mapped_column(default=None)
    error: Mapped[str | None] = mapped_column(String(500), default=None)
