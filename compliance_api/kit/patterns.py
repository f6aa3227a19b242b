"""Regular expressions for request fields, each with the words a validation message says instead of the regex."""

from __future__ import annotations

PATTERN_WORDS: dict[str, str] = {}


def described(regex: str, words: str) -> str:
    """Register how `regex` is said in words (a validation message never shows a regex) and return it."""
    PATTERN_WORDS[regex] = words
    return regex


def pattern_message(regex: str) -> str:
    """The validation message for a value that does not match `regex`."""
    words = PATTERN_WORDS.get(regex)
    return f"must be {words}" if words else "has the wrong format"


UUID_PATTERN = described(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    "a UUID such as 0b7f3a52-8c1e-4d2a-9f6b-2e4c8a1d5f90",
)
