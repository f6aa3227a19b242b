"""Rate limiters: an in-process one for a single worker, a Redis one shared by every worker."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from importlib import resources
from typing import Protocol

from redis.asyncio import Redis
from redis.exceptions import RedisError

from compliance_api.ratelimit.breaker import CircuitBreaker
from compliance_api.ratelimit.gcra import Decision, decide
from compliance_api.ratelimit.tiers import Tier

Clock = Callable[[], int]


def wall_clock_us() -> int:
    return time.time_ns() // 1000


class Limiter(Protocol):
    async def consume(self, key: str, tier: Tier) -> Decision: ...

    async def close(self) -> None: ...


class MemoryLimiter:
    """One process's buckets in a dict; exact, and the right choice for a single worker."""

    def __init__(self, clock: Clock = wall_clock_us) -> None:
        self._tats: dict[str, int] = {}
        self._clock = clock

    def consume_now(self, key: str, tier: Tier) -> Decision:
        now = self._clock()
        decision, new_tat = decide(
            self._tats.get(key), now_us=now, interval_us=tier.emission_interval_us, burst=tier.burst
        )
        if new_tat is not None:
            self._tats[key] = new_tat
            if len(self._tats) > 100_000:
                self._forget_full_buckets(now)
        return decision

    async def consume(self, key: str, tier: Tier) -> Decision:
        return self.consume_now(key, tier)

    def _forget_full_buckets(self, now: int) -> None:
        """A bucket whose TAT has passed is full: forgetting it changes no decision."""
        self._tats = {k: v for k, v in self._tats.items() if v > now}

    async def close(self) -> None:
        return None


_SCRIPT = resources.files("compliance_api.ratelimit").joinpath("gcra.lua").read_text()


class RedisLimiter:
    """Buckets in Redis, decided atomically by one Lua script.

    A Redis round trip per request costs more CPU in the Python client than the whole auth path,
    so checks that arrive while a script call is in flight are queued and sent together in the next call: one
    round trip per event-loop pass instead of per request, with every decision still made atomically in Redis in
    arrival order (so the limit stays exact across processes).

    If Redis fails or times out, a circuit breaker opens: decisions fall back to this process's own buckets at once,
    without waiting for Redis, and once every `breaker.cool_down` seconds a PING in a task of its own probes whether
    it answers again, while the requests go on deciding locally: no request waits for a Redis that hangs, except the
    one whose call found it gone (fail open per process: with N processes a caller may get up to N times its limit
    meanwhile).
    """

    def __init__(
        self, redis: Redis, *, prefix: str = "rl:", max_batch: int = 256, breaker: CircuitBreaker | None = None
    ) -> None:
        self._redis = redis
        self._prefix = prefix
        self._max_batch = max_batch
        self._script = redis.register_script(_SCRIPT)
        self._pending: list[tuple[str, Tier, asyncio.Future[Decision]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._fallback = MemoryLimiter()
        self.breaker = breaker or CircuitBreaker()
        self._probe: asyncio.Task[None] | None = None

    async def consume(self, key: str, tier: Tier) -> Decision:
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._pending.append((key, tier, future))
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending[: self._max_batch], self._pending[self._max_batch :]
                await self._decide(batch)
        finally:
            self._flusher = None

    async def _decide(self, batch: list[tuple[str, Tier, asyncio.Future[Decision]]]) -> None:
        if not self.breaker.allows():
            if self.breaker.probe_due():
                self._probe = asyncio.create_task(self._probe_redis())
            self._decide_locally(batch)
            return
        keys = [self._prefix + key for key, _, _ in batch]
        args: list[int] = []
        for _, tier, _ in batch:
            args += [tier.emission_interval_us, tier.burst]
        try:
            raw = await self._script(keys=keys, args=args)
        except (RedisError, OSError) as exc:
            self.breaker.failed(exc)
            self._decide_locally(batch)
            return
        self.breaker.succeeded()
        for index, (_, tier, future) in enumerate(batch):
            allowed, remaining, reset_us, retry_us = raw[4 * index : 4 * index + 4]
            if not future.done():
                future.set_result(Decision(bool(allowed), tier.burst, int(remaining), int(reset_us), int(retry_us)))

    async def _probe_redis(self) -> None:
        """Ask Redis whether it answers again, beside the requests; the breaker hears the outcome."""
        try:
            await self._redis.ping()
        except (RedisError, OSError) as exc:
            self.breaker.failed(exc)
        else:
            self.breaker.succeeded()

    @property
    def probing(self) -> bool:
        """Whether a probe is waiting for Redis."""
        return self._probe is not None and not self._probe.done()

    async def probe_finished(self) -> None:
        """Wait for a probe in flight, if any (tests, and `close`)."""
        if self._probe is not None:
            await asyncio.gather(self._probe, return_exceptions=True)

    def _decide_locally(self, batch: list[tuple[str, Tier, asyncio.Future[Decision]]]) -> None:
        for key, tier, future in batch:
            if not future.done():
                future.set_result(self._fallback.consume_now(key, tier))

    async def close(self) -> None:
        if self._probe is not None:
            self._probe.cancel()
            await self.probe_finished()
        await self._redis.aclose()
