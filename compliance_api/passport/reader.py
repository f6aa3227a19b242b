"""The passport reads of the hot routes, outside SQLAlchemy's session: one statement per request.

Hand-rolled on purpose, like the WTTA lookup's reader, because the own passport and the verification are read on
every call (bench/RESULTS.md): an ORM session cost two to three queries, a thread hop per statement on SQLite
(aiosqlite) and SQLAlchemy's statement handling per query, ten times the health endpoint.

* SQLite: a synchronous read-only connection used on the event loop; one read of a few rows takes tens of
  microseconds with the file memory-mapped (each statement is its own read transaction: one consistent snapshot).
* PostgreSQL: a small asyncpg pool of its own (one round trip, a statement asyncpg prepares once per connection),
  terminated when the engine is disposed.
* Anything else (an in-memory SQLite database, which a second connection cannot see): a Core statement on the
  engine.

Values are bound and converted with SQLAlchemy's own processors for the engine's dialect, so a row reads exactly as
the ORM would read it (a test compares both). The statements are `queries.py`'s (`OWN`, `SHARE`, `CHANGE_VERSION`).
"""

from __future__ import annotations

import asyncio
import sqlite3
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from sqlalchemy import ColumnElement, Select, event
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncEngine

from compliance_api.db import asyncpg_dsn, sqlite_file, sqlite_read_only
from compliance_api.kit.asyncpg_pool import LazyPool
from compliance_api.passport.queries import CHANGE_VERSION, engine_rows

MMAP_BYTES = 1 << 28
MAX_CONVERTED = 10_000
POSTGRES_POOL_SIZE = 4
Row = tuple[Any, ...]
AnySelect = Select[*tuple[Any, ...]]


class _Compiled:
    """One statement compiled for a dialect, with the dialect's bind and result processors."""

    def __init__(self, statement: AnySelect, dialect: Dialect) -> None:
        compiled = statement.compile(dialect=dialect)
        self.sql = str(compiled)
        self.names: tuple[str, ...] = tuple(compiled.positiontup or ())
        self._binds = [_bind_processor(compiled.binds[name].type, dialect) for name in self.names]
        self._results = [_result_processor(column, dialect) for column in statement.selected_columns]
        self._converted: dict[Row, Row] = {}

    def arguments(self, parameters: Mapping[str, Any]) -> list[Any]:
        values = [parameters[name] for name in self.names]
        return [
            value if process is None else process(value) for value, process in zip(values, self._binds, strict=True)
        ]

    def rows(self, records: Sequence[Sequence[Any]]) -> list[Row]:
        """Converted rows; a record read before is converted once (the same passport is read again and again)."""
        rows = []
        for record in records:
            raw = tuple(record)
            row = self._converted.get(raw)
            if row is None:
                row = tuple(_processed(value, process) for value, process in zip(raw, self._results, strict=True))
                if len(self._converted) >= MAX_CONVERTED:
                    self._converted.clear()
                self._converted[raw] = row
            rows.append(row)
        return rows


def _processed(value: Any, process: Callable[[Any], Any] | None) -> Any:
    return value if process is None else process(value)


def _bind_processor(column_type: Any, dialect: Dialect) -> Callable[[Any], Any] | None:
    processor: Callable[[Any], Any] | None = column_type.dialect_impl(dialect).bind_processor(dialect)
    return processor


def _result_processor(column: ColumnElement[Any], dialect: Dialect) -> Callable[[Any], Any] | None:
    processor: Callable[[Any], Any] | None = column.type.dialect_impl(dialect).result_processor(dialect, None)
    return processor


class PassportReader(Protocol):
    async def fetch(self, statement: AnySelect, parameters: Mapping[str, Any]) -> list[Row]:
        """The statement's rows, converted as the ORM converts them."""


class _Statements:
    def __init__(self, dialect: Dialect) -> None:
        self._dialect = dialect
        self._compiled: dict[AnySelect, _Compiled] = {}

    def get(self, statement: AnySelect) -> _Compiled:
        compiled = self._compiled.get(statement)
        if compiled is None:
            compiled = self._compiled[statement] = _Compiled(statement, self._dialect)
        return compiled


class SqliteReader:
    """One read-only connection per process, opened on first use and used only from the event loop's thread."""

    def __init__(self, path: str, dialect: Dialect) -> None:
        self._path = path
        self._statements = _Statements(dialect)
        self._connection: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            connection = sqlite_read_only(self._path, MMAP_BYTES, check_same_thread=False)
            weakref.finalize(self, connection.close)
            self._connection = connection
        return self._connection

    async def fetch(self, statement: AnySelect, parameters: Mapping[str, Any]) -> list[Row]:
        compiled = self._statements.get(statement)
        return compiled.rows(self._connect().execute(compiled.sql, compiled.arguments(parameters)).fetchall())

    def version(self) -> int | None:
        """`passport_change.version`, which triggers raise with every change the hot reads could see."""
        row = self._connect().execute(CHANGE_VERSION).fetchone()
        return None if row is None else int(row[0])


class PostgresReader:
    """A small asyncpg pool of its own (one round trip per read; through the engine's pool a read cost twice the
    CPU), terminated when the engine is disposed (at shutdown)."""

    def __init__(self, engine: AsyncEngine, dsn: str, size: int) -> None:
        self._statements = _Statements(engine.dialect)
        self._pool = LazyPool(dsn, size)
        # Callers queue here, in arrival order, rather than in asyncpg's acquire: there a newcomer can take a
        # connection released for a woken waiter, which gave a p99 of ~200 ms at 64 connections (p50 30 ms).
        self._slots = asyncio.Semaphore(size)
        event.listen(engine.sync_engine, "engine_disposed", lambda _: self._pool.terminate())

    async def fetch(self, statement: AnySelect, parameters: Mapping[str, Any]) -> list[Row]:
        compiled = self._statements.get(statement)
        pool = await self._pool.get()
        async with self._slots:
            records = await pool.fetch(compiled.sql, *compiled.arguments(parameters))
        return compiled.rows(records)


class EngineReader:
    """Through the engine: correct everywhere, and the fallback where no direct reader applies."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def fetch(self, statement: AnySelect, parameters: Mapping[str, Any]) -> list[Row]:
        return await engine_rows(self._engine, statement, parameters)


def reader_for(engine: AsyncEngine) -> PassportReader:
    """The direct reader for the engine's database, or the engine itself where none applies."""
    if (path := sqlite_file(engine.url)) is not None:
        return SqliteReader(path, engine.dialect)
    if (dsn := asyncpg_dsn(engine.url)) is not None:
        return PostgresReader(engine, dsn, POSTGRES_POOL_SIZE)
    return EngineReader(engine)


def postgres_dsn(engine: AsyncEngine) -> str | None:
    """The asyncpg DSN of a PostgreSQL engine (where an in-memory copy can listen for changes), else None."""
    return asyncpg_dsn(engine.url)
