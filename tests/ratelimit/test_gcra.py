from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from compliance_api.ratelimit.gcra import decide

SECOND = 1_000_000


def run(burst: int, interval: int, times: list[int]) -> list[bool]:
    tat: int | None = None
    allowed = []
    for now in times:
        decision, new_tat = decide(tat, now_us=now, interval_us=interval, burst=burst)
        allowed.append(decision.allowed)
        if new_tat is not None:
            tat = new_tat
    return allowed


def test_idle_bucket_allows_the_burst_then_refuses() -> None:
    assert run(120, SECOND, [0] * 121) == [True] * 120 + [False]


def test_first_request_leaves_burst_minus_one() -> None:
    decision, _ = decide(None, now_us=10 * SECOND, interval_us=SECOND, burst=120)
    assert (decision.allowed, decision.remaining, decision.limit) == (True, 119, 120)
    assert decision.reset_seconds == 1


def test_denial_says_when_one_request_is_allowed() -> None:
    tat: int | None = None
    for _ in range(120):
        _, tat = decide(tat, now_us=0, interval_us=SECOND, burst=120)
    decision, stored = decide(tat, now_us=250_000, interval_us=SECOND, burst=120)
    assert not decision.allowed
    assert stored is None
    assert decision.remaining == 0
    assert decision.retry_after_us == 750_000
    assert decision.retry_after_seconds == 1
    allowed, _ = decide(tat, now_us=SECOND, interval_us=SECOND, burst=120)
    assert allowed.allowed


@given(
    burst=st.integers(min_value=1, max_value=50),
    gaps=st.lists(st.integers(min_value=0, max_value=3 * SECOND), min_size=1, max_size=200),
)
def test_allowed_never_exceeds_burst_plus_refill(burst: int, gaps: list[int]) -> None:
    """The bucket model: in any run, allowed ≤ burst + elapsed/interval, and remaining never lies."""
    interval = SECOND
    now, tat = 0, None
    allowed = 0
    for gap in gaps:
        now += gap
        decision, new_tat = decide(tat, now_us=now, interval_us=interval, burst=burst)
        assert 0 <= decision.remaining <= burst
        if decision.allowed:
            allowed += 1
            tat = new_tat
    assert allowed <= burst + now // interval


@given(burst=st.integers(min_value=1, max_value=100), start=st.integers(min_value=0, max_value=10**12))
def test_remaining_is_exactly_what_succeeds_next(burst: int, start: int) -> None:
    decision, tat = decide(None, now_us=start, interval_us=SECOND, burst=burst)
    successes = 0
    while True:
        next_decision, new_tat = decide(tat, now_us=start, interval_us=SECOND, burst=burst)
        if not next_decision.allowed:
            break
        successes += 1
        tat = new_tat
    assert successes == decision.remaining
