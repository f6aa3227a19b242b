"""Lists, one convention everywhere: `limit` (1–100, default 20) and an opaque `cursor`, newest first, answered as
`{"data": [...], "has_more": bool, "next_cursor": str | null}`.

Pages are keyset pages on `(created_at, id)`, so rows inserted meanwhile never shift or repeat a later page. A cursor
carries the last row's key and a MAC keyed with the server secret over that key and the list's scope (which list,
whose, which environment and filters): a cursor nobody but this server could have made, or one made for another list,
account or environment, is refused (`InvalidCursor`) rather than silently paging something else. Hand-rolled: the
pagination libraries for SQLAlchemy offer offsets or their own response shapes, not this contract.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import hashlib
import hmac
import struct
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Generic, Protocol, TypeVar

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
    """A cursor this server did not seal, or sealed for another list, account or environment."""


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


CURSOR_VERSION = 1
_CURSOR = struct.Struct(">Bq16s")  # version, created_at in microseconds since 1970 (UTC), id
MAC_BYTES = 16
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
NOT_A_CURSOR = "not a cursor of this list: pass `next_cursor` of the previous page of the same list unchanged"


@dataclass(frozen=True, slots=True)
class Cursors:
    """Seals page keys into opaque, URL-safe cursors and opens them again, under keys derived from the server
    secrets (the current one first: during a rotation a cursor sealed under the previous secret still opens)."""

    keys: tuple[bytes, ...]

    @classmethod
    def from_secrets(cls, secrets: Sequence[bytes]) -> Cursors:
        return cls(tuple(hmac.new(secret, b"compliance-api cursor", hashlib.sha256).digest() for secret in secrets))

    def seal(self, key: Key, scope: str) -> str:
        micros = (key.created_at - EPOCH) // dt.timedelta(microseconds=1)
        body = _CURSOR.pack(CURSOR_VERSION, micros, key.id.bytes)
        return base64.urlsafe_b64encode(body + _mac(self.keys[0], body, scope)).decode().rstrip("=")

    def open(self, cursor: str, scope: str) -> Key:
        """The key sealed in `cursor` for `scope`; InvalidCursor when it was not sealed here for this scope."""
        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        except (binascii.Error, ValueError):
            raise InvalidCursor(NOT_A_CURSOR) from None
        body, mac = raw[: _CURSOR.size], raw[_CURSOR.size :]
        if len(raw) != _CURSOR.size + MAC_BYTES or not any(
            hmac.compare_digest(mac, _mac(key, body, scope)) for key in self.keys
        ):
            raise InvalidCursor(NOT_A_CURSOR)
        version, micros, id_bytes = _CURSOR.unpack(body)
        if version != CURSOR_VERSION:
            raise InvalidCursor(NOT_A_CURSOR)
        return Key(EPOCH + dt.timedelta(microseconds=micros), uuid.UUID(bytes=id_bytes))


def _mac(key: bytes, body: bytes, scope: str) -> bytes:
    return hmac.new(key, scope.encode() + b"\x00" + body, hashlib.sha256).digest()[:MAC_BYTES]


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
    cursors: Cursors,
    scope: str,
    key_of: Callable[[RowT], Key],
) -> Paged[RowT]:
    """The page of `statement` after `cursor` (a 400 naming `query.cursor` when it is not one of `scope`'s)."""
    try:
        after = None if cursor is None else cursors.open(cursor, scope)
    except InvalidCursor as exc:
        raise ApiError("validation_failed", str(exc), errors=[FieldError("query.cursor", str(exc))]) from None
    rows, has_more = await keyset_page(session, statement, created_at, id, limit=limit, after=after)
    next_cursor = cursors.seal(key_of(rows[-1]), scope) if has_more and rows else None
    return Paged(rows, has_more, next_cursor)
