"""The name of an environment, on its own: the commands' `--env` option needs it without the database layer that
`kit.environment` brings."""

from __future__ import annotations

from enum import StrEnum


class Environment(StrEnum):
    live = "live"
    test = "test"

    @property
    def label(self) -> str:
        return "production" if self is Environment.live else "sandbox"
