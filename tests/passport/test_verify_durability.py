"""No answered verification is lost: a server killed with SIGKILL in the middle of a load of verifications has
recorded (view and `passport.share.viewed` event) every one it answered, since it answers only after the group
commit that holds the record."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import Plan
from compliance_api.events.models import OutboxEvent
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.passport import service
from compliance_api.passport import views as passport_views
from compliance_api.passport.models import PassportShareView
from tests.conftest import SECRET, commits
from tests.factories import bearer, create_token, create_user
from tests.passport.conftest import Account, give_passport
from tests.servers import _wait_until_live, free_port

pytestmark = commits  # each test starts an app or server of its own on the test database

REQUESTS = 400
IN_FLIGHT = 32
KILL_AFTER = 150  # answers; the rest are in flight or not yet sent when the server dies


def serve(database_url: str, var_dir: Path, port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": "",
        "COMPLIANCE_SECRET_KEY": SECRET,
        "COMPLIANCE_VAR_DIR": str(var_dir),
        "COMPLIANCE_ACCESS_LOG": "false",
        "COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER": "false",  # the outbox events stay for this test to count
    }
    command = [sys.executable, "-m", "uvicorn", "compliance_api.app:create_app", "--factory", "--port", str(port)]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


async def load_until_killed(
    base_url: str, token: str, verifier: dict[str, str], server: subprocess.Popen[bytes]
) -> int:
    """Verify `REQUESTS` times, `IN_FLIGHT` at once; SIGKILL the server after `KILL_AFTER` answers. Returns the
    number of 200 answers received."""
    answered = 0
    killed = asyncio.Event()
    queue = iter(range(REQUESTS))

    async def client(http: httpx.AsyncClient) -> None:
        nonlocal answered
        for _ in queue:
            if killed.is_set():
                return
            try:
                response = await http.get(f"/v1/passport/{token}/verify", headers=verifier)
            except httpx.TransportError:
                return
            if response.status_code == 200:
                answered += 1
            if answered >= KILL_AFTER and not killed.is_set():
                killed.set()
                server.send_signal(signal.SIGKILL)

    async with httpx.AsyncClient(base_url=base_url, timeout=30) as http:
        await asyncio.gather(*(client(http) for _ in range(IN_FLIGHT)))
    return answered


@pytest.mark.timeout(120)
async def test_every_answered_verification_survives_a_kill(
    database_url: str,
    var_dir: Path,
    sessionmaker: async_sessionmaker[AsyncSession],
    freelancer: Account,
    pepper: bytes,
) -> None:
    verifier = await create_user(sessionmaker, plan=Plan.internal)  # never rate limited
    _, verifier_token = await create_token(sessionmaker, pepper, user=verifier)
    await give_passport(sessionmaker, freelancer.user)
    async with sessionmaker.begin() as session:
        created = await service.create_share_for(
            session, freelancer.user, Environment.live, ttl_days=30, pepper=pepper, now=utcnow()
        )
    share = passport_views.share_created(created, utcnow())
    port = free_port()
    server = serve(database_url, var_dir, port)
    try:
        _wait_until_live(server, f"http://127.0.0.1:{port}")
        answered = await load_until_killed(f"http://127.0.0.1:{port}", share.token, bearer(verifier_token), server)
    finally:
        server.kill()
        server.wait()
    assert server.returncode == -signal.SIGKILL
    async with sessionmaker() as session:
        views = await session.scalar(
            select(func.count()).select_from(PassportShareView).where(PassportShareView.share_id == share.id)
        )
        viewed = await session.scalar(
            select(func.count()).select_from(OutboxEvent).where(OutboxEvent.type == "passport.share.viewed")
        )
    assert answered >= KILL_AFTER
    assert views is not None
    assert views >= answered, "an answered verification was not recorded"
    assert views <= answered + IN_FLIGHT, "only requests in flight may be recorded without their answer"
    assert viewed == views, "each view has its event"
