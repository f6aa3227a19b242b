"""Sandbox passport fixtures for `compliance-api demo`: a demo freelancer, its passport and share-tokens."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import Plan, UserKind
from compliance_api.auth import service as auth_service
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.passport import service
from compliance_api.passport.catalogue import packaged_catalogue
from compliance_api.passport.models import Passport, PassportShare

DEMO_FREELANCER_EMAIL = "demo-freelancer@example.com"
DEMO_CHECKS = ("kvk_registration", "vat_number", "identity", "professional_liability_insurance")
SANDBOX = Environment.test


async def create_passport_fixtures(session: AsyncSession, *, pepper: bytes) -> dict[str, Any]:
    """The demo freelancer's sandbox passport (score 85, verified), a fresh valid and an expired share-token,
    and a fresh sandbox token of the freelancer; earlier demo shares and tokens are revoked."""
    now = utcnow()
    user = await accounts_service.get_or_create(
        session, email=DEMO_FREELANCER_EMAIL, kind=UserKind.freelancer, plan=Plan.free
    )
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
    passport_id = await session.scalar(
        select(Passport.id).where(Passport.user_id == user.id, Passport.environment == SANDBOX)
    )
    for old in await session.scalars(select(PassportShare).where(PassportShare.passport_id == passport_id)):
        old.revoked_at = old.revoked_at or now
    for old_token in await auth_service.list_for_user(session, user_id=user.id, environment=SANDBOX):
        if old_token.revoked_at is None:
            await auth_service.revoke(session, token_id=old_token.id)
    valid = await service.create_share_for(session, user, SANDBOX, ttl_days=365, pepper=pepper, now=now)
    expired = await service.create_share_for(
        session, user, SANDBOX, ttl_days=1, pepper=pepper, now=now - dt.timedelta(days=2)
    )
    _, token = await auth_service.create(session, user=user, environment=SANDBOX, name="demo", pepper=pepper)
    share_tokens = {"valid": valid.token, "expired": expired.token}
    return {
        "passport_share_tokens": share_tokens,
        "passport": {"freelancer_id": str(user.id), "email": user.email, "token": token, "share_tokens": share_tokens},
    }
