"""The passport routes' in-memory copy on PostgreSQL (`passport/mirror.py`): answers from memory only while it
listens and nothing changed, sees this process's changes before their commit returns and other processes' changes
when announced. The tests make a PostgreSQL database on the SQLite run too (only PostgreSQL announces changes)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]
import pytest
from prometheus_client import REGISTRY
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from compliance_api.db import asyncpg_dsn, create_engine, create_sessionmaker, sqlite_file
from compliance_api.errors import ApiError
from compliance_api.kit.batch_writer import batch_writer_for
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.migrate import upgrade
from compliance_api.passport import queries, service, views
from compliance_api.passport.cache import LatestCache
from compliance_api.passport.catalogue import packaged_catalogue
from compliance_api.passport.hot_path import new_hot_path
from compliance_api.passport.mirror import LISTENER_NAME, CountedReader, MirroredReader
from compliance_api.passport.reader import PassportReader, PostgresReader, SqliteReader, reader_for
from compliance_api.passport.signing import SigningKeys
from tests.conftest import SECRET, ProxiedPostgres
from tests.passport.conftest import Account, give_passport, make_account
from tests.passport.test_hot_path import caller_of


def reads_from(where: str) -> float:
    value = REGISTRY.get_sample_value("compliance_passport_reads_total", {"read": where})
    return value or 0.0


@dataclass(frozen=True, slots=True)
class Mirrored:
    """A mirror over a PostgreSQL database, with a freelancer's passport and a business to verify it."""

    mirror: MirroredReader
    database: ProxiedPostgres
    engine: AsyncEngine
    dsn: str
    holder: Account
    business: Account


@pytest.fixture
async def mirrored(proxied_postgres: ProxiedPostgres, pepper: bytes) -> AsyncIterator[Mirrored]:
    engine = create_engine(proxied_postgres.url)
    dsn = asyncpg_dsn(engine.url)
    assert dsn is not None
    mirror = MirroredReader(PostgresReader(engine, dsn, 2), dsn, retry_seconds=0.2)
    maker = proxied_postgres.sessionmaker
    holder, business = await make_account(maker, pepper), await make_account(maker, pepper)
    await give_passport(maker, holder.user)
    try:
        yield Mirrored(mirror, proxied_postgres, engine, dsn, holder, business)
    finally:
        await mirror.close()
        await engine.dispose()


async def listening(mirror: MirroredReader) -> None:
    """Start the mirror's listener with a first read and wait until it listens."""
    if not mirror.listening:
        changed = asyncio.ensure_future(mirror.changed())
        await mirror.fetch(queries.OWN, {"user_id": uuid.uuid4(), "environment": Environment.live})
        await asyncio.wait_for(changed, timeout=30)
    assert mirror.listening


async def own_through(reader: PassportReader, holder: Account) -> bytes:
    """The holder's own passport read through `reader`."""
    rows = await service.own_passport_rows(reader, caller_of(holder))
    return views.own_passport_body(rows, packaged_catalogue(), utcnow().date(), LatestCache())


async def verify_through(
    reader: PassportReader, engine: AsyncEngine, business: Account, token: str, pepper: bytes, keys: SigningKeys
) -> bytes:
    """A verification by `business` read through `reader`, its view committed through a group commit of its own."""
    audit = GroupCommit(batch_writer_for(engine))
    try:
        verified = await service.verify_share(reader, audit, caller_of(business), token, pepper=pepper, now=utcnow())
        return views.signed_summary_body(verified, packaged_catalogue(), keys, LatestCache())
    finally:
        await audit.close()


async def own(mirrored: Mirrored) -> bytes:
    return await own_through(mirrored.mirror, mirrored.holder)


async def new_share(mirrored: Mirrored, pepper: bytes) -> str:
    async with mirrored.database.sessionmaker.begin() as session:
        created = await service.create_share(
            session, caller_of(mirrored.holder), ttl_days=30, pepper=pepper, now=utcnow()
        )
    return created.token


async def verify(mirrored: Mirrored, token: str, pepper: bytes, keys: SigningKeys) -> bytes:
    return await verify_through(mirrored.mirror, mirrored.engine, mirrored.business, token, pepper, keys)


@pytest.fixture
def keys(tmp_path: Path) -> SigningKeys:
    return SigningKeys(tmp_path / "keys", generate=True)


async def test_a_second_read_is_answered_from_memory_with_the_same_rows(mirrored: Mirrored) -> None:
    await listening(mirrored.mirror)
    first = await own(mirrored)
    memory, database = reads_from("memory"), reads_from("database")
    assert await own(mirrored) == first
    assert (reads_from("memory"), reads_from("database")) == (memory + 1, database)


async def test_until_it_listens_every_read_goes_to_the_database(mirrored: Mirrored) -> None:
    unreachable = "postgresql://postgres@127.0.0.1:9/nowhere"  # the listener never connects; the reads do
    mirror = MirroredReader(PostgresReader(mirrored.engine, mirrored.dsn, 1), unreachable, retry_seconds=60)
    caller = caller_of(mirrored.holder)
    try:
        database = reads_from("database")
        for _ in range(3):
            views.own_passport_body(
                await service.own_passport_rows(mirror, caller), packaged_catalogue(), utcnow().date(), LatestCache()
            )
        assert reads_from("database") == database + 3
        assert not mirror.listening
    finally:
        await mirror.close()


async def test_a_change_committed_in_this_process_is_seen_before_its_commit_returns(
    mirrored: Mirrored, pepper: bytes, keys: SigningKeys
) -> None:
    await listening(mirrored.mirror)
    token = await new_share(mirrored, pepper)
    await verify(mirrored, token, pepper, keys)
    await verify(mirrored, token, pepper, keys)  # now from memory
    async with mirrored.database.sessionmaker.begin() as session:
        await service.revoke_share_by_token(session, token, pepper=pepper, now=utcnow())
    # no waiting for the notification: the commit hook forgot the rows
    with pytest.raises(ApiError) as refused:
        await verify(mirrored, token, pepper, keys)
    assert refused.value.code == "share_not_found"


async def test_a_change_committed_by_another_process_is_seen_once_announced(
    mirrored: Mirrored, pepper: bytes, keys: SigningKeys, var_dir: Path
) -> None:
    await listening(mirrored.mirror)
    token = await new_share(mirrored, pepper)
    await verify(mirrored, token, pepper, keys)
    changed = asyncio.ensure_future(mirrored.mirror.changed())
    env = os.environ | {
        "DATABASE_URL": mirrored.database.url,
        "REDIS_URL": "",
        "COMPLIANCE_SECRET_KEY": SECRET,
        "COMPLIANCE_VAR_DIR": str(var_dir),
    }
    command = [sys.executable, "-m", "compliance_api", "passport", "revoke-share", token]
    result = await asyncio.to_thread(
        subprocess.run, command, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    await asyncio.wait_for(changed, timeout=30)  # the trigger's NOTIFY, delivered at the CLI's commit
    with pytest.raises(ApiError) as refused:
        await verify(mirrored, token, pepper, keys)
    assert refused.value.code == "share_not_found"


async def test_a_deleted_account_takes_its_remembered_passport_along(mirrored: Mirrored) -> None:
    await listening(mirrored.mirror)
    await own(mirrored)
    async with mirrored.database.sessionmaker.begin() as session:
        await session.delete(await session.merge(mirrored.holder.user))
    with pytest.raises(ApiError) as refused:
        await own(mirrored)
    assert refused.value.code == "no_passport"


async def test_unknown_tokens_are_not_remembered(mirrored: Mirrored, pepper: bytes, keys: SigningKeys) -> None:
    await listening(mirrored.mirror)
    for _ in range(2):
        database = reads_from("database")
        with pytest.raises(ApiError):
            await verify(mirrored, "pst_" + uuid.uuid4().hex, pepper, keys)
        assert reads_from("database") == database + 1


async def test_while_the_listening_connection_is_down_reads_go_to_the_database(mirrored: Mirrored) -> None:
    await listening(mirrored.mirror)
    await own(mirrored)
    lost = asyncio.ensure_future(mirrored.mirror.changed())
    connection = await asyncpg.connect(mirrored.dsn)
    try:
        terminated = await connection.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1 "
            "AND datname = current_database()",
            LISTENER_NAME,
        )
    finally:
        await connection.close()
    assert terminated >= 1
    await asyncio.wait_for(lost, timeout=30)
    if not mirrored.mirror.listening:  # not yet back: what it would have missed, it reads
        database = reads_from("database")
        await own(mirrored)
        assert reads_from("database") == database + 1
    await listening(mirrored.mirror)  # back after the retry delay
    await own(mirrored)
    memory = reads_from("memory")
    await own(mirrored)
    assert reads_from("memory") == memory + 1


async def test_a_read_under_way_during_a_change_is_not_remembered(mirrored: Mirrored) -> None:
    await listening(mirrored.mirror)
    pending = asyncio.ensure_future(own(mirrored))
    await asyncio.sleep(0)  # one turn of the loop: the read has begun and waits for its answer
    mirrored.mirror.invalidate()
    await pending
    database = reads_from("database")
    await own(mirrored)
    assert reads_from("database") == database + 1, "the read that overlapped the change was not kept"


def test_the_app_keeps_a_copy_on_either_database_unless_turned_off(engine: AsyncEngine) -> None:
    expected = MirroredReader if make_url(str(engine.url)).get_backend_name() == "postgresql" else CountedReader
    assert isinstance(new_hot_path(engine).reader, expected)
    assert not isinstance(new_hot_path(engine, mirror=False).reader, MirroredReader | CountedReader)


@dataclass(frozen=True, slots=True)
class Counted:
    """A counted copy over a SQLite database file, with a freelancer's passport and a business to verify it."""

    reader: CountedReader
    url: str
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    holder: Account
    business: Account


@pytest.fixture(scope="module")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file, migrated once for the module and copied by each test."""
    path = tmp_path_factory.mktemp("migrated") / "counted.sqlite3"

    async def migrate() -> None:
        engine = create_engine(f"sqlite+aiosqlite:///{path}")
        await upgrade(engine)
        await engine.dispose()

    asyncio.run(migrate())
    return path


@pytest.fixture
async def counted(tmp_path: Path, migrated_sqlite: Path, pepper: bytes) -> AsyncIterator[Counted]:
    """On both CI runs a SQLite file of its own (the PostgreSQL run has none)."""
    path = tmp_path / "counted.sqlite3"
    shutil.copyfile(migrated_sqlite, path)
    url = f"sqlite+aiosqlite:///{path}"
    engine = create_engine(url)
    maker = create_sessionmaker(engine)
    reader = reader_for(engine)
    assert isinstance(reader, SqliteReader)
    holder, business = await make_account(maker, pepper), await make_account(maker, pepper)
    await give_passport(maker, holder.user)
    try:
        yield Counted(CountedReader(reader), url, engine, maker, holder, business)
    finally:
        await engine.dispose()


async def own_counted(counted: Counted) -> bytes:
    return await own_through(counted.reader, counted.holder)


async def verify_counted(counted: Counted, token: str, pepper: bytes, keys: SigningKeys) -> bytes:
    return await verify_through(counted.reader, counted.engine, counted.business, token, pepper, keys)


async def test_sqlite_a_second_read_is_answered_from_memory(counted: Counted) -> None:
    first = await own_counted(counted)
    memory = reads_from("memory")
    assert await own_counted(counted) == first
    assert reads_from("memory") == memory + 1


async def test_sqlite_recorded_verifications_do_not_count_as_changes(
    counted: Counted, pepper: bytes, keys: SigningKeys
) -> None:
    async with counted.sessionmaker.begin() as session:
        token = (
            await service.create_share(session, caller_of(counted.holder), ttl_days=30, pepper=pepper, now=utcnow())
        ).token
    await verify_counted(counted, token, pepper, keys)
    memory = reads_from("memory")
    await verify_counted(counted, token, pepper, keys)
    await verify_counted(counted, token, pepper, keys)
    assert reads_from("memory") == memory + 2, "a view row is written on every call; the copy outlives it"


async def test_sqlite_a_change_by_another_process_is_seen_at_the_next_call(
    counted: Counted, pepper: bytes, keys: SigningKeys, var_dir: Path
) -> None:
    async with counted.sessionmaker.begin() as session:
        token = (
            await service.create_share(session, caller_of(counted.holder), ttl_days=30, pepper=pepper, now=utcnow())
        ).token
    await verify_counted(counted, token, pepper, keys)
    await verify_counted(counted, token, pepper, keys)  # from memory
    env = os.environ | {
        "DATABASE_URL": counted.url,
        "REDIS_URL": "",
        "COMPLIANCE_SECRET_KEY": SECRET,
        "COMPLIANCE_VAR_DIR": str(var_dir),
    }
    command = [sys.executable, "-m", "compliance_api", "passport", "revoke-share", token]
    result = await asyncio.to_thread(
        subprocess.run, command, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    with pytest.raises(ApiError) as refused:  # no waiting: the trigger counted the change in the CLI's commit
        await verify_counted(counted, token, pepper, keys)
    assert refused.value.code == "share_not_found"


async def test_sqlite_a_deleted_account_takes_its_remembered_passport_along(counted: Counted) -> None:
    await own_counted(counted)
    await own_counted(counted)
    async with counted.sessionmaker.begin() as session:
        await session.delete(await session.merge(counted.holder.user))
    with pytest.raises(ApiError) as refused:
        await own_counted(counted)
    assert refused.value.code == "no_passport"


async def test_sqlite_a_new_verification_is_seen_at_the_next_call(counted: Counted) -> None:
    before = await own_counted(counted)
    await give_passport(counted.sessionmaker, counted.holder.user, checks={"vat_number": None})
    after = await own_counted(counted)
    assert b'"vat_number"' not in before
    assert b'"vat_number"' in after


class VersionsCounted(SqliteReader):
    """The SQLite reader, counting its reads of `passport_change.version`."""

    reads = 0

    def version(self) -> int | None:
        self.reads += 1
        return super().version()


async def test_sqlite_the_calls_of_one_loop_pass_read_the_change_counter_once(counted: Counted) -> None:
    """The check for another connection's commit is a synchronous read on the event loop: the calls answered in one
    pass of the loop share one reading, and the next pass reads it again."""
    path = sqlite_file(counted.engine.url)
    assert path is not None
    source = VersionsCounted(path, counted.engine.dialect)
    reader = CountedReader(source)
    first = await own_through(reader, counted.holder)
    assert await own_through(reader, counted.holder) == first
    assert source.reads == 1
    await asyncio.sleep(0)  # the rest of this pass of the loop
    await own_through(reader, counted.holder)
    assert source.reads == 2
