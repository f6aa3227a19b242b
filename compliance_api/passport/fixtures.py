"""Sandbox passport fixtures for `compliance-api demo`: a demo freelancer, its passport and share-tokens.

The share-tokens survive re-running `demo` the way its API tokens do (demo/fixtures.py): each is re-derived as
HMAC(server secret, passport id, kind, generation) and stored only as a keyed hash. The first generation whose
shares are all unrevoked and whose valid share has not expired is the current one; `rotate` revokes it, so the next
derivation gives new tokens. Whenever new demo shares are made, every other share of the demo passport is revoked.
"""

from __future__ import annotations

import datetime as dt
import itertools
import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import Plan, User, UserKind
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.passport import queries, service, share_tokens
from compliance_api.passport.catalogue import packaged_catalogue
from compliance_api.passport.models import PassportShare

DEMO_FREELANCER_EMAIL = "demo-freelancer@example.com"
DEMO_CHECKS = ("kvk_registration", "vat_number", "identity", "professional_liability_insurance")
SANDBOX = Environment.test
# Each demo share's lifetime in days, and how long before now it was made (the expired one is expired from the start).
DEMO_SHARES = {"valid": (365, dt.timedelta(0)), "expired": (1, dt.timedelta(days=2))}


async def demo_freelancer(session: AsyncSession) -> User:
    return await accounts_service.get_or_create(
        session, email=DEMO_FREELANCER_EMAIL, kind=UserKind.freelancer, plan=Plan.free
    )


async def create_passport_fixtures(
    session: AsyncSession, user: User, *, pepper: bytes, rotate: bool = False
) -> dict[str, Any]:
    """The demo freelancer's sandbox passport (score 85, verified) and a valid and an expired share-token: the
    same ones on every run (see the module docstring) unless `rotate`."""
    now = utcnow()
    await service.set_sector(session, user, SANDBOX, "ict", now)
    for check in DEMO_CHECKS:
        await service.record_verification(
            session,
            user,
            SANDBOX,
            packaged_catalogue(),
            check=check,
            verified_on=now.date(),
            expires_on=None,
            evidence_ref=f"demo:{check}",
            now=now,
        )
    passport = await queries.passport_of(session, user.id, SANDBOX)
    assert passport is not None  # recorded just above
    passport_id = passport.id
    tokens = await _demo_shares(session, user, passport_id, pepper=pepper, rotate=rotate, now=now)
    return {
        "passport_share_tokens": tokens,
        "passport": {"freelancer_id": str(user.id), "email": user.email, "share_tokens": tokens},
    }


async def _demo_shares(
    session: AsyncSession, user: User, passport_id: uuid.UUID, *, pepper: bytes, rotate: bool, now: dt.datetime
) -> dict[str, str]:
    """The current generation's share-tokens (see the module docstring), made where missing."""
    shares = {row.token_hash: row for row in await queries.shares_of_passport(session, passport_id)}
    for generation in itertools.count():
        tokens = {
            kind: share_tokens.derive(pepper, f"demo-share:{passport_id}:{kind}:{generation}".encode())
            for kind in DEMO_SHARES
        }
        found = {kind: shares.get(share_tokens.hash_share_token(token, pepper)) for kind, token in tokens.items()}
        if not _spent(found, now):
            if not rotate:
                break
            rotate = False  # the current generation: revoked below, the next one replaces it
        for row in found.values():
            _revoke(row, now)
    missing = [kind for kind, row in found.items() if row is None]
    if missing:
        kept = set(found.values())
        for row in shares.values():
            if row not in kept:
                _revoke(row, now)
    for kind in missing:
        ttl_days, age = DEMO_SHARES[kind]
        await service.create_share_for(
            session, user, SANDBOX, ttl_days=ttl_days, pepper=pepper, now=now - age, token=tokens[kind]
        )
    return tokens


def _spent(found: dict[str, PassportShare | None], now: dt.datetime) -> bool:
    """A generation is spent once one of its shares was revoked or its valid share expired."""
    valid = found["valid"]
    return (valid is not None and valid.expires_at <= now) or any(
        row is not None and row.revoked_at is not None for row in found.values()
    )


def _revoke(share: PassportShare | None, now: dt.datetime) -> None:
    if share is not None and share.revoked_at is None:
        share.revoked_at = now
