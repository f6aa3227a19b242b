"""Passport rules: operators record verifications; freelancers read and share; verifiers verify a share-token.

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
from compliance_api.auth.caller import Actor, Caller
from compliance_api.errors import ApiError
from compliance_api.events import service as events
from compliance_api.events.models import OutboxEvent
from compliance_api.events.types import EventName
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.kit.pagination import Cursors, Key, Paged, created_key, paginate
from compliance_api.passport import queries, share_tokens
from compliance_api.passport.catalogue import Catalogue, is_valid
from compliance_api.passport.models import Passport, PassportShare, PassportShareView, PassportVerification
from compliance_api.passport.reader import PassportReader, Row

SHARE_VIEWED = EventName.PASSPORT_SHARE_VIEWED


class PassportError(ValueError):
    """An operator's mistake, shown by the CLI."""


async def _passport(session: AsyncSession, user_id: uuid.UUID, environment: Environment) -> Passport | None:
    return await queries.passport_of(session, user_id, environment)


async def _ensure(session: AsyncSession, user: User, environment: Environment, now: dt.datetime) -> Passport:
    if user.kind is not UserKind.freelancer:
        raise PassportError(f"{user.email} is a {user.kind} user; only freelancers have passports")
    passport = await _passport(session, user.id, environment)
    if passport is None:
        passport = Passport(user_id=user.id, environment=environment, created_at=now, updated_at=now)
        queries.add(session, passport)
        await session.flush()
    return passport


async def set_sector(
    session: AsyncSession, user: User, environment: Environment, sector: str, now: dt.datetime
) -> Passport:
    """Create the passport if needed and set its sector (operator action)."""
    cleaned = sector.strip()
    if not 1 <= len(cleaned) <= 64:
        raise PassportError("the sector must be 1 to 64 characters")
    passport = await _ensure(session, user, environment, now)
    passport.sector, passport.updated_at = cleaned, now
    await _emit_updated(session, passport, {"change": "sector", "sector": cleaned})
    await session.flush()
    return passport


async def record_verification(
    session: AsyncSession,
    user: User,
    environment: Environment,
    catalogue: Catalogue,
    *,
    check: str,
    verified_on: dt.date,
    expires_on: dt.date | None,
    evidence_ref: str,
    now: dt.datetime,
) -> PassportVerification:
    """Record (or replace) one check; without an expiry date the catalogue's default validity applies."""
    check_type = catalogue.check(check)
    if expires_on is None and check_type.default_validity_days is not None:
        expires_on = verified_on + dt.timedelta(days=check_type.default_validity_days)
    if expires_on is not None and expires_on < verified_on:
        raise PassportError("the expiry date is before the verified date")
    if not 1 <= len(evidence_ref.strip()) <= 255:
        raise PassportError("the evidence reference must be 1 to 255 characters")
    passport = await _ensure(session, user, environment, now)
    row = await queries.verification(session, passport.id, check)
    if row is None:
        row = PassportVerification(passport_id=passport.id, check=check)
        queries.add(session, row)
    row.verified_on, row.expires_on, row.evidence_ref, row.recorded_at = (
        verified_on,
        expires_on,
        evidence_ref.strip(),
        now,
    )
    passport.updated_at = now
    await _emit_updated(session, passport, {"change": "verification", "check": check, "expires_on": _iso(expires_on)})
    await session.flush()
    return row


def _iso(day: dt.date | None) -> str | None:
    return None if day is None else day.isoformat()


async def _emit_updated(session: AsyncSession, passport: Passport, details: dict[str, object]) -> None:
    """`passport.updated` to the outbox, in the transaction of the change (the webhooks deliver it)."""
    await events.emit(
        session,
        environment=passport.environment,
        type=EventName.PASSPORT_UPDATED,
        payload={"freelancer_id": str(passport.user_id), "updated_at": passport.updated_at.isoformat(), **details},
    )


async def _verifications(session: AsyncSession, passport: Passport) -> list[PassportVerification]:
    return await queries.verifications(session, passport.id)


def _require_freelancer(caller: Actor) -> None:
    if caller.kind is not UserKind.freelancer:
        raise ApiError(
            "freelancer_only", "This is a business token; passports are read with the freelancer's own token."
        )


async def _own(session: AsyncSession, caller: Actor) -> Passport:
    _require_freelancer(caller)
    passport = await _passport(session, caller.user_id, caller.environment)
    if passport is None:
        raise ApiError("no_passport", f"You have no passport in {caller.environment.label} yet.")
    return passport


VerificationRow = tuple[str, dt.date, dt.date | None, str]
"""A verification as the reads give it: check, verified on, expires on, evidence reference."""


@dataclass(frozen=True, slots=True)
class Standing:
    """A passport as its owner reads it, judged on `today`: which verifications are valid, and what they add up to."""

    freelancer_id: uuid.UUID
    environment: Environment
    sector: str | None
    updated_at: dt.datetime
    verifications: tuple[VerificationRow, ...]
    valid: frozenset[str]
    score: int
    level: str
    verified: bool


def standing(
    catalogue: Catalogue,
    today: dt.date,
    head: tuple[uuid.UUID, Environment, str | None, dt.datetime],
    rows: Sequence[VerificationRow],
) -> Standing:
    """The passport from its row (user, environment, sector, last update) and its verifications."""
    freelancer_id, environment, sector, updated_at = head
    valid = frozenset(check for check, verified_on, expires_on, _ in rows if is_valid(verified_on, expires_on, today))
    score = catalogue.score(set(valid))
    return Standing(
        freelancer_id=freelancer_id,
        environment=environment,
        sector=sector,
        updated_at=updated_at,
        verifications=tuple(rows),
        valid=valid,
        score=score,
        level=catalogue.level(score),
        verified=catalogue.is_verified(set(valid)),
    )


async def own_passport(session: AsyncSession, caller: Actor, catalogue: Catalogue, now: dt.datetime) -> Standing:
    passport = await _own(session, caller)
    rows = [(r.check, r.verified_on, r.expires_on, r.evidence_ref) for r in await _verifications(session, passport)]
    head = (passport.user_id, passport.environment, passport.sector, passport.updated_at)
    return standing(catalogue, now.date(), head, rows)


async def own_passport_rows(reader: PassportReader, caller: Actor) -> list[Row]:
    """The hot route's one read: the passport's row joined to its verifications (`standing_of_rows` judges them)."""
    _require_freelancer(caller)
    rows = await reader.fetch(queries.OWN, {"user_id": caller.user_id, "environment": caller.environment})
    if not rows:
        raise ApiError("no_passport", f"You have no passport in {caller.environment.label} yet.")
    return rows


def standing_of_rows(catalogue: Catalogue, today: dt.date, rows: Sequence[Row]) -> Standing:
    verifications = [(row[4], row[5], row[6], row[7]) for row in rows if row[4] is not None]
    return standing(catalogue, today, (rows[0][0], rows[0][1], rows[0][2], rows[0][3]), verifications)


@dataclass(frozen=True, slots=True)
class CreatedShare:
    """A new share and its token, which exists only here: it is stored as a keyed hash."""

    share: PassportShare
    token: str


@dataclass(frozen=True, slots=True)
class Viewing:
    """One verification through a share-token, and who made it."""

    viewed_at: dt.datetime
    viewer_id: uuid.UUID
    viewer_email: str
    environment: Environment


async def _create_share(
    session: AsyncSession, passport: Passport, ttl_days: int, pepper: bytes, now: dt.datetime, token: str | None = None
) -> CreatedShare:
    token = token or share_tokens.generate()
    share = PassportShare(
        passport_id=passport.id,
        environment=passport.environment,
        token_hash=share_tokens.hash_share_token(token, pepper),
        last4=token[-4:],
        created_at=now,
        expires_at=now + dt.timedelta(days=ttl_days),
    )
    queries.add(session, share)
    await session.flush()
    return CreatedShare(share, token)


async def create_share(
    session: AsyncSession, caller: Actor, *, ttl_days: int, pepper: bytes, now: dt.datetime
) -> CreatedShare:
    return await _create_share(session, await _own(session, caller), ttl_days, pepper, now)


async def create_share_for(
    session: AsyncSession,
    user: User,
    environment: Environment,
    *,
    ttl_days: int,
    pepper: bytes,
    now: dt.datetime,
    token: str | None = None,
) -> CreatedShare:
    """Operator action (`passport share`): the freelancer must have a passport already (`token` gives a share-token
    derived elsewhere, as the demo's are; default: a random one)."""
    passport = await _passport(session, user.id, environment)
    if passport is None or user.kind is not UserKind.freelancer:
        raise PassportError(f"{user.email} has no passport in {environment.label}")
    if not 1 <= ttl_days <= 365:
        raise PassportError("the lifetime must be 1 to 365 days")
    return await _create_share(session, passport, ttl_days, pepper, now, token)


async def list_shares(
    session: AsyncSession, caller: Actor, *, limit: int, cursor: str | None, cursors: Cursors
) -> Paged[PassportShare]:
    """A page of the caller's share-tokens, newest first."""
    passport = await _own(session, caller)
    return await paginate(
        session,
        queries.shares_of(passport),
        PassportShare.created_at,
        PassportShare.id,
        limit=limit,
        cursor=cursor,
        cursors=cursors,
        scope=f"passport-shares:{passport.id}",
        key_of=created_key,
    )


async def get_share(session: AsyncSession, caller: Actor, share_id: uuid.UUID) -> PassportShare:
    """One of the caller's shares; `share_not_found` (or `freelancer_only`, `no_passport`) otherwise."""
    passport = await _own(session, caller)
    share = await queries.share_of(session, passport.id, caller.environment, share_id)
    if share is None:
        raise ApiError("share_not_found", "You have no share with this id in this environment.")
    return share


def _revoke(share: PassportShare, now: dt.datetime) -> None:
    if share.revoked_at is None:
        share.revoked_at = now


async def revoke_share(session: AsyncSession, caller: Actor, share_id: uuid.UUID, now: dt.datetime) -> PassportShare:
    """Revoke one of the caller's shares; revoking twice is harmless."""
    share = await get_share(session, caller, share_id)
    _revoke(share, now)
    await session.flush()
    return share


def _token_hashes(token: str, pepper: bytes, previous_pepper: bytes | None) -> tuple[str, str]:
    """The token's hash under the current secret, and under the retired one (the same while none is set)."""
    current = share_tokens.hash_share_token(token, pepper)
    return current, current if previous_pepper is None else share_tokens.hash_share_token(token, previous_pepper)


async def _share_by_token(
    session: AsyncSession, token: str, pepper: bytes, previous_pepper: bytes | None
) -> PassportShare | None:
    """The share behind a token, in whichever environment, keyed with the current secret or (during a rotation)
    the retired one; a share found under the retired secret is re-hashed to the current one."""
    current, previous = _token_hashes(token, pepper, previous_pepper)
    share = await queries.share_by_hash(session, (current, previous))
    if share is not None and share.token_hash != current:
        share.token_hash = current
        await session.flush()
    return share


async def revoke_share_by_token(
    session: AsyncSession, token: str, *, pepper: bytes, previous_pepper: bytes | None = None, now: dt.datetime
) -> PassportShare:
    """Operator action (`passport revoke-share TOKEN`), in whichever environment the token lives."""
    share = await _share_by_token(session, token.strip(), pepper, previous_pepper)
    if share is None:
        raise PassportError("no such share-token")
    _revoke(share, now)
    await session.flush()
    return share


async def list_views(
    session: AsyncSession,
    caller: Actor,
    share_id: uuid.UUID,
    *,
    limit: int,
    cursor: str | None,
    cursors: Cursors,
) -> Paged[Viewing]:
    """A page of the verifications of one of the caller's share-tokens, newest first."""
    share = await get_share(session, caller, share_id)
    page = await paginate(
        session,
        queries.views_of(share.id),
        PassportShareView.viewed_at,
        PassportShareView.id,
        limit=limit,
        cursor=cursor,
        cursors=cursors,
        scope=f"passport-share-views:{share.id}",
        key_of=lambda view: Key(view.viewed_at, view.id),
    )
    viewers = {view.viewer_user_id for view in page.rows}
    emails = await queries.emails(session, viewers)
    viewings = [Viewing(v.viewed_at, v.viewer_user_id, emails[v.viewer_user_id], share.environment) for v in page.rows]
    return Paged(viewings, page.has_more, page.next_cursor)


async def shares_with_views(session: AsyncSession, caller: Actor) -> list[tuple[PassportShare, list[Viewing]]]:
    """Every share of the caller's passport, oldest first, each with its views: three queries whatever the count."""
    passport = await _own(session, caller)
    shares = await queries.shares(session, passport)
    views: dict[uuid.UUID, list[Viewing]] = {share.id: [] for share in shares}
    for share_id, at, viewer, email in await queries.views_with_viewers(session, passport):
        if share_id in views:  # a share committed between the two reads is not listed, nor are its views
            views[share_id].append(Viewing(at, viewer, email, passport.environment))
    return [(share, views[share.id]) for share in shares]


@dataclass(frozen=True, slots=True)
class VerifiedShare:
    """What a verification through a share-token found (recorded before it is returned), to be signed and answered."""

    share_id: uuid.UUID
    freelancer_id: uuid.UUID
    environment: Environment
    share_expires_at: dt.datetime
    counted: tuple[tuple[str, dt.date | None], ...]  # the valid verifications: check, expires on; in check order
    issued_at: dt.datetime


class SharedUnderRetiredSecret(Exception):
    """The share was found by its hash under the retired secret: re-hash it (`rehash_share`), then verify again."""

    def __init__(self, share_id: uuid.UUID) -> None:
        super().__init__(share_id)
        self.share_id = share_id


def _view_rows(
    caller: Caller, share_id: uuid.UUID, freelancer_id: uuid.UUID, environment: Environment, now: dt.datetime
) -> tuple[dict[str, object], dict[str, object]]:
    """The recorded verification: its `passport_share_view` row and its `passport.share.viewed` event."""
    view = {
        "id": uuid.uuid4(),
        "share_id": share_id,
        "viewer_user_id": caller.user_id,
        "viewer_token_id": caller.token_id,
        "viewed_at": now,
    }
    payload = {
        "freelancer_id": str(freelancer_id),
        "share_id": str(share_id),
        "viewer_id": str(caller.user_id),
        "viewed_at": now.isoformat(),
    }
    return view, events.outbox_row(environment=environment, type=SHARE_VIEWED, payload=payload, at=now)


async def verify_share(
    reader: PassportReader,
    audit: GroupCommit,
    caller: Caller,
    token: str,
    *,
    pepper: bytes,
    previous_pepper: bytes | None = None,
    now: dt.datetime,
) -> VerifiedShare:
    """The share behind a token, as of `now`, with the view and its event committed through the group commit before
    it returns; unknown, expired and revoked tokens are the same 404. One read; raises `SharedUnderRetiredSecret`
    for a share still hashed under the retired secret."""
    if len(token) > share_tokens.MAX_LENGTH:
        raise ApiError("share_not_found")
    current, previous = _token_hashes(token, pepper, previous_pepper)
    parameters = {"current_hash": current, "previous_hash": previous, "environment": caller.environment}
    rows = await reader.fetch(queries.SHARE, parameters)
    if not rows:
        raise ApiError("share_not_found")
    share_id, found_hash, environment, expires_at, revoked_at, freelancer_id = rows[0][:6]
    if found_hash != current:
        raise SharedUnderRetiredSecret(share_id)
    if revoked_at is not None or expires_at <= now:
        raise ApiError("share_not_found")
    today = now.date()
    counted = tuple((row[6], row[8]) for row in rows if row[6] is not None and is_valid(row[7], row[8], today))
    view, event = _view_rows(caller, share_id, freelancer_id, environment, now)
    try:
        await audit.insert((PassportShareView, view), (OutboxEvent, event))
    except IntegrityError:  # the share (or its freelancer) was deleted since the read
        raise ApiError("share_not_found") from None
    return VerifiedShare(share_id, freelancer_id, environment, expires_at, counted, now.replace(microsecond=0))


async def rehash_share(
    session: AsyncSession, share_id: uuid.UUID, token: str, *, pepper: bytes, previous_pepper: bytes | None
) -> None:
    """Move a share found under the retired secret to the current one (once per share during a rotation)."""
    current, previous = _token_hashes(token, pepper, previous_pepper)
    share = await queries.share(session, share_id)
    if share is not None and share.token_hash == previous:
        share.token_hash = current
        await session.flush()
