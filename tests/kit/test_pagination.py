"""Cursors: round trips, refused when malformed, tampered with, sealed under another secret or for another scope."""

from __future__ import annotations

import base64
import datetime as dt
import re
import uuid

import pytest

from compliance_api.kit.pagination import Cursors, InvalidCursor, Key

KEY = Key(dt.datetime(2026, 11, 25, 6, 0, 0, 123456, tzinfo=dt.UTC), uuid.UUID("0f8fad5b-d9cb-469f-a165-70867728950e"))
CURSORS = Cursors.from_secrets([b"the server secret"])


def test_a_cursor_round_trips_in_its_scope_and_is_opaque_and_url_safe() -> None:
    cursor = CURSORS.seal(KEY, "list:a")
    assert CURSORS.open(cursor, "list:a") == KEY
    assert re.fullmatch(r"[A-Za-z0-9_-]{55}", cursor)
    assert str(KEY.id) not in cursor
    assert "2026" not in cursor


@pytest.mark.parametrize("moment", [dt.datetime(1, 1, 1, tzinfo=dt.UTC), dt.datetime(9999, 12, 31, tzinfo=dt.UTC)])
def test_every_instant_a_row_can_hold_round_trips(moment: dt.datetime) -> None:
    key = Key(moment, KEY.id)
    assert CURSORS.open(CURSORS.seal(key, "list:a"), "list:a") == key


def test_a_cursor_of_another_scope_is_refused() -> None:
    with pytest.raises(InvalidCursor, match="not a cursor of this list"):
        CURSORS.open(CURSORS.seal(KEY, "list:a"), "list:b")


def test_a_cursor_sealed_under_another_secret_is_refused_and_the_previous_one_still_opens() -> None:
    old = Cursors.from_secrets([b"the old secret"])
    with pytest.raises(InvalidCursor):
        CURSORS.open(old.seal(KEY, "list:a"), "list:a")
    rotating = Cursors.from_secrets([b"the server secret", b"the old secret"])
    assert rotating.open(old.seal(KEY, "list:a"), "list:a") == KEY


def test_every_changed_bit_is_refused() -> None:
    raw = base64.urlsafe_b64decode(CURSORS.seal(KEY, "list:a") + "=")
    for position in range(len(raw)):
        for bit in range(8):
            changed = bytearray(raw)
            changed[position] ^= 1 << bit
            with pytest.raises(InvalidCursor):
                CURSORS.open(base64.urlsafe_b64encode(bytes(changed)).decode().rstrip("="), "list:a")


@pytest.mark.parametrize(
    "cursor",
    [
        "x",
        "!!!!",
        "bm90IGpzb24",
        "eyJ0IjogMX0",
        "e30",
        CURSORS.seal(KEY, "list:a")[:-3],
        CURSORS.seal(KEY, "list:a") + "AA",
        "W10",
        "bnVsbA",
    ],
)
def test_malformed_cursors_are_refused(cursor: str) -> None:
    with pytest.raises(InvalidCursor):
        CURSORS.open(cursor, "list:a")
