"""CSV cells a spreadsheet will not run as formulas (OWASP's CSV injection advice): a cell that starts with `=`, `+`,
`-`, `@`, a tab or a carriage return gets a leading `'`, which spreadsheets show as text and do not evaluate.

Hand-written: the rule is three lines, and no maintained library does only this."""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(text: str) -> str:
    return "'" + text if text.startswith(FORMULA_STARTS) else text
