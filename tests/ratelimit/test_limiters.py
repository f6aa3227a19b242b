"""One suite, two backends: the in-memory limiter and the Redis limiter keep the same contract."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from compliance_api.ratelimit.limiter import Limiter, RedisLimiter
from compliance_api.ratelimit.tiers import Tier

SLOW = Tier("slow", per_minute=1, burst=5)  # refills once a minute: nothing refills during a test


async def test_remaining_requests_succeed_then_429_with_retry_after(limiter: Limiter) -> None:
    first = await limiter.consume("k", SLOW)
    assert first.allowed
    assert (first.limit, first.remaining) == (5, 4)
    for expected_remaining in (3, 2, 1, 0):
        decision = await limiter.consume("k", SLOW)
        assert decision.allowed
        assert decision.remaining == expected_remaining
    refused = await limiter.consume("k", SLOW)
    assert not refused.allowed
    assert refused.remaining == 0
    assert 59 <= refused.retry_after_seconds <= 60
    assert 299 <= refused.reset_seconds <= 300


async def test_buckets_are_separate_per_key(limiter: Limiter) -> None:
    for _ in range(5):
        assert (await limiter.consume("a", SLOW)).allowed
    assert not (await limiter.consume("a", SLOW)).allowed
    assert (await limiter.consume("b", SLOW)).allowed


async def test_concurrent_requests_get_exactly_the_burst(limiter: Limiter) -> None:
    tier = Tier("burst100", per_minute=1, burst=100)
    decisions = await asyncio.gather(*(limiter.consume("c", tier) for _ in range(300)))
    assert sum(d.allowed for d in decisions) == 100
    assert sorted(d.remaining for d in decisions if d.allowed) == list(range(100))


async def test_redis_failure_falls_back_to_local_buckets() -> None:
    limiter = RedisLimiter(Redis.from_url("redis://127.0.0.1:1", socket_connect_timeout=0.5))
    decisions = [await limiter.consume("k", SLOW) for _ in range(6)]
    assert [d.allowed for d in decisions] == [True] * 5 + [False]
    await limiter.close()
