"""The classify endpoints over HTTP: validation, response shape, audit trail and who may read it."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import orjson
import pytest
from httpx import AsyncClient
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.classify import examples, service, views
from compliance_api.classify.language import Language
from compliance_api.classify.models import Classification
from compliance_api.classify.ruleset import ENGAGEMENT_FIELDS, Rulesets, packaged_rulesets
from compliance_api.classify.schemas import (
    ClassificationRecord,
    CriteriaCatalogue,
    CrossBorderRequest,
    CrossBorderVerdict,
    ZelfstandigenwetRequest,
    ZWVerdict,
)
from compliance_api.classify.verdict import Country, Verdict
from compliance_api.errors import ApiError
from compliance_api.events import service as events
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit
from tests.classify.conftest import Account, caller_for, make_account

ZW = "/v1/classify/zelfstandigenwet"
CB = "/v1/classify/cross-border"

FULL_ENGAGEMENT: dict[str, Any] = {
    "hourly_rate_eur": 30,
    "months_duration": 24,
    "days_per_week": 3,
    "other_clients_count": 0,
    "own_tools": False,
    "own_liability": False,
    "sets_own_hours": False,
    "can_delegate": False,
    "profit_risk": False,
}


def other_environment(environment: Environment) -> Environment:
    return Environment.test if environment is Environment.live else Environment.live


async def count_records(sessionmaker: async_sessionmaker[AsyncSession], account: Account) -> int:
    async with sessionmaker() as session:
        statement = select(func.count()).select_from(Classification).where(Classification.user_id == account.user.id)
        return int(await session.scalar(statement) or 0)


def fields_of(problem: dict[str, Any]) -> set[str]:
    return {error["field"] for error in problem.get("errors", [])}


async def test_dutch_verdict_has_the_spec_fields_and_the_audit_fields(client: AsyncClient, account: Account) -> None:
    response = await client.post(ZW, json={"engagement": FULL_ENGAGEMENT, "as_of": "2026-07-09"}, headers=account.live)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["verdict"] == "unsafe"
    weights = {criterion.id: criterion.weight for criterion in packaged_rulesets().dutch.criteria}
    assert body["score"] == sum(weights[hit] for hit in body["criteria_hit"]) == 53
    assert body["ratio"] == 0.53
    assert "near_full_time" not in body["criteria_hit"]
    assert set(body["criteria_hit"]) == {c["id"] for c in body["criteria"] if c["hit"]}
    assert body["presumption_of_employment"] is False, "the act has no published date of entry into force"
    assert body["tariefgrens"]["amount_eur"] == 38.0
    assert body["tariefgrens"]["legal_status"] == "adopted_not_in_force"
    assert body["ruleset"] == {"id": "nl-zw", "version": "2026-11-28", "valid_from": "2026-11-28"}
    assert body["weighing"] == {"employment": 44, "self_employment": 2, "stated_facts": 9, "floor": 4}
    assert body["answer_set_search"] == "not_needed"
    assert all(c["legal_basis"]["source_url"].startswith("https://") for c in body["criteria"])
    assert "Not assessed" in body["advice"]
    uuid.UUID(body["id"])


@pytest.mark.parametrize(
    ("engagement", "bad_fields"),
    [
        ({"hourly_rate_eur": "38"}, {"engagement.hourly_rate_eur"}),
        ({"hourly_rate_eur": True}, {"engagement.hourly_rate_eur"}),
        ({"months_duration": True, "days_per_week": "4"}, {"engagement.months_duration", "engagement.days_per_week"}),
        (
            {"other_clients_count": -1, "hourly_rate_eur": -0.01},
            {"engagement.other_clients_count", "engagement.hourly_rate_eur"},
        ),
        ({"days_per_week": 8}, {"engagement.days_per_week"}),
        ({"days_per_week": -1, "months_duration": 601}, {"engagement.days_per_week", "engagement.months_duration"}),
        ({"months_duration": 4.5}, {"engagement.months_duration"}),
        ({"own_tools": "yes", "can_delegate": 1}, {"engagement.own_tools", "engagement.can_delegate"}),
        ({"salary": 10, "own_tools": True}, {"engagement.salary"}),
    ],
)
async def test_every_offending_field_is_named(
    client: AsyncClient, account: Account, engagement: dict[str, Any], bad_fields: set[str]
) -> None:
    response = await client.post(ZW, json={"engagement": engagement}, headers=account.live)
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["code"] == "validation_failed"
    assert fields_of(problem) == bad_fields


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (b'{"engagement": {"hourly_rate_eur": NaN}}', "engagement.hourly_rate_eur"),
        (b'{"engagement": {"hourly_rate_eur": Infinity}}', "engagement.hourly_rate_eur"),
        (b'{"engagement": {"hourly_rate_eur": -Infinity}}', "engagement.hourly_rate_eur"),
        (b"[1, 2]", "body"),
        (b'"engagement"', "body"),
        (b"{}", "engagement"),
        (b'{"engagement": null}', "engagement"),
        (b'{"engagement": []}', "engagement"),
        (b'{"engagement": {}, "extra": 1}', "extra"),
        (b'{"engagement": {}, "as_of": "09-07-2026"}', "as_of"),
        (b'{"engagement": {}, "as_of": 1720483200}', "as_of"),
        (b'{"engagement": {}, "as_of": "2026-02-30"}', "as_of"),
        (b'{"engagement": {}, "as_of": "2026-7-9"}', "as_of"),
        (b'{"engagement": {}, "as_of": "2026-07-09T00:00:00"}', "as_of"),
    ],
)
async def test_malformed_bodies_are_400_naming_the_field(
    client: AsyncClient, account: Account, raw: bytes, field: str
) -> None:
    response = await client.post(ZW, content=raw, headers={**account.live, "Content-Type": "application/json"})
    assert response.status_code == 400, response.text
    assert field in fields_of(response.json())


async def test_a_rejected_request_leaves_no_audit_record(
    client: AsyncClient, account: Account, sessionmaker: async_sessionmaker[AsyncSession], rulesets: Rulesets
) -> None:
    await client.post(ZW, json={"engagement": {"days_per_week": 9}}, headers=account.live)
    await client.post(CB, json={"country": "FR", "criteria": {"nope": True}}, headers=account.live)
    assert await count_records(sessionmaker, account) == 0


async def test_empty_engagement_is_answered_and_never_safe(client: AsyncClient, account: Account) -> None:
    response = await client.post(ZW, json={"engagement": {}}, headers=account.live)
    assert response.status_code == 200
    body = response.json()
    assert body["score"] == 0
    assert body["verdict"] == "risky"
    assert sorted(body["unanswered"]) == sorted(ENGAGEMENT_FIELDS)
    assert "What is the hourly rate in EUR, excluding VAT?" in body["advice"]
    assert not any(name in body["advice"] for name in ENGAGEMENT_FIELDS), "a question is named by its text"
    assert (body["decided_by"], body["deciding_facts"]) == ([], [])
    assert "fewer than 4" in body["advice"]
    assert (body["next_questions"], body["could_change"]) == ([], []), "no single answer reaches the floor"
    assert (body["next_answer_sets"], body["answer_set_search"]) == ([], "none_would")


async def test_a_question_answered_dont_know_is_not_ranked_first_again(client: AsyncClient, account: Account) -> None:
    engagement = {"works_under_instructions": True, "can_delegate": False, "profit_risk": False}
    first = (await client.post(ZW, json={"engagement": engagement}, headers=account.live)).json()
    assert first["verdict"] == "risky"
    top = first["next_questions"][0]["field"]
    again = await client.post(ZW, json={"engagement": engagement, "dont_know": [top]}, headers=account.live)
    assert again.status_code == 200, again.text
    ranked = [question["field"] for question in again.json()["next_questions"]]
    assert ranked[0] != top
    assert again.json()["verdict"] == "risky"
    unknown = await client.post(CB, json={"country": "FR", "criteria": {}, "dont_know": ["nope"]}, headers=account.live)
    assert unknown.status_code == 400
    assert "dont_know.nope" in fields_of(unknown.json())


async def test_whole_floats_count_as_integers(client: AsyncClient, account: Account) -> None:
    response = await client.post(ZW, json={"engagement": {"days_per_week": 4.0}}, headers=account.live)
    assert response.status_code == 200
    assert "near_full_time" in response.json()["criteria_hit"]


async def test_nulls_count_as_unanswered(client: AsyncClient, account: Account) -> None:
    response = await client.post(ZW, json={"engagement": {"own_tools": None}}, headers=account.live)
    assert response.status_code == 200
    assert "own_tools" in response.json()["unanswered"]


async def test_as_of_selects_the_threshold_in_force_then(client: AsyncClient, account: Account) -> None:
    engagement = {"hourly_rate_eur": 35}
    now = await client.post(ZW, json={"engagement": engagement}, headers=account.live)
    in_2024 = await client.post(ZW, json={"engagement": engagement, "as_of": "2024-06-01"}, headers=account.live)
    before_any = await client.post(ZW, json={"engagement": engagement, "as_of": "2023-06-30"}, headers=account.live)
    assert now.json()["tariefgrens"]["amount_eur"] == 38.0
    assert now.json()["presumption_of_employment"] is False
    assert "No date of entry into force has been published" in now.json()["advice"]
    assert now.json()["as_of"] == utcnow().date().isoformat()
    assert in_2024.json()["tariefgrens"]["amount_eur"] == 33.0
    assert in_2024.json()["presumption_of_employment"] is False
    assert before_any.json()["tariefgrens"] is None
    assert before_any.json()["presumption_of_employment"] is False
    assert "No hourly-rate threshold applies on 30 June 2023" in before_any.json()["advice"]


async def test_cross_border_verdict(client: AsyncClient, account: Account) -> None:
    criteria = {"client_gives_orders": True, "client_controls_execution": True, "client_can_sanction": True}
    triad = (await client.post(CB, json={"country": "FR", "criteria": criteria}, headers=account.live)).json()
    assert triad["verdict"] == "risky", "three stated facts are below the floor, and no statute decides"
    criteria["client_sets_schedule"] = True
    response = await client.post(CB, json={"country": "FR", "criteria": criteria}, headers=account.live)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["verdict"] == "unsafe"
    assert body["decided_by"][0]["rule"] == "orders_control_sanction"
    assert body["country"] == "FR"
    assert "L. 8221-6" in body["law"]
    assert body["tariefgrens_min_eur"] == 31.0
    assert body["ruleset"]["id"] == "fr-subordination"
    assert "vigilance_docs_missing" in body["criteria_not_provided"]
    assert "the URSSAF certificate (attestation de vigilance) and proof of registration collected" in body["advice"]
    assert "vigilance_docs_missing" not in body["advice"]


@pytest.mark.parametrize(
    ("body", "field", "mentions"),
    [
        ({"country": "NL", "criteria": {}}, "country", "'FR', 'DE' or 'BE'"),
        ({"country": "fr", "criteria": {}}, "country", "'FR', 'DE' or 'BE'"),
        ({"criteria": {}}, "country", "Field required"),
        ({"country": "FR"}, "criteria", "Field required"),
        ({"country": "FR", "criteria": {"client_gives_orders": "true"}}, "criteria.client_gives_orders", "boolean"),
        ({"country": "FR", "criteria": []}, "criteria", "dictionary"),
        (
            {"country": "DE", "criteria": {"client_gives_orders": True}},
            "criteria.client_gives_orders",
            "subject_to_instructions",
        ),
        ({"country": "BE", "criteria": {"made_up": False}}, "criteria.made_up", "in_presumption_sector"),
    ],
)
async def test_cross_border_bad_input_lists_what_is_allowed(
    client: AsyncClient, account: Account, body: dict[str, Any], field: str, mentions: str
) -> None:
    response = await client.post(CB, json=body, headers=account.live)
    assert response.status_code == 400, response.text
    errors = {error["field"]: error["message"] for error in response.json()["errors"]}
    assert field in errors
    assert mentions in errors[field]


async def test_criteria_catalogue(client: AsyncClient, account: Account, rulesets: Rulesets) -> None:
    for country, ruleset in rulesets.cross_border.items():
        response = await client.get(
            "/v1/classify/cross-border/criteria", params={"country": country}, headers=account.live
        )
        assert response.status_code == 200
        body = response.json()
        assert [c["name"] for c in body["criteria"]] == list(ruleset.criterion_names)
        assert all(c["description"] and c["legal_basis"]["text"] for c in body["criteria"])
        statutory = {rule["id"] for rule in body["decisive"] if rule["statutory"]}
        assert statutory == {rule.id for rule in ruleset.decisive if rule.statutory}
    belgian = (
        await client.get("/v1/classify/cross-border/criteria", params={"country": "BE"}, headers=account.live)
    ).json()
    assert {rule["id"] for rule in belgian["decisive"] if rule["statutory"]} >= {
        "sector_presumption",
        "authority_in_fact",
    }
    missing = await client.get("/v1/classify/cross-border/criteria", headers=account.live)
    unknown = await client.get("/v1/classify/cross-border/criteria", params={"country": "XX"}, headers=account.live)
    assert missing.status_code == unknown.status_code == 400
    assert "'FR', 'DE' or 'BE'" in unknown.json()["errors"][0]["message"]


async def test_the_audit_record_returns_to_its_owner_only(
    client: AsyncClient,
    sandbox_client: AsyncClient,
    account: Account,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
) -> None:
    body = {"engagement": {"hourly_rate_eur": 80, "months_duration": 3}}
    verdict = (await client.post(ZW, json=body, headers=account.live)).json()
    path = f"/v1/classifications/{verdict['id']}"

    mine = await client.get(path, headers=account.live)
    assert mine.status_code == 200
    record = mine.json()
    assert record["kind"] == "zelfstandigenwet"
    assert record["request"] == body
    assert record["result"] == verdict
    assert record["ruleset"] == verdict["ruleset"]

    other = await make_account(sessionmaker, pepper)
    assert (await client.get(path, headers=other.live)).status_code == 404
    assert (await sandbox_client.get(path, headers=account.test)).status_code == 404
    assert (await sandbox_client.get(path, headers=other.test)).status_code == 404
    assert (await client.get(f"/v1/classifications/{uuid.uuid4()}", headers=account.live)).status_code == 404
    assert (await client.get("/v1/classifications/not-a-uuid", headers=account.live)).status_code == 400


async def test_sandbox_records_stay_in_the_sandbox(
    client: AsyncClient, sandbox_client: AsyncClient, account: Account
) -> None:
    verdict = (await sandbox_client.post(CB, json={"country": "DE", "criteria": {}}, headers=account.test)).json()
    path = f"/v1/classifications/{verdict['id']}"
    assert (await sandbox_client.get(path, headers=account.test)).json()["kind"] == "cross_border"
    assert (await client.get(path, headers=account.live)).status_code == 404


@pytest.mark.parametrize(
    ("environment", "expired_age", "kept_age"),
    [
        (Environment.live, dt.timedelta(days=7 * 366), dt.timedelta(days=7 * 365 - 10)),
        (Environment.test, dt.timedelta(days=30, seconds=1), dt.timedelta(days=29)),
    ],
)
async def test_records_past_retention_are_hidden_then_purged(
    account: Account,
    audit: GroupCommit,
    sessionmaker: async_sessionmaker[AsyncSession],
    rulesets: Rulesets,
    environment: Environment,
    expired_age: dt.timedelta,
    kept_age: dt.timedelta,
) -> None:
    retention = service.Retention(live_years=7, sandbox_days=30)
    caller = caller_for(account.user, environment)
    body = ZelfstandigenwetRequest.model_validate({"engagement": {}})
    now = utcnow()
    expired = await service.classify_engagement(audit, caller, body, rulesets, now - expired_age)
    kept = await service.classify_engagement(audit, caller, body, rulesets, now - kept_age)
    assert expired.id is not None
    assert kept.id is not None
    async with sessionmaker() as session:
        with pytest.raises(ApiError):
            await service.get_classification(session, caller, expired.id, retention, now)
        found = views.classification_record(await service.get_classification(session, caller, kept.id, retention, now))
        assert found.id == kept.id
    async with sessionmaker.begin() as session:
        removed = await service.purge_expired(session, retention, now)
    assert removed == {environment: 1, other_environment(environment): 0}
    assert await count_records(sessionmaker, account) == 1


async def test_verdict_bodies_match_their_response_models(client: AsyncClient, account: Account) -> None:
    """The verdicts are built as plain JSON for speed; they must still be exactly what the contract's models say."""
    dutch = await client.post(ZW, json={"engagement": FULL_ENGAGEMENT}, headers=account.live)
    early = await client.post(ZW, json={"engagement": {}, "as_of": "2020-01-01"}, headers=account.live)
    cross = await client.post(
        CB, json={"country": "BE", "criteria": {"in_presumption_sector": True}}, headers=account.live
    )
    for response, model in ((dutch, ZWVerdict), (early, ZWVerdict), (cross, CrossBorderVerdict)):
        body = response.json()
        assert model.model_validate(body).model_dump(mode="json") == body


def localised_examples(operation: dict[str, Any]) -> dict[str, Any]:
    """An operation's 200 examples by language code."""
    found = operation["responses"]["200"]["content"]["application/json"]["examples"]
    return {code: example["value"] for code, example in found.items()}


def test_contract_examples_match_their_response_models() -> None:
    for operation, model in (
        (examples.ZELFSTANDIGENWET, ZWVerdict),
        (examples.CROSS_BORDER, CrossBorderVerdict),
        (examples.CRITERIA, CriteriaCatalogue),
    ):
        answers = localised_examples(operation)
        assert list(answers) == [language.code for language in Language]
        for body in answers.values():
            assert model.model_validate(body).model_dump(mode="json") == body
        assert len({orjson.dumps(body) for body in answers.values()}) == len(Language), "one text per language"
    record = examples.CLASSIFICATION["responses"]["200"]["content"]["application/json"]["example"]
    assert ClassificationRecord.model_validate(record).model_dump(mode="json") == record


async def test_idempotency_key_replays_the_first_verdict(
    client: AsyncClient, account: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    keyed = {**account.live, "Idempotency-Key": "payroll-run-42"}
    body = {"engagement": {"hourly_rate_eur": 37}}
    first = await client.post(ZW, json=body, headers=keyed)
    again = await client.post(ZW, json=body, headers=keyed)
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    other_body = await client.post(ZW, json={"engagement": {"hourly_rate_eur": 90}}, headers=keyed)
    assert other_body.status_code == 409
    assert other_body.json()["code"] == "idempotency_mismatch"
    unkeyed = [await client.post(ZW, json=body, headers=account.live) for _ in range(2)]
    assert unkeyed[0].json()["id"] != unkeyed[1].json()["id"]
    assert await count_records(sessionmaker, account) == 3


async def test_idempotency_keys_are_per_environment(
    client: AsyncClient, sandbox_client: AsyncClient, account: Account
) -> None:
    body = {"country": "BE", "criteria": {}}
    live = await client.post(CB, json=body, headers={**account.live, "Idempotency-Key": "k1"})
    test = await sandbox_client.post(CB, json=body, headers={**account.test, "Idempotency-Key": "k1"})
    assert live.status_code == test.status_code == 200
    assert live.json()["id"] != test.json()["id"]
    assert "Idempotent-Replayed" not in test.headers


@pytest.mark.parametrize("key", ["", "k" * 256, "tab\there"])
async def test_a_malformed_idempotency_key_is_400(client: AsyncClient, account: Account, key: str) -> None:
    response = await client.post(ZW, json={"engagement": {}}, headers={**account.live, "Idempotency-Key": key})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "header.Idempotency-Key"


async def test_each_verdict_writes_a_classification_created_event_in_its_environment(
    client: AsyncClient,
    sandbox_client: AsyncClient,
    account: Account,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    """The outbox event is committed with the audit row (webhooks deliver it to the account's endpoints)."""
    live = (await client.post(ZW, json={"engagement": FULL_ENGAGEMENT}, headers=account.live)).json()
    sandbox = (await sandbox_client.post(CB, json={"country": "FR", "criteria": {}}, headers=account.test)).json()
    await client.post(ZW, json={"engagement": {"days_per_week": 9}}, headers=account.live)
    async with sessionmaker() as session:
        live_events = await events.pending(session, environment=Environment.live, type=service.CLASSIFICATION_CREATED)
        test_events = await events.pending(session, environment=Environment.test, type=service.CLASSIFICATION_CREATED)
    mine = [e.payload for e in live_events if e.payload["user_id"] == str(account.user.id)]
    assert mine == [
        {
            "classification_id": live["id"],
            "user_id": str(account.user.id),
            "kind": "zelfstandigenwet",
            "verdict": live["verdict"],
            "created_at": live["created_at"],
        }
    ], "one event per verdict; the rejected request wrote none"
    assert [e.payload["classification_id"] for e in test_events if e.payload["user_id"] == str(account.user.id)] == [
        sandbox["id"]
    ]


async def test_dutch_advice_has_one_sentence_per_criterion_hit(
    client: AsyncClient, account: Account, rulesets: Rulesets
) -> None:
    engagement = {
        "hourly_rate_eur": 90,
        "months_duration": 3,
        "days_per_week": 2,
        "other_clients_count": 4,
        "own_tools": False,
        "own_liability": True,
        "sets_own_hours": False,
        "can_delegate": False,
        "profit_risk": True,
        "acts_as_entrepreneur": True,
        "works_under_instructions": False,
        "client_supervises_work": False,
        "embedded_in_organisation": False,
        "structural_work": False,
        "same_work_as_employees": False,
        "terms_set_by_client": False,
    }
    response = await client.post(ZW, json={"engagement": engagement, "as_of": "2026-07-09"}, headers=account.live)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["criteria_hit"] == ["no_own_tools", "client_sets_hours", "personal_service_only"]
    sentences = {criterion.id: criterion.advice[Language.en] for criterion in rulesets.dutch.criteria}
    for criterion_id, sentence in sentences.items():
        assert body["advice"].count(sentence) == (1 if criterion_id in body["criteria_hit"] else 0), criterion_id
    assert body["advice"].count(rulesets.dutch.texts.not_assessed[Language.en]) == 1
    assert body["advice"].endswith(rulesets.dutch.texts.not_assessed[Language.en])
    expected = [sentences[criterion_id] for criterion_id in body["criteria_hit"]] + [
        rulesets.dutch.texts.not_assessed[Language.en]
    ]
    assert body["advice"] == " ".join(expected), "nothing unanswered and no presumption: no other sentence"


async def test_cross_border_advice_has_one_sentence_per_criterion_met(
    client: AsyncClient, account: Account, rulesets: Rulesets
) -> None:
    ruleset = rulesets.cross_border[Country.DE]
    met = ("fixed_working_hours", "paid_by_time", "must_work_personally")
    criteria = {name: name in met for name in ruleset.criterion_names}
    response = await client.post(CB, json={"country": "DE", "criteria": criteria}, headers=account.live)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["criteria_met"] == list(met)
    for criterion in ruleset.criteria:
        expected = 1 if criterion.name in met else 0
        assert body["advice"].count(criterion.advice[Language.en]) == expected, criterion.name
    assert body["advice"].startswith(ruleset.advice[Verdict(body["verdict"])][Language.en])


def test_contract_request_and_catalogue_examples_match_their_models() -> None:
    """The source examples (before the contract is generated) against the request and catalogue models."""
    for operation, model in (
        (examples.ZELFSTANDIGENWET, ZelfstandigenwetRequest),
        (examples.CROSS_BORDER, CrossBorderRequest),
    ):
        for example in operation["requestBody"]["content"]["application/json"]["examples"].values():
            assert (
                model.model_validate(example["value"]).model_dump(mode="json", exclude_unset=True) == example["value"]
            )


async def test_an_object_with_many_unknown_fields_is_one_error_counting_them(
    client: AsyncClient, account: Account
) -> None:
    """90,000 unknown fields answered 11 MB (one error each) after a second and a half of work; now one error."""
    engagement = {f"k{n:05d}": 0 for n in range(90_000)}
    response = await client.post(ZW, json={"engagement": engagement}, headers=account.live)
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {
            "field": "engagement",
            "message": "90000 fields this object does not take, such as `k00000`, `k00001`, `k00002`",
        }
    ]
    assert len(response.content) < 1000


async def test_a_few_unknown_fields_are_named_each_with_the_nearest_known_one(
    client: AsyncClient, account: Account
) -> None:
    response = await client.post(ZW, json={"engagement": {"hourly_rate_eru": 80, "zzz": 1}}, headers=account.live)
    errors = {error["field"]: error["message"] for error in response.json()["errors"]}
    assert errors["engagement.hourly_rate_eru"] == "Extra inputs are not permitted; did you mean `hourly_rate_eur`?"
    assert errors["engagement.zzz"] == "Extra inputs are not permitted"
