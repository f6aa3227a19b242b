"""The fair queue: groups in turn, lanes in turn within a group, at most `per_lane` out per lane, urgent items first."""

from __future__ import annotations

import pytest

from compliance_api.kit.fair_queue import FairQueue


def _drain(queue: FairQueue[str, str, str]) -> list[str]:
    """Take and finish items one at a time, in the order the queue gives them."""
    order = []
    while (taken := queue.take()) is not None:
        lane, item = taken
        order.append(item)
        queue.done(lane)
    return order


def test_a_group_with_a_backlog_gets_one_turn_like_a_group_with_one_item() -> None:
    queue: FairQueue[str, str, str] = FairQueue(per_lane=4)
    for n in range(5):
        queue.put("anna", "anna-hook", f"a{n}")
    queue.put("bert", "bert-hook", "b0")
    assert _drain(queue)[:3] == ["a0", "b0", "a1"]


def test_the_lanes_of_a_group_take_turns_within_the_groups_turn() -> None:
    queue: FairQueue[str, str, str] = FairQueue(per_lane=4)
    for lane in ("slow", "fast"):
        for n in range(2):
            queue.put("anna", lane, f"{lane}{n}")
    queue.put("bert", "bert-hook", "b0")
    assert _drain(queue) == ["slow0", "b0", "fast0", "slow1", "fast1"]


def test_a_lane_has_at_most_per_lane_items_out() -> None:
    queue: FairQueue[str, str, str] = FairQueue(per_lane=2)
    for n in range(4):
        queue.put("anna", "slow", f"a{n}")
    taken = [queue.take(), queue.take()]
    assert [t[1] for t in taken if t] == ["a0", "a1"]
    assert queue.take() is None, "the lane's share is out"
    queue.put("bert", "fast", "b0")
    assert queue.take() == ("fast", "b0"), "another lane is still served"
    queue.done("slow")
    assert queue.take() == ("slow", "a2")
    assert (queue.held("slow"), queue.held_by("anna"), len(queue)) == (3, 3, 1)


def test_an_urgent_item_goes_ahead_of_its_lane() -> None:
    queue: FairQueue[str, str, str] = FairQueue(per_lane=1)
    for n in range(3):
        queue.put("anna", "hook", f"a{n}")
    queue.put("anna", "hook", "test", urgent=True)
    assert _drain(queue) == ["test", "a0", "a1", "a2"]


def test_clear_drops_queued_items_and_keeps_those_out_until_done() -> None:
    queue: FairQueue[str, str, str] = FairQueue(per_lane=1)
    queue.put("anna", "hook", "a0")
    queue.put("anna", "hook", "a1")
    queue.put("bert", "other", "b0")
    assert queue.take() == ("hook", "a0")
    assert queue.clear() == 2
    assert (len(queue), queue.held("hook"), queue.lanes()) == (0, 1, ["hook"])
    queue.done("hook")
    assert (queue.lanes(), queue.held_by("anna")) == ([], 0), "an idle lane and group are forgotten"
    with pytest.raises(ValueError, match="out"):
        queue.done("hook")
