"""Input a domain-free helper refuses (a list's cursor, a query string), field by field.

`errors.py` answers it as a 400 `validation_failed` problem naming each field, so the helpers under `kit/` refuse
input without importing the API's error catalogue (which imports `kit/`).
"""

from __future__ import annotations

from collections.abc import Sequence


class InvalidFields(ValueError):
    """Refused input: each field as the problem names it (`query.cursor`) with what is wrong with it, in order."""

    def __init__(self, fields: Sequence[tuple[str, str]]) -> None:
        super().__init__("; ".join(message for _, message in fields))
        self.fields = tuple(fields)
