"""One row per authenticated API request: what was asked and answered, never a body, a token or a query string."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from compliance_api.db import Base
from compliance_api.kit.environment import EnvironmentOwned


class ApiRequest(EnvironmentOwned, Base):
    """`path` is the route's template (`/v1/passport/{token}/verify`), so no path parameter is ever stored; `problem`
    is the problem+json text of a 4xx or 5xx answer as it was sent (secret-shaped strings redacted), null otherwise:
    kept as text, so writing it costs no parsing or serialising."""

    __tablename__ = "api_request"
    __table_args__ = (
        Index("ix_api_request_owner", "environment", "user_id", "created_at", "id"),
        Index("ix_api_request_request_id", "request_id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column()
    token_id: Mapped[uuid.UUID | None] = mapped_column()  # None: made in the dashboard (an assessment's check or save)
    token_last4: Mapped[str | None] = mapped_column(String(4))
    created_at: Mapped[datetime] = mapped_column()
    method: Mapped[str] = mapped_column(String(10))
    path: Mapped[str] = mapped_column(String(200))
    status: Mapped[int] = mapped_column()
    latency_us: Mapped[int] = mapped_column()
    request_id: Mapped[str] = mapped_column(String(128))
    rate_limit_remaining: Mapped[int | None] = mapped_column(default=None)
    problem: Mapped[str | None] = mapped_column(Text, default=None)
