"""Test wiring: a real database (SQLite by default, PostgreSQL when DATABASE_URL is set), migrated once per run;
every test starts from empty tables. Redis is real too (REDIS_URL for the app, TEST_REDIS_URL for limiter tests).

Two ways to leave the tables empty, chosen by what the test asks for:

* Most tests, the app's HTTP tests among them, work on one connection inside a transaction that is rolled back at
  the end (`shared`, tests/shared_connection.py): the test's sessions, the app's sessions and the app's group commit
  are bound to it, and their commits only release savepoints.
* A test whose data must reach another connection (a CLI run, a server of its own, the group commit's real writer,
  the hot routes' readers, a second process) asks for `engine`, directly, through `cli_env` or `audit`, or by the
  mark `@commits`: it commits for real, and `engine` empties every table afterwards.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import pytest
from fastapi import APIRouter, FastAPI
from httpx import ASGITransport, AsyncClient
from redis import Redis as SyncRedis
from redis.asyncio import Redis as AsyncRedis
from redis.exceptions import RedisError
from sqlalchemy import event, make_url, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from compliance_api.app import build_services, create_app
from compliance_api.config import PasswordHashProfile, Settings
from compliance_api.db import asyncpg_dsn, create_engine, create_sessionmaker
from compliance_api.kit.batch_writer import batch_writer_for
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.kit.pagination import Cursors
from compliance_api.migrate import upgrade
from compliance_api.models import Base
from compliance_api.ratelimit.limiter import Limiter, MemoryLimiter, RedisLimiter
from compliance_api.services import Services
from compliance_api.sessions import OneConnectionPerTask
from tests.factories import bearer, create_token
from tests.proxy import TcpProxy, proxy_to
from tests.shared_connection import SharedConnection, shared_connection

SECRET = "test-secret-DEKbbbbnZERt0MmttxJ1U6LiQZDDm12E"  # generated, as an operator would
CURSORS = Cursors.from_secrets([SECRET.encode()])
"""Cursors as the test apps seal them, for tests calling list services directly."""
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
POSTGRES_SERVER = os.environ.get("TEST_POSTGRES_SERVER", "postgresql://postgres@127.0.0.1:5432")
TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL") or os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/15"


commits = pytest.mark.commits
"""For a test whose data must reach another connection (a server it starts itself, a second process, the hot routes'
readers): its sessions and its app commit for real, and `engine` empties the tables afterwards."""


def _commits(request: pytest.FixtureRequest) -> bool:
    """Whether the test commits for real: marked `@commits`, or using `engine` (directly or through a fixture)."""
    if "engine" in request.fixturenames or request.node.get_closest_marker("commits") is not None:
        request.getfixturevalue("engine")  # set up before the caller's fixture, so that it empties the tables last
        return True
    return False


def require_service(reachable: bool, what: str) -> None:
    """Outside CI a missing PostgreSQL/Redis skips the test; in CI it fails (no test is skipped in CI)."""
    if reachable:
        return
    if IN_CI:
        pytest.fail(f"{what} is not reachable, and CI must run every test")
    pytest.skip(f"{what} is not reachable on this machine")


def require_program(path: str, how_to_get_it: str) -> None:
    """Outside CI a test needing a program the machine lacks skips, saying how to get it; in CI it fails."""
    if Path(path).exists():
        return
    if IN_CI:
        pytest.fail(f"{path} is missing, and CI must run every test: {how_to_get_it}")
    pytest.skip(f"{path} is missing on this machine: {how_to_get_it}")


def _redis_reachable(url: str) -> bool:
    client = SyncRedis.from_url(url, socket_connect_timeout=1)
    try:
        return bool(client.ping())
    except RedisError:
        return False
    finally:
        client.close()


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """SQLite in the run's temporary folder, or DATABASE_URL; under pytest-xdist each worker gets a PostgreSQL
    database of its own beside it (`test_gw0`, …), made when missing."""
    url = os.environ.get("DATABASE_URL") or f"sqlite:///{tmp_path_factory.mktemp('db') / 'test.db'}"
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker and make_url(url).get_backend_name() == "postgresql":
        url = asyncio.run(_worker_database(url, worker))
    asyncio.run(_fresh_schema(url))
    return url


async def _worker_database(url: str, worker: str) -> str:
    target = make_url(url)
    name = f"{target.database}_{worker}"
    admin = await asyncpg.connect(target.set(drivername="postgresql", database="postgres").render_as_string(False))
    try:
        if not await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name):
            await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    return target.set(database=name).render_as_string(hide_password=False)


@contextmanager
def private_database(suite_url: str, folder: Path) -> Iterator[str]:
    """A migrated database of its own, of the suite's kind (a SQLite file in `folder`, or a PostgreSQL database beside
    the suite's), dropped afterwards. For a server that lives across a module's tests: it writes in the background
    (the request log, after each answer) while the worker runs other modules' tests, which must find the suite's
    database as they left it."""
    target = make_url(suite_url)
    if target.get_backend_name() != "postgresql":
        url = f"sqlite:///{folder / 'private.db'}"
        asyncio.run(_fresh_schema(url))
        yield url
        return
    name = f"{target.database}_private_{uuid.uuid4().hex[:8]}"
    admin = target.set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)
    asyncio.run(_admin(admin, f'CREATE DATABASE "{name}"'))
    try:
        url = target.set(database=name).render_as_string(hide_password=False)
        asyncio.run(_fresh_schema(url))
        yield url
    finally:
        asyncio.run(_admin(admin, f'DROP DATABASE "{name}" WITH (FORCE)'))


def database_of_the_module(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """For a module whose servers outlive each test: `database_url = pytest.fixture(scope="module",
    name="database_url")(database_of_the_module)` gives it a database of its own (see `private_database`)."""
    with private_database(database_url, tmp_path_factory.mktemp("db")) as url:
        yield url


async def _admin(url: str, statement: str) -> None:
    connection = await asyncpg.connect(url)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


async def _fresh_schema(url: str) -> None:
    engine = create_engine(Settings(database_url=url).resolved_database_url)
    if engine.dialect.name == "postgresql":
        async with engine.begin() as connection:
            await connection.execute(text("DROP SCHEMA public CASCADE"))
            await connection.execute(text("CREATE SCHEMA public"))
    await upgrade(engine)
    await engine.dispose()


@pytest.fixture
def var_dir(tmp_path: Path) -> Path:
    return tmp_path / "var"


@pytest.fixture(scope="session")
def suite_settings() -> Settings:
    """The settings every test starts from, read once (reading the environment costs more than a copy)."""
    return Settings(
        redis_url=os.environ.get("REDIS_URL", ""),
        secret_key=SECRET,
        public_base_url="http://api.test",
        webhooks_embedded_worker=False,
        # argon2 at RFC 9106's 64 MiB and 3 passes takes 0.1 s a password, seconds per dashboard test file;
        # tests/dashboard/test_passwords.py checks the default parameters and the re-hash between profiles.
        password_hash_profile=PasswordHashProfile.cheapest,
    )


@pytest.fixture
def settings(suite_settings: Settings, database_url: str, var_dir: Path) -> Settings:
    """The suite's settings, on the test's database, with a folder of the test's own for keys and files."""
    return suite_settings.model_copy(update={"database_url": database_url, "var_dir": var_dir})


@pytest.fixture
def cli_env(database_url: str, var_dir: Path, engine: object) -> dict[str, str]:
    """The environment a CLI run needs for the test database (the `engine` fixture empties it afterwards)."""
    return {
        "DATABASE_URL": database_url,
        "REDIS_URL": "",
        "COMPLIANCE_SECRET_KEY": SECRET,
        "COMPLIANCE_VAR_DIR": str(var_dir),
        "COMPLIANCE_PASSWORD_HASH_PROFILE": PasswordHashProfile.cheapest.value,
    }


@pytest.fixture(autouse=True)
def _serve_defaults_stay_in_their_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """`serve` puts the embedded-worker default into os.environ (its workers read it); CLI tests run `serve`
    in-process, so whatever it set is removed after each test (set-then-delete makes monkeypatch restore absence)."""
    monkeypatch.setenv("COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER", "unset")
    monkeypatch.delenv("COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER")


@pytest.fixture(autouse=True)
def _marked_commits_use_engine(request: pytest.FixtureRequest) -> None:
    """A test marked `@commits` gets `engine` (which empties the tables after it) even if nothing else asks for it."""
    if request.node.get_closest_marker("commits") is not None:
        request.getfixturevalue("engine")


@pytest.fixture
async def engine(settings: Settings) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(settings.resolved_database_url)
    yield engine
    await _empty_tables(engine)
    await engine.dispose()


@pytest.fixture
async def audit(engine: AsyncEngine) -> AsyncIterator[GroupCommit]:
    """The audit trail's group commit, with the app's writer for this database."""
    writer = GroupCommit(batch_writer_for(engine))
    yield writer
    await writer.close()


@pytest.fixture
def sessionmaker(request: pytest.FixtureRequest) -> async_sessionmaker[AsyncSession]:
    """Sessions that commit for real when the test uses `engine` (its commits must reach other connections), else
    sessions inside a transaction rolled back after the test."""
    if _commits(request):
        engine: AsyncEngine = request.getfixturevalue("engine")
        return create_sessionmaker(engine)
    rolled_back: async_sessionmaker[AsyncSession] = request.getfixturevalue("rolled_back_sessionmaker")
    return rolled_back


@pytest.fixture
async def shared(settings: Settings) -> AsyncIterator[SharedConnection]:
    """The test's one connection, inside a transaction rolled back after the test (tests/shared_connection.py)."""
    engine = create_engine(settings.resolved_database_url)
    if engine.dialect.name == "sqlite":
        _begin_explicitly(engine)
    if await _rows_left_in(engine):  # an earlier committing test's background writer outlived its cleanup
        await _empty_tables(engine)
    async with shared_connection(engine) as connection:
        yield connection
    left = await _rows_left_in(engine)
    if left:
        await _empty_tables(engine)
    await engine.dispose()
    if connection.turns.waited_too_long:
        pytest.fail(connection.turns.waited_too_long[0])
    if left:
        pytest.fail(
            f"this test committed rows through another connection ({', '.join(left)}), so its transaction could not "
            "undo them: mark it `@commits` (tests/conftest.py) so that it commits for real and is cleaned up"
        )


@pytest.fixture
def rolled_back_sessionmaker(shared: SharedConnection) -> async_sessionmaker[AsyncSession]:
    """Sessions on the test's connection: a session's commit releases a savepoint, so later sessions of the test (and
    the app's) see it, and nothing outlives the test."""
    return shared.sessionmaker()


async def _rows_left(connection: AsyncConnection) -> list[str]:
    """The tables holding rows, read in one statement (a guard that every rolled-back test left nothing behind)."""
    tables = Base.metadata.sorted_tables
    counts = " UNION ALL ".join(f"SELECT '{table.name}', count(*) FROM {table.name}" for table in tables)
    return [name for name, count in await connection.execute(text(counts)) if count]


async def _rows_left_in(engine: AsyncEngine) -> list[str]:
    async with engine.connect() as connection:
        return await _rows_left(connection)


async def _empty_tables(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        for table in reversed(Base.metadata.sorted_tables):
            await connection.execute(table.delete())


def _begin_explicitly(engine: AsyncEngine) -> None:
    """SQLite's driver begins transactions lazily, so the first savepoint would open (and its release commit) the
    outer transaction: begin it explicitly instead (SQLAlchemy's documented pysqlite recipe)."""

    @event.listens_for(engine.sync_engine, "connect")
    def _autocommit_driver(dbapi_connection: Any, _record: object) -> None:
        dbapi_connection.isolation_level = None

    @event.listens_for(engine.sync_engine, "begin")
    def _begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN")


@contextmanager
def executed_statements(engine: AsyncEngine, containing: str = "") -> Iterator[list[str]]:
    """The SQL statements (those with `containing` in them) run meanwhile by any engine in this process: the app
    owns its engine, and listening on the engine class catches it too."""
    statements: list[str] = []

    def record(_connection: object, _cursor: object, statement: str, *_: object) -> None:
        if containing in statement:
            statements.append(statement)

    event.listen(type(engine.sync_engine), "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(type(engine.sync_engine), "before_cursor_execute", record)


@asynccontextmanager
async def running_app(
    settings: Settings, *extra_routers: APIRouter, services: Services | None = None
) -> AsyncIterator[FastAPI]:
    """The application (on `services`, if given), with test-only routes added, between its start-up and its
    shutdown."""
    application = create_app(settings, services=services)
    for router in extra_routers:
        application.include_router(router)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
def app_services(request: pytest.FixtureRequest, settings: Settings) -> Services | None:
    """The `app`'s collaborators: bound to the test's rolled-back connection, or None (the app's own engine,
    committing for real) when the test uses `engine` (`@commits`), which then empties the tables after the app
    stops."""
    if _commits(request):
        return None
    shared: SharedConnection = request.getfixturevalue("shared")
    return build_services(settings, sessionmaker=shared.sessionmaker(OneConnectionPerTask), audit=shared.group_commit())


@pytest.fixture
async def app(settings: Settings, app_services: Services | None) -> AsyncIterator[FastAPI]:
    """The app between its start-up and its shutdown."""
    async with running_app(settings, services=app_services) as application:
        yield application


@pytest.fixture(scope="session")
def contract(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The contract the app builds (`app.openapi()`, as frozen: no setting changes it), built once for the tests that
    only read it (building it takes 0.3 s). They never change it."""
    settings = Settings(database_url=database_url, secret_key=SECRET, var_dir=tmp_path_factory.mktemp("contract"))
    return create_app(settings).openapi()


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(transport=ASGITransport(app=app), base_url="http://api.test") as http:
        yield http


@pytest.fixture
async def sandbox_client(app: FastAPI) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(transport=ASGITransport(app=app), base_url="http://sandbox.localhost") as http:
        yield http


@pytest.fixture(scope="session")
def redis_url() -> str:
    require_service(_redis_reachable(TEST_REDIS_URL), f"Redis at {TEST_REDIS_URL}")
    return TEST_REDIS_URL


@pytest.fixture(params=["memory", "redis"])
async def limiter(request: pytest.FixtureRequest) -> AsyncIterator[Limiter]:
    """Each limiter backend in turn; the Redis one under a key prefix of its own."""
    if request.param == "memory":
        yield MemoryLimiter()
        return
    url = request.getfixturevalue("redis_url")
    redis_limiter = RedisLimiter(AsyncRedis.from_url(url), prefix=f"test:{uuid.uuid4()}:")
    yield redis_limiter
    await redis_limiter.close()


@dataclass(frozen=True, slots=True)
class ProxiedPostgres:
    """A migrated PostgreSQL database, reached directly (`sessionmaker`, for fixtures) and through `proxy` (`url`)."""

    proxy: TcpProxy
    url: str
    sessionmaker: async_sessionmaker[AsyncSession]


@pytest.fixture
async def proxied_postgres(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    engine: AsyncEngine,
    postgres_for_sqlite_run: str | None,
) -> AsyncIterator[ProxiedPostgres]:
    """PostgreSQL behind a proxy the test controls, in both CI runs: the suite's own database, or on the SQLite run
    the run's PostgreSQL database (`postgres_beside_sqlite`), emptied after the test (only PostgreSQL has a connection
    to lose)."""
    if postgres_for_sqlite_run is None:
        async with _proxied(settings.resolved_database_url, sessionmaker) as proxied:
            yield proxied
        return
    url = postgres_for_sqlite_run
    beside = create_engine(url)
    try:
        async with _proxied(url, create_sessionmaker(beside)) as proxied:
            yield proxied
    finally:
        await beside.dispose()
        await _admin(str(asyncpg_dsn(make_url(url))), ALONE_IN_THE_DATABASE)
        await _empty_tables(beside)
        await beside.dispose()


ALONE_IN_THE_DATABASE = (
    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
)
"""Ends every other connection to the database (what a test left open could hold locks the emptying waits for)."""


@pytest.fixture
def postgres_for_sqlite_run(request: pytest.FixtureRequest, settings: Settings) -> str | None:
    """`postgres_beside_sqlite` on the SQLite run (set up here, outside the event loop), None on the PostgreSQL run."""
    if make_url(settings.resolved_database_url).get_backend_name() == "postgresql":
        return None
    url: str = request.getfixturevalue("postgres_beside_sqlite")
    return url


@pytest.fixture(scope="session")
def postgres_beside_sqlite() -> Iterator[str]:
    """On the SQLite run, a migrated PostgreSQL database for `proxied_postgres`, made once for the run (migrating one
    per test took half a second) and dropped at its end."""
    name = f"outage_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = POSTGRES_SERVER + "/postgres"
    try:
        asyncio.run(_admin(admin, f'CREATE DATABASE "{name}"'))
    except OSError:
        require_service(False, "PostgreSQL at " + POSTGRES_SERVER)
    try:
        asyncio.run(_fresh_schema(f"{POSTGRES_SERVER}/{name}"))
        yield Settings(database_url=f"{POSTGRES_SERVER}/{name}").resolved_database_url
    finally:
        asyncio.run(_admin(admin, f'DROP DATABASE "{name}" WITH (FORCE)'))


@asynccontextmanager
async def _proxied(url: str, direct: async_sessionmaker[AsyncSession]) -> AsyncIterator[ProxiedPostgres]:
    target = make_url(url)
    with proxy_to(target.host or "127.0.0.1", target.port or 5432) as proxy:
        via_proxy = target.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
        yield ProxiedPostgres(proxy, via_proxy, direct)


@pytest.fixture
def pepper() -> bytes:
    return SECRET.encode()


@pytest.fixture
async def auth(sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes) -> dict[str, str]:
    """The bearer header of a live token of a new free-plan user."""
    _, token = await create_token(sessionmaker, pepper)
    return bearer(token)
