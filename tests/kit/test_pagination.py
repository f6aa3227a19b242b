"""Cursors: round trips, refused when malformed, tampered with, sealed under another secret, for another scope or
(naming each) for other filters, or by the version before filters were bound."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import re
import struct
import uuid
from zoneinfo import ZoneInfo

import pytest

from compliance_api.kit.pagination import Cursors, FiltersDiffer, InvalidCursor, Key

KEY = Key(dt.datetime(2026, 11, 25, 6, 0, 0, 123456, tzinfo=dt.UTC), uuid.UUID("0f8fad5b-d9cb-469f-a165-70867728950e"))
CURSORS = Cursors.from_secrets([b"the server secret"])


def test_a_cursor_round_trips_in_its_scope_and_is_opaque_and_url_safe() -> None:
    cursor = CURSORS.seal(KEY, "list:a")
    assert CURSORS.open(cursor, "list:a") == KEY
    assert re.fullmatch(r"[A-Za-z0-9_-]{55}", cursor), cursor
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


FILTERS = {"verdict": "unsafe", "country": None, "type": ["b.created", "a.updated"], "monitored": False}


def test_a_cursor_opens_with_the_filters_it_was_sealed_for_in_any_spelling() -> None:
    cursor = CURSORS.seal(KEY, "list:a", FILTERS)
    assert CURSORS.open(cursor, "list:a", FILTERS) == KEY
    same = {**FILTERS, "type": ["a.updated", "b.created"]}
    assert CURSORS.open(cursor, "list:a", same) == KEY
    moment = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    in_utc = CURSORS.seal(KEY, "list:a", {"created_after": moment})
    assert CURSORS.open(in_utc, "list:a", {"created_after": moment.astimezone(ZoneInfo("Europe/Amsterdam"))}) == KEY


@pytest.mark.parametrize(
    ("changed", "named"),
    [
        ({"verdict": "safe"}, ("verdict",)),
        ({"verdict": None}, ("verdict",)),
        ({"country": ""}, ("country",)),
        ({"country": "DE", "monitored": True}, ("country", "monitored")),
        ({"type": ["a.updated"]}, ("type",)),
    ],
)
def test_a_cursor_sent_with_other_filters_names_each_that_differs(
    changed: dict[str, object], named: tuple[str, ...]
) -> None:
    cursor = CURSORS.seal(KEY, "list:a", FILTERS)
    with pytest.raises(FiltersDiffer) as refused:
        CURSORS.open(cursor, "list:a", {**FILTERS, **changed})  # type: ignore[dict-item]
    assert refused.value.names == named


def test_a_cursor_of_the_version_that_did_not_bind_filters_is_refused_saying_so() -> None:
    """Version 1 sealed only the key: under the same secret and scope it would otherwise still open."""
    key = hmac.new(b"the server secret", b"compliance-api cursor", hashlib.sha256).digest()
    body = struct.pack(">Bq16s", 1, 0, KEY.id.bytes)
    mac = hmac.new(key, b"list:a\x00" + body, hashlib.sha256).digest()[:16]
    earlier = base64.urlsafe_b64encode(body + mac).decode().rstrip("=")
    with pytest.raises(InvalidCursor, match="earlier version of the API"):
        CURSORS.open(earlier, "list:a")
