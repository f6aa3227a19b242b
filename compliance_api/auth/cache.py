"""A short-lived in-process cache of resolved tokens, so the hot path rarely touches the database.

Entries live at most `ttl` seconds (≤ 5), which bounds how long a revocation made anywhere (another worker, the
CLI) can go unnoticed here. Unknown hashes are cached too, so a flood of well-formed but unknown tokens costs one
query per distinct token per TTL. A known token's entry carries its ready-made `Caller` and rate-limit key, so a
cache hit costs a dict lookup; an entry in the last quarter of its life is refreshed in the background, so a busy
token never makes requests wait for the database.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from compliance_api.auth.caller import Caller
from compliance_api.auth.service import TokenRecord
from compliance_api.kit.environment import Environment
from compliance_api.ratelimit.tiers import tier_for, user_bucket


@dataclass(frozen=True, slots=True)
class CachedToken:
    """What one token hash resolved to: `record` None means no such token."""

    environment: Environment
    record: TokenRecord | None
    caller: Caller | None
    limiter_key: str


def resolution(environment: Environment, record: TokenRecord | None, *, last4: str) -> CachedToken:
    """The cache entry for a token of `environment` whose hash resolved to `record` (None: unknown)."""
    if record is None:
        return CachedToken(environment, None, None, "")
    caller = Caller(
        user_id=record.user_id,
        token_id=record.token_id,
        environment=record.environment,
        plan=record.plan,
        kind=record.kind,
        tier=tier_for(record.plan, record.environment),
        token_last4=last4,
    )
    return CachedToken(record.environment, record, caller, user_bucket(record.user_id, record.environment))


class TokenCache:
    def __init__(
        self, ttl_seconds: float, max_entries: int = 50_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._clock = clock
        self._ttl = ttl_seconds
        self._max = max_entries
        self._refresh_after = ttl_seconds * 0.75
        self._entries: OrderedDict[str, tuple[float, float, CachedToken]] = OrderedDict()

    def get(self, token_hash: str) -> tuple[CachedToken | None, bool]:
        """(entry or None, whether the entry is old enough to refresh in the background before it expires)."""
        entry = self._entries.get(token_hash)
        if entry is None:
            return None, False
        now = self._clock()
        if entry[0] < now:
            del self._entries[token_hash]
            return None, False
        return entry[2], entry[1] < now

    def discard(self, token_hash: str) -> None:
        """Forget one token now (revoked in this process: no need to wait for the entry to expire)."""
        self._entries.pop(token_hash, None)

    def put(self, token_hash: str, cached: CachedToken) -> None:
        now = self._clock()
        self._entries[token_hash] = (now + self._ttl, now + self._refresh_after, cached)
        self._entries.move_to_end(token_hash)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)
