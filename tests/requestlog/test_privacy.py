"""The request log's privacy rules, tried the way a careless integration would break them: tokens and secrets in
headers, query strings, bodies and paths, and bodies of successful answers; then the whole log is searched."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import UserKind
from compliance_api.config import Settings
from compliance_api.passport import share_tokens
from tests.passport.conftest import give_passport, make_account
from tests.requestlog.conftest import flush, stored_rows, stored_text

Maker = async_sessionmaker[AsyncSession]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Webhook endpoints on loopback, so that creating one answers its secret."""
    return settings.model_copy(update={"webhooks_allow_private_targets": True})


def _secret_parts(secret: str) -> list[str]:
    """The secret, and the part after its prefix (a log that kept either has kept the secret)."""
    return [secret, secret.split("_", 2)[-1]]


async def test_no_token_secret_query_string_or_success_body_is_ever_stored(
    app: FastAPI, client: AsyncClient, sessionmaker: Maker, pepper: bytes
) -> None:
    owner = await make_account(sessionmaker, pepper, UserKind.freelancer)
    token = owner.live["Authorization"].removeprefix("Bearer ")
    await give_passport(sessionmaker, owner.user)
    auth = owner.live
    pasted = share_tokens.generate()  # a share-token of nobody, pasted into a path

    answers = [
        # headers: the token as the request id too
        await client.get("/v1/rates/sectors", headers={**auth, "X-Request-Id": token}),
        # query strings: one the route does not take (refused, naming the parameter, never its value), refused, and
        # echoed by a problem (`unknown_sector` names the sector)
        await client.get("/v1/rates/sectors", params={"api_key": token}, headers=auth),
        await client.get("/v1/rates/benchmark", params={"sector": token, "region": "NL"}, headers=auth),
        await client.get("/v1/rates/benchmark", params={"sector": pasted, "region": "NL"}, headers=auth),
        await client.get("/v1/wtta/lookup", params={"kvk": token}, headers=auth),
        # bodies: in a value of a successful request, and as a field name of a refused one
        await client.post(
            "/v1/classify/cross-border", json={"country": "BE", "criteria": {}, "reference": token}, headers=auth
        ),
        await client.post("/v1/classify/cross-border", json={"country": "BE", "criteria": {}, token: 1}, headers=auth),
        await client.post("/v1/classify/cross-border", content=token, headers=auth),
        # paths: matched (a path parameter) and unmatched
        await client.get(f"/v1/passport/{token}/verify", headers=auth),
        await client.get(f"/v1/passport/{pasted}/verify", headers=auth),
        await client.get(f"/v1/{token}", headers=auth),
        await client.get(f"/v1/webhook-endpoints/{token}", headers=auth),
    ]
    share = await client.post("/v1/passport/shares", json={"ttl_days": 5}, headers=auth)
    endpoint = await client.post(
        "/v1/webhook-endpoints", json={"url": "http://127.0.0.1:9/hook", "enabled_events": ["*"]}, headers=auth
    )
    assert (share.status_code, endpoint.status_code) == (201, 201)
    classified = answers[5]
    assert classified.status_code == 200
    assert token in classified.text  # the success body holds the token (its reference): the log must not
    assert pasted in answers[3].text  # so does the 404 problem body, as answered: the log keeps it redacted
    await flush(app)

    rows = await stored_rows(sessionmaker)
    assert len(rows) == len(answers) + 2
    stored = await stored_text(sessionmaker)
    secrets = [token, pasted, share.json()["token"], endpoint.json()["secret"]]
    for secret in secrets:
        for part in _secret_parts(secret):
            assert part not in stored, part
    assert "api_key=" not in stored  # the query string is not kept; the refusal's problem names only the parameter
    for success in (classified, share, endpoint):
        assert success.json()["id"] not in stored  # nothing of a successful answer's body
    assert {row["problem"] is None for row in rows if row["status"] < 400} == {True}
    assert all(row["problem"] is not None for row in rows if row["status"] >= 400)
    paths = {row["path"] for row in rows}
    assert paths >= {"/v1/passport/{token}/verify", "/v1/{…}", "/v1/webhook-endpoints/{endpoint_id}"}


async def test_a_problem_that_echoes_a_secret_is_stored_redacted(
    app: FastAPI, client: AsyncClient, sessionmaker: Maker, pepper: bytes
) -> None:
    owner = await make_account(sessionmaker, pepper)
    pasted = share_tokens.generate()
    answered = await client.get("/v1/rates/benchmark", params={"sector": pasted}, headers=owner.live)
    assert answered.status_code == 404
    assert pasted in answered.json()["detail"]
    await flush(app)
    [row] = await stored_rows(sessionmaker)
    assert row["problem"] == answered.text.replace(pasted, "pst_[redacted]")
