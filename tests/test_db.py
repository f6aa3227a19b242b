"""The engine: a failed statement's error, and so its log line, never carries the bound parameters."""

from __future__ import annotations

import os
import stat
import traceback
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from compliance_api.config import Settings
from compliance_api.db import create_engine

MARKER = "sealed-secret-4f1c9e"


async def test_a_database_error_does_not_show_its_parameters(settings: Settings) -> None:
    engine = create_engine(settings.resolved_database_url)
    try:
        async with engine.connect() as connection:
            with pytest.raises(DBAPIError) as caught:
                await connection.execute(text("SELECT :value FROM no_such_table"), {"value": MARKER})
    finally:
        await engine.dispose()
    logged = "".join(traceback.format_exception(caught.value))
    assert "no_such_table" in logged
    assert MARKER not in logged


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def _write_through_an_engine(database: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{database}")
    try:
        async with engine.begin() as connection:
            await connection.execute(text("CREATE TABLE t (tin TEXT)"))
            await connection.execute(text("INSERT INTO t VALUES ('NL123456789B01')"))
            files = {name: _mode(database.with_name(database.name + name)) for name in ("", "-wal", "-shm")}
    finally:
        await engine.dispose()
    assert files == {"": 0o600, "-wal": 0o600, "-shm": 0o600}


async def test_the_embedded_database_and_its_wal_files_are_owner_only(tmp_path: Path) -> None:
    previous = os.umask(0o022)  # the usual umask, under which SQLite alone makes 0644 files
    try:
        await _write_through_an_engine(tmp_path / "compliance.db")
    finally:
        os.umask(previous)


async def test_an_existing_readable_database_file_is_narrowed(tmp_path: Path) -> None:
    database = tmp_path / "compliance.db"
    database.touch(mode=0o644)
    database.chmod(0o644)
    await _write_through_an_engine(database)
