"""The words guard: what a person reads must be written for them, in their language, citing official texts.

`faults(text, language)` lists what is wrong with one human-facing text:
- a work note meant for us ("VERIFY", "not checkable", "the searches made");
- a request field name, criterion id or enum code in prose (any snake_case word; a verdict code in a text that is
  not English);
- English prose in a text of another language, as lingua (a detector made for short and mixed texts) reads each
  sentence of it.
`citation_faults` holds a legal basis to the same rules, except that a citation may be in the language of the law it
cites (an official title stays in its own language) but never English prose; `url_faults` wants an official
publisher and an address that names the specific text.

Exceptions are listed string by string in `REVIEWED`, each with the reason a reviewer accepted it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from urllib.parse import urlsplit

from lingua import Language as Detected
from lingua import LanguageDetector, LanguageDetectorBuilder

from compliance_api.classify.language import Language
from compliance_api.classify.verdict import Verdict

WORK_NOTES = re.compile(r"\b(?:VERIFY|TODO|FIXME|XXX)\b|(?i:not checkable|searches made|sources found)")
CODE = re.compile(r"(?<![\w/.:-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w/])")
"""A snake_case word: how every request field, criterion id and enum code of the API is spelt, and no prose is."""
VERDICT_CODE = re.compile(r"\b(?:" + "|".join(verdict.value for verdict in Verdict) + r")\b")
SENTENCE = re.compile(r"(?<=[.!?;:])\s+")
MIN_WORDS = 4
"""Shorter pieces are not read by the detector: a word or two is no sentence to tell the language of."""
NOT_PROSE = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
"""Ids (a dossier's, a verdict's): in no language, and a random id's hex letters swayed the detector one run in
many."""
ENGLISH_OVER = 0.5
"""A piece of a text in another language fails when lingua gives English more than this confidence."""

DETECTED = {Language.en: Detected.ENGLISH, Language.nl: Detected.DUTCH, Language.fr: Detected.FRENCH}
DETECTED[Language.de] = Detected.GERMAN

REVIEWED: dict[str, str] = {
    # text (exactly as shown) -> why a reviewer accepted it
}
"""Texts that read as English to the detector but are right where they stand, each reviewed: none so far."""

OFFICIAL = {
    "uitspraken.rechtspraak.nl": r"/details\?id=ECLI:NL:[A-Z]+:\d{4}:[A-Z0-9]+",
    "wetten.overheid.nl": r"/(?:BWBR\d{7}|jci1\.3:c:BWBR\d{7}&.*artikel=\w+)",
    "zoek.officielebekendmakingen.nl": r"/(?:kst|stb|stcrt|trb)-[\w-]+(?:\.html)?",
    "www.tweedekamer.nl": r"/kamerstukken/.*(?:id=|did=)\w+",
    "www.eerstekamer.nl": r"/(?:wetsvoorstel|behandeling|kamerstuk)/\w+",
    "www.legifrance.gouv.fr": r"/(?:codes/article_lc/LEGIARTI\d+|juri/id/JURITEXT\d+|jorf/id/JORFTEXT\d+|loda/id/\w+)",
    "www.courdecassation.fr": r"/decision/[0-9a-f]{24}",
    "www.gesetze-im-internet.de": r"/\w+/__\w+\.html",
    "www.sozialgerichtsbarkeit.de": r"/node/\d+",
    "www.bsg.bund.de": r"/SharedDocs/Entscheidungen/DE/\d{4}/\w+\.html",
    "www.bundessozialgericht.de": r"/SharedDocs/Entscheidungen/DE/\d{4}/\w+\.html",
    "www.bundesarbeitsgericht.de": r"/entscheidung/[\w-]+/?",
    "www.rechtsprechung-im-internet.de": r"/jportal/.*doc\.id=\w+.*",
    "www.ejustice.just.fgov.be": r"/(?:eli/\w+/\d{4}/\d{2}/\d{2}/\d+/\w+|cgi_loi/.*cn=\d+.*)",
    "juportal.be": r"/content/ECLI:BE:[A-Z]+:\d{4}:[\w.]+",
    "eur-lex.europa.eu": r"/(?:eli/\w+/\d{4}/\d+/oj|legal-content/\w+/TXT/.*uri=CELEX:\w+)",
    "curia.europa.eu": r"/juris/(?:document|liste)\.jsf\?.*(?:docid|num)=\w+.*",
}
"""The official publishers, each with the address of one specific text (a judgment's ECLI or number, a statute's
article or ELI, a parliamentary paper): a publisher's home page or search page is no source."""


@cache
def detector() -> LanguageDetector:
    return LanguageDetectorBuilder.from_languages(*DETECTED.values()).with_preloaded_language_models().build()


def english_confidence(piece: str) -> float:
    return detector().compute_language_confidence(piece, Detected.ENGLISH)


def pieces(text: str) -> Iterator[str]:
    """The sentences (or clauses) of a text long enough to tell its language."""
    for sentence in SENTENCE.split(text):
        piece = " ".join(NOT_PROSE.sub(" ", sentence).split())
        if len(re.findall(r"[^\W\d_]{2,}", piece)) >= MIN_WORDS:
            yield piece


def _common(text: str, language: Language) -> list[str]:
    found = [f"work note: {match[0]!r}" for match in WORK_NOTES.finditer(text)]
    found += [f"code in prose: {match[0]!r}" for match in CODE.finditer(text)]
    if language is not Language.en:
        found += [f"verdict code in {language.code} prose: {match[0]!r}" for match in VERDICT_CODE.finditer(text)]
    return found


PLACEHOLDER = re.compile(r"\{\w+\}|<code>.*?</code>")
"""A template's `{name}`, filled in before anyone reads it, and code a page marks as code (a header, a token)."""


def faults(text: str, language: Language) -> list[str]:
    """What is wrong with a text a person reads in `language` (empty: nothing); a template is read without its
    placeholders, a page without what it marks as code."""
    text = PLACEHOLDER.sub("", text)
    found = _common(text, language)
    if language is not Language.en and text not in REVIEWED:
        found += [
            f"English in {language.code}: {piece!r}"
            for piece in pieces(text)
            if english_confidence(piece) > ENGLISH_OVER
        ]
    return found


def citation_faults(text: str) -> list[str]:
    """What is wrong with a legal basis: a citation in the form of its own country, on every page alike."""
    found = _common(text, Language.en)
    if text not in REVIEWED:
        found += [
            f"English prose in a citation: {piece!r}" for piece in pieces(text) if english_confidence(piece) > 0.6
        ]
    return found


def url_faults(url: str) -> list[str]:
    """What is wrong with a source's address: not an official publisher, or not one specific text."""
    parts = urlsplit(url)
    pattern = OFFICIAL.get(parts.hostname or "")
    if parts.scheme != "https" or pattern is None:
        return [f"not an official publisher: {url}"]
    address = parts.path + (f"?{parts.query}" if parts.query else "")
    if re.fullmatch(pattern, address) is None:
        return [f"names no specific text: {url}"]
    return []
