"""What the importers' value checks share: UTF-8 text without NUL, checked dates and euro amounts (the rows
themselves are read by `rowfile.py`).

Each function raises BadValue with a message that names neither line nor field; the importer adds those when it wraps
BadValue into its own error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
NO_ROWS = "the file has no rows"


class BadValue(ValueError):
    """A file or value that cannot be read; `line` is the line at fault when the failure is the file's."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def decode_utf8(content: bytes) -> str:
    """The file's text; a UTF-8 byte order mark is dropped. NUL (U+0000) is refused: PostgreSQL cannot store it."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadValue(f"the file is not UTF-8 (byte {exc.start})") from None
    if (position := text.find("\x00")) >= 0:
        line = text.count("\n", 0, position) + 1
        raise BadValue(f"line {line} contains a NUL character (U+0000)", line=line)
    return text


def iso_date(value: Any, today: date) -> date:
    """A YYYY-MM-DD date that is not after `today`."""
    if not isinstance(value, str) or not ISO_DATE.match(value.strip()):
        raise BadValue("must be a date as YYYY-MM-DD")
    try:
        day = date.fromisoformat(value.strip())
    except ValueError:
        raise BadValue(f"{value!r} is not a valid date") from None
    if day > today:
        raise BadValue(f"{day} is in the future")
    return day


def cents(value: Any, *, ok: Callable[[Decimal], bool], not_a_number: str, out_of_range: str) -> int:
    """Whole cents of a euro amount given as text or a JSON number with at most two decimals; `ok` bounds the euros."""
    if isinstance(value, bool) or not isinstance(value, str | int | Decimal):
        raise BadValue(not_a_number)
    try:
        amount = Decimal(value.strip() if isinstance(value, str) else value)
    except InvalidOperation:
        raise BadValue(f"{value!r} is not a number") from None
    if not amount.is_finite() or not ok(amount):
        raise BadValue(out_of_range)
    amount_cents = amount * 100
    if amount_cents != amount_cents.to_integral_value():
        raise BadValue("has more than two decimals")
    return int(amount_cents)
