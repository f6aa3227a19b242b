"""The dashboard accounts' statements: passwords, browser sessions and reset links. The rules that call them live in
`service.py`."""

from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts.models import User
from compliance_api.dashboard.models import AccountPassword, DashboardSession, PasswordReset


def add(session: AsyncSession, row: AccountPassword | DashboardSession | PasswordReset) -> None:
    session.add(row)


async def password_of(session: AsyncSession, user_id: uuid.UUID) -> AccountPassword | None:
    return await session.get(AccountPassword, user_id)


async def user(session: AsyncSession, user_id: uuid.UUID) -> User:
    """The user, which must exist."""
    return await session.get_one(User, user_id)


async def drop_expired_sessions(session: AsyncSession, user_id: uuid.UUID, now: dt.datetime) -> None:
    await session.execute(
        delete(DashboardSession).where(DashboardSession.user_id == user_id, DashboardSession.expires_at <= now)
    )


async def user_of_session(session: AsyncSession, token_hash: str, now: dt.datetime) -> User | None:
    """The user of the unexpired session keyed by `token_hash`."""
    return await session.scalar(
        select(User)
        .join(DashboardSession, DashboardSession.user_id == User.id)
        .where(DashboardSession.token_hash == token_hash, DashboardSession.expires_at > now)
    )


async def end_session(session: AsyncSession, token_hash: str) -> None:
    await session.execute(delete(DashboardSession).where(DashboardSession.token_hash == token_hash))


async def end_sessions_of(session: AsyncSession, user_id: uuid.UUID) -> None:
    await session.execute(delete(DashboardSession).where(DashboardSession.user_id == user_id))


async def usable_reset(session: AsyncSession, token_hash: str, now: dt.datetime) -> PasswordReset | None:
    """The unused, unexpired reset link keyed by `token_hash`."""
    return await session.scalar(
        select(PasswordReset).where(
            PasswordReset.token_hash == token_hash,
            PasswordReset.used_at.is_(None),
            PasswordReset.expires_at > now,
        )
    )


async def spend_resets_of(session: AsyncSession, user_id: uuid.UUID, now: dt.datetime) -> None:
    """Mark every open reset link of the user used."""
    await session.execute(
        update(PasswordReset)
        .where(PasswordReset.user_id == user_id, PasswordReset.used_at.is_(None))
        .values(used_at=now)
    )
