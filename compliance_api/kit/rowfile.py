"""Reading an import file one row at a time: UTF-8 CSV with a header row, or a JSON array of objects.

The importers (rate observations, the WTTA register, DAC7 activities) bring their fields, their header rule and their
value checks; this module only reads. The file is read as a stream, in constant memory whatever its size, and
`on_bytes` hears of every chunk read (a progress bar's advance). Every row carries its physical line (CSV: the line a
row ends on, as the `csv` module counts; JSON: the line its object starts on, counted from the positions
`json.JSONDecoder.raw_decode` returns) and, in JSON, its number in the array. Whatever is wrong is one
`RowFileError` naming the line, record and field.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
from collections.abc import Callable, Collection, Generator, Iterator, Mapping, Sequence
from decimal import Decimal
from typing import IO, Any, NamedTuple

CHUNK_BYTES = 1 << 16
# Bytes that are not UTF-8, as the "surrogateescape" error handler keeps them: found per line (CSV) or per chunk
# (JSON), so that the error names the line they are on.
UNDECODABLE = re.compile("[\udc80-\udcff]")
NOT_UTF8 = "the file is not UTF-8"
NESTED_TOO_DEEPLY = "invalid JSON: nested too deeply (a record is one object of plain values)"
BLANK = " \t\r\n"  # JSON's white space
CUT_TOKEN_CHARS = 10
"""A JSON error this close to the end of the text read so far may be a token cut by the chunk boundary
(`-Infinity` is the longest), so more is read before the error stands."""


class RowFileError(ValueError):
    """A file, or one row of it, that cannot be imported: where (line, JSON record, field) and what is wrong."""

    def __init__(
        self, message: str, *, line: int | None = None, record: int | None = None, field: str | None = None
    ) -> None:
        self.message = message
        self.line = line
        self.record = record
        self.field = field
        location = ", ".join(part for part in (self.where, f"field {field}" if field else "") if part)
        super().__init__(f"{location}: {message}" if location else message)

    @property
    def where(self) -> str:
        """`line L`, `line L, record R` in JSON, or empty when the whole file is at fault."""
        return _where(self.line, self.record)


class RowRecord(NamedTuple):
    """One row: its values by column (text in CSV; decoded JSON values, numbers as int or Decimal) and where it is."""

    line: int
    number: int | None
    """The record's position in a JSON array (1 for the first); None in CSV."""
    values: Mapping[str, Any]

    @property
    def where(self) -> str:
        return _where(self.line, self.number)


HeaderCheck = Callable[[Sequence[str]], Sequence[str]]
"""Gets a CSV file's header row (empty for an empty file) and returns the column names its values are keyed by, or
raises RowFileError (line 1) to refuse it."""


def read(
    raw: IO[bytes],
    *,
    fields: Collection[str],
    check_header: HeaderCheck,
    json_format: bool | None = None,
    on_bytes: Callable[[int], None] = lambda _: None,
) -> Iterator[RowRecord]:
    """The rows of a CSV or JSON file (`json_format=None`: JSON when its first non-blank character is `[`).

    `fields` are the names a JSON object may use (an unknown one is refused); `check_header` judges a CSV header.
    Blank lines of a CSV file are skipped; a row must have one value per column.
    """
    stream = io.BufferedReader(_Counted(raw, on_bytes), buffer_size=CHUNK_BYTES)
    if json_format is None:
        json_format = stream.peek(64)[:64].lstrip(codecs.BOM_UTF8).lstrip().startswith(b"[")
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="surrogateescape", newline="")
    return _json_rows(text, frozenset(fields)) if json_format else _csv_rows(text, check_header)


def _where(line: int | None, record: int | None) -> str:
    if line is None:
        return ""
    return f"line {line}" if record is None else f"line {line}, record {record}"


class _Counted(io.RawIOBase):
    """Reports every chunk read from the underlying binary stream."""

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


# ---- CSV -----------------------------------------------------------------------------------------------------------


def _csv_rows(text: IO[str], check_header: HeaderCheck) -> Iterator[RowRecord]:
    reader = csv.reader(_checked_lines(text), strict=True)
    try:
        header = next(reader, [])
    except csv.Error as exc:
        raise RowFileError(f"malformed CSV: {exc}", line=1, field="header") from None
    except RowFileError as exc:
        raise RowFileError(exc.message, line=exc.line, field="header") from None
    columns = check_header(header)
    width = len(header)
    try:
        for values in reader:
            if len(values) != width:
                if not values or (len(values) == 1 and not values[0].strip()):
                    continue  # a blank line
                message = f"expected {width} values, got {len(values)} (the header has {width} columns)"
                raise RowFileError(message, line=reader.line_num)
            yield RowRecord(reader.line_num, None, dict(zip(columns, values, strict=True)))
    except csv.Error as exc:
        raise RowFileError(f"malformed CSV: {exc}", line=reader.line_num) from None


def _checked_lines(text: IO[str]) -> Iterator[str]:
    """The lines of the text; a byte that is not UTF-8 stops the file at its line."""
    for number, line in enumerate(text, start=1):
        if not line.isascii() and UNDECODABLE.search(line):
            raise RowFileError(NOT_UTF8, line=number)
        yield line


# ---- JSON ----------------------------------------------------------------------------------------------------------


def _json_rows(text: IO[str], fields: frozenset[str]) -> Iterator[RowRecord]:
    """Decode the array object by object with `raw_decode`, which returns where each object ends: the text before it
    tells the line it starts on (`_Text.line`), and only the text not yet decoded is held."""
    source = _Text(text)
    position = source.skip_blank(0)
    if not source.at(position, "["):
        raise RowFileError("a JSON file must hold one array of objects", line=source.line(position))
    position = source.skip_blank(position + 1)
    if not source.at(position, "]"):
        position = yield from _objects(source, position, fields)
    end = source.skip_blank(position + 1)
    if end < len(source.buffer):
        raise RowFileError("unexpected content after the array", line=source.line(end))


def _objects(source: _Text, position: int, fields: frozenset[str]) -> Generator[RowRecord, None, int]:
    """The array's objects from `position` (the first) on; returns the position of the closing `]`."""
    decoder = json.JSONDecoder(parse_float=Decimal)
    number = 0
    while True:
        number += 1
        line = source.line(position)
        item, position = source.decode(decoder, position, number)
        if not isinstance(item, dict):
            raise RowFileError("each item must be an object", line=line, record=number)
        unknown = sorted(set(item) - fields)
        if unknown:
            raise RowFileError("unknown field", line=line, record=number, field=unknown[0])
        yield RowRecord(line, number, item)
        position = source.skip_blank(source.forget(position))
        if not source.at(position, ","):
            break
        position = source.skip_blank(position + 1)
    if not source.at(position, "]"):
        raise RowFileError("expected ',' or ']' after an item", line=source.line(position))
    return position


class _Text:
    """A text stream read a chunk at a time, with the line number of any position not yet forgotten."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.buffer = ""
        self.ended = False
        self._counted = 0  # newlines are counted up to this position of the buffer
        self._line = 1  # the line at `_counted`

    def more(self, size: int = CHUNK_BYTES) -> bool:
        """Read up to `size` more characters; False at the end of the stream."""
        chunk = self.stream.read(size)
        start = len(self.buffer)
        self.buffer += chunk
        if not chunk.isascii() and (undecodable := UNDECODABLE.search(chunk)):
            raise RowFileError(NOT_UTF8, line=self.line(start + undecodable.start()))
        self.ended = not chunk
        return bool(chunk)

    def at(self, position: int, character: str) -> bool:
        return self.buffer.startswith(character, position)

    def skip_blank(self, position: int) -> int:
        """The first non-blank position from `position` on, reading more as needed (the buffer's end at the end)."""
        while True:
            while position < len(self.buffer) and self.buffer[position] in BLANK:
                position += 1
            if position < len(self.buffer) or not self.more():
                return position

    def line(self, position: int) -> int:
        """The line of `position`; positions are asked for in increasing order, so each newline is counted once."""
        self._line += self.buffer.count("\n", self._counted, position)
        self._counted = position
        return self._line

    def decode(self, decoder: json.JSONDecoder, position: int, number: int) -> tuple[Any, int]:
        """The value starting at `position` and the position after it; an error that may only be the end of what was
        read so far (an unterminated string, a token cut short) reads more first."""
        while True:
            try:
                return decoder.raw_decode(self.buffer, position)
            except RecursionError:  # the decoder recurses per level: `[[[[…` runs out of stack, not into an error
                raise RowFileError(NESTED_TOO_DEEPLY, line=self.line(position), record=number) from None
            except json.JSONDecodeError as exc:
                cut = exc.msg.startswith("Unterminated string") or exc.pos >= len(self.buffer) - CUT_TOKEN_CHARS
                if not cut or not self.more(max(CHUNK_BYTES, len(self.buffer) - position)):
                    raise RowFileError(f"invalid JSON: {exc.msg}", line=self.line(exc.pos), record=number) from None

    def forget(self, position: int) -> int:
        """Drop the text before `position` once it is more than a chunk; returns where `position` is now."""
        if position < CHUNK_BYTES:
            return position
        self.line(position)
        self.buffer = self.buffer[position:]
        self._counted = 0
        return 0
