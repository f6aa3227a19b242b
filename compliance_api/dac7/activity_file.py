"""Reading DAC7 activity files: UTF-8 CSV with a header row, or a JSON array of objects.

Fields: `activity_id,freelancer_id,activity_date,consideration_eur,fees_eur,taxes_eur`, and optionally
`activity_type` (`personal_services`, the default, or `sale_of_goods`). `activity_id` is the platform's own stable
id of the activity: a re-import of the same id replaces that activity, so importing a file twice changes nothing.
`consideration_eur` is what was paid or credited to the seller for the activity, before the platform's fees and
commissions (`fees_eur`) and the taxes it withheld (`taxes_eur`). The file is read by `kit/rowfile.py`. Every row is
checked before anything is written; the first bad one stops the import, naming its line (and, in JSON, its record
number) and field.
"""

from __future__ import annotations

import io
import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

from compliance_api.dac7.models import ActivityType
from compliance_api.kit import filevalues, rowfile
from compliance_api.kit.filevalues import BadValue
from compliance_api.kit.rowfile import RowFileError, RowRecord

REQUIRED = ("activity_id", "freelancer_id", "activity_date", "consideration_eur", "fees_eur", "taxes_eur")
OPTIONAL = ("activity_type",)
ACTIVITY_ID = re.compile(r"^[A-Za-z0-9._:/-]{1,64}$")
MAX_AMOUNT_EUR = Decimal(10) ** 11


class ActivityFileError(ValueError):
    """A file that cannot be imported; the message names the line (`line L`, or `line L, record R` in JSON) and the
    field of the row at fault."""

    def __init__(self, message: str, *, line: str | None = None, field: str | None = None) -> None:
        where = ", ".join(part for part in (line or "", f"field {field}" if field else "") if part)
        super().__init__(f"{where}: {message}" if where else message)
        self.line = line
        self.field = field


@dataclass(frozen=True, slots=True)
class ActivityRow:
    line: str
    external_id: str
    freelancer_id: uuid.UUID
    activity_type: ActivityType
    activity_date: date
    consideration_cents: int
    fees_cents: int
    taxes_cents: int


def parse(content: bytes, *, json_format: bool, today: date) -> list[ActivityRow]:
    """Every row of a file, checked; raises ActivityFileError at the first bad one."""
    try:
        filevalues.decode_utf8(content)
    except BadValue as exc:
        raise ActivityFileError(str(exc)) from None
    rows = [_row(record.where, record.values, today) for record in _records(content, json_format)]
    if not rows:
        raise ActivityFileError(filevalues.NO_ROWS)
    seen: dict[str, str] = {}
    for row in rows:
        if row.external_id in seen:
            raise ActivityFileError(
                f"activity {row.external_id!r} is also on {seen[row.external_id]}", line=row.line, field="activity_id"
            )
        seen[row.external_id] = row.line
    return rows


def _records(content: bytes, json_format: bool) -> Iterator[RowRecord]:
    fields = (*REQUIRED, *OPTIONAL)
    try:
        yield from rowfile.read(io.BytesIO(content), fields=fields, check_header=_check_header, json_format=json_format)
    except RowFileError as exc:
        raise ActivityFileError(exc.message, line=exc.where or None, field=exc.field) from None


def _check_header(header: Sequence[str]) -> Sequence[str]:
    if not set(REQUIRED) <= set(header) or not set(header) <= {*REQUIRED, *OPTIONAL}:
        raise RowFileError(
            f"the header must be {','.join(REQUIRED)} (optionally with activity_type), "
            f"got {','.join(header) or 'nothing'}",
            line=1,
        )
    return header


def _row(line: str, raw: Mapping[str, Any], today: date) -> ActivityRow:
    for name in REQUIRED:
        if raw.get(name) in (None, ""):
            raise ActivityFileError("is missing", line=line, field=name)
    consideration = _cents(line, raw, "consideration_eur")
    fees, taxes = _cents(line, raw, "fees_eur"), _cents(line, raw, "taxes_eur")
    if fees + taxes > consideration:
        raise ActivityFileError("fees_eur plus taxes_eur exceed consideration_eur", line=line, field="fees_eur")
    return ActivityRow(
        line=line,
        external_id=_text(line, raw, "activity_id", ACTIVITY_ID, "1 to 64 letters, digits or . _ : / -"),
        freelancer_id=_uuid(line, raw["freelancer_id"]),
        activity_type=_activity_type(line, raw.get("activity_type")),
        activity_date=_date(line, raw["activity_date"], today),
        consideration_cents=consideration,
        fees_cents=fees,
        taxes_cents=taxes,
    )


def _text(line: str, raw: Mapping[str, Any], field: str, pattern: re.Pattern[str], rule: str) -> str:
    value = raw[field]
    if not isinstance(value, str) or not pattern.match(value.strip()):
        raise ActivityFileError(f"must be {rule}", line=line, field=field)
    return value.strip()


def _uuid(line: str, value: Any) -> uuid.UUID:
    try:
        return uuid.UUID(value.strip() if isinstance(value, str) else "")
    except ValueError:
        raise ActivityFileError(
            f"{value!r} is not a UUID (a freelancer's user id)", line=line, field="freelancer_id"
        ) from None


def _activity_type(line: str, value: Any) -> ActivityType:
    if value in (None, ""):
        return ActivityType.personal_services
    try:
        return ActivityType(value.strip() if isinstance(value, str) else value)
    except ValueError:
        allowed = ", ".join(t.value for t in ActivityType)
        raise ActivityFileError(f"{value!r} is not one of {allowed}", line=line, field="activity_type") from None


def _date(line: str, value: Any, today: date) -> date:
    try:
        return filevalues.iso_date(value, today)
    except BadValue as exc:
        raise ActivityFileError(str(exc), line=line, field="activity_date") from None


def _cents(line: str, raw: Mapping[str, Any], field: str) -> int:
    try:
        return filevalues.cents(
            raw[field],
            ok=lambda euros: 0 <= euros < MAX_AMOUNT_EUR,
            not_a_number="must be a number (EUR)",
            out_of_range="must be at least 0 and below 100000000000 (EUR)",
        )
    except BadValue as exc:
        raise ActivityFileError(str(exc), line=line, field=field) from None
