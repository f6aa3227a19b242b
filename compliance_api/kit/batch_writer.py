"""How a group commit's batch reaches the database: one transaction holding every row of the batch.

Hand-rolled on purpose, one writer per backend, like the WTTA lookup's reader: the audit write is most of the classify
endpoint's cost (bench/RESULTS.md). Through the async engine a batch costs a thread hand-off per statement on SQLite
(aiosqlite) and SQLAlchemy's statement handling plus BEGIN and COMMIT round trips on PostgreSQL:

* SQLite: one standard-library connection on one thread of its own; a batch is a single hand-off
  (`BEGIN IMMEDIATE`, one `executemany` per table, `COMMIT`).
* PostgreSQL: a small asyncpg pool of its own; a batch is one statement (`INSERT … SELECT FROM unnest(…)` per table,
  joined as data-modifying CTEs), so one round trip and an implicit transaction.
* Anything else (an in-memory SQLite database, which a second connection cannot see): the engine.

Values are bound with SQLAlchemy's own bind processors for the engine's dialect, so a row is stored exactly as an
ORM insert would store it; errors come back as SQLAlchemy's exceptions (`IntegrityError` for a constraint).
"""

from __future__ import annotations

import asyncio
import operator
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import asyncpg  # type: ignore[import-untyped]
from sqlalchemy import Table, insert
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError, IntegrityError, StatementError
from sqlalchemy.ext.asyncio import AsyncEngine

from compliance_api.db import asyncpg_dsn, sqlite_file, sqlite_pragmas
from compliance_api.kit.asyncpg_pool import LazyPool

Row = Mapping[str, Any]
Batch = Mapping[Table, Sequence[Row]]


class BatchWriter(Protocol):
    async def write(self, batch: Batch) -> None:
        """Insert every row in one transaction, or none of them."""

    async def close(self) -> None: ...


class EngineWriter:
    """Through the async engine: correct everywhere, and the fallback where no direct writer applies."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def write(self, batch: Batch) -> None:
        async with self._engine.begin() as connection:
            for table, rows in batch.items():
                await connection.execute(insert(table), list(rows))

    async def close(self) -> None:
        return None


class _Shape:
    """The insert of one table for one set of columns, with SQLAlchemy's bind processors for those columns.

    Built once per table and key order of the rows (`_Shapes`), so that binding a row does no per-column branching:
    the values come out of the row in one `itemgetter` call, the missing ones from their defaults, and only the
    columns whose type has a bind processor are processed."""

    def __init__(self, table: Table, columns: tuple[str, ...], given: tuple[str, ...], dialect: Dialect) -> None:
        self.table = table
        self.columns = columns
        present = [name for name in columns if name in given]
        self._present = [columns.index(name) for name in present]
        self._get = operator.itemgetter(*present) if len(present) > 1 else _one_of(present)
        self._defaults = [(columns.index(name), _python_default(table, name)) for name in columns if name not in given]
        processors = [table.c[name].type.dialect_impl(dialect).bind_processor(dialect) for name in columns]
        self._processors = [(index, process) for index, process in enumerate(processors) if process is not None]
        self._in_order = not self._defaults and present == list(columns)

    def bind(self, row: Row) -> list[Any]:
        """The row's values in column order, bound as the dialect binds them (a missing value gets its default)."""
        got = self._get(row)
        if self._in_order:
            values = list(got)
        else:
            values = [None] * len(self.columns)
            for index, value in zip(self._present, got, strict=True):
                values[index] = value
            for index, default in self._defaults:
                values[index] = default()
        for index, process in self._processors:
            values[index] = process(values[index])
        return values


def _one_of(present: list[str]) -> Callable[[Row], tuple[Any, ...]]:
    """`itemgetter` of one name returns the value, not a tuple of it."""
    return lambda row: tuple(row[name] for name in present)


def _python_default(table: Table, name: str) -> Callable[[], Any]:
    default = table.c[name].default
    if default is None:
        return lambda: None
    if default.is_callable:
        return lambda: default.arg(None)  # type: ignore[attr-defined]  # SQLAlchemy wraps it to take a context
    return lambda: default.arg  # type: ignore[attr-defined]


class _Shapes:
    """Rows grouped by table and by the columns they give; a column with a Python default is always given."""

    def __init__(self, dialect: Dialect) -> None:
        self._dialect = dialect
        self._cache: dict[tuple[Table, tuple[str, ...]], _Shape] = {}

    def group(self, batch: Batch) -> list[tuple[_Shape, list[list[Any]]]]:
        grouped: dict[_Shape, list[list[Any]]] = {}
        for table, rows in batch.items():
            for row in rows:
                shape = self._shape(table, tuple(row))
                try:
                    values = shape.bind(row)
                except Exception as exc:  # a value its column cannot bind, as the engine would report it
                    raise StatementError(str(exc), str(insert(table)), None, exc) from exc
                grouped.setdefault(shape, []).append(values)
        return list(grouped.items())

    def _shape(self, table: Table, given: tuple[str, ...]) -> _Shape:
        """By the row's keys in their order (a tuple hashes faster than a set is built)."""
        shape = self._cache.get((table, given))
        if shape is None:
            names = set(given)
            columns = tuple(c.name for c in table.columns if c.name in names or c.default is not None)
            shape = self._cache[(table, given)] = _Shape(table, columns, given, self._dialect)
        return shape


class SqliteWriter:
    """One standard-library connection, opened and used on one thread of its own."""

    def __init__(self, path: str, dialect: Dialect) -> None:
        self._path = path
        self._shapes = _Shapes(dialect)
        self._statements: dict[_Shape, str] = {}
        self._dialect = dialect
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-writer")
        self._connection: sqlite3.Connection | None = None

    async def write(self, batch: Batch) -> None:
        work = [(self._statement(shape), values) for shape, values in self._shapes.group(batch)]
        await asyncio.get_running_loop().run_in_executor(self._thread, self._write, work)

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._thread, self._close)
        self._thread.shutdown(wait=True)

    def _statement(self, shape: _Shape) -> str:
        statement = self._statements.get(shape)
        if statement is None:
            compiled = insert(shape.table).compile(dialect=self._dialect, column_keys=list(shape.columns))
            statement = self._statements[shape] = str(compiled)
        return statement

    def _write(self, work: list[tuple[str, list[list[Any]]]]) -> None:
        connection = self._connect()
        statement = ""
        try:
            connection.execute("BEGIN IMMEDIATE")
            for statement, rows in work:
                connection.executemany(statement, rows)
            connection.execute("COMMIT")
        except BaseException as exc:  # any failure (a value sqlite3 cannot bind, too) must not leave the lock held
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise DBAPIError.instance(statement, None, exc, sqlite3.Error) from exc
            raise

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            connection = sqlite3.connect(self._path, isolation_level=None, timeout=30)
            sqlite_pragmas(connection)
            self._connection = connection
        return self._connection

    def _close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


class PostgresWriter:
    """A small asyncpg pool of its own, opened on first use in the serving event loop."""

    def __init__(self, dsn: str, dialect: Dialect, size: int) -> None:
        self._shapes = _Shapes(dialect)
        self._statements: dict[tuple[_Shape, ...], str] = {}
        self._dialect = dialect
        self._pool = LazyPool(dsn, size)

    async def write(self, batch: Batch) -> None:
        grouped = self._shapes.group(batch)
        statement = self._statement(tuple(shape for shape, _ in grouped))
        arrays = [list(column) for _, rows in grouped for column in zip(*rows, strict=True)]
        pool = await self._pool.get()
        try:
            await pool.execute(statement, *arrays)
        except asyncpg.IntegrityConstraintViolationError as exc:
            raise IntegrityError(statement, None, exc) from exc
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            raise DBAPIError(statement, None, exc) from exc

    async def close(self) -> None:
        await self._pool.close()

    def _statement(self, shapes: tuple[_Shape, ...]) -> str:
        """One statement for the whole batch: each table's rows as parallel arrays, unnested into its insert."""
        statement = self._statements.get(shapes)
        if statement is None:
            inserts, position = [], 0
            for shape in shapes:
                arrays = []
                for name in shape.columns:
                    position += 1
                    column_type = shape.table.c[name].type.compile(dialect=self._dialect)
                    arrays.append(f"${position}::{column_type}[]")
                columns = ", ".join(self._dialect.identifier_preparer.quote(name) for name in shape.columns)
                table = self._dialect.identifier_preparer.format_table(shape.table)
                # Identifiers from our own metadata, quoted by the dialect; every value is bound.
                inserts.append(f"INSERT INTO {table} ({columns}) SELECT * FROM unnest({', '.join(arrays)})")  # noqa: S608
            ctes = [f"w{index} AS ({sql})" for index, sql in enumerate(inserts[:-1])]
            statement = (f"WITH {', '.join(ctes)} " if ctes else "") + inserts[-1]
            self._statements[shapes] = statement
        return statement


def batch_writer_for(engine: AsyncEngine) -> BatchWriter:
    """The direct writer for the engine's database, or the engine itself where none applies."""
    if (path := sqlite_file(engine.url)) is not None:
        return SqliteWriter(path, engine.dialect)
    if (dsn := asyncpg_dsn(engine.url)) is not None:
        return PostgresWriter(dsn, engine.dialect, size=2)
    return EngineWriter(engine)
