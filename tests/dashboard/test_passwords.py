"""Password hashing parameters: RFC 9106's low-memory argon2id unless configured, and a change of profile re-hashes
each password at its next sign-in."""

from __future__ import annotations

import pytest
from argon2 import extract_parameters
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import PasswordHashProfile, Settings
from compliance_api.dashboard import passwords
from compliance_api.dashboard import service as account_service
from compliance_api.dashboard.models import AccountPassword
from compliance_api.kit.clock import utcnow
from tests.factories import create_user

PASSWORD = "correct horse battery"


def test_the_default_is_rfc_9106s_low_memory_argon2id(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COMPLIANCE_PASSWORD_HASH_PROFILE", raising=False)
    profile = Settings(_env_file=None).password_hash_profile
    stored = passwords.hasher_for(profile).hash(PASSWORD)
    parameters = extract_parameters(stored)
    assert stored.startswith("$argon2id$")
    assert (parameters.memory_cost, parameters.time_cost, parameters.parallelism) == (65536, 3, 4)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (PasswordHashProfile.cheapest, PasswordHashProfile.rfc_9106_low_memory),
        (PasswordHashProfile.rfc_9106_low_memory, PasswordHashProfile.cheapest),
    ],
)
async def test_a_changed_profile_rehashes_at_the_next_sign_in(
    sessionmaker: async_sessionmaker[AsyncSession], before: PasswordHashProfile, after: PasswordHashProfile
) -> None:
    user = await create_user(sessionmaker, email="rehash@example.com")
    old, new = passwords.hasher_for(before), passwords.hasher_for(after)
    async with sessionmaker.begin() as session:
        await account_service.set_password(session, user=user, password=PASSWORD, hasher=old, now=utcnow())
    async with sessionmaker.begin() as session:
        wrong = await account_service.authenticate(
            session, email=user.email, password="not the password", hasher=new, now=utcnow()
        )
        signed_in = await account_service.authenticate(
            session, email=user.email, password=PASSWORD, hasher=new, now=utcnow()
        )
    assert wrong is None
    assert signed_in is not None
    assert signed_in.id == user.id
    async with sessionmaker() as session:
        stored = await session.get_one(AccountPassword, user.id)
    assert not new.check_needs_rehash(stored.password_hash)
    assert old.check_needs_rehash(stored.password_hash)
    assert new.verify(stored.password_hash, PASSWORD)
