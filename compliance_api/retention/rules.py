"""The registry of sandbox purge rules: for each table, which rows are sandbox data past retention.

A row's age is when it was last written or confirmed (created, imported, last verified), never a business date such
as an observation or activity date. The documented sandbox fixtures are never stale. Rules run in registry
order, children before parents, so a parent goes only once nothing of it is left and no ON DELETE CASCADE removes
rows behind the counts. Production rows never match: every rule requires the sandbox environment.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import ColumnElement, Table
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.classify.models import Classification, ClassificationVerdict
from compliance_api.config import Settings
from compliance_api.dac7.models import Dac7Activity, Dac7Grant, Dac7Report, Dac7Seller
from compliance_api.events.models import OutboxEvent
from compliance_api.passport.models import Passport, PassportShare, PassportShareView, PassportVerification
from compliance_api.rates import service as rates_service
from compliance_api.rates.models import RateBenchmark, RateImport, RateObservation
from compliance_api.requestlog.models import ApiRequest
from compliance_api.retention import queries
from compliance_api.retention.queries import SANDBOX
from compliance_api.webhooks.models import WebhookDelivery, WebhookDeliveryAttempt
from compliance_api.wtta import register_import
from compliance_api.wtta.models import WttaAdmission, WttaImport, WttaStatusChange

Stale = Callable[[dt.datetime], ColumnElement[bool]]


class Step(Protocol):
    """One entry of the registry: removes what is stale in one table and says how many rows went."""

    @property
    def name(self) -> str: ...

    async def run(
        self, session: AsyncSession, *, cutoff: dt.datetime, settings: Settings, done: Mapping[str, int]
    ) -> int: ...


@dataclass(frozen=True, slots=True)
class PurgeRule:
    """Delete the rows of `table` that `stale(cutoff)` selects (sandbox rows older than the cutoff, no fixtures)."""

    table: Table
    stale: Stale
    on_deleted: Callable[[AsyncSession], Awaitable[None]] | None = None  # when rows went, in the same transaction

    @property
    def name(self) -> str:
        return str(self.table.name)  # a plain str: table names are `quoted_name`s

    async def run(
        self, session: AsyncSession, *, cutoff: dt.datetime, settings: Settings, done: Mapping[str, int]
    ) -> int:
        deleted = await queries.delete_where(session, self.table, self.stale(cutoff))
        if deleted and self.on_deleted is not None:
            await self.on_deleted(session)
        return deleted


@dataclass(frozen=True, slots=True)
class RecomputeBenchmarks:
    """Benchmarks are derived: once observations went, recompute the sandbox's; counts the benchmarks that vanished."""

    after: str = RateObservation.__tablename__
    name: str = RateBenchmark.__tablename__

    async def run(
        self, session: AsyncSession, *, cutoff: dt.datetime, settings: Settings, done: Mapping[str, int]
    ) -> int:
        if not done.get(self.after):
            return 0
        before = await queries.count_sandbox_benchmarks(session)
        after = await rates_service.recompute(session, environment=SANDBOX, window_months=settings.rates_window_months)
        return max(before - after, 0)


async def _register_changed(session: AsyncSession) -> None:
    """API processes keep the register in memory (`wtta/replica.py`): raising its version makes them reload it."""
    await register_import.raise_version(session, SANDBOX)


def _table(model: type[object]) -> Table:
    table = model.__table__  # type: ignore[attr-defined]
    assert isinstance(table, Table)
    return table


def aged(model: type[object], stamp: str = "created_at") -> PurgeRule:
    """The plain rule: sandbox rows of `model` whose `stamp` column is before the cutoff (no fixtures among them)."""
    table = _table(model)
    return PurgeRule(table, lambda cutoff: queries.aged(table, stamp, cutoff))


# Environment-owned tables the purge leaves alone: credentials and configuration (tokens, webhook endpoints), not
# data, and records with their own 24-hour purge (`compliance-api idempotency purge`). Users are not
# environment-owned and stay too.
# The WTTA register's version counter is not data either (the purge raises it when admissions or imports go).
# The re-score runs say when monitored verdicts were last re-scored, per environment: a schedule, not data. So does
# the register file a refresh refused (at most one row per URL, removed by the next import from it). The DAC7 platform
# operator's identity is configuration too (`dac7 operator`, one row per environment).
KEPT: frozenset[str] = frozenset(
    {
        "api_token",
        "idempotency_record",
        "webhook_endpoint",
        "wtta_register_version",
        "classification_rescore_run",
        "wtta_refused_file",
        "dac7_operator",
    }
)

# Children before parents.
RULES: tuple[Step, ...] = (
    aged(ClassificationVerdict),
    aged(Classification),
    aged(WebhookDeliveryAttempt, "attempted_at"),
    aged(WebhookDelivery),
    aged(OutboxEvent),
    aged(ApiRequest),
    PurgeRule(_table(WttaStatusChange), queries.stale_status_change),
    PurgeRule(_table(WttaAdmission), queries.stale_admission, _register_changed),
    PurgeRule(_table(WttaImport), queries.stale_wtta_import, _register_changed),
    PurgeRule(_table(RateObservation), queries.stale_observation),
    PurgeRule(_table(RateImport), queries.stale_rate_import),
    RecomputeBenchmarks(),
    PurgeRule(_table(PassportShareView), queries.stale_share_view),
    PurgeRule(_table(PassportShare), queries.stale_share),
    PurgeRule(_table(PassportVerification), queries.stale_verification),
    PurgeRule(_table(Passport), queries.stale_passport),
    PurgeRule(_table(Dac7Activity), queries.stale_activity),
    PurgeRule(_table(Dac7Report), queries.stale_report),
    PurgeRule(_table(Dac7Grant), queries.stale_grant),
    PurgeRule(_table(Dac7Seller), queries.stale_seller),
)
