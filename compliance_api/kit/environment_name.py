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

    @property
    def place(self) -> str:
        """The environment as a place in a sentence: "in production", "in the sandbox"."""
        return "production" if self is Environment.live else "the sandbox"
