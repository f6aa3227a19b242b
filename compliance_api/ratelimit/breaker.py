"""A circuit breaker for Redis on the hot path: after a failure, stop asking Redis for a cool-down, then probe once,
beside the requests (the limiter probes in a task of its own, so that no request waits for a Redis that hangs).

Hand-rolled on purpose (it is a few lines): pybreaker's async support needs Tornado and purgatory runs a message bus
and a unit of work per call; both read the wall clock, which a test cannot move, and both let every request through
while half-open, where this one lets exactly one probe through.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from enum import IntEnum

import structlog
from structlog.typing import FilteringBoundLogger

from compliance_api.metrics import REDIS_BREAKER_STATE, REDIS_BREAKER_TRANSITIONS


class BreakerState(IntEnum):
    """The value of the `compliance_redis_breaker_state` gauge."""

    closed = 0
    open = 1
    half_open = 2


class CircuitBreaker:
    """Closed: calls go through; `failure_threshold` failures in a row open it. Open: `allows()` says no, and after
    `cool_down` seconds `probe_due()` says yes once (half-open) for a probe the caller makes on its own; the probe's
    success closes it, its failure opens it again. A probe that never reports frees the way for another after a
    cool-down.

    Logged: the first opening (a warning) and the closing; the metrics count every transition, probes included."""

    def __init__(
        self, *, failure_threshold: int = 1, cool_down: float = 5.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.failure_threshold = failure_threshold
        self.cool_down = cool_down
        self._clock = clock
        self.state = BreakerState.closed
        self._failures = 0
        self._next_probe_at = 0.0
        REDIS_BREAKER_STATE.set(BreakerState.closed)

    def allows(self) -> bool:
        """Whether requests may call Redis now (else decide without it)."""
        return self.state is BreakerState.closed

    def probe_due(self) -> bool:
        """Whether to probe Redis now: once per cool-down while it is not closed."""
        if self.state is BreakerState.closed:
            return False
        now = self._clock()
        if now < self._next_probe_at:
            return False
        self._next_probe_at = now + self.cool_down
        self._enter(BreakerState.half_open)
        return True

    def succeeded(self) -> None:
        self._failures = 0
        if self.state is not BreakerState.closed:
            _log().info("redis_reachable_again")
            self._enter(BreakerState.closed)

    def failed(self, error: BaseException) -> None:
        self._failures += 1
        if self.state is BreakerState.closed and self._failures < self.failure_threshold:
            return
        if self.state is BreakerState.closed:
            _log().warning("redis_unreachable", error=type(error).__name__, cool_down_seconds=self.cool_down)
        self._next_probe_at = self._clock() + self.cool_down
        self._enter(BreakerState.open)

    def _enter(self, state: BreakerState) -> None:
        if state is not self.state:
            REDIS_BREAKER_TRANSITIONS.labels(state=state.name).inc()
        self.state = state
        REDIS_BREAKER_STATE.set(state)


def _log() -> FilteringBoundLogger:
    """A logger bound now: these lines are rare, and a fresh logger follows the current logging configuration."""
    logger: FilteringBoundLogger = structlog.get_logger("compliance_api.ratelimit")
    return logger
