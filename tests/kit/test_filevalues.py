"""Import files: a NUL character (PostgreSQL cannot store it) is refused with its line, before any row is read."""

from __future__ import annotations

import pytest

from compliance_api.kit.filevalues import BadValue, decode_utf8


def test_a_nul_character_is_refused_naming_its_line() -> None:
    with pytest.raises(BadValue, match="line 2 contains a NUL character") as caught:
        decode_utf8(b"sector,region\nict\x00,NL\n")
    assert caught.value.line == 2


def test_text_without_nul_is_read_without_its_byte_order_mark() -> None:
    assert decode_utf8("\ufeffsector\nict\n".encode()) == "sector\nict\n"
