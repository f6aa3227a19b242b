"""Throttles for account forms, on the API's rate limiter (memory or Redis): one bucket per account, one per address;
and for a signed-in user's pages, one bucket per user on the tier of the user's plan, as the API limits a token.

Buckets are GCRA tiers like the API's: `burst` attempts at once, then `per_minute` more each minute. The account
bucket is keyed by a hash of the normalised e-mail (`email_identity`: every spelling the account lookup accepts for an
address, fullwidth letters or an ideographic full stop included, shares the bucket), known or not, so throttling
tells nothing about which exist.
"""

from __future__ import annotations

import hashlib
import uuid

from compliance_api.accounts.models import Plan
from compliance_api.accounts.service import email_identity
from compliance_api.kit.environment import Environment
from compliance_api.ratelimit.limiter import Limiter
from compliance_api.ratelimit.tiers import Tier, tier_for

SIGN_IN_PER_ACCOUNT = Tier("sign_in_account", per_minute=1, burst=10)
SIGN_IN_PER_ADDRESS = Tier("sign_in_address", per_minute=10, burst=30)
SIGN_UP_PER_ADDRESS = Tier("sign_up_address", per_minute=2, burst=10)
RESET_PER_ACCOUNT = Tier("reset_account", per_minute=1, burst=3)
RESET_PER_ADDRESS = Tier("reset_address", per_minute=2, burst=10)
DOSSIERS_PER_USER = Tier("dashboard_dossier", per_minute=20, burst=10)
"""A dossier's PDF takes tens of milliseconds of CPU to render: on top of the page limit, ten at once, then one every
three seconds."""


def page_buckets(user_id: uuid.UUID, plan: Plan) -> list[tuple[str, Tier]]:
    """Every signed-in page: the user's own bucket, on the tier the plan gives a production token."""
    return [(f"dash:user:{user_id}", tier_for(plan, Environment.live))]


def dossier_buckets(user_id: uuid.UUID) -> list[tuple[str, Tier]]:
    """A dossier download, on top of the page bucket."""
    return [(f"dash:dossier:{user_id}", DOSSIERS_PER_USER)]


def account_key(purpose: str, email: str) -> str:
    return f"dash:{purpose}:acct:" + hashlib.sha256(email_identity(email).encode()).hexdigest()[:32]


def address_key(purpose: str, address: str) -> str:
    return f"dash:{purpose}:addr:{address}"


async def retry_after(limiter: Limiter, buckets: list[tuple[str, Tier]]) -> int | None:
    """Take one attempt from every bucket; None when all allow it, else seconds until the slowest allows one."""
    waits = []
    for key, tier in buckets:
        decision = await limiter.consume(key, tier)
        if not decision.allowed:
            waits.append(decision.retry_after_seconds)
    return max(waits) if waits else None
