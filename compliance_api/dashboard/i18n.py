"""The dashboard in Dutch, English, French and German: gettext catalogues read with Babel, the language of a request,
and the translating callables the templates and pages use.

The message ids are the English texts; `locales/<language>/LC_MESSAGES/messages.po` holds the Dutch, French and
German ones (`make messages` extracts the ids from the templates and pages and updates the catalogues). They are
compiled in memory with Babel the first time a language is used, not into `.mo` files at install time: `make install`
is an editable install, which has no build step that could compile them, and a compiled file beside its source could
go stale unnoticed. A catalogue compiles in under a tenth of a second, once per process and language.
"""

from __future__ import annotations

import datetime as dt
import functools
import gettext as gettext_module
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from io import BytesIO
from pathlib import Path

from babel import Locale
from babel.dates import format_skeleton
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_currency, format_decimal
from babel.support import Translations
from jinja2 import Environment, FileSystemLoader, pass_context, select_autoescape
from jinja2.runtime import Context

from compliance_api.classify.language import CODES, Language, negotiate

LOCALES_DIR = Path(__file__).parent / "locales"
DOMAIN = "messages"
LANGUAGE_COOKIE = "dashboard_language"
SOURCE_LANGUAGE = Language.en
TRANSLATED = (Language.nl, Language.fr, Language.de)
"""The languages with a catalogue; English is the language of the message ids."""
SWITCH = (Language.nl, Language.en, Language.fr, Language.de)
"""The languages of the switch in the page header, each named in itself."""
NATIVE_NAMES = {Language.nl: "Nederlands", Language.en: "English", Language.fr: "Français", Language.de: "Deutsch"}


def N_(message: str) -> str:
    """Mark a text for the catalogues where it is defined; it is translated where it is shown."""
    return message


@dataclass(frozen=True, slots=True)
class Text:
    """A text translated where it is shown, in the reader's language: a message id and its `%(name)s` variables
    (a `Text` variable is translated as well; others are shown as they are)."""

    msgid: str
    variables: Mapping[str, object] = field(default_factory=dict)


def text(msgid: str, **variables: object) -> Text:
    return Text(msgid, variables)


def catalogue_path(language: Language) -> Path:
    return LOCALES_DIR / language.code / "LC_MESSAGES" / f"{DOMAIN}.po"


@functools.cache
def translations(language: Language) -> gettext_module.NullTranslations:
    """The compiled catalogue of `language` (English: the message ids themselves). Fuzzy entries are not used."""
    if language is SOURCE_LANGUAGE:
        return gettext_module.NullTranslations()
    with catalogue_path(language).open("rb") as po:
        catalog = read_po(po, locale=language.code, domain=DOMAIN)
    compiled = BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    return Translations(compiled, domain=DOMAIN)


@dataclass(frozen=True, slots=True)
class Translator:
    """The texts of one language; a message with variables is always `%`-formatted (a literal % is written %%)."""

    language: Language

    @property
    def code(self) -> str:
        return self.language.code

    @property
    def locale(self) -> Locale:
        return _locale(self.language)

    def gettext(self, message: str, **variables: object) -> str:
        return translations(self.language).gettext(message) % variables

    def ngettext(self, singular: str, plural: str, n: int, **variables: object) -> str:
        return translations(self.language).ngettext(singular, plural, n) % {"num": n, **variables}

    def text(self, shown: Text | str) -> str:
        """A `Text` in this language; a `str` is a marked message id without variables, translated as it is (no
        `%`-formatting: such ids are words from data, such as a status or a sector name)."""
        if isinstance(shown, str):
            return translations(self.language).gettext(shown)
        variables = {
            name: self.text(value) if isinstance(value, Text) else value for name, value in shown.variables.items()
        }
        return self.gettext(shown.msgid, **variables)

    def number(self, value: int | float | Decimal, decimals: int | None = None, *, grouped: bool = True) -> str:
        """A number with this language's separators (`decimals` fixes the digits after the decimal sign; `grouped`
        False leaves out the thousands separator, as in a form field)."""
        if decimals is None and grouped:
            return format_decimal(value, locale=self.locale)
        digits = "." + "0" * decimals if decimals else ""
        return format_decimal(value, format=("#,##0" if grouped else "0") + digits, locale=self.locale)

    def euros(self, amount: float | Decimal) -> str:
        """An amount in euros, as this language writes it (€85.00, € 85,00, 85,00 €)."""
        return format_currency(amount, "EUR", locale=self.locale)

    def day(self, value: dt.date) -> str:
        """A short day label for charts, as the language writes it: Mar 7, 7 mrt, 7 mars, 7. März."""
        return format_skeleton("dMMM", value, locale=self.locale)


def sentence(words: str) -> str:
    """The text with its first letter capitalised, the rest as it is (`capitalize` would lower "API" and "DAC7");
    escaped markup stays markup."""
    return words[:1].upper() + words[1:]


def english(shown: Text) -> str:
    """A `Text` in English, for logs and the command line."""
    return Translator(SOURCE_LANGUAGE).text(shown)


@functools.cache
def _locale(language: Language) -> Locale:
    return Locale.parse(language.code)


def chosen_language(cookie: str | None, accept_language: str | None) -> Language:
    """The language chosen with the switch (its cookie), else the browser's most wanted one we write, else English."""
    if cookie is not None and cookie in CODES:
        return CODES[cookie]
    return negotiate(accept_language)


def _translator(context: Context) -> Translator:
    translator: Translator = context["translator"]
    return translator


@pass_context
def _gettext(context: Context, message: str) -> str:
    return translations(_translator(context).language).gettext(message)


@pass_context
def _ngettext(context: Context, singular: str, plural: str, n: int) -> str:
    return translations(_translator(context).language).ngettext(singular, plural, n)


@pass_context
def _number(context: Context, value: int | float | Decimal, decimals: int | None = None) -> str:
    return _translator(context).number(value, decimals)


@pass_context
def _euros(context: Context, amount: float | Decimal) -> str:
    return _translator(context).euros(amount)


@pass_context
def _translated(context: Context, shown: Text | str) -> str:
    return _translator(context).text(shown)


def template_environment(directory: Path) -> Environment:
    """Templates with `{% trans %}` (whitespace trimmed), `_()` and the `number`, `euros` and `translated` filters,
    all in the language of the `translator` in the render context (so templates import macros `with context`)."""
    environment = Environment(
        loader=FileSystemLoader(directory), autoescape=select_autoescape(), extensions=["jinja2.ext.i18n"]
    )
    environment.policies["ext.i18n.trimmed"] = True
    environment.install_gettext_callables(_gettext, _ngettext, newstyle=True)  # type: ignore[attr-defined]
    environment.filters.update(number=_number, euros=_euros, translated=_translated, sentence=sentence)
    return environment
