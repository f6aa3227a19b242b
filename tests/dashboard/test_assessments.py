"""`/freelancer/assessments`: a business user answers a test's questions and gets the verdict the API would give, kept
in the same audit trail, checked by the same request schemas and drawn from the same rate-limit bucket."""

from __future__ import annotations

import html
import re
import uuid

from fastapi import FastAPI
from httpx import AsyncClient, Response
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import User
from compliance_api.classify.language import Language
from compliance_api.classify.models import Classification
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.classify.verdict import Country
from compliance_api.kit.environment import Environment
from compliance_api.ratelimit.dependencies import LIMITER
from compliance_api.ratelimit.limiter import MemoryLimiter
from compliance_api.ratelimit.tiers import FREE, user_bucket
from tests.dashboard.conftest import FROZEN_CLOCK_US, csrf_of, sign_up
from tests.factories import bearer, create_token

Maker = async_sessionmaker[AsyncSession]
START = "/freelancer/assessments"
RESULT = re.compile(r"^/freelancer/assessments/(live|test)/([0-9a-f-]{36})$")
DUTCH_ANSWERS = {
    "hourly_rate_eur": "30,50",  # a decimal comma, as Dutch, French and German write it
    "months_duration": "18",
    "days_per_week": "5",
    "own_tools": "no",
    "sets_own_hours": "no",
    "can_delegate": "unknown",
}
DUTCH_BODY = {
    "hourly_rate_eur": 30.5,
    "months_duration": 18,
    "days_per_week": 5,
    "own_tools": False,
    "sets_own_hours": False,
}


async def _business(browser: AsyncClient, sessionmaker: Maker, email: str = "hr@example.com") -> User:
    await sign_up(browser, email, kind="business")
    async with sessionmaker() as session:
        return await accounts_service.get_by_email_or_raise(session, email=email)


async def _submit(
    browser: AsyncClient,
    answers: dict[str, str],
    *,
    questionnaire: str = "zelfstandigenwet",
    environment: str = "live",
    headers: dict[str, str] | None = None,
    action: str = "save",
) -> Response:
    form = await browser.get(
        f"{START}/new", params={"questionnaire": questionnaire, "environment": environment}, headers=headers
    )
    assert form.status_code == 200, form.text
    data = {
        "questionnaire": questionnaire,
        "environment": environment,
        "csrf_token": csrf_of(form),
        "action": action,
        **answers,
    }
    return await browser.post(START, data=data, headers=headers)


def _made(answer: Response) -> tuple[str, str]:
    assert answer.status_code == 303, answer.text
    found = RESULT.match(answer.headers["location"])
    assert found is not None, answer.headers["location"]
    return found.group(1), found.group(2)


async def _stored(sessionmaker: Maker, classification_id: str) -> Classification:
    async with sessionmaker() as session:
        return await session.get_one(Classification, uuid.UUID(classification_id))


async def _count(sessionmaker: Maker) -> int:
    async with sessionmaker() as session:
        return int(await session.scalar(select(func.count()).select_from(Classification)) or 0)


def _values(page: str) -> dict[str, str]:
    """The form's values as the browser would send them again: text inputs and the checked radios."""
    texts = dict(re.findall(r'<input id="([a-z_]+)" name="\1" type="text"[^>]* value="([^"]*)"', page))
    checked = dict(re.findall(r'<input type="radio" name="([a-z_]+)" value="([a-z]+)" checked>', page))
    return {name: html.unescape(value) for name, value in {**texts, **checked}.items()}


async def test_the_dutch_questionnaire_asks_each_question_with_why_and_its_legal_source(
    browser: AsyncClient, sessionmaker: Maker
) -> None:
    await _business(browser, sessionmaker)
    start = await browser.get(START)
    assert start.status_code == 200
    assert "Dutch test (Zelfstandigenwet)" in start.text
    assert "Cross-border: Belgium" in start.text
    form = await browser.get(f"{START}/new", params={"questionnaire": "zelfstandigenwet", "environment": "live"})
    page = form.text
    dutch = packaged_rulesets().dutch
    for question in dutch.questions:
        block = page[page.index(f'id="q-{question.input}"') :]
        block = html.unescape(block[: block.index("</fieldset>") if "</fieldset>" in block[:3000] else 3000])
        assert question.text[Language.en] in block
        assert f'id="{question.input}-why"' in block
        assert question.explanation[Language.en] in block
        assert question.basis in block
        part = page[page.index(f'id="q-{question.input}"') :]
        sources = part[part.index('<details class="sources">') : part.index("</details>")]
        assert html.escape(str(question.source_url)) in sources, "linked after its part's answers"
    booleans = [q for q in dutch.questions if q.kind == "boolean"]
    assert page.count('value="unknown" checked') == len(booleans) == 12, "every yes/no question starts at don't know"
    assert "<script" not in page


async def test_a_submission_is_the_api_s_verdict_in_the_same_audit_trail(
    browser: AsyncClient, client: AsyncClient, sessionmaker: Maker, pepper: bytes
) -> None:
    user = await _business(browser, sessionmaker)
    environment, made = _made(await _submit(browser, {**DUTCH_ANSWERS, "reference": "contract-7"}))
    assert environment == "live"
    stored = await _stored(sessionmaker, made)
    assert stored.user_id == user.id
    assert stored.token_id is None, "no API token asked"
    assert stored.asked_by_user_id == user.id, "the person signed in to the dashboard asked"
    assert stored.request_id is not None, "the request it was asked in"
    assert stored.request_id.startswith("req_")
    assert stored.request == {"engagement": DUTCH_BODY, "reference": "contract-7", "dont_know": ["can_delegate"]}

    _, token = await create_token(sessionmaker, pepper, user=user)
    api = await client.post("/v1/classify/zelfstandigenwet", json=stored.request, headers=bearer(token))
    same = api.json()
    for name in ("verdict", "score", "criteria_hit", "unanswered", "presumption_of_employment"):
        assert stored.result[name] == same[name], name
    record = (await client.get(f"/v1/classifications/{made}", headers=bearer(token))).json()
    assert record["reference"] == "contract-7"
    assert record["request"] == stored.request
    listed = (await client.get("/v1/classifications", params={"reference": "contract-7"}, headers=bearer(token))).json()
    assert {item["id"] for item in listed["data"]} == {made, same["id"]}
    mine = (await browser.get(f"/freelancer/classifications/live/{made}")).text
    assert 'data-field="asked-by">hr@example.com, in the dashboard<' in mine
    assert f'href="/freelancer/assessments/live/{made}"' in mine
    theirs = (await browser.get(f"/freelancer/classifications/live/{same['id']}")).text
    assert 'data-field="asked-by">an API token of this account<' in theirs


async def test_a_risky_verdict_shows_the_verdict_s_next_questions_in_its_order(
    browser: AsyncClient, sessionmaker: Maker
) -> None:
    await _business(browser, sessionmaker)
    answers = {**DUTCH_ANSWERS, "days_per_week": "", "own_tools": "yes", "profit_risk": "yes"}
    _, made = _made(await _submit(browser, answers))
    page = html.unescape((await browser.get(f"{START}/live/{made}")).text)
    stored = await _stored(sessionmaker, made)
    assert stored.result["verdict"] == "risky"
    assert 'data-field="verdict">risky<' in page
    decided = page[page.index('id="decided"') : page.index('id="next"')]
    assert "employment is presumed" not in decided, "30.50 is below the tariefgrens, but its act is not in force"
    upcoming = page[page.index('id="next"') : page.index('id="answers"')]
    ranked = stored.result["next_questions"]
    assert ranked, "a risky verdict says what to answer next"
    assert re.findall(r'<a href="#q-([a-z_]+)">', upcoming) == [item["field"] for item in ranked]
    for item in ranked:
        assert item["summary"] in upcoming
        assert f'id="q-{item["field"]}"' in page, "each links to its question in the form below"
    assert 'data-field="asked-by">hr@example.com, in the dashboard<' in page


async def test_a_decided_verdict_shows_the_rule_and_the_answers_that_decided_it(
    browser: AsyncClient, sessionmaker: Maker
) -> None:
    await _business(browser, sessionmaker)
    answers = {"hourly_rate_eur": "80", "months_duration": "6", "works_under_instructions": "yes", "profit_risk": "no"}
    _, made = _made(await _submit(browser, answers))
    page = html.unescape((await browser.get(f"{START}/live/{made}")).text)
    result = (await _stored(sessionmaker, made)).result
    assert result["verdict"] == "unsafe"
    decided = page[page.index('id="decided"') : page.index('id="next"')]
    assert [rule["rule"] for rule in result["decided_by"]] == ["instructions_without_own_risk"]
    for rule in result["decided_by"]:
        assert rule["reason"] in decided
        assert rule["legal_basis"]["text"] in decided
    questions = {q.input: q.text[Language.en] for q in packaged_rulesets().dutch.questions}
    assert set(result["deciding_facts"]) == {"works_under_instructions", "profit_risk"}
    assert f"{questions['works_under_instructions']} <strong>yes</strong>" in decided
    assert f"{questions['profit_risk']} <strong>no</strong>" in decided
    assert questions["hourly_rate_eur"] not in decided, "the rate decided nothing"
    upcoming = page[page.index('id="next"') : page.index('id="answers"')]
    assert "the rules above decide the verdict" in upcoming
    detail = html.unescape((await browser.get(f"/freelancer/classifications/live/{made}")).text)
    [rule] = [r for r in packaged_rulesets().dutch.decisive if r.id == "instructions_without_own_risk"]
    assert rule.reason[Language.en] in detail, "the verdict page says what decided it too"
    assert "instructions_without_own_risk" not in detail, "by its reason, not its id"


async def test_answers_come_back_filled_in_and_a_change_is_a_new_verdict(
    browser: AsyncClient, sessionmaker: Maker
) -> None:
    await _business(browser, sessionmaker)
    _, first = _made(await _submit(browser, {**DUTCH_ANSWERS, "reference": "contract-8"}))
    page = await browser.get(f"{START}/live/{first}")
    values = _values(page.text)
    assert values == {
        "hourly_rate_eur": "30.50",
        "months_duration": "18",
        "days_per_week": "5",
        "other_clients_count": "",
        "reference": "contract-8",
        "own_tools": "no",
        "own_liability": "unknown",
        "sets_own_hours": "no",
        "can_delegate": "unknown",
        "profit_risk": "unknown",
        "works_under_instructions": "unknown",
        "client_supervises_work": "unknown",
        "embedded_in_organisation": "unknown",
        "structural_work": "unknown",
        "same_work_as_employees": "unknown",
        "terms_set_by_client": "unknown",
        "acts_as_entrepreneur": "unknown",
    }
    changed = {**values, "hourly_rate_eur": "95", "other_clients_count": "6", "profit_risk": "yes"}
    again = await browser.post(
        START,
        data={
            "questionnaire": "zelfstandigenwet",
            "environment": "live",
            "csrf_token": csrf_of(page),
            "action": "save",
            **changed,
        },
    )
    _, second = _made(again)
    assert second != first
    assert (await _stored(sessionmaker, first)).request["engagement"]["hourly_rate_eur"] == 30.5, "kept as it was"
    later = await _stored(sessionmaker, second)
    assert later.request["engagement"] == {
        **DUTCH_BODY,
        "hourly_rate_eur": 95,
        "other_clients_count": 6,
        "profit_risk": True,
    }
    assert later.reference == "contract-8"
    listed = (await browser.get("/freelancer/classifications", params={"reference": "contract-8"})).text
    assert listed.count("data-classification-id=") == 2


async def test_answers_the_api_would_refuse_are_shown_again_with_what_to_correct(
    browser: AsyncClient, sessionmaker: Maker
) -> None:
    await _business(browser, sessionmaker)
    refused = await _submit(
        browser,
        {
            "hourly_rate_eur": "lots",
            "days_per_week": "8",
            "months_duration": "2.5",
            "own_tools": "maybe",
            "reference": "r" * 201,
        },
    )
    assert refused.status_code == 400
    page = refused.text
    for name in ("hourly_rate_eur", "days_per_week", "months_duration", "own_tools", "reference"):
        assert f'id="{name}-error"' in page, name
    assert "Enter a whole number from 0 to 7" in page
    assert 'value="lots"' in page, "what was typed comes back"
    assert await _count(sessionmaker) == 0, "nothing kept"


async def test_a_cross_border_questionnaire_uses_the_country_s_criteria_and_rules(
    browser: AsyncClient, sessionmaker: Maker
) -> None:
    await _business(browser, sessionmaker)
    ruleset = packaged_rulesets().cross_border[Country.DE]
    form = (await browser.get(f"{START}/new", params={"questionnaire": "DE", "environment": "test"})).text
    for criterion in ruleset.criteria:
        assert f'id="q-{criterion.name}"' in form
        assert criterion.question[Language.en] in html.unescape(form)
    answers = {
        "subject_to_instructions": "yes",
        "integrated_in_client_organisation": "yes",
        "fixed_working_hours": "no",
        "no_entrepreneurial_risk": "no",  # asked positively: "Does the freelancer bear an entrepreneurial risk…?"
    }
    environment, made = _made(await _submit(browser, answers, questionnaire="DE", environment="test"))
    assert environment == "test"
    stored = await _stored(sessionmaker, made)
    assert stored.environment is Environment.test
    assert stored.request == {
        "country": "DE",
        "criteria": {
            "subject_to_instructions": True,
            "integrated_in_client_organisation": True,
            "fixed_working_hours": False,
            "no_entrepreneurial_risk": True,
        },
    }
    assert stored.result["verdict"] == "unsafe"
    page = (await browser.get(f"{START}/test/{made}")).text
    decided = html.unescape(page[page.index('id="decided"') : page.index('id="next"')])
    assert "BSG Herrenberg" in decided, "the rule that decided it"
    assert stored.result["decided_by"][0]["legal_basis"]["text"] in decided
    asked = {c.name: (c.question[Language.en], "yes" if c.true_when == "yes" else "no") for c in ruleset.criteria}
    for name in stored.result["deciding_facts"]:
        assert f"{asked[name][0]} <strong>{asked[name][1]}</strong>" in decided, name
    again = (await browser.get(f"{START}/test/{made}")).text
    assert '<input type="radio" name="no_entrepreneurial_risk" value="no" checked>' in again, "shown as answered"


async def test_the_questionnaire_is_in_the_reader_s_language_and_so_is_the_verdict(
    browser: AsyncClient, sessionmaker: Maker
) -> None:
    await _business(browser, sessionmaker)
    german = {"Accept-Language": "de-DE"}
    form = (
        await browser.get(f"{START}/new", params={"questionnaire": "FR", "environment": "live"}, headers=german)
    ).text
    ruleset = packaged_rulesets().cross_border[Country.FR]
    assert ruleset.criteria[1].question[Language.de] in html.unescape(form)
    assert "Weiß nicht" in form
    _, made = _made(await _submit(browser, {"client_gives_orders": "yes"}, questionnaire="FR", headers=german))
    assert (await _stored(sessionmaker, made)).language == "de"
    dutch = (
        await browser.get(
            f"{START}/new", params={"questionnaire": "zelfstandigenwet"}, headers={"Accept-Language": "nl"}
        )
    ).text
    assert packaged_rulesets().dutch.questions[0].text[Language.nl] in html.unescape(dutch)


def _use_limiter(app: FastAPI, limiter: MemoryLimiter) -> None:
    """`limiter` for the gateway and for the pages alike."""
    app.state.services.limiter = limiter
    app.state.registry.put(LIMITER, limiter)


async def test_submissions_share_the_api_s_rate_limit_bucket_and_a_429_says_when_to_retry(
    app: FastAPI, browser: AsyncClient, client: AsyncClient, sessionmaker: Maker, pepper: bytes
) -> None:
    limiter = MemoryLimiter(clock=lambda: FROZEN_CLOCK_US)  # no refill while the test runs
    _use_limiter(app, limiter)
    user = await _business(browser, sessionmaker)
    _, token = await create_token(sessionmaker, pepper, user=user)
    before = await client.get("/v1/health", headers=bearer(token))
    _made(await _submit(browser, DUTCH_ANSWERS))
    after = await client.get("/v1/health", headers=bearer(token))
    assert int(after.headers["x-ratelimit-remaining"]) == int(before.headers["x-ratelimit-remaining"]) - 2

    while (await limiter.consume(user_bucket(user.id, Environment.live), FREE)).allowed:
        pass
    stored = await _count(sessionmaker)
    limited = await _submit(browser, {**DUTCH_ANSWERS, "months_duration": "42"})
    assert limited.status_code == 429
    assert int(limited.headers["retry-after"]) >= 1
    assert "60 requests a minute (bursts of 120), which your API tokens share" in limited.text
    assert "Send them again in 1 second" in limited.text
    assert 'value="42"' in limited.text, "the answers are kept"
    assert await _count(sessionmaker) == stored
    assert (await client.get("/v1/health", headers=bearer(token))).status_code == 429, "one bucket"
    sandbox = await _submit(browser, DUTCH_ANSWERS, environment="test")
    assert sandbox.status_code == 303, "the sandbox has its own bucket"


async def test_only_business_accounts_assess_and_forms_keep_the_csrf_rules(
    browser: AsyncClient, other_browser: AsyncClient, sessionmaker: Maker
) -> None:
    await sign_up(other_browser, "free@example.com")
    lancer = await other_browser.get(START)
    assert "Assessments are for business accounts" in lancer.text
    refused = await other_browser.post(
        START, data={"questionnaire": "zelfstandigenwet", "environment": "live", "csrf_token": csrf_of(lancer)}
    )
    assert refused.status_code == 403
    await _business(browser, sessionmaker)
    forged = await browser.post(
        START, data={"questionnaire": "zelfstandigenwet", "environment": "live", **DUTCH_ANSWERS}
    )
    assert forged.status_code == 403
    unknown = await browser.get(f"{START}/new", params={"questionnaire": "ES"})
    assert unknown.status_code == 400
    assert await _count(sessionmaker) == 0


async def test_another_account_s_assessment_is_not_found(
    browser: AsyncClient, other_browser: AsyncClient, sessionmaker: Maker
) -> None:
    await _business(browser, sessionmaker)
    _, made = _made(await _submit(browser, DUTCH_ANSWERS))
    await _business(other_browser, sessionmaker, "other@example.com")
    assert (await other_browser.get(f"{START}/live/{made}")).status_code == 404
    assert (await browser.get(f"{START}/test/{made}")).status_code == 404


async def test_the_usage_page_says_assessments_count_against_the_limits(
    browser: AsyncClient, sessionmaker: Maker
) -> None:
    await _business(browser, sessionmaker)
    page = (await browser.get("/freelancer/usage")).text
    assert "Assessments made in the dashboard count against these limits too." in page


async def test_numbers_are_read_and_shown_as_the_reader_writes_them(browser: AsyncClient, sessionmaker: Maker) -> None:
    await _business(browser, sessionmaker)
    dutch = {"Accept-Language": "nl"}
    _, made = _made(await _submit(browser, {"hourly_rate_eur": "1.250,50", "days_per_week": "4"}, headers=dutch))
    assert (await _stored(sessionmaker, made)).request["engagement"] == {"hourly_rate_eur": 1250.5, "days_per_week": 4}
    shown = _values((await browser.get(f"{START}/live/{made}", headers=dutch)).text)
    assert (shown["hourly_rate_eur"], shown["days_per_week"]) == ("1250,50", "4")
    _, english = _made(await _submit(browser, {"hourly_rate_eur": "1,250.50"}))
    assert (await _stored(sessionmaker, english)).request["engagement"] == {"hourly_rate_eur": 1250.5}


async def test_a_nul_character_is_refused_and_not_echoed(browser: AsyncClient, sessionmaker: Maker) -> None:
    await _business(browser, sessionmaker)
    refused = await _submit(browser, {**DUTCH_ANSWERS, "reference": "ref\x00erence"})
    assert refused.status_code == 400
    assert "\x00" not in refused.text
    assert 'value="reference"' in refused.text
    assert await _count(sessionmaker) == 0


async def test_a_check_shows_the_verdict_and_keeps_nothing_until_the_person_saves(
    app: FastAPI, browser: AsyncClient, client: AsyncClient, sessionmaker: Maker, pepper: bytes
) -> None:
    """Each check is the API's dry run: the verdict, what decided it and what to answer next, on the form itself,
    with no classification kept; it is drawn from the rate-limit bucket all the same. Saving keeps it."""
    _use_limiter(app, MemoryLimiter(clock=lambda: FROZEN_CLOCK_US))  # no refill while the test runs
    user = await _business(browser, sessionmaker)
    _, token = await create_token(sessionmaker, pepper, user=user)
    before = await client.get("/v1/health", headers=bearer(token))
    checked = await _submit(browser, {**DUTCH_ANSWERS, "reference": "contract-9"}, action="check")
    after = await client.get("/v1/health", headers=bearer(token))
    assert int(after.headers["x-ratelimit-remaining"]) == int(before.headers["x-ratelimit-remaining"]) - 2
    assert checked.status_code == 200, checked.text
    assert 'data-field="dry-run"' in checked.text
    assert re.search(r'data-field="verdict">\w+</span>', checked.text)
    assert "dossier.pdf" not in checked.text
    assert await _count(sessionmaker) == 0
    values = _values(checked.text)
    assert values["hourly_rate_eur"] == "30,50", "the answers come back as typed"
    assert values["reference"] == "contract-9"
    unlabelled = await browser.post(
        START,
        data={"questionnaire": "zelfstandigenwet", "environment": "live", "csrf_token": csrf_of(checked), **values},
    )
    assert unlabelled.status_code == 200, "only the save button keeps a verdict"
    assert await _count(sessionmaker) == 0
    data = {
        "questionnaire": "zelfstandigenwet",
        "environment": "live",
        "csrf_token": csrf_of(checked),
        "action": "save",
        **values,
    }
    _, saved = _made(await browser.post(START, data=data))
    assert (await _stored(sessionmaker, saved)).reference == "contract-9"
    assert await _count(sessionmaker) == 1


async def test_checks_and_saves_show_in_usage_and_the_request_log_and_the_verdicts_say_where_they_came_from(
    app: FastAPI, browser: AsyncClient, client: AsyncClient, sessionmaker: Maker, pepper: bytes
) -> None:
    """What the page says is counted is what usage and the log show: a check as the dry run it is, a save as the
    classification; the API's request log lists token requests only; the verdicts page names who asked."""
    user = await _business(browser, sessionmaker)
    _, token = await create_token(sessionmaker, pepper, user=user)
    assert (await _submit(browser, DUTCH_ANSWERS, action="check")).status_code == 200
    _, saved = _made(await _submit(browser, DUTCH_ANSWERS))
    by_api = await client.post("/v1/classify/zelfstandigenwet", json={"engagement": {}}, headers=bearer(token))
    await app.state.services.request_log.flush()

    log = (await browser.get("/freelancer/logs")).text
    assert log.count("/v1/classify/zelfstandigenwet/dry-run") == 1
    assert log.count('data-field="dry-run"') == 1
    assert log.count("<td>Dashboard") == 2
    usage = (await browser.get("/freelancer/usage")).text
    per_token = dict(re.findall(r'<th scope="row">(.+?)</th>\s*<td>(\d+)</td>', usage))
    assert per_token["Dashboard assessments (checks and saves)"] == "2", "one check and one save"
    assert [count for row, count in per_token.items() if row.endswith(f"<code>…{token[-4:]}</code>")] == ["1"]
    listed = (await client.get("/v1/requests", headers=bearer(token))).json()["data"]
    assert [entry["path"] for entry in listed] == ["/v1/classify/zelfstandigenwet"], "token requests only"

    verdicts = (await browser.get("/freelancer/classifications")).text
    rows = dict(
        re.findall(r'data-classification-id="([0-9a-f-]{36})".*?data-field="asked-by">([^<]+)<', verdicts, re.S)
    )
    assert rows == {saved: "the dashboard", by_api.json()["id"]: "an API token"}


async def test_a_risky_verdict_no_single_answer_changes_names_the_answers_that_together_would(
    browser: AsyncClient, sessionmaker: Maker
) -> None:
    """Two answers are below the floor of four: no single answer decides, so the page names the smallest sets of
    answers that would, as the verdict does, each with where it leads."""
    await _business(browser, sessionmaker)
    _, made = _made(await _submit(browser, {"works_under_instructions": "yes", "can_delegate": "no"}))
    result = (await _stored(sessionmaker, made)).result
    assert (result["verdict"], result["next_questions"], result["answer_set_search"]) == ("risky", [], "found")
    page = html.unescape((await browser.get(f"{START}/live/{made}")).text)
    upcoming = page[page.index('id="next"') : page.index('id="answers"')]
    assert "No single answer changes this verdict. These answers together would:" in upcoming
    assert "Every question is answered." not in upcoming
    assert re.findall(r'data-field="leads-to">(\w+)<', upcoming) == [
        found["verdict"] for found in result["next_answer_sets"]
    ]
    for found in result["next_answer_sets"]:
        for answer in found["answers"]:
            assert f'href="#q-{answer["field"]}"' in upcoming


async def test_a_check_that_no_single_answer_moves_names_the_answer_sets_too(
    browser: AsyncClient, sessionmaker: Maker
) -> None:
    """A dry run has no stored record, yet its page shows the answer sets as a saved verdict's page does (the page
    failed with a 500 when it read the language of a record that a check does not have)."""
    await _business(browser, sessionmaker)
    answers = {"subject_to_instructions": "yes", "integrated_in_client_organisation": "yes"}
    checked = await _submit(browser, answers, questionnaire="DE", environment="test", action="check")
    assert checked.status_code == 200, checked.text
    page = html.unescape(checked.text)
    assert "These answers together would:" in page
    assert re.findall(r'data-field="leads-to">(\w+)<', page)
    assert await _count(sessionmaker) == 0


async def test_the_belgian_questionnaire_asks_road_transport_s_sub_sector_in_the_reader_s_language(
    browser: AsyncClient, sessionmaker: Maker
) -> None:
    await _business(browser, sessionmaker)
    ruleset = packaged_rulesets().cross_border[Country.BE]
    transport = [criterion for criterion in ruleset.criteria if criterion.group == "transport"]
    assert len(transport) == 3
    for language, header in ((Language.nl, "nl-BE"), (Language.fr, "fr-BE"), (Language.de, "de-BE")):
        form = html.unescape(
            (
                await browser.get(
                    f"{START}/new",
                    params={"questionnaire": "BE", "environment": "live"},
                    headers={"Accept-Language": header},
                )
            ).text
        )
        for criterion in transport:
            assert f'id="q-{criterion.name}"' in form
            assert criterion.question[language] in form
    answers = {"in_presumption_sector": "yes", "transport_goods_logistics": "yes", "no_result_obligation": "no"}
    _, made = _made(await _submit(browser, answers, questionnaire="BE"))
    stored = await _stored(sessionmaker, made)
    assert stored.request["criteria"] == {
        "in_presumption_sector": True,
        "transport_goods_logistics": True,
        "no_result_obligation": True,  # asked positively: "Does the freelancer have an obligation of result…?"
    }
    assert "sector_presumption" not in {rule["id"] for rule in stored.result["decided_by"]}
