"""The transactional import of a register file's rows into the admission register cache.

An import streams validated rows into a temporary staging table, then applies them with a few set-based statements
(history, outbox events, upsert, `--full` bookkeeping) inside the caller's one transaction: a bad row anywhere
raises before anything is applied, and any failure rolls the whole import back. Every import (and the sandbox purge)
raises the environment's register version, which the in-memory copies (`replica.py`) follow.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from typing import Any, cast

from sqlalchemy import (
    Column,
    Integer,
    MetaData,
    String,
    Table,
    and_,
    case,
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
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.db import UTCDateTime
from compliance_api.events import service as events
from compliance_api.events.types import EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment, scoped
from compliance_api.wtta.models import (
    AdmissionStatus,
    WttaAdmission,
    WttaImport,
    WttaRegisterVersion,
    WttaStatusChange,
)
from compliance_api.wtta.register_file import RegisterFileError, Row

ADMISSION_UPDATED = EventName.WTTA_ADMISSION_UPDATED
BATCH_ROWS = 10_000
REGISTER_CHANNEL = "wtta_register"  # PostgreSQL NOTIFY channel: an environment's cached register changed
REGISTER_CHANGED = "wtta_register_changed"  # Session.info flag read by the replicas' commit hook
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


class EmptySnapshot(ValueError):
    """A `--full` import of a file without rows would mark the whole cache missing; refused."""


@dataclass(frozen=True, slots=True)
class ImportResult:
    import_id: uuid.UUID
    environment: Environment
    rows_read: int
    rows_created: int
    rows_changed: int
    rows_unchanged: int
    status_changes: int
    rows_missing: int
    not_modified: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "import_id": str(self.import_id),
            "environment": str(self.environment),
            "not_modified": self.not_modified,
            "rows_read": self.rows_read,
            "rows_created": self.rows_created,
            "rows_changed": self.rows_changed,
            "rows_unchanged": self.rows_unchanged,
            "status_changes": self.status_changes,
            "rows_missing": self.rows_missing,
        }


@dataclass(frozen=True, slots=True)
class ImportSource:
    """Where rows came from: `location` is the path or URL read; `source`/`source_url` are stored on every row."""

    location: str
    source: str
    source_url: str | None = None
    etag: str | None = None
    last_modified: str | None = None


async def record_not_modified(
    session: AsyncSession, *, environment: Environment, origin: ImportSource, full: bool
) -> ImportResult:
    """Record a URL check answered 304: the cache is current, no row is touched."""
    run = WttaImport(
        environment=environment,
        location=origin.location,
        source=origin.source,
        source_url=origin.source_url,
        full=full,
        not_modified=True,
        finished_at=utcnow(),
        etag=origin.etag,
        last_modified=origin.last_modified,
    )
    session.add(run)
    await session.flush()
    return ImportResult(run.id, environment, 0, 0, 0, 0, 0, 0, not_modified=True)


async def import_rows(
    session: AsyncSession,
    *,
    environment: Environment,
    rows: Iterable[Row],
    origin: ImportSource,
    full: bool = False,
    on_stage: Callable[[str], None] = lambda _: None,
) -> ImportResult:
    """Apply a register file's rows in the caller's transaction (see the module docstring)."""
    now = utcnow()
    import_id = uuid.uuid4()
    connection = await session.connection()
    # PostgreSQL drops the temporary table at commit (ON COMMIT DROP); SQLite keeps it on the pooled connection.
    sqlite_connection = connection.dialect.name == "sqlite"
    await _one_import_at_a_time(session, environment, sqlite=sqlite_connection)
    if sqlite_connection:
        await connection.run_sync(lambda c: staging.drop(c, checkfirst=True))
    await connection.run_sync(lambda c: staging.create(c))
    rows_read = await _load_staging(session, rows)
    if full and rows_read == 0:
        raise EmptySnapshot("a --full import needs at least one row (an empty snapshot would mark every row missing)")
    on_stage("checking")
    await session.execute(STAGING_INDEX)
    await _refuse_duplicates(session)
    on_stage("comparing")
    compared = await _compare(session, environment)
    cached_total = await session.scalar(scoped(select(func.count()), WttaAdmission, environment))
    covers_all = rows_read - compared.created == cached_total
    on_stage("recording history")
    if compared.created or compared.status_changed:  # re-importing an unchanged file skips both passes
        await _record_history(session, environment, now=now, source=origin.source, import_id=import_id)
    if compared.status_changed:
        await _emit_status_events(session, environment, now=now, source=origin.source)
    on_stage("applying")
    await _apply(session, environment, now=now, origin=origin, only_changed=covers_all)
    on_stage("marking missing")
    missing = await _mark_missing(session, environment, now=now) if full else 0
    if sqlite_connection:
        await connection.run_sync(lambda c: staging.drop(c))
    created, changed = compared.created, compared.changed
    status_changes = compared.created + compared.status_changed
    session.add(
        WttaImport(
            id=import_id,
            environment=environment,
            location=origin.location,
            source=origin.source,
            source_url=origin.source_url,
            full=full,
            finished_at=utcnow(),
            rows_read=rows_read,
            rows_created=created,
            rows_changed=changed,
            status_changes=status_changes,
            rows_missing=missing,
            covers_all=covers_all,
            etag=origin.etag,
            last_modified=origin.last_modified,
        )
    )
    await raise_version(session, environment)
    await session.flush()
    unchanged = rows_read - created - changed
    return ImportResult(import_id, environment, rows_read, created, changed, unchanged, status_changes, missing)


async def _one_import_at_a_time(session: AsyncSession, environment: Environment, *, sqlite: bool) -> None:
    """Take the environment's import lock for the transaction before reading anything, so that concurrent imports
    (workers refreshing on schedule, an operator's `wtta import`) run one after the other instead of failing.

    PostgreSQL: an advisory transaction lock; without it, two imports inserting the same new numbers collide on the
    primary key. SQLite: its write lock, which an UPDATE of no row takes (waiting up to busy_timeout); in WAL mode a
    transaction that has read fails at once, without waiting, when it starts writing after another connection
    committed, as the API's requests and the worker's jobs do meanwhile.
    """
    if sqlite:
        version = WttaRegisterVersion.version
        await session.execute(update(WttaRegisterVersion).where(false()).values(version=version))
    else:
        await session.execute(select(func.pg_advisory_xact_lock(IMPORT_LOCK, list(Environment).index(environment))))


async def _load_staging(session: AsyncSession, rows: Iterable[Row]) -> int:
    """Bulk-load the staging table through the driver (COPY on PostgreSQL, executemany on SQLite).

    Hand-rolled on purpose: SQLAlchemy's per-row parameter processing cost more than the database itself for a
    million rows (bench/RESULTS.md); the rows are already validated and typed.
    """
    connection = await session.connection()
    driver = (await connection.get_raw_connection()).driver_connection
    assert driver is not None
    count = 0
    postgres = connection.dialect.name == "postgresql"
    for batch in _batches(rows):
        records = [tuple(row[name] for name in STAGING_COLUMNS) for row in batch]
        if postgres:
            await driver.copy_records_to_table(staging.name, records=records, columns=STAGING_COLUMNS)
        else:
            await driver.executemany(SQLITE_STAGING_INSERT, [_sqlite_record(r) for r in records])
        count += len(records)
    return count


def _sqlite_record(record: tuple[Any, ...]) -> tuple[Any, ...]:
    """Datetimes as SQLAlchemy's SQLite DateTime stores them (naive UTC text), so UTCDateTime reads them back."""
    *head, admitted_at, expires_at = record
    return (*head, _sqlite_time(admitted_at), _sqlite_time(expires_at))


def _sqlite_time(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def _batches(rows: Iterable[Row]) -> Iterator[list[Row]]:
    iterator = iter(rows)
    while batch := list(islice(iterator, BATCH_ROWS)):
        yield batch


async def _refuse_duplicates(session: AsyncSession) -> None:
    statement = (
        select(staging.c.kvk_number, func.min(staging.c.line), func.max(staging.c.line))
        .group_by(staging.c.kvk_number)
        .having(func.count() > 1)
        .order_by(func.max(staging.c.line))
        .limit(1)
    )
    duplicate = (await session.execute(statement)).first()
    if duplicate is not None:
        kvk, first, second = duplicate
        raise RegisterFileError(f"line {second}", "kvk_number", f"{kvk} already appears on line {first}")


def _joined(environment: Environment) -> Any:
    return and_(WttaAdmission.environment == environment, WttaAdmission.kvk_number == staging.c.kvk_number)


def _data_differs() -> Any:
    return or_(*(getattr(WttaAdmission, name).is_distinct_from(staging.c[name]) for name in DATA_FIELDS))


@dataclass(frozen=True, slots=True)
class Comparison:
    """How the staged rows differ from the cache, counted in one pass."""

    created: int
    changed: int
    status_changed: int


async def _compare(session: AsyncSession, environment: Environment) -> Comparison:
    cached = WttaAdmission.kvk_number.is_not(None)
    statement = select(
        func.count(),
        func.count(WttaAdmission.kvk_number),
        func.coalesce(func.sum(case((and_(cached, _data_differs()), 1), else_=0)), 0),
        func.coalesce(func.sum(case((WttaAdmission.admission_status != staging.c.admission_status, 1), else_=0)), 0),
    ).select_from(staging.outerjoin(WttaAdmission, _joined(environment)))
    total, found, changed, status_changed = (await session.execute(statement)).one()
    return Comparison(int(total) - int(found), int(changed), int(status_changed))


async def _record_history(
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


async def _emit_status_events(session: AsyncSession, environment: Environment, *, now: datetime, source: str) -> None:
    """`wtta.admission.updated` for every cached number whose status changes (a first import is not an update)."""
    statement = (
        select(staging.c.kvk_number, staging.c.legal_name, WttaAdmission.admission_status, staging.c.admission_status)
        .select_from(staging.join(WttaAdmission, _joined(environment)))
        .where(WttaAdmission.admission_status != staging.c.admission_status)
        .order_by(staging.c.line)
    )
    result = await session.stream(statement)
    try:
        async for changes in result.partitions(BATCH_ROWS):
            await events.emit_many(
                session,
                environment=environment,
                at=now,
                events=[
                    events.Event(
                        ADMISSION_UPDATED,
                        {
                            "kvk_number": kvk,
                            "legal_name": name,
                            "from_status": str(AdmissionStatus(old)),
                            "to_status": new,
                            "changed_at": now.isoformat(),
                            "source": source,
                        },
                    )
                    for kvk, name, old, new in changes
                ],
            )
    finally:
        await result.close()


async def _apply(
    session: AsyncSession, environment: Environment, *, now: datetime, origin: ImportSource, only_changed: bool
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
        "source": literal(origin.source),
        "source_url": literal(origin.source_url, String()),
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


async def _mark_missing(session: AsyncSession, environment: Environment, *, now: datetime) -> int:
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


async def raise_version(session: AsyncSession, environment: Environment) -> None:
    """Count a change of the environment's cached register in the caller's transaction, so that every API process's
    in-memory copy (`wtta/replica.py`) stops answering from the old data once it commits.

    Other processes hear of it through a NOTIFY delivered at commit (PostgreSQL) or notice the commit themselves
    (SQLite's `PRAGMA data_version`); this process's replicas through the session's commit hook.
    """
    connection = await session.connection()
    dialect = connection.dialect.name
    upsert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    now = utcnow()
    statement = upsert(WttaRegisterVersion).values(environment=environment, version=1, changed_at=now)
    await session.execute(
        statement.on_conflict_do_update(
            index_elements=["environment"], set_={"version": WttaRegisterVersion.version + 1, "changed_at": now}
        )
    )
    if dialect == "postgresql":
        await session.execute(select(func.pg_notify(REGISTER_CHANNEL, environment.value)))
    session.info[REGISTER_CHANGED] = True
