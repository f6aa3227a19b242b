"""Token rules: create (shown once), list, revoke, and resolve a presented token."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts.models import Plan, User, UserKind
from compliance_api.auth import queries, tokens
from compliance_api.auth.models import ApiToken
from compliance_api.events import service as events
from compliance_api.events.types import EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment


class TokenNotFound(Exception):
    def __init__(self, token_id: uuid.UUID | str) -> None:
        super().__init__(f"no token with id {token_id}")


@dataclass(frozen=True, slots=True)
class TokenRecord:
    """What authentication needs to know about a stored token."""

    token_id: uuid.UUID
    user_id: uuid.UUID
    environment: Environment
    plan: Plan
    kind: UserKind
    is_revoked: bool


async def create(
    session: AsyncSession,
    *,
    user: User,
    environment: Environment,
    name: str,
    pepper: bytes,
    secret: str | None = None,
) -> tuple[ApiToken, str]:
    """A new token row and the token itself, which exists nowhere else and is shown to the caller once (`secret`
    gives a token derived elsewhere, as the demo's are; default: a random one)."""
    secret = secret or tokens.generate(environment)
    row = ApiToken(
        user_id=user.id,
        environment=environment,
        name=name.strip()[:100] or "default",
        token_hash=tokens.hash_token(secret, pepper),
        last4=secret[-4:],
    )
    queries.add(session, row)
    await session.flush()
    await _emit(session, EventName.API_TOKEN_CREATED, row, "created_at")
    return row, secret


async def _emit(session: AsyncSession, type: EventName, row: ApiToken, stamp: str) -> None:
    """`api_token.created` / `api_token.revoked` to the outbox, in the change's transaction (never the token)."""
    at = getattr(row, stamp)
    await events.emit(
        session,
        environment=row.environment,
        type=type,
        payload={
            "user_id": str(row.user_id),
            "token_id": str(row.id),
            "name": row.name,
            "last4": row.last4,
            stamp: at.isoformat(),
        },
    )


async def list_for_user(
    session: AsyncSession, *, user_id: uuid.UUID, environment: Environment | None = None
) -> list[ApiToken]:
    return list(await queries.tokens_of(session, user_id, environment))


async def get(session: AsyncSession, *, token_id: uuid.UUID, environment: Environment) -> ApiToken:
    row = await queries.token_in(session, token_id, environment)
    if row is None:
        raise TokenNotFound(token_id)
    return row


async def revoke(session: AsyncSession, *, token_id: uuid.UUID) -> ApiToken:
    """Revoke by id (operator action); every worker stops accepting it within the token cache TTL."""
    row = await queries.token(session, token_id)
    if row is None:
        raise TokenNotFound(token_id)
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        await session.flush()
        await _emit(session, EventName.API_TOKEN_REVOKED, row, "revoked_at")
    return row


async def get_owned(session: AsyncSession, *, user_id: uuid.UUID, token_id: uuid.UUID) -> ApiToken:
    """One of `user_id`'s own tokens (the dashboard); another user's token is TokenNotFound, as if absent."""
    row = await queries.token_of(session, user_id, token_id)
    if row is None:
        raise TokenNotFound(token_id)
    return row


async def revoke_owned(session: AsyncSession, *, user_id: uuid.UUID, token_id: uuid.UUID) -> ApiToken:
    """Revoke one of `user_id`'s own tokens (the dashboard); another user's token is TokenNotFound, as if absent."""
    row = await get_owned(session, user_id=user_id, token_id=token_id)
    return await revoke(session, token_id=row.id)


TokenChanges = dict[str, datetime | str]


async def resolve(session: AsyncSession, *, token_hash: str, previous_hash: str | None = None) -> TokenRecord | None:
    """The stored token behind a hash, with its owner's plan; also stamps `last_used_at` (`find`, then `stamp`)."""
    record, changes = await find(session, token_hash=token_hash, previous_hash=previous_hash)
    if record is not None and changes:
        await stamp(session, record.token_id, changes)
    return record


async def find(
    session: AsyncSession, *, token_hash: str, previous_hash: str | None = None
) -> tuple[TokenRecord | None, TokenChanges]:
    """The stored token behind a hash, with its owner's plan, and the changes its use calls for (`last_used_at`
    unless revoked, and its new hash if found by the old one): a read only.

    During a secret rotation `previous_hash` (the token keyed with the retired secret) is looked up in the same
    query, and a token found by it is to be re-hashed to `token_hash`, so it no longer needs the retired secret.
    """
    row = await queries.token_by_hash(session, token_hash, previous_hash)
    if row is None:
        return None, {}
    changes: TokenChanges = {} if row.revoked_at is not None else {"last_used_at": utcnow()}
    if row.token_hash != token_hash:
        changes["token_hash"] = token_hash
    return TokenRecord(row.id, row.user_id, row.environment, row.plan, row.kind, row.revoked_at is not None), changes


async def stamp(session: AsyncSession, token_id: uuid.UUID, changes: TokenChanges) -> None:
    """Write what `find` said a token's use changes."""
    await queries.change_token(session, token_id, changes)
