"""`GET /v1/classifications`: the caller's own classifications in its environment, filtered, newest first (the
statement is `queries.listed`'s; its columns and page are here)."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Bundle

from compliance_api.auth.caller import Actor
from compliance_api.classify import queries
from compliance_api.classify.models import Classification, ClassificationKind
from compliance_api.classify.verdict import Country, Verdict
from compliance_api.kit.environment import Environment
from compliance_api.kit.pagination import Cursors, ListFilters, Paged, created_key, paginate


@dataclass(frozen=True, slots=True)
class ClassificationFilter:
    reference: str | None = None
    verdict: Verdict | None = None
    kind: ClassificationKind | None = None
    country: Country | None = None
    monitored: bool | None = None
    created_after: dt.datetime | None = None
    created_before: dt.datetime | None = None

    @property
    def by_name(self) -> ListFilters:
        """The filters by the query parameter that sets each, for the cursors they issue."""
        return {
            "reference": self.reference,
            "verdict": self.verdict,
            "kind": self.kind,
            "country": self.country,
            "monitored": self.monitored,
            "created_after": self.created_after,
            "created_before": self.created_before,
        }


@dataclass(frozen=True, slots=True)
class Listed:
    """What an item of the list shows, read from the row's columns: never its stored verdict or request, whose
    decompression a page of rows would pay for nothing."""

    id: uuid.UUID
    token_id: uuid.UUID | None
    kind: ClassificationKind
    country: str | None
    verdict: str
    original_verdict: str
    ruleset_id: str
    ruleset_version: str
    ruleset_valid_from: dt.date
    reference: str | None
    client_metadata: dict[str, str] | None
    monitor: bool
    created_at: dt.datetime
    environment: Environment


class _ListedBundle(Bundle[Listed]):
    """The listed columns, each row loaded as a `Listed` (no ORM instance, no identity map)."""

    def create_row_processor(
        self, query: Any, procs: Sequence[Callable[[Any], Any]], labels: Sequence[str]
    ) -> Callable[[Any], Listed]:
        def listed(row: Any) -> Listed:
            return Listed(*(proc(row) for proc in procs))

        return listed


_LISTED = _ListedBundle(
    "listed",
    Classification.id,
    Classification.token_id,
    Classification.kind,
    Classification.country,
    Classification.verdict,
    Classification.original_verdict,
    Classification.ruleset_id,
    Classification.ruleset_version,
    Classification.ruleset_valid_from,
    Classification.reference,
    Classification.client_metadata,
    Classification.monitor,
    Classification.created_at,
    Classification.environment,
)


def _scope(caller: Actor) -> str:
    return f"classifications:{caller.user_id}:{caller.environment.value}"


async def list_classifications(
    session: AsyncSession,
    caller: Actor,
    filters: ClassificationFilter,
    *,
    limit: int,
    cursor: str | None,
    cursors: Cursors,
    since: dt.datetime,
) -> Paged[Listed]:
    """One page of the caller's classifications within retention (`since`), newest first (the API and the
    dashboard)."""
    equal = {
        Classification.reference: filters.reference,
        Classification.verdict: filters.verdict,
        Classification.kind: filters.kind,
        Classification.country: filters.country,
        Classification.monitor: filters.monitored,
    }
    statement = queries.listed(_LISTED, caller.user_id, caller.environment, since)
    return await paginate(
        session,
        queries.listed_matching(statement, equal, filters.created_after, filters.created_before),
        Classification.created_at,
        Classification.id,
        limit=limit,
        cursor=cursor,
        cursors=cursors,
        scope=_scope(caller),
        key_of=created_key,
        filters=filters.by_name,
    )
