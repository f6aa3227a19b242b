"""The passports' statements: passports, verifications, shares and their views. The rules that call them live in
`service.py`; the hot routes' two reads (`OWN`, `SHARE`) are run by `reader.py`, on connections of its own."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from sqlalchemy import Row, Select, bindparam, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from compliance_api.accounts.models import User
from compliance_api.kit.environment import Environment, scoped
from compliance_api.passport.models import Passport, PassportShare, PassportShareView, PassportVerification


def add(session: AsyncSession, row: Passport | PassportVerification | PassportShare) -> None:
    session.add(row)


async def passport_of(session: AsyncSession, user_id: uuid.UUID, environment: Environment) -> Passport | None:
    statement = scoped(select(Passport), Passport, environment).where(Passport.user_id == user_id)
    return await session.scalar(statement)


async def verification(session: AsyncSession, passport_id: uuid.UUID, check: str) -> PassportVerification | None:
    return await session.scalar(
        select(PassportVerification).where(
            PassportVerification.passport_id == passport_id, PassportVerification.check == check
        )
    )


async def verifications(session: AsyncSession, passport_id: uuid.UUID) -> list[PassportVerification]:
    """The passport's verifications, by check."""
    statement = select(PassportVerification).where(PassportVerification.passport_id == passport_id)
    return list(await session.scalars(statement.order_by(PassportVerification.check)))


def shares_of(passport: Passport) -> Select[PassportShare]:
    return scoped(select(PassportShare), PassportShare, passport.environment).where(
        PassportShare.passport_id == passport.id
    )


async def shares(session: AsyncSession, passport: Passport) -> list[PassportShare]:
    """The passport's shares, oldest first."""
    return list(await session.scalars(shares_of(passport).order_by(PassportShare.created_at)))


async def shares_of_passport(session: AsyncSession, passport_id: uuid.UUID) -> Sequence[PassportShare]:
    """Every share of the passport, whatever its environment."""
    return (await session.scalars(select(PassportShare).where(PassportShare.passport_id == passport_id))).all()


async def share_of(
    session: AsyncSession, passport_id: uuid.UUID, environment: Environment, share_id: uuid.UUID
) -> PassportShare | None:
    return await session.scalar(
        scoped(select(PassportShare), PassportShare, environment).where(
            PassportShare.id == share_id, PassportShare.passport_id == passport_id
        )
    )


async def share_by_hash(session: AsyncSession, hashes: Collection[str]) -> PassportShare | None:
    """The share keyed by one of these hashes, in whichever environment."""
    return await session.scalar(select(PassportShare).where(PassportShare.token_hash.in_(hashes)))


async def share(session: AsyncSession, share_id: uuid.UUID) -> PassportShare | None:
    return await session.get(PassportShare, share_id)


def views_of(share_id: uuid.UUID) -> Select[PassportShareView]:
    return select(PassportShareView).where(PassportShareView.share_id == share_id)


async def emails(session: AsyncSession, user_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, str]:
    return {
        user_id: email
        for user_id, email in await session.execute(select(User.id, User.email).where(User.id.in_(user_ids)))
    }


async def views_with_viewers(
    session: AsyncSession, passport: Passport
) -> Sequence[Row[uuid.UUID, dt.datetime, uuid.UUID, str]]:
    """(share id, viewed at, viewer id, viewer email) of every view of the passport's shares, oldest first."""
    statement = (
        select(PassportShareView.share_id, PassportShareView.viewed_at, User.id, User.email)
        .join(User, User.id == PassportShareView.viewer_user_id)
        .join(PassportShare, PassportShare.id == PassportShareView.share_id)
        .where(PassportShare.passport_id == passport.id)
    )
    return (
        await session.execute(
            scoped(statement, PassportShare, passport.environment).order_by(PassportShareView.viewed_at)
        )
    ).all()


async def environment_elsewhere(
    session: AsyncSession, share_id: uuid.UUID, user_id: uuid.UUID, environment: Environment
) -> Environment | None:
    """The other environment in which this share is of the user's passport, if it is."""
    return await session.scalar(
        select(PassportShare.environment)
        .join(Passport, Passport.id == PassportShare.passport_id)
        .where(PassportShare.id == share_id, Passport.user_id == user_id, PassportShare.environment != environment)
    )


async def active_share_elsewhere(
    session: AsyncSession, hashes: Collection[str], environment: Environment, now: dt.datetime
) -> Environment | None:
    """The other environment in which an active share is keyed by one of these hashes, if one is."""
    return await session.scalar(
        select(PassportShare.environment).where(
            PassportShare.token_hash.in_(hashes),
            PassportShare.environment != environment,
            PassportShare.revoked_at.is_(None),
            PassportShare.expires_at > now,
        )
    )


_VERIFICATION_COLUMNS = (
    PassportVerification.check,
    PassportVerification.verified_on,
    PassportVerification.expires_on,
    PassportVerification.evidence_ref,
)
OWN = (
    select(Passport.user_id, Passport.environment, Passport.sector, Passport.updated_at, *_VERIFICATION_COLUMNS)
    .outerjoin(PassportVerification, PassportVerification.passport_id == Passport.id)
    .where(Passport.user_id == bindparam("user_id"), Passport.environment == bindparam("environment"))
    .order_by(PassportVerification.check)
)
"""The caller's passport with its verifications, one row per verification (one row of NULLs without any)."""

SHARE = (
    select(
        PassportShare.id,
        PassportShare.token_hash,
        PassportShare.environment,
        PassportShare.expires_at,
        PassportShare.revoked_at,
        Passport.user_id,
        *_VERIFICATION_COLUMNS,
    )
    .join(Passport, Passport.id == PassportShare.passport_id)
    .outerjoin(PassportVerification, PassportVerification.passport_id == Passport.id)
    .where(
        PassportShare.token_hash.in_([bindparam("current_hash"), bindparam("previous_hash")]),
        PassportShare.environment == bindparam("environment"),
    )
    .order_by(PassportVerification.check)
)
"""The share behind a token hash (the current or the retired secret's) with its passport's verifications."""

CHANGE_VERSION = "SELECT version FROM passport_change WHERE id = 1"
"""The counter that triggers raise with every change the hot reads could see (SQLite)."""


async def engine_rows(
    engine: AsyncEngine, statement: Select[*tuple[Any, ...]], parameters: Mapping[str, Any]
) -> list[tuple[Any, ...]]:
    """A hot read's rows through the engine, on a connection of its own (where no direct reader applies)."""
    async with engine.connect() as connection:
        result = await connection.execute(statement, dict(parameters))
        return [tuple(row) for row in result]
