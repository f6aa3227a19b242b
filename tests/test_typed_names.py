"""Error codes and event names are closed lists the type checker sees: a misspelt one fails `mypy`, not production."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

from mypy import api as mypy_api

import compliance_api
from compliance_api.errors import ERROR_CATALOGUE, ErrorCode
from compliance_api.events.types import EventName
from compliance_api.webhooks.catalogue import EVENT_TYPES

MISSPELT = """
from compliance_api.errors import ApiError
from compliance_api.events.service import NewEvent
from compliance_api.events.types import EventName

ApiError("not_foud")
NewEvent("pasport.updated", {})
ApiError("not_found")
NewEvent(EventName.PASSPORT_UPDATED, {})
"""


def test_the_error_code_type_lists_exactly_the_catalogue() -> None:
    assert set(get_args(ErrorCode)) == set(ERROR_CATALOGUE)


def test_the_event_names_are_exactly_the_catalogued_events() -> None:
    assert set(EventName) == set(EVENT_TYPES)


def test_mypy_refuses_a_misspelt_error_code_or_event_name(tmp_path: Path) -> None:
    snippet = tmp_path / "misspelt.py"
    snippet.write_text(MISSPELT, encoding="utf-8")
    package = Path(compliance_api.__file__).parent
    # The three modules that define the names, checked with the snippet; what they import is skipped (a fifth of
    # the time of following every import, and it reports what they import as Any, which the snippet never sees).
    defining = [package / "errors.py", package / "events" / "service.py", package / "events" / "types.py"]
    report, _, status = mypy_api.run(
        ["--no-incremental", "--follow-imports=skip", "--cache-dir", str(tmp_path / "cache"), str(snippet)]
        + [str(path) for path in defining]
    )
    errors = [line for line in report.splitlines() if line.startswith(str(snippet)) and ": error:" in line]
    assert status == 1
    assert [line.split(":")[1] for line in errors] == ["6", "7"], report
