"""Percentiles and windows: the definitions every backend must agree on."""

from __future__ import annotations

import calendar
import math
from collections.abc import Sequence
from datetime import date, timedelta

QUANTILES = (0.25, 0.5, 0.75)


def percentile(sorted_values: Sequence[int], q: float) -> float:
    """Linear interpolation between closest ranks: numpy.percentile's default method, PostgreSQL's percentile_cont.

    Hand-rolled because SQLite has no percentile function and numpy is not a runtime dependency.
    """
    if not sorted_values:
        raise ValueError("no values")
    position = (len(sorted_values) - 1) * q
    lower = math.floor(position)
    if lower + 1 >= len(sorted_values):
        return float(sorted_values[lower])
    below, above = sorted_values[lower], sorted_values[lower + 1]
    return below + (above - below) * (position - lower)


def months_before(day: date, months: int) -> date:
    """The same day `months` calendar months earlier, clamped to the month's end (PostgreSQL's `date - interval`)."""
    index = day.year * 12 + day.month - 1 - months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def window_start(as_of: date, months: int) -> date:
    """First day counted: observations dated after `as_of` minus `months` months, up to and including `as_of`."""
    return months_before(as_of, months) + timedelta(days=1)


def nice_step(at_least: float) -> int:
    """The smallest round whole number (1, 2 or 5 times a power of ten) of at least `at_least`: bin widths and axis
    steps people read at a glance."""
    power = 1
    while True:
        for factor in (1, 2, 5):
            if factor * power >= at_least:
                return factor * power
        power *= 10
