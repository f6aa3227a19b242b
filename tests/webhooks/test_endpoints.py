"""`/v1/webhook-endpoints`: create (secret once), read, change, delete, rotate; owner and environment isolation."""

from __future__ import annotations

import pytest
from httpx import AsyncClient

from compliance_api.webhooks.service import MAX_ENDPOINTS
from tests.webhooks.conftest import MakeAccount

HOOK = "https://hooks.example.com/compliance"


async def test_create_shows_the_secret_once_and_lists_without_it(
    client: AsyncClient, make_account: MakeAccount
) -> None:
    anna = await make_account()
    created = await client.post(
        "/v1/webhook-endpoints",
        json={"url": HOOK, "enabled_events": ["passport.updated", "passport.updated"], "description": " mine "},
        headers=anna.live,
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["secret"].startswith("whsec_")
    assert body["enabled_events"] == ["passport.updated"]
    assert body["description"] == "mine"
    assert (body["status"], body["enabled"], body["livemode"]) == ("active", True, True)
    listed = (await client.get("/v1/webhook-endpoints", headers=anna.live)).json()["data"]
    assert [e["id"] for e in listed] == [body["id"]]
    assert "secret" not in listed[0]
    one = await client.get(f"/v1/webhook-endpoints/{body['id']}", headers=anna.live)
    assert "secret" not in one.json()


async def test_another_account_and_the_other_environment_see_404(
    client: AsyncClient, sandbox_client: AsyncClient, make_account: MakeAccount
) -> None:
    anna, bob = await make_account(), await make_account()
    made = await client.post("/v1/webhook-endpoints", json={"url": HOOK, "enabled_events": ["*"]}, headers=anna.live)
    path = f"/v1/webhook-endpoints/{made.json()['id']}"
    delivery = (await client.post(f"/v1/webhook-endpoints/{made.json()['id']}/test", headers=anna.live)).json()
    attempts = (
        ("GET", ""),
        ("PATCH", ""),
        ("DELETE", ""),
        ("POST", "/test"),
        ("POST", "/rotate-secret"),
        ("GET", "/deliveries"),
        ("POST", f"/deliveries/{delivery['id']}/retry"),
    )
    for method, suffix in attempts:
        kwargs = {"json": {"enabled": False}} if method == "PATCH" else {}
        answer = await client.request(method, path + suffix, headers=bob.live, **kwargs)  # type: ignore[arg-type]
        assert answer.status_code == 404, (method, suffix)
        assert answer.json()["code"] == "webhook_endpoint_not_found"
    assert (await sandbox_client.get(path, headers=anna.test)).status_code == 404
    assert (await sandbox_client.get("/v1/webhook-endpoints", headers=anna.test)).json()["data"] == []
    assert (await client.get(path, headers=anna.live)).json()["enabled"] is True, "bob's PATCH changed nothing"


async def test_patch_disables_and_reenables_and_delete_removes(client: AsyncClient, make_account: MakeAccount) -> None:
    anna = await make_account()
    made = (
        await client.post("/v1/webhook-endpoints", json={"url": HOOK, "enabled_events": ["*"]}, headers=anna.live)
    ).json()
    path = f"/v1/webhook-endpoints/{made['id']}"
    off = (await client.patch(path, json={"enabled": False, "description": "paused"}, headers=anna.live)).json()
    assert (off["status"], off["enabled"], off["description"], off["url"]) == ("disabled", False, "paused", HOOK)
    on = (
        await client.patch(path, json={"enabled": True, "enabled_events": ["api_token.created"]}, headers=anna.live)
    ).json()
    assert (on["status"], on["enabled_events"]) == ("active", ["api_token.created"])
    assert (await client.delete(path, headers=anna.live)).status_code == 204
    assert (await client.get(path, headers=anna.live)).status_code == 404


async def test_rotation_returns_a_new_secret_and_keeps_the_old_for_24_hours(
    client: AsyncClient, make_account: MakeAccount
) -> None:
    anna = await make_account()
    made = (
        await client.post("/v1/webhook-endpoints", json={"url": HOOK, "enabled_events": ["*"]}, headers=anna.live)
    ).json()
    rotated = (await client.post(f"/v1/webhook-endpoints/{made['id']}/rotate-secret", headers=anna.live)).json()
    assert rotated["secret"].startswith("whsec_")
    assert rotated["secret"] != made["secret"]
    assert rotated["previous_secret_expires_at"] is not None


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/x",
        "https://127.0.0.1/x",
        "https://10.1.2.3/x",
        "https://169.254.169.254/latest",
        "https://[::1]/x",
        "https://[::ffff:127.0.0.1]/x",
        "https://localhost/x",
        "https://user:pw@hooks.example.com/x",
    ],
)
async def test_production_refuses_unsafe_urls(
    client: AsyncClient, make_account: MakeAccount, url: str, settings: object
) -> None:
    settings.webhooks_allow_private_targets = False  # type: ignore[attr-defined]
    anna = await make_account()
    answer = await client.post("/v1/webhook-endpoints", json={"url": url, "enabled_events": ["*"]}, headers=anna.live)
    assert answer.status_code == 403, answer.text
    assert answer.json()["code"] == "webhook_url_forbidden"
    assert (await client.get("/v1/webhook-endpoints", headers=anna.live)).json()["data"] == []


async def test_the_sandbox_allows_private_targets_when_the_setting_says_so(
    sandbox_client: AsyncClient, make_account: MakeAccount
) -> None:
    anna = await make_account()
    answer = await sandbox_client.post(
        "/v1/webhook-endpoints", json={"url": "http://127.0.0.1:9/x", "enabled_events": ["*"]}, headers=anna.test
    )
    assert answer.status_code == 201
    assert answer.json()["livemode"] is False


@pytest.mark.parametrize(
    "body",
    [
        {"url": HOOK, "enabled_events": []},
        {"url": HOOK, "enabled_events": ["no.such.event"]},
        {"url": "ftp://hooks.example.com", "enabled_events": ["*"]},
        {"url": HOOK},
        {"url": HOOK, "enabled_events": ["*"], "secret": "whsec_mine"},
    ],
)
async def test_malformed_bodies_are_400(
    client: AsyncClient, make_account: MakeAccount, body: dict[str, object]
) -> None:
    anna = await make_account()
    answer = await client.post("/v1/webhook-endpoints", json=body, headers=anna.live)
    assert answer.status_code == 400
    assert answer.json()["code"] == "validation_failed"


async def test_an_account_has_at_most_20_endpoints_per_environment(
    client: AsyncClient, make_account: MakeAccount
) -> None:
    anna = await make_account()
    for _ in range(MAX_ENDPOINTS):
        made = await client.post(
            "/v1/webhook-endpoints", json={"url": HOOK, "enabled_events": ["*"]}, headers=anna.live
        )
        assert made.status_code == 201
    refused = await client.post("/v1/webhook-endpoints", json={"url": HOOK, "enabled_events": ["*"]}, headers=anna.live)
    assert refused.status_code == 409
    assert refused.json()["code"] == "webhook_endpoint_limit"


async def test_create_honours_idempotency_key(client: AsyncClient, make_account: MakeAccount) -> None:
    anna = await make_account()
    headers = {**anna.live, "Idempotency-Key": "hook-1"}
    body = {"url": HOOK, "enabled_events": ["*"]}
    first = await client.post("/v1/webhook-endpoints", json=body, headers=headers)
    again = await client.post("/v1/webhook-endpoints", json=body, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert len((await client.get("/v1/webhook-endpoints", headers=anna.live)).json()["data"]) == 1
    other = await client.post("/v1/webhook-endpoints", json={**body, "description": "x"}, headers=headers)
    assert other.json()["code"] == "idempotency_mismatch"


@pytest.mark.parametrize(
    ("url", "schema_valid"),
    [
        ("https://hooks.example.com/\u0085x", True),
        ("https://hooks.example.com/\u00a0x", False),
        ("https://a b/", False),
    ],
)
async def test_the_url_rule_is_the_contracts_ecmascript_pattern(
    client: AsyncClient, make_account: MakeAccount, url: str, schema_valid: bool
) -> None:
    """U+0085 is whitespace to Python and Rust but not to the contract's ECMAScript `\\s`: the server agrees with the
    contract (schemathesis found the mismatch)."""
    anna = await make_account()
    answer = await client.post("/v1/webhook-endpoints", json={"url": url, "enabled_events": ["*"]}, headers=anna.live)
    assert (answer.json().get("code") != "validation_failed") is schema_valid, answer.json()


async def test_a_second_rotation_within_24_hours_is_refused_so_the_first_secret_keeps_signing(
    client: AsyncClient, make_account: MakeAccount
) -> None:
    anna = await make_account()
    made = (
        await client.post("/v1/webhook-endpoints", json={"url": HOOK, "enabled_events": ["*"]}, headers=anna.live)
    ).json()
    path = f"/v1/webhook-endpoints/{made['id']}/rotate-secret"
    first = await client.post(path, headers=anna.live)
    assert first.status_code == 200
    second = await client.post(path, headers=anna.live)
    assert second.status_code == 409
    assert second.json()["code"] == "secret_rotation_in_progress"
    assert first.json()["previous_secret_expires_at"][:19] in second.json()["detail"]


async def test_a_retried_rotation_with_the_same_idempotency_key_rotates_once(
    client: AsyncClient, make_account: MakeAccount
) -> None:
    anna = await make_account()
    made = (
        await client.post("/v1/webhook-endpoints", json={"url": HOOK, "enabled_events": ["*"]}, headers=anna.live)
    ).json()
    path = f"/v1/webhook-endpoints/{made['id']}/rotate-secret"
    keyed = {**anna.live, "Idempotency-Key": "rotate-2026-11"}
    first = await client.post(path, headers=keyed)
    again = await client.post(path, headers=keyed)
    assert again.status_code == 200
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json()["secret"] == first.json()["secret"]
