"""One outbox row per event; `delivered_at` stays empty until a deliverer has handed it on. `owner_id` is the account
the event belongs to (None: every account of the environment), for the event log."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from compliance_api.db import Base
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import EnvironmentOwned


class OutboxEvent(EnvironmentOwned, Base):
    __tablename__ = "outbox_event"
    __table_args__ = (
        Index("ix_outbox_event_pending", "delivered_at", "created_at"),
        Index("ix_outbox_event_owner", "environment", "owner_id", "created_at", "id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    type: Mapped[str] = mapped_column(String(64))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    owner_id: Mapped[uuid.UUID | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    delivered_at: Mapped[datetime | None] = mapped_column(default=None)
