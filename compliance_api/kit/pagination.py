"""Lists, one convention everywhere: `limit` (1–100, default 20) and an opaque `cursor`, newest first, answered as
`{"data": [...], "has_more": bool, "next_cursor": str | null}`.

Pages are keyset pages on `(created_at, id)`, so rows inserted meanwhile never shift or repeat a later page. A cursor
carries the last row's key and a fingerprint of the list and caller it came from: a cursor from another list,
account or environment is refused (`InvalidCursor`) rather than silently paging something else. Hand-rolled: the
pagination libraries for SQLAlchemy offer offsets or their own response shapes, not this contract.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import hashlib
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Generic, Protocol, TypeVar

import orjson
from fastapi import Query
from pydantic import BaseModel, Field
from sqlalchemy import Select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from compliance_api.errors import ApiError, FieldError

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
ItemT = TypeVar("ItemT")
RowT = TypeVar("RowT")

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


class InvalidCursor(ValueError):
    """A cursor that is not one of ours, or that belongs to another list, account or environment."""


class Page(BaseModel, Generic[ItemT]):
    data: list[ItemT]
    has_more: bool = Field(description="Whether older items follow.")
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last page.")


@dataclass(frozen=True, slots=True)
class Key:
    """Where a page ends: the last item's creation time and id."""

    created_at: dt.datetime
    id: uuid.UUID


class Keyed(Protocol):
    """A row that pages by its creation time and id."""

    @property
    def created_at(self) -> dt.datetime: ...

    @property
    def id(self) -> uuid.UUID: ...


def created_key(row: Keyed) -> Key:
    return Key(row.created_at, row.id)


def _fingerprint(scope: str) -> str:
    return hashlib.sha256(scope.encode()).hexdigest()[:16]


def encode_cursor(key: Key, scope: str) -> str:
    raw = orjson.dumps({"t": key.created_at.isoformat(), "i": str(key.id), "s": _fingerprint(scope)})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, scope: str) -> Key:
    """The key in `cursor`; raises InvalidCursor when it is malformed or was issued for another scope."""
    try:
        decoded: Any = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        key = Key(dt.datetime.fromisoformat(decoded["t"]), uuid.UUID(decoded["i"]))
        fingerprint = decoded["s"]
    except (binascii.Error, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        raise InvalidCursor("not a cursor of this API: pass `next_cursor` of the previous page unchanged") from None
    if fingerprint != _fingerprint(scope) or key.created_at.tzinfo is None:
        raise InvalidCursor("this cursor belongs to another list, account or environment") from None
    return key


async def keyset_page(
    session: AsyncSession,
    statement: Select[RowT],
    created_at: InstrumentedAttribute[dt.datetime],
    id: InstrumentedAttribute[uuid.UUID],
    *,
    limit: int,
    after: Key | None,
) -> tuple[Sequence[RowT], bool]:
    """One page of `statement`'s rows, newest first, after `after`; and whether more follow."""
    if after is not None:
        statement = statement.where(tuple_(created_at, id) < tuple_(after.created_at, after.id))
    rows = (await session.scalars(statement.order_by(created_at.desc(), id.desc()).limit(limit + 1))).all()
    return rows[:limit], len(rows) > limit


@dataclass(frozen=True, slots=True)
class Paged(Generic[RowT]):
    """One page of rows, whether older ones follow, and the cursor that fetches them."""

    rows: Sequence[RowT]
    has_more: bool
    next_cursor: str | None


async def paginate(
    session: AsyncSession,
    statement: Select[RowT],
    created_at: InstrumentedAttribute[dt.datetime],
    id: InstrumentedAttribute[uuid.UUID],
    *,
    limit: int,
    cursor: str | None,
    scope: str,
    key_of: Callable[[RowT], Key],
) -> Paged[RowT]:
    """The page of `statement` after `cursor` (a 400 naming `query.cursor` when it is not one of `scope`'s)."""
    try:
        after = None if cursor is None else decode_cursor(cursor, scope)
    except InvalidCursor as exc:
        raise ApiError("validation_failed", str(exc), errors=[FieldError("query.cursor", str(exc))]) from None
    rows, has_more = await keyset_page(session, statement, created_at, id, limit=limit, after=after)
    next_cursor = encode_cursor(key_of(rows[-1]), scope) if has_more and rows else None
    return Paged(rows, has_more, next_cursor)
