"""Events wired here: `api_token.created`/`revoked` and `passport.share.viewed`, in the change's transaction."""

from __future__ import annotations

from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import UserKind
from compliance_api.auth import service as auth_service
from compliance_api.events import service as events
from compliance_api.kit.environment import Environment
from tests.conftest import commits
from tests.factories import bearer, create_token, create_user
from tests.passport.conftest import give_passport


async def test_creating_and_revoking_a_token_write_events_without_the_token(
    sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    user = await create_user(sessionmaker)
    row, secret = await create_token(sessionmaker, pepper, user=user, environment=Environment.test)
    async with sessionmaker.begin() as session:
        await auth_service.revoke(session, token_id=row.id)
        await auth_service.revoke(session, token_id=row.id)  # twice: one event
    async with sessionmaker() as session:
        written = await events.pending(session, environment=Environment.test)
        assert await events.pending(session, environment=Environment.live) == []
    assert [e.type for e in written] == ["api_token.created", "api_token.revoked"]
    created, revoked = (e.payload for e in written)
    assert created["user_id"] == str(user.id)
    assert created["token_id"] == str(row.id)
    assert revoked["revoked_at"]
    assert secret not in str(created)
    assert row.token_hash not in str(created)


async def test_a_failed_token_creation_writes_no_event(
    sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    user = await create_user(sessionmaker)

    async def fail() -> None:
        async with sessionmaker.begin() as session:
            await auth_service.create(session, user=user, environment=Environment.live, name="x", pepper=pepper)
            raise RuntimeError("rolled back")

    try:
        await fail()
    except RuntimeError:
        pass
    async with sessionmaker() as session:
        assert await events.pending(session, environment=Environment.live) == []


@commits
async def test_verifying_a_share_writes_passport_share_viewed_for_the_freelancer(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    freelancer = await create_user(sessionmaker, kind=UserKind.freelancer)
    _, own = await create_token(sessionmaker, pepper, user=freelancer)
    _, verifier = await create_token(sessionmaker, pepper)
    await give_passport(sessionmaker, freelancer)
    share = (await client.post("/v1/passport/shares", json={}, headers=bearer(own))).json()
    assert (await client.get(f"/v1/passport/{share['token']}/verify", headers=bearer(verifier))).status_code == 200
    assert (await client.get("/v1/passport/pst_nope/verify", headers=bearer(verifier))).status_code == 404
    async with sessionmaker() as session:
        [viewed] = await events.pending(session, environment=Environment.live, type="passport.share.viewed")
    assert viewed.payload["freelancer_id"] == str(freelancer.id)
    assert viewed.payload["share_id"] == share["id"]
