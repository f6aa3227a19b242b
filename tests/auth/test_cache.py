from __future__ import annotations

import uuid

from compliance_api.accounts.models import Plan, UserKind
from compliance_api.auth.cache import TokenCache, resolution
from compliance_api.auth.service import TokenRecord
from compliance_api.kit.environment import Environment


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_entries_expire_after_the_ttl_and_ask_for_refresh_in_their_last_quarter() -> None:
    clock = FakeClock()
    cache = TokenCache(4.0, clock=clock)
    record = TokenRecord(uuid.uuid4(), uuid.uuid4(), Environment.live, Plan.pro, UserKind.business, False)
    cache.put("h", resolution(Environment.live, record, last4="abcd"))
    entry, refresh = cache.get("h")
    assert entry is not None
    assert not refresh
    assert entry.caller is not None
    assert (entry.caller.tier.name, entry.caller.token_last4) == ("pro", "abcd")
    assert entry.limiter_key == f"{record.user_id}:live"
    clock.now += 3.1
    assert cache.get("h")[1] is True
    clock.now += 1.0
    assert cache.get("h") == (None, False)


def test_unknown_tokens_are_cached_as_unknown_and_the_cache_is_bounded() -> None:
    cache = TokenCache(4.0, max_entries=2, clock=FakeClock())
    for name in ("a", "b", "c"):
        cache.put(name, resolution(Environment.test, None, last4="0000"))
    assert cache.get("a") == (None, False)
    entry, _ = cache.get("c")
    assert entry is not None
    assert (entry.record, entry.caller, entry.environment) == (None, None, Environment.test)
