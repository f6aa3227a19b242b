"""The delivery worker while PostgreSQL is out of reach (the proxy in front of it closed): one log line when the
database goes and one when it is back, no traceback per attempt, and longer and longer waits in between."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from structlog.testing import capture_logs

from compliance_api.config import Settings
from compliance_api.db import create_engine, create_sessionmaker
from compliance_api.webhooks.signing import SecretBox
from compliance_api.webhooks.worker import Worker, _Pipeline
from tests.conftest import ProxiedPostgres


@pytest.fixture
async def proxied_worker(settings: Settings, proxied_postgres: ProxiedPostgres) -> AsyncIterator[Worker]:
    engine = create_engine(Settings(database_url=proxied_postgres.url).resolved_database_url)
    worker = Worker(settings, create_sessionmaker(engine), SecretBox(settings.secret_key_bytes()))
    yield worker
    await worker.close()
    await engine.dispose()


async def test_the_feeder_logs_an_outage_once_and_backs_off_exponentially(
    proxied_worker: Worker, proxied_postgres: ProxiedPostgres, settings: Settings
) -> None:
    pipeline = _Pipeline(proxied_worker, asyncio.Event())
    assert await pipeline.feed_once() == settings.webhooks_poll_seconds  # reachable, nothing due

    proxied_postgres.proxy.close()
    with capture_logs() as logs:
        waits = [await pipeline.feed_once() for _ in range(8)]
    assert waits == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert [(e["event"], e["log_level"], e["loop"]) for e in logs] == [
        ("database_unreachable", "warning", "webhook_worker")
    ]
    assert not any("exc_info" in e or "exception" in e for e in logs)

    proxied_postgres.proxy.reopen()
    with capture_logs() as logs:
        recovered = [await pipeline.feed_once() for _ in range(3)]
    assert recovered == [settings.webhooks_poll_seconds] * 3
    assert [(e["event"], e["failed_attempts"]) for e in logs] == [("database_reachable_again", 8)]
