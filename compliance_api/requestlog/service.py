"""Reading the request log: one account's requests in one environment, filtered and paged, and their daily usage."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.auth.models import ApiToken
from compliance_api.kit.environment import Environment
from compliance_api.kit.pagination import Cursors, ListFilters, Paged, created_key, paginate
from compliance_api.kit.schemas import NamedEnum
from compliance_api.requestlog import queries
from compliance_api.requestlog.models import ApiRequest

RETENTION = dt.timedelta(days=30)
"""How long the request log keeps a request, in both environments."""
USAGE_DAYS = 30


class StatusClass(NamedEnum):
    """A class of HTTP statuses: `2xx` (success), `3xx` (redirects), `4xx` (client errors), `5xx` (server errors)."""

    success = "2xx"
    redirect = "3xx"
    client_error = "4xx"
    server_error = "5xx"

    @property
    def bounds(self) -> tuple[int, int]:
        first = int(self.value[0]) * 100
        return first, first + 100


@dataclass(frozen=True, slots=True)
class LogOwner:
    """Whose request log: an account in one environment."""

    user_id: uuid.UUID
    environment: Environment
    dashboard_too: bool = False
    """Also the dashboard's own assessments (checks and saves, logged with no token): its log pages show them; the
    API's request log lists the requests made with tokens."""


@dataclass(frozen=True, slots=True)
class Filters:
    status_class: StatusClass | None = None
    path: str | None = None  # a prefix of the route template, e.g. `/v1/wtta`
    request_id: str | None = None

    @property
    def by_name(self) -> ListFilters:
        """The filters by the query parameter that sets each, for the cursors they issue."""
        return {"status_class": self.status_class, "path": self.path, "request_id": self.request_id}


@dataclass(frozen=True, slots=True)
class LogRow:
    """A row of the log with the name its token has now."""

    row: ApiRequest
    token_name: str | None

    @property
    def problem(self) -> dict[str, Any] | None:
        """The stored problem body as an object (None for successful answers)."""
        if self.row.problem is None:
            return None
        try:
            parsed = orjson.loads(self.row.problem)
        except orjson.JSONDecodeError:
            return None
        return parsed if isinstance(parsed, dict) else None


def _visible_to(owner: LogOwner, now: dt.datetime) -> Select[ApiRequest]:
    return queries.visible(owner.user_id, owner.environment, now - RETENTION, dashboard_too=owner.dashboard_too)


def _filtered(statement: Select[ApiRequest], filters: Filters) -> Select[ApiRequest]:
    status = None if filters.status_class is None else filters.status_class.bounds
    return queries.filtered(statement, status, filters.path, filters.request_id)


async def list_requests(
    session: AsyncSession,
    owner: LogOwner,
    filters: Filters,
    *,
    limit: int,
    cursor: str | None,
    cursors: Cursors,
    now: dt.datetime,
) -> Paged[LogRow]:
    """A page of the owner's requests of the last 30 days, newest first, each with its token's current name."""
    page = await paginate(
        session,
        _filtered(_visible_to(owner, now), filters),
        ApiRequest.created_at,
        ApiRequest.id,
        limit=limit,
        cursor=cursor,
        cursors=cursors,
        scope=f"requests:{owner.user_id}:{owner.environment.value}",
        key_of=created_key,
        filters=filters.by_name,
    )
    tokens = await _tokens(session, list({row.token_id for row in page.rows if row.token_id is not None}))
    named = [LogRow(row, tokens[row.token_id].name if row.token_id in tokens else None) for row in page.rows]
    return Paged(named, page.has_more, page.next_cursor)


async def get_request(session: AsyncSession, owner: LogOwner, request_id: uuid.UUID, now: dt.datetime) -> LogRow | None:
    """One of the owner's logged requests by its row id; None when it is someone else's, elsewhere or expired."""
    row = await queries.request_in(session, _visible_to(owner, now), request_id)
    if row is None:
        return None
    tokens = await _tokens(session, [row.token_id] if row.token_id is not None else [])
    return LogRow(row, tokens[row.token_id].name if row.token_id in tokens else None)


@dataclass(frozen=True, slots=True)
class DayCount:
    day: dt.date
    requests: int
    rate_limited: int

    @property
    def rate_limited_share(self) -> float:
        return self.rate_limited / self.requests if self.requests else 0.0


class _DayTotals:
    """The totals over `days` of a class that holds them."""

    __slots__ = ()
    days: tuple[DayCount, ...]

    @property
    def requests(self) -> int:
        return sum(d.requests for d in self.days)

    @property
    def rate_limited(self) -> int:
        return sum(d.rate_limited for d in self.days)


@dataclass(frozen=True, slots=True)
class TokenUsage(_DayTotals):
    token_id: uuid.UUID | None  # None: the dashboard's own assessments
    name: str | None
    last4: str | None
    days: tuple[DayCount, ...]


@dataclass(frozen=True, slots=True)
class Usage(_DayTotals):
    """Requests per UTC day of the last 30 days (today included, oldest first), in total and per token."""

    days: tuple[DayCount, ...]
    tokens: tuple[TokenUsage, ...]


def usage_days(today: dt.date) -> list[dt.date]:
    return [today - dt.timedelta(days=back) for back in range(USAGE_DAYS - 1, -1, -1)]


def _as_date(value: object) -> dt.date:
    return value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value))


async def usage(session: AsyncSession, owner: LogOwner, now: dt.datetime) -> Usage:
    """Counted in the database, grouped by day and token (one index range scan of the owner's 30 days)."""
    days = usage_days(now.date())
    since = dt.datetime.combine(days[0], dt.time(), tzinfo=dt.UTC)
    counts: dict[uuid.UUID | None, dict[dt.date, tuple[int, int]]] = {}
    for raw_day, token_id, requests, rate_limited in await queries.daily_counts(
        session, owner.user_id, owner.environment, since
    ):
        counts.setdefault(token_id, {})[_as_date(raw_day)] = (int(requests), int(rate_limited or 0))
    tokens = await _tokens(session, [token_id for token_id in counts if token_id is not None])
    per_token = tuple(
        TokenUsage(
            token_id,
            tokens[token_id].name if token_id in tokens else None,
            tokens[token_id].last4 if token_id in tokens else (None if token_id is None else "????"),
            tuple(DayCount(d, *by_day.get(d, (0, 0))) for d in days),
        )
        for token_id, by_day in sorted(counts.items(), key=lambda item: -sum(n for n, _ in item[1].values()))
    )
    totals = tuple(
        DayCount(d, sum(t.days[i].requests for t in per_token), sum(t.days[i].rate_limited for t in per_token))
        for i, d in enumerate(days)
    )
    return Usage(totals, per_token)


async def _tokens(session: AsyncSession, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, ApiToken]:
    if not ids:
        return {}
    return await queries.tokens(session, ids)


async def purge_expired(session: AsyncSession, now: dt.datetime) -> int:
    """Delete requests past the log's 30 days, in both environments."""
    return await queries.purge_before(session, now - RETENTION)
