"""Filters read from a page's query string (GET forms): the values the API's list filters take, or a `FilterError`
whose message the page shows above its form with a 400, never a 500. Labels are marked message ids (`N_`), shown in
the reader's language."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TypeVar
from urllib.parse import urlencode

from starlette.datastructures import QueryParams

from compliance_api.dashboard.i18n import N_, Text
from compliance_api.kit.environment import Environment
from compliance_api.kit.instants import InstantError, OutOfRange, parse_instant
from compliance_api.kit.schemas import NUL

ChoiceT = TypeVar("ChoiceT")
MAX_QUERY_VALUE = 200
ENVIRONMENTS = {environment.value: environment for environment in Environment}
ENVIRONMENT = N_("Environment")


class FilterError(ValueError):
    """A filter the page cannot use; the message says how to correct it."""

    def __init__(self, msgid: str, label: str, **variables: object) -> None:
        super().__init__(msgid, label)
        self.text = Text(msgid, {"label": Text(label), **variables})

    @property
    def message(self) -> Text:
        return self.text


def text(query: QueryParams, name: str, label: str, *, max_length: int = MAX_QUERY_VALUE) -> str:
    """A text filter, stripped ('' when absent); FilterError when too long or holding NUL."""
    value = query.get(name, "").strip()
    if NUL in value:
        raise FilterError(N_("“%(label)s” contains a NUL character (U+0000), which is not allowed."), label)
    if len(value) > max_length:
        raise FilterError(N_("“%(label)s” may have at most %(maximum)s characters."), label, maximum=max_length)
    return value


def texts(query: QueryParams, name: str, label: str) -> list[str]:
    """A repeated text filter (checkboxes), each value checked as `text` checks one."""
    values = [value.strip() for value in query.getlist(name)]
    if any(NUL in value or len(value) > MAX_QUERY_VALUE for value in values):
        raise FilterError(N_("“%(label)s” has a value that is not one of the choices."), label)
    return [value for value in values if value]


def choice(value: str, options: Mapping[str, ChoiceT], label: str) -> ChoiceT | None:
    """None for '' (any), the option named `value`, else FilterError."""
    if not value:
        return None
    if value not in options:
        raise FilterError(N_("“%(label)s” must be one of the choices in the list."), label)
    return options[value]


def environment(query: QueryParams) -> Environment:
    """The environment a list shows: production unless `environment=test`."""
    found = choice(text(query, "environment", ENVIRONMENT), ENVIRONMENTS, ENVIRONMENT)
    return found or Environment.live


def moment(value: str, label: str) -> dt.datetime | None:
    """An instant: `YYYY-MM-DD` (midnight), `YYYY-MM-DDTHH:MM[:SS]` as a date-time field sends it, both in UTC, or
    ISO 8601 with an offset, between the years 1 and 9999 in UTC; None for ''."""
    if not value:
        return None
    if not (value[:4].isascii() and value[:4].isdigit()):
        raise FilterError(N_("“%(label)s” must be a date and time, such as 2026-11-01T09:30 (UTC)."), label)
    try:
        return parse_instant(value, naive_is_utc=True)
    except OutOfRange:
        raise FilterError(N_("“%(label)s” must lie between the years 1 and 9999 (UTC)."), label) from None
    except InstantError:
        raise FilterError(N_("“%(label)s” must be a date and time, such as 2026-11-01T09:30 (UTC)."), label) from None


def echoed(query: QueryParams, names: tuple[str, ...]) -> dict[str, str]:
    """The values of a refused query, to show again in its form (NUL removed, cut to a sane length)."""
    return {name: query.get(name, "").replace(NUL, "")[:MAX_QUERY_VALUE] for name in names}


def link(path: str, values: Mapping[str, str | list[str]]) -> str:
    """`path` with the non-empty `values` as its query string (lists repeat their name)."""
    pairs = [
        (name, item)
        for name, value in values.items()
        for item in (value if isinstance(value, list) else [value])
        if item
    ]
    return f"{path}?{urlencode(pairs)}" if pairs else path
