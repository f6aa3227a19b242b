"""Every text of every ruleset, and the API's prose answers, in every language, pass the words guard (`tests/words.py`):
no work notes, no codes in prose, no English in another language, official sources only."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from httpx import AsyncClient
from pydantic import BaseModel, HttpUrl

from compliance_api.classify.language import CODES, Language
from compliance_api.classify.ruleset import ENGAGEMENT_FIELDS, CrossBorderRuleset, DutchRuleset, packaged_rulesets
from compliance_api.classify.verdict import WORDS, Country
from tests.classify.conftest import Account
from tests.words import citation_faults, faults, url_faults

CITATIONS = {"basis", "law", "title"}
"""The fields that hold a citation (a `basis` is translated where it is prose, as a tariefgrens's is)."""


def _walk(value: object, where: str) -> Iterator[tuple[str, str, str | Language]]:
    """(where, text, what it is): `citation`, `url`, or the language of a translated text."""
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from _walk(getattr(value, name), f"{where}.{name}")
    elif isinstance(value, HttpUrl):
        yield where, str(value), "url"
    elif isinstance(value, tuple) and len(value) == len(Language) and all(isinstance(v, str) for v in value):
        for language, text in zip(Language, value, strict=True):
            yield f"{where}.{language.code}", text, language
    elif isinstance(value, tuple | list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{where}.{index}")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, f"{where}.{key}")
    elif isinstance(value, str) and where.rsplit(".", 1)[-1] in CITATIONS:
        yield where, value, "citation"


def _check(where: str, text: str, what: str | Language) -> list[str]:
    if what == "url":
        found = url_faults(text)
    elif what == "citation":
        found = citation_faults(text)
    else:
        assert isinstance(what, Language)
        found = faults(text, what)
    return [f"{where}: {fault}" for fault in found]


def _texts() -> Iterator[tuple[str, str, str | Language]]:
    rulesets = packaged_rulesets()
    yield from _walk(rulesets.dutch, "nl-zw")
    for country, ruleset in rulesets.cross_border.items():
        yield from _walk(ruleset, country.value)
    yield from _walk(rulesets.phrases, "phrases")
    for verdict, words in WORDS.items():
        yield from _walk(words, f"verdict.{verdict.value}")


def test_every_ruleset_text_passes_the_guard() -> None:
    walked = list(_texts())
    assert len(walked) > 1000, "the walk reaches every translated text, citation and link"
    found = [fault for where, text, what in walked for fault in _check(where, text, what)]
    assert found == [], "\n".join(found)


def test_every_legal_basis_links_its_official_text_or_cites_it_alone() -> None:
    rulesets = packaged_rulesets()
    linked = [c.source_url for c in rulesets.dutch.criteria] + [r.source_url for r in rulesets.dutch.decisive]
    assert all(url is not None for url in linked), "every Dutch judgment and article cited is published online"
    for ruleset in (rulesets.dutch, *rulesets.cross_border.values()):
        assert ruleset.sources, ruleset.id


def test_a_citation_linked_in_one_place_is_linked_everywhere() -> None:
    rulesets = packaged_rulesets()
    every: list[DutchRuleset | CrossBorderRuleset] = [rulesets.dutch, *rulesets.cross_border.values()]
    for ruleset in every:
        entries = (*ruleset.criteria, *ruleset.decisive, *getattr(ruleset, "questions", ()))
        cited = [(entry.basis, entry.source_url) for entry in entries]
        cited += [(source.title, source.url) for source in ruleset.sources]
        linked = {text for text, url in cited if url is not None}
        unlinked = sorted({text for text, url in cited if url is None} & linked)
        assert unlinked == [], f"{ruleset.id}: cited without the link it has elsewhere: {unlinked}"


@pytest.mark.parametrize("country", [Country.FR, Country.DE])
def test_a_minimum_wage_benchmark_links_the_text_that_sets_the_minimum_wage(country: Country) -> None:
    ruleset = packaged_rulesets().cross_border[country]
    assert all(entry.source_url is not None for entry in ruleset.tariefgrens)
    rate = next(c for c in ruleset.criteria if c.name == "rate_below_tariefgrens")
    assert rate.source_url == ruleset.tariefgrens[-1].source_url, "the criterion links the newest minimum wage's text"


def test_every_question_is_a_question() -> None:
    rulesets = packaged_rulesets()
    questions = [q.text for q in rulesets.dutch.questions] + [
        c.question for ruleset in rulesets.cross_border.values() for c in ruleset.criteria
    ]
    for texts in questions:
        for language, text in zip(Language, texts, strict=True):
            assert text.rstrip().endswith("?"), (language.code, text)


def _prose(body: Any) -> Iterator[tuple[str, str]]:
    """The texts a person reads in an answer: advice, reasons, questions and their summaries, descriptions."""
    if isinstance(body, dict):
        for key, value in body.items():
            if key in {"advice", "reason", "question", "summary", "explanation", "description", "source_note"}:
                yield key, value
            elif key == "answer" and isinstance(value, str):
                yield key, value
            else:
                yield from _prose(value)
    elif isinstance(body, list):
        for item in body:
            yield from _prose(item)


ENGAGEMENTS = [
    {},
    {"hourly_rate_eur": 30, "other_clients_count": 0, "can_delegate": False},
    {"works_under_instructions": True, "embedded_in_organisation": True, "profit_risk": False},
    {"acts_as_entrepreneur": True, "profit_risk": True, "sets_own_hours": True, "works_under_instructions": False},
]


@pytest.mark.parametrize("code", CODES)
async def test_every_prose_answer_passes_the_guard(client: AsyncClient, account: Account, code: str) -> None:
    language, headers = Language[code], {**account.live, "Accept-Language": code}
    answers = [
        await client.post("/v1/classify/zelfstandigenwet", json={"engagement": e}, headers=headers) for e in ENGAGEMENTS
    ]
    rulesets = packaged_rulesets()
    for country, ruleset in rulesets.cross_border.items():
        for criteria in ({}, {name: True for name in ruleset.criterion_names[:3]}):
            body = {"country": country.value, "criteria": criteria}
            answers.append(await client.post("/v1/classify/cross-border", json=body, headers=headers))
        answers.append(
            await client.get("/v1/classify/cross-border/criteria", params={"country": country.value}, headers=headers)
        )
    for test in ("NL", *(country.value for country in Country)):
        answers.append(await client.get("/v1/classify/questions", params={"test": test}, headers=headers))
    found = []
    for answer in answers:
        assert answer.status_code == 200, answer.text
        for key, text in _prose(answer.json()):
            found += [f"{answer.url.path} {key}: {fault}" for fault in faults(text, language)]
    assert found == [], "\n".join(found)
    assert not any(name in answers[0].json()["advice"] for name in ENGAGEMENT_FIELDS)


async def test_an_inverted_question_labels_its_answers_as_asked(client: AsyncClient, account: Account) -> None:
    """`not_registered_as_independent` is asked as "Is the freelancer registered…?": the answer that sets it to true
    is "no", in the questions catalogue and in the next questions of a verdict."""
    headers = {**account.live, "Accept-Language": "fr"}
    catalogue = (await client.get("/v1/classify/questions", params={"test": "FR"}, headers=headers)).json()
    asked = {q["field"]: q for q in catalogue["questions"]}
    assert asked["not_registered_as_independent"]["true_when"] == "no"
    assert asked["not_registered_as_independent"]["question"].startswith("Le prestataire est-il immatriculé")
    assert asked["client_gives_orders"]["true_when"] == "yes"
    orders = {"client_gives_orders": True, "client_controls_execution": True, "client_can_sanction": True}
    verdict = (
        await client.post("/v1/classify/cross-border", json={"country": "FR", "criteria": orders}, headers=headers)
    ).json()
    [question] = [q for q in verdict["next_questions"] if q["field"] == "not_registered_as_independent"]
    assert question["question"] == asked["not_registered_as_independent"]["question"]
    assert {answer["value"]: answer["answer"] for answer in question["answers"]} == {True: "non", False: "oui"}
