"""Reading a register file (through `kit/rowfile.py`): CSV with a header row, or a JSON array of objects with the
same fields.

Rows are parsed and validated one at a time, so a file of any size is read in constant memory.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from functools import lru_cache
from operator import itemgetter
from typing import IO, Any

from compliance_api.kit import rowfile
from compliance_api.kit.instants import OutOfRange, parse_utc
from compliance_api.kit.rowfile import RowFileError, RowRecord
from compliance_api.wtta.models import AdmissionStatus

FIELDS = ("kvk_number", "legal_name", "admission_status", "admission_number", "admitted_at", "expires_at")
KVK_PATTERN = re.compile(r"[0-9]{8}")
STATUSES = frozenset(s.value for s in AdmissionStatus)
MAX_LENGTHS = {"legal_name": 300, "admission_number": 64}

Row = dict[str, Any]
IN_ORDER = itemgetter(*FIELDS)


class RegisterFileError(ValueError):
    """A row (or the file) is invalid; names where (`line L`, or `line L, record R` in JSON) and which field (`-`
    when the row as a whole is at fault)."""

    def __init__(self, where: str, field: str, message: str) -> None:
        super().__init__(f"{where}, field {field}: {message}")
        self.where = where
        self.field = field


def read_rows(raw: IO[bytes], on_bytes: Callable[[int], None] = lambda _: None) -> Iterator[Row]:
    """Validated rows of a CSV or JSON register (the first non-blank character `[` means JSON)."""
    try:
        for record in rowfile.read(raw, fields=FIELDS, check_header=_check_header, on_bytes=on_bytes):
            yield _csv_row(record) if record.number is None else _json_row(record, record.number)
    except RowFileError as exc:
        raise RegisterFileError(exc.where, exc.field or "-", exc.message) from None


def _check_header(header: Sequence[str]) -> Sequence[str]:
    if not header:
        raise RowFileError("the file is empty; expected " + ",".join(FIELDS), line=1, field="header")
    columns = [c.strip() for c in header]
    if sorted(columns) != sorted(FIELDS):
        raise RowFileError(f"expected the columns {','.join(FIELDS)}; got {','.join(columns)}", line=1, field="header")
    return columns


def _csv_row(record: RowRecord) -> Row:
    return validate(IN_ORDER(record.values), "line", record.line)


def _json_row(record: RowRecord, number: int) -> Row:
    """A JSON row's `line` is its record number, which orders the staged rows and names duplicates."""
    for name, value in record.values.items():
        if value is not None and not isinstance(value, str):
            raise RegisterFileError(record.where, name, "must be a string or null")
    values = [record.values.get(name) or "" for name in FIELDS]
    return validate(values, "record", number, where=record.where)


def validate(values: Sequence[str], unit: str, line: int, *, where: str | None = None) -> Row:
    """One row's values in FIELDS order (strings, empty = null) as typed staging columns, or a RegisterFileError
    naming `where` (by default `{unit} {line}`)."""
    where = where or f"{unit} {line}"
    if "\x00" in "".join(values):  # PostgreSQL cannot store NUL in text; one join keeps the common case cheap
        field = next(name for name, value in zip(FIELDS, values, strict=True) if "\x00" in value)
        raise RegisterFileError(where, field, "contains a NUL character (U+0000)")
    kvk, name, status, number, admitted, expires = (v.strip() for v in values)
    if not KVK_PATTERN.fullmatch(kvk):
        raise RegisterFileError(where, "kvk_number", "required" if not kvk else "must be exactly 8 digits")
    if not name:
        raise RegisterFileError(where, "legal_name", "required")
    if status not in STATUSES:
        raise RegisterFileError(
            where, "admission_status", "required" if not status else "must be one of " + ", ".join(AdmissionStatus)
        )
    if len(name) > MAX_LENGTHS["legal_name"]:
        raise RegisterFileError(where, "legal_name", f"longer than {MAX_LENGTHS['legal_name']} characters")
    if len(number) > MAX_LENGTHS["admission_number"]:
        raise RegisterFileError(where, "admission_number", f"longer than {MAX_LENGTHS['admission_number']} characters")
    admitted_at = _datetime(admitted, where, "admitted_at") if admitted else None
    expires_at = _datetime(expires, where, "expires_at") if expires else None
    if admitted_at and expires_at and expires_at < admitted_at:
        raise RegisterFileError(where, "expires_at", "is before admitted_at")
    return {
        "line": line,
        "kvk_number": kvk,
        "legal_name": name,
        "admission_status": status,
        "admission_number": number or None,
        "admitted_at": admitted_at,
        "expires_at": expires_at,
    }


def _datetime(value: str, where: str, field: str) -> datetime:
    try:
        return _parse_datetime(value)
    except OutOfRange as exc:
        raise RegisterFileError(where, field, f"{value!r} {exc}") from None
    except ValueError:
        raise RegisterFileError(where, field, f"{value!r} is not an ISO 8601 date") from None


@lru_cache(maxsize=4096)  # registers repeat the same few thousand dates; parsing each once saves ~2 µs a row
def _parse_datetime(value: str) -> datetime:
    """ISO 8601 date or date-time in UTC; a date means midnight UTC, a time without offset is UTC."""
    return parse_utc(value, naive_is_utc=True)
