"""Passport rules: operators record verifications; freelancers read and share; verifiers verify a share-token."""

from __future__ import annotations

import datetime as dt
import uuid

import orjson
from sqlalchemy import Select, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts.models import User, UserKind
from compliance_api.auth.caller import Actor, Caller
from compliance_api.errors import ApiError
from compliance_api.events import service as events
from compliance_api.events.models import OutboxEvent
from compliance_api.events.types import EventName
from compliance_api.kit.environment import Environment, scoped
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.kit.pagination import Cursors, Key, created_key, paginate
from compliance_api.passport import reader as reads
from compliance_api.passport import share_tokens
from compliance_api.passport.cache import LatestCache
from compliance_api.passport.catalogue import Catalogue, is_valid
from compliance_api.passport.models import Passport, PassportShare, PassportShareView, PassportVerification
from compliance_api.passport.reader import PassportReader
from compliance_api.passport.schemas import (
    OwnPassport,
    PassportSummary,
    Share,
    ShareCreated,
    ShareList,
    ShareView,
    ShareViewList,
    Verification,
)
from compliance_api.passport.signing import SigningKeys, sign_with

SHARE_VIEWED = EventName.PASSPORT_SHARE_VIEWED


class PassportError(ValueError):
    """An operator's mistake, shown by the CLI."""


async def _passport(session: AsyncSession, user_id: uuid.UUID, environment: Environment) -> Passport | None:
    statement = scoped(select(Passport), Passport, environment).where(Passport.user_id == user_id)
    return await session.scalar(statement)


async def _ensure(session: AsyncSession, user: User, environment: Environment, now: dt.datetime) -> Passport:
    if user.kind is not UserKind.freelancer:
        raise PassportError(f"{user.email} is a {user.kind} user; only freelancers have passports")
    passport = await _passport(session, user.id, environment)
    if passport is None:
        passport = Passport(user_id=user.id, environment=environment, created_at=now, updated_at=now)
        session.add(passport)
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
    row = await session.scalar(
        select(PassportVerification).where(
            PassportVerification.passport_id == passport.id, PassportVerification.check == check
        )
    )
    if row is None:
        row = PassportVerification(passport_id=passport.id, check=check)
        session.add(row)
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
    statement = select(PassportVerification).where(PassportVerification.passport_id == passport.id)
    return list(await session.scalars(statement.order_by(PassportVerification.check)))


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


def _own_view(
    catalogue: Catalogue,
    today: dt.date,
    head: tuple[uuid.UUID, Environment, str | None, dt.datetime],
    rows: list[VerificationRow],
) -> OwnPassport:
    """The own passport from its row (user, environment, sector, last update) and its verifications."""
    user_id, environment, sector, updated_at = head
    valid = {check for check, verified_on, expires_on, _ in rows if is_valid(verified_on, expires_on, today)}
    score = catalogue.score(valid)
    return OwnPassport(
        compliance_score=score,
        compliance_level=catalogue.level(score),
        sector=sector,
        verified=catalogue.is_verified(valid),
        last_updated=updated_at,
        freelancer_id=user_id,
        livemode=environment is Environment.live,
        verifications=[
            Verification(
                check=check,
                name=catalogue.check(check).name,
                verified_on=verified_on,
                expires_on=expires_on,
                evidence_ref=evidence_ref,
                valid=check in valid,
            )
            for check, verified_on, expires_on, evidence_ref in rows
        ],
    )


async def own_passport(session: AsyncSession, caller: Actor, catalogue: Catalogue, now: dt.datetime) -> OwnPassport:
    passport = await _own(session, caller)
    rows = [(r.check, r.verified_on, r.expires_on, r.evidence_ref) for r in await _verifications(session, passport)]
    head = (passport.user_id, passport.environment, passport.sector, passport.updated_at)
    return _own_view(catalogue, now.date(), head, rows)


async def own_passport_json(
    reader: PassportReader, caller: Actor, catalogue: Catalogue, now: dt.datetime, cache: LatestCache[bytes]
) -> bytes:
    """`own_passport` as its JSON body, in one read; the body is built again only when a row or the day changes."""
    _require_freelancer(caller)
    rows = await reader.fetch(reads.OWN, {"user_id": caller.user_id, "environment": caller.environment})
    if not rows:
        raise ApiError("no_passport", f"You have no passport in {caller.environment.label} yet.")
    today = now.date()
    inputs = (today, *rows)
    body = cache.get(caller.user_id, inputs)
    if body is None:
        head = rows[0][:4]
        verifications = [row[4:] for row in rows if row[4] is not None]
        body = _own_view(catalogue, today, head, verifications).model_dump_json().encode()
        cache.put(caller.user_id, inputs, body)
    return body


def share_view(share: PassportShare, now: dt.datetime) -> Share:
    return Share(
        id=share.id,
        last4=share.last4,
        created_at=share.created_at,
        expires_at=share.expires_at,
        revoked_at=share.revoked_at,
        status=share.status(now),
    )


async def _create_share(
    session: AsyncSession, passport: Passport, ttl_days: int, pepper: bytes, now: dt.datetime
) -> ShareCreated:
    token = share_tokens.generate()
    share = PassportShare(
        passport_id=passport.id,
        environment=passport.environment,
        token_hash=share_tokens.hash_share_token(token, pepper),
        last4=token[-4:],
        created_at=now,
        expires_at=now + dt.timedelta(days=ttl_days),
    )
    session.add(share)
    await session.flush()
    return ShareCreated(**share_view(share, now).model_dump(), token=token)


async def create_share(
    session: AsyncSession, caller: Actor, *, ttl_days: int, pepper: bytes, now: dt.datetime
) -> ShareCreated:
    return await _create_share(session, await _own(session, caller), ttl_days, pepper, now)


async def create_share_for(
    session: AsyncSession, user: User, environment: Environment, *, ttl_days: int, pepper: bytes, now: dt.datetime
) -> ShareCreated:
    """Operator action (`passport share`): the freelancer must have a passport already."""
    passport = await _passport(session, user.id, environment)
    if passport is None or user.kind is not UserKind.freelancer:
        raise PassportError(f"{user.email} has no passport in {environment.label}")
    if not 1 <= ttl_days <= 365:
        raise PassportError("the lifetime must be 1 to 365 days")
    return await _create_share(session, passport, ttl_days, pepper, now)


def _shares_of(passport: Passport) -> Select[PassportShare]:
    return scoped(select(PassportShare), PassportShare, passport.environment).where(
        PassportShare.passport_id == passport.id
    )


async def _shares(session: AsyncSession, passport: Passport) -> list[PassportShare]:
    return list(await session.scalars(_shares_of(passport).order_by(PassportShare.created_at)))


async def list_shares(
    session: AsyncSession,
    caller: Actor,
    now: dt.datetime,
    *,
    limit: int,
    cursor: str | None,
    cursors: Cursors,
) -> ShareList:
    """A page of the caller's share-tokens, newest first."""
    passport = await _own(session, caller)
    page = await paginate(
        session,
        _shares_of(passport),
        PassportShare.created_at,
        PassportShare.id,
        limit=limit,
        cursor=cursor,
        cursors=cursors,
        scope=f"passport-shares:{passport.id}",
        key_of=created_key,
    )
    return ShareList(data=[share_view(s, now) for s in page.rows], has_more=page.has_more, next_cursor=page.next_cursor)


async def _own_share(session: AsyncSession, caller: Actor, share_id: uuid.UUID) -> PassportShare:
    passport = await _own(session, caller)
    share = await session.scalar(
        scoped(select(PassportShare), PassportShare, caller.environment).where(
            PassportShare.id == share_id, PassportShare.passport_id == passport.id
        )
    )
    if share is None:
        raise ApiError("share_not_found", "You have no share with this id in this environment.")
    return share


async def get_share(session: AsyncSession, caller: Actor, share_id: uuid.UUID, now: dt.datetime) -> Share:
    """One of the caller's shares; `share_not_found` (or `freelancer_only`, `no_passport`) otherwise."""
    return share_view(await _own_share(session, caller, share_id), now)


def _revoke(share: PassportShare, now: dt.datetime) -> None:
    if share.revoked_at is None:
        share.revoked_at = now


async def revoke_share(session: AsyncSession, caller: Actor, share_id: uuid.UUID, now: dt.datetime) -> Share:
    """Revoke one of the caller's shares; revoking twice is harmless."""
    share = await _own_share(session, caller, share_id)
    _revoke(share, now)
    await session.flush()
    return share_view(share, now)


async def _share_by_token(
    session: AsyncSession,
    token: str,
    pepper: bytes,
    previous_pepper: bytes | None,
    environment: Environment | None = None,
) -> PassportShare | None:
    """The share behind a token, keyed with the current secret or (during a rotation) the retired one.

    A share found under the retired secret is re-hashed to the current one, so it no longer needs the retired one.
    """
    token_hash = share_tokens.hash_share_token(token, pepper)
    statement = select(PassportShare)
    if environment is not None:
        statement = scoped(statement, PassportShare, environment)
    if previous_pepper is None:
        statement = statement.where(PassportShare.token_hash == token_hash)
    else:
        previous_hash = share_tokens.hash_share_token(token, previous_pepper)
        statement = statement.where(PassportShare.token_hash.in_((token_hash, previous_hash)))
    share = await session.scalar(statement)
    if share is not None and share.token_hash != token_hash:
        share.token_hash = token_hash
        await session.flush()
    return share


async def revoke_share_by_token(
    session: AsyncSession, token: str, *, pepper: bytes, previous_pepper: bytes | None = None, now: dt.datetime
) -> Share:
    """Operator action (`passport revoke-share TOKEN`), in whichever environment the token lives."""
    share = await _share_by_token(session, token.strip(), pepper, previous_pepper)
    if share is None:
        raise PassportError("no such share-token")
    _revoke(share, now)
    await session.flush()
    return share_view(share, now)


async def list_views(
    session: AsyncSession,
    caller: Actor,
    share_id: uuid.UUID,
    *,
    limit: int,
    cursor: str | None,
    cursors: Cursors,
) -> ShareViewList:
    """A page of the verifications of one of the caller's share-tokens, newest first."""
    share = await _own_share(session, caller, share_id)
    page = await paginate(
        session,
        select(PassportShareView).where(PassportShareView.share_id == share.id),
        PassportShareView.viewed_at,
        PassportShareView.id,
        limit=limit,
        cursor=cursor,
        cursors=cursors,
        scope=f"passport-share-views:{share.id}",
        key_of=lambda view: Key(view.viewed_at, view.id),
    )
    viewers = {view.viewer_user_id for view in page.rows}
    emails = {
        user_id: email
        for user_id, email in await session.execute(select(User.id, User.email).where(User.id.in_(viewers)))
    }
    return ShareViewList(
        data=[
            ShareView(viewed_at=v.viewed_at, viewer_id=v.viewer_user_id, viewer_email=emails[v.viewer_user_id])
            for v in page.rows
        ],
        has_more=page.has_more,
        next_cursor=page.next_cursor,
    )


async def shares_with_views(
    session: AsyncSession, caller: Actor, now: dt.datetime
) -> list[tuple[Share, list[ShareView]]]:
    """Every share of the caller's passport, oldest first, each with its views: three queries whatever the count."""
    passport = await _own(session, caller)
    shares = await _shares(session, passport)
    views: dict[uuid.UUID, list[ShareView]] = {share.id: [] for share in shares}
    statement = (
        select(PassportShareView.share_id, PassportShareView.viewed_at, User.id, User.email)
        .join(User, User.id == PassportShareView.viewer_user_id)
        .join(PassportShare, PassportShare.id == PassportShareView.share_id)
        .where(PassportShare.passport_id == passport.id)
    )
    rows = await session.execute(
        scoped(statement, PassportShare, passport.environment).order_by(PassportShareView.viewed_at)
    )
    for share_id, at, viewer, email in rows:
        if share_id in views:  # a share committed between the two reads is not listed, nor are its views
            views[share_id].append(ShareView(viewed_at=at, viewer_id=viewer, viewer_email=email))
    return [(share_view(share, now), views[share.id]) for share in shares]


def summary_payload(summary: PassportSummary) -> bytes:
    """The signed bytes: the summary without its signature, as compact JSON with sorted keys."""
    fields = summary.model_dump(mode="json", exclude={"jws_signature"})
    return orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)


def _summary(
    catalogue: Catalogue,
    *,
    freelancer_id: uuid.UUID,
    environment: Environment,
    share_expires_at: dt.datetime,
    counted: list[tuple[str, dt.date | None]],
    issued_at: dt.datetime,
) -> PassportSummary:
    """The unsigned summary: `counted` are the valid verifications (check, expires on), in check order."""
    ends = [share_expires_at] + [
        dt.datetime.combine(expires_on + dt.timedelta(days=1), dt.time(), dt.UTC)
        for _, expires_on in counted
        if expires_on
    ]
    return PassportSummary(
        freelancer_id=freelancer_id,
        issued_at=issued_at,
        expires_at=min(ends),
        compliance_score=catalogue.score({check for check, _ in counted}),
        verifications=[check for check, _ in counted],
        livemode=environment is Environment.live,
        jws_signature="",
    )


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
    session: AsyncSession,
    caller: Caller,
    token: str,
    *,
    pepper: bytes,
    previous_pepper: bytes | None = None,
    keys: SigningKeys,
    catalogue: Catalogue,
    now: dt.datetime,
) -> PassportSummary:
    """The signed summary behind a share-token; unknown, expired and revoked tokens are the same 404."""
    share = None
    if len(token) <= share_tokens.MAX_LENGTH:
        share = await _share_by_token(session, token, pepper, previous_pepper, caller.environment)
    if share is None or share.status(now) != "active":
        raise ApiError("share_not_found")
    passport = await session.get_one(Passport, share.passport_id)
    today = now.date()
    verifications = await _verifications(session, passport)
    unsigned = _summary(
        catalogue,
        freelancer_id=passport.user_id,
        environment=share.environment,
        share_expires_at=share.expires_at,
        counted=[(r.check, r.expires_on) for r in verifications if is_valid(r.verified_on, r.expires_on, today)],
        issued_at=now.replace(microsecond=0),
    )
    view, event = _view_rows(caller, share.id, passport.user_id, share.environment, now)
    session.add(PassportShareView(**view))
    await session.execute(insert(OutboxEvent), [event])
    await session.flush()
    signature = keys.sign(share.environment, summary_payload(unsigned))
    return unsigned.model_copy(update={"jws_signature": signature})


class SharedUnderRetiredSecret(Exception):
    """The share was found by its hash under the retired secret: `verify_share` re-hashes it (a write)."""


async def verify_share_json(
    reader: PassportReader,
    audit: GroupCommit,
    caller: Caller,
    token: str,
    *,
    pepper: bytes,
    previous_pepper: bytes | None = None,
    keys: SigningKeys,
    catalogue: Catalogue,
    now: dt.datetime,
    cache: LatestCache[bytes],
) -> bytes:
    """`verify_share` as its JSON body: one read, the body signed again only when what it says (or the second of
    `issued_at`, or the signing key) changes, and the view with its event committed through the group commit
    before the body is returned. Raises `SharedUnderRetiredSecret` for the session path to re-hash the share."""
    if len(token) > share_tokens.MAX_LENGTH:
        raise ApiError("share_not_found")
    token_hash = share_tokens.hash_share_token(token, pepper)
    previous_hash = token_hash if previous_pepper is None else share_tokens.hash_share_token(token, previous_pepper)
    parameters = {"current_hash": token_hash, "previous_hash": previous_hash, "environment": caller.environment}
    rows = await reader.fetch(reads.SHARE, parameters)
    if not rows:
        raise ApiError("share_not_found")
    share_id, found_hash, environment, expires_at, revoked_at, freelancer_id = rows[0][:6]
    if found_hash != token_hash:
        raise SharedUnderRetiredSecret
    if revoked_at is not None or expires_at <= now:
        raise ApiError("share_not_found")
    today = now.date()
    counted = [(row[6], row[8]) for row in rows if row[6] is not None and is_valid(row[7], row[8], today)]
    key = keys.signing_key(environment)
    issued_at = now.replace(microsecond=0)
    inputs = (key.kid, issued_at, freelancer_id, expires_at, *counted)
    body = cache.get(share_id, inputs)
    if body is None:
        unsigned = _summary(
            catalogue,
            freelancer_id=freelancer_id,
            environment=environment,
            share_expires_at=expires_at,
            counted=counted,
            issued_at=issued_at,
        )
        signed = unsigned.model_copy(update={"jws_signature": sign_with(key, summary_payload(unsigned))})
        body = signed.model_dump_json().encode()
        cache.put(share_id, inputs, body)
    view, event = _view_rows(caller, share_id, freelancer_id, environment, now)
    try:
        await audit.insert((PassportShareView, view), (OutboxEvent, event))
    except IntegrityError:  # the share (or its freelancer) was deleted since the read
        raise ApiError("share_not_found") from None
    return body
