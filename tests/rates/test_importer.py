from __future__ import annotations

from datetime import date

import pytest

from compliance_api.rates.importer import ImportFileError, parse
from compliance_api.rates.service import Observation

TODAY = date(2026, 7, 1)
HEADER = "sector,region,hourly_rate_eur,observed_on\n"


def csv(*lines: str) -> bytes:
    return (HEADER + "".join(line + "\n" for line in lines)).encode()


def test_csv_rows_become_observations_in_cents() -> None:
    rows = parse(csv("ict,NL-UT,95.5,2026-06-30", "legal,NL, 120 ,2026-07-01"), json_format=False, today=TODAY)
    assert rows == [
        Observation("ict", "NL-UT", 9550, date(2026, 6, 30)),
        Observation("legal", "NL", 12000, date(2026, 7, 1)),
    ]


def test_json_rows_and_a_bom_are_accepted() -> None:
    content = (
        b'\xef\xbb\xbf[\n  {"sector": "ict", "region": "NL", "hourly_rate_eur": 80.25, "observed_on": "2026-01-02"}\n]'
    )
    assert parse(content, json_format=True, today=TODAY) == [Observation("ict", "NL", 8025, date(2026, 1, 2))]


@pytest.mark.parametrize(
    ("line", "field", "match"),
    [
        ("astrology,NL,50,2026-01-01", "sector", "not a sector"),
        ("ICT,NL,50,2026-01-01", "sector", "not a sector"),
        ("ict,NL-XX,50,2026-01-01", "region", "province code"),
        ("ict,nl,50,2026-01-01", "region", "province code"),
        ("ict,NL,0,2026-01-01", "hourly_rate_eur", "above 0"),
        ("ict,NL,-5,2026-01-01", "hourly_rate_eur", "above 0"),
        ("ict,NL,10000,2026-01-01", "hourly_rate_eur", "below 10000"),
        ("ict,NL,NaN,2026-01-01", "hourly_rate_eur", "above 0"),
        ("ict,NL,Infinity,2026-01-01", "hourly_rate_eur", "above 0"),
        ("ict,NL,abc,2026-01-01", "hourly_rate_eur", "not a number"),
        ("ict,NL,50.001,2026-01-01", "hourly_rate_eur", "two decimals"),
        ("ict,NL,50,2026-07-02", "observed_on", "in the future"),
        ("ict,NL,50,2026-02-30", "observed_on", "not a valid date"),
        ("ict,NL,50,01-02-2026", "observed_on", "YYYY-MM-DD"),
        ("ict,NL,50,", "observed_on", "missing"),
        (",NL,50,2026-01-01", "sector", "missing"),
    ],
)
def test_a_bad_csv_row_is_named_by_line_and_field(line: str, field: str, match: str) -> None:
    with pytest.raises(ImportFileError, match=match) as caught:
        parse(csv("ict,NL,50,2026-01-01", line), json_format=False, today=TODAY)
    assert (caught.value.line, caught.value.field) == (3, field)
    assert str(caught.value).startswith(f"line 3, field {field}: ")


@pytest.mark.parametrize(
    ("content", "line", "match"),
    [
        (b"sector,region,rate\nict,NL,50\n", 1, "header"),
        (b"", 1, "header"),
        (HEADER.encode(), None, "no rows"),
        (csv("ict,NL,50,2026-01-01,extra"), 2, "columns"),
        (csv("ict,NL,50"), 2, "columns"),
        (b"\xff\xfe", None, "not UTF-8"),
    ],
)
def test_malformed_csv_files(content: bytes, line: int | None, match: str) -> None:
    with pytest.raises(ImportFileError, match=match) as caught:
        parse(content, json_format=False, today=TODAY)
    assert caught.value.line == line


GOOD = '{"sector": "ict", "region": "NL", "hourly_rate_eur": 50, "observed_on": "2026-01-01"}'


@pytest.mark.parametrize(
    ("content", "line", "field", "match"),
    [
        ("[\n" + GOOD + ",\n" + GOOD.replace("50", '"x"') + "\n]", 3, "hourly_rate_eur", "not a number"),
        ("[\n" + GOOD + ",\n\n" + GOOD.replace("50", "true") + "]", 4, "hourly_rate_eur", "must be a number"),
        ("[" + GOOD + ",\n" + GOOD.replace('"NL"', '"BE"') + "]", 2, "region", "province"),
        ("[" + GOOD + ",\n" + GOOD.replace('"2026-01-01"', "20260101") + "]", 2, "observed_on", "YYYY-MM-DD"),
        ("[" + GOOD.replace("}", ', "vat": 21}') + "]", 1, "vat", "unknown field"),
        ('{"sector": "ict"}', 1, None, "one array"),
        ("[1]", 1, None, "object"),
        ("[" + GOOD + "\n" + GOOD + "]", 2, None, "expected ','"),
        ("[" + GOOD + "] []", 1, None, "after the array"),
        ("[\n" + GOOD + ",\n{]", 3, None, "invalid JSON"),
    ],
)
def test_a_bad_json_item_is_named_by_line_and_field(content: str, line: int, field: str | None, match: str) -> None:
    with pytest.raises(ImportFileError, match=match) as caught:
        parse(content.encode(), json_format=True, today=TODAY)
    assert (caught.value.line, caught.value.field) == (line, field)


def test_an_empty_json_array_has_no_rows() -> None:
    with pytest.raises(ImportFileError, match="no rows"):
        parse(b" [ ] ", json_format=True, today=TODAY)
