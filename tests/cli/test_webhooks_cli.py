"""`compliance-api webhooks add|list` and `compliance-api worker` as a real process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
from asyncio import to_thread
from collections.abc import AsyncIterator

import httpx
import pytest
from cryptography.exceptions import InvalidTag
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from standardwebhooks.webhooks import Webhook

from compliance_api.config import Settings
from compliance_api.webhooks.models import WebhookEndpoint
from compliance_api.webhooks.signing import secret_box
from tests.cli.conftest import invoke
from tests.servers import free_port
from tests.webhooks.receiver import Receiver, receiving

EMAIL = "ops@example.com"


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with receiving(Receiver) as box:
        yield box


def _env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**cli_env, "COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true"}


def test_add_prints_the_secret_once_and_list_shows_the_endpoint(cli_env: dict[str, str]) -> None:
    env = _env(cli_env)
    assert invoke(env, "users", "create", EMAIL)[0] == 0
    code, out, _ = invoke(env, "webhooks", "add", EMAIL, "https://hooks.example.com/x", "--event", "passport.updated")
    assert code == 0
    assert out.strip().startswith("whsec_")
    code, out, _ = invoke(env, "webhooks", "list", EMAIL, "--json")
    [listed] = json.loads(out)["endpoints"]
    assert (listed["url"], listed["enabled_events"], listed["status"]) == (
        "https://hooks.example.com/x",
        ["passport.updated"],
        "active",
    )
    assert "secret" not in listed
    assert json.loads(invoke(env, "webhooks", "list", EMAIL, "--env", "test", "--json")[1]) == {"endpoints": []}


def test_add_refuses_unknown_events_and_unsafe_urls(cli_env: dict[str, str]) -> None:
    assert invoke(cli_env, "users", "create", EMAIL)[0] == 0
    code, _, err = invoke(cli_env, "webhooks", "add", EMAIL, "https://hooks.example.com", "--event", "nope")
    assert code == 1
    assert "unknown event" in err
    code, _, err = invoke(cli_env, "webhooks", "add", EMAIL, "https://10.0.0.1/x")
    assert code == 1
    assert "not a public address" in err


async def test_the_worker_process_delivers(cli_env: dict[str, str], receiver: Receiver) -> None:
    env = _env(cli_env)
    # `invoke` runs its own event loop: in a thread, while this loop serves the receiver.
    assert (await to_thread(invoke, env, "users", "create", EMAIL))[0] == 0
    _code, out, _ = await to_thread(invoke, env, "webhooks", "add", EMAIL, receiver.url, "--json")
    added = json.loads(out)
    # A token created after the endpoint: its api_token.created event is for this endpoint.
    assert (await to_thread(invoke, env, "tokens", "create", EMAIL))[0] == 0
    worker = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "compliance_api", "worker", "--once", env={**os.environ, **env}, stderr=subprocess.PIPE
    )
    _, err = await asyncio.wait_for(worker.communicate(), 60)
    assert worker.returncode == 0, err
    [got] = receiver.received
    assert Webhook(added["secret"]).verify(got.body, got.headers)["type"] == "api_token.created"


def _attempts(metrics: str) -> float:
    found = re.search(r'^compliance_webhook_attempts_total\{outcome="success"\} (\S+)$', metrics, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


async def test_a_separate_worker_serves_its_delivery_metrics(cli_env: dict[str, str], receiver: Receiver) -> None:
    """`worker --metrics-port`: the delivery counters of a worker process are scraped from the worker itself."""
    env = _env(cli_env)
    assert (await to_thread(invoke, env, "users", "create", EMAIL))[0] == 0
    assert (await to_thread(invoke, env, "webhooks", "add", EMAIL, receiver.url))[0] == 0
    assert (await to_thread(invoke, env, "tokens", "create", EMAIL))[0] == 0
    port = free_port()
    worker = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "compliance_api", "worker", "--metrics-port", str(port)),
        env={**os.environ, **env},
        stderr=subprocess.PIPE,
    )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            deadline = asyncio.get_running_loop().time() + 60
            attempts = 0.0
            while attempts < 1 and asyncio.get_running_loop().time() < deadline:
                with contextlib.suppress(httpx.TransportError):
                    attempts = _attempts((await client.get("/metrics")).text)
                await asyncio.sleep(0.1)  # polling the worker's progress, bounded by the deadline
        assert attempts == 1
        assert len(receiver.received) == 1
    finally:
        worker.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(worker.communicate(), 60)
    assert worker.returncode == 0, err


def test_a_metrics_port_in_use_is_an_error_not_a_traceback(cli_env: dict[str, str]) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        code, _, err = invoke(cli_env, "worker", "--once", "--metrics-port", str(port))
    assert code == 1
    assert f"error: cannot serve metrics on 127.0.0.1:{port}" in err


async def test_a_secret_rotation_keeps_endpoint_secrets_once_resealed(
    cli_env: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Secrets sealed under the retired server secret open during the rotation; `reseal` moves them to the new one."""
    assert (await to_thread(invoke, cli_env, "users", "create", EMAIL))[0] == 0
    secret = (await to_thread(invoke, cli_env, "webhooks", "add", EMAIL, "https://hooks.example.com/r"))[1].strip()
    old_secret, new_secret = cli_env["COMPLIANCE_SECRET_KEY"], "a-brand-new-server-secret-0123456789-abcdef"
    rotating = {**cli_env, "COMPLIANCE_SECRET_KEY": new_secret, "COMPLIANCE_SECRET_KEY_PREVIOUS": old_secret}

    async def opened(current: str, previous: str = "") -> str:
        async with sessionmaker() as session:
            endpoint = await session.scalar(select(WebhookEndpoint))
        assert endpoint is not None
        monkeypatch.setenv("COMPLIANCE_SECRET_KEY", current)
        monkeypatch.setenv("COMPLIANCE_SECRET_KEY_PREVIOUS", previous)
        return secret_box(Settings()).open(endpoint.secret_sealed, endpoint.id)

    assert await opened(new_secret, old_secret) == secret
    with pytest.raises(InvalidTag):
        await opened(new_secret)
    code, out, _ = await to_thread(invoke, rotating, "webhooks", "reseal", "--json")
    assert (code, json.loads(out)) == (0, {"resealed": 1})
    assert await opened(new_secret) == secret
