"""The hot reads (`GET /v1/passport`, verify): the direct reader answers what the session path answers, a body is
built and signed again exactly when something it says changes, and every answered verification is recorded."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from fastapi import FastAPI
from httpx import AsyncClient
from joserfc.jwk import OKPKey
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.auth.caller import Caller
from compliance_api.errors import ApiError
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.passport import service, signing
from compliance_api.passport import views as passport_views
from compliance_api.passport.cache import LatestCache
from compliance_api.passport.catalogue import packaged_catalogue
from compliance_api.passport.dependencies import hot_path_of
from compliance_api.passport.hot_path import HotPath
from compliance_api.passport.reader import EngineReader
from compliance_api.ratelimit.tiers import tier_for
from tests.conftest import commits
from tests.passport.conftest import Account, give_passport
from tests.passport.test_verify import share_token, verify_path


def hot(app: FastAPI) -> HotPath:
    """The application's hot path, as the routes get it."""

    class _Request:
        def __init__(self) -> None:
            self.app = app

    return hot_path_of(_Request())  # type: ignore[arg-type]


def caller_of(account: Account) -> Caller:
    """The `Caller` the gateway makes of a production token of this account."""
    user = account.user
    return Caller(
        user.id, uuid.uuid4(), Environment.live, user.plan, user.kind, tier_for(user.plan, Environment.live), "abcd"
    )


@pytest.fixture
async def holder(sessionmaker: async_sessionmaker[AsyncSession], freelancer: Account) -> Account:
    """A freelancer with a production passport: identity and KvK registration verified, sector `ict`."""
    await give_passport(sessionmaker, freelancer.user)
    return freelancer


@pytest.fixture
def signatures(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every payload the service signs (a spy on the JOSE call; the signature itself is the real one)."""
    signed: list[bytes] = []

    def counting(key: OKPKey, payload: bytes) -> str:
        signed.append(payload)
        return signing.sign_with(key, payload)

    monkeypatch.setattr(passport_views, "sign_with", counting)
    return signed


@commits
async def test_own_passport_reads_as_the_session_path(
    app: FastAPI, client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], holder: Account
) -> None:
    caller = caller_of(holder)
    now = utcnow()
    async with sessionmaker() as session:
        expected = passport_views.own_passport(
            await service.own_passport(session, caller, packaged_catalogue(), now), packaged_catalogue()
        )
    for reader in (hot(app).reader, EngineReader(app.state.services.engine)):
        rows = await service.own_passport_rows(reader, caller)
        body = passport_views.own_passport_body(rows, packaged_catalogue(), now.date(), LatestCache())
        assert body == expected.model_dump_json().encode()


@commits
async def test_own_passport_shows_a_change_at_once(
    app: FastAPI, client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], holder: Account
) -> None:
    before = (await client.get("/v1/passport", headers=holder.live)).json()
    await give_passport(sessionmaker, holder.user, checks={"vat_number": None}, sector="finance")
    after = (await client.get("/v1/passport", headers=holder.live)).json()
    assert (before["sector"], after["sector"]) == ("ict", "finance")
    assert after["compliance_score"] > before["compliance_score"]


@commits
async def test_a_summary_is_signed_again_only_when_what_it_says_changes(
    app: FastAPI,
    client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    holder: Account,
    business: Account,
    pepper: bytes,
    signatures: list[bytes],
) -> None:
    token = await share_token(client, holder)
    caller = caller_of(business)
    services, cache = app.state.services, LatestCache[bytes]()

    async def verify(now: dt.datetime) -> bytes:
        verified = await service.verify_share(hot(app).reader, services.audit, caller, token, pepper=pepper, now=now)
        return passport_views.signed_summary_body(verified, packaged_catalogue(), services.signing_keys, cache)

    now = utcnow().replace(microsecond=0)
    first = await verify(now)
    assert await verify(now + dt.timedelta(milliseconds=500)) == first
    assert len(signatures) == 1, "same second, same passport: not signed again"
    assert await verify(now + dt.timedelta(seconds=1)) != first
    assert len(signatures) == 2, "`issued_at` moved on"

    await give_passport(sessionmaker, holder.user, checks={"vat_number": None})
    changed = await verify(now + dt.timedelta(seconds=1, milliseconds=500))
    assert b'"vat_number"' in changed
    assert len(signatures) == 3, "a new verification is a new summary"

    signing.add_key(services.signing_keys.root, Environment.live)
    await verify(now + dt.timedelta(seconds=1, milliseconds=600))
    assert len(signatures) == 4, "a rotated key signs again"

    share_id = (await client.get("/v1/passport/shares", headers=holder.live)).json()["data"][0]["id"]
    await client.delete(f"/v1/passport/shares/{share_id}", headers=holder.live)
    with pytest.raises(ApiError) as refused:
        await verify(now + dt.timedelta(seconds=1, milliseconds=700))
    assert refused.value.code == "share_not_found"
    views = (await client.get(f"/v1/passport/shares/{share_id}/views", headers=holder.live)).json()["data"]
    assert len(views) == 5, "each answered verification is recorded, cached body or not"


@commits
async def test_a_revoked_share_is_404_on_the_next_call(client: AsyncClient, holder: Account, business: Account) -> None:
    token = await share_token(client, holder)
    assert (await client.get(verify_path(token), headers=business.live)).status_code == 200
    share_id = (await client.get("/v1/passport/shares", headers=holder.live)).json()["data"][0]["id"]
    await client.delete(f"/v1/passport/shares/{share_id}", headers=holder.live)
    response = await client.get(verify_path(token), headers=business.live)
    assert (response.status_code, response.json()["code"]) == (404, "share_not_found")


@commits
async def test_an_expired_verification_drops_out_the_next_day(
    app: FastAPI,
    client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    freelancer: Account,
    business: Account,
    pepper: bytes,
) -> None:
    today = utcnow().date()
    await give_passport(sessionmaker, freelancer.user, checks={"identity": None, "kvk_registration": today})
    token = await share_token(client, freelancer)
    caller = caller_of(business)
    services, cache = app.state.services, LatestCache[bytes]()

    async def verify(now: dt.datetime) -> bytes:
        verified = await service.verify_share(hot(app).reader, services.audit, caller, token, pepper=pepper, now=now)
        return passport_views.signed_summary_body(verified, packaged_catalogue(), services.signing_keys, cache)

    end_of_day = dt.datetime.combine(today, dt.time(23, 59, 59), dt.UTC)
    assert b'"kvk_registration"' in await verify(end_of_day)
    assert b'"kvk_registration"' not in await verify(end_of_day + dt.timedelta(seconds=1))
