"""The one reader of `Retry-After`: whole ASCII seconds (capped), an HTTP date, or nothing it can read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from compliance_api.kit.retry_after import MAX_RETRY_AFTER, read_retry_after

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("7", timedelta(seconds=7)),
        (" 30 ", timedelta(seconds=30)),
        ("9" * 40, MAX_RETRY_AFTER),
        ("Fri, 27 Nov 2026 12:01:00 GMT", timedelta(minutes=1)),
        ("Fri, 27 Nov 2026 11:59:00 GMT", timedelta(minutes=-1)),
        (None, None),
        ("", None),
        ("²", None),
        ("٣", None),
        ("-5", None),
        ("soon", None),
    ],
)
def test_retry_after_is_read_as_seconds_or_a_date_or_not_at_all(value: str | None, expected: timedelta | None) -> None:
    assert read_retry_after(value, NOW) == expected
