"""Throttles for account forms, on the API's rate limiter (memory or Redis): one bucket per account, one per address.

Buckets are GCRA tiers like the API's: `burst` attempts at once, then `per_minute` more each minute. The account
bucket is keyed by a hash of the normalised e-mail (`email_identity`: every spelling the account lookup accepts for an
address, fullwidth letters or an ideographic full stop included, shares the bucket), known or not, so throttling
tells nothing about which exist.
"""

from __future__ import annotations

import hashlib

from compliance_api.accounts.service import email_identity
from compliance_api.ratelimit.limiter import Limiter
from compliance_api.ratelimit.tiers import Tier

SIGN_IN_PER_ACCOUNT = Tier("sign_in_account", per_minute=1, burst=10)
SIGN_IN_PER_ADDRESS = Tier("sign_in_address", per_minute=10, burst=30)
SIGN_UP_PER_ADDRESS = Tier("sign_up_address", per_minute=2, burst=10)
RESET_PER_ACCOUNT = Tier("reset_account", per_minute=1, burst=3)
RESET_PER_ADDRESS = Tier("reset_address", per_minute=2, burst=10)


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
