"""The registry of sandbox purge rules: for each table, which rows are sandbox data past retention.

A row's age is when it was last written or confirmed (created, imported, last verified), never a business date such
as an observation or activity date. The documented sandbox fixtures are never stale. Rules run in registry
order, children before parents, so a parent goes only once nothing of it is left and no ON DELETE CASCADE removes
rows behind the counts. Production rows never match: every rule requires the sandbox environment.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import ColumnElement, Select, Table, and_, delete, exists, func, not_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from compliance_api.accounts.models import User
from compliance_api.classify.models import Classification, ClassificationVerdict
from compliance_api.config import Settings
from compliance_api.dac7.fixtures import DEMO_ACTIVITY_IDS, UNAUTHORISED_SELLER_EMAIL
from compliance_api.dac7.models import Dac7Activity, Dac7Grant, Dac7Report, Dac7Seller
from compliance_api.demo.fixtures import DEMO_BUSINESS_EMAIL
from compliance_api.events.models import OutboxEvent
from compliance_api.kit.environment import Environment
from compliance_api.passport.fixtures import DEMO_CHECKS, DEMO_FREELANCER_EMAIL
from compliance_api.passport.models import Passport, PassportShare, PassportShareView, PassportVerification
from compliance_api.rates import service as rates_service
from compliance_api.rates.models import RateBenchmark, RateImport, RateObservation
from compliance_api.requestlog.models import ApiRequest
from compliance_api.webhooks.models import WebhookDelivery, WebhookDeliveryAttempt
from compliance_api.wtta import register_import
from compliance_api.wtta.fixtures import DEMO_LOCATION, SANDBOX_ADMISSIONS
from compliance_api.wtta.models import WttaAdmission, WttaImport, WttaStatusChange

SANDBOX = Environment.test
FIXTURE_KVKS = tuple(kvk for kvk, *_ in SANDBOX_ADMISSIONS.values())

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
        result = await session.execute(delete(self.table).where(self.stale(cutoff)))
        deleted = int(result.rowcount)  # type: ignore[attr-defined]
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
        count = select(func.count()).select_from(RateBenchmark).where(RateBenchmark.environment == SANDBOX)
        before = await session.scalar(count) or 0
        after = await rates_service.recompute(session, environment=SANDBOX, window_months=settings.rates_window_months)
        return max(before - after, 0)


async def _register_changed(session: AsyncSession) -> None:
    """API processes keep the register in memory (`wtta/replica.py`): raising its version makes them reload it."""
    await register_import.raise_version(session, SANDBOX)


def _users(*emails: str) -> Select[uuid.UUID]:
    return select(User.id).where(User.email.in_(emails))


def _stale_admission(cutoff: dt.datetime) -> ColumnElement[bool]:
    """Not in any import since the cutoff: an import that listed every cached number verified them all."""
    covered = exists().where(
        WttaImport.environment == SANDBOX, WttaImport.covers_all.is_(True), WttaImport.finished_at >= cutoff
    )
    return and_(
        WttaAdmission.environment == SANDBOX,
        WttaAdmission.last_verified_at < cutoff,
        WttaAdmission.kvk_number.not_in(FIXTURE_KVKS),
        not_(covered),
    )


def _stale_status_change(cutoff: dt.datetime) -> ColumnElement[bool]:
    return and_(
        WttaStatusChange.environment == SANDBOX,
        WttaStatusChange.changed_at < cutoff,
        WttaStatusChange.kvk_number.not_in(FIXTURE_KVKS),
    )


def _stale_wtta_import(cutoff: dt.datetime) -> ColumnElement[bool]:
    """Old imports go, except the newest `demo` import: it says when the fixtures were last refreshed."""
    demo = aliased(WttaImport)
    newest_demo = (
        select(demo.id)
        .where(demo.environment == SANDBOX, demo.location == DEMO_LOCATION)
        .order_by(demo.finished_at.desc())
        .limit(1)
    )
    return and_(WttaImport.environment == SANDBOX, WttaImport.finished_at < cutoff, WttaImport.id.not_in(newest_demo))


def _stale_rate_import(cutoff: dt.datetime) -> ColumnElement[bool]:
    """Imported files; the synthetic observations (`demo`, `rates generate`) are the sandbox's fixture rates."""
    return and_(RateImport.environment == SANDBOX, RateImport.imported_at < cutoff, RateImport.synthetic.is_(False))


def _stale_observation(cutoff: dt.datetime) -> ColumnElement[bool]:
    """An observation is as old as its import (its `observed_on` is a business date)."""
    return RateObservation.import_id.in_(select(RateImport.id).where(_stale_rate_import(cutoff)))


def _sandbox_passports() -> Select[uuid.UUID]:
    return select(Passport.id).where(Passport.environment == SANDBOX)


def _fixture_passports() -> Select[uuid.UUID]:
    return _sandbox_passports().where(Passport.user_id.in_(_users(DEMO_FREELANCER_EMAIL)))


def _stale_share(cutoff: dt.datetime) -> ColumnElement[bool]:
    """The demo's current share-tokens (not revoked) are fixtures; shares the demo replaced are not."""
    fixture = and_(PassportShare.passport_id.in_(_fixture_passports()), PassportShare.revoked_at.is_(None))
    return and_(PassportShare.environment == SANDBOX, PassportShare.created_at < cutoff, not_(fixture))


def _stale_share_view(cutoff: dt.datetime) -> ColumnElement[bool]:
    sandbox_shares = select(PassportShare.id).where(PassportShare.environment == SANDBOX)
    return or_(
        and_(PassportShareView.share_id.in_(sandbox_shares), PassportShareView.viewed_at < cutoff),
        PassportShareView.share_id.in_(select(PassportShare.id).where(_stale_share(cutoff))),
    )


def _stale_verification(cutoff: dt.datetime) -> ColumnElement[bool]:
    fixture = and_(
        PassportVerification.passport_id.in_(_fixture_passports()), PassportVerification.check.in_(DEMO_CHECKS)
    )
    return and_(
        PassportVerification.passport_id.in_(_sandbox_passports()),
        PassportVerification.recorded_at < cutoff,
        not_(fixture),
    )


def _stale_passport(cutoff: dt.datetime) -> ColumnElement[bool]:
    """Last changed before the cutoff and nothing of it left (its verifications and shares were purged first)."""
    return and_(
        Passport.environment == SANDBOX,
        Passport.updated_at < cutoff,
        Passport.user_id.not_in(_users(DEMO_FREELANCER_EMAIL)),
        not_(exists().where(PassportVerification.passport_id == Passport.id)),
        not_(exists().where(PassportShare.passport_id == Passport.id)),
    )


def _stale_activity(cutoff: dt.datetime) -> ColumnElement[bool]:
    return and_(
        Dac7Activity.environment == SANDBOX,
        Dac7Activity.imported_at < cutoff,
        Dac7Activity.external_id.not_in(DEMO_ACTIVITY_IDS),
    )


def _stale_report(cutoff: dt.datetime) -> ColumnElement[bool]:
    sandbox_sellers = select(Dac7Seller.id).where(Dac7Seller.environment == SANDBOX)
    return and_(Dac7Report.seller_id.in_(sandbox_sellers), Dac7Report.reported_at < cutoff)


def _stale_grant(cutoff: dt.datetime) -> ColumnElement[bool]:
    """The demo freelancer's active grant to the demo business is the fixture."""
    fixture = and_(
        Dac7Grant.seller_user_id.in_(_users(DEMO_FREELANCER_EMAIL)),
        Dac7Grant.grantee_user_id.in_(_users(DEMO_BUSINESS_EMAIL)),
        Dac7Grant.revoked_at.is_(None),
    )
    return and_(Dac7Grant.environment == SANDBOX, Dac7Grant.created_at < cutoff, not_(fixture))


def _stale_seller(cutoff: dt.datetime) -> ColumnElement[bool]:
    """Last changed before the cutoff and nothing of it left; the two demo sellers are fixtures."""
    return and_(
        Dac7Seller.environment == SANDBOX,
        Dac7Seller.updated_at < cutoff,
        Dac7Seller.user_id.not_in(_users(DEMO_FREELANCER_EMAIL, UNAUTHORISED_SELLER_EMAIL)),
        not_(exists().where(Dac7Activity.seller_id == Dac7Seller.id)),
        not_(exists().where(Dac7Report.seller_id == Dac7Seller.id)),
    )


def _table(model: type[object]) -> Table:
    table = model.__table__  # type: ignore[attr-defined]
    assert isinstance(table, Table)
    return table


def aged(model: type[object], stamp: str = "created_at") -> PurgeRule:
    """The plain rule: sandbox rows of `model` whose `stamp` column is before the cutoff (no fixtures among them)."""
    table = _table(model)
    return PurgeRule(table, lambda cutoff: and_(table.c.environment == SANDBOX, table.c[stamp] < cutoff))


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
    PurgeRule(_table(WttaStatusChange), _stale_status_change),
    PurgeRule(_table(WttaAdmission), _stale_admission, _register_changed),
    PurgeRule(_table(WttaImport), _stale_wtta_import, _register_changed),
    PurgeRule(_table(RateObservation), _stale_observation),
    PurgeRule(_table(RateImport), _stale_rate_import),
    RecomputeBenchmarks(),
    PurgeRule(_table(PassportShareView), _stale_share_view),
    PurgeRule(_table(PassportShare), _stale_share),
    PurgeRule(_table(PassportVerification), _stale_verification),
    PurgeRule(_table(Passport), _stale_passport),
    PurgeRule(_table(Dac7Activity), _stale_activity),
    PurgeRule(_table(Dac7Report), _stale_report),
    PurgeRule(_table(Dac7Grant), _stale_grant),
    PurgeRule(_table(Dac7Seller), _stale_seller),
)
