"""The audit trail: every verdict, with who asked, what they sent and which ruleset answered."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, String, false
from sqlalchemy.orm import Mapped, mapped_column

from compliance_api.db import Base, str_enum
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import EnvironmentOwned


class ClassificationKind(StrEnum):
    zelfstandigenwet = "zelfstandigenwet"
    cross_border = "cross_border"


class Classification(EnvironmentOwned, Base):
    __tablename__ = "classification"
    __table_args__ = (
        Index("ix_classification_created_at", "created_at"),
        Index("ix_classification_reference", "environment", "user_id", "reference"),
        Index("ix_classification_monitor", "environment", "monitor"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"), index=True)
    token_id: Mapped[uuid.UUID] = mapped_column()
    kind: Mapped[ClassificationKind] = mapped_column(str_enum(ClassificationKind, "classification_kind"))
    ruleset_id: Mapped[str] = mapped_column(String(64))
    ruleset_version: Mapped[str] = mapped_column(String(32))
    request: Mapped[dict[str, Any]] = mapped_column(JSON)
    result: Mapped[dict[str, Any]] = mapped_column(JSON)
    reference: Mapped[str | None] = mapped_column(String(200), default=None)
    client_metadata: Mapped[dict[str, str] | None] = mapped_column(JSON, default=None)
    monitor: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
