"""DAC7's statements: sellers, grants, activities, reports and the operator. The rules that call them live in
`service.py`, `dpi.py`, `figures.py`, `operator.py` and `retention.py`."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Row, Select, delete, exists, func, insert, not_, select
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts.models import User
from compliance_api.dac7.models import ActivityType, Dac7Activity, Dac7Grant, Dac7Operator, Dac7Report, Dac7Seller
from compliance_api.kit.environment import Environment, owned_elsewhere, scoped

LIVE = Environment.live


def add(session: AsyncSession, row: Dac7Seller | Dac7Activity | Dac7Grant | Dac7Operator) -> None:
    session.add(row)


async def user(session: AsyncSession, user_id: uuid.UUID | None) -> User | None:
    return await session.get(User, user_id)


async def existing_user(session: AsyncSession, user_id: uuid.UUID) -> User:
    """The user, which must exist (the caller's own)."""
    return await session.get_one(User, user_id)


async def emails(session: AsyncSession, user_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, str]:
    statement = select(User.id, User.email).where(User.id.in_(user_ids))
    return {user_id: email for user_id, email in await session.execute(statement)}


# ---- sellers --------------------------------------------------------------------------------------------------


async def seller_of(session: AsyncSession, user_id: uuid.UUID, environment: Environment) -> Dac7Seller | None:
    statement = scoped(select(Dac7Seller), Dac7Seller, environment).where(Dac7Seller.user_id == user_id)
    return await session.scalar(statement)


async def sellers_of_users(
    session: AsyncSession, environment: Environment, user_ids: Collection[uuid.UUID]
) -> dict[uuid.UUID, Dac7Seller]:
    """The sellers of these users here, by user id."""
    statement = scoped(select(Dac7Seller), Dac7Seller, environment).where(Dac7Seller.user_id.in_(user_ids))
    return {s.user_id: s for s in await session.scalars(statement)}


async def users_of_sellers(session: AsyncSession, seller_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, uuid.UUID]:
    """Each seller's user id, by seller id."""
    statement = select(Dac7Seller.id, Dac7Seller.user_id).where(Dac7Seller.id.in_(seller_ids))
    return {seller_id: user_id for seller_id, user_id in await session.execute(statement)}


async def sealed_sellers(session: AsyncSession) -> Sequence[Dac7Seller]:
    """Every seller (both environments) whose identity is sealed, by id."""
    sealed = select(Dac7Seller).where(Dac7Seller.identity_sealed.is_not(None)).order_by(Dac7Seller.id)
    return (await session.scalars(sealed)).all()


async def seller_rows(
    session: AsyncSession, seller_ids: Collection[uuid.UUID]
) -> Sequence[Row[uuid.UUID, uuid.UUID, str, str, bytes | None]]:
    """(id, user_id, member_state, kind, identity_sealed) of these sellers, by id."""
    columns = select(
        Dac7Seller.id, Dac7Seller.user_id, Dac7Seller.member_state, Dac7Seller.kind, Dac7Seller.identity_sealed
    )
    return (await session.execute(columns.where(Dac7Seller.id.in_(seller_ids)).order_by(Dac7Seller.id))).all()


async def export_candidates(session: AsyncSession, environment: Environment, year: int) -> list[uuid.UUID]:
    """Sellers with activities in the year, or with a record sent for it, by id."""
    active = select(Dac7Activity.seller_id).where(Dac7Activity.year == year).distinct()
    reported = select(Dac7Report.seller_id).where(Dac7Report.year == year)
    statement = scoped(select(Dac7Seller.id), Dac7Seller, environment).where(
        Dac7Seller.id.in_(active) | Dac7Seller.id.in_(reported)
    )
    return sorted(await session.scalars(statement))


# ---- activities and figures -----------------------------------------------------------------------------------


async def activities_by_external_id(
    session: AsyncSession, environment: Environment, external_ids: Collection[str]
) -> dict[str, Dac7Activity]:
    statement = scoped(select(Dac7Activity), Dac7Activity, environment).where(
        Dac7Activity.external_id.in_(external_ids)
    )
    return {a.external_id: a for a in await session.scalars(statement)}


async def quarter_sums(
    session: AsyncSession, seller_ids: Collection[uuid.UUID], year: int
) -> Sequence[Row[uuid.UUID, ActivityType, int, int, int, int, int]]:
    """Per (seller, activity type, quarter) of the year: (seller_id, type, quarter, count, net, fees, taxes)."""
    a = Dac7Activity
    statement = (
        select(
            a.seller_id,
            a.activity_type,
            a.quarter,
            func.count(),
            func.sum(a.consideration_cents - a.fees_cents - a.taxes_cents),
            func.sum(a.fees_cents),
            func.sum(a.taxes_cents),
        )
        .where(a.seller_id.in_(seller_ids), a.year == year)
        .group_by(a.seller_id, a.activity_type, a.quarter)
    )
    return (await session.execute(statement)).all()


# ---- reports --------------------------------------------------------------------------------------------------


async def report_of(session: AsyncSession, seller_id: uuid.UUID, year: int) -> Dac7Report | None:
    return await session.scalar(select(Dac7Report).where(Dac7Report.seller_id == seller_id, Dac7Report.year == year))


async def reported_at(session: AsyncSession, seller_id: uuid.UUID, year: int) -> datetime | None:
    return await session.scalar(
        select(Dac7Report.reported_at).where(Dac7Report.seller_id == seller_id, Dac7Report.year == year)
    )


async def reports_of(
    session: AsyncSession, seller_ids: Collection[uuid.UUID], year: int
) -> dict[uuid.UUID, Dac7Report]:
    """The year's reports of these sellers, by seller id."""
    statement = select(Dac7Report).where(Dac7Report.seller_id.in_(seller_ids), Dac7Report.year == year)
    return {r.seller_id: r for r in await session.scalars(statement)}


async def insert_reports(session: AsyncSession, rows: list[dict[str, Any]]) -> None:
    await session.execute(insert(Dac7Report), rows)


async def any_sent(session: AsyncSession, environment: Environment, year: int) -> bool:
    """Whether a record of the year was already sent in this environment."""
    found = await session.scalar(
        select(Dac7Report.id)
        .join(Dac7Seller, Dac7Seller.id == Dac7Report.seller_id)
        .where(Dac7Seller.environment == environment, Dac7Report.year == year, Dac7Report.doc_ref_id.is_not(None))
        .limit(1)
    )
    return found is not None


# ---- grants ---------------------------------------------------------------------------------------------------


async def holds_grant(
    session: AsyncSession, environment: Environment, seller_user_id: uuid.UUID, grantee_user_id: uuid.UUID
) -> bool:
    statement = scoped(select(Dac7Grant.id), Dac7Grant, environment).where(
        Dac7Grant.seller_user_id == seller_user_id,
        Dac7Grant.grantee_user_id == grantee_user_id,
        Dac7Grant.revoked_at.is_(None),
    )
    return (await session.scalar(statement.limit(1))) is not None


async def active_grant(
    session: AsyncSession, environment: Environment, seller_user_id: uuid.UUID, grantee_user_id: uuid.UUID
) -> Dac7Grant | None:
    statement = scoped(select(Dac7Grant), Dac7Grant, environment).where(
        Dac7Grant.seller_user_id == seller_user_id,
        Dac7Grant.grantee_user_id == grantee_user_id,
        Dac7Grant.revoked_at.is_(None),
    )
    return await session.scalar(statement)


def grants_of(seller_user_id: uuid.UUID, environment: Environment) -> Select[Dac7Grant]:
    return scoped(select(Dac7Grant), Dac7Grant, environment).where(Dac7Grant.seller_user_id == seller_user_id)


async def list_grants(session: AsyncSession, seller_user_id: uuid.UUID, environment: Environment) -> list[Dac7Grant]:
    statement = grants_of(seller_user_id, environment).order_by(Dac7Grant.created_at, Dac7Grant.id)
    return list(await session.scalars(statement))


async def own_grant(
    session: AsyncSession, seller_user_id: uuid.UUID, environment: Environment, grant_id: uuid.UUID
) -> Dac7Grant | None:
    statement = scoped(select(Dac7Grant), Dac7Grant, environment).where(
        Dac7Grant.id == grant_id, Dac7Grant.seller_user_id == seller_user_id
    )
    return await session.scalar(statement)


async def grant(session: AsyncSession, grant_id: uuid.UUID) -> Dac7Grant | None:
    return await session.get(Dac7Grant, grant_id)


# ---- operator -------------------------------------------------------------------------------------------------


async def operator_of(session: AsyncSession, environment: Environment) -> Dac7Operator | None:
    return await session.scalar(scoped(select(Dac7Operator), Dac7Operator, environment))


# ---- retention ------------------------------------------------------------------------------------------------


async def purge_live(session: AsyncSession, kept_from: int, start: datetime) -> tuple[int, int, int]:
    """Delete production activities and reports of periods before `kept_from`, and the sellers with nothing left
    whose identity was last changed before `start`; returns how many of each."""
    live_sellers = select(Dac7Seller.id).where(Dac7Seller.environment == LIVE)
    activities = await session.execute(
        delete(Dac7Activity).where(Dac7Activity.environment == LIVE, Dac7Activity.year < kept_from)
    )
    reports = await session.execute(
        delete(Dac7Report).where(Dac7Report.seller_id.in_(live_sellers), Dac7Report.year < kept_from)
    )
    sellers = await session.execute(
        delete(Dac7Seller).where(
            Dac7Seller.environment == LIVE,
            Dac7Seller.updated_at < start,
            not_(exists().where(Dac7Activity.seller_id == Dac7Seller.id)),
            not_(exists().where(Dac7Report.seller_id == Dac7Seller.id)),
        )
    )
    return (
        int(activities.rowcount),  # type: ignore[attr-defined]
        int(reports.rowcount),  # type: ignore[attr-defined]
        int(sellers.rowcount),  # type: ignore[attr-defined]
    )


environment_elsewhere = owned_elsewhere(Dac7Grant, Dac7Grant.id, Dac7Grant.seller_user_id)
"""The other environment in which this id is one of the user's DAC7 grants (as the seller), if it is."""
