"""The dossier's fixed texts in every language (`texts.json`), checked when first read: a missing translation fails."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from compliance_api.classify.language import CODES, Language


class DossierTexts:
    """`texts[language, key]`: one text of the dossier in one language."""

    def __init__(self, entries: dict[str, dict[str, str]]) -> None:
        for key, translations in entries.items():
            missing = sorted(set(CODES) - set(translations))
            if missing:
                raise ValueError(f"dossier text {key!r}: missing translation: {', '.join(missing)}")
        self._entries = entries

    def __getitem__(self, wanted: tuple[Language, str]) -> str:
        language, key = wanted
        return self._entries[key][language.code]

    def get(self, language: Language, key: str) -> str | None:
        entry = self._entries.get(key)
        return None if entry is None else entry[language.code]

    def of(self, language: Language) -> dict[str, str]:
        """Every text in one language, for the template."""
        return {key: translations[language.code] for key, translations in self._entries.items()}


@cache
def dossier_texts() -> DossierTexts:
    raw = resources.files("compliance_api.dossier").joinpath("texts.json").read_text(encoding="utf-8")
    return DossierTexts(json.loads(raw))
