"""The in-memory copy of the register (`wtta/replica.py`): same answers as the database, never an out-of-date one."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]
import pytest
from fastapi import FastAPI
from httpx import AsyncClient
from prometheus_client import REGISTRY
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.db import asyncpg_dsn, create_engine, create_sessionmaker
from compliance_api.kit.environment import Environment
from compliance_api.migrate import upgrade
from compliance_api.wtta import service
from compliance_api.wtta.reader import LISTENER_NAME, PostgresLookup, SqliteLookup, lookup_reader_for
from compliance_api.wtta.replica import ReplicatedLookup, Snapshot, microseconds
from tests.conftest import commits, require_service
from tests.wtta.registers import import_lines, register_csv, row

Maker = async_sessionmaker[AsyncSession]
LIVE, SANDBOX = Environment.live, Environment.test
POSTGRES_SERVER = os.environ.get("TEST_POSTGRES_SERVER", "postgresql://postgres@127.0.0.1:5432")


def reads(where: str) -> float:
    return REGISTRY.get_sample_value("compliance_wtta_lookup_reads_total", {"read": where}) or 0.0


@pytest.fixture
async def replica(settings: Settings) -> AsyncIterator[ReplicatedLookup]:
    reader = lookup_reader_for(settings.resolved_database_url, postgres_pool_size=2)
    assert isinstance(reader, ReplicatedLookup)
    yield reader
    await reader.close()


async def from_database(sessionmaker: Maker, environment: Environment, kvk: str) -> dict[str, object] | None:
    async with sessionmaker() as session:
        return await service.lookup(session, environment=environment, kvk_number=kvk)


async def status_in(replica: ReplicatedLookup, kvk: str, environment: Environment = LIVE) -> str | None:
    found = await replica.lookup(environment, kvk)
    return None if found is None else str(found["admission_status"])


def test_a_snapshot_finds_exactly_the_numbers_it_holds() -> None:
    snapshot = Snapshot(LIVE, 3, None)
    at = microseconds(datetime(2027, 1, 1, tzinfo=UTC))
    for kvk in ("10000001", "10000003", "99999999"):
        snapshot.append((kvk, f"N {kvk}", "admitted", None, None, None, "register", None, at, None))
    assert [snapshot.get(kvk) is not None for kvk in ("10000001", "10000003", "99999999")] == [True] * 3
    assert [snapshot.get(kvk) for kvk in ("00000000", "10000002", "10000004")] == [None] * 3
    found = snapshot.get("10000003")
    assert found is not None
    assert (found["legal_name"], found["last_verified_at"]) == ("N 10000003", datetime(2027, 1, 1, tzinfo=UTC))
    assert Snapshot(LIVE, 0, None).get("10000001") is None


def test_a_snapshot_refuses_rows_out_of_order() -> None:
    snapshot = Snapshot(LIVE, 1, None)
    snapshot.append(("20000000", "B", "admitted", None, None, None, "r", None, 0, None))
    with pytest.raises(ValueError, match="out of order at KvK number 10000000"):
        snapshot.append(("10000000", "A", "admitted", None, None, None, "r", None, 0, None))


@commits
async def test_the_copy_answers_exactly_what_the_database_answers(
    sessionmaker: Maker, replica: ReplicatedLookup
) -> None:
    """Every column, null or not: numbers missing from a full snapshot, an import that verified every number, and a
    second environment."""
    expiring = "30000003,Expiring B.V.,conditionally_admitted,NAU-3,2027-01-01,2028-01-01"
    await import_lines(sessionmaker, [row("10000001"), row("20000002", "applied", number=""), expiring])
    await import_lines(sessionmaker, [row("10000001"), row("20000002", "applied", number=""), expiring])
    await import_lines(
        sessionmaker, [row("10000001"), row("40000004", "revoked")], full=True, source_url="https://x.test"
    )
    await import_lines(sessionmaker, [row("20000002", "suspended")], environment=SANDBOX)
    assert await replica.wait_loaded(LIVE) == 4
    assert await replica.wait_loaded(SANDBOX) == 1
    asked = [(LIVE, kvk) for kvk in ("10000001", "20000002", "30000003", "40000004", "50000005")]
    asked += [(SANDBOX, "20000002"), (SANDBOX, "10000001")]
    memory, database = reads("memory"), reads("database")

    answers = [await replica.lookup(environment, kvk) for environment, kvk in asked]

    assert answers == [await from_database(sessionmaker, environment, kvk) for environment, kvk in asked]
    assert (reads("memory") - memory, reads("database") - database) == (len(asked), 0)
    missing = answers[1]
    assert missing is not None
    assert missing["missing_from_source_at"] is not None
    assert [answer is None for answer in answers] == [False, False, False, False, True, False, True]


@commits
async def test_a_change_committed_in_this_process_is_answered_at_once(
    sessionmaker: Maker, replica: ReplicatedLookup
) -> None:
    await import_lines(sessionmaker, [row("10000001"), row("20000002")])
    await replica.wait_loaded(LIVE)
    assert await status_in(replica, "10000001") == "admitted"

    await import_lines(sessionmaker, [row("10000001", "revoked")])
    database = reads("database")

    assert await status_in(replica, "10000001") == "revoked"
    assert reads("database") == database + 1, "the old copy is not used; the new one is still loading"
    await replica.wait_loaded(LIVE)
    memory = reads("memory")
    assert await status_in(replica, "10000001") == "revoked"
    assert reads("memory") == memory + 1


class Announced:
    """Wraps the callback the replica's follower calls on a change: lets a test wait for a change announced by
    PostgreSQL."""

    def __init__(self, replica: ReplicatedLookup) -> None:
        self.event = asyncio.Event()
        follower = replica._follower
        original: Callable[[], None] = follower._on_heard

        def changed() -> None:
            original()
            self.event.set()

        follower._on_heard = changed

    async def next(self) -> None:
        await asyncio.wait_for(self.event.wait(), timeout=30)
        self.event.clear()


def import_in_another_process(cli_env: dict[str, str], tmp_path: Path, *lines: str) -> None:
    """The real CLI in its own process: nothing of it runs through this process's session commit hook."""
    path = tmp_path / "register.csv"
    path.write_bytes(register_csv(*lines))
    env = os.environ | cli_env
    command = [sys.executable, "-m", "compliance_api", "wtta", "import", str(path), "--quiet"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr


async def test_a_change_committed_by_another_process_is_noticed_before_the_next_answer(
    sessionmaker: Maker, replica: ReplicatedLookup, settings: Settings, cli_env: dict[str, str], tmp_path: Path
) -> None:
    await import_lines(sessionmaker, [row("10000001")])
    announced = Announced(replica)
    await replica.lookup(LIVE, "10000001")  # starts watching
    await announced.next()
    await replica.wait_loaded(LIVE)
    assert await status_in(replica, "10000001") == "admitted"

    await asyncio.to_thread(import_in_another_process, cli_env, tmp_path, row("10000001", "suspended"))
    if settings.resolved_database_url.startswith("postgresql"):
        await announced.next()  # the import's NOTIFY, delivered at its commit

    assert await status_in(replica, "10000001") == "suspended"
    await replica.wait_loaded(LIVE)
    memory = reads("memory")
    assert await status_in(replica, "10000001") == "suspended"
    assert reads("memory") == memory + 1


class ObservedPostgresLookup(PostgresLookup):
    """Lets the test wait until the LISTEN connection has been lost."""

    def __init__(self, dsn: str) -> None:
        super().__init__(dsn, 2)
        self.lost = asyncio.Event()

    async def watch(self, on_change: Callable[[], None]) -> None:
        try:
            await super().watch(on_change)
        finally:
            self.lost.set()


@pytest.fixture
async def postgres(settings: Settings, sessionmaker: Maker) -> AsyncIterator[tuple[str, Maker]]:
    """A PostgreSQL database in both CI runs: the suite's own, or on the SQLite run a migrated one made for the test."""
    if make_url(settings.resolved_database_url).get_backend_name() == "postgresql":
        yield settings.resolved_database_url, sessionmaker
        return
    name = f"replica_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    try:
        admin = await asyncpg.connect(POSTGRES_SERVER + "/postgres")
    except OSError:
        require_service(False, "PostgreSQL at " + POSTGRES_SERVER)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        url = Settings(database_url=f"{POSTGRES_SERVER}/{name}").resolved_database_url
        engine = create_engine(url)
        try:
            await upgrade(engine)
            yield url, create_sessionmaker(engine)
        finally:
            await engine.dispose()
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@commits
async def test_while_the_listening_connection_is_down_lookups_read_the_database(
    postgres: tuple[str, Maker],
) -> None:
    """PostgreSQL only has a connection to lose (SQLite sees every commit on each lookup): the test makes a
    PostgreSQL database on the SQLite run too."""
    url, sessionmaker = postgres
    dsn = asyncpg_dsn(make_url(url))
    assert dsn is not None
    source = ObservedPostgresLookup(dsn)
    replica = ReplicatedLookup(source, retry_seconds=1.0)
    try:
        await import_lines(sessionmaker, [row("10000001")])
        announced = Announced(replica)
        await replica.lookup(LIVE, "10000001")
        await announced.next()
        await replica.wait_loaded(LIVE)

        connection = await asyncpg.connect(dsn)
        try:
            terminated = await connection.fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1 "
                "AND datname = current_database()",
                LISTENER_NAME,
            )
        finally:
            await connection.close()
        assert terminated >= 1
        await asyncio.wait_for(source.lost.wait(), timeout=30)
        database = reads("database")
        assert await status_in(replica, "10000001") == "admitted"
        assert reads("database") == database + 1, "without its announcements the copy is not trusted"

        await announced.next()  # listening again, after the retry delay
        memory = reads("memory")
        assert await status_in(replica, "10000001") == "admitted"
        assert reads("memory") == memory + 1
    finally:
        await replica.close()


@commits
async def test_the_endpoint_answers_from_memory_with_the_database_answer(
    sessionmaker: Maker, app: FastAPI, client: AsyncClient, auth: dict[str, str]
) -> None:
    await import_lines(sessionmaker, [row("10000001"), row("20000002", "revoked")])
    reader = app.state.services.wtta_reader
    assert isinstance(reader, ReplicatedLookup)
    first = await client.get("/v1/wtta/lookup", params={"kvk": "20000002"}, headers=auth)
    await reader.wait_loaded(LIVE)
    memory = reads("memory")

    second = await client.get("/v1/wtta/lookup", params={"kvk": "20000002"}, headers=auth)
    absent = await client.get("/v1/wtta/lookup", params={"kvk": "30000003"}, headers=auth)

    assert (first.status_code, second.status_code) == (200, 200)
    assert second.content == first.content
    assert second.json()["admission_status"] == "revoked"
    assert absent.status_code == 404
    assert absent.json()["code"] == "not_in_cache"
    assert reads("memory") == memory + 2


@commits
async def test_turned_off_every_lookup_reads_the_database(settings: Settings, sessionmaker: Maker) -> None:
    await import_lines(sessionmaker, [row("10000001")])
    reader = lookup_reader_for(settings.resolved_database_url, postgres_pool_size=2, replica=False)
    assert reader is not None
    assert not isinstance(reader, ReplicatedLookup)
    try:
        assert await reader.lookup(LIVE, "10000001") == await from_database(sessionmaker, LIVE, "10000001")
    finally:
        await reader.close()


class DataVersionsCounted(SqliteLookup):
    """The SQLite lookup, counting its `PRAGMA data_version` statements."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.statements = 0
        self._connect().set_trace_callback(self._traced)

    def _traced(self, statement: str) -> None:
        self.statements += statement == "PRAGMA data_version"


async def test_sqlite_the_lookups_of_one_loop_pass_ask_for_other_commits_once(tmp_path: Path) -> None:
    """`PRAGMA data_version` is a synchronous statement on the event loop: the lookups of one pass of the loop share
    one, and the next pass asks again."""
    path = tmp_path / "register.sqlite3"
    engine = create_engine(f"sqlite+aiosqlite:///{path}")
    await upgrade(engine)
    await engine.dispose()
    lookup = DataVersionsCounted(str(path))
    assert lookup.committed_elsewhere()
    assert not lookup.committed_elsewhere()
    assert lookup.statements == 1
    await asyncio.sleep(0)  # the rest of this pass of the loop
    assert not lookup.committed_elsewhere()
    assert lookup.statements == 2
    await lookup.close()
