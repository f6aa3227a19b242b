"""Gather what a dossier states about a classification: the record with its re-scores, and who asked.

One classification for its own account (anyone else: 404), or every classification of a period, streamed from a
server-side cursor page by page, so an export of any size holds one page at a time.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts.models import User
from compliance_api.auth.caller import Actor
from compliance_api.auth.models import ApiToken
from compliance_api.classify import service as classify_service
from compliance_api.classify.models import Classification, RecordWithHistory
from compliance_api.dossier import queries
from compliance_api.kit.environment import Environment

EXPORT_PAGE_ROWS = 50
"""Rows fetched from the cursor at a time by an export: each page costs three more reads (re-scores, users, tokens)."""


@dataclass(frozen=True, slots=True)
class Asker:
    """Who asked: the account, and the token or the dashboard user (None when that row no longer exists)."""

    account: User | None
    token_id: uuid.UUID | None
    token: ApiToken | None
    dashboard_user_id: uuid.UUID | None
    dashboard_user: User | None
    request_id: str | None


@dataclass(frozen=True, slots=True)
class DossierFacts:
    """A classification with its re-scores, in its environment, with who asked."""

    environment: Environment
    found: RecordWithHistory
    asker: Asker


def _asker(row: Classification, users: dict[uuid.UUID, User], tokens: dict[uuid.UUID, ApiToken]) -> Asker:
    return Asker(
        account=users.get(row.user_id),
        token_id=row.token_id,
        token=tokens.get(row.token_id) if row.token_id else None,
        dashboard_user_id=row.asked_by_user_id,
        dashboard_user=users.get(row.asked_by_user_id) if row.asked_by_user_id else None,
        request_id=row.request_id,
    )


async def _people(
    session: AsyncSession, rows: Sequence[Classification]
) -> tuple[dict[uuid.UUID, User], dict[uuid.UUID, ApiToken]]:
    """The accounts, dashboard users and tokens the rows name, in two reads."""
    user_ids = {row.user_id for row in rows} | {row.asked_by_user_id for row in rows if row.asked_by_user_id}
    token_ids = {row.token_id for row in rows if row.token_id}
    users = await queries.users(session, user_ids)
    tokens: dict[uuid.UUID, ApiToken] = {}
    if token_ids:
        tokens = await queries.tokens(session, token_ids)
    return users, tokens


async def dossier_facts(
    session: AsyncSession,
    actor: Actor,
    classification_id: uuid.UUID,
    retention: classify_service.Retention,
    now: dt.datetime,
) -> DossierFacts:
    """The actor's own classification; another account's, the other environment's or an expired one is 404."""
    found = await classify_service.get_classification(session, actor, classification_id, retention, now)
    users, tokens = await _people(session, [found.record])
    return DossierFacts(actor.environment, found, _asker(found.record, users, tokens))


@dataclass(frozen=True, slots=True)
class Period:
    """Classifications of one environment created in [start, end), optionally of one account."""

    environment: Environment
    start: dt.datetime
    end: dt.datetime
    user_id: uuid.UUID | None = None

    def bounds(self, since: dt.datetime) -> tuple[Environment, dt.datetime, dt.datetime, uuid.UUID | None]:
        """Environment, first instant (not before `since`), end and account of what an export of it reads."""
        return self.environment, max(self.start, since), self.end, self.user_id


async def count_period(session: AsyncSession, period: Period, since: dt.datetime) -> int:
    """How many classifications an export of the period will write (for its progress bar)."""
    return await queries.count_period(session, *period.bounds(since))


async def stream_period(
    session: AsyncSession, period: Period, since: dt.datetime, *, page_rows: int = EXPORT_PAGE_ROWS
) -> AsyncIterator[DossierFacts]:
    """Every classification of the period, oldest first, read from a server-side cursor one page at a time (the
    session's identity map holds rows weakly, so a page is freed once its dossiers are written)."""
    result = await queries.stream_period(session, *period.bounds(since), page_rows=page_rows)
    async for page in result.partitions():
        users, tokens = await _people(session, page)
        for found in await classify_service.with_histories(session, page):
            yield DossierFacts(period.environment, found, _asker(found.record, users, tokens))
