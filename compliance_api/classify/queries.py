"""The classifications' statements: audit records, their later verdicts and the re-scoring runs. The rules that call
them live in `service.py`, `rescore.py`, `answers.py` and `listing.py` (the list's columns and page)."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Collection, Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import LargeBinary, Row, Select, delete, func, insert, select, tuple_, type_coerce, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Bundle, InstrumentedAttribute

from compliance_api.classify.models import Classification, ClassificationVerdict, RescoreRun
from compliance_api.events.models import OutboxEvent
from compliance_api.kit.environment import Environment, owned_elsewhere, scoped

ListedT = TypeVar("ListedT")


def listed(
    columns: Bundle[ListedT], user_id: uuid.UUID, environment: Environment, since: dt.datetime
) -> Select[ListedT]:
    """The user's classifications in the environment created since `since`, as `columns` (the list's)."""
    return scoped(select(columns), Classification, environment).where(
        Classification.user_id == user_id, Classification.created_at >= since
    )


def listed_matching(
    statement: Select[ListedT],
    equal: Mapping[InstrumentedAttribute[Any], object],
    created_after: dt.datetime | None,
    created_before: dt.datetime | None,
) -> Select[ListedT]:
    """Only the rows whose column equals each value given (None: any), created in the open interval given."""
    for column, value in equal.items():
        if value is not None:
            statement = statement.where(column == value)
    if created_after is not None:
        statement = statement.where(Classification.created_at > created_after)
    if created_before is not None:
        statement = statement.where(Classification.created_at < created_before)
    return statement


async def own_record(
    session: AsyncSession,
    user_id: uuid.UUID,
    environment: Environment,
    classification_id: uuid.UUID,
    since: dt.datetime,
) -> Classification | None:
    """The user's record in the environment, created since `since`."""
    statement = scoped(select(Classification), Classification, environment).where(
        Classification.id == classification_id,
        Classification.user_id == user_id,
        Classification.created_at >= since,
    )
    return await session.scalar(statement)


async def later_verdicts(
    session: AsyncSession, classification_ids: Collection[uuid.UUID]
) -> Sequence[ClassificationVerdict]:
    """The later verdicts of these classifications, by classification, oldest first."""
    rows = await session.scalars(
        select(ClassificationVerdict)
        .where(ClassificationVerdict.classification_id.in_(classification_ids))
        .order_by(ClassificationVerdict.classification_id, ClassificationVerdict.created_at)
    )
    return rows.all()


async def history(session: AsyncSession, classification_id: uuid.UUID) -> Sequence[ClassificationVerdict]:
    """The later verdicts of one classification, oldest first."""
    rows = await session.scalars(
        select(ClassificationVerdict)
        .where(ClassificationVerdict.classification_id == classification_id)
        .order_by(ClassificationVerdict.created_at)
    )
    return rows.all()


async def delete_before(session: AsyncSession, environment: Environment, before: dt.datetime) -> int:
    """Delete the environment's audit records created before `before`; returns how many."""
    result = await session.execute(
        delete(Classification).where(Classification.environment == environment, Classification.created_at < before)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


async def stored_verdicts(
    session: AsyncSession, ids: Collection[uuid.UUID]
) -> Sequence[Row[uuid.UUID, uuid.UUID, Environment, bytes]]:
    """(id, user, environment, the stored frame as written) of these classifications, selected by primary key alone:
    with the account and environment in the WHERE clause, SQLite (and PostgreSQL before its statistics caught up with
    a bulk insert) walked the account's index instead of probing the keys."""
    raw = type_coerce(Classification.result, LargeBinary)  # the stored frame, not the parsed object
    statement = select(Classification.id, Classification.user_id, Classification.environment, raw).where(
        Classification.id.in_(ids)
    )
    return (await session.execute(statement)).all()


# ---- re-scoring -----------------------------------------------------------------------------------------------

# Read as plain rows, not ORM objects: 100,000 of them in one session would make every flush walk them all.
RECORD_COLUMNS = (
    Classification.id,
    Classification.kind,
    Classification.request,
    Classification.language,
    Classification.result,
    Classification.user_id,
    Classification.reference,
    Classification.environment,
    Classification.created_at,
)


async def latest_verdicts(
    session: AsyncSession, ids: Sequence[uuid.UUID]
) -> Sequence[Row[uuid.UUID, uuid.UUID, dict[str, Any]]]:
    """(classification, verdict id, result) of every later verdict of these classifications, oldest first."""
    rows = await session.execute(
        select(ClassificationVerdict.classification_id, ClassificationVerdict.id, ClassificationVerdict.result)
        .where(ClassificationVerdict.classification_id.in_(ids))
        .order_by(ClassificationVerdict.created_at)
    )
    return rows.all()


def _monitored(environment: Environment, since: dt.datetime) -> Select[Any]:
    return scoped(select(*RECORD_COLUMNS), Classification, environment).where(
        Classification.monitor.is_(True), Classification.created_at >= since
    )


async def count_monitored(session: AsyncSession, environment: Environment, since: dt.datetime) -> int:
    return int(await session.scalar(select(func.count()).select_from(_monitored(environment, since).subquery())) or 0)


async def monitored_page(
    session: AsyncSession,
    environment: Environment,
    since: dt.datetime,
    after: tuple[dt.datetime, uuid.UUID] | None,
    limit: int,
) -> Sequence[Row[Any]]:
    """Up to `limit` monitored records created since `since`, after the key `after`, oldest first."""
    statement = _monitored(environment, since)
    if after is not None:
        statement = statement.where(tuple_(Classification.created_at, Classification.id) > tuple_(*after))
    page: Sequence[Row[Any]] = (
        await session.execute(statement.order_by(Classification.created_at, Classification.id).limit(limit))
    ).all()
    return page


async def store_rescored(
    session: AsyncSession,
    verdicts: list[dict[str, Any]],
    current: list[dict[str, Any]],
    events: list[dict[str, Any]],
) -> None:
    """New verdicts, the records' current verdicts and the events, in three statements."""
    await session.execute(insert(ClassificationVerdict), verdicts)
    await session.execute(update(Classification), current)
    await session.execute(insert(OutboxEvent), events)


async def claim_run(
    session: AsyncSession, environment: Environment, signature: str, today: dt.date, now: dt.datetime
) -> bool:
    """Claim the environment's run for `today` under `signature` where it ran earlier or under other rulesets, or
    record its first run; False when it already ran today under these."""
    claimed = await session.execute(
        update(RescoreRun)
        .where(
            RescoreRun.environment == environment,
            (RescoreRun.ran_on < today) | (RescoreRun.rulesets != signature),
        )
        .values(ran_on=today, rulesets=signature, ran_at=now)
    )
    if claimed.rowcount:  # type: ignore[attr-defined]
        return True
    if await session.get(RescoreRun, environment) is not None:
        return False
    session.add(RescoreRun(environment=environment, ran_on=today, rulesets=signature, ran_at=now))
    await session.flush()
    return True


environment_elsewhere = owned_elsewhere(Classification, Classification.id, Classification.user_id)
"""The other environment in which this id is one of the user's classifications, if it is."""
