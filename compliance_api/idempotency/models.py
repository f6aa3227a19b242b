"""The Idempotency-Key records: one claim per caller and key, holding the sealed first answer for 24 hours."""

from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import ForeignKey, LargeBinary, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from compliance_api.db import Base
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import EnvironmentOwned


class IdempotencyRecord(EnvironmentOwned, Base):
    __tablename__ = "idempotency_record"
    __table_args__ = (UniqueConstraint("user_id", "environment", "key_hash", name="uq_idempotency_record_key"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"))
    key_hash: Mapped[str] = mapped_column(String(64))
    fingerprint: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(index=True)
    response_status: Mapped[int | None] = mapped_column(default=None)
    response_body: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)
