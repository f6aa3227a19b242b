"""The cached register (one row per environment and KvK number), its status history and its imports."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from compliance_api.db import Base, str_enum
from compliance_api.kit.environment import Environment, EnvironmentOwned


class AdmissionStatus(StrEnum):
    """The eight admission statuses; the guide's WTTA page (`/guide/integrate/wtta/`) gives their legal meaning."""

    unknown = "unknown"
    applied = "applied"
    admitted = "admitted"
    conditionally_admitted = "conditionally_admitted"
    revoked = "revoked"
    suspended = "suspended"
    expired = "expired"
    not_required = "not_required"


def _status_column(name: str, *, nullable: bool = False) -> Mapped[AdmissionStatus]:
    return mapped_column(name, str_enum(AdmissionStatus, "admission_status", length=32), nullable=nullable)


class WttaAdmission(EnvironmentOwned, Base):
    """The primary key (environment, kvk_number) is the lookup's only index."""

    __tablename__ = "wtta_admission"

    environment: Mapped[Environment] = mapped_column(str_enum(Environment, "environment"), primary_key=True)
    kvk_number: Mapped[str] = mapped_column(String(8), primary_key=True)
    legal_name: Mapped[str] = mapped_column(String(300))
    admission_status: Mapped[AdmissionStatus] = _status_column("admission_status")
    admission_number: Mapped[str | None] = mapped_column(String(64))
    admitted_at: Mapped[datetime | None] = mapped_column()
    expires_at: Mapped[datetime | None] = mapped_column()
    source: Mapped[str] = mapped_column(String(200))
    source_url: Mapped[str | None] = mapped_column(String(2000))
    last_verified_at: Mapped[datetime] = mapped_column()
    missing_from_source_at: Mapped[datetime | None] = mapped_column(default=None)


class WttaStatusChange(EnvironmentOwned, Base):
    """One status change of one KvK number; the first import of a number records it with `from_status` null."""

    __tablename__ = "wtta_status_change"
    __table_args__ = (Index("ix_wtta_status_change_kvk", "environment", "kvk_number", "id"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    environment: Mapped[Environment] = mapped_column(str_enum(Environment, "environment"))
    kvk_number: Mapped[str] = mapped_column(String(8))
    from_status: Mapped[AdmissionStatus | None] = _status_column("from_status", nullable=True)
    to_status: Mapped[AdmissionStatus] = _status_column("to_status")
    changed_at: Mapped[datetime] = mapped_column()
    source: Mapped[str] = mapped_column(String(200))
    import_id: Mapped[uuid.UUID] = mapped_column()


class WttaImport(EnvironmentOwned, Base):
    """One run of `wtta import` (including a URL check answered `304 Not Modified`)."""

    __tablename__ = "wtta_import"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    location: Mapped[str] = mapped_column(String(2000))
    source: Mapped[str] = mapped_column(String(200))
    source_url: Mapped[str | None] = mapped_column(String(2000))
    full: Mapped[bool] = mapped_column()
    not_modified: Mapped[bool] = mapped_column(default=False)
    finished_at: Mapped[datetime] = mapped_column(index=True)
    rows_read: Mapped[int] = mapped_column(default=0)
    rows_created: Mapped[int] = mapped_column(default=0)
    rows_changed: Mapped[int] = mapped_column(default=0)
    status_changes: Mapped[int] = mapped_column(default=0)
    rows_missing: Mapped[int] = mapped_column(default=0)
    covers_all: Mapped[bool] = mapped_column(default=False)  # the file listed every cached number: all verified
    etag: Mapped[str | None] = mapped_column(String(500), default=None)
    last_modified: Mapped[str | None] = mapped_column(String(100), default=None)


class WttaRefusedFile(EnvironmentOwned, Base):
    """The register file the scheduled refresh last refused from a URL, and why: its validators make the next download
    conditional (an unchanged bad file is not downloaded again, after a restart either) and its hash recognises it
    when the server sends no validators. Removed by the next import from that URL."""

    __tablename__ = "wtta_refused_file"

    environment: Mapped[Environment] = mapped_column(str_enum(Environment, "environment"), primary_key=True)
    location_sha256: Mapped[str] = mapped_column(String(64), primary_key=True)  # a URL may be longer than a key
    location: Mapped[str] = mapped_column(String(2000))
    etag: Mapped[str | None] = mapped_column(String(500))
    last_modified: Mapped[str | None] = mapped_column(String(100))
    sha256: Mapped[str] = mapped_column(String(64))
    error: Mapped[str] = mapped_column(String(1000))
    refused_at: Mapped[datetime] = mapped_column()


class WttaRegisterVersion(EnvironmentOwned, Base):
    """A counter raised in the transaction of every change to an environment's cached register (imports, purges):
    each API process keeps the register in memory (`wtta/replica.py`) and trusts it only at the current version."""

    __tablename__ = "wtta_register_version"

    environment: Mapped[Environment] = mapped_column(str_enum(Environment, "environment"), primary_key=True)
    version: Mapped[int] = mapped_column(BigInteger())
    changed_at: Mapped[datetime] = mapped_column()
