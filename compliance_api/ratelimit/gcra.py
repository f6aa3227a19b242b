"""GCRA (generic cell rate algorithm): pure arithmetic on one stored timestamp per bucket.

A bucket of capacity `burst` refills one request every `interval` microseconds. The stored value is the
theoretical arrival time (TAT): the bucket is full again when the clock reaches it. The same arithmetic runs in
`gcra.lua` for Redis; tests hold both to this module.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    reset_us: int
    retry_after_us: int

    @property
    def reset_seconds(self) -> int:
        return -(-self.reset_us // 1_000_000)

    @property
    def retry_after_seconds(self) -> int:
        """Whole seconds until one request is allowed, at least 1 (only meaningful on a denial)."""
        return max(1, -(-self.retry_after_us // 1_000_000))


def decide(stored_tat_us: int | None, *, now_us: int, interval_us: int, burst: int) -> tuple[Decision, int | None]:
    """The decision for one request and the TAT to store (None: leave the bucket unchanged)."""
    tat = max(stored_tat_us or now_us, now_us)
    new_tat = tat + interval_us
    allow_at = new_tat - burst * interval_us
    if now_us < allow_at:
        return Decision(False, burst, 0, tat - now_us, allow_at - now_us), None
    remaining = (now_us - allow_at) // interval_us
    return Decision(True, burst, min(remaining, burst), new_tat - now_us, 0), new_tat
