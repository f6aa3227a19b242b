"""DAC7 rules: operators record sellers and import activities; sellers grant reads; callers read snapshots.

Who may read a seller's snapshot: the seller itself, or a user holding an active grant from that
seller, both in the environment of the request. Everyone else, and anyone asking for a seller that does not exist
in that environment, gets the same 403 `forbidden`, so the answer never tells whether a seller exists.

Every function returns rows or the domain objects below; `views` shapes them into the API's schemas.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts.models import User, UserKind
from compliance_api.auth.caller import Actor
from compliance_api.dac7 import queries
from compliance_api.dac7.activity_file import ActivityFileError, ActivityRow
from compliance_api.dac7.figures import CHUNK, YearFigures, year_figures
from compliance_api.dac7.identity import Dac7Tin, SellerIdentity
from compliance_api.dac7.models import Dac7Activity, Dac7Grant, Dac7Seller
from compliance_api.dac7.sealing import IdentityBox
from compliance_api.dac7.tin import check_tin
from compliance_api.errors import ApiError, FieldError
from compliance_api.events import service as events
from compliance_api.events.types import EventName
from compliance_api.kit.environment import Environment
from compliance_api.kit.pagination import Cursors, Paged, created_key, paginate

SNAPSHOT_EVENT = EventName.DAC7_SNAPSHOT_UPDATED
FORBIDDEN_DETAIL = "You may not read a DAC7 seller with this id in this environment."


class Dac7Error(ValueError):
    """An operator's mistake, shown by the CLI."""


@dataclass(frozen=True, slots=True)
class Dac7ImportResult:
    rows: int
    created: int
    updated: int
    unchanged: int
    events: int


def _require_freelancer_user(user: User) -> None:
    if user.kind is not UserKind.freelancer:
        raise Dac7Error(f"{user.email} is a {user.kind} user; only freelancers are DAC7 sellers")


async def seller_of(session: AsyncSession, user_id: uuid.UUID, environment: Environment) -> Dac7Seller | None:
    return await queries.seller_of(session, user_id, environment)


async def record_seller(
    session: AsyncSession,
    user: User,
    environment: Environment,
    *,
    tin: str,
    member_state: str,
    box: IdentityBox,
    now: dt.datetime,
) -> Dac7Seller:
    """Record (or replace) a freelancer's TIN, keeping the rest of its identity; an invalid TIN raises ValueError
    naming the rule (`dac7 seller`)."""
    check_tin(tin, member_state)  # raises InvalidTin naming the rule
    checked = Dac7Tin(tin=tin, issued_by=member_state)
    seller = await seller_of(session, user.id, environment)
    current = (
        SellerIdentity()
        if seller is None or seller.identity_sealed is None
        else box.open(seller.identity_sealed, seller.id)
    )
    others = [t for t in current.tins if t.issued_by != checked.issued_by]
    return await set_identity(
        session, user, environment, current.model_copy(update={"tins": [checked, *others]}), box=box, now=now
    )


async def set_identity(
    session: AsyncSession,
    user: User,
    environment: Environment,
    identity: SellerIdentity,
    *,
    box: IdentityBox,
    now: dt.datetime,
) -> Dac7Seller:
    """Record (or replace) a freelancer's whole DAC7 identity, sealed; the seller row is made on first use."""
    _require_freelancer_user(user)
    state = identity.member_state
    if state is None:
        raise Dac7Error("the identity needs an address in an EU member state or a TIN")
    seller = await seller_of(session, user.id, environment)
    if seller is None:
        seller = Dac7Seller(id=uuid.uuid4(), user_id=user.id, environment=environment, created_at=now)
        queries.add(session, seller)
    seller.member_state, seller.kind, seller.updated_at = state, identity.kind, now
    seller.identity_sealed = box.seal(identity, seller.id)
    await session.flush()
    return seller


def identity_of(seller: Dac7Seller, box: IdentityBox) -> SellerIdentity | None:
    """The seller's identity, opened; None once wiped after the retention period."""
    return None if seller.identity_sealed is None else box.open(seller.identity_sealed, seller.id)


async def import_activities(
    session: AsyncSession, environment: Environment, rows: Sequence[ActivityRow], *, now: dt.datetime
) -> Dac7ImportResult:
    """Apply a checked file in the caller's transaction; a seller unknown here aborts it (line, field).

    Each activity is keyed by its file id: new ids are added, changed ones replaced, identical ones left alone.
    Every (seller, year) whose figures changed gets one `dac7.snapshot.updated` event with its new totals."""
    sellers = await _sellers_for(session, environment, rows)
    existing = await _existing(session, environment, [r.external_id for r in rows])
    touched: set[tuple[uuid.UUID, int]] = set()
    changes: list[tuple[ActivityRow, Dac7Seller, Dac7Activity | None]] = []
    for row in rows:
        seller, current = sellers[row.freelancer_id], existing.get(row.external_id)
        if current is not None and not _differs(current, row, seller):
            continue
        if current is not None:
            touched.add((current.seller_id, current.year))
        touched.add((seller.id, row.activity_date.year))
        changes.append((row, seller, current))
    before = await _figures_of(session, touched)
    for row, seller, current in changes:
        if current is None:
            queries.add(session, _new_activity(row, seller, environment, now))
        else:
            _apply(current, row, seller, now)
    await session.flush()
    after = await _figures_of(session, touched)
    emitted = await _emit_changes(session, environment, touched, before, after)
    created = sum(1 for _, _, current in changes if current is None)
    updated = len(changes) - created
    return Dac7ImportResult(len(rows), created, updated, len(rows) - len(changes), emitted)


async def _sellers_for(
    session: AsyncSession, environment: Environment, rows: Sequence[ActivityRow]
) -> dict[uuid.UUID, Dac7Seller]:
    ids = list(dict.fromkeys(r.freelancer_id for r in rows))
    found: dict[uuid.UUID, Dac7Seller] = {}
    for start in range(0, len(ids), CHUNK):
        found.update(await queries.sellers_of_users(session, environment, ids[start : start + CHUNK]))
    for row in rows:
        if row.freelancer_id not in found:
            raise ActivityFileError(
                f"{row.freelancer_id} is not a DAC7 seller in {environment.label} (record it with `dac7 seller`)",
                line=row.line,
                field="freelancer_id",
            )
    return found


async def _existing(
    session: AsyncSession, environment: Environment, external_ids: list[str]
) -> dict[str, Dac7Activity]:
    found: dict[str, Dac7Activity] = {}
    for start in range(0, len(external_ids), CHUNK):
        found.update(await queries.activities_by_external_id(session, environment, external_ids[start : start + CHUNK]))
    return found


def _new_activity(row: ActivityRow, seller: Dac7Seller, environment: Environment, now: dt.datetime) -> Dac7Activity:
    activity = Dac7Activity(external_id=row.external_id, environment=environment)
    _apply(activity, row, seller, now)
    return activity


def _values(row: ActivityRow, seller: Dac7Seller) -> tuple[object, ...]:
    return (
        seller.id,
        row.activity_type,
        row.activity_date,
        row.consideration_cents,
        row.fees_cents,
        row.taxes_cents,
    )


def _differs(activity: Dac7Activity, row: ActivityRow, seller: Dac7Seller) -> bool:
    stored = (
        activity.seller_id,
        activity.activity_type,
        activity.activity_date,
        activity.consideration_cents,
        activity.fees_cents,
        activity.taxes_cents,
    )
    return stored != _values(row, seller)


def _apply(activity: Dac7Activity, row: ActivityRow, seller: Dac7Seller, now: dt.datetime) -> None:
    activity.seller_id = seller.id
    activity.activity_type = row.activity_type
    activity.activity_date = row.activity_date
    activity.year = row.activity_date.year
    activity.quarter = (row.activity_date.month - 1) // 3 + 1
    activity.currency = "EUR"
    activity.consideration_cents = row.consideration_cents
    activity.fees_cents = row.fees_cents
    activity.taxes_cents = row.taxes_cents
    activity.imported_at = now


async def _figures_of(
    session: AsyncSession, pairs: set[tuple[uuid.UUID, int]]
) -> dict[tuple[uuid.UUID, int], YearFigures]:
    result: dict[tuple[uuid.UUID, int], YearFigures] = {}
    for year in {y for _, y in pairs}:
        figures = await year_figures(session, [s for s, y in pairs if y == year], year)
        result.update({(seller_id, year): f for seller_id, f in figures.items()})
    return result


async def _emit_changes(
    session: AsyncSession,
    environment: Environment,
    pairs: set[tuple[uuid.UUID, int]],
    before: dict[tuple[uuid.UUID, int], YearFigures],
    after: dict[tuple[uuid.UUID, int], YearFigures],
) -> int:
    changed = sorted((p for p in pairs if before[p].buckets != after[p].buckets), key=lambda p: (str(p[0]), p[1]))
    if not changed:
        return 0
    users = await queries.users_of_sellers(session, [s for s, _ in changed])
    batch = [
        events.NewEvent(
            SNAPSHOT_EVENT,
            {"freelancer_id": str(users[seller_id]), "year": year, "totals": after[(seller_id, year)].as_payload()},
        )
        for seller_id, year in changed
    ]
    return await events.emit_many(session, environment=environment, events=batch)


async def may_read(session: AsyncSession, caller: Actor, freelancer_id: uuid.UUID) -> Dac7Seller:
    """The seller if the caller may read it here; else the one 403 for unknown and unauthorised alike."""
    seller = await seller_of(session, freelancer_id, caller.environment)
    if seller is not None and (caller.user_id == freelancer_id or await _holds_grant(session, caller, freelancer_id)):
        return seller
    raise ApiError("forbidden", FORBIDDEN_DETAIL)


async def _holds_grant(session: AsyncSession, caller: Actor, seller_user_id: uuid.UUID) -> bool:
    return await queries.holds_grant(session, caller.environment, seller_user_id, caller.user_id)


@dataclass(frozen=True, slots=True)
class SellerSnapshot:
    """A seller's figures for one calendar year, and when that year was reported (None: not yet)."""

    seller: Dac7Seller
    year: int
    figures: YearFigures
    reported_at: dt.datetime | None
    identity: SellerIdentity | None


async def snapshot(
    session: AsyncSession, caller: Actor, freelancer_id: uuid.UUID, now: dt.datetime, box: IdentityBox
) -> SellerSnapshot:
    """The seller's figures for the current calendar year (UTC)."""
    seller = await may_read(session, caller, freelancer_id)
    return await seller_snapshot(session, seller, now.year, box)


async def seller_snapshot(session: AsyncSession, seller: Dac7Seller, year: int, box: IdentityBox) -> SellerSnapshot:
    figures = (await year_figures(session, [seller.id], year))[seller.id]
    reported_at = await queries.reported_at(session, seller.id, year)
    return SellerSnapshot(seller, year, figures, reported_at, identity_of(seller, box))


def _require_seller(caller: Actor) -> None:
    if caller.kind is not UserKind.freelancer:
        raise ApiError("seller_only")


async def grant(
    session: AsyncSession, seller: User, grantee: User, environment: Environment, now: dt.datetime
) -> Dac7Grant:
    """Let `grantee` read `seller`'s snapshot in this environment; granting twice returns the active grant."""
    _require_freelancer_user(seller)
    if grantee.id == seller.id:
        raise Dac7Error("a seller always reads its own snapshot; grant another user")
    active = await _active_grant(session, seller, grantee, environment)
    if active is not None:
        return active
    created = Dac7Grant(seller_user_id=seller.id, grantee_user_id=grantee.id, environment=environment, created_at=now)
    try:
        async with session.begin_nested():  # a concurrent grant of the same pair wins; return that one
            queries.add(session, created)
    except IntegrityError:
        active = await _active_grant(session, seller, grantee, environment)
        if active is None:
            raise
        return active
    return created


async def _active_grant(
    session: AsyncSession, seller: User, grantee: User, environment: Environment
) -> Dac7Grant | None:
    return await queries.active_grant(session, environment, seller.id, grantee.id)


async def create_grant(session: AsyncSession, caller: Actor, grantee_id: uuid.UUID, now: dt.datetime) -> Dac7Grant:
    """The seller's own token grants a read to another user, named by its user id."""
    _require_seller(caller)
    grantee = await queries.user(session, grantee_id)
    if grantee is None:
        raise ApiError("grantee_not_found")
    if grantee.id == caller.user_id:
        raise ApiError(
            "validation_failed",
            "You always read your own snapshot; grant another user.",
            errors=[FieldError("grantee_id", "is your own user id")],
        )
    seller = await queries.existing_user(session, caller.user_id)
    return await grant(session, seller, grantee, caller.environment, now)


async def list_grants(session: AsyncSession, caller: Actor) -> list[Dac7Grant]:
    """Every grant the seller gave in the caller's environment, oldest first."""
    _require_seller(caller)
    return await queries.list_grants(session, caller.user_id, caller.environment)


async def page_of_grants(
    session: AsyncSession, caller: Actor, *, limit: int, cursor: str | None, cursors: Cursors
) -> Paged[Dac7Grant]:
    """A page of the grants the seller gave in the caller's environment, newest first."""
    _require_seller(caller)
    return await paginate(
        session,
        queries.grants_of(caller.user_id, caller.environment),
        Dac7Grant.created_at,
        Dac7Grant.id,
        limit=limit,
        cursor=cursor,
        cursors=cursors,
        scope=f"dac7-grants:{caller.user_id}:{caller.environment.value}",
        key_of=created_key,
    )


async def _own_grant(session: AsyncSession, caller: Actor, grant_id: uuid.UUID) -> Dac7Grant:
    _require_seller(caller)
    found = await queries.own_grant(session, caller.user_id, caller.environment, grant_id)
    if found is None:
        raise ApiError("grant_not_found")
    return found


async def _revoke(session: AsyncSession, found: Dac7Grant, now: dt.datetime) -> Dac7Grant:
    if found.revoked_at is None:
        found.revoked_at = now
        await session.flush()
    return found


async def get_grant(session: AsyncSession, caller: Actor, grant_id: uuid.UUID) -> Dac7Grant:
    """One of the caller's grants; `grant_not_found` (or `seller_only`) otherwise."""
    return await _own_grant(session, caller, grant_id)


async def revoke_grant(session: AsyncSession, caller: Actor, grant_id: uuid.UUID, now: dt.datetime) -> Dac7Grant:
    """Revoke one of the caller's grants at once; revoking twice is harmless."""
    return await _revoke(session, await _own_grant(session, caller, grant_id), now)


async def revoke_grant_by_id(session: AsyncSession, grant_id: uuid.UUID, now: dt.datetime) -> Dac7Grant:
    """Operator action (`dac7 revoke-grant ID`), in whichever environment the grant lives."""
    found = await queries.grant(session, grant_id)
    if found is None:
        raise Dac7Error(f"no DAC7 grant {grant_id}")
    return await _revoke(session, found, now)


async def read_identity(
    session: AsyncSession, caller: Actor, freelancer_id: uuid.UUID, box: IdentityBox
) -> tuple[Dac7Seller, SellerIdentity | None]:
    """The seller's identity, for the seller itself and holders of its grant (the one 403 for anyone else)."""
    seller = await may_read(session, caller, freelancer_id)
    return seller, identity_of(seller, box)


async def put_identity(
    session: AsyncSession,
    caller: Actor,
    freelancer_id: uuid.UUID,
    identity: SellerIdentity,
    box: IdentityBox,
    now: dt.datetime,
) -> Dac7Seller:
    """The seller's own account sets its complete identity; anyone else gets the one 403 `forbidden`."""
    if caller.user_id != freelancer_id or caller.kind is not UserKind.freelancer:
        raise ApiError("forbidden", FORBIDDEN_DETAIL)
    problems = identity.problems()
    if problems:
        detail = "; ".join(f"{field}: {message}" for field, message in problems)
        raise ApiError("validation_failed", detail, errors=[FieldError(f, m) for f, m in problems])
    user = await queries.existing_user(session, caller.user_id)
    return await set_identity(session, user, caller.environment, identity, box=box, now=now)


async def withdraw(session: AsyncSession, user: User, environment: Environment, year: int, now: dt.datetime) -> None:
    """Ask the next export of `year` to delete the seller's record sent for it (`dac7 withdraw`)."""
    seller = await seller_of(session, user.id, environment)
    report = None
    if seller is not None:
        report = await queries.report_of(session, seller.id, year)
    if report is None or report.doc_ref_id is None or report.deleted_at is not None:
        raise Dac7Error(f"{user.email} has no record sent for {year} in {environment.label} to withdraw")
    report.withdrawn_at = now
    await session.flush()


async def reseal_all(session: AsyncSession, box: IdentityBox) -> int:
    """Seal every identity under the current key (both environments); returns how many."""
    count = 0
    for seller in await queries.sealed_sellers(session):
        assert seller.identity_sealed is not None
        seller.identity_sealed = box.reseal(seller.identity_sealed, seller.id)
        count += 1
    await session.flush()
    return count
