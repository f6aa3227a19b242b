"""The asyncpg pools during a PostgreSQL outage (the proxy in front of it closed): asyncpg's "Failed to restore the
pool connection floor" tracebacks, every few seconds per pool, become one line when the outage starts and one when
a connection opens again."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import asyncpg  # type: ignore[import-untyped]
import pytest
from sqlalchemy import make_url
from structlog.testing import capture_logs

from compliance_api.db import asyncpg_dsn
from compliance_api.kit.asyncpg_pool import FLOOR_FAILED, FLOOR_FAILURES, LazyPool
from tests.conftest import ProxiedPostgres


@pytest.fixture
async def pool(proxied_postgres: ProxiedPostgres) -> AsyncIterator[LazyPool]:
    dsn = asyncpg_dsn(make_url(proxied_postgres.url))
    assert dsn is not None
    lazy = LazyPool(dsn, 2)
    yield lazy
    await lazy.close()


async def test_an_outage_is_one_line_when_it_starts_and_one_when_it_ends(
    pool: LazyPool, proxied_postgres: ProxiedPostgres, caplog: pytest.LogCaptureFixture
) -> None:
    assert await (await pool.get()).fetchval("SELECT 1") == 1
    caplog.set_level(logging.WARNING, logger="asyncpg")
    with capture_logs() as logs:
        proxied_postgres.proxy.close()
        with pytest.raises((OSError, asyncpg.PostgresConnectionError)):  # the connection cut, or a new one refused
            await (await pool.get()).fetchval("SELECT 1")
        async with asyncio.timeout(30):
            while FLOOR_FAILURES.dropped < 3:  # noqa: ASYNC110  (asyncpg's retries, after 1 s then 2 s, have no hook)
                await asyncio.sleep(0.05)
        proxied_postgres.proxy.reopen()
        assert await (await pool.get()).fetchval("SELECT 1") == 1
    assert [entry["event"] for entry in logs] == ["database_pool_unreachable", "database_pool_reachable_again"]
    assert logs[0]["error"].startswith(("ConnectionRefusedError", "OSError"))
    assert logs[1]["floor_failures"] >= 3
    assert not [record for record in caplog.records if record.getMessage().startswith(FLOOR_FAILED)]
