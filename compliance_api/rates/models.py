"""Rate observations (imported or synthetic), the imports they came from, and the precomputed benchmarks."""

from __future__ import annotations

import uuid
from datetime import date, datetime

from sqlalchemy import BigInteger, Boolean, Date, Float, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from compliance_api.db import Base
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import EnvironmentOwned

# SQLite only auto-increments a column declared exactly INTEGER PRIMARY KEY.
BigId = BigInteger().with_variant(Integer(), "sqlite")


class RateImport(EnvironmentOwned, Base):
    """One import (a file, or one run of the synthetic generator); a file's content is imported once per environment."""

    __tablename__ = "rate_import"
    __table_args__ = (UniqueConstraint("environment", "content_sha256", name="uq_rate_import_content"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    content_sha256: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(300))
    synthetic: Mapped[bool] = mapped_column(Boolean)
    row_count: Mapped[int] = mapped_column(Integer)
    imported_at: Mapped[datetime] = mapped_column(default=utcnow)


class RateObservation(EnvironmentOwned, Base):
    """One hourly rate (excl. VAT) for a sector and region on a date, in euro cents (exact, fast to sort)."""

    __tablename__ = "rate_observation"
    # On PostgreSQL the recompute reads each pair's window from this index alone (index-only scan): imports arrive in
    # any order, so visiting the heap would be one random page read per observation.
    __table_args__ = (
        Index(
            "ix_rate_observation_pair",
            "environment",
            "sector",
            "region",
            "observed_on",
            postgresql_include=["rate_cents", "synthetic"],
        ),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    import_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rate_import.id", ondelete="CASCADE"), index=True)
    sector: Mapped[str] = mapped_column(String(40))
    region: Mapped[str] = mapped_column(String(5))
    rate_cents: Mapped[int] = mapped_column(Integer)
    observed_on: Mapped[date] = mapped_column(Date)
    synthetic: Mapped[bool] = mapped_column(Boolean)


class RateBenchmark(EnvironmentOwned, Base):
    """The percentiles of one (sector, region), recomputed whenever its observations change; read by the endpoint."""

    __tablename__ = "rate_benchmark"
    __table_args__ = (UniqueConstraint("environment", "sector", "region", name="uq_rate_benchmark_pair"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    sector: Mapped[str] = mapped_column(String(40))
    region: Mapped[str] = mapped_column(String(5))
    p25_eur: Mapped[float] = mapped_column(Float)
    p50_eur: Mapped[float] = mapped_column(Float)
    p75_eur: Mapped[float] = mapped_column(Float)
    sample_size: Mapped[int] = mapped_column(Integer)
    as_of: Mapped[date] = mapped_column(Date)
    window_start: Mapped[date] = mapped_column(Date)
    window_months: Mapped[int] = mapped_column(Integer)
    synthetic: Mapped[bool] = mapped_column(Boolean)
    computed_at: Mapped[datetime] = mapped_column(default=utcnow)
