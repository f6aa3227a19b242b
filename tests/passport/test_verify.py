"""`GET /v1/passport/{token}/verify`: the signed summary, the same 404 for every dead token, recorded views,
and signatures checked with PyJWT (not the signing library) against the JWKS fetched over HTTP."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from fastapi import FastAPI
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.app import create_app
from compliance_api.config import Deployment, Settings
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.passport import service
from compliance_api.passport.signing import NoSigningKey, add_key
from tests.conftest import commits
from tests.passport.conftest import Account, give_passport
from tests.servers import server

SHARES = "/v1/passport/shares"
SPEC_FIELDS = {"freelancer_id", "issued_at", "expires_at", "compliance_score", "verifications", "jws_signature"}


def verify_path(token: str) -> str:
    return f"/v1/passport/{token}/verify"


def check_signature(summary: dict[str, Any], jwks: dict[str, Any]) -> dict[str, Any]:
    """Verify `jws_signature` with PyJWT and the JWKS; returns the signed payload (the summary less the signature)."""
    kid = jwt.get_unverified_header(summary["jws_signature"])["kid"]
    (jwk,) = [key for key in jwks["keys"] if key["kid"] == kid]
    payload = jwt.api_jws.PyJWS().decode(summary["jws_signature"], key=jwt.PyJWK(jwk).key, algorithms=["EdDSA"])
    signed: dict[str, Any] = json.loads(payload)
    return signed


async def share_token(client: AsyncClient, holder: Account, environment: Environment = Environment.live) -> str:
    response = await client.post(SHARES, json={"ttl_days": 30}, headers=holder.headers(environment))
    assert response.status_code == 201, response.text
    token: str = response.json()["token"]
    return token


@pytest.fixture
async def holder(sessionmaker: async_sessionmaker[AsyncSession], freelancer: Account) -> Account:
    in_ten_days = utcnow().date() + dt.timedelta(days=10)
    await give_passport(
        sessionmaker,
        freelancer.user,
        checks={
            "identity": None,
            "kvk_registration": in_ten_days,
            "vat_number": utcnow().date() - dt.timedelta(days=1),
        },
    )
    await give_passport(sessionmaker, freelancer.user, Environment.test, checks={"identity": None})
    return freelancer


@commits
async def test_verify_returns_the_signed_spec_summary(client: AsyncClient, holder: Account, business: Account) -> None:
    token = await share_token(client, holder)
    response = await client.get(verify_path(token), headers=business.live)
    assert response.status_code == 200, response.text
    summary = response.json()
    assert set(summary) >= SPEC_FIELDS
    assert summary["freelancer_id"] == str(holder.user.id)
    assert summary["compliance_score"] == 50
    assert sorted(summary["verifications"]) == ["identity", "kvk_registration"]
    assert summary["livemode"] is True
    ten_days = dt.datetime.combine(utcnow().date() + dt.timedelta(days=11), dt.time(), dt.UTC)
    assert dt.datetime.fromisoformat(summary["expires_at"]) == ten_days, "the KvK check ends before the share"

    header = jwt.get_unverified_header(summary["jws_signature"])
    assert header["alg"] == "EdDSA"
    jwks = (await client.get("/.well-known/jwks.json")).json()
    signed = check_signature(summary, jwks)
    assert signed == {k: v for k, v in summary.items() if k != "jws_signature"}


@commits
async def test_a_tampered_summary_does_not_verify(client: AsyncClient, holder: Account, business: Account) -> None:
    summary = (await client.get(verify_path(await share_token(client, holder)), headers=business.live)).json()
    head, _, signature = summary["jws_signature"].split(".")
    forged = jwt.utils.base64url_encode(json.dumps({"compliance_score": 100}).encode()).decode()
    jwks = (await client.get("/.well-known/jwks.json")).json()
    with pytest.raises(jwt.InvalidSignatureError):
        check_signature({**summary, "jws_signature": f"{head}.{forged}.{signature}"}, jwks)


async def test_unknown_expired_and_revoked_tokens_get_the_same_404(
    client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    holder: Account,
    business: Account,
    pepper: bytes,
) -> None:
    async with sessionmaker.begin() as session:
        expired = await service.create_share_for(
            session, holder.user, Environment.live, ttl_days=1, pepper=pepper, now=utcnow() - dt.timedelta(days=2)
        )
    revoked = (await client.post(SHARES, headers=holder.live)).json()
    await client.delete(f"{SHARES}/{revoked['id']}", headers=holder.live)
    valid = await share_token(client, holder)
    dead = [
        expired.token,
        revoked["token"],
        "pst_" + "0" * 32,
        valid[:-1] + ("A" if valid[-1] != "A" else "B"),
        "x" * 500,
    ]
    bodies = []
    for token in dead:
        response = await client.get(verify_path(token), headers=business.live)
        assert response.status_code == 404, token
        body = response.json()
        assert body.pop("request_id")
        bodies.append(body)
    assert all(body == bodies[0] for body in bodies)
    assert bodies[0]["code"] == "share_not_found"


@commits
async def test_each_verification_is_recorded_for_the_freelancer(
    client: AsyncClient, holder: Account, business: Account
) -> None:
    token = await share_token(client, holder)
    share_id = (await client.get(SHARES, headers=holder.live)).json()["data"][0]["id"]
    await client.get(verify_path(token), headers=business.live)
    await client.get(verify_path(token), headers=holder.live)
    await client.get(verify_path("pst_unknown"), headers=business.live)
    views = (await client.get(f"{SHARES}/{share_id}/views", headers=holder.live)).json()["data"]
    assert [v["viewer_id"] for v in views] == [str(holder.user.id), str(business.user.id)]  # newest first
    assert views[1]["viewer_email"] == business.user.email
    assert views[0]["viewed_at"] >= views[1]["viewed_at"]


@commits
async def test_sandbox_and_production_are_apart_and_sign_with_different_keys(
    client: AsyncClient, sandbox_client: AsyncClient, holder: Account, business: Account
) -> None:
    live_token = await share_token(client, holder)
    test_token = await share_token(sandbox_client, holder, Environment.test)
    assert (await sandbox_client.get(verify_path(live_token), headers=business.test)).status_code == 404
    assert (await client.get(verify_path(test_token), headers=business.live)).status_code == 404
    live = (await client.get(verify_path(live_token), headers=business.live)).json()
    test = (await sandbox_client.get(verify_path(test_token), headers=business.test)).json()
    assert (live["livemode"], test["livemode"]) == (True, False)
    live_jwks = (await client.get("/.well-known/jwks.json")).json()
    test_jwks = (await sandbox_client.get("/.well-known/jwks.json")).json()
    assert {k["kid"] for k in live_jwks["keys"]}.isdisjoint({k["kid"] for k in test_jwks["keys"]})
    check_signature(test, test_jwks)
    assert jwt.get_unverified_header(test["jws_signature"])["kid"] not in {k["kid"] for k in live_jwks["keys"]}


@commits
async def test_rotation_signs_with_the_new_key_and_old_signatures_still_verify(
    client: AsyncClient, app: FastAPI, holder: Account, business: Account
) -> None:
    token = await share_token(client, holder)
    before = (await client.get(verify_path(token), headers=business.live)).json()
    new_kid = add_key(app.state.services.signing_keys.root, Environment.live)
    after = (await client.get(verify_path(token), headers=business.live)).json()
    assert jwt.get_unverified_header(after["jws_signature"])["kid"] == new_kid
    assert jwt.get_unverified_header(before["jws_signature"])["kid"] != new_kid
    response = await client.get("/.well-known/jwks.json")
    assert response.headers["content-type"] == "application/jwk-set+json"
    assert "max-age" in response.headers["cache-control"]
    jwks = response.json()
    assert len(jwks["keys"]) == 2
    assert all(set(key) == {"kty", "crv", "x", "kid", "alg", "use"} for key in jwks["keys"]), "public parts only"
    check_signature(before, jwks)
    check_signature(after, jwks)


@commits
async def test_jwks_over_http_verifies_with_pyjwt(
    app: FastAPI,
    client: AsyncClient,
    holder: Account,
    business: Account,
    database_url: str,
    var_dir: Path,
) -> None:
    """A real server process; PyJWT's own JWKS client fetches the keys over HTTP and picks the key by `kid`."""
    token = await share_token(client, holder)
    app.state.services.signing_keys.keys(Environment.live)  # the in-process app made var/keys; the server reads it
    with server(database_url=database_url, redis_url="", var_dir=str(var_dir)) as base:
        async with httpx.AsyncClient(base_url=base) as http:
            summary = (await http.get(verify_path(token), headers=business.live)).json()
        signing_key = jwt.PyJWKClient(f"{base}/.well-known/jwks.json").get_signing_key_from_jwt(
            summary["jws_signature"]
        )
        payload = jwt.api_jws.PyJWS().decode(summary["jws_signature"], key=signing_key.key, algorithms=["EdDSA"])
    assert json.loads(payload)["freelancer_id"] == str(holder.user.id)


def test_production_refuses_to_start_without_signing_keys(settings: Settings, tmp_path: Path) -> None:
    production = settings.model_copy(
        update={"deployment": Deployment.production, "signing_keys_dir": tmp_path / "keys"}
    )
    with pytest.raises(NoSigningKey, match="keys rotate"):
        create_app(production)
    add_key(tmp_path / "keys", Environment.live)
    add_key(tmp_path / "keys", Environment.test)
    create_app(production)
    assert sorted(p.name for p in (tmp_path / "keys" / "live").iterdir()) == ["0001.jwk.json", "0001.pdf-signer.pem"], (
        "nothing generated: the key and its PDF signing certificate, as `keys rotate` made them"
    )
