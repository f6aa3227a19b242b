"""The audit trail: every verdict, with who asked, what they sent and which ruleset answered."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, String, false, text
from sqlalchemy.orm import Mapped, mapped_column

from compliance_api.classify.compression import CompressedJSON
from compliance_api.db import Base, str_enum
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment, EnvironmentOwned


class ClassificationKind(StrEnum):
    zelfstandigenwet = "zelfstandigenwet"
    cross_border = "cross_border"


class Classification(EnvironmentOwned, Base):
    """One verdict as answered (`request`, `result` never change); `verdict` is the current one, which re-scoring
    moves (its history is in `classification_verdict`), `country` the cross-border test's country and `language` the
    one its texts were written in (re-scores keep it).

    Who asked: an API call keeps its `token_id`; a classification submitted from the dashboard has no token and keeps
    the signed-in user in `asked_by_user_id` (cleared if that user is deleted). `request_id` is the `X-Request-Id` it
    was answered under (None for records from before it was kept)."""

    __tablename__ = "classification"
    __table_args__ = (
        Index("ix_classification_created_at", "created_at"),
        Index("ix_classification_reference", "environment", "user_id", "reference"),
        Index("ix_classification_monitor", "environment", "monitor"),
        Index("ix_classification_list", "environment", "user_id", "created_at", "id"),
        # Only dashboard submissions have an asker; the index keeps a user's deletion from scanning the table.
        Index(
            "ix_classification_asked_by_user_id",
            "asked_by_user_id",
            sqlite_where=text("asked_by_user_id IS NOT NULL"),
            postgresql_where=text("asked_by_user_id IS NOT NULL"),
        ),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"), index=True)
    token_id: Mapped[uuid.UUID | None] = mapped_column(default=None)
    asked_by_user_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"), default=None
    )
    request_id: Mapped[str | None] = mapped_column(String(128), default=None)
    kind: Mapped[ClassificationKind] = mapped_column(str_enum(ClassificationKind, "classification_kind"))
    ruleset_id: Mapped[str] = mapped_column(String(64))
    ruleset_version: Mapped[str] = mapped_column(String(32))
    request: Mapped[dict[str, Any]] = mapped_column(CompressedJSON)
    result: Mapped[dict[str, Any]] = mapped_column(CompressedJSON)  # the answer's bytes, zstd with a dictionary
    verdict: Mapped[str] = mapped_column(String(16))
    # What the list shows of `result`, kept beside it so that a page of the list decompresses no verdict.
    original_verdict: Mapped[str] = mapped_column(String(16))
    ruleset_valid_from: Mapped[date]
    country: Mapped[str | None] = mapped_column(String(2), default=None)
    reference: Mapped[str | None] = mapped_column(String(200), default=None)
    client_metadata: Mapped[dict[str, str] | None] = mapped_column(JSON, default=None)
    monitor: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    language: Mapped[str] = mapped_column(String(2), default="en", server_default="en")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ClassificationVerdict(EnvironmentOwned, Base):
    """A later verdict of a monitored classification, from a re-score under the law in force on `as_of`.

    The original audit record is never altered: each change of verdict adds one row, linked to the row it supersedes
    (none for the first, which supersedes the original verdict)."""

    __tablename__ = "classification_verdict"
    __table_args__ = (Index("ix_classification_verdict_classification", "classification_id", "created_at"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    classification_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("classification.id", ondelete="CASCADE"))
    supersedes_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("classification_verdict.id", ondelete="CASCADE"), default=None
    )
    verdict: Mapped[str] = mapped_column(String(16))
    previous_verdict: Mapped[str] = mapped_column(String(16))
    ruleset_version: Mapped[str] = mapped_column(String(32))
    as_of: Mapped[date] = mapped_column()
    result: Mapped[dict[str, Any]] = mapped_column(CompressedJSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class RescoreRun(Base):
    """When monitored classifications were last re-scored in an environment, and under which ruleset versions: the
    worker re-scores once a day and once more when a start brings new versions. The row is also the lock that keeps
    two workers from re-scoring at once."""

    __tablename__ = "classification_rescore_run"

    environment: Mapped[Environment] = mapped_column(str_enum(Environment, "environment"), primary_key=True)
    ran_on: Mapped[date] = mapped_column()
    rulesets: Mapped[str] = mapped_column(String(400))
    ran_at: Mapped[datetime] = mapped_column(default=utcnow)


@dataclass(frozen=True, slots=True)
class RecordWithHistory:
    """An audit record and the later verdicts its re-scores added, oldest first."""

    record: Classification
    history: list[ClassificationVerdict]
