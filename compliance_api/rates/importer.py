"""Reading rate files: UTF-8 CSV with a header row, or a JSON array of objects with the same fields.

Every row is validated before anything is written; the first bad row stops the import with its line and field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from compliance_api.kit import filevalues
from compliance_api.kit.filevalues import BadValue
from compliance_api.rates.catalogue import REGIONS, SECTORS
from compliance_api.rates.service import Observation

FIELDS = ("sector", "region", "hourly_rate_eur", "observed_on")
MAX_RATE_EUR = Decimal(10_000)
DUTCH_TIME = ZoneInfo("Europe/Amsterdam")


class ImportFileError(ValueError):
    """A file that cannot be imported; the message names the line and field when one row is at fault."""

    def __init__(self, message: str, *, line: int | None = None, field: str | None = None) -> None:
        where = ", ".join(part for part in (f"line {line}" if line else "", f"field {field}" if field else "") if part)
        super().__init__(f"{where}: {message}" if where else message)
        self.line = line
        self.field = field


def today_in_nl() -> date:
    """Observation dates are Dutch calendar dates, so "not in the future" is judged in Dutch time."""
    return datetime.now(DUTCH_TIME).date()


def parse(content: bytes, *, json_format: bool, today: date) -> list[Observation]:
    """All rows of a file, validated; raises ImportFileError at the first bad one."""
    try:
        text = filevalues.decode_utf8(content)
    except BadValue as exc:
        raise ImportFileError(str(exc)) from None
    rows = _json_rows(text) if json_format else _csv_rows(text)
    observations = [_observation(line, row, today) for line, row in rows]
    if not observations:
        raise ImportFileError(filevalues.NO_ROWS)
    return observations


def _csv_rows(text: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    try:
        yield from filevalues.csv_rows(text, _check_header)
    except BadValue as exc:
        raise ImportFileError(str(exc), line=exc.line) from None


def _check_header(header: Sequence[str]) -> None:
    if sorted(header) != sorted(FIELDS):
        raise ImportFileError(f"the header must be {','.join(FIELDS)} (got {','.join(header) or 'nothing'})", line=1)


def _json_rows(text: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """Decode the array item by item so that each row's error can name the line the item starts on."""
    decoder = json.JSONDecoder(parse_float=Decimal)
    position = _skip_space(text, 0)
    if not text.startswith("[", position):
        raise ImportFileError("a JSON file must hold one array of objects", line=_line(text, position))
    position = _skip_space(text, position + 1)
    if text.startswith("]", position):
        return
    while True:
        line = _line(text, position)
        try:
            item, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            raise ImportFileError(f"invalid JSON: {exc.msg}", line=exc.lineno) from None
        if not isinstance(item, dict):
            raise ImportFileError("each item must be an object", line=line)
        unknown = sorted(set(item) - set(FIELDS))
        if unknown:
            raise ImportFileError("unknown field", line=line, field=unknown[0])
        yield line, item
        position = _skip_space(text, position)
        if text.startswith("]", position):
            break
        if not text.startswith(",", position):
            raise ImportFileError("expected ',' or ']' after an item", line=_line(text, position))
        position = _skip_space(text, position + 1)
    if _skip_space(text, position + 1) != len(text):
        raise ImportFileError("unexpected content after the array", line=_line(text, position + 1))


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _line(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def _observation(line: int, row: Mapping[str, Any], today: date) -> Observation:
    for name in FIELDS:
        if row.get(name) in (None, ""):
            raise ImportFileError("is missing", line=line, field=name)
    return Observation(
        sector=_sector(line, row["sector"]),
        region=_region(line, row["region"]),
        rate_cents=_rate_cents(line, row["hourly_rate_eur"]),
        observed_on=_observed_on(line, row["observed_on"], today),
    )


def _sector(line: int, value: Any) -> str:
    if not isinstance(value, str) or value not in SECTORS:
        raise ImportFileError(
            f"{value!r} is not a sector of the catalogue (GET /v1/rates/sectors)", line=line, field="sector"
        )
    return value


def _region(line: int, value: Any) -> str:
    if not isinstance(value, str) or value not in REGIONS:
        raise ImportFileError(
            f"{value!r} is not NL or an ISO 3166-2:NL province code (NL-NH, NL-UT, …)", line=line, field="region"
        )
    return value


def _rate_cents(line: int, value: Any) -> int:
    try:
        return filevalues.cents(
            value,
            ok=lambda euros: 0 < euros < MAX_RATE_EUR,
            not_a_number="must be a number",
            out_of_range="must be above 0 and below 10000 (EUR per hour, excl. VAT)",
        )
    except BadValue as exc:
        raise ImportFileError(str(exc), line=line, field="hourly_rate_eur") from None


def _observed_on(line: int, value: Any, today: date) -> date:
    try:
        return filevalues.iso_date(value, today)
    except BadValue as exc:
        raise ImportFileError(str(exc), line=line, field="observed_on") from None
