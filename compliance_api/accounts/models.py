"""Users: the owners of tokens (businesses that integrate, freelancers who hold passports)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from compliance_api.accounts.kinds import Plan, UserKind
from compliance_api.db import Base, str_enum
from compliance_api.kit.clock import utcnow

__all__ = ["Plan", "User", "UserKind"]


class User(Base):
    __tablename__ = "user_account"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    email: Mapped[str] = mapped_column(String(320), unique=True)
    kind: Mapped[UserKind] = mapped_column(str_enum(UserKind, "user_kind"))
    plan: Mapped[Plan] = mapped_column(str_enum(Plan, "user_plan"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
