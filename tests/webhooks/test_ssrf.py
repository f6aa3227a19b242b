"""The SSRF guard: non-public addresses refused in production, names checked at connect time, the checked IP pinned."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import AsyncIterator
from typing import Any, cast

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.responses import Response

from compliance_api.config import Deployment, Settings
from compliance_api.kit.environment import Environment
from compliance_api.webhooks import ssrf
from compliance_api.webhooks.signing import SecretBox
from compliance_api.webhooks.worker import Worker
from tests.webhooks.addresses import ATTACK_RUN, PUBLIC, REFUSED, url_of
from tests.webhooks.conftest import MakeAccount
from tests.webhooks.receiver import Receiver

STRICT = ssrf.Policy(allow_private=False, require_https=True)
LENIENT = ssrf.Policy(allow_private=True, require_https=False)


def _resolving_to(monkeypatch: pytest.MonkeyPatch, *addresses: str) -> None:
    """Make every name resolve to `addresses` (the guard's own resolver, so the worker's path is the real one)."""

    async def answer(host: str, port: int) -> list[ssrf.IPAddress]:
        return [ipaddress.ip_address(a) for a in addresses]

    monkeypatch.setattr(ssrf, "resolve", answer)


@pytest.mark.parametrize(("address", "kind"), REFUSED)
def test_non_public_addresses_are_refused_naming_the_range(address: str, kind: str) -> None:
    refused = ssrf.refusal(ipaddress.ip_address(address))
    assert refused is not None
    assert refused.kind == kind
    assert not ssrf.is_public(ipaddress.ip_address(address))
    with pytest.raises(ssrf.UnsafeUrl, match="not a public address"):
        ssrf.check_url(url_of(address), STRICT)


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_pass(address: str) -> None:
    assert ssrf.refusal(ipaddress.ip_address(address)) is None
    assert ssrf.check_url(url_of(address), STRICT) == url_of(address)


@pytest.mark.parametrize("host", ["127.1", "0x7f.0.0.1", "2130706433", "017700000001"])
def test_ipv4_in_a_non_standard_form_is_refused_even_where_private_targets_are_allowed(host: str) -> None:
    for policy in (STRICT, LENIENT):
        with pytest.raises(ssrf.UnsafeUrl, match="non-standard form"):
            ssrf.check_url(f"https://{host}/hook", policy)


def test_an_ipv6_zone_is_refused() -> None:
    with pytest.raises(ssrf.UnsafeUrl, match="zone"):
        ssrf.check_url("https://[2606:4700:4700::1111%25eth0]/hook", STRICT)


@pytest.mark.parametrize(("address", "kind"), REFUSED)
async def test_a_name_resolving_to_a_non_public_address_is_refused_at_connect_time(
    monkeypatch: pytest.MonkeyPatch, address: str, kind: str
) -> None:
    """One bad address among good ones is enough; the message names the range, not what the name resolved to."""
    _resolving_to(monkeypatch, "93.184.215.14", address)
    ssrf.check_url("https://hooks.example.com/x", STRICT)  # the name alone is fine at registration
    with pytest.raises(ssrf.UnsafeUrl) as refused:
        await ssrf.pin("https://hooks.example.com/x", STRICT)
    assert str(refused.value) == f"hooks.example.com resolves to a non-public address ({kind})"


async def test_a_name_that_does_not_resolve_is_a_dns_failure_not_a_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    async def failing(host: str, port: int) -> list[ssrf.IPAddress]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(ssrf, "resolve", failing)
    with pytest.raises(ssrf.Unresolvable, match=r"hooks\.example\.com does not resolve"):
        await ssrf.pin("https://hooks.example.com/x", STRICT)


@pytest.mark.parametrize("address", PUBLIC)
async def test_a_name_resolving_to_public_addresses_is_pinned_to_the_first(
    monkeypatch: pytest.MonkeyPatch, address: str
) -> None:
    _resolving_to(monkeypatch, address, "93.184.215.14")
    target = await ssrf.pin("https://hooks.example.com/x", STRICT)
    assert target.url == url_of(str(ipaddress.ip_address(address))).replace("/hook", "/x")


@pytest.mark.parametrize(("address", "kind"), REFUSED)
async def test_production_registration_refuses_non_public_addresses(
    strict: Settings, client: AsyncClient, make_account: MakeAccount, address: str, kind: str
) -> None:
    anna = await make_account()
    answer = await client.post(
        "/v1/webhook-endpoints", json={"url": url_of(address), "enabled_events": ["*"]}, headers=anna.live
    )
    assert answer.status_code == 403, answer.text
    assert answer.json()["code"] == "webhook_url_forbidden"
    refused = ssrf.refusal(ipaddress.ip_address(address))
    assert refused is not None
    assert refused.detail in answer.json()["detail"]
    assert (await client.get("/v1/webhook-endpoints", headers=anna.live)).json()["data"] == []


@pytest.mark.parametrize("address", ATTACK_RUN)
async def test_an_endpoint_cannot_be_changed_to_a_non_public_address(
    strict: Settings, client: AsyncClient, make_account: MakeAccount, address: str
) -> None:
    anna = await make_account()
    made = await client.post(
        "/v1/webhook-endpoints",
        json={"url": "https://hooks.example.com/in", "enabled_events": ["*"]},
        headers=anna.live,
    )
    path = f"/v1/webhook-endpoints/{made.json()['id']}"
    answer = await client.patch(path, json={"url": url_of(address)}, headers=anna.live)
    assert (answer.status_code, answer.json()["code"]) == (403, "webhook_url_forbidden")
    assert (await client.get(path, headers=anna.live)).json()["url"] == "https://hooks.example.com/in"


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


@pytest.fixture
def strict(settings: Settings) -> Settings:
    """The app's own settings with private targets refused again (the production default)."""
    settings.webhooks_allow_private_targets = False
    return settings


@pytest.fixture
async def strict_worker(settings: Settings, sessionmaker: async_sessionmaker[AsyncSession]) -> AsyncIterator[Worker]:
    """A worker with private targets refused, next to the app (and the `worker` fixture) that allow them."""
    refusing = settings.model_copy(update={"webhooks_allow_private_targets": False})
    delivery = Worker(refusing, sessionmaker, SecretBox(refusing.secret_key_bytes()))
    yield delivery
    await delivery.close()


async def _delivery_log(client: AsyncClient, headers: dict[str, str], endpoint_id: str) -> dict[str, Any]:
    answer = await client.get(f"/v1/webhook-endpoints/{endpoint_id}/deliveries", headers=headers)
    [logged] = answer.json()["data"]
    return cast(dict[str, Any], logged)


async def test_a_worker_refusing_private_targets_refuses_one_even_if_stored(
    sandbox_client: AsyncClient, make_account: MakeAccount, receiver: Receiver, strict_worker: Worker
) -> None:
    """Registered while private targets were allowed, delivered after they no longer are: refused, not sent."""
    anna = await make_account()
    made = await sandbox_client.post(
        "/v1/webhook-endpoints", json={"url": receiver.url, "enabled_events": ["*"]}, headers=anna.test
    )
    await sandbox_client.post(f"/v1/webhook-endpoints/{made.json()['id']}/test", headers=anna.test)
    assert await strict_worker.run_once() == 1
    assert receiver.received == []
    logged = await _delivery_log(sandbox_client, anna.test, made.json()["id"])
    assert logged["last_error"] == (
        "refused by the target guard: 127.0.0.1 is in the loopback range 127.0.0.0/8, not a public address"
    )


@pytest.mark.parametrize("address", ATTACK_RUN)
async def test_a_delivery_the_guard_refuses_keeps_no_answer_only_the_reason(
    monkeypatch: pytest.MonkeyPatch,
    sandbox_client: AsyncClient,
    make_account: MakeAccount,
    receiver: Receiver,
    worker: Worker,
    strict_worker: Worker,
    address: str,
) -> None:
    """First attempt: the name resolves to the receiver, which fails with a body (kept, as users need it). Retried
    after the name moved to a non-public address: nothing is sent and the earlier answer, status and latency are
    gone; the log says why."""
    anna = await make_account()
    port = receiver.url.rsplit(":", 1)[1].split("/")[0]
    made = await sandbox_client.post(
        "/v1/webhook-endpoints",
        json={"url": f"http://hooks.example.com:{port}/hook", "enabled_events": ["*"]},
        headers=anna.test,
    )
    endpoint_id = made.json()["id"]
    receiver.answers.append(Response("upstream said no", status_code=500))
    await sandbox_client.post(f"/v1/webhook-endpoints/{endpoint_id}/test", headers=anna.test)
    _resolving_to(monkeypatch, "127.0.0.1")
    assert await worker.run_once() == 1
    first = await _delivery_log(sandbox_client, anna.test, endpoint_id)
    assert (first["last_status_code"], first["last_response_body"]) == (500, "upstream said no")

    retried = f"/v1/webhook-endpoints/{endpoint_id}/deliveries/{first['id']}/retry"
    assert (await sandbox_client.post(retried, headers=anna.test)).status_code < 300
    _resolving_to(monkeypatch, address)
    assert await strict_worker.run_once() == 1
    assert len(receiver.received) == 1, "the refused attempt sent nothing"
    refused = await _delivery_log(sandbox_client, anna.test, endpoint_id)
    kind = ssrf.refusal(ipaddress.ip_address(address))
    assert kind is not None
    assert refused["last_error"] == (
        f"refused by the target guard: hooks.example.com resolves to a non-public address ({kind.kind})"
    )
    assert (refused["last_status_code"], refused["last_latency_ms"], refused["last_response_body"]) == (
        None,
        None,
        None,
    )
    assert address not in refused["last_error"], "what the name resolved to is not shown"


def test_private_targets_need_the_setting_and_embedded_mode_or_the_sandbox() -> None:
    on = Settings(webhooks_allow_private_targets=True, secret_key="x" * 40)
    production = on.model_copy(update={"deployment": Deployment.production})
    assert ssrf.policy_for(on, Environment.live).allow_private
    assert not ssrf.policy_for(production, Environment.live).allow_private
    assert ssrf.policy_for(production, Environment.live).require_https
    assert ssrf.policy_for(production, Environment.test).allow_private
    off = Settings(webhooks_allow_private_targets=False, secret_key="x" * 40)
    assert not ssrf.policy_for(off, Environment.test).allow_private


def test_by_default_the_embedded_sandbox_alone_takes_private_targets() -> None:
    """What `make run` serves takes a local receiver in the sandbox with no setting and no restart; its production,
    and both environments of a production deployment, refuse private targets unless told otherwise."""
    embedded = Settings(secret_key="x" * 40)
    assert embedded.webhooks_allow_private_targets is None
    production = embedded.model_copy(update={"deployment": Deployment.production})
    assert ssrf.policy_for(embedded, Environment.test).allow_private
    assert ssrf.check_url("http://127.0.0.1:9000/in", ssrf.policy_for(embedded, Environment.test))
    for refusing, environment in (
        (embedded, Environment.live),
        (production, Environment.live),
        (production, Environment.test),
    ):
        with pytest.raises(ssrf.UnsafeUrl):
            ssrf.check_url("https://127.0.0.1:9000/in", ssrf.policy_for(refusing, environment))


@pytest.mark.parametrize("allow_private", [False, True], ids=["private-refused", "private-allowed"])
@pytest.mark.parametrize("environment", list(Environment))
def test_a_production_deployment_refuses_plain_http_whatever_the_private_target_setting(
    allow_private: bool, environment: Environment
) -> None:
    production = Settings(
        deployment=Deployment.production, webhooks_allow_private_targets=allow_private, secret_key="x" * 40
    )
    policy = ssrf.policy_for(production, environment)
    for url in ("http://hooks.example.com/in", "http://127.0.0.1:9000/in"):
        with pytest.raises(ssrf.UnsafeUrl) as refused:
            ssrf.check_url(url, policy)
        assert str(refused.value) == "the URL must use https", "no development hint in production"
    assert ssrf.check_url("https://hooks.example.com/in", policy) == "https://hooks.example.com/in"


def test_the_embedded_deployment_takes_plain_http_in_the_sandbox_and_with_the_setting_in_production() -> None:
    off = Settings(secret_key="x" * 40)
    on = off.model_copy(update={"webhooks_allow_private_targets": True})
    assert ssrf.check_url("http://hooks.example.com/in", ssrf.policy_for(off, Environment.test))
    with pytest.raises(ssrf.UnsafeUrl, match="must use https; in development, COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE"):
        ssrf.check_url("http://hooks.example.com/in", ssrf.policy_for(off, Environment.live))
    for environment in Environment:
        assert ssrf.check_url("http://127.0.0.1:9000/in", ssrf.policy_for(on, environment))


@pytest.mark.parametrize("url", ["http://127.0.0.1:9000/hook", "https://10.1.2.3/hook", "http://localhost:9000/hook"])
async def test_the_403_for_a_private_target_names_the_setting_that_allows_it_in_development(
    strict: Settings, sandbox_client: AsyncClient, make_account: MakeAccount, url: str
) -> None:
    anna = await make_account()
    answer = await sandbox_client.post(
        "/v1/webhook-endpoints", json={"url": url, "enabled_events": ["*"]}, headers=anna.test
    )
    assert (answer.status_code, answer.json()["code"]) == (403, "webhook_url_forbidden")
    assert answer.json()["detail"].endswith(
        "not a public address; in development, COMPLIANCE_WEBHOOKS_ALLOW_PRIVATE_TARGETS=true allows private and "
        "plain-http targets (the embedded deployment only; its sandbox takes them unless the setting is false)."
    )


async def test_a_production_deployment_answers_403_to_a_plain_http_sandbox_target(
    settings: Settings, sandbox_client: AsyncClient, make_account: MakeAccount
) -> None:
    """The app's own settings, switched to a production deployment; private targets still allowed (the suite's)."""
    settings.deployment = Deployment.production
    anna = await make_account()
    answer = await sandbox_client.post(
        "/v1/webhook-endpoints", json={"url": "http://127.0.0.1:9000/hook", "enabled_events": ["*"]}, headers=anna.test
    )
    assert (answer.status_code, answer.json()["code"]) == (403, "webhook_url_forbidden")
    assert answer.json()["detail"] == "The webhook URL is not allowed: the URL must use https."
    allowed = await sandbox_client.post(
        "/v1/webhook-endpoints", json={"url": "https://127.0.0.1:9000/hook", "enabled_events": ["*"]}, headers=anna.test
    )
    assert allowed.status_code == 201, "private targets stay allowed in its sandbox: only plain http is refused"
