"""Verdicts, rule reasons and catalogues in en, nl, fr or de, chosen by Accept-Language and kept on the record."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from typing import Any

import pytest
from httpx import AsyncClient, Response
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.classify.language import Language, money, negotiate
from compliance_api.classify.models import Classification
from compliance_api.classify.ruleset import CrossBorderRule, DecisiveRule, Rulesets
from compliance_api.classify.verdict import Country, Verdict
from tests.classify.conftest import Account
from tests.cli.conftest import invoke

ZW = "/v1/classify/zelfstandigenwet"
CB = "/v1/classify/cross-border"
CRITERIA = "/v1/classify/cross-border/criteria"
CODES = [language.code for language in Language]
# The rate at the threshold (presumption), a single client, and personal service; everything else favourable.
DUTCH: dict[str, Any] = {
    "engagement": {
        "hourly_rate_eur": 38,
        "months_duration": 3,
        "days_per_week": 2,
        "other_clients_count": 0,
        "own_tools": True,
        "own_liability": True,
        "sets_own_hours": True,
        "can_delegate": False,
        "profit_risk": True,
        "works_under_instructions": False,
        "client_supervises_work": False,
        "embedded_in_organisation": False,
        "structural_work": False,
        "same_work_as_employees": False,
        "terms_set_by_client": False,
        "acts_as_entrepreneur": True,
    },
    "as_of": "2026-07-09",
}
# Per country, criteria that fire a rule (so a reason is given) and leave others unanswered.
FIRING = {
    Country.FR: {"client_gives_orders": True, "client_controls_execution": True, "client_can_sanction": True},
    Country.DE: {"subject_to_instructions": True, "integrated_in_client_organisation": True},
    Country.BE: {"no_freedom_working_time": True, "no_freedom_work_organisation": True},
}


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, Language.en),
        ("", Language.en),
        ("nl", Language.nl),
        ("fr;q=0.5, de;q=0.9", Language.de),
        ("de;q=0.9, fr", Language.fr),
        ("nl-BE", Language.nl),
        ("fr-BE, nl-BE;q=0.8", Language.fr),
        ("DE-at;q=1.0", Language.de),
        ("es, it;q=0.8", Language.en),
        ("*", Language.en),
        ("en;q=0, *", Language.nl),
        ("es, *;q=0.1, de;q=0.2", Language.de),
        ("nl;q=0, nl-BE", Language.en),
        ("de-CH;q=0, de", Language.de),
        ("fr;q=0", Language.en),
        ("fr;q=2, nl;q=abc, de;q=0.3", Language.de),
        ("nl;q=0.5, fr;q=0.5", Language.nl),
        ("@@@, ;;;, fr", Language.fr),
    ],
)
def test_the_language_follows_rfc_9110_weights(header: str | None, expected: Language) -> None:
    """q-values order the ranges (ties keep their order), a region asks for its language, `*` takes the first of
    ours not refused, q=0 refuses a range, a malformed element is skipped, and anything else is English."""
    assert negotiate(header) is expected


def assert_in_language(response: Response, language: str) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    assert response.headers["Content-Language"] == language
    assert "Accept-Language" in [value.strip() for value in response.headers["Vary"].split(",")]
    body: dict[str, Any] = response.json()
    return body


@pytest.mark.parametrize("code", CODES)
async def test_the_dutch_verdict_is_written_in_the_asked_language(
    client: AsyncClient, account: Account, rulesets: Rulesets, code: str
) -> None:
    language = Language[code]
    ruleset = rulesets.dutch
    body = assert_in_language(
        await client.post(ZW, json=DUTCH, headers={**account.live, "Accept-Language": code}), code
    )
    hit = [criterion for criterion in ruleset.criteria if criterion.id in body["criteria_hit"]]
    assert [criterion.id for criterion in hit] == [
        "rate_at_or_below_tariefgrens",
        "single_client",
        "personal_service_only",
    ]
    threshold = ruleset.tariefgrens_on(ruleset.version)
    assert threshold is not None
    assert ruleset.weighing.presumption_pending is not None
    pending = ruleset.weighing.presumption_pending[language].format(amount=money(Decimal("38"), language))
    texts = ruleset.texts
    assert body["advice"] == " ".join([*(c.advice[language] for c in hit), pending, texts.not_assessed[language]])
    assert body["tariefgrens"]["basis"] == threshold.basis[language]
    assert body["decided_by"][0]["reason"] == ruleset.decisive[3].reason[language]
    assert (body["verdict"], body["score"]) == ("safe", 24), "the language changes texts only"


@pytest.mark.parametrize("code", CODES)
@pytest.mark.parametrize("country", list(Country))
async def test_each_cross_border_verdict_is_written_in_the_asked_language(
    client: AsyncClient, account: Account, rulesets: Rulesets, country: Country, code: str
) -> None:
    language = Language[code]
    ruleset = rulesets.cross_border[country]
    request = {"country": country.value, "criteria": FIRING[country]}
    body = assert_in_language(
        await client.post(CB, json=request, headers={**account.live, "Accept-Language": code}), code
    )
    verdict = Verdict(body["verdict"])
    rules: list[DecisiveRule | CrossBorderRule] = [*ruleset.decisive, *ruleset.rules]
    fired = [rule for rule in rules if rule.reason[language] in {r["reason"] for r in body["rules_applied"]}]
    assert [rule.verdict.value for rule in fired] == [rule["verdict"] for rule in body["rules_applied"]]
    assert body["advice"].startswith(ruleset.advice[verdict][language])
    for rule in fired:
        if rule.verdict is verdict:
            assert ruleset.texts.rule_applied[language].format(reason=rule.reason[language]) in body["advice"]
    for criterion in ruleset.criteria:
        assert (criterion.advice[language] in body["advice"]) is (criterion.name in FIRING[country])
    asked = [c.question[language] for c in ruleset.criteria if c.name in body["unanswered"]]
    unanswered = ruleset.texts.unanswered[language].format(questions=" ".join(asked))
    assert unanswered in body["advice"]
    assert not any(name in body["advice"] for name in body["unanswered"]), "questions are named by their text"


@pytest.mark.parametrize("code", CODES)
@pytest.mark.parametrize("country", list(Country))
async def test_the_criteria_catalogue_follows_the_header(
    client: AsyncClient, account: Account, rulesets: Rulesets, country: Country, code: str
) -> None:
    language = Language[code]
    ruleset = rulesets.cross_border[country]
    response = await client.get(
        CRITERIA, params={"country": country.value}, headers={**account.live, "Accept-Language": code}
    )
    body = assert_in_language(response, code)
    assert [c["description"] for c in body["criteria"]] == [c.description[language] for c in ruleset.criteria]
    assert [r["reason"] for r in body["rules"]] == [r.reason[language] for r in ruleset.rules]
    assert [r["reason"] for r in body["decisive"]] == [r.reason[language] for r in ruleset.decisive]


async def test_q_values_pick_the_language_of_the_answer(client: AsyncClient, account: Account) -> None:
    for header, expected in (("fr;q=0.5, de;q=0.9", "de"), ("nl-BE", "nl"), ("pt-BR", "en"), ("*", "en")):
        response = await client.post(ZW, json=DUTCH, headers={**account.live, "Accept-Language": header})
        assert_in_language(response, expected)
    assert_in_language(await client.post(ZW, json=DUTCH, headers=account.live), "en")


async def test_an_error_answer_is_not_localised(client: AsyncClient, account: Account) -> None:
    response = await client.post(
        CB, json={"country": "FR", "criteria": {"typo": True}}, headers={**account.live, "Accept-Language": "fr"}
    )
    assert response.status_code == 400
    assert "Content-Language" not in response.headers


async def test_the_record_keeps_the_language_it_was_answered_in(
    client: AsyncClient, account: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    made = {
        code: assert_in_language(
            await client.post(ZW, json=DUTCH, headers={**account.live, "Accept-Language": code}), code
        )
        for code in ("fr", "en")
    }
    async with sessionmaker() as session:
        stored = {
            str(row.id): row.language
            for row in await session.scalars(select(Classification).where(Classification.user_id == account.user.id))
        }
    assert stored == {made["fr"]["id"]: "fr", made["en"]["id"]: "en"}
    for code, verdict in made.items():
        # Read back without (or with another) Accept-Language: the record says which language its texts are in.
        record = await client.get(
            f"/v1/classifications/{verdict['id']}", headers={**account.live, "Accept-Language": "de"}
        )
        assert record.status_code == 200
        assert record.json()["language"] == code
        assert record.json()["result"]["advice"] == verdict["advice"]


async def test_a_replay_is_in_the_first_language_and_another_language_is_another_request(
    client: AsyncClient, account: Account
) -> None:
    keyed = {**account.live, "Idempotency-Key": "language-42"}
    first = assert_in_language(await client.post(ZW, json=DUTCH, headers={**keyed, "Accept-Language": "nl"}), "nl")
    again = await client.post(ZW, json=DUTCH, headers={**keyed, "Accept-Language": "nl-NL"})
    assert again.headers["Idempotent-Replayed"] == "true"
    assert assert_in_language(again, "nl") == first
    other = await client.post(ZW, json=DUTCH, headers={**keyed, "Accept-Language": "fr"})
    assert other.status_code == 409
    assert other.json()["code"] == "idempotency_mismatch"


async def test_a_rescore_writes_the_new_verdict_in_the_record_language(
    client: AsyncClient, account: Account, cli_env: dict[str, str], rulesets: Rulesets
) -> None:
    """EUR 37 was above the 2025 threshold (safe) and is under the 2026 one, where the level of pay weighs the other
    way: the later verdict stays in German."""
    favourable = {
        "hourly_rate_eur": 37,
        "sets_own_hours": False,
        "own_tools": True,
        "own_liability": True,
        "can_delegate": True,
        "profit_risk": True,
    }
    request = {"engagement": favourable, "as_of": "2025-03-01", "monitor": True}
    made = assert_in_language(
        await client.post(ZW, json=request, headers={**account.live, "Accept-Language": "de"}), "de"
    )
    assert made["verdict"] == "safe"
    code, out, err = await asyncio.to_thread(
        invoke, cli_env, "classifications", "rescore", "--json", "--as-of", "2026-11-25"
    )
    assert code == 0, err
    assert json.loads(out)["changed"] == 1
    record = (await client.get(f"/v1/classifications/{made['id']}", headers=account.live)).json()
    [later] = record["history"]
    assert later["result"]["advice"].endswith(rulesets.dutch.texts.not_assessed[Language.de])
    assert rulesets.dutch.criteria[0].advice[Language.de] in later["result"]["advice"]
