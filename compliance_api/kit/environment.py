"""Production and sandbox: which one a request belongs to, and the query helper that keeps them apart."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, TypeVar

from sqlalchemy import Select
from sqlalchemy.orm import Mapped, declared_attr, mapped_column

from compliance_api.db import str_enum


class Environment(StrEnum):
    live = "live"
    test = "test"

    @property
    def label(self) -> str:
        return "production" if self is Environment.live else "sandbox"


class EnvironmentOwned:
    """Mixin for every table whose rows belong to one environment."""

    @declared_attr
    def environment(cls) -> Mapped[Environment]:
        return mapped_column(str_enum(Environment, "environment"), index=True)


SelectT = TypeVar("SelectT", bound=Select[*tuple[Any, ...]])  # any number of columns


def scoped(statement: SelectT, model: type[EnvironmentOwned], environment: Environment) -> SelectT:
    """Restrict a SELECT to rows of one environment; every read of environment-owned rows goes through here."""
    return statement.where(model.environment == environment)


def environment_for_host(host: str, sandbox_hosts: tuple[str, ...]) -> Environment:
    """The Host header decides: listed sandbox hosts are the sandbox, every other host is production."""
    name = host.strip().lower()
    if name.startswith("["):
        name = name.split("]", 1)[0] + "]"
    elif name.count(":") == 1:
        name = name.rsplit(":", 1)[0]
    return Environment.test if name.rstrip(".") in sandbox_hosts else Environment.live
