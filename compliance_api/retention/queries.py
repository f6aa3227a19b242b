"""The sandbox purge's statements: which rows of each table are sandbox data past retention, and their deletion.
The registry that orders them is `rules.py`."""

from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import ColumnElement, Select, Table, and_, delete, exists, func, not_, or_, select, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from compliance_api.accounts.models import User
from compliance_api.dac7.fixtures import DEMO_ACTIVITY_IDS, UNAUTHORISED_SELLER_EMAIL
from compliance_api.dac7.models import Dac7Activity, Dac7Grant, Dac7Report, Dac7Seller
from compliance_api.demo.fixtures import DEMO_BUSINESS_EMAIL
from compliance_api.kit.environment import Environment
from compliance_api.passport.fixtures import DEMO_CHECKS, DEMO_FREELANCER_EMAIL
from compliance_api.passport.models import Passport, PassportShare, PassportShareView, PassportVerification
from compliance_api.rates.models import RateBenchmark, RateImport, RateObservation
from compliance_api.wtta.fixtures import DEMO_LOCATION, SANDBOX_ADMISSIONS
from compliance_api.wtta.models import WttaAdmission, WttaImport, WttaStatusChange

SANDBOX = Environment.test
FIXTURE_KVKS = tuple(kvk for kvk, *_ in SANDBOX_ADMISSIONS.values())


async def delete_where(session: AsyncSession, table: Table, condition: ColumnElement[bool]) -> int:
    """Delete the rows of `table` that `condition` selects; returns how many."""
    result = await session.execute(delete(table).where(condition))
    return int(result.rowcount)  # type: ignore[attr-defined]


async def lock_purge(session: AsyncSession) -> None:
    """PostgreSQL: two workers purging at once take turns."""
    await session.execute(text("SELECT pg_advisory_xact_lock(hashtext('retention:sandbox'))"))


async def count_sandbox_benchmarks(session: AsyncSession) -> int:
    count = select(func.count()).select_from(RateBenchmark).where(RateBenchmark.environment == SANDBOX)
    return await session.scalar(count) or 0


def aged(table: Table, stamp: str, cutoff: dt.datetime) -> ColumnElement[bool]:
    """Sandbox rows of `table` whose `stamp` column is before the cutoff."""
    return and_(table.c.environment == SANDBOX, table.c[stamp] < cutoff)


def _users(*emails: str) -> Select[uuid.UUID]:
    return select(User.id).where(User.email.in_(emails))


def stale_admission(cutoff: dt.datetime) -> ColumnElement[bool]:
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


def stale_status_change(cutoff: dt.datetime) -> ColumnElement[bool]:
    return and_(
        WttaStatusChange.environment == SANDBOX,
        WttaStatusChange.changed_at < cutoff,
        WttaStatusChange.kvk_number.not_in(FIXTURE_KVKS),
    )


def stale_wtta_import(cutoff: dt.datetime) -> ColumnElement[bool]:
    """Old imports go, except the newest `demo` import: it says when the fixtures were last refreshed."""
    demo = aliased(WttaImport)
    newest_demo = (
        select(demo.id)
        .where(demo.environment == SANDBOX, demo.location == DEMO_LOCATION)
        .order_by(demo.finished_at.desc())
        .limit(1)
    )
    return and_(WttaImport.environment == SANDBOX, WttaImport.finished_at < cutoff, WttaImport.id.not_in(newest_demo))


def stale_rate_import(cutoff: dt.datetime) -> ColumnElement[bool]:
    """Imported files; the synthetic observations (`demo`, `rates generate`) are the sandbox's fixture rates."""
    return and_(RateImport.environment == SANDBOX, RateImport.imported_at < cutoff, RateImport.synthetic.is_(False))


def stale_observation(cutoff: dt.datetime) -> ColumnElement[bool]:
    """An observation is as old as its import (its `observed_on` is a business date)."""
    return RateObservation.import_id.in_(select(RateImport.id).where(stale_rate_import(cutoff)))


def _sandbox_passports() -> Select[uuid.UUID]:
    return select(Passport.id).where(Passport.environment == SANDBOX)


def _fixture_passports() -> Select[uuid.UUID]:
    return _sandbox_passports().where(Passport.user_id.in_(_users(DEMO_FREELANCER_EMAIL)))


def stale_share(cutoff: dt.datetime) -> ColumnElement[bool]:
    """The demo's current share-tokens (not revoked) are fixtures; shares the demo replaced are not."""
    fixture = and_(PassportShare.passport_id.in_(_fixture_passports()), PassportShare.revoked_at.is_(None))
    return and_(PassportShare.environment == SANDBOX, PassportShare.created_at < cutoff, not_(fixture))


def stale_share_view(cutoff: dt.datetime) -> ColumnElement[bool]:
    sandbox_shares = select(PassportShare.id).where(PassportShare.environment == SANDBOX)
    return or_(
        and_(PassportShareView.share_id.in_(sandbox_shares), PassportShareView.viewed_at < cutoff),
        PassportShareView.share_id.in_(select(PassportShare.id).where(stale_share(cutoff))),
    )


def stale_verification(cutoff: dt.datetime) -> ColumnElement[bool]:
    fixture = and_(
        PassportVerification.passport_id.in_(_fixture_passports()), PassportVerification.check.in_(DEMO_CHECKS)
    )
    return and_(
        PassportVerification.passport_id.in_(_sandbox_passports()),
        PassportVerification.recorded_at < cutoff,
        not_(fixture),
    )


def stale_passport(cutoff: dt.datetime) -> ColumnElement[bool]:
    """Last changed before the cutoff and nothing of it left (its verifications and shares were purged first)."""
    return and_(
        Passport.environment == SANDBOX,
        Passport.updated_at < cutoff,
        Passport.user_id.not_in(_users(DEMO_FREELANCER_EMAIL)),
        not_(exists().where(PassportVerification.passport_id == Passport.id)),
        not_(exists().where(PassportShare.passport_id == Passport.id)),
    )


def stale_activity(cutoff: dt.datetime) -> ColumnElement[bool]:
    return and_(
        Dac7Activity.environment == SANDBOX,
        Dac7Activity.imported_at < cutoff,
        Dac7Activity.external_id.not_in(DEMO_ACTIVITY_IDS),
    )


def stale_report(cutoff: dt.datetime) -> ColumnElement[bool]:
    sandbox_sellers = select(Dac7Seller.id).where(Dac7Seller.environment == SANDBOX)
    return and_(Dac7Report.seller_id.in_(sandbox_sellers), Dac7Report.reported_at < cutoff)


def stale_grant(cutoff: dt.datetime) -> ColumnElement[bool]:
    """The demo freelancer's active grant to the demo business is the fixture."""
    fixture = and_(
        Dac7Grant.seller_user_id.in_(_users(DEMO_FREELANCER_EMAIL)),
        Dac7Grant.grantee_user_id.in_(_users(DEMO_BUSINESS_EMAIL)),
        Dac7Grant.revoked_at.is_(None),
    )
    return and_(Dac7Grant.environment == SANDBOX, Dac7Grant.created_at < cutoff, not_(fixture))


def stale_seller(cutoff: dt.datetime) -> ColumnElement[bool]:
    """Last changed before the cutoff and nothing of it left; the two demo sellers are fixtures."""
    return and_(
        Dac7Seller.environment == SANDBOX,
        Dac7Seller.updated_at < cutoff,
        Dac7Seller.user_id.not_in(_users(DEMO_FREELANCER_EMAIL, UNAUTHORISED_SELLER_EMAIL)),
        not_(exists().where(Dac7Activity.seller_id == Dac7Seller.id)),
        not_(exists().where(Dac7Report.seller_id == Dac7Seller.id)),
    )
