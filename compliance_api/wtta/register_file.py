"""Reading a register file: CSV with a header row, or a JSON array of objects with the same fields.

Rows are parsed and validated one at a time, so a file of any size is read in constant memory.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import IO, Any

import ijson

from compliance_api.wtta.models import AdmissionStatus

FIELDS = ("kvk_number", "legal_name", "admission_status", "admission_number", "admitted_at", "expires_at")
KVK_PATTERN = re.compile(r"[0-9]{8}")
STATUSES = frozenset(s.value for s in AdmissionStatus)
MAX_LENGTHS = {"legal_name": 300, "admission_number": 64}

Row = dict[str, Any]


class RegisterFileError(ValueError):
    """A row (or the file) is invalid; names where (`line N` in CSV, `record N` in JSON) and which field."""

    def __init__(self, where: str, field: str, message: str) -> None:
        super().__init__(f"{where}, field {field}: {message}")
        self.where = where
        self.field = field


class _Counted(io.RawIOBase):
    """Reports every chunk read from the underlying binary stream (drives the progress bar)."""

    def __init__(self, raw: IO[bytes], on_bytes: Callable[[int], None]) -> None:
        self._raw = raw
        self._on_bytes = on_bytes

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._raw.read(len(buffer))
        buffer[: len(data)] = data
        self._on_bytes(len(data))
        return len(data)


def read_rows(raw: IO[bytes], on_bytes: Callable[[int], None] = lambda _: None) -> Iterator[Row]:
    """Validated rows of a CSV or JSON register (the first non-blank character `[` means JSON)."""
    stream = io.BufferedReader(_Counted(raw, on_bytes), buffer_size=1 << 16)
    head = stream.peek(64)[:64].lstrip(codecs.BOM_UTF8).lstrip()
    if head.startswith(b"["):
        return _json_rows(stream)
    return _csv_rows(io.TextIOWrapper(stream, encoding="utf-8-sig", newline=""))


def _csv_rows(text: IO[str]) -> Iterator[Row]:
    reader = csv.reader(text, strict=True)
    try:
        header = next(reader, None)
    except (csv.Error, UnicodeDecodeError) as exc:
        raise RegisterFileError("line 1", "header", f"unreadable ({exc})") from None
    if header is None:
        raise RegisterFileError("line 1", "header", "the file is empty; expected " + ",".join(FIELDS))
    columns = [c.strip() for c in header]
    if sorted(columns) != sorted(FIELDS):
        raise RegisterFileError("line 1", "header", f"expected the columns {','.join(FIELDS)}; got {','.join(columns)}")
    order = [columns.index(name) for name in FIELDS]
    width = len(columns)
    while True:
        try:
            values = next(reader)
        except StopIteration:
            return
        except (csv.Error, UnicodeDecodeError) as exc:
            raise RegisterFileError(f"line {reader.line_num + 1}", "-", f"unreadable ({exc})") from None
        if not values or (len(values) == 1 and not values[0].strip()):
            continue
        if len(values) != width:
            raise RegisterFileError(f"line {reader.line_num}", "-", f"expected {width} values, got {len(values)}")
        yield validate([values[i] for i in order], "line", reader.line_num)


def _json_rows(stream: IO[bytes]) -> Iterator[Row]:
    number = 0
    try:
        for item in ijson.items(stream, "item", use_float=True):
            number += 1
            where = f"record {number}"
            if not isinstance(item, dict):
                raise RegisterFileError(where, "-", "expected an object")
            unknown = sorted(set(item) - set(FIELDS))
            if unknown:
                raise RegisterFileError(where, unknown[0], "unknown field")
            for name, value in item.items():
                if value is not None and not isinstance(value, str):
                    raise RegisterFileError(where, name, "must be a string or null")
            yield validate([item.get(name) or "" for name in FIELDS], "record", number)
    except ijson.JSONError as exc:
        raise RegisterFileError(f"record {number + 1}", "-", f"not valid JSON ({exc})") from None
    except UnicodeDecodeError as exc:
        raise RegisterFileError(f"record {number + 1}", "-", f"not UTF-8 ({exc})") from None


def validate(values: Sequence[str], unit: str, line: int) -> Row:
    """One row's values in FIELDS order (strings, empty = null) as typed staging columns, or a RegisterFileError."""
    where = f"{unit} {line}"
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
    except ValueError:
        raise RegisterFileError(where, field, f"{value!r} is not an ISO 8601 date") from None


@lru_cache(maxsize=4096)  # registers repeat the same few thousand dates; parsing each once saves ~2 µs a row
def _parse_datetime(value: str) -> datetime:
    """ISO 8601 date or date-time; a date means midnight UTC, a time without offset is UTC."""
    parsed = datetime.fromisoformat(value)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
