"""The lookup's read, outside SQLAlchemy's session: one prepared primary-key read per request.

Hand-rolled on purpose, one reader per backend, because the lookup is the hottest read (bench/RESULTS.md):

* SQLite: a synchronous read-only connection used on the event loop. Through aiosqlite every query hops to a worker
  thread and back, which cost milliseconds per lookup on a busy machine, while the read itself takes tens of
  microseconds with the file memory-mapped.
* PostgreSQL: a small asyncpg pool of its own. An ORM session costs BEGIN, the SELECT and a ROLLBACK (three round
  trips) and SQLAlchemy's statement handling: about 1 ms of CPU per lookup, six times the health endpoint. A pooled
  asyncpg `fetchrow` is one round trip of a statement asyncpg prepares once per connection.

Both read the same row with the same `last_verified_at` rule as `service.lookup` (a test compares them).
"""

from __future__ import annotations

import sqlite3
import weakref
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy import bindparam, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url

from compliance_api.db import asyncpg_dsn, sqlite_file
from compliance_api.kit.asyncpg_pool import LazyPool
from compliance_api.kit.environment import Environment
from compliance_api.wtta.models import WttaAdmission, WttaImport

MMAP_BYTES = 1 << 30
DATETIME_COLUMNS = ("admitted_at", "expires_at", "last_verified_at", "missing_from_source_at", "covered_at")

_covered = (
    select(func.max(WttaImport.finished_at))
    .where(WttaImport.environment == bindparam("environment"), WttaImport.covers_all)
    .scalar_subquery()
    .label("covered_at")
)
_LOOKUP = select(WttaAdmission.__table__, _covered).where(
    WttaAdmission.environment == bindparam("environment"), WttaAdmission.kvk_number == bindparam("kvk")
)
SQLITE_LOOKUP_SQL = str(_LOOKUP.compile(dialect=sqlite.dialect(paramstyle="named")))
# asyncpg takes $1, $2: `environment` is bound twice in the statement, so name the positions once.
POSTGRES_LOOKUP_SQL = (
    str(_LOOKUP.compile(dialect=postgresql.dialect(paramstyle="pyformat")))  # type: ignore[no-untyped-call]
    .replace("%(environment)s", "$1")
    .replace("%(kvk)s", "$2")
)


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

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            connection = sqlite3.connect(f"file:{self._path}?mode=ro", uri=True, check_same_thread=False)
            connection.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
            connection.execute("PRAGMA busy_timeout = 5000")
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

    async def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


class PostgresLookup:
    """A small asyncpg pool of its own, opened on first use in the serving event loop."""

    def __init__(self, dsn: str, size: int) -> None:
        self._pool = LazyPool(dsn, size)

    async def lookup(self, environment: Environment, kvk_number: str) -> dict[str, Any] | None:
        pool = await self._pool.get()
        row = await pool.fetchrow(POSTGRES_LOOKUP_SQL, environment.value, kvk_number)
        return None if row is None else _with_coverage(dict(row))

    async def close(self) -> None:
        await self._pool.close()


def lookup_reader_for(database_url: str, *, postgres_pool_size: int) -> LookupReader | None:
    """The reader for this database, or None when only a session can read it (an in-memory SQLite database)."""
    url = make_url(database_url)
    if (path := sqlite_file(url)) is not None:
        return SqliteLookup(path)
    if (dsn := asyncpg_dsn(url)) is not None:
        return PostgresLookup(dsn, postgres_pool_size)
    return None
