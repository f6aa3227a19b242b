"""`GET /v1/classifications/{id}/dossier`: the signed dossier, as JSON and as a PDF an auditor reads."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import orjson
from httpx import AsyncClient, Response
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.classify.language import Language
from compliance_api.classify.models import Classification
from compliance_api.classify.rescore import rescore
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.classify.schemas import Engagement
from compliance_api.classify.verdict import Country
from compliance_api.kit.environment import Environment
from tests.classify.conftest import Account, make_account
from tests.dossier.conftest import attached_jws, pdf_text, save_first_page, verify_jws
from tests.factories import create_user

ZW = "/v1/classify/zelfstandigenwet"
CB = "/v1/classify/cross-border"
PDF = {"Accept": "application/pdf"}
# EUR 37 an hour, own tools and liability cover, a substitute allowed, short and part time, but hours set by the
# client; profit risk and the rest left open: safe under the 2025 threshold (EUR 36), where the level of pay weighs
# towards self-employment, not under the 2026 one (EUR 38); re-scored back and forth, it changes three times.
ENGAGEMENT = {
    "hourly_rate_eur": 37,
    "months_duration": 3,
    "days_per_week": 2,
    "own_tools": True,
    "own_liability": True,
    "sets_own_hours": False,
    "can_delegate": True,
}
QUESTIONS = {question.input: question.text[Language.en] for question in packaged_rulesets().dutch.questions}
DUTCH = {"engagement": ENGAGEMENT, "as_of": "2025-03-01", "reference": "contract-37", "monitor": True}


def dossier_url(classification_id: str, query: str = "") -> str:
    return f"/v1/classifications/{classification_id}/dossier{query}"


async def _classify(client: AsyncClient, path: str, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    answer = await client.post(path, json=body, headers=headers)
    assert answer.status_code == 200, answer.text
    verdict: dict[str, Any] = answer.json()
    return verdict


async def _rescore_three_times(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    now = dt.datetime.now(dt.UTC)
    for as_of in (dt.date(2026, 3, 1), dt.date(2025, 6, 1), dt.date(2026, 9, 1)):
        async with sessionmaker.begin() as session:
            report = await rescore(
                session, packaged_rulesets(), Environment.live, as_of=as_of, now=now, since=now - dt.timedelta(days=1)
            )
        assert len(report.changes) == 1


def _json(answer: Response) -> dict[str, Any]:
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


async def test_the_json_dossier_states_every_question_the_verdict_sources_history_and_asker(
    client: AsyncClient, account: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    verdict = await _classify(client, ZW, DUTCH, {**account.live, "X-Request-Id": "req-dossier-0001"})
    await _rescore_three_times(sessionmaker)

    answer = await client.get(dossier_url(verdict["id"]), headers=account.live)
    body = _json(answer)
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["vary"] == "Accept"
    dossier = body["dossier"]
    assert await verify_jws(client, body["jws"]) == dossier, "the JWS's payload is the dossier, verified by PyJWT"

    assert dossier["classification_id"] == verdict["id"]
    assert (dossier["environment"], dossier["livemode"], dossier["language"]) == ("live", True, "en")
    assert dossier["reference"] == "contract-37"
    questions = {q["name"]: q for q in dossier["questions"]}
    assert list(questions) == list(Engagement.model_fields), "every question of the schema, in its order"
    assert questions["hourly_rate_eur"] == {
        "name": "hourly_rate_eur",
        "question": "What is the hourly rate in EUR, excluding VAT?",
        "answered": True,
        "answer": 37,
        "true_when": "yes",
    }
    assert (questions["profit_risk"]["answered"], questions["profit_risk"]["answer"]) == (False, None)
    assert (questions["other_clients_count"]["answered"], questions["own_tools"]["answer"]) == (False, True)
    assert dossier["verdict"]["original"] == "safe"
    assert dossier["verdict"]["current"] == verdict_after_2026(dossier)
    assert {c["name"]: c["legal_basis"] for c in dossier["criteria"]} == {
        c["id"]: c["legal_basis"] for c in verdict["criteria"]
    }
    assert (dossier["ruleset"]["id"], bool(dossier["ruleset"]["law"])) == ("nl-zw", True)
    assert (dossier["threshold"]["name"], dossier["threshold"]["amount_eur"]) == ("tariefgrens", 36.0)
    assert [(h["previous_verdict"], h["as_of"]) for h in dossier["history"]] == [
        ("safe", "2026-03-01"),
        (dossier["history"][0]["verdict"], "2025-06-01"),
        ("safe", "2026-09-01"),
    ]
    assert dossier["history"][0]["changes"][0] == {
        "what": "threshold",
        "name": "tariefgrens",
        "previous": 36.0,
        "new": 38.0,
    }
    asked = dossier["asked"]
    assert asked["account"]["email"] == account.user.email
    assert (asked["channel"], asked["token"]["name"], asked["dashboard_user"]) == ("api", "test", None)
    assert asked["request_id"] == "req-dossier-0001"
    assert dossier["verification"]["kid"] == _kid(body["jws"])
    assert dossier["verification"]["jwks_url"].endswith("/.well-known/jwks.json")


def verdict_after_2026(dossier: dict[str, Any]) -> str:
    current: str = dossier["history"][-1]["verdict"]
    assert current in {"risky", "unsafe"}
    return current


def _kid(token: str) -> str:
    import jwt

    kid: str = jwt.get_unverified_header(token)["kid"]
    return kid


async def test_the_pdf_shows_the_verdict_answers_sources_and_history_and_carries_the_jws(
    client: AsyncClient, account: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    verdict = await _classify(client, ZW, DUTCH, {**account.live, "X-Request-Id": "req-dossier-0002"})
    await _rescore_three_times(sessionmaker)

    answer = await client.get(dossier_url(verdict["id"]), headers={**account.live, **PDF})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "application/pdf"
    assert answer.headers["content-disposition"] == f'attachment; filename="dossier-{verdict["id"]}.pdf"'
    pdf = answer.content
    assert pdf.startswith(b"%PDF-")
    assert save_first_page(pdf, "dutch-en-three-rescores").stat().st_size > 10_000
    text = pdf_text(pdf)
    for expected in (
        "Classification dossier",
        "contract-37",
        verdict["id"],
        "Verdict as first answered safe",
        *(
            f"{QUESTIONS[field]} {answer}"
            for field, answer in (("hourly_rate_eur", "37"), ("profit_risk", "not answered"), ("can_delegate", "yes"))
        ),
        "Dutch hourly-rate threshold (tariefgrens): €36.00, valid from 1 January 2025",
        "req-dossier-0002",
        account.user.email,
        "Re-score history",
        "Threshold: Dutch hourly-rate threshold (tariefgrens)",
        "€38.00",
        "under the law of 2026-09-01",
    ):
        assert expected in text, expected
    for criterion in verdict["criteria"]:
        assert criterion["legal_basis"]["text"][:40] in text, criterion["id"]

    jws = attached_jws(pdf)
    payload = await verify_jws(client, jws)
    assert payload["classification_id"] == verdict["id"]
    # pdftotext joins a line that ends in "-" with the next as a hyphenated word, so hyphens are left out.
    printed = text.replace(" ", "").replace("-", "")
    assert jws.rsplit(".", 1)[1].replace("-", "") in printed, "the signature is printed"
    assert "jwt.PyJWKClient" in text, "with the line that checks it"


async def test_a_french_cross_border_dossier_asks_the_country_s_criteria_in_french(
    client: AsyncClient, account: Account
) -> None:
    answers = {"not_registered_as_independent": True, "client_gives_orders": True, "client_can_sanction": False}
    body = {"country": "FR", "criteria": answers}
    verdict = await _classify(client, CB, body, {**account.live, "Accept-Language": "fr"})
    answer = await client.get(dossier_url(verdict["id"], "?format=pdf"), headers=account.live)
    assert answer.headers["content-type"] == "application/pdf"
    text = pdf_text(answer.content)
    criteria = packaged_rulesets().cross_border[Country.FR].criteria
    for criterion in criteria:
        assert criterion.question[Language.fr][:30] in text, criterion.name
        assert criterion.description[Language.fr][:30] in text, criterion.name
        assert criterion.name not in text, "a criterion is named by its text, never by its id"
    assert "Dossier de qualification" in text
    assert "Test transfrontalier : France" in text
    assert f"{criteria[3].question[Language.fr]} non" in text
    assert f"{criteria[0].question[Language.fr]} non" in text, "not registered: no to the question asked positively"
    assert text.count("sans réponse") >= len(criteria) - 3
    assert "lien de subordination" in text.lower() or "subordination" in text
    save_first_page(answer.content, "cross-border-fr")

    signed = _json(await client.get(dossier_url(verdict["id"], "?format=json"), headers={**account.live, **PDF}))
    assert [q["name"] for q in signed["dossier"]["questions"]] == [c.name for c in criteria]
    assert signed["dossier"]["verdict"]["rules_applied"] == verdict["rules_applied"]


async def test_a_classification_from_before_request_ids_says_not_recorded(
    client: AsyncClient, account: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    verdict = await _classify(client, ZW, DUTCH, account.live)
    async with sessionmaker.begin() as session:
        await session.execute(
            update(Classification).where(Classification.id == uuid.UUID(verdict["id"])).values(request_id=None)
        )
    signed = _json(await client.get(dossier_url(verdict["id"]), headers=account.live))
    assert signed["dossier"]["asked"]["request_id"] is None
    text = pdf_text((await client.get(dossier_url(verdict["id"]), headers={**account.live, **PDF})).content)
    assert "Request id not recorded" in text


async def test_a_dashboard_submission_names_the_signed_in_user(
    client: AsyncClient, account: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    verdict = await _classify(client, ZW, DUTCH, account.live)
    colleague = await create_user(sessionmaker, email=f"hr-{uuid.uuid4().hex[:8]}@example.com")
    async with sessionmaker.begin() as session:
        await session.execute(
            update(Classification)
            .where(Classification.id == uuid.UUID(verdict["id"]))
            .values(token_id=None, asked_by_user_id=colleague.id)
        )
    asked = _json(await client.get(dossier_url(verdict["id"]), headers=account.live))["dossier"]["asked"]
    assert (asked["channel"], asked["token"]) == ("dashboard", None)
    assert asked["dashboard_user"] == {"id": str(colleague.id), "email": colleague.email}
    text = pdf_text((await client.get(dossier_url(verdict["id"]), headers={**account.live, **PDF})).content)
    assert f"the dashboard, by the signed-in user {colleague.email}" in text


async def test_another_account_or_the_other_environment_gets_404_never_403(
    client: AsyncClient,
    sandbox_client: AsyncClient,
    account: Account,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
) -> None:
    verdict = await _classify(client, ZW, DUTCH, account.live)
    other = await make_account(sessionmaker, pepper)
    for accept in ({}, PDF):
        stranger = await client.get(dossier_url(verdict["id"]), headers={**other.live, **accept})
        assert (stranger.status_code, stranger.json()["code"]) == (404, "not_found")
        sandbox = await sandbox_client.get(dossier_url(verdict["id"]), headers={**account.test, **accept})
        assert (sandbox.status_code, sandbox.json()["code"]) == (404, "in_other_environment"), "own: told where"
    unknown = await client.get(dossier_url(str(uuid.uuid4())), headers=account.live)
    assert unknown.status_code == 404
    assert stranger.headers["content-type"] == "application/problem+json"


async def test_a_sandbox_dossier_is_signed_with_the_sandbox_key_and_says_so(
    sandbox_client: AsyncClient, client: AsyncClient, account: Account
) -> None:
    verdict = await _classify(sandbox_client, ZW, DUTCH, account.test)
    signed = _json(await sandbox_client.get(dossier_url(verdict["id"]), headers=account.test))
    assert (signed["dossier"]["environment"], signed["dossier"]["livemode"]) == ("test", False)
    assert signed["dossier"]["verification"]["jwks_url"].startswith("http://sandbox.localhost")
    assert await verify_jws(sandbox_client, signed["jws"]) == signed["dossier"]
    production_keys = (await client.get("/.well-known/jwks.json")).json()["keys"]
    assert _kid(signed["jws"]) not in [key["kid"] for key in production_keys]
    pdf = await sandbox_client.get(dossier_url(verdict["id"]), headers={**account.test, **PDF})
    assert "SANDBOX: a test record, not a production assessment." in pdf_text(pdf.content)


async def test_accept_is_negotiated_and_format_overrides_it(client: AsyncClient, account: Account) -> None:
    verdict = await _classify(client, ZW, DUTCH, account.live)
    url = dossier_url(verdict["id"])
    cases = {
        "application/pdf": "application/pdf",
        "application/json": "application/json",
        "*/*": "application/json",
        "application/pdf;q=0.9, application/json;q=0.5": "application/pdf",
        "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8": "application/json",
    }
    for accept, media_type in cases.items():
        answer = await client.get(url, headers={**account.live, "Accept": accept})
        assert answer.headers["content-type"] == media_type, accept
    refused = await client.get(url, headers={**account.live, "Accept": "text/plain"})
    assert (refused.status_code, refused.json()["code"]) == (406, "not_acceptable")
    assert "application/pdf" in refused.json()["detail"]
    forced = await client.get(url + "?format=pdf", headers={**account.live, "Accept": "text/plain"})
    assert forced.headers["content-type"] == "application/pdf"
    bad = await client.get(url + "?format=docx", headers=account.live)
    assert (bad.status_code, bad.json()["code"]) == (400, "validation_failed")


async def test_the_signed_payload_is_the_dossier_as_compact_sorted_json(client: AsyncClient, account: Account) -> None:
    verdict = await _classify(client, ZW, DUTCH, account.live)
    signed = _json(await client.get(dossier_url(verdict["id"]), headers=account.live))
    import base64

    segment = signed["jws"].split(".")[1]
    raw = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    assert raw == orjson.dumps(signed["dossier"], option=orjson.OPT_SORT_KEYS)
