"""The one reader of instants that come from outside (query strings, request bodies, dashboard forms, import files):
ISO 8601, and only instants that exist in UTC between the years 1 and 9999.

`datetime.fromisoformat` takes `0001-01-01T00:00:00+23:59`, whose UTC instant lies before the year 1: converting it
(which the database layer does for every bound value) raises `OverflowError`, so every reader checks it here and
refuses it as a `ValueError` the caller reports by field, never as a 500.
"""

from __future__ import annotations

import datetime as dt

RANGE = "0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z"
EXAMPLE = "2026-11-01T00:00:00Z"


class InstantError(ValueError):
    """Not an instant this service can hold; the message says why, without the value."""


class OutOfRange(InstantError):
    """A well-formed date-time with no UTC instant between the years 1 and 9999."""


def parse_instant(text: str, *, naive_is_utc: bool = False) -> dt.datetime:
    """The instant `text` names, as it was written (its offset kept).

    An ISO 8601 date-time with `Z` or an offset; with `naive_is_utc`, also without one (UTC) or a bare date
    (midnight UTC). Refused with InstantError: anything else, and instants before the year 1 or after 9999 in UTC.
    """
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        raise InstantError(f"must be an ISO 8601 date-time with a time zone, e.g. {EXAMPLE}") from None
    if parsed.tzinfo is None:
        if not naive_is_utc:
            raise InstantError(f"must have a time zone (`Z` or an offset such as `+01:00`), e.g. {EXAMPLE}")
        parsed = parsed.replace(tzinfo=dt.UTC)
    return bounded(parsed)


def bounded(moment: dt.datetime) -> dt.datetime:
    """An aware `moment` unchanged; InstantError when it has no UTC instant between the years 1 and 9999."""
    try:
        moment.astimezone(dt.UTC)
    except OverflowError:
        raise OutOfRange(f"must lie between {RANGE} (in UTC)") from None
    return moment


def parse_utc(text: str, *, naive_is_utc: bool = False) -> dt.datetime:
    """`parse_instant`, converted to UTC."""
    return parse_instant(text, naive_is_utc=naive_is_utc).astimezone(dt.UTC)
