"""The lookup's read, outside SQLAlchemy's session: one prepared primary-key read per request.

Hand-rolled on purpose, one reader per backend, because the lookup is the hottest read (bench/RESULTS.md):

* SQLite: a synchronous read-only connection used on the event loop. Through aiosqlite every query hops to a worker
  thread and back, which cost milliseconds per lookup on a busy machine, while the read itself takes tens of
  microseconds with the file memory-mapped.
* PostgreSQL: a small asyncpg pool of its own. An ORM session costs BEGIN, the SELECT and a ROLLBACK (three round
  trips) and SQLAlchemy's statement handling: about 1 ms of CPU per lookup, six times the health endpoint. A pooled
  asyncpg `fetchrow` is one round trip of a statement asyncpg prepares once per connection.

Both read the same row with the same `last_verified_at` rule as `service.lookup` (a test compares them). They are
also the sources of the in-memory copy of the register (`wtta/replica.py`), which answers the lookups while current.
"""

from __future__ import annotations

import asyncio
import sqlite3
import weakref
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy.engine import make_url

from compliance_api.db import asyncpg_dsn, sqlite_data_version, sqlite_file, sqlite_read_only
from compliance_api.kit.asyncpg_pool import LazyPool
from compliance_api.kit.environment import Environment
from compliance_api.kit.per_pass import PerLoopPass
from compliance_api.kit.pg_listen import listen
from compliance_api.wtta.queries import (
    POSTGRES_COVERED_SQL,
    POSTGRES_LOOKUP_SQL,
    POSTGRES_ROWS_SQL,
    POSTGRES_VERSION_SQL,
    POSTGRES_VERSIONS_SQL,
    SQLITE_LOOKUP_SQL,
    SQLITE_VERSIONS_SQL,
    sqlite_register,
)
from compliance_api.wtta.register_import import REGISTER_CHANNEL
from compliance_api.wtta.replica import ReplicatedLookup, Snapshot, SnapshotRow, microseconds

MMAP_BYTES = 1 << 30
LISTENER_NAME = "compliance-api wtta listener"  # application_name of the LISTEN connection (pg_stat_activity)
DATETIME_COLUMNS = ("admitted_at", "expires_at", "last_verified_at", "missing_from_source_at", "covered_at")


def _versions_of(rows: Any) -> dict[Environment, int]:
    return {environment: 0 for environment in Environment} | {Environment(name): version for name, version in rows}


class _TimeCache(dict[Any, int]):
    """Microseconds of each distinct stored time: a register repeats few distinct dates and import times."""

    def __init__(self, parse: Callable[[Any], datetime]) -> None:
        super().__init__()
        self._parse = parse

    def __missing__(self, value: Any) -> int:
        self[value] = microseconds(self._parse(value))
        return self[value]

    def of(self, value: Any) -> int | None:
        return None if value is None else self[value]


def _snapshot_row(record: Any, times: _TimeCache) -> SnapshotRow:
    kvk, name, status, number, admitted, expires, source, source_url, verified, missing = record
    at = times.of
    return (kvk, name, status, number, at(admitted), at(expires), source, source_url, times[verified], at(missing))


def _sqlite_time(value: str) -> datetime:
    return datetime.fromisoformat(value).replace(tzinfo=UTC)


class LookupReader(Protocol):
    async def lookup(self, environment: Environment, kvk_number: str) -> dict[str, Any] | None: ...

    async def close(self) -> None: ...


def _with_coverage(found: dict[str, Any]) -> dict[str, Any]:
    """`last_verified_at` is the later of the row's own stamp and the newest import that listed every number."""
    covered_at = found.pop("covered_at")
    if covered_at is not None and covered_at > found["last_verified_at"]:
        found["last_verified_at"] = covered_at
    return found


class SqliteLookup:
    """One read-only connection per process, opened on first use (the file may not exist before `migrate`) and used
    only from the event loop's thread."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._connection: sqlite3.Connection | None = None
        self._data_version: int | None = None
        self._pass_data_version = PerLoopPass(self._read_data_version)

    def _open(self, *, check_same_thread: bool) -> sqlite3.Connection:
        """A read-only connection with the file memory-mapped."""
        return sqlite_read_only(self._path, MMAP_BYTES, check_same_thread=check_same_thread)

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            connection = self._open(check_same_thread=False)
            connection.row_factory = sqlite3.Row
            weakref.finalize(self, connection.close)
            self._connection = connection
        return self._connection

    async def lookup(self, environment: Environment, kvk_number: str) -> dict[str, Any] | None:
        row = (
            self._connect().execute(SQLITE_LOOKUP_SQL, {"environment": environment.value, "kvk": kvk_number}).fetchone()
        )
        if row is None:
            return None
        found = dict(row)
        for name in DATETIME_COLUMNS:
            if found[name] is not None:
                found[name] = datetime.fromisoformat(found[name]).replace(tzinfo=UTC)
        return _with_coverage(found)

    def committed_elsewhere(self) -> bool:
        """`PRAGMA data_version` changes when another connection commits (any table): then read the versions. Read
        once per pass of the event loop (`PerLoopPass`): the lookups of one pass share the reading."""
        data_version = self._pass_data_version.get()
        changed = data_version != self._data_version
        self._data_version = data_version
        return changed

    def _read_data_version(self) -> int:
        return sqlite_data_version(self._connect())

    async def versions(self) -> dict[Environment, int]:
        return _versions_of(tuple(row) for row in self._connect().execute(SQLITE_VERSIONS_SQL))

    async def snapshot(self, environment: Environment) -> Snapshot:
        return await asyncio.to_thread(self._read_snapshot, environment)

    def _read_snapshot(self, environment: Environment) -> Snapshot:
        """On a worker thread with a connection of its own; one read transaction sees one version."""
        connection = self._open(check_same_thread=True)
        try:
            with sqlite_register(connection, environment) as (version, covered_at, records):
                covered = None if covered_at is None else _sqlite_time(covered_at)
                snapshot = Snapshot(environment, version, covered)
                times = _TimeCache(_sqlite_time)
                for record in records:
                    snapshot.append(_snapshot_row(record, times))
            return snapshot
        finally:
            connection.close()

    async def watch(self, on_change: Callable[[], None]) -> None:
        """Nothing to listen to: `committed_elsewhere` sees every commit."""
        on_change()
        await asyncio.Event().wait()

    async def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


class PostgresLookup:
    """A small asyncpg pool of its own, opened on first use in the serving event loop."""

    def __init__(self, dsn: str, size: int, *, keepalive_seconds: float = 30.0) -> None:
        self._dsn = dsn
        self._pool = LazyPool(dsn, size)
        self._keepalive_seconds = keepalive_seconds

    async def lookup(self, environment: Environment, kvk_number: str) -> dict[str, Any] | None:
        pool = await self._pool.get()
        row = await pool.fetchrow(POSTGRES_LOOKUP_SQL, environment.value, kvk_number)
        return None if row is None else _with_coverage(dict(row))

    def committed_elsewhere(self) -> bool:
        """Commits are announced to `watch` instead."""
        return False

    async def versions(self) -> dict[Environment, int]:
        pool = await self._pool.get()
        return _versions_of(tuple(row) for row in await pool.fetch(POSTGRES_VERSIONS_SQL))

    async def snapshot(self, environment: Environment) -> Snapshot:
        pool = await self._pool.get()
        async with pool.acquire() as connection, connection.transaction(isolation="repeatable_read", readonly=True):
            version = await connection.fetchval(POSTGRES_VERSION_SQL, environment.value)
            covered_at = await connection.fetchval(POSTGRES_COVERED_SQL, environment.value)
            snapshot = Snapshot(environment, version or 0, covered_at)
            times = _TimeCache(lambda value: value)
            cursor = await connection.cursor(POSTGRES_ROWS_SQL, environment.value)
            while records := await cursor.fetch(10_000):
                for record in records:
                    snapshot.append(_snapshot_row(record, times))
            return snapshot

    async def watch(self, on_change: Callable[[], None]) -> None:
        await listen(
            self._dsn,
            REGISTER_CHANNEL,
            on_change,
            application_name=LISTENER_NAME,
            keepalive_seconds=self._keepalive_seconds,
        )

    async def close(self) -> None:
        await self._pool.close()


def lookup_reader_for(database_url: str, *, postgres_pool_size: int, replica: bool = True) -> LookupReader | None:
    """The reader for this database (by default through an in-memory copy of the register), or None when only a
    session can read it (an in-memory SQLite database)."""
    url = make_url(database_url)
    source: SqliteLookup | PostgresLookup
    if (path := sqlite_file(url)) is not None:
        source = SqliteLookup(path)
    elif (dsn := asyncpg_dsn(url)) is not None:
        source = PostgresLookup(dsn, postgres_pool_size)
    else:
        return None
    return ReplicatedLookup(source) if replica else source
