"""The languages verdicts are written in, and the choice of one from a request's `Accept-Language`."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from enum import IntEnum
from functools import lru_cache
from typing import Literal

from babel.dates import format_date
from babel.numbers import format_currency, format_decimal


class Language(IntEnum):
    """A language of the verdict texts; its value is the position of that language in every translated text."""

    en = 0
    nl = 1
    fr = 2
    de = 3

    @property
    def code(self) -> str:
        return self.name


LanguageCode = Literal["en", "nl", "fr", "de"]
"""A `Language` as sent in `Content-Language` and stored with each classification."""
DEFAULT_LANGUAGE = Language.en
CODES = {language.code: language for language in Language}
VARY = "Accept-Language"
"""The `Vary` value of a localised answer: caches must key it on the request's Accept-Language."""

# One Accept-Language element: a language range (RFC 9110 §12.5.4, RFC 4647 §2.1) and an optional weight.
_ELEMENT = re.compile(
    r"^\s*(?P<range>\*|[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)\s*"
    r"(?:;\s*[qQ]\s*=\s*(?P<q>0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?))?\s*$"
)


# Hand-rolled: no small, well-kept parser exists (langcodes and babel are large, werkzeug's LanguageAccept brings a
# web framework, and none of them picks from four fixed languages by RFC 4647 lookup). These are the RFC's rules.
@lru_cache(maxsize=512)
def negotiate(header: str | None) -> Language:
    """The language to answer in: the most wanted one we write, by q-value (ties: the order given).

    A range with a region or script (`nl-BE`) asks for its primary language (RFC 4647 §3.4 lookup); `*` takes the
    first of ours not refused; `q=0` refuses that range. No header, a malformed element, or nothing we write: English.
    """
    if not header:
        return DEFAULT_LANGUAGE
    wanted: list[tuple[float, int, str]] = []
    refused: set[str] = set()
    for position, element in enumerate(header.split(",")):
        match = _ELEMENT.match(element)
        if match is None:
            continue
        language_range = match["range"].lower()
        weight = float(match["q"]) if match["q"] else 1.0
        if weight == 0:
            refused.add(language_range)
        else:
            wanted.append((-weight, position, language_range))
    for _, _, language_range in sorted(wanted):
        chosen = _match(language_range, refused)
        if chosen is not None:
            return chosen
    return DEFAULT_LANGUAGE


def _match(language_range: str, refused: set[str]) -> Language | None:
    if language_range == "*":
        return next((language for language in Language if language.code not in refused), None)
    primary = language_range.split("-", 1)[0]
    language = CODES.get(primary)
    return None if language is None or primary in refused else language


_LOCALES = ("en_GB", "nl_NL", "fr_FR", "de_DE")
"""The locale whose conventions each `Language` writes numbers and dates in."""


@lru_cache(maxsize=4096)  # Babel formats in microseconds; the amounts and dates written are few
def decimal(amount: Decimal, language: Language) -> str:
    """An amount with two decimals as written in `language` (Babel's locale data): `2,111.89` in English,
    `2.111,89` in Dutch and German, `2\u202f111,89` in French."""
    return format_decimal(amount, format="#,##0.00", locale=_LOCALES[language])


@lru_cache(maxsize=4096)  # Babel formats in microseconds; the amounts and dates written are few
def money(amount: Decimal, language: Language) -> str:
    """An amount in euros as written in `language`: `€38.00`, `€ 38,00`, `38,00 €`."""
    return format_currency(amount, "EUR", locale=_LOCALES[language])


@lru_cache(maxsize=4096)  # Babel formats in microseconds; the amounts and dates written are few
def day(value: dt.date, language: Language) -> str:
    """A date as written in running text in `language`: `1 January 2026`, `1 januari 2026`, `1 janvier 2026`,
    `1. Januar 2026`."""
    return format_date(value, format="long", locale=_LOCALES[language])
