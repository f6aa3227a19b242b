"""The bulk CSV: rows into request bodies or errors by line, batches by block, Idempotency-Keys from the rows, results
out."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from compliance_api.cli.bulk.rows import (
    Batch,
    BulkEndpoint,
    Request,
    Row,
    RowError,
    RowOutcome,
    batches,
    read_rows,
    results_file,
)
from compliance_api.kit.rowfile import RowFileError

EXAMPLE = Path(__file__).parents[3] / "docs" / "integrate" / "bulk-example.csv"


def _rows(text: str, as_of: str | None = None) -> list[Row]:
    return list(read_rows(io.BytesIO(text.encode()), as_of)[1])


def test_the_country_column_picks_the_test_and_cells_become_typed_answers() -> None:
    rows = _rows(
        "country,reference,monitor,hourly_rate_eur,months_duration,own_tools,subject_to_instructions\n"
        ",a,,95.50,12,yes,\n"
        "nl,b,TRUE,95,0,0,\n"
        " DE ,c,no,,,,1\n"
    )
    assert [row.parsed for row in rows] == [
        Request(
            BulkEndpoint.dutch,
            {"reference": "a", "engagement": {"hourly_rate_eur": 95.5, "months_duration": 12, "own_tools": True}},
        ),
        Request(
            BulkEndpoint.dutch,
            {
                "reference": "b",
                "monitor": True,
                "engagement": {"hourly_rate_eur": 95.0, "months_duration": 0, "own_tools": False},
            },
        ),
        Request(
            BulkEndpoint.cross_border,
            {"reference": "c", "monitor": False, "country": "DE", "criteria": {"subject_to_instructions": True}},
        ),
    ]


def test_as_of_goes_into_every_body() -> None:
    rows = _rows("country,hourly_rate_eur,client_gives_orders\nNL,40,\nFR,,yes\n", as_of="2025-03-01")
    assert [row.parsed.body["as_of"] for row in rows if isinstance(row.parsed, Request)] == ["2025-03-01"] * 2


def test_a_row_that_cannot_be_a_request_names_its_line_and_every_bad_field() -> None:
    rows = _rows(
        "country,reference,hourly_rate_eur,months_duration,own_tools,client_gives_orders\n"
        'NL,"multi\nline",abc,1.5,maybe,\n'
        "FR,x,95,,,yes\n"
        "XX,y,,,,\n"
    )
    errors = [row.parsed.text(row.line) for row in rows if isinstance(row.parsed, RowError)]
    assert errors == [
        "line 3: field hourly_rate_eur: 'abc' is not a number such as 95 or 95.50; "
        "field months_duration: '1.5' is not a whole number; "
        "field own_tools: 'maybe' is not a yes/no answer: true/false, yes/no or 1/0",
        "line 4: field hourly_rate_eur: not an input of the FR test; leave it empty on this row",
        "line 5: field country: 'XX' is not NL, FR, DE or BE (empty means NL)",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("reference,hourly_rate,tarief\nx,95,1\n", "line 1, field header: unknown columns ['hourly_rate', 'tarief']"),
        ("reference,own_tools,reference\nx,yes,y\n", "line 1, field header: columns named twice: reference"),
        ("reference,own_tools\nx,yes\ny\n", "line 3: expected 2 values, got 1"),
        ("reference,own_tools\n", "the file has no rows"),
        ("", "line 1, field header: the first line must name the columns"),
    ],
)
def test_a_file_that_cannot_be_read_is_one_error_naming_where(text: str, message: str) -> None:
    with pytest.raises(RowFileError) as refused:
        list(read_rows(io.BytesIO(text.encode()), None)[1])
    assert str(refused.value).startswith(message)


def test_the_example_file_of_the_guide_reads_as_the_guide_says() -> None:
    header, read = read_rows(io.BytesIO(EXAMPLE.read_bytes()), None)
    rows = list(read)
    assert header[:3] == ["country", "reference", "monitor"]
    sent = {row.line: row.parsed.body.get("country", "NL") for row in rows if isinstance(row.parsed, Request)}
    assert sent == {2: "NL", 3: "NL", 4: "DE", 5: "FR", 6: "BE", 7: "NL"}
    refused = [row.line for row in rows if isinstance(row.parsed, RowError)]
    assert refused == [8, 9, 10]


SIX = "country,reference,own_tools\n" + "NL,a,\nDE,b,\nNL,c,maybe\nNL,d,\nFR,e,\nXX,f,\n"


def _references(found: list[Batch]) -> list[tuple[BulkEndpoint, list[str]]]:
    return [(batch.endpoint, [row.cells["reference"] for row in batch.rows]) for batch in found]


def test_batches_hold_rows_of_one_endpoint_in_file_order_and_refused_rows_keep_their_place() -> None:
    assert _references(batches(_rows(SIX), 2, "")) == [
        (BulkEndpoint.dutch, ["a"]),  # c, refused, is second among the Dutch rows
        (BulkEndpoint.cross_border, ["b", "e"]),
        (BulkEndpoint.dutch, ["d"]),
    ]


def test_the_same_file_gets_the_same_keys_and_a_run_id_other_ones() -> None:
    first, again = batches(_rows(SIX), 2, ""), batches(_rows(SIX), 2, "")
    assert [b.key for b in first] == [b.key for b in again]
    assert len({b.key for b in first}) == len(first)
    assert all(b.key.startswith("bulk-") and len(b.key) <= 255 for b in first)
    assert not {b.key for b in batches(_rows(SIX), 2, "march")} & {b.key for b in first}


def test_equal_rows_on_other_lines_are_other_engagements() -> None:
    one = batches(_rows("reference\nsame\n"), 100, "")
    two = batches(_rows("reference\n\nsame\n"), 100, "")  # a blank line before: the row is on line 3
    assert one[0].bodies == two[0].bodies
    assert one[0].key != two[0].key


def test_fixing_a_refused_row_changes_only_the_key_of_its_batch() -> None:
    before = batches(_rows(SIX), 2, "")
    after = batches(_rows(SIX.replace("NL,c,maybe", "NL,c,yes")), 2, "")
    assert _references(after)[0] == (BulkEndpoint.dutch, ["a", "c"])
    assert after[0].key != before[0].key
    assert [b.key for b in after[1:]] == [b.key for b in before[1:]]


def _mixed(count: int) -> str:
    return "country,reference\n" + "".join(f"{'DE' if n % 3 == 0 else 'NL'},r{n}\n" for n in range(count))


def test_blocks_of_a_thousand_rows_keep_a_change_of_country_inside_its_block() -> None:
    before = batches(_rows(_mixed(2500)), 100, "")
    after = batches(_rows(_mixed(2500).replace("\nNL,r4\n", "\nDE,r4\n")), 100, "")
    in_block = {b.key for b in before if b.rows[0].position <= 1000}
    assert {b.key for b in before} - in_block == {b.key for b in after if b.rows[0].position > 1000}
    assert in_block - {b.key for b in after}
    assert max(len(b.rows) for b in after) == 100
    # 1666 Dutch rows and 834 German ones in blocks of 1000, 1000 and 500: 7 + 4, 7 + 4 and 4 + 2 batches
    assert len(before) == 28


def test_an_api_problem_names_the_csv_column() -> None:
    problem = {
        "index": 0,
        "code": "validation_failed",
        "detail": "…",
        "errors": [{"field": "items.0.engagement.hourly_rate_eur", "message": "Input should be >= 0"}],
    }
    outcome = RowOutcome.of_item(7, problem)
    assert (outcome.error_code, outcome.error) == (
        "validation_failed",
        "line 7: field hourly_rate_eur: Input should be >= 0",
    )
    verdict = RowOutcome.of_item(8, {"id": "c0ffee", "verdict": "safe", "score": 12, "advice": "…"})
    assert (verdict.id, verdict.verdict, verdict.score, verdict.error) == ("c0ffee", "safe", "12", "")


def test_results_keep_the_input_with_line_in_front_and_outcomes_after(tmp_path: Path) -> None:
    header, read = read_rows(io.BytesIO(b'reference,own_tools\n"a, b",yes\nc,maybe\n'), None)
    rows = list(read)
    outcomes = {2: RowOutcome(id="1", verdict="risky", score="40"), 3: RowOutcome.refused(3, rows[1].parsed)}  # type: ignore[arg-type]
    out = tmp_path / "results.csv"
    with results_file(out, header) as write:
        write(rows, outcomes)
    with out.open(encoding="utf-8", newline="") as file:
        written = list(csv.reader(file))
    assert written[0] == ["line", "reference", "own_tools", "id", "verdict", "score", "error_code", "error"]
    assert written[1] == ["2", "a, b", "yes", "1", "risky", "40", "", ""]
    assert written[2][:4] == ["3", "c", "maybe", ""]
    assert written[2][6:] == [
        "validation_failed",
        "line 3: field own_tools: 'maybe' is not a yes/no answer: true/false, yes/no or 1/0",
    ]
    assert not (tmp_path / "results.csv.partial").exists()


def test_results_neutralise_cells_a_spreadsheet_would_run_as_formulas(tmp_path: Path) -> None:
    text = 'reference,own_tools\n"=HYPERLINK(""http://x"",""y"")",yes\n+cmd|calc,yes\n@SUM(A1),no\n-2+3,yes\nplain,no\n'
    header, read = read_rows(io.BytesIO(text.encode()), None)
    rows = list(read)
    outcomes = {row.line: RowOutcome(id="1", verdict="safe", score="1") for row in rows}
    out = tmp_path / "results.csv"
    with results_file(out, header) as write:
        write(rows, outcomes)
    with out.open(encoding="utf-8", newline="") as file:
        references = [line[1] for line in list(csv.reader(file))[1:]]
    assert references == ['\'=HYPERLINK("http://x","y")', "'+cmd|calc", "'@SUM(A1)", "'-2+3", "plain"]


def test_rows_are_read_lazily() -> None:
    """The rows of a large file come as they are read: getting the first reads a small part of the file."""
    text = ("reference,own_tools\n" + "".join(f"r{n},yes\n" for n in range(200_000))).encode()
    source = io.BytesIO(text)
    _, rows = read_rows(source, None)
    assert next(rows).cells["reference"] == "r0"
    assert source.tell() < len(text) / 10
