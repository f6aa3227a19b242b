"""Lists, one convention everywhere: `limit` (1–100, default 20) and an opaque `cursor`, newest first, answered as
`{"data": [...], "has_more": bool, "next_cursor": str | null}`.

Pages are keyset pages on `(created_at, id)`, so rows inserted meanwhile never shift or repeat a later page. A cursor
carries the last row's key, a short digest of each of the list's filters as the request gave them, and a MAC keyed with
the server secret over all of it and the list's scope (which list, whose, which environment): a cursor nobody but this
server could have made, or one made for another list, account or environment, is refused (`InvalidCursor`) rather
than silently paging something else; one of this list sent with other filters is refused naming each filter that
differs (`FiltersDiffer`). Hand-rolled: the pagination libraries for SQLAlchemy offer offsets or their own response
shapes, not this contract.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import enum
import hashlib
import hmac
import struct
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, Field
from sqlalchemy import Select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from compliance_api.kit.invalid import InvalidFields
from compliance_api.kit.registry import Slot, collaborator

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
ItemT = TypeVar("ItemT")
RowT = TypeVar("RowT")
PageT = TypeVar("PageT", bound="Page[Any]")


class InvalidCursor(ValueError):
    """A cursor this server did not seal, or sealed for another list, account or environment."""


class FiltersDiffer(ValueError):
    """A cursor of this list, sealed for other values of the filters `names`."""

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__(", ".join(names))
        self.names = tuple(names)


FilterValue = str | int | bool | dt.datetime | enum.Enum | Iterable[str] | None
ListFilters = Mapping[str, FilterValue]
"""A list's filters by the name a request gives them, each with the value it was given (None when left out)."""


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


CURSOR_VERSION = 2
_CURSOR = struct.Struct(">Bq16s")  # version, created_at in microseconds since 1970 (UTC), id; then the filter digests
FILTER_DIGEST_BYTES = 6
MAC_BYTES = 16
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
NOT_A_CURSOR = "not a cursor of this list: pass `next_cursor` of the previous page of the same list unchanged"
EARLIER_CURSOR = "a cursor of an earlier version of the API, which did not bind its filters: start from the first page"


def _filter_digests(filters: ListFilters) -> bytes:
    """Each filter's name and value, digested in the order of their names: enough to tell which filter changed
    without making the cursor grow with the values (a `reference` may be 200 characters)."""
    return b"".join(
        hashlib.sha256(f"{name}\x00{_canonical(filters[name])}".encode()).digest()[:FILTER_DIGEST_BYTES]
        for name in sorted(filters)
    )


def _canonical(value: FilterValue) -> str:
    """One spelling per value: absent differs from empty, instants compare in UTC, a set of types in any order."""
    if value is None:
        return "\x00"
    if isinstance(value, enum.Enum):
        return f"={value.value}"
    if isinstance(value, dt.datetime):
        return f"={value.astimezone(dt.UTC).isoformat()}"
    if isinstance(value, bool | int | str):
        return f"={value}"
    return "=" + "\x1f".join(sorted(value))


@dataclass(frozen=True, slots=True)
class Cursors:
    """Seals page keys into opaque, URL-safe cursors and opens them again, under keys derived from the server
    secrets (the current one first: during a rotation a cursor sealed under the previous secret still opens)."""

    keys: tuple[bytes, ...]

    @classmethod
    def from_secrets(cls, secrets: Sequence[bytes]) -> Cursors:
        return cls(tuple(hmac.new(secret, b"compliance-api cursor", hashlib.sha256).digest() for secret in secrets))

    def seal(self, key: Key, scope: str, filters: ListFilters | None = None) -> str:
        micros = (key.created_at - EPOCH) // dt.timedelta(microseconds=1)
        body = _CURSOR.pack(CURSOR_VERSION, micros, key.id.bytes) + _filter_digests(filters or {})
        return base64.urlsafe_b64encode(body + _mac(self.keys[0], body, scope)).decode().rstrip("=")

    def open(self, cursor: str, scope: str, filters: ListFilters | None = None) -> Key:
        """The key sealed in `cursor` for `scope` and `filters`: InvalidCursor when it was not sealed here for this
        scope, FiltersDiffer when it was, for other values of some filters."""
        filters = filters or {}
        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        except (binascii.Error, ValueError):
            raise InvalidCursor(NOT_A_CURSOR) from None
        body, mac = raw[:-MAC_BYTES], raw[-MAC_BYTES:]
        if len(raw) < _CURSOR.size + MAC_BYTES or not any(
            hmac.compare_digest(mac, _mac(key, body, scope)) for key in self.keys
        ):
            raise InvalidCursor(NOT_A_CURSOR)
        version, micros, id_bytes = _CURSOR.unpack(body[: _CURSOR.size])
        if version != CURSOR_VERSION:
            raise InvalidCursor(EARLIER_CURSOR)
        sealed, given = body[_CURSOR.size :], _filter_digests(filters)
        if len(sealed) != len(given):
            raise InvalidCursor(NOT_A_CURSOR)
        differing = [
            name
            for index, name in enumerate(sorted(filters))
            if sealed[index * FILTER_DIGEST_BYTES : (index + 1) * FILTER_DIGEST_BYTES]
            != given[index * FILTER_DIGEST_BYTES : (index + 1) * FILTER_DIGEST_BYTES]
        ]
        if differing:
            raise FiltersDiffer(differing)
        return Key(EPOCH + dt.timedelta(microseconds=micros), uuid.UUID(bytes=id_bytes))


CURSORS = Slot[Cursors]("cursors")


def cursors_of(connection: HTTPConnection) -> Cursors:
    """The app's cursors, sealed under the server secret."""
    return collaborator(connection, CURSORS)


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


def cursor_page(schema: type[PageT], paged: Paged[RowT], view: Callable[[RowT], Any]) -> PageT:
    """The API's page (`schema`, a `Page`) of `paged`'s rows, each shaped by `view`, with the next page's cursor."""
    return schema(data=[view(row) for row in paged.rows], has_more=paged.has_more, next_cursor=paged.next_cursor)


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
    filters: ListFilters | None = None,
) -> Paged[RowT]:
    """The page of `statement` after `cursor`: a 400 naming `query.cursor` when it is not one of `scope`'s, or
    naming each filter whose value differs from the one the cursor was issued with."""
    after = None if cursor is None else open_cursor(cursors, cursor, scope, filters, field_prefix="query.")
    rows, has_more = await keyset_page(session, statement, created_at, id, limit=limit, after=after)
    next_cursor = cursors.seal(key_of(rows[-1]), scope, filters) if has_more and rows else None
    return Paged(rows, has_more, next_cursor)


def open_cursor(
    cursors: Cursors,
    cursor: str,
    scope: str,
    filters: ListFilters | None,
    *,
    field_prefix: str,
    not_ours: str = NOT_A_CURSOR,
) -> Key:
    """`cursors.open`, its refusals as `InvalidFields` (a 400 `validation_failed`): `not_ours` naming the cursor, or
    one error per filter that differs from the cursor's (the fields named `field_prefix` + the filter's name)."""
    try:
        return cursors.open(cursor, scope, filters)
    except InvalidCursor as exc:
        message = not_ours if str(exc) == NOT_A_CURSOR else str(exc)
        raise InvalidFields([(f"{field_prefix}cursor", message)]) from None
    except FiltersDiffer as exc:
        raise InvalidFields([(f"{field_prefix}{name}", _differs_message(name)) for name in exc.names]) from None


def _differs_message(name: str) -> str:
    return (
        f"`{name}` differs from the `{name}` the cursor was issued with: a cursor pages only the filters that issued "
        "it; send the same filters with it, or leave `cursor` out to start from the first page"
    )
