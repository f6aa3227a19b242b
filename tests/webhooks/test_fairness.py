"""Fair delivery: one account's backlog to a slow endpoint does not hold up another account's deliveries.

The slow endpoint answers only once the test releases it (a receiver that never answers in time is the worst case of
a slow one), so nothing here depends on how fast the machine is: while account A's replayed backlog is still
pending, account B's test event must arrive within the deadline. `bench/replay_fairness.py` measures the same with
5,000 events and an endpoint that answers after 2 s.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.requests import Request
from starlette.responses import Response

from compliance_api.config import Settings
from compliance_api.events import service as events
from compliance_api.events.types import EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.webhooks.signing import SecretBox
from compliance_api.webhooks.worker import Worker
from tests.webhooks.conftest import Account, MakeAccount
from tests.webhooks.receiver import Receiver, receiving

Maker = async_sessionmaker[AsyncSession]

BACKLOG = 300
"""Account A's replayed events; the bench replays 5,000 (this only has to exceed what the worker can hold)."""
DEADLINE = 5.0


@dataclass
class SlowAndFast(Receiver):
    """`/hook/slow` answers once `release` is set; `/hook/fast` at once, recording the `webhook-id`s."""

    release: asyncio.Event = field(default_factory=asyncio.Event)
    slow_arrived: asyncio.Event = field(default_factory=asyncio.Event)
    fast_ids: list[str] = field(default_factory=list)
    fast_arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, request: Request) -> Response:
        if request.url.path.endswith("/slow"):
            self.slow_arrived.set()
            await self.release.wait()
        else:
            self.fast_ids.append(request.headers["webhook-id"])
            self.fast_arrived.set()
        return Response(status_code=204)


@pytest.fixture
async def slow_and_fast() -> AsyncIterator[SlowAndFast]:
    async with receiving(SlowAndFast) as box:
        yield box
        box.release.set()


async def _endpoint(client: AsyncClient, account: Account, url: str, types: list[str]) -> str:
    made = await client.post("/v1/webhook-endpoints", json={"url": url, "enabled_events": types}, headers=account.live)
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


async def _backlog(sessionmaker: Maker, account: Account, count: int) -> None:
    """`count` of the account's events, handed on before it had an endpoint (so a replay sends them all)."""
    owner = str(account.user.id)
    async with sessionmaker.begin() as session:
        await events.emit_many(
            session,
            environment=Environment.live,
            events=[
                events.NewEvent(EventName.PASSPORT_UPDATED, {"freelancer_id": owner, "change": "sector", "n": n})
                for n in range(count)
            ],
            at=utcnow() - dt.timedelta(minutes=5),
        )


async def _send_berts(kind: str, client: AsyncClient, sessionmaker: Maker, bert: Account, endpoint: str) -> str:
    """Bert's test event, or an event of his that the worker dispatches; its id."""
    if kind == "test event":
        test = await client.post(f"/v1/webhook-endpoints/{endpoint}/test", headers=bert.live)
        return str(test.json()["event_id"])
    async with sessionmaker.begin() as session:
        payload = {"freelancer_id": str(bert.user.id), "change": "sector"}
        return str(
            await events.emit(session, environment=Environment.live, type=EventName.PASSPORT_UPDATED, payload=payload)
        )


@pytest.mark.parametrize("kind", ["test event", "event"])
async def test_another_accounts_replay_to_a_slow_endpoint_does_not_hold_up_a_delivery(
    client: AsyncClient,
    make_account: MakeAccount,
    slow_and_fast: SlowAndFast,
    settings: Settings,
    sessionmaker: Maker,
    kind: str,
) -> None:
    anna, bert = await make_account(), await make_account()
    await _backlog(sessionmaker, anna, BACKLOG)
    slow = await _endpoint(client, anna, slow_and_fast.url + "/slow", ["passport.updated"])
    fast = await _endpoint(client, bert, slow_and_fast.url + "/fast", ["passport.updated"])
    since = (utcnow() - dt.timedelta(hours=1)).isoformat()
    replay = await client.post(f"/v1/webhook-endpoints/{slow}/replay", json={"since": since}, headers=anna.live)
    assert replay.json()["replayed"] == BACKLOG
    tuned = settings.model_copy(update={"webhooks_poll_seconds": 0.05})
    worker = Worker(tuned, sessionmaker, SecretBox(tuned.secret_key_bytes()))
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:
        await asyncio.wait_for(slow_and_fast.slow_arrived.wait(), DEADLINE)  # busy with anna's backlog
        berts = await _send_berts(kind, client, sessionmaker, bert, fast)
        await asyncio.wait_for(slow_and_fast.fast_arrived.wait(), DEADLINE)
        assert slow_and_fast.fast_ids == [berts]
        pending = await client.get(f"/v1/webhook-endpoints/{slow}/deliveries", headers=anna.live)
        assert {d["status"] for d in pending.json()["data"]} == {"pending"}, "anna's backlog is still waiting"
    finally:
        slow_and_fast.release.set()
        stop.set()
        await running
        await worker.close()
