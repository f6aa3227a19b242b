"""`Worker.run`: a receiver that hangs holds one sender; deliveries to other endpoints go on meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.requests import Request
from starlette.responses import Response

from compliance_api.config import Settings
from compliance_api.webhooks.signing import SecretBox
from compliance_api.webhooks.worker import Worker
from tests.webhooks.conftest import MakeAccount
from tests.webhooks.receiver import Receiver, receiving


@dataclass
class Hanging(Receiver):
    """`/hook/slow` answers only once `release` is set; every other path at once."""

    release: asyncio.Event = field(default_factory=asyncio.Event)
    fast: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, request: Request) -> Response:
        if request.url.path.endswith("/slow"):
            await self.release.wait()
        else:
            self.fast.set()
        return Response(status_code=204)


@pytest.fixture
async def hanging() -> AsyncIterator[Hanging]:
    async with receiving(Hanging) as box:
        yield box


async def test_a_hanging_receiver_does_not_hold_up_other_endpoints(
    client: AsyncClient,
    make_account: MakeAccount,
    hanging: Hanging,
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    anna = await make_account()
    paths = []
    for suffix in ("/slow", "/fast"):
        made = await client.post(
            "/v1/webhook-endpoints", json={"url": hanging.url + suffix, "enabled_events": ["*"]}, headers=anna.live
        )
        paths.append(f"/v1/webhook-endpoints/{made.json()['id']}")
    await client.post(f"{paths[0]}/test", headers=anna.live)  # the slow one first
    tuned = settings.model_copy(update={"webhooks_concurrency": 2, "webhooks_poll_seconds": 0.05})
    worker = Worker(tuned, sessionmaker, SecretBox(tuned.secret_key_bytes()))
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    await client.post(f"{paths[1]}/test", headers=anna.live)
    await asyncio.wait_for(hanging.fast.wait(), 10)
    slow_log = (await client.get(f"{paths[0]}/deliveries", headers=anna.live)).json()["data"]
    assert slow_log[0]["attempts"] == 0, "still in flight"
    hanging.release.set()
    stop.set()
    await running
    await worker.close()
    slow_log = (await client.get(f"{paths[0]}/deliveries", headers=anna.live)).json()["data"]
    assert (slow_log[0]["status"], slow_log[0]["attempts"]) == ("succeeded", 1), "finished and recorded on stop"
