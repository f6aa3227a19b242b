from __future__ import annotations

from datetime import date

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from compliance_api.rates.compute import QUANTILES, months_before, percentile, window_start


@given(st.lists(st.integers(min_value=1, max_value=999_999), min_size=1, max_size=300))
def test_percentile_is_numpy_default(values: list[int]) -> None:
    ordered = sorted(values)
    for q in QUANTILES:
        assert percentile(ordered, q) == pytest.approx(float(np.percentile(ordered, q * 100)), rel=1e-12)


def test_percentile_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="no values"):
        percentile([], 0.5)


@pytest.mark.parametrize(
    ("day", "months", "expected"),
    [
        (date(2026, 6, 30), 24, date(2024, 6, 30)),
        (date(2026, 3, 31), 1, date(2026, 2, 28)),
        (date(2024, 2, 29), 12, date(2023, 2, 28)),
        (date(2026, 1, 15), 13, date(2024, 12, 15)),
    ],
)
def test_months_before_clamps_to_month_end(day: date, months: int, expected: date) -> None:
    assert months_before(day, months) == expected


def test_window_excludes_the_day_exactly_window_months_before() -> None:
    assert window_start(date(2026, 6, 30), 24) == date(2024, 7, 1)
