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

WORDS: dict[Verdict, tuple[str, str, str, str]] = {
    Verdict.safe: ("safe", "veilig", "sûr", "unbedenklich"),
    Verdict.risky: ("risky", "risicovol", "risqué", "riskant"),
    Verdict.unsafe: ("unsafe", "onveilig", "non sûr", "kritisch"),
}
"""Each verdict's one word per language (en, nl, fr, de: the order of `Language`), the same in the API's prose, on
the dashboard (its catalogues are tested against these) and in the dossier."""


def word(verdict: Verdict, language: int) -> str:
    """`verdict` as a reader of `language` (a `Language`) reads it."""
    return WORDS[verdict][language]


def worst(*verdicts: Verdict) -> Verdict:
    """The least safe of the verdicts (combining rules this way keeps scoring monotonic)."""
    return max(verdicts, key=lambda verdict: verdict.rank)


class Country(StrEnum):
    FR = "FR"
    DE = "DE"
    BE = "BE"
