"""The lookup's read on SQLite, done synchronously on the event loop.

Hand-rolled on purpose: through aiosqlite every query hops to a worker thread and back, which cost milliseconds per
lookup on a busy machine, while the primary-key read itself takes tens of microseconds with the file memory-mapped
(bench/RESULTS.md). PostgreSQL keeps the ordinary async session (asyncpg needs no thread).
"""

from __future__ import annotations

import sqlite3
import weakref
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import make_url

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
LOOKUP_SQL = str(_LOOKUP.compile(dialect=sqlite.dialect(paramstyle="named")))


class SqliteLookup:
    """One read-only connection per process (used only from the event loop's thread)."""

    def __init__(self, path: str) -> None:
        self._connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        self._connection.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        self._connection.execute("PRAGMA busy_timeout = 5000")
        self._connection.row_factory = sqlite3.Row

    def close(self) -> None:
        self._connection.close()

    def lookup(self, environment: Environment, kvk_number: str) -> dict[str, Any] | None:
        """The same row and `last_verified_at` rule as `service.lookup`."""
        row = self._connection.execute(LOOKUP_SQL, {"environment": environment.value, "kvk": kvk_number}).fetchone()
        if row is None:
            return None
        found = dict(row)
        for name in DATETIME_COLUMNS:
            if found[name] is not None:
                found[name] = datetime.fromisoformat(found[name]).replace(tzinfo=UTC)
        covered_at = found.pop("covered_at")
        if covered_at is not None and covered_at > found["last_verified_at"]:
            found["last_verified_at"] = covered_at
        return found


def sqlite_lookup_for(owner: object, database_url: str) -> SqliteLookup | None:
    """The process's SqliteLookup for `owner` (the app's state), or None when the database is not a SQLite file."""
    existing: SqliteLookup | None = getattr(owner, "wtta_sqlite_lookup", None)
    if existing is not None:
        return existing
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    reader = SqliteLookup(url.database)
    setattr(owner, "wtta_sqlite_lookup", reader)  # noqa: B010 (a dynamic slot on Starlette's State)
    weakref.finalize(owner, reader.close)
    return reader
