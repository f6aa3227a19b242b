"""API tokens: stored as a keyed hash and their last four characters, never in full."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from compliance_api.db import Base
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import EnvironmentOwned


class ApiToken(EnvironmentOwned, Base):
    __tablename__ = "api_token"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    last4: Mapped[str] = mapped_column(String(4))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(default=None)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)

    @property
    def status(self) -> str:
        return "revoked" if self.revoked_at else "active"
