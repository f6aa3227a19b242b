"""Reading rate files (through `kit/rowfile.py`): UTF-8 CSV with a header row, or a JSON array of objects with the
same fields.

Every row is validated before anything is written; the first bad row stops the import with its line and field (and,
in JSON, its record number).
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from compliance_api.kit import filevalues, rowfile
from compliance_api.kit.filevalues import BadValue
from compliance_api.kit.rowfile import RowFileError, RowRecord
from compliance_api.rates.catalogue import REGIONS, SECTORS
from compliance_api.rates.service import Observation

FIELDS = ("sector", "region", "hourly_rate_eur", "observed_on")
MAX_RATE_EUR = Decimal(10_000)
DUTCH_TIME = ZoneInfo("Europe/Amsterdam")


class ImportFileError(RowFileError):
    """A rate file that cannot be imported; the message names the line, record and field when one row is at fault."""


def today_in_nl() -> date:
    """Observation dates are Dutch calendar dates, so "not in the future" is judged in Dutch time."""
    return datetime.now(DUTCH_TIME).date()


def parse(content: bytes, *, json_format: bool, today: date) -> list[Observation]:
    """All rows of a file, validated; raises ImportFileError at the first bad one."""
    try:
        filevalues.decode_utf8(content)
    except BadValue as exc:
        raise ImportFileError(str(exc)) from None
    observations = [_observation(record, today) for record in _records(content, json_format)]
    if not observations:
        raise ImportFileError(filevalues.NO_ROWS)
    return observations


def _records(content: bytes, json_format: bool) -> Iterator[RowRecord]:
    try:
        yield from rowfile.read(io.BytesIO(content), fields=FIELDS, check_header=_check_header, json_format=json_format)
    except RowFileError as exc:
        raise ImportFileError(exc.message, line=exc.line, record=exc.record, field=exc.field) from None


def _check_header(header: Sequence[str]) -> Sequence[str]:
    if sorted(header) != sorted(FIELDS):
        raise RowFileError(f"the header must be {','.join(FIELDS)} (got {','.join(header) or 'nothing'})", line=1)
    return header


def _observation(record: RowRecord, today: date) -> Observation:
    row = record.values
    for name in FIELDS:
        if row.get(name) in (None, ""):
            raise _bad(record, name, "is missing")
    return Observation(
        sector=_sector(record, row["sector"]),
        region=_region(record, row["region"]),
        rate_cents=_rate_cents(record, row["hourly_rate_eur"]),
        observed_on=_observed_on(record, row["observed_on"], today),
    )


def _bad(record: RowRecord, field: str, message: str) -> ImportFileError:
    return ImportFileError(message, line=record.line, record=record.number, field=field)


def _sector(record: RowRecord, value: Any) -> str:
    if not isinstance(value, str) or value not in SECTORS:
        raise _bad(record, "sector", f"{value!r} is not a sector of the catalogue (GET /v1/rates/sectors)")
    return value


def _region(record: RowRecord, value: Any) -> str:
    if not isinstance(value, str) or value not in REGIONS:
        raise _bad(record, "region", f"{value!r} is not NL or an ISO 3166-2:NL province code (NL-NH, NL-UT, …)")
    return value


def _rate_cents(record: RowRecord, value: Any) -> int:
    try:
        return filevalues.cents(
            value,
            ok=lambda euros: 0 < euros < MAX_RATE_EUR,
            not_a_number="must be a number",
            out_of_range="must be above 0 and below 10000 (EUR per hour, excl. VAT)",
        )
    except BadValue as exc:
        raise _bad(record, "hourly_rate_eur", str(exc)) from None


def _observed_on(record: RowRecord, value: Any, today: date) -> date:
    try:
        return filevalues.iso_date(value, today)
    except BadValue as exc:
        raise _bad(record, "observed_on", str(exc)) from None
