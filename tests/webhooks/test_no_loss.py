"""Nothing lost: 10,000 events, a worker killed with SIGKILL mid-run and restarted, every event delivered at least once.

On PostgreSQL two workers run side by side (SKIP LOCKED); SQLite allows one worker per database, so there the one
worker is killed and restarted. Receivers de-duplicate on `webhook-id`; the test counts distinct ids.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.requests import Request
from starlette.responses import Response

from compliance_api.config import Settings
from compliance_api.events import service as events
from compliance_api.events.types import EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.webhooks import service, ssrf
from compliance_api.webhooks.models import DeliveryStatus, WebhookDelivery
from compliance_api.webhooks.signing import SecretBox
from tests.conftest import SECRET, commits
from tests.factories import create_user
from tests.webhooks.receiver import Receiver, receiving

pytestmark = commits  # each test starts an app or server of its own on the test database

EVENTS = 10_000
KILL_AFTER = 2_000


@dataclass
class Counting(Receiver):
    """Counts distinct `webhook-id`s (keeping no bodies); `done` is set once every event has arrived."""

    ids: set[str] = field(default_factory=set)
    killable: asyncio.Event = field(default_factory=asyncio.Event)
    done: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, request: Request) -> Response:
        self.ids.add(request.headers["webhook-id"])
        if len(self.ids) >= KILL_AFTER:
            self.killable.set()
        if len(self.ids) >= EVENTS:
            self.done.set()
        return Response(status_code=204)


@pytest.fixture
async def counting() -> AsyncIterator[Counting]:
    async with receiving(Counting) as box:
        yield box


async def _worker(settings: Settings, var_dir: Path) -> asyncio.subprocess.Process:
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "COMPLIANCE_SECRET_KEY": SECRET,
        "COMPLIANCE_VAR_DIR": str(var_dir),
        "COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true",
        "COMPLIANCE_WEBHOOKS_LEASE_SECONDS": "3",
        "COMPLIANCE_WEBHOOKS_POLL_SECONDS": "0.05",
    }
    return await asyncio.create_subprocess_exec(sys.executable, "-m", "compliance_api", "worker", env=env)


@pytest.mark.timeout(300)
async def test_a_killed_worker_loses_nothing(
    settings: Settings, var_dir: Path, sessionmaker: async_sessionmaker[AsyncSession], counting: Counting
) -> None:
    user = await create_user(sessionmaker)
    async with sessionmaker.begin() as session:
        await service.create(
            session,
            service.EndpointOwner(user.id, Environment.live),
            url=counting.url,
            enabled_events=["wtta.admission.updated"],
            description="no-loss",
            enabled=True,
            policy=ssrf.policy_for(settings, Environment.live),
            box=SecretBox(settings.secret_key_bytes()),
            now=utcnow(),
        )
    async with sessionmaker.begin() as session:
        await events.emit_many(
            session,
            environment=Environment.live,
            events=[
                events.NewEvent(EventName.WTTA_ADMISSION_UPDATED, {"kvk_number": f"{n:08d}"}) for n in range(EVENTS)
            ],
        )
    count = 1 if settings.is_sqlite else 2
    workers = [await _worker(settings, var_dir) for _ in range(count)]
    try:
        await asyncio.wait_for(counting.killable.wait(), 120)
        workers[0].send_signal(signal.SIGKILL)
        await workers[0].wait()
        workers[0] = await _worker(settings, var_dir)
        await asyncio.wait_for(counting.done.wait(), 240)
    finally:
        for process in workers:
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
                await process.wait()
    assert len(counting.ids) == EVENTS, "0 lost"
    async with sessionmaker() as session:
        total = await session.scalar(select(func.count()).select_from(WebhookDelivery))
        failed = await session.scalar(
            select(func.count()).select_from(WebhookDelivery).where(WebhookDelivery.status == DeliveryStatus.failed)
        )
    assert (total, failed) == (EVENTS, 0), "one delivery per event, none given up"
