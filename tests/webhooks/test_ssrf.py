"""The SSRF guard: non-public addresses refused in production, names checked at connect time, the checked IP pinned."""

from __future__ import annotations

import ipaddress

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Deployment, Settings
from compliance_api.kit.environment import Environment
from compliance_api.webhooks import ssrf
from compliance_api.webhooks.signing import SecretBox
from compliance_api.webhooks.worker import Worker
from tests.webhooks.conftest import MakeAccount
from tests.webhooks.receiver import Receiver

STRICT = ssrf.Policy(allow_private=False, require_https=True)
LENIENT = ssrf.Policy(allow_private=True, require_https=False)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",  # loopback
        "::1",
        "10.0.0.8",  # private
        "172.16.5.4",
        "192.168.1.1",
        "100.64.0.1",  # carrier-grade NAT
        "169.254.169.254",  # link-local (cloud metadata)
        "fe80::1",
        "fd00:ec2::254",  # unique local
        "::ffff:127.0.0.1",  # IPv4-mapped IPv6
        "::ffff:10.0.0.1",
        "2002:7f00:0001::",  # 6to4 of 127.0.0.1
        "0.0.0.0",
        "224.0.0.1",  # multicast
        "ff02::1",
    ],
)
def test_non_public_addresses_are_refused(address: str) -> None:
    assert not ssrf.is_public(ipaddress.ip_address(address))
    host = f"[{address}]" if ":" in address else address
    with pytest.raises(ssrf.UnsafeUrl):
        ssrf.check_url(f"https://{host}/hook", STRICT)


@pytest.mark.parametrize("address", ["93.184.215.14", "2606:4700:4700::1111", "::ffff:93.184.215.14"])
def test_public_addresses_pass(address: str) -> None:
    assert ssrf.is_public(ipaddress.ip_address(address))


async def test_a_name_resolving_to_a_private_address_is_refused_at_connect_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def private(host: str, port: int) -> list[ssrf.IPAddress]:
        return [ipaddress.ip_address("93.184.215.14"), ipaddress.ip_address("10.0.0.5")]

    monkeypatch.setattr(ssrf, "resolve", private)
    ssrf.check_url("https://hooks.example.com/x", STRICT)  # the name alone is fine at registration
    with pytest.raises(ssrf.UnsafeUrl, match=r"non-public address \(10\.0\.0\.5\)"):
        await ssrf.pin("https://hooks.example.com/x", STRICT)


async def test_pin_connects_to_the_checked_address_with_the_original_host_and_sni(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def public(host: str, port: int) -> list[ssrf.IPAddress]:
        return [ipaddress.ip_address("93.184.215.14")]

    monkeypatch.setattr(ssrf, "resolve", public)
    target = await ssrf.pin("https://Hooks.Example.com:8443/a/b?c=1", STRICT)
    assert target == ssrf.Target(
        url="https://93.184.215.14:8443/a/b?c=1", host="Hooks.Example.com:8443", sni="hooks.example.com"
    )


async def test_a_rebinding_name_is_sent_to_the_address_that_was_checked(
    monkeypatch: pytest.MonkeyPatch,
    client: AsyncClient,
    make_account: MakeAccount,
    receiver: Receiver,
    worker: Worker,
) -> None:
    """The worker resolves once and connects to that address: the receiver sees the request although the name in
    the URL resolves nowhere by itself, and gets the original Host header."""
    answers = iter([ipaddress.ip_address("127.0.0.1")])

    async def once(host: str, port: int) -> list[ssrf.IPAddress]:
        return [next(answers)]  # a second resolution would raise StopIteration

    monkeypatch.setattr(ssrf, "resolve", once)
    anna = await make_account()
    port = receiver.url.rsplit(":", 1)[1].split("/")[0]
    url = f"http://hooks.invalid:{port}/hook"
    made = await client.post("/v1/webhook-endpoints", json={"url": url, "enabled_events": ["*"]}, headers=anna.live)
    await client.post(f"/v1/webhook-endpoints/{made.json()['id']}/test", headers=anna.live)
    assert await worker.run_once() == 1
    [got] = receiver.received
    assert got.headers["host"] == f"hooks.invalid:{port}"


async def test_production_worker_refuses_a_private_target_even_if_stored(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    client: AsyncClient,
    make_account: MakeAccount,
    receiver: Receiver,
) -> None:
    """Registered while private targets were allowed, delivered after they no longer are: refused, not sent."""
    anna = await make_account()
    made = await client.post(
        "/v1/webhook-endpoints", json={"url": receiver.url, "enabled_events": ["*"]}, headers=anna.live
    )
    await client.post(f"/v1/webhook-endpoints/{made.json()['id']}/test", headers=anna.live)
    strict = settings.model_copy(update={"webhooks_allow_private_targets": False})
    worker = Worker(strict, sessionmaker, SecretBox(strict.secret_key_bytes()))
    try:
        assert await worker.run_once() == 1
    finally:
        await worker.close()
    assert receiver.received == []
    log = (await client.get(f"/v1/webhook-endpoints/{made.json()['id']}/deliveries", headers=anna.live)).json()
    assert "UnsafeUrl" in log["data"][0]["last_error"]


def test_private_targets_need_the_setting_and_embedded_mode_or_the_sandbox() -> None:
    on = Settings(webhooks_allow_private_targets=True, secret_key="x" * 40)
    production = on.model_copy(update={"deployment": Deployment.production})
    assert ssrf.policy_for(on, Environment.live).allow_private
    assert not ssrf.policy_for(production, Environment.live).allow_private
    assert ssrf.policy_for(production, Environment.live).require_https
    assert ssrf.policy_for(production, Environment.test).allow_private
    assert not ssrf.policy_for(Settings(secret_key="x" * 40), Environment.test).allow_private
