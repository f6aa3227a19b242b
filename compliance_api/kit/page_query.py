"""The query parameters of a paged list, as endpoints declare them (FastAPI's; `pagination.py` stays free of the web
framework, so the services that page, and the CLI commands that use them, do not import it)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from compliance_api.kit.pagination import DEFAULT_LIMIT, MAX_LIMIT

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
