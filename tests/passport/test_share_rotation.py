"""Share-tokens across a `COMPLIANCE_SECRET_KEY` rotation: verified and re-hashed while the retired secret is
`COMPLIANCE_SECRET_KEY_PREVIOUS`, dead once it is removed if they were not used meanwhile."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.passport import service, share_tokens, views
from compliance_api.passport.models import PassportShare
from compliance_api.passport.schemas import ShareCreated
from tests.auth.rotation import NEW_SECRET, SECRET, serving
from tests.conftest import commits
from tests.factories import bearer, create_token
from tests.passport.conftest import Account, give_passport

pytestmark = commits  # each test starts an app or server of its own on the test database


async def old_share(
    sessionmaker: async_sessionmaker[AsyncSession], holder: Account, environment: Environment = Environment.live
) -> ShareCreated:
    """A share made before the rotation: its token is hashed with the retired secret."""
    await give_passport(sessionmaker, holder.user, environment)
    async with sessionmaker.begin() as session:
        created = await service.create_share_for(
            session, holder.user, environment, ttl_days=30, pepper=SECRET.encode(), now=utcnow()
        )
    return views.share_created(created, utcnow())


async def new_verifier(
    sessionmaker: async_sessionmaker[AsyncSession], verifier: Account, environment: Environment = Environment.live
) -> dict[str, str]:
    """An API token issued after the rotation, so only the share-token depends on the retired secret."""
    _, token = await create_token(sessionmaker, NEW_SECRET.encode(), user=verifier.user, environment=environment)
    return bearer(token)


async def stored_hash(sessionmaker: async_sessionmaker[AsyncSession], share_id: uuid.UUID) -> str:
    async with sessionmaker() as session:
        value = await session.scalar(select(PassportShare.token_hash).where(PassportShare.id == share_id))
    assert value is not None
    return value


def verify_path(token: str) -> str:
    return f"/v1/passport/{token}/verify"


async def test_old_share_verifies_during_rotation_and_is_rehashed(
    settings: Settings, sessionmaker: async_sessionmaker[AsyncSession], freelancer: Account, business: Account
) -> None:
    share = await old_share(sessionmaker, freelancer)
    headers = await new_verifier(sessionmaker, business)
    async with serving(settings, current=NEW_SECRET, previous=SECRET) as client:
        assert (await client.get(verify_path(share.token), headers=headers)).status_code == 200
    assert await stored_hash(sessionmaker, share.id) == share_tokens.hash_share_token(share.token, NEW_SECRET.encode())
    async with serving(settings, current=NEW_SECRET) as client:
        assert (await client.get(verify_path(share.token), headers=headers)).status_code == 200


async def test_share_unused_during_the_grace_period_is_404_once_the_previous_secret_is_gone(
    settings: Settings, sessionmaker: async_sessionmaker[AsyncSession], freelancer: Account, business: Account
) -> None:
    share = await old_share(sessionmaker, freelancer)
    headers = await new_verifier(sessionmaker, business)
    async with serving(settings, current=NEW_SECRET) as client:
        response = await client.get(verify_path(share.token), headers=headers)
    assert (response.status_code, response.json()["code"]) == (404, "share_not_found")
    assert await stored_hash(sessionmaker, share.id) == share_tokens.hash_share_token(share.token, SECRET.encode())


async def test_unknown_share_token_during_rotation_is_404(
    settings: Settings, sessionmaker: async_sessionmaker[AsyncSession], business: Account
) -> None:
    headers = await new_verifier(sessionmaker, business)
    async with serving(settings, current=NEW_SECRET, previous=SECRET) as client:
        response = await client.get(verify_path(share_tokens.generate()), headers=headers)
    assert (response.status_code, response.json()["code"]) == (404, "share_not_found")


@pytest.mark.parametrize(("host", "status"), [("api.test", 404), ("sandbox.localhost", 200)])
async def test_old_sandbox_share_stays_in_the_sandbox_during_rotation(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    freelancer: Account,
    business: Account,
    host: str,
    status: int,
) -> None:
    share = await old_share(sessionmaker, freelancer, Environment.test)
    environment = Environment.test if host == "sandbox.localhost" else Environment.live
    headers = await new_verifier(sessionmaker, business, environment)
    async with serving(settings, current=NEW_SECRET, previous=SECRET, host=host) as client:
        assert (await client.get(verify_path(share.token), headers=headers)).status_code == status
    expected_pepper = NEW_SECRET if status == 200 else SECRET
    assert await stored_hash(sessionmaker, share.id) == share_tokens.hash_share_token(
        share.token, expected_pepper.encode()
    )


async def test_revoke_by_token_finds_an_old_share_only_with_the_previous_secret(
    sessionmaker: async_sessionmaker[AsyncSession], freelancer: Account
) -> None:
    share = await old_share(sessionmaker, freelancer)
    with pytest.raises(service.PassportError):
        async with sessionmaker.begin() as session:
            await service.revoke_share_by_token(session, share.token, pepper=NEW_SECRET.encode(), now=utcnow())
    async with sessionmaker.begin() as session:
        revoked = await service.revoke_share_by_token(
            session, share.token, pepper=NEW_SECRET.encode(), previous_pepper=SECRET.encode(), now=utcnow()
        )
    assert views.share(revoked, utcnow()).status == "revoked"
    assert await stored_hash(sessionmaker, share.id) == share_tokens.hash_share_token(share.token, NEW_SECRET.encode())
