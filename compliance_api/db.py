"""Database: declarative base, UTC timestamps, engine and session factories (a request's session: `sessions`)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import uuid
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar

import orjson
from sqlalchemy import Enum, MetaData, Uuid, event
from sqlalchemy.engine import URL, Dialect, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase, Session
from sqlalchemy.types import DateTime, TypeDecorator

PRIVATE_FILE_MODE = 0o600
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on every backend (SQLite stores them naive, PostgreSQL as timestamptz)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given; use aware UTC")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {datetime: UTCDateTime(), uuid.UUID: Uuid()}


def str_enum(enum: type[StrEnum], name: str, *, length: int = 16) -> Enum:
    """A portable enum column: stored as its string value, no native database type."""
    return Enum(enum, name=name, native_enum=False, length=length, values_callable=lambda e: [m.value for m in e])


def _json_dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


# orjson for JSON columns: the standard library's encoder was a tenth of the classify endpoint's CPU time.
JSON_CODEC: dict[str, Any] = {"json_serializer": _json_dumps, "json_deserializer": orjson.loads}


def create_engine(url: str) -> AsyncEngine:
    """The application's engine. `hide_parameters`: a failed statement's error (and so its log line) never shows the
    bound values, which are user input, sealed secrets and token hashes."""
    if url.startswith("sqlite"):
        if (path := sqlite_file(make_url(url))) is not None:
            make_private(Path(path))
        engine = create_async_engine(
            url, pool_size=5, max_overflow=5, connect_args={"timeout": 30}, hide_parameters=True, **JSON_CODEC
        )
        event.listen(engine.sync_engine, "connect", sqlite_pragmas)
        return engine
    # No pool_pre_ping: it costs a round trip per checkout (a third of a lookup's time). After a database restart
    # the first statement on each stale connection fails (503) and SQLAlchemy then drops the whole pool; the health
    # probe notices the outage within its interval either way.
    return create_async_engine(
        url, pool_size=10, max_overflow=10, pool_recycle=1800, hide_parameters=True, **JSON_CODEC
    )


def sqlite_pragmas(dbapi_connection: Any, _record: Any = None) -> None:
    """Every SQLite connection's settings (the engine's and the audit writer's)."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    # With WAL, NORMAL stays consistent and loses nothing when the process crashes; only a power loss or OS crash
    # can undo the last commits. It cuts a commit from ~1.5 ms to ~0.2 ms (bench/RESULTS.md). SQLite is the
    # embedded mode; production runs on PostgreSQL.
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def sqlite_file(url: URL) -> str | None:
    """The database file of a SQLite URL; None for another backend or an in-memory database (no second connection
    can see that one)."""
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return url.database


def sqlite_read_only(path: str, mmap_bytes: int, *, check_same_thread: bool) -> sqlite3.Connection:
    """A read-only connection of its own to a SQLite file, memory-mapped up to `mmap_bytes` (the hot readers')."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=check_same_thread)
    connection.execute(f"PRAGMA mmap_size = {mmap_bytes}")
    connection.execute("PRAGMA busy_timeout = 5000")
    return connection


def sqlite_data_version(connection: sqlite3.Connection) -> int:
    """`PRAGMA data_version`: it changes when another connection commits to the file."""
    data_version: int = connection.execute("PRAGMA data_version").fetchone()[0]
    return data_version


def make_private(database: Path) -> None:
    """The SQLite file holds password hashes and TINs: create it owner-only (0600) before SQLite would create it 0644,
    and narrow an existing one of ours (and its -wal and -shm files, which SQLite otherwise creates with the
    database file's mode). A missing folder is left to SQLite to report, as before."""
    if not database.parent.is_dir():
        return
    with contextlib.suppress(FileExistsError):
        os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE))
    for file in (database, database.with_name(database.name + "-wal"), database.with_name(database.name + "-shm")):
        with contextlib.suppress(FileNotFoundError):
            found = file.stat()
            if found.st_uid == os.getuid() and stat.S_IMODE(found.st_mode) & 0o077:  # group or others may read
                file.chmod(PRIVATE_FILE_MODE)


def asyncpg_dsn(url: URL) -> str | None:
    """The DSN asyncpg takes for a PostgreSQL URL (whatever its SQLAlchemy driver); None for another backend."""
    if url.get_backend_name() != "postgresql":
        return None
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def create_sessionmaker(
    engine: AsyncEngine, session_class: type[Session] = Session
) -> async_sessionmaker[AsyncSession]:
    """Sessions on `engine`; `session_class` is the synchronous class under each (the app's carries a guard)."""
    return async_sessionmaker(engine, expire_on_commit=False, sync_session_class=session_class)
