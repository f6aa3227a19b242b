"""Claims: a claimed delivery is leased (not claimed again until the lease ends), and concurrent claimers on
PostgreSQL get disjoint rows (`FOR UPDATE SKIP LOCKED`); SQLite serialises writers, so there they claim in turn."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.webhooks import service, ssrf
from compliance_api.webhooks.delivery import Job, claim
from compliance_api.webhooks.signing import SecretBox
from tests.factories import create_user

COUNT = 10


async def _pending(settings: Settings, sessionmaker: async_sessionmaker[AsyncSession], box: SecretBox) -> None:
    user = await create_user(sessionmaker)
    owner = service.EndpointOwner(user.id, Environment.live)
    async with sessionmaker.begin() as session:
        row, _ = await service.create(
            session,
            owner,
            url="https://hooks.example.com/x",
            enabled_events=["*"],
            description="",
            enabled=True,
            policy=ssrf.policy_for(settings, Environment.live),
            box=box,
            now=utcnow(),
        )
        for _ in range(COUNT):
            await service.send_test(session, owner, row.id, now=utcnow())


async def _claim(
    sessionmaker: async_sessionmaker[AsyncSession], box: SecretBox, claimed: asyncio.Event, hold: asyncio.Event
) -> list[Job]:
    async with sessionmaker.begin() as session:
        jobs = await claim(session, batch=COUNT // 2, now=utcnow(), box=box)
        claimed.set()
        await hold.wait()  # keep the transaction (and its row locks) open until both have claimed
        return jobs


async def test_concurrent_claims_are_disjoint_and_leased(
    settings: Settings, engine: AsyncEngine, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    box = SecretBox(settings.secret_key_bytes())
    await _pending(settings, sessionmaker, box)
    hold, claims = asyncio.Event(), [asyncio.Event(), asyncio.Event()]
    if engine.dialect.name == "postgresql":  # both transactions open at once: the second skips the first's rows
        tasks = [asyncio.create_task(_claim(sessionmaker, box, claimed, hold)) for claimed in claims]
        await asyncio.gather(*(claimed.wait() for claimed in claims))
        hold.set()
        one, two = [await task for task in tasks]
    else:  # one writer at a time
        hold.set()
        one = await _claim(sessionmaker, box, claims[0], hold)
        two = await _claim(sessionmaker, box, claims[1], hold)
    ids_one, ids_two = {j.delivery_id for j in one}, {j.delivery_id for j in two}
    assert len(ids_one) == len(ids_two) == COUNT // 2
    assert not ids_one & ids_two
    async with sessionmaker.begin() as session:
        assert await claim(session, batch=COUNT, now=utcnow(), box=box) == [], "all leased"
    async with sessionmaker.begin() as session:
        later = utcnow() + timedelta(seconds=61)
        again = await claim(session, batch=COUNT, now=later, box=box)
    assert len(again) == COUNT, "a dead claimer's rows come back when the lease ends"
