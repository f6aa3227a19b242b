"""The one reader of an HTTP `Retry-After` header (RFC 9110 §10.2.3): whole seconds, or an HTTP date."""

from __future__ import annotations

from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime

MAX_RETRY_AFTER = timedelta(days=30)
"""Where a `Retry-After` in seconds is cut (more would overflow a date added to it)."""


def read_retry_after(value: str | None, now: datetime) -> timedelta | None:
    """How long `Retry-After` asks to wait from `now` (negative for a date already past), or None without a readable
    one: seconds in ASCII digits ("²" is a digit to `str.isdigit`), or an HTTP date."""
    if not value:
        return None
    seconds = value.strip()
    if seconds.isascii() and seconds.isdigit():
        return timedelta(seconds=min(int(seconds), int(MAX_RETRY_AFTER.total_seconds())))
    try:
        return parsedate_to_datetime(value) - now
    except (TypeError, ValueError):
        return None
