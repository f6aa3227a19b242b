"""FairLimiter: the groups waiting take turns, whatever each has queued; a waiter cancelled in line gives up its
turn, and one let in but cancelled gives the place back."""

from __future__ import annotations

import asyncio

import pytest

from compliance_api.kit.fair_limiter import FairLimiter


async def _queue(
    limiter: FairLimiter[str], group: str, count: int, go: asyncio.Event, order: list[str]
) -> list[asyncio.Task[None]]:
    async def use(number: int) -> None:
        async with limiter.slot(group):
            order.append(f"{group}{number}")
            await go.wait()

    tasks = [asyncio.create_task(use(number)) for number in range(count)]
    await asyncio.sleep(0)  # every task reaches the limiter, in order
    return tasks


async def test_a_burst_of_one_group_holds_another_for_at_most_one_turn() -> None:
    limiter: FairLimiter[str] = FairLimiter(1)
    go, order = asyncio.Event(), list[str]()
    burst = await _queue(limiter, "a", 60, go, order)
    other = await _queue(limiter, "b", 1, go, order)
    assert (order, limiter.waiting) == (["a0"], 60), "one holder; the rest of the burst and b wait"

    go.set()
    await asyncio.gather(*burst, *other)

    assert order[:3] == ["a0", "b0", "a1"], "b goes right after the holder it found, not after the burst"
    assert len(order) == 61


async def test_never_more_holders_than_the_capacity() -> None:
    limiter: FairLimiter[str] = FairLimiter(2)
    holding, most = 0, 0

    async def use(group: str) -> None:
        nonlocal holding, most
        async with limiter.slot(group):
            holding += 1
            most = max(most, holding)
            await asyncio.sleep(0)
            holding -= 1

    await asyncio.gather(*(use(group) for group in "aaaabbbcc"))
    assert most == 2


async def test_a_waiter_cancelled_in_line_gives_its_turn_to_the_next() -> None:
    limiter: FairLimiter[str] = FairLimiter(1)
    go, order = asyncio.Event(), list[str]()
    [holder] = await _queue(limiter, "a", 1, go, order)
    [cancelled] = await _queue(limiter, "b", 1, go, order)
    [next_one] = await _queue(limiter, "c", 1, go, order)
    cancelled.cancel()
    go.set()
    await asyncio.gather(holder, next_one)
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert order == ["a0", "c0"]
    assert limiter.waiting == 0
    async with limiter.slot("d"):  # the place is free again
        pass
