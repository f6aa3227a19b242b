"""Every rendered dossier, for each test and language, passes the words guard (`tests/words.py`) up to its
verification section (keys and signatures are code by nature): no work notes, no codes, no English in another
language, the verdict in its word, amounts as the language writes them; the attached JWS described in the dossier's
language."""

from __future__ import annotations

import re
from typing import Any

import pytest
from httpx import AsyncClient

from compliance_api.classify.language import CODES, Language
from compliance_api.classify.verdict import WORDS
from compliance_api.dossier.texts import dossier_texts
from tests.classify.conftest import Account
from tests.dossier.conftest import attachment_description, pdf_text
from tests.words import faults

REQUEST_ID = re.compile(r"\breq_[0-9a-f]{24}\b")
"""The asking request's id, printed as a record (the only identifier before the verification section)."""
ENGLISH_AMOUNT = re.compile(r"\d,\d{3}\.\d{2}|(?:EUR|€)\s?\d+\.\d{2}\b|\b\d+\.\d{2}\s?(?:EUR|€)")
REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("/v1/classify/zelfstandigenwet", {"engagement": {"hourly_rate_eur": 30, "works_under_instructions": True}}),
    ("/v1/classify/cross-border", {"country": "FR", "criteria": {"not_registered_as_independent": True}}),
    ("/v1/classify/cross-border", {"country": "DE", "criteria": {"no_entrepreneurial_risk": True}}),
    ("/v1/classify/cross-border", {"country": "BE", "criteria": {"no_freedom_working_time": True}}),
]


@pytest.mark.parametrize("code", CODES)
async def test_every_dossier_passes_the_guard(client: AsyncClient, account: Account, code: str) -> None:
    language = Language[code]
    cut = dossier_texts()[language, "verification"]
    for path, body in REQUESTS:
        verdict = await client.post(path, json=body, headers={**account.live, "Accept-Language": code})
        assert verdict.status_code == 200, verdict.text
        pdf = await client.get(f"/v1/classifications/{verdict.json()['id']}/dossier?format=pdf", headers=account.live)
        text = REQUEST_ID.sub("", pdf_text(pdf.content).rsplit(cut, 1)[0])
        found = faults(text, language)
        assert found == [], (path, code, found)
        description = attachment_description(pdf.content)
        assert description == dossier_texts()[language, "jws_description"]
        assert faults(description, language) == [], (code, description)
        assert WORDS[verdict.json()["verdict"]][language] in text
        if language is not Language.en:
            assert not ENGLISH_AMOUNT.search(text), (path, code, ENGLISH_AMOUNT.findall(text))
