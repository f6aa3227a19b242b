"""The one follower of the in-memory copies: it hears, loses, logs an outage once, and follows again."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from structlog.testing import capture_logs

from compliance_api.kit.pg_listen import Follower


class Script:
    """A watch that fails `unreachable` times as a lost database would, then hears once and is lost again."""

    def __init__(self, unreachable: int) -> None:
        self.unreachable = unreachable
        self.calls = 0
        self.heard = asyncio.Event()
        self.lost: list[bool] = []  # whether the follower still said it was following when told of a loss

    async def watch(self, on_change: Callable[[], None]) -> None:
        self.calls += 1
        if self.calls <= self.unreachable:
            raise ConnectionRefusedError("database down")
        on_change()
        self.heard.set()
        await asyncio.sleep(0)
        raise RuntimeError("listener connection closed")


async def test_an_outage_is_logged_once_and_following_resumes_when_the_watch_hears() -> None:
    script = Script(unreachable=3)
    heard: list[bool] = []
    follower: Follower

    def on_heard() -> None:
        heard.append(follower.following)

    def on_lost() -> None:
        script.lost.append(follower.following)

    follower = Follower("test_copy", script.watch, on_heard=on_heard, on_lost=on_lost, retry_seconds=0.001)
    with capture_logs() as logs:
        follower.start()
        follower.start()  # started once only
        await asyncio.wait_for(script.heard.wait(), timeout=10)
        await follower.close()
    events = [entry["event"] for entry in logs]
    assert events.count("database_unreachable") == 1
    assert events.count("database_reachable_again") == 1
    assert heard == [True]  # following before its callback runs
    assert script.lost[:3] == [False, False, False]  # never following while lost
    assert not follower.following


async def test_a_watch_lost_for_another_reason_is_a_warning_and_is_retried() -> None:
    script = Script(unreachable=0)
    lost = asyncio.Event()
    follower = Follower("test_copy", script.watch, on_heard=lambda: None, on_lost=lost.set, retry_seconds=0.001)
    with capture_logs() as logs:
        follower.start()
        await asyncio.wait_for(lost.wait(), timeout=10)
        await follower.close()
    warnings = [entry for entry in logs if entry["event"] == "follower.watch_lost"]
    assert warnings
    assert warnings[0]["follower"] == "test_copy"
    assert "database_unreachable" not in [entry["event"] for entry in logs]
