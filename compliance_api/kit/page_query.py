"""The query parameters of a paged list, as endpoints declare them (FastAPI's; `pagination.py` stays free of the web
framework, so the services that page, and the CLI commands that use them, do not import it): `PageQuery` gives a list
endpoint its `limit`, its `cursor` and the app's cursors at once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Query, Request

from compliance_api.kit.pagination import DEFAULT_LIMIT, MAX_LIMIT, Cursors, cursors_of

Limit = Annotated[
    int,
    Query(
        ge=1,
        le=MAX_LIMIT,
        description=f"How many items per page (1–{MAX_LIMIT}; default {DEFAULT_LIMIT}).",
        examples=[DEFAULT_LIMIT],
    ),
]
Cursor = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=200,
        description="`next_cursor` of the previous page; leave it out for the first (newest) page.",
        examples=["eyJ0IjoiMjAyNi0xMS0yNVQwNjowMDowMCswMDowMCJ9"],
    ),
]


@dataclass(frozen=True, slots=True)
class Paging:
    """Which page a list request asks for, and the cursors that open and seal its keys."""

    limit: int
    cursor: str | None
    cursors: Cursors


async def _paging(request: Request, limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> Paging:
    return Paging(limit, cursor, cursors_of(request))


PageQuery = Annotated[Paging, Depends(_paging)]
"""A list endpoint's `limit` and `cursor` query parameters (declared last), with the app's cursors."""
