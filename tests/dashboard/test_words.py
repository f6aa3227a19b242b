"""The dashboard's catalogues pass the words guard (`tests/words.py`) in every language, and write each verdict with
the one word the API and the dossier use."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from compliance_api.classify.language import Language
from compliance_api.classify.verdict import WORDS
from tests.words import faults

LOCALES = Path(__file__).resolve().parents[2] / "compliance_api" / "dashboard" / "locales"
PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|\{\{ *\w+ *\}\}")


def _catalogue(language: Language) -> dict[str, str]:
    with (LOCALES / language.code / "LC_MESSAGES" / "messages.po").open("rb") as file:
        catalog = read_po(file)
    return {str(m.id): str(m.string) for m in catalog if m.id and isinstance(m.id, str)}


@pytest.mark.parametrize("language", [Language.nl, Language.fr, Language.de])
def test_every_catalogue_text_passes_the_guard(language: Language) -> None:
    messages = _catalogue(language)
    assert len(messages) > 200
    found = [
        f"{message_id!r}: {fault}"
        for message_id, text in messages.items()
        for fault in faults(PLACEHOLDER.sub("", text), language) + faults(PLACEHOLDER.sub("", message_id), Language.en)
    ]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("language", [Language.nl, Language.fr, Language.de])
def test_the_page_writes_each_verdict_with_the_apis_word(language: Language) -> None:
    messages = _catalogue(language)
    assert {verdict.value: messages[verdict.value] for verdict in WORDS} == {
        verdict.value: words[language] for verdict, words in WORDS.items()
    }
