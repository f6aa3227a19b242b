"""Production and sandbox: which one a request belongs to, and the query helper that keeps them apart."""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute, Mapped, declared_attr, mapped_column

from compliance_api.db import str_enum
from compliance_api.kit.environment_name import Environment

__all__ = [
    "HOST",
    "MAX_PORT",
    "Elsewhere",
    "Environment",
    "EnvironmentOwned",
    "InvalidHost",
    "environment_for_host",
    "owned_elsewhere",
    "scoped",
]


class EnvironmentOwned:
    """Mixin for every table whose rows belong to one environment."""

    @declared_attr
    def environment(cls) -> Mapped[Environment]:
        return mapped_column(str_enum(Environment, "environment"), index=True)

    @property
    def livemode(self) -> bool:
        """Whether the row is production's: what the objects made from it answer as `livemode`."""
        return self.environment is Environment.live


SelectT = TypeVar("SelectT", bound=Select[*tuple[Any, ...]])  # any number of columns


def scoped(statement: SelectT, model: type[EnvironmentOwned], environment: Environment) -> SelectT:
    """Restrict a SELECT to rows of one environment; every read of environment-owned rows goes through here."""
    return statement.where(model.environment == environment)


Elsewhere = Callable[[AsyncSession, uuid.UUID, uuid.UUID, Environment], Awaitable[Environment | None]]
"""The environment other than the caller's in which an id is the caller's own (session, id, user, here)."""


def owned_elsewhere(
    model: type[EnvironmentOwned], key: InstrumentedAttribute[uuid.UUID], owner: InstrumentedAttribute[uuid.UUID | None]
) -> Elsewhere:
    """Where else a row of `model` is the user's: the environment of the row whose `key` is the id and whose `owner`
    is the user, when it is not the caller's own (one indexed read)."""

    async def elsewhere(
        session: AsyncSession, key_value: uuid.UUID, user_id: uuid.UUID, environment: Environment
    ) -> Environment | None:
        return await session.scalar(
            select(model.environment).where(key == key_value, owner == user_id, model.environment != environment)
        )

    return elsewhere


# RFC 9110 §7.2 / RFC 3986 §3.2.2: an IP literal in brackets or a reg-name (unreserved, pct-encoded and sub-delims
# characters), then an optional port of digits. A regular expression because no library in use parses a bare Host.
HOST = re.compile(r"(?P<name>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~%!$&'()*+,;=]*)(?::(?P<port>[0-9]{0,5}))?")
MAX_PORT = 65535


class InvalidHost(ValueError):
    """A Host header that is not `host[:port]` (bad characters, or a port that is not a number up to 65535)."""


def environment_for_host(host: str, sandbox_hosts: tuple[str, ...]) -> Environment:
    """The Host header decides: listed sandbox hosts are the sandbox, every other valid host is production; an
    invalid one raises InvalidHost and decides nothing."""
    parsed = HOST.fullmatch(host.strip())
    if parsed is None or (parsed["port"] and int(parsed["port"]) > MAX_PORT):
        raise InvalidHost(host)
    name = parsed["name"].lower()
    return Environment.test if name.rstrip(".") in sandbox_hosts else Environment.live
