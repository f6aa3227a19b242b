"""Belgian road transport: where a Royal Decree of 29 October 2013 (Programme Law (I), art. 337/2, § 3) replaces the
nine socio-economic criteria for a sub-sector, the nine presume neither employment nor self-employment there.

The decrees' own criteria are not modelled (their official texts were not read), so a transport engagement is judged
on the general criteria and the weighing, and its advice sends the reader to the decree.
"""

from __future__ import annotations

import datetime as dt

import pytest
from httpx import AsyncClient

from compliance_api.classify import questions
from compliance_api.classify.crossborder import assess_criteria
from compliance_api.classify.language import Language
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.classify.verdict import Country
from tests.classify.conftest import Account
from tests.classify.test_golden_cross_border import BE_NINE

RULESETS = packaged_rulesets()
BE = RULESETS.cross_border[Country.BE]
AS_OF = dt.date(2026, 11, 28)
TRANSPORT = ("transport_goods_logistics", "transport_bus_coach", "transport_taxi_hired_car")
SECTOR_RULES = {"sector_presumption", "sector_presumption_of_self_employment"}


def _assess(*met: str) -> tuple[str, set[str], str]:
    """The verdict, the ids of the decisive rules that held and the English advice, every criterion answered (those
    named met)."""
    facts = {name: name in met for name in BE.criterion_names}
    assessment = assess_criteria(BE, facts, AS_OF)
    return assessment.verdict.value, {rule.id for rule in assessment.decided_by}, assessment.advice


@pytest.mark.parametrize("sub_sector", TRANSPORT)
@pytest.mark.parametrize("nine", [BE_NINE[:5], BE_NINE[4:], BE_NINE[::2]])
def test_in_transport_more_than_half_of_the_nine_presumes_no_employment(sub_sector: str, nine: tuple[str, ...]) -> None:
    verdict, rules, advice = _assess("in_presumption_sector", sub_sector, *nine)
    assert not rules & SECTOR_RULES
    assert verdict != "unsafe", "the nine alone make no employment in a sub-sector with its own decree"
    assert "Royal Decree of 29 October 2013" in advice


@pytest.mark.parametrize("sub_sector", TRANSPORT)
def test_in_transport_few_of_the_nine_presumes_no_self_employment(sub_sector: str) -> None:
    _, rules, _ = _assess("in_presumption_sector", sub_sector, *BE_NINE[:2])
    assert not rules & SECTOR_RULES


def test_outside_transport_the_nine_still_presume() -> None:
    """Construction, guarding or cleaning: every transport question answered no, the nine decide as before."""
    verdict, rules, advice = _assess("in_presumption_sector", *BE_NINE[:5])
    assert (verdict, "sector_presumption" in rules) == ("unsafe", True)
    assert "Royal Decree of 29 October 2013" not in advice
    verdict, rules, _ = _assess("in_presumption_sector", *BE_NINE[:2])
    assert (verdict, "sector_presumption_of_self_employment" in rules) == ("safe", True)


def test_a_transport_question_left_unanswered_does_not_stop_the_presumption_but_could_change_it() -> None:
    facts = {name: name in ("in_presumption_sector", *BE_NINE[:5]) for name in BE.criterion_names}
    unanswered = assess_criteria(BE, {name: met for name, met in facts.items() if name not in TRANSPORT}, AS_OF)
    assert "sector_presumption" in {rule.id for rule in unanswered.decided_by}
    assert set(TRANSPORT) <= {question.input for question in unanswered.could_change}


@pytest.mark.parametrize("language", list(Language))
def test_each_sub_sector_is_asked_in_every_language(language: Language) -> None:
    asked = {
        question.field: question
        for question in questions.questionnaire(RULESETS, questions.Test.BE, language).questions
    }
    for name in TRANSPORT:
        question = asked[name]
        assert question.kind == "boolean"
        assert question.true_when == "yes"
        assert question.text.rstrip().endswith("?")
        assert "29" in question.explanation, "the advice names the decree of 29 October 2013"
        assert "337/2, § 3" in question.basis


async def test_the_api_judges_a_taxi_engagement_without_the_nine(client: AsyncClient, account: Account) -> None:
    criteria = {name: name in BE_NINE[:6] for name in BE_NINE}
    criteria |= {"in_presumption_sector": True, "transport_taxi_hired_car": True}
    answer = await client.post(
        "/v1/classify/cross-border",
        json={"country": "BE", "criteria": criteria},
        headers={**account.live, "Accept-Language": "fr"},
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert not {rule["id"] for rule in body["decided_by"]} & SECTOR_RULES
    assert "arrêté royal du 29 octobre 2013" in body["advice"]
    assert "transport_taxi_hired_car" in body["criteria_met"]
