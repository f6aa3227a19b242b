"""Verdicts, ordered from safe to unsafe."""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    safe = "safe"
    risky = "risky"
    unsafe = "unsafe"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Verdict.safe: 0, Verdict.risky: 1, Verdict.unsafe: 2}


def worst(*verdicts: Verdict) -> Verdict:
    """The least safe of the verdicts (combining rules this way keeps scoring monotonic)."""
    return max(verdicts, key=lambda verdict: verdict.rank)


class Country(StrEnum):
    FR = "FR"
    DE = "DE"
    BE = "BE"
