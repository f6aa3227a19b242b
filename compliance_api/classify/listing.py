"""`GET /v1/classifications`: the caller's own classifications in its environment, filtered, newest first."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.auth.caller import Caller
from compliance_api.classify.models import Classification, ClassificationKind
from compliance_api.classify.schemas import ClassificationList, ClassificationSummary
from compliance_api.classify.verdict import Country, Verdict
from compliance_api.errors import ApiError, FieldError
from compliance_api.kit.environment import scoped
from compliance_api.kit.pagination import InvalidCursor, Key, decode_cursor, encode_cursor, keyset_page


@dataclass(frozen=True, slots=True)
class ClassificationFilter:
    reference: str | None = None
    verdict: Verdict | None = None
    kind: ClassificationKind | None = None
    country: Country | None = None
    monitored: bool | None = None
    created_after: dt.datetime | None = None
    created_before: dt.datetime | None = None


def _scope(caller: Caller) -> str:
    return f"classifications:{caller.user_id}:{caller.environment.value}"


async def list_classifications(
    session: AsyncSession,
    caller: Caller,
    filters: ClassificationFilter,
    *,
    limit: int,
    cursor: str | None,
    since: dt.datetime,
) -> ClassificationList:
    """One page of the caller's classifications within retention (`since`), newest first."""
    try:
        after = None if cursor is None else decode_cursor(cursor, _scope(caller))
    except InvalidCursor as exc:
        raise ApiError("validation_failed", str(exc), errors=[FieldError("query.cursor", str(exc))]) from None
    statement = scoped(select(Classification), Classification, caller.environment).where(
        Classification.user_id == caller.user_id, Classification.created_at >= since
    )
    conditions = {
        Classification.reference: filters.reference,
        Classification.verdict: filters.verdict,
        Classification.kind: filters.kind,
        Classification.country: filters.country,
        Classification.monitor: filters.monitored,
    }
    for column, value in conditions.items():
        if value is not None:
            statement = statement.where(column == value)
    if filters.created_after is not None:
        statement = statement.where(Classification.created_at > filters.created_after)
    if filters.created_before is not None:
        statement = statement.where(Classification.created_at < filters.created_before)
    rows, has_more = await keyset_page(
        session, statement, Classification.created_at, Classification.id, limit=limit, after=after
    )
    last = rows[-1] if rows else None
    return ClassificationList(
        data=[_summary(row) for row in rows],
        has_more=has_more,
        next_cursor=encode_cursor(Key(last.created_at, last.id), _scope(caller)) if has_more and last else None,
    )


def _summary(record: Classification) -> ClassificationSummary:
    return ClassificationSummary(
        id=record.id,
        kind=record.kind,
        country=record.country,
        verdict=Verdict(record.verdict),
        original_verdict=Verdict(record.result["verdict"]),
        ruleset=record.result["ruleset"],
        reference=record.reference,
        metadata=record.client_metadata or {},
        monitor=record.monitor,
        created_at=record.created_at,
    )
