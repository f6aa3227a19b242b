"""A queued test event wakes the worker at once instead of waiting for its next poll: in the same process (the
embedded worker) through the commit hook, in another process through PostgreSQL's NOTIFY.

Both workers poll once a minute here, so a claim or a delivery within the deadline can only come from the wake-up.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]
from httpx import AsyncClient
from sqlalchemy import make_url
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.db import asyncpg_dsn
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.webhooks import service
from compliance_api.webhooks.signing import SecretBox
from compliance_api.webhooks.wake import waking
from compliance_api.webhooks.worker import LISTENER_NAME, Worker, _Pipeline
from tests.conftest import CURSORS, SECRET, ProxiedPostgres
from tests.factories import create_user, create_webhook_endpoint
from tests.webhooks.conftest import MakeAccount
from tests.webhooks.receiver import Receiver

DEADLINE = 10.0
POLL_SECONDS = "60"


async def test_a_test_event_queued_in_this_process_wakes_its_worker(
    client: AsyncClient,
    make_account: MakeAccount,
    receiver: Receiver,
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    anna = await make_account()
    made = await client.post(
        "/v1/webhook-endpoints", json={"url": receiver.url, "enabled_events": ["*"]}, headers=anna.live
    )
    slow_poll = settings.model_copy(update={"webhooks_poll_seconds": float(POLL_SECONDS)})
    worker = Worker(slow_poll, sessionmaker, SecretBox(settings.secret_key_bytes()))
    feeder = _Pipeline(worker, asyncio.Event())
    try:
        with waking(feeder.wake):
            assert await feeder.feed_once() == float(POLL_SECONDS), "nothing due: the feeder would wait a minute"
            await client.get("/v1/webhook-endpoints", headers=anna.live)
            await client.post("/v1/webhook-endpoints/not-an-id/test", headers=anna.live)
            assert not feeder.wake.is_set(), "a request that queued nothing wakes nobody"
            test = await client.post(f"/v1/webhook-endpoints/{made.json()['id']}/test", headers=anna.live)
            await asyncio.wait_for(feeder.wake.wait(), DEADLINE)
            assert await feeder.feed_once() == 0.0
        taken = feeder.queue.take()
        assert taken is not None
        _, (_, job) = taken
        assert str(job.event_id) == test.json()["event_id"]
    finally:
        await worker.close()


async def _listening(dsn: str) -> None:
    """Until a worker's LISTEN connection is open (asyncpg names it after the follower)."""
    connection = await asyncpg.connect(dsn)
    try:
        query = "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'"
        while True:
            if await connection.fetchval(query, LISTENER_NAME):
                return
            await asyncio.sleep(0.05)  # another process's state: nothing to await but the next look
    finally:
        await connection.close()


async def _recorded(maker: async_sessionmaker[AsyncSession], owner: service.EndpointOwner, endpoint: uuid.UUID) -> None:
    """Until every delivery to the endpoint has been recorded."""
    while True:
        async with maker() as session:
            page = await service.list_deliveries(session, owner, endpoint, limit=10, cursors=CURSORS)
        if all(delivery.attempts for delivery in page.rows):
            return
        await asyncio.sleep(0.05)


async def test_a_worker_in_another_process_hears_of_a_queued_test_event_through_notify(
    proxied_postgres: ProxiedPostgres, receiver: Receiver, settings: Settings, var_dir: Path
) -> None:
    maker = proxied_postgres.sessionmaker
    owner = service.EndpointOwner((await create_user(maker)).id, Environment.live)
    endpoint = await create_webhook_endpoint(maker, settings, owner, receiver.url)
    env = os.environ | {
        "DATABASE_URL": proxied_postgres.url,
        "REDIS_URL": "",
        "COMPLIANCE_SECRET_KEY": SECRET,
        "COMPLIANCE_VAR_DIR": str(var_dir),
        "COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true",
        "COMPLIANCE_WEBHOOKS_POLL_SECONDS": POLL_SECONDS,
    }
    async with maker.begin() as session:
        primer = await service.send_test(session, owner, endpoint, now=utcnow())
    worker = await asyncio.create_subprocess_exec(sys.executable, "-m", "compliance_api", "worker", env=env)
    try:
        dsn = asyncpg_dsn(make_url(proxied_postgres.url))
        assert dsn is not None
        await asyncio.wait_for(_listening(dsn), 60)
        await asyncio.wait_for(receiver.arrived.wait(), 60)  # the worker's first claims are done: it polls in a minute
        await asyncio.wait_for(_recorded(maker, owner, endpoint), 60)
        receiver.arrived.clear()
        async with maker.begin() as session:
            delivery = await service.send_test(session, owner, endpoint, now=utcnow())
        await asyncio.wait_for(receiver.arrived.wait(), DEADLINE)
        ids = [r.headers["webhook-id"] for r in receiver.received]
        assert ids == [str(primer.event_id), str(delivery.event_id)]
    finally:
        worker.terminate()
        await worker.wait()
