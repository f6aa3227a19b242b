"""Decided cases held against the service (tests/classify/cases/README.md): no verdict contradicts the court, and
where the facts fill four or more inputs, at least 80 % of the verdicts are the court's answer."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any, Literal

import pytest
from httpx import AsyncClient
from pydantic import BaseModel, ConfigDict, Field, HttpUrl

from compliance_api.classify.schemas import CrossBorderRequest, ZelfstandigenwetRequest
from tests.classify.conftest import Account

CASES = Path(__file__).parent / "cases"
COUNTRIES = ("NL", "FR", "DE", "BE")
COURTS_ANSWER = {"employment": "unsafe", "self_employment": "safe"}
CONTRADICTION = {"employment": "safe", "self_employment": "unsafe"}
DECIDED_SHARE = 0.8
MIN_INPUTS = 4


class Mapped(BaseModel):
    model_config = ConfigDict(extra="forbid")

    field: str
    value: bool | int | float
    because: str = Field(min_length=10)


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    country: Literal["NL", "FR", "DE", "BE"]
    court: str
    date: dt.date
    citation: str = Field(min_length=3)
    name: str | None = None
    source_url: HttpUrl
    outcome: Literal["employment", "self_employment"]
    facts: str = Field(min_length=40)
    request: dict[str, Any]
    mapping: list[Mapped] = Field(min_length=1)
    unmapped_facts: list[str] = []

    @property
    def answers(self) -> dict[str, Any]:
        return dict(self.request["engagement"] if self.country == "NL" else self.request["criteria"])


def _load() -> list[Case]:
    return [Case.model_validate_json(path.read_bytes()) for path in sorted(CASES.rglob("*.json"))]


ALL = _load()


def test_the_corpus_covers_every_country_and_both_outcomes() -> None:
    assert len(ALL) >= 40
    for country in COUNTRIES:
        outcomes = [case.outcome for case in ALL if case.country == country]
        assert outcomes.count("employment") >= 4, country
        assert outcomes.count("self_employment") >= 4, country
    assert len({case.id for case in ALL}) == len(ALL)
    assert all(path.stem == json.loads(path.read_bytes())["id"] for path in CASES.rglob("*.json"))


@pytest.mark.parametrize("case", ALL, ids=[case.id for case in ALL])
def test_each_request_is_made_from_its_mapping_and_is_a_valid_body(case: Case) -> None:
    """Every field sent is explained by a stated fact, and the body is one the API accepts."""
    assert {mapped.field: mapped.value for mapped in case.mapping} == case.answers
    if case.country == "NL":
        ZelfstandigenwetRequest.model_validate(case.request)
    else:
        assert case.request["country"] == case.country
        CrossBorderRequest.model_validate(case.request, strict=False)


async def _verdict(client: AsyncClient, account: Account, case: Case) -> str:
    path = "/v1/classify/zelfstandigenwet" if case.country == "NL" else "/v1/classify/cross-border"
    response = await client.post(path, json=case.request, headers=account.live)
    assert response.status_code == 200, response.text
    body = response.json()
    if body["verdict"] == "risky":
        assert body["next_questions"], "an undecided verdict says which question to answer next"
    else:
        assert body["decided_by"], "a decisive verdict names what decided it"
    verdict: str = body["verdict"]
    return verdict


async def test_no_verdict_contradicts_the_court_and_most_decide_as_it_did(
    client: AsyncClient, account: Account
) -> None:
    verdicts = {case.id: await _verdict(client, account, case) for case in ALL}
    contradictions = [case.id for case in ALL if verdicts[case.id] == CONTRADICTION[case.outcome]]
    assert contradictions == []
    filled = [case for case in ALL if len(case.answers) >= MIN_INPUTS]
    decided = [case.id for case in filled if verdicts[case.id] == COURTS_ANSWER[case.outcome]]
    assert len(filled) >= 15
    assert len(decided) >= DECIDED_SHARE * len(filled), sorted(set(c.id for c in filled) - set(decided))
