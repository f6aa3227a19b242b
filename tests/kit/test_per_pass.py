"""`PerLoopPass`: one reading per pass of the event loop, and every time outside one."""

from __future__ import annotations

import asyncio
from itertools import count

from compliance_api.kit.per_pass import PerLoopPass


async def test_one_reading_per_pass_of_the_loop() -> None:
    readings = PerLoopPass(count().__next__)
    assert [readings.get(), readings.get()] == [0, 0]
    await asyncio.sleep(0)  # the rest of this pass
    assert readings.get() == 1


def test_outside_an_event_loop_every_call_reads() -> None:
    readings = PerLoopPass(count().__next__)
    assert [readings.get(), readings.get()] == [0, 1]
