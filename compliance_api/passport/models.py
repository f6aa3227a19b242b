"""Passports (one per freelancer and environment), their verifications, share-tokens and who viewed them."""

from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import BigInteger, Date, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from compliance_api.db import Base
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import EnvironmentOwned


class Passport(EnvironmentOwned, Base):
    __tablename__ = "passport"
    __table_args__ = (UniqueConstraint("user_id", "environment", name="uq_passport_user_id_environment"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"), index=True)
    sector: Mapped[str | None] = mapped_column(String(64), default=None)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class PassportVerification(Base):
    """One check of the catalogue, as last verified (a re-verification replaces the row)."""

    __tablename__ = "passport_verification"
    __table_args__ = (UniqueConstraint("passport_id", "check", name="uq_passport_verification_passport_id_check"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    passport_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("passport.id", ondelete="CASCADE"), index=True)
    check: Mapped[str] = mapped_column(String(64))
    verified_on: Mapped[dt.date] = mapped_column(Date)
    expires_on: Mapped[dt.date | None] = mapped_column(Date, default=None)
    evidence_ref: Mapped[str] = mapped_column(String(255))
    recorded_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class PassportShare(EnvironmentOwned, Base):
    """A share-token: stored only as a keyed hash and its last four characters."""

    __tablename__ = "passport_share"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    passport_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("passport.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    last4: Mapped[str] = mapped_column(String(4))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column()
    revoked_at: Mapped[dt.datetime | None] = mapped_column(default=None)

    def status(self, now: dt.datetime) -> str:
        if self.revoked_at is not None:
            return "revoked"
        return "expired" if self.expires_at <= now else "active"


class PassportShareView(Base):
    """One successful verification of a share-token: which caller, when."""

    __tablename__ = "passport_share_view"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    share_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("passport_share.id", ondelete="CASCADE"), index=True)
    viewer_user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"))
    viewer_token_id: Mapped[uuid.UUID] = mapped_column()
    viewed_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class PassportChange(Base):
    """SQLite only: one row whose `version` triggers raise with every change to a passport, its verifications or
    its shares; each API process reads it before answering from its copy (passport/mirror.py). PostgreSQL
    announces changes with NOTIFY instead and leaves the table empty."""

    __tablename__ = "passport_change"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    version: Mapped[int] = mapped_column(BigInteger)
