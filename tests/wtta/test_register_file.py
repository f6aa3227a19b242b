from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pytest

from compliance_api.wtta.register_file import RegisterFileError, read_rows
from tests.wtta.registers import HEADER, register_csv


def rows_of(content: bytes) -> list[dict[str, object]]:
    return list(read_rows(io.BytesIO(content)))


def test_csv_rows_are_typed_and_empty_means_null() -> None:
    content = register_csv(
        '12345678,"Acme, B.V.",admitted,NAU-1,2027-01-01,2028-01-01T12:00:00+01:00', "87654321,Beta,applied,,,"
    )
    first, second = rows_of(content)
    assert first == {
        "line": 2,
        "kvk_number": "12345678",
        "legal_name": "Acme, B.V.",
        "admission_status": "admitted",
        "admission_number": "NAU-1",
        "admitted_at": datetime(2027, 1, 1, tzinfo=UTC),
        "expires_at": datetime(2028, 1, 1, 11, tzinfo=UTC),
    }
    assert (second["admission_number"], second["admitted_at"], second["expires_at"]) == (None, None, None)


def test_columns_may_come_in_any_order_and_a_bom_is_ignored() -> None:
    content = b"\xef\xbb\xbfadmission_status,kvk_number,legal_name,admission_number,admitted_at,expires_at\n" + (
        b"revoked,12345678,Acme,,,\n"
    )
    assert [(r["kvk_number"], r["admission_status"]) for r in rows_of(content)] == [("12345678", "revoked")]


def test_json_array_has_the_same_fields() -> None:
    content = json.dumps(
        [{"kvk_number": "12345678", "legal_name": "Acme", "admission_status": "suspended", "expires_at": None}]
    ).encode()
    assert [(r["kvk_number"], r["admission_status"], r["expires_at"]) for r in rows_of(b"  " + content)] == [
        ("12345678", "suspended", None)
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("1234567,Acme,admitted,,,", "line 2, field kvk_number: must be exactly 8 digits"),
        ("123456789,Acme,admitted,,,", "line 2, field kvk_number: must be exactly 8 digits"),
        ("1234567a,Acme,admitted,,,", "line 2, field kvk_number: must be exactly 8 digits"),
        ("12345678,,admitted,,,", "line 2, field legal_name: required"),
        ("12345678,Acme,approved,,,", "line 2, field admission_status: must be one of"),
        ("12345678,Acme,admitted,,01-02-2027,", "line 2, field admitted_at: '01-02-2027' is not an ISO 8601 date"),
        ("12345678,Acme,admitted,,2027-01-01,2026-12-31", "line 2, field expires_at: is before admitted_at"),
        ("12345678,Acme,admitted,,2027-01-01", "line 2, field -: expected 6 values, got 5"),
        ("12345678,Ac\x00me,admitted,,,", "line 2, field legal_name: contains a NUL character"),
        ("12345678,Acme,admitted,W\x0001,,", "line 2, field admission_number: contains a NUL character"),
    ],
)
def test_bad_csv_rows_name_their_line_and_field(line: str, message: str) -> None:
    with pytest.raises(RegisterFileError) as raised:
        rows_of(register_csv(line))
    assert str(raised.value).startswith(message)


def test_errors_count_physical_lines_including_blank_ones() -> None:
    content = (HEADER + "\n12345678,Acme,admitted,,,\n\n87654321,Beta,nope,,,\n").encode()
    with pytest.raises(RegisterFileError, match=r"^line 4, field admission_status"):
        rows_of(content)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "line 1, field header: the file is empty"),
        (b"kvk,name\n1,2\n", "line 1, field header: expected the columns"),
        (b"\xff\xfe garbage", "field header"),
        (
            b'[{"kvk_number": 12345678, "legal_name": "A", "admission_status": "admitted"}]',
            "record 1, field kvk_number",
        ),
        (
            b'[{"kvk_number": "12345678", "legal_name": "A", "admission_status": "admitted", "x": "1"}]',
            "record 1, field x",
        ),
        (b'[{"kvk_number": "12345678", "legal_name": "A"}]', "record 1, field admission_status: required"),
        (
            b'[{"kvk_number": "12345678", "legal_name": "A\\u0000", "admission_status": "admitted"}]',
            "record 1, field legal_name: contains a NUL character",
        ),
        (b'[{"kvk_number": "12345678", "legal_name": "A", "admission_status": "admitted"}, 3]', "record 2, field -"),
        (b'[{"kvk_number": "12345678", "legal_name": "A", "admission_status": "admitted"}, {"kv', "record 2, field -"),
    ],
)
def test_bad_files_are_refused_with_a_location(content: bytes, message: str) -> None:
    with pytest.raises(RegisterFileError, match=message):
        rows_of(content)
