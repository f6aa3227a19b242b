"""DAC7: the platform operator, sellers (identity sealed at rest), their relevant activities, read grants and what
was reported."""

from __future__ import annotations

import datetime as dt
import uuid
from enum import StrEnum

from sqlalchemy import BigInteger, Date, ForeignKey, Index, LargeBinary, SmallInteger, String, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from compliance_api.db import Base, str_enum
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import EnvironmentOwned


class ActivityType(StrEnum):
    personal_services = "personal_services"
    sale_of_goods = "sale_of_goods"


class Dac7Operator(EnvironmentOwned, Base):
    """The reporting platform operator's identity, one per environment (`compliance-api dac7 operator`)."""

    __tablename__ = "dac7_operator"
    __table_args__ = (UniqueConstraint("environment", name="uq_dac7_operator_environment"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    name: Mapped[str] = mapped_column(String(200))
    tin: Mapped[str] = mapped_column(String(200))
    tin_issued_by: Mapped[str] = mapped_column(String(2))
    country: Mapped[str] = mapped_column(String(2))  # the member state it reports to (TransmittingCountry)
    nexus: Mapped[str] = mapped_column(String(8))
    vat: Mapped[str | None] = mapped_column(String(200), default=None)
    address_country: Mapped[str] = mapped_column(String(2))
    street: Mapped[str | None] = mapped_column(String(200), default=None)
    building: Mapped[str | None] = mapped_column(String(200), default=None)
    post_code: Mapped[str | None] = mapped_column(String(200), default=None)
    city: Mapped[str] = mapped_column(String(200))
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Dac7Seller(EnvironmentOwned, Base):
    """A freelancer's DAC7 identity in one environment, sealed (`sealing.py`); `member_state` is its residence."""

    __tablename__ = "dac7_seller"
    __table_args__ = (UniqueConstraint("user_id", "environment", name="uq_dac7_seller_user_id_environment"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"), index=True)
    member_state: Mapped[str] = mapped_column(String(2))
    kind: Mapped[str] = mapped_column(String(16), default="individual", server_default="individual")
    identity_sealed: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)  # None once wiped (retention)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Dac7Activity(EnvironmentOwned, Base):
    """One relevant activity; amounts in euro cents. `external_id` is the file's stable id (re-imports update it)."""

    __tablename__ = "dac7_activity"
    __table_args__ = (
        UniqueConstraint("environment", "external_id", name="uq_dac7_activity_environment_external_id"),
        Index("ix_dac7_activity_seller_year", "seller_id", "year"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    external_id: Mapped[str] = mapped_column(String(64))
    seller_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("dac7_seller.id", ondelete="CASCADE"))
    activity_type: Mapped[ActivityType] = mapped_column(str_enum(ActivityType, "dac7_activity_type", length=32))
    activity_date: Mapped[dt.date] = mapped_column(Date)
    year: Mapped[int] = mapped_column()
    quarter: Mapped[int] = mapped_column(SmallInteger)
    currency: Mapped[str] = mapped_column(String(3), default="EUR")
    consideration_cents: Mapped[int] = mapped_column(BigInteger)
    fees_cents: Mapped[int] = mapped_column(BigInteger)
    taxes_cents: Mapped[int] = mapped_column(BigInteger)
    imported_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Dac7Grant(EnvironmentOwned, Base):
    """A seller lets another user read its DAC7 snapshot, in one environment, until revoked; at most one active
    grant per (seller, grantee, environment), so one revocation always ends the access."""

    __tablename__ = "dac7_grant"
    __table_args__ = (
        Index(
            "uq_dac7_grant_active",
            "seller_user_id",
            "grantee_user_id",
            "environment",
            unique=True,
            sqlite_where=text("revoked_at IS NULL"),
            postgresql_where=text("revoked_at IS NULL"),
        ),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    seller_user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"))
    grantee_user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(default=None)

    @property
    def status(self) -> str:
        """`active` until revoked, then `revoked`."""
        return "active" if self.revoked_at is None else "revoked"


class Dac7Report(Base):
    """A seller's year went into a DPI export (`dac7 export`): the first such export sets `reported_at`.

    `doc_ref_id` and `digest` are those of the record last sent for it (a later export corrects it when the digest
    differs); `withdrawn_at` asks the next export to delete it, `deleted_at` says a deletion was sent."""

    __tablename__ = "dac7_report"
    __table_args__ = (UniqueConstraint("seller_id", "year", name="uq_dac7_report_seller_id_year"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    seller_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("dac7_seller.id", ondelete="CASCADE"))
    year: Mapped[int] = mapped_column()
    message_ref_id: Mapped[str] = mapped_column(String(170))
    reported_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    doc_ref_id: Mapped[str | None] = mapped_column(String(200), default=None)
    digest: Mapped[str | None] = mapped_column(String(64), default=None)
    exported_at: Mapped[dt.datetime | None] = mapped_column(default=None)
    withdrawn_at: Mapped[dt.datetime | None] = mapped_column(default=None)
    deleted_at: Mapped[dt.datetime | None] = mapped_column(default=None)
