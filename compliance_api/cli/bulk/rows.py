"""The bulk CSV: one engagement a row, the `country` column picking its test (empty or `NL`: the Dutch test; `FR`,
`DE`, `BE`: that country's cross-border test), the other columns the test's inputs, `reference` and `monitor`.

Rows are read by `kit/rowfile.py`, each with the line it ends on. A row becomes the request body of its test's batch
endpoint, or its error when it cannot be one. Rows are then grouped into batches: the file is cut into blocks of 1000
rows, and within a block the rows of each endpoint (Dutch, cross-border) are sent in batches of `batch_size`, in file
order. A batch's Idempotency-Key is a hash of what it sends and on which lines, so the same file sent again gets the
same keys: answered batches are replayed by the server, not classified again. A row that cannot be sent keeps its
place in its endpoint's count, so fixing it changes the key of its own batch only; changing a row's country changes
the batches of its block.

Why batches and not one call per row under a key of its own: a batch of up to 100 items costs one request against
the rate limit, a single call one per row. At the `free` tier (60 a minute after a burst of 120), 10,000 mixed rows
cost 110 requests in batches, no waiting, and 10,000 in single calls, close to 3 hours of waiting; without a limit
the batches were also 14 to 45 times faster (bench/bulk_modes.py, bench/RESULTS.md). The price is that a key covers
a batch: a row is classified again when another row of its batch changed (or the batch size, `--as-of` or
`--run-id` did).

The file is read as a stream and answered a block at a time, so memory stays flat whatever its size. The results are
the input's columns with `line` in front and `id`, `verdict`, `score`, `error_code` and `error` after, written as the
blocks are answered under a temporary name that becomes `--out` when the run is complete: whole or not at all. A cell
that a spreadsheet would run as a formula (`=…`, `+…`, `-…`, `@…`) is written with a leading `'`, as the dossier
export writes its index.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from compliance_api.classify.batch_limit import MAX_BATCH_ITEMS
from compliance_api.classify.questions import Test
from compliance_api.classify.ruleset import ENGAGEMENT_FIELDS, packaged_rulesets
from compliance_api.classify.verdict import Country
from compliance_api.kit import rowfile
from compliance_api.kit.filevalues import NO_ROWS
from compliance_api.kit.rowfile import RowFileError
from compliance_api.kit.spreadsheet import safe_cell

COUNTRY, REFERENCE, MONITOR = "country", "reference", "monitor"
DUTCH_NUMBERS: dict[str, Callable[[str], Any]] = {
    "hourly_rate_eur": float,
    "months_duration": int,
    "days_per_week": int,
    "other_clients_count": int,
}
FLAGS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
NUMBER = re.compile(r"^[+-]?\d+(\.\d+)?$")
WHOLE_NUMBER = re.compile(r"^[+-]?\d+$")
INPUTS: dict[Test, frozenset[str]] = {
    Test.NL: frozenset(ENGAGEMENT_FIELDS),
    **{Test(c): frozenset(r.criterion_names) for c, r in packaged_rulesets().cross_border.items()},
}
"""The columns that answer each test's questions (`GET /v1/classify/questions?test=` describes them)."""
COLUMNS = frozenset({COUNTRY, REFERENCE, MONITOR}.union(*INPUTS.values()))
RESULT_COLUMNS = ("id", "verdict", "score", "error_code", "error")
BLOCK_ROWS = MAX_BATCH_ITEMS
"""Rows of the file per block; a block's rows of one endpoint are cut into batches of the batch size."""
INVALID = "validation_failed"
"""The error code of a row that cannot be sent, as the API names a request it refuses."""
KEY_SCHEME = "compliance-api classify bulk 1"
"""Hashed into every Idempotency-Key: a change of how keys are made must not replay answers made the old way."""


class BulkEndpoint(StrEnum):
    """The batch endpoint of a test, by its path."""

    dutch = "/v1/classify/zelfstandigenwet/batch"
    cross_border = "/v1/classify/cross-border/batch"


@dataclass(frozen=True, slots=True)
class RowError:
    """Why a row has no verdict: the error code and each field's message (field None: the row as a whole)."""

    code: str
    messages: tuple[tuple[str | None, str], ...]

    def text(self, line: int) -> str:
        """`line N: field F: message`, fields joined by `; `."""
        parts = [f"field {field}: {message}" if field else message for field, message in self.messages]
        return f"line {line}: " + "; ".join(parts)


@dataclass(frozen=True, slots=True)
class Request:
    endpoint: BulkEndpoint
    body: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Row:
    line: int
    position: int
    """The row's number among the file's rows (1 for the first), which places it in a block."""
    cells: Mapping[str, str]
    endpoint: BulkEndpoint | None
    """Its test's endpoint; None when its country is not a test."""
    parsed: Request | RowError


@dataclass(frozen=True, slots=True)
class Batch:
    """Rows of one block sent to one endpoint under one Idempotency-Key."""

    endpoint: BulkEndpoint
    rows: tuple[Row, ...]
    key: str

    @property
    def bodies(self) -> list[Mapping[str, Any]]:
        return [row.parsed.body for row in self.rows if isinstance(row.parsed, Request)]

    @property
    def lines(self) -> str:
        """Where its rows are, for messages: `lines 2–101`."""
        return f"lines {self.rows[0].line}–{self.rows[-1].line}"


@dataclass(frozen=True, slots=True)
class RowOutcome:
    """What the results say of a row."""

    id: str = ""
    verdict: str = ""
    score: str = ""
    error_code: str = ""
    error: str = ""

    @classmethod
    def refused(cls, line: int, error: RowError) -> RowOutcome:
        return cls(error_code=error.code, error=error.text(line))

    @classmethod
    def of_item(cls, line: int, item: Mapping[str, Any]) -> RowOutcome:
        """A batch answer's item: a verdict, or the item's problem (it names an `index`)."""
        if "index" not in item:
            return cls(id=str(item["id"]), verdict=str(item["verdict"]), score=str(item["score"]))
        messages = tuple((_column(e["field"]), str(e["message"])) for e in item.get("errors") or ())
        error = RowError(str(item["code"]), messages or ((None, str(item["detail"])),))
        return cls.refused(line, error)


class _BadCell(ValueError):
    pass


def read_rows(source: IO[bytes], as_of: str | None) -> tuple[list[str], Iterator[Row]]:
    """The header and the rows of a bulk CSV, read lazily from `source` (the first row is read at once), each row
    with its request body (`as_of`, YYYY-MM-DD, in every body when given) or its error. A file that cannot be read,
    or whose header names an unknown column, is one RowFileError (a bad row far down the file: when it is reached)."""
    header: list[str] = []

    def check_header(names: Sequence[str]) -> Sequence[str]:
        header.extend(name.strip() for name in names)
        _check_header(header)
        return header

    records = rowfile.read(source, fields=(), check_header=check_header, json_format=False)
    rows = (_row(record.line, position, record.values, as_of) for position, record in enumerate(records, start=1))
    first = next(rows, None)
    if first is None:
        raise RowFileError(NO_ROWS)
    return header, itertools.chain((first,), rows)


def _check_header(header: Sequence[str]) -> None:
    if not any(header):
        raise RowFileError("the first line must name the columns", line=1, field="header")
    unknown = [name for name in header if name not in COLUMNS]
    if unknown:
        message = (
            f"unknown columns {unknown}; the columns are {COUNTRY}, {REFERENCE}, {MONITOR} and the inputs of each "
            "test (`GET /v1/classify/questions?test=NL|FR|DE|BE`)"
        )
        raise RowFileError(message, line=1, field="header")
    twice = sorted({name for name in header if header.count(name) > 1})
    if twice:
        raise RowFileError(f"columns named twice: {', '.join(twice)}", line=1, field="header")


def _row(line: int, position: int, cells: Mapping[str, str], as_of: str | None) -> Row:
    """A row with the request body it asks for, or every reason it cannot be one."""
    filled = {name: value.strip() for name, value in cells.items() if value.strip()}
    country = filled.pop(COUNTRY, Test.NL.value).upper()
    if country not in Test.__members__:
        error = RowError(INVALID, ((COUNTRY, f"{country!r} is not NL, FR, DE or BE (empty means NL)"),))
        return Row(line, position, cells, None, error)
    test = Test(country)
    endpoint = BulkEndpoint.dutch if test is Test.NL else BulkEndpoint.cross_border
    body: dict[str, Any] = {}
    answers: dict[str, Any] = {}
    messages: list[tuple[str | None, str]] = []
    for name, text in filled.items():
        try:
            if name == REFERENCE:
                body[REFERENCE] = text
            elif name == MONITOR:
                body[MONITOR] = _flag(text)
            elif name not in INPUTS[test]:
                raise _BadCell(f"not an input of the {test} test; leave it empty on this row")
            else:
                answers[name] = _number(name, text) if name in DUTCH_NUMBERS else _flag(text)
        except _BadCell as exc:
            messages.append((name, str(exc)))
    if messages:
        return Row(line, position, cells, endpoint, RowError(INVALID, tuple(messages)))
    if as_of is not None:
        body["as_of"] = as_of
    if test is Test.NL:
        body["engagement"] = answers
    else:
        body.update(country=Country(country).value, criteria=answers)
    return Row(line, position, cells, endpoint, Request(endpoint, body))


def _flag(text: str) -> bool:
    try:
        return FLAGS[text.lower()]
    except KeyError:
        raise _BadCell(f"{text!r} is not a yes/no answer: true/false, yes/no or 1/0") from None


def _number(name: str, text: str) -> Any:
    whole = DUTCH_NUMBERS[name] is int
    if not (WHOLE_NUMBER if whole else NUMBER).match(text):
        raise _BadCell(f"{text!r} is not a {'whole number' if whole else 'number such as 95 or 95.50'}")
    return DUTCH_NUMBERS[name](text)


def _column(field: str) -> str:
    """The CSV column an API error names (`items.3.engagement.hourly_rate_eur` → `hourly_rate_eur`), or the field
    as the API names it inside the item."""
    parts = field.split(".")
    if len(parts) >= 2 and parts[0] == "items" and parts[1].isdigit():
        parts = parts[2:]
    if len(parts) >= 2 and parts[0] in ("engagement", "criteria"):
        parts = parts[1:]
    return ".".join(parts)


def batches(rows: Iterable[Row], batch_size: int, run_id: str) -> list[Batch]:
    """The sendable rows in batches of at most `batch_size`: per block of the file and endpoint, in file order."""
    groups: dict[tuple[int, BulkEndpoint, int], list[Row]] = {}
    places: dict[tuple[int, BulkEndpoint], int] = {}
    for row in rows:
        if row.endpoint is None:
            continue
        block = (row.position - 1) // BLOCK_ROWS
        place = places[block, row.endpoint] = places.get((block, row.endpoint), -1) + 1
        if isinstance(row.parsed, Request):
            groups.setdefault((block, row.endpoint, place // batch_size), []).append(row)
    return [
        Batch(endpoint, tuple(members), batch_key(run_id, endpoint, members))
        for (_, endpoint, _), members in groups.items()
    ]


def batch_key(run_id: str, endpoint: BulkEndpoint, rows: Sequence[Row]) -> str:
    """The Idempotency-Key of a batch: a SHA-256 of the run id, the endpoint, and each row's line and request body.
    Two equal rows on different lines are two engagements, so their lines are part of it."""
    sent = [[row.line, row.parsed.body] for row in rows if isinstance(row.parsed, Request)]
    canonical = json.dumps([KEY_SCHEME, run_id, endpoint.value, sent], sort_keys=True, separators=(",", ":"))
    return "bulk-" + hashlib.sha256(canonical.encode()).hexdigest()


ResultWriter = Callable[[Sequence[Row], Mapping[int, RowOutcome]], None]
"""Writes the results of some rows (a block), given each row's outcome by line."""


@contextmanager
def results_file(
    out: Path, header: Sequence[str], advance: Callable[[int], None] | None = None
) -> Iterator[ResultWriter]:
    """`line`, the input columns and each row's outcome, written as they come to a temporary file that becomes `out`
    when the block ends without an error, and is deleted otherwise: whole or not at all. Every text cell is
    spreadsheet-safe (`kit.spreadsheet`); `advance` hears how many rows each write wrote (a progress bar)."""
    partial = out.with_name(out.name + ".partial")
    try:
        with partial.open("w", encoding="utf-8", newline="") as file:
            writer = csv.writer(file)
            writer.writerow(["line", *header, *RESULT_COLUMNS])

            def write(rows: Sequence[Row], outcomes: Mapping[int, RowOutcome]) -> None:
                for row in rows:
                    outcome = outcomes[row.line]
                    result = (outcome.id, outcome.verdict, outcome.score, outcome.error_code, outcome.error)
                    cells = (*(row.cells[name] for name in header), *result)
                    writer.writerow([row.line, *(safe_cell(cell) for cell in cells)])
                if advance is not None:
                    advance(len(rows))

            yield write
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    partial.replace(out)
