"""Error codes and event names are closed lists the type checker sees: a misspelt one fails `mypy`, not production."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

from mypy import api as mypy_api

from compliance_api.errors import ERROR_CATALOGUE, ErrorCode
from compliance_api.events.types import EventName
from compliance_api.webhooks.catalogue import EVENT_TYPES

MISSPELT = """
from compliance_api.errors import ApiError
from compliance_api.events.service import Event
from compliance_api.events.types import EventName

ApiError("not_foud")
Event("pasport.updated", {})
ApiError("not_found")
Event(EventName.PASSPORT_UPDATED, {})
"""


def test_the_error_code_type_lists_exactly_the_catalogue() -> None:
    assert set(get_args(ErrorCode)) == set(ERROR_CATALOGUE)


def test_the_event_names_are_exactly_the_catalogued_events() -> None:
    assert set(EventName) == set(EVENT_TYPES)


def test_mypy_refuses_a_misspelt_error_code_or_event_name(tmp_path: Path) -> None:
    snippet = tmp_path / "misspelt.py"
    snippet.write_text(MISSPELT, encoding="utf-8")
    report, _, status = mypy_api.run(
        ["--no-incremental", "--follow-imports=silent", "--cache-dir", str(tmp_path / "cache"), str(snippet)]
    )
    errors = [line for line in report.splitlines() if ": error:" in line]
    assert status == 1
    assert [line.split(":")[1] for line in errors] == ["6", "7"], report
