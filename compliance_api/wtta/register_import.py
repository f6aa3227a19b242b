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
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.events import service as events
from compliance_api.events.types import EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.wtta import queries
from compliance_api.wtta.models import AdmissionStatus, WttaImport
from compliance_api.wtta.queries import SQLITE_STAGING_INSERT, STAGING_COLUMNS, staging
from compliance_api.wtta.register_file import RegisterFileError, Row

ADMISSION_UPDATED = EventName.WTTA_ADMISSION_UPDATED
BATCH_ROWS = 10_000
REGISTER_CHANNEL = "wtta_register"  # PostgreSQL NOTIFY channel: an environment's cached register changed
REGISTER_CHANGED = "wtta_register_changed"  # Session.info flag read by the replicas' commit hook


class EmptySnapshot(ValueError):
    """A `--full` import of a file without rows would mark the whole cache missing; refused."""


@dataclass(frozen=True, slots=True)
class RegisterImportResult:
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
) -> RegisterImportResult:
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
    queries.add(session, run)
    await session.flush()
    return RegisterImportResult(run.id, environment, 0, 0, 0, 0, 0, 0, not_modified=True)


async def import_rows(
    session: AsyncSession,
    *,
    environment: Environment,
    rows: Iterable[Row],
    origin: ImportSource,
    full: bool = False,
    on_stage: Callable[[str], None] = lambda _: None,
) -> RegisterImportResult:
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
    await queries.index_staging(session)
    await _refuse_duplicates(session)
    on_stage("comparing")
    total, found, changed_data, status_changed = await queries.compare(session, environment)
    compared = Comparison(total - found, changed_data, status_changed)
    cached_total = await queries.count_cached(session, environment)
    covers_all = rows_read - compared.created == cached_total
    on_stage("recording history")
    if compared.created or compared.status_changed:  # re-importing an unchanged file skips both passes
        await queries.record_history(session, environment, now=now, source=origin.source, import_id=import_id)
    if compared.status_changed:
        await _emit_status_events(session, environment, now=now, source=origin.source)
    on_stage("applying")
    await queries.apply(
        session, environment, now=now, source=origin.source, source_url=origin.source_url, only_changed=covers_all
    )
    on_stage("marking missing")
    missing = await queries.mark_missing(session, environment, now=now) if full else 0
    if sqlite_connection:
        await connection.run_sync(lambda c: staging.drop(c))
    created, changed = compared.created, compared.changed
    status_changes = compared.created + compared.status_changed
    queries.add(
        session,
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
        ),
    )
    await raise_version(session, environment)
    await session.flush()
    unchanged = rows_read - created - changed
    return RegisterImportResult(import_id, environment, rows_read, created, changed, unchanged, status_changes, missing)


async def _one_import_at_a_time(session: AsyncSession, environment: Environment, *, sqlite: bool) -> None:
    """Take the environment's import lock for the transaction before reading anything, so that concurrent imports
    (workers refreshing on schedule, an operator's `wtta import`) run one after the other instead of failing.

    PostgreSQL: an advisory transaction lock; without it, two imports inserting the same new numbers collide on the
    primary key. SQLite: its write lock, which an UPDATE of no row takes (waiting up to busy_timeout); in WAL mode a
    transaction that has read fails at once, without waiting, when it starts writing after another connection
    committed, as the API's requests and the worker's jobs do meanwhile.
    """
    await queries.lock_imports(session, environment, sqlite=sqlite)


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
    duplicate = await queries.first_duplicate(session)
    if duplicate is not None:
        kvk, first, second = duplicate
        raise RegisterFileError(f"line {second}", "kvk_number", f"{kvk} already appears on line {first}")


@dataclass(frozen=True, slots=True)
class Comparison:
    """How the staged rows differ from the cache, counted in one pass."""

    created: int
    changed: int
    status_changed: int


async def _emit_status_events(session: AsyncSession, environment: Environment, *, now: datetime, source: str) -> None:
    """`wtta.admission.updated` for every cached number whose status changes (a first import is not an update)."""
    result = await queries.status_changes(session, environment)
    try:
        async for changes in result.partitions(BATCH_ROWS):
            await events.emit_many(
                session,
                environment=environment,
                at=now,
                events=[
                    events.NewEvent(
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


async def raise_version(session: AsyncSession, environment: Environment) -> None:
    """Count a change of the environment's cached register in the caller's transaction, so that every API process's
    in-memory copy (`wtta/replica.py`) stops answering from the old data once it commits.

    Other processes hear of it through a NOTIFY delivered at commit (PostgreSQL) or notice the commit themselves
    (SQLite's `PRAGMA data_version`); this process's replicas through the session's commit hook.
    """
    await queries.bump_version(session, environment, now=utcnow(), notify=REGISTER_CHANNEL)
    session.info[REGISTER_CHANGED] = True
