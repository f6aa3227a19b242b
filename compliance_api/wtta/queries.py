"""The WTTA register cache's statements: lookups, imports' set-based steps through a staging table, the register
version, and the replicas' reads that `reader.py` runs on connections of its own. The rules that call them live in
`service.py` and `register_import.py`."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    Column,
    Integer,
    MetaData,
    Row,
    String,
    Table,
    and_,
    bindparam,
    case,
    delete,
    exists,
    false,
    func,
    insert,
    literal,
    or_,
    select,
    text,
    true,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncResult, AsyncSession

from compliance_api.db import UTCDateTime
from compliance_api.kit.environment import Environment, scoped
from compliance_api.wtta.models import (
    WttaAdmission,
    WttaImport,
    WttaRefusedFile,
    WttaRegisterVersion,
    WttaStatusChange,
)

IMPORT_LOCK = 0x57545441  # "WTTA": the advisory lock's first key; the second is the environment's index
DATA_FIELDS = ("legal_name", "admission_status", "admission_number", "admitted_at", "expires_at")

staging = Table(
    "wtta_staging",
    MetaData(),
    Column("line", Integer, nullable=False),
    Column("kvk_number", String(8), nullable=False),
    Column("legal_name", String(300), nullable=False),
    Column("admission_status", String(32), nullable=False),
    Column("admission_number", String(64)),
    Column("admitted_at", UTCDateTime()),
    Column("expires_at", UTCDateTime()),
    prefixes=["TEMPORARY"],
    postgresql_on_commit="DROP",
)
STAGING_COLUMNS = tuple(column.name for column in staging.columns)
SQLITE_STAGING_INSERT = str(insert(staging).compile(dialect=sqlite.dialect()))  # positional `?` parameters
# Created after the rows are loaded, which is faster than maintaining it during the load.
STAGING_INDEX = text("CREATE INDEX ix_wtta_staging_kvk ON wtta_staging (kvk_number)")


def add(session: AsyncSession, row: WttaImport | WttaRefusedFile) -> None:
    session.add(row)


async def lock_imports(session: AsyncSession, environment: Environment, *, sqlite: bool) -> None:
    """Take the environment's import lock for the transaction: SQLite's write lock (an UPDATE of no row), or a
    PostgreSQL advisory transaction lock."""
    if sqlite:
        version = WttaRegisterVersion.version
        await session.execute(update(WttaRegisterVersion).where(false()).values(version=version))
    else:
        await session.execute(select(func.pg_advisory_xact_lock(IMPORT_LOCK, list(Environment).index(environment))))


async def index_staging(session: AsyncSession) -> None:
    await session.execute(STAGING_INDEX)


async def first_duplicate(session: AsyncSession) -> Row[str, int, int] | None:
    """The staged number listed twice whose second line comes first: (number, first line, second line)."""
    statement = (
        select(staging.c.kvk_number, func.min(staging.c.line), func.max(staging.c.line))
        .group_by(staging.c.kvk_number)
        .having(func.count() > 1)
        .order_by(func.max(staging.c.line))
        .limit(1)
    )
    return (await session.execute(statement)).first()


async def count_cached(session: AsyncSession, environment: Environment) -> int:
    return await session.scalar(scoped(select(func.count()), WttaAdmission, environment)) or 0


def _joined(environment: Environment) -> Any:
    return and_(WttaAdmission.environment == environment, WttaAdmission.kvk_number == staging.c.kvk_number)


def _data_differs() -> Any:
    return or_(*(getattr(WttaAdmission, name).is_distinct_from(staging.c[name]) for name in DATA_FIELDS))


async def compare(session: AsyncSession, environment: Environment) -> tuple[int, int, int, int]:
    """(staged rows, of which cached, of which with other data, of which with another status), in one pass."""
    cached = WttaAdmission.kvk_number.is_not(None)
    statement = select(
        func.count(),
        func.count(WttaAdmission.kvk_number),
        func.coalesce(func.sum(case((and_(cached, _data_differs()), 1), else_=0)), 0),
        func.coalesce(func.sum(case((WttaAdmission.admission_status != staging.c.admission_status, 1), else_=0)), 0),
    ).select_from(staging.outerjoin(WttaAdmission, _joined(environment)))
    total, found, changed, status_changed = (await session.execute(statement)).one()
    return int(total), int(found), int(changed), int(status_changed)


async def record_history(
    session: AsyncSession, environment: Environment, *, now: datetime, source: str, import_id: uuid.UUID
) -> None:
    """A history row for every new number (from null) and every status that differs from the cache."""
    changed = (
        select(
            literal(environment.value),
            staging.c.kvk_number,
            WttaAdmission.admission_status,
            staging.c.admission_status,
            literal(now, UTCDateTime()),
            literal(source),
            literal(import_id),
        )
        .select_from(staging.outerjoin(WttaAdmission, _joined(environment)))
        .where(or_(WttaAdmission.kvk_number.is_(None), WttaAdmission.admission_status != staging.c.admission_status))
    )
    columns = ["environment", "kvk_number", "from_status", "to_status", "changed_at", "source", "import_id"]
    await session.execute(insert(WttaStatusChange).from_select(columns, changed))


async def status_changes(session: AsyncSession, environment: Environment) -> AsyncResult[str, str, str, str]:
    """(number, name, cached status, staged status) of every cached number whose status changes, by line, streamed."""
    statement = (
        select(staging.c.kvk_number, staging.c.legal_name, WttaAdmission.admission_status, staging.c.admission_status)
        .select_from(staging.join(WttaAdmission, _joined(environment)))
        .where(WttaAdmission.admission_status != staging.c.admission_status)
        .order_by(staging.c.line)
    )
    return await session.stream(statement)


async def apply(
    session: AsyncSession,
    environment: Environment,
    *,
    now: datetime,
    source: str,
    source_url: str | None,
    only_changed: bool,
) -> None:
    """Overwrite cached numbers, then insert new ones; every row read is verified now and no longer missing.

    Two set-based statements (UPDATE … FROM, INSERT … SELECT … WHERE NOT EXISTS) rather than one upsert: both
    databases join the staging table in one pass instead of probing the primary key once per row. When the file
    lists every cached number (`only_changed`), unchanged rows are not rewritten: the import itself records that it
    verified them all (`WttaImport.covers_all`, read by `service.lookup`), which makes re-importing an unchanged
    register cheaper than the first import.
    """
    table = cast(Table, WttaAdmission.__table__)
    stamped = {
        "source": literal(source),
        "source_url": literal(source_url, String()),
        "last_verified_at": literal(now, UTCDateTime()),
    }
    changed = or_(_data_differs(), table.c.missing_from_source_at.is_not(None)) if only_changed else true()
    await session.execute(
        update(table)
        .where(table.c.environment == environment, table.c.kvk_number == staging.c.kvk_number, changed)
        .values(**{name: staging.c[name] for name in DATA_FIELDS}, **stamped, missing_from_source_at=None)
    )
    new = select(
        literal(environment.value), staging.c.kvk_number, *(staging.c[name] for name in DATA_FIELDS), *stamped.values()
    ).where(~exists().where(table.c.environment == environment, table.c.kvk_number == staging.c.kvk_number))
    columns = ["environment", "kvk_number", *DATA_FIELDS, *stamped]
    await session.execute(insert(table).from_select(columns, new))


async def mark_missing(session: AsyncSession, environment: Environment, *, now: datetime) -> int:
    """Cached numbers a full snapshot no longer contains keep their data and get `missing_from_source_at`."""
    absent = ~exists().where(staging.c.kvk_number == WttaAdmission.kvk_number)
    statement = (
        update(WttaAdmission)
        .where(WttaAdmission.environment == environment, WttaAdmission.missing_from_source_at.is_(None), absent)
        .values(missing_from_source_at=now)
        .execution_options(synchronize_session=False)
    )
    result = await session.execute(statement)
    return int(getattr(result, "rowcount", 0) or 0)


async def bump_version(session: AsyncSession, environment: Environment, *, now: datetime, notify: str | None) -> None:
    """Count a change of the environment's cached register, and NOTIFY `notify` with the environment (PostgreSQL)."""
    dialect = (await session.connection()).dialect.name
    upsert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = upsert(WttaRegisterVersion).values(environment=environment, version=1, changed_at=now)
    await session.execute(
        statement.on_conflict_do_update(
            index_elements=["environment"], set_={"version": WttaRegisterVersion.version + 1, "changed_at": now}
        )
    )
    if dialect == "postgresql" and notify is not None:
        await session.execute(select(func.pg_notify(notify, environment.value)))


# ---- lookups and refused files --------------------------------------------------------------------------------


async def admission(session: AsyncSession, environment: Environment, kvk_number: str) -> dict[str, Any] | None:
    """The cached admission's columns and `covered_at`, the newest import that listed every cached number: one
    statement (a primary-key read), no ORM object."""
    covered = scoped(select(func.max(WttaImport.finished_at)), WttaImport, environment).where(WttaImport.covers_all)
    statement = scoped(
        select(WttaAdmission.__table__, covered.scalar_subquery().label("covered_at")), WttaAdmission, environment
    ).where(WttaAdmission.kvk_number == kvk_number)
    row = (await session.execute(statement)).mappings().first()
    return None if row is None else dict(row)


async def history(session: AsyncSession, environment: Environment, kvk_number: str) -> Sequence[WttaStatusChange]:
    """Every recorded status change of a number, oldest first."""
    statement = scoped(select(WttaStatusChange), WttaStatusChange, environment).where(
        WttaStatusChange.kvk_number == kvk_number
    )
    return (await session.scalars(statement.order_by(WttaStatusChange.id))).all()


async def last_finished(session: AsyncSession, environment: Environment) -> datetime | None:
    statement = scoped(select(func.max(WttaImport.finished_at)), WttaImport, environment)
    value: datetime | None = await session.scalar(statement)
    return value


async def last_import_from(session: AsyncSession, environment: Environment, url: str) -> WttaImport | None:
    statement = scoped(select(WttaImport), WttaImport, environment).where(WttaImport.location == url)
    return await session.scalar(statement.order_by(WttaImport.finished_at.desc()).limit(1))


async def refused_file(session: AsyncSession, environment: Environment, location_sha256: str) -> WttaRefusedFile | None:
    return await session.get(WttaRefusedFile, (environment, location_sha256))


async def forget_refused(session: AsyncSession, environment: Environment, location_sha256: str) -> None:
    await session.execute(
        delete(WttaRefusedFile).where(
            WttaRefusedFile.environment == environment, WttaRefusedFile.location_sha256 == location_sha256
        )
    )


# ---- the hot reader's statements (`reader.py` runs them on connections of its own) --------------------------------


_covered = (
    select(func.max(WttaImport.finished_at))
    .where(WttaImport.environment == bindparam("environment"), WttaImport.covers_all)
    .scalar_subquery()
    .label("covered_at")
)
_LOOKUP = select(WttaAdmission.__table__, _covered).where(
    WttaAdmission.environment == bindparam("environment"), WttaAdmission.kvk_number == bindparam("kvk")
)


def _sqlite_sql(statement: Any) -> str:
    return str(statement.compile(dialect=sqlite.dialect(paramstyle="named")))


def _postgres_sql(statement: Any) -> str:
    """asyncpg takes $1, $2: `environment` may be bound twice in a statement, so the positions are named once."""
    compiled = str(statement.compile(dialect=postgresql.dialect(paramstyle="pyformat")))  # type: ignore[no-untyped-call]
    return compiled.replace("%(environment)s", "$1").replace("%(kvk)s", "$2")


SQLITE_LOOKUP_SQL = _sqlite_sql(_LOOKUP)
POSTGRES_LOOKUP_SQL = _postgres_sql(_LOOKUP)

_SNAPSHOT_COLUMNS: tuple[str, ...] = (
    "kvk_number",
    "legal_name",
    "admission_status",
    "admission_number",
    "admitted_at",
    "expires_at",
    "source",
    "source_url",
    "last_verified_at",
    "missing_from_source_at",
)
_ROWS = (
    select(*(WttaAdmission.__table__.c[name] for name in _SNAPSHOT_COLUMNS))
    .where(WttaAdmission.environment == bindparam("environment"))
    .order_by(WttaAdmission.kvk_number)
)
_COVERED = select(_covered)
_VERSION = select(WttaRegisterVersion.version).where(WttaRegisterVersion.environment == bindparam("environment"))
_VERSIONS = select(WttaRegisterVersion.environment, WttaRegisterVersion.version)


SQLITE_ROWS_SQL, SQLITE_COVERED_SQL, SQLITE_VERSION_SQL, SQLITE_VERSIONS_SQL = (
    _sqlite_sql(statement) for statement in (_ROWS, _COVERED, _VERSION, _VERSIONS)
)
POSTGRES_ROWS_SQL, POSTGRES_COVERED_SQL, POSTGRES_VERSION_SQL, POSTGRES_VERSIONS_SQL = (
    _postgres_sql(statement) for statement in (_ROWS, _COVERED, _VERSION, _VERSIONS)
)


@contextmanager
def sqlite_register(
    connection: sqlite3.Connection, environment: Environment
) -> Iterator[tuple[int, str | None, sqlite3.Cursor]]:
    """One read transaction on a SQLite connection of its own: the register's version (0 before any), the newest
    covering import's time as stored, and the cursor of its rows (`_SNAPSHOT_COLUMNS`, by number), read inside."""
    connection.execute("BEGIN")
    parameters = {"environment": environment.value}
    version = connection.execute(SQLITE_VERSION_SQL, parameters).fetchone()
    covered_at = connection.execute(SQLITE_COVERED_SQL, parameters).fetchone()[0]
    yield version[0] if version else 0, covered_at, connection.execute(SQLITE_ROWS_SQL, parameters)
    connection.execute("COMMIT")
