"""Deprecated operations, declared once: `@router.get(path, **deprecated(since=, sunset=, link=))`.

The one declaration marks the operation `deprecated: true` in the contract (with its dates and notice) and makes it
answer, success or error, with `Deprecation: @<unix seconds>` (RFC 9745), `Sunset: <HTTP-date>` (RFC 8594) and
`Link: <notice>; rel="deprecation"`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from email.utils import format_datetime
from typing import Any

from fastapi import Depends, Request

OPENAPI_KEY = "x-deprecation"
MINIMUM_NOTICE = timedelta(days=90)
"""The shortest time between an operation's deprecation and its sunset that integrators are promised."""


@dataclass(frozen=True, slots=True)
class Deprecation:
    since: datetime
    sunset: datetime
    link: str

    def headers(self) -> list[tuple[bytes, bytes]]:
        """The three response headers, as ASGI header pairs."""
        return [
            (b"deprecation", b"@%d" % int(self.since.timestamp())),
            (b"sunset", format_datetime(self.sunset, usegmt=True).encode()),
            (b"link", f'<{self.link}>; rel="deprecation"'.encode()),
        ]

    def contract(self) -> dict[str, str]:
        """What the contract states about the deprecation (under `x-deprecation` of the operation)."""
        return {"since": self.since.isoformat(), "sunset": self.sunset.isoformat(), "link": self.link}


def _utc(moment: date | datetime) -> datetime:
    if isinstance(moment, datetime):
        if moment.tzinfo is None:
            raise ValueError("deprecation dates must be timezone-aware")
        return moment.astimezone(UTC)
    return datetime.combine(moment, time(), tzinfo=UTC)


def deprecation(*, since: date | datetime, sunset: date | datetime, link: str) -> Deprecation:
    """A checked deprecation: the sunset comes at least 90 days after the deprecation and a notice is linked."""
    notice = Deprecation(_utc(since), _utc(sunset), link)
    if notice.sunset < notice.since + MINIMUM_NOTICE:
        raise ValueError(
            f"the sunset of a deprecated operation comes at least {MINIMUM_NOTICE.days} days after its deprecation "
            f"(deprecated {notice.since:%Y-%m-%d}: sunset {notice.since + MINIMUM_NOTICE:%Y-%m-%d} or later)"
        )
    if not link or any(c in link for c in '<>" \r\n'):
        raise ValueError("a deprecation needs a link to its notice (a URI without spaces, quotes or angle brackets)")
    return notice


def deprecated(*, since: date | datetime, sunset: date | datetime, link: str) -> dict[str, Any]:
    """Keyword arguments for a route decorator that deprecate the operation (headers and contract together)."""
    notice = deprecation(since=since, sunset=sunset, link=link)
    headers = notice.headers()

    def stamp(request: Request) -> None:
        state = request.scope["state"]
        state["response_headers"] = [*state.get("response_headers", ()), *headers]

    return {
        "deprecated": True,
        "dependencies": [Depends(stamp)],
        "openapi_extra": {OPENAPI_KEY: notice.contract()},
    }
