"""The row-file reader the importers share: CSV and JSON arrays, line numbers in both, constant memory, progress."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from decimal import Decimal

import pytest

from compliance_api.kit import rowfile
from compliance_api.kit.rowfile import RowFileError, RowRecord

FIELDS = ("id", "name", "amount")


def check_header(header: Sequence[str]) -> Sequence[str]:
    if sorted(header) != sorted(FIELDS):
        raise RowFileError("bad header", line=1, field="header")
    return header


def read(content: bytes, json_format: bool | None = None) -> list[RowRecord]:
    return list(rowfile.read(io.BytesIO(content), fields=FIELDS, check_header=check_header, json_format=json_format))


def test_csv_rows_carry_their_line_and_blank_lines_are_skipped() -> None:
    records = read(b'id,name,amount\n1,a,2.5\n\n  \n2,"b\nc",3\n')
    assert [(r.line, r.number, dict(r.values)) for r in records] == [
        (2, None, {"id": "1", "name": "a", "amount": "2.5"}),
        (6, None, {"id": "2", "name": "b\nc", "amount": "3"}),
    ]


def test_a_csv_row_needs_one_value_per_column() -> None:
    with pytest.raises(RowFileError) as caught:
        read(b"id,name,amount\n1,a\n")
    assert str(caught.value) == "line 2: expected 3 values, got 2 (the header has 3 columns)"


def test_json_records_carry_the_line_they_start_on_and_their_number() -> None:
    content = b'\xef\xbb\xbf [\n  {"id": 1,\n   "amount": 2.50},\n\n  {"name": "b"}\n]\n'
    records = read(content)
    assert [(r.line, r.number, dict(r.values)) for r in records] == [
        (2, 1, {"id": 1, "amount": Decimal("2.50")}),
        (5, 2, {"name": "b"}),
    ]
    assert records[1].where == "line 5, record 2"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"id": 1}', "line 1: a JSON file must hold one array of objects"),
        (b"[\n1]", "line 2, record 1: each item must be an object"),
        (b'[{"id": 1},\n {"id": 2, "colour": "red"}]', "line 2, record 2, field colour: unknown field"),
        (b'[{"id": 1}\n {"id": 2}]', "line 2: expected ',' or ']' after an item"),
        (b'[{"id": 1},\n]', "line 2, record 2: invalid JSON: Expecting value"),
        (b'[{"id": 1},\n\n{"id": "x', "line 3, record 2: invalid JSON: Unterminated string starting at"),
        (b'[{"id": 1}]\n[]', "line 2: unexpected content after the array"),
        (b"[" * 100_000, "line 1, record 1: invalid JSON: nested too deeply"),
        (
            b'[{"id": 1},\n {"name": ' + b"[" * 100_000 + b"]" * 100_000 + b"}]",
            "line 2, record 2: invalid JSON: nested",
        ),
    ],
)
def test_json_errors_name_the_line_and_the_record(content: bytes, message: str) -> None:
    with pytest.raises(RowFileError) as caught:
        read(content, json_format=True)
    assert str(caught.value).startswith(message)


def big_json(count: int) -> tuple[bytes, list[dict[str, object]]]:
    """Records of varied length (multi-byte characters, escapes, long strings) so that chunk boundaries fall
    everywhere: inside strings, numbers, literals and escapes."""
    items: list[dict[str, object]] = [
        {"id": n, "name": "é€" * (n % 37) + '\\"' * (n % 3) + "x" * (n % 500), "amount": n / 100 if n % 2 else None}
        for n in range(count)
    ]
    lines = ["["] + [json.dumps(item, ensure_ascii=n % 2 == 0) + "," for n, item in enumerate(items)]
    lines[-1] = lines[-1].rstrip(",")
    return ("\n".join([*lines, "]"]) + "\n").encode(), items


def test_a_json_file_of_many_chunks_reads_like_json_loads_with_every_line_right() -> None:
    content, items = big_json(3000)
    assert len(content) > 10 * rowfile.CHUNK_BYTES
    read_bytes: list[int] = []
    records = list(
        rowfile.read(
            io.BytesIO(content), fields=FIELDS, check_header=check_header, json_format=None, on_bytes=read_bytes.append
        )
    )
    assert [dict(r.values) for r in records] == json.loads(content, parse_float=Decimal)
    assert [r.line for r in records] == list(range(2, len(items) + 2))
    assert [r.number for r in records] == list(range(1, len(items) + 1))
    assert sum(read_bytes) == len(content), "progress hears of every byte"


def test_a_bad_record_deep_in_a_big_file_is_named_by_its_line() -> None:
    content, _ = big_json(3000)
    broken = content.replace(b'{"id": 2500,', b'{"id": 2500,,', 1)
    with pytest.raises(RowFileError) as caught:
        read(broken)
    assert (caught.value.line, caught.value.record) == (2502, 2501)
    assert "invalid JSON" in caught.value.message


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"id,name,amount\n1,a,2\n2,\xff,3\n", "line 3: the file is not UTF-8"),
        (b"id,n\xe9,amount\n1,a,2\n", "line 1, field header: the file is not UTF-8"),
        (b'[{"id": 1},\n {"name": "\xc3"}]', "line 2: the file is not UTF-8"),
    ],
)
def test_a_byte_that_is_not_utf8_is_refused_at_its_line(content: bytes, message: str) -> None:
    with pytest.raises(RowFileError) as caught:
        read(content)
    assert str(caught.value) == message
