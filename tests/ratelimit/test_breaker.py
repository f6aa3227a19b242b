"""The Redis limiter's circuit breaker, against the real Redis behind a proxy the test pauses: once open, decisions
are made in-process without a byte sent to Redis; after the cool-down one probe, in a task of its own beside the
requests, finds Redis back and closes it."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from urllib.parse import urlsplit

import pytest
from prometheus_client import REGISTRY
from redis.asyncio import Redis
from structlog.testing import capture_logs

from compliance_api.ratelimit.breaker import BreakerState, CircuitBreaker
from compliance_api.ratelimit.limiter import RedisLimiter
from compliance_api.ratelimit.tiers import Tier
from tests.proxy import TcpProxy, proxy_to

SLOW = Tier("slow", per_minute=1, burst=5)
COOL_DOWN = 5.0


class Clock:
    """Monotonic seconds that move only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def redis_proxy(redis_url: str) -> Iterator[tuple[TcpProxy, str]]:
    """A proxy in front of the test Redis, and the URL of the same database through it."""
    target = urlsplit(redis_url)
    with proxy_to(target.hostname or "127.0.0.1", target.port or 6379) as proxy:
        yield proxy, f"redis://127.0.0.1:{proxy.port}{target.path}"


@pytest.fixture
async def limiter(redis_proxy: tuple[TcpProxy, str], clock: Clock) -> AsyncIterator[RedisLimiter]:
    _, url = redis_proxy
    # A short socket timeout stands in for the production 2 s: only the call that opens the breaker waits for it.
    redis = Redis.from_url(url, socket_timeout=0.2, socket_connect_timeout=0.2)
    breaker = CircuitBreaker(cool_down=COOL_DOWN, clock=clock)
    redis_limiter = RedisLimiter(redis, prefix=f"test:{uuid.uuid4()}:", breaker=breaker)
    yield redis_limiter
    await redis_limiter.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


def state_of(breaker: CircuitBreaker) -> BreakerState:
    """Read through a call: mypy would otherwise keep the state narrowed from an earlier assertion."""
    return breaker.state


def breaker_state() -> float | None:
    return REGISTRY.get_sample_value("compliance_redis_breaker_state")


def transitions(state: str) -> float:
    return REGISTRY.get_sample_value("compliance_redis_breaker_transitions_total", {"state": state}) or 0.0


async def test_paused_redis_opens_the_breaker_then_decisions_skip_redis_until_a_probe_closes_it(
    limiter: RedisLimiter, redis_proxy: tuple[TcpProxy, str], clock: Clock
) -> None:
    proxy, _ = redis_proxy
    assert (await limiter.consume("k", SLOW)).allowed
    assert proxy.bytes_from_clients > 0
    opened_before = transitions("open")

    proxy.pause()
    with capture_logs() as logs:
        first = await limiter.consume("k", SLOW)  # waits for the socket timeout: the failure that opens the breaker
        sent, connections = proxy.bytes_from_clients, proxy.connections
        during = [await limiter.consume("k", SLOW) for _ in range(20)]
    assert first.allowed
    assert state_of(limiter.breaker) is BreakerState.open
    assert (proxy.bytes_from_clients, proxy.connections) == (sent, connections)  # not a byte, not a connection
    assert [d.allowed for d in during] == [True] * 4 + [False] * 16  # this process's own bucket: 5 in all
    assert [(e["event"], e["log_level"]) for e in logs] == [("redis_unreachable", "warning")]
    assert breaker_state() == BreakerState.open
    assert transitions("open") == opened_before + 1

    proxy.resume()
    clock.now += COOL_DOWN - 0.1
    await limiter.consume("k", SLOW)
    assert proxy.bytes_from_clients == sent  # still cooling down
    clock.now += 0.2
    with capture_logs() as logs:
        decided = await limiter.consume("other", SLOW)  # decided locally; starts the probe beside it
        await limiter.probe_finished()
    assert proxy.bytes_from_clients > sent
    assert decided.allowed
    assert state_of(limiter.breaker) is BreakerState.closed
    assert [(e["event"], e["log_level"]) for e in logs] == [("redis_reachable_again", "info")]
    assert breaker_state() == BreakerState.closed
    again = proxy.bytes_from_clients
    await limiter.consume("other", SLOW)
    assert proxy.bytes_from_clients > again


async def test_a_failed_probe_opens_it_again_quietly(
    limiter: RedisLimiter, redis_proxy: tuple[TcpProxy, str], clock: Clock
) -> None:
    proxy, _ = redis_proxy
    proxy.close()
    with capture_logs() as logs:
        await limiter.consume("k", SLOW)
        clock.now += COOL_DOWN + 0.1
        await limiter.consume("k", SLOW)  # starts the probe, which is refused
        await limiter.probe_finished()
        assert state_of(limiter.breaker) is BreakerState.open
        connections = proxy.connections
        await limiter.consume("k", SLOW)
        await limiter.probe_finished()
    assert proxy.connections == connections, "no probe before the next cool-down"
    assert [e["event"] for e in logs] == ["redis_unreachable"]


async def test_after_a_cool_down_no_request_waits_for_a_redis_that_hangs(
    redis_proxy: tuple[TcpProxy, str], clock: Clock
) -> None:
    """The probe once rode on a request, which then waited the whole socket timeout (2 s in production) whenever
    Redis still hung: every cool-down, some client request paid for it. Here the socket timeout is a minute and Redis
    hangs; the requests after the cool-down are all answered while the probe is still waiting for Redis."""
    proxy, url = redis_proxy
    redis = Redis.from_url(url, socket_timeout=60, socket_connect_timeout=60)
    breaker = CircuitBreaker(cool_down=COOL_DOWN, clock=clock)
    limiter = RedisLimiter(redis, prefix=f"test:{uuid.uuid4()}:", breaker=breaker)
    try:
        assert (await limiter.consume("k", SLOW)).allowed  # connected
        breaker.failed(TimeoutError())  # as the call that found Redis hanging would have
        proxy.pause()
        clock.now += COOL_DOWN + 0.1

        decisions = [await limiter.consume("other", SLOW) for _ in range(5)]

        assert all(decision.allowed for decision in decisions)
        assert limiter.probing, "every request was answered while the probe waits for Redis"
        assert state_of(breaker) is BreakerState.half_open
        proxy.resume()  # Redis answers the probe
        await limiter.probe_finished()
        assert state_of(breaker) is BreakerState.closed
    finally:
        proxy.resume()
        await limiter.close()


def test_half_open_lets_exactly_one_probe_through_and_no_request(clock: Clock) -> None:
    breaker = CircuitBreaker(cool_down=COOL_DOWN, clock=clock)
    breaker.failed(ConnectionError())
    assert (breaker.allows(), breaker.probe_due()) == (False, False)
    clock.now += COOL_DOWN
    assert breaker.probe_due()
    assert state_of(breaker) is BreakerState.half_open
    assert (breaker.allows(), breaker.probe_due()) == (False, False)  # the probe is in flight; requests stay local
    clock.now += COOL_DOWN  # ... and never reported: another may go
    assert breaker.probe_due()
    breaker.succeeded()
    assert state_of(breaker) is BreakerState.closed
    assert (breaker.allows(), breaker.probe_due()) == (True, False)


def test_a_threshold_above_one_tolerates_isolated_failures(clock: Clock) -> None:
    breaker = CircuitBreaker(failure_threshold=3, cool_down=COOL_DOWN, clock=clock)
    breaker.failed(ConnectionError())
    breaker.failed(ConnectionError())
    breaker.succeeded()
    breaker.failed(ConnectionError())
    breaker.failed(ConnectionError())
    assert breaker.allows()
    breaker.failed(ConnectionError())
    assert not breaker.allows()
