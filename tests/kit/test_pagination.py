"""Cursors: round trips, refused when malformed or issued for another scope."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest

from compliance_api.kit.pagination import InvalidCursor, Key, decode_cursor, encode_cursor

KEY = Key(dt.datetime(2026, 11, 25, 6, 0, 0, 123456, tzinfo=dt.UTC), uuid.uuid4())


def test_a_cursor_round_trips_in_its_scope() -> None:
    assert decode_cursor(encode_cursor(KEY, "list:a"), "list:a") == KEY


def test_a_cursor_of_another_scope_is_refused() -> None:
    with pytest.raises(InvalidCursor, match="another list"):
        decode_cursor(encode_cursor(KEY, "list:a"), "list:b")


@pytest.mark.parametrize(
    "cursor",
    ["x", "!!!!", "bm90IGpzb24", "eyJ0IjogMX0", "e30", encode_cursor(KEY, "list:a")[:-3], "W10", "bnVsbA"],
)
def test_malformed_cursors_are_refused(cursor: str) -> None:
    with pytest.raises(InvalidCursor):
        decode_cursor(cursor, "list:a")
