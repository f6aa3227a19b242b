"""Law-change alerts: monitored verdicts re-scored under the law of a date, stored as history, sent as events."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import uuid
from typing import Any

import pytest
from httpx import AsyncClient
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.classify import rescore as rescore_module
from compliance_api.classify import service
from compliance_api.classify.models import Classification, ClassificationVerdict
from compliance_api.classify.rescore import causes
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.classify.schemas import ZelfstandigenwetRequest
from compliance_api.classify.verdict_body import json_data
from compliance_api.config import Settings
from compliance_api.events.models import OutboxEvent
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.retention.jobs import run_once
from tests.classify.conftest import Account, caller_for, make_account
from tests.cli.conftest import invoke

ZW = "/v1/classify/zelfstandigenwet"
CB = "/v1/classify/cross-border"
VERDICT_CHANGED = "classification.verdict_changed"
FAVOURABLE = {
    "hourly_rate_eur": 37,
    "sets_own_hours": False,
    "own_tools": True,
    "own_liability": True,
    "can_delegate": True,
    "profit_risk": True,
}
"""Weighed safe while EUR 37 is above the tariefgrens (2025: EUR 36); with the 2026 threshold of EUR 38 the level of
pay weighs towards employment and the stated facts no longer point clearly one way (the rate presumption itself is
not in force)."""
THE_37_EURO_CASE = {"engagement": FAVOURABLE, "as_of": "2025-03-01", "reference": "contract-37", "monitor": True}
TODAY = dt.date(2026, 11, 25)


async def _events(sessionmaker: async_sessionmaker[AsyncSession]) -> list[dict[str, Any]]:
    async with sessionmaker() as session:
        rows = await session.scalars(
            select(OutboxEvent).where(OutboxEvent.type == VERDICT_CHANGED).order_by(OutboxEvent.created_at)
        )
        return [row.payload for row in rows]


async def _rescore(cli_env: dict[str, str], *args: str) -> dict[str, Any]:
    code, out, err = await asyncio.to_thread(invoke, cli_env, "classifications", "rescore", "--json", *args)
    assert code == 0, err
    report: dict[str, Any] = json.loads(out)
    return report


async def test_a_new_ruleset_version_rescores_a_monitored_verdict_and_never_alters_the_original(
    client: AsyncClient,
    account: Account,
    audit: GroupCommit,
    cli_env: dict[str, str],
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    """The law moves, the record stays: a verdict given under an earlier version of the Dutch ruleset (here: the
    current one without its decisive rules, weighing nothing below sixteen stated facts) is re-scored under the
    packaged version once, which emits `classification.verdict_changed` naming both versions; the original answer is
    kept as it was given."""
    current = packaged_rulesets()
    weighing = current.dutch.weighing.model_copy(update={"floor": 16})
    earlier = current.model_copy(
        update={
            "dutch": current.dutch.model_copy(
                update={
                    "version": dt.date(2026, 7, 9),
                    "valid_from": dt.date(2026, 7, 9),
                    "decisive": (),
                    "weighing": weighing,
                }
            )
        }
    )
    engagement = {
        "embedded_in_organisation": True,
        "client_supervises_work": True,
        "structural_work": True,
        "sets_own_hours": False,
    }
    body = ZelfstandigenwetRequest.model_validate({"engagement": engagement, "monitor": True, "reference": "law-moves"})
    original = await service.classify_engagement(
        audit, caller_for(account.user, Environment.live), body, earlier, utcnow()
    )
    assert original.verdict == "risky"
    assert original.ruleset.version.isoformat() == "2026-07-09"

    report = await _rescore(cli_env, "--as-of", TODAY.isoformat())
    assert (report["examined"], report["changed"]) == (1, 1)
    [event] = await _events(sessionmaker)
    assert event["previous_ruleset"] == {"id": "nl-zw", "version": "2026-07-09"}
    assert event["new_ruleset"] == {"id": "nl-zw", "version": current.dutch.version.isoformat()}
    assert (event["previous_verdict"], event["new_verdict"]) == ("risky", "unsafe")
    assert {"what": "ruleset", "name": "nl-zw", "previous": "2026-07-09", "new": current.dutch.version.isoformat()} in (
        event["causes"]
    )
    assert any(cause["what"] == "rule" and cause["new"] is True for cause in event["causes"])

    record = (await client.get(f"/v1/classifications/{original.id}", headers=account.live)).json()
    assert record["result"] == json_data(original), "the original answer is never altered"
    assert record["verdict"] == "unsafe"
    assert record["history"][0]["result"]["decided_by"][0]["rule"] == "authority_and_embedding"
    assert (await _rescore(cli_env, "--as-of", TODAY.isoformat()))["changed"] == 0, "once"


async def test_a_37_euro_engagement_safe_in_2025_becomes_risky_under_the_2026_threshold_once(
    client: AsyncClient, account: Account, cli_env: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    first = await client.post(ZW, json=THE_37_EURO_CASE, headers=account.live)
    assert first.status_code == 200
    original = first.json()
    assert (original["verdict"], original["tariefgrens"]["amount_eur"]) == ("safe", 36.0)

    report = await _rescore(cli_env, "--as-of", TODAY.isoformat())
    assert (report["examined"], report["changed"]) == (1, 1)

    [event] = await _events(sessionmaker)
    assert event["classification_id"] == original["id"]
    assert event["reference"] == "contract-37"
    assert event["previous_verdict"] == "safe"
    assert event["new_verdict"] in {"risky", "unsafe"}
    current = {"id": "nl-zw", "version": packaged_rulesets().dutch.version.isoformat()}
    assert event["previous_ruleset"] == event["new_ruleset"] == current
    assert event["as_of"] == TODAY.isoformat()
    assert event["causes"] == [
        {"what": "threshold", "name": "tariefgrens", "previous": 36.0, "new": 38.0},
        {"what": "criterion", "name": "rate_at_or_below_tariefgrens", "previous": False, "new": True},
    ]

    record = (await client.get(f"/v1/classifications/{original['id']}", headers=account.live)).json()
    assert record["verdict"] == event["new_verdict"]
    assert record["result"] == original, "the original audit record is never altered"
    [later] = record["history"]
    assert (later["previous_verdict"], later["verdict"], later["supersedes"]) == ("safe", event["new_verdict"], None)
    assert later["as_of"] == TODAY.isoformat()
    assert later["result"]["tariefgrens"]["amount_eur"] == 38.0

    again = await _rescore(cli_env, "--as-of", TODAY.isoformat())
    assert (again["examined"], again["changed"]) == (1, 0)
    assert len(await _events(sessionmaker)) == 1, "an unchanged verdict sends nothing"


async def test_each_change_supersedes_the_previous_one(
    client: AsyncClient, account: Account, cli_env: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    made = (await client.post(ZW, json=THE_37_EURO_CASE, headers=account.live)).json()
    await _rescore(cli_env, "--as-of", TODAY.isoformat())
    back = await _rescore(cli_env, "--as-of", "2025-03-01")
    assert back["changed"] == 1
    record = (await client.get(f"/v1/classifications/{made['id']}", headers=account.live)).json()
    first, second = record["history"]
    assert second["supersedes"] == first["id"]
    assert (second["previous_verdict"], second["verdict"], record["verdict"]) == (first["verdict"], "safe", "safe")
    assert len(await _events(sessionmaker)) == 2


async def test_a_dry_run_reports_and_keeps_nothing(
    client: AsyncClient, account: Account, cli_env: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await client.post(ZW, json=THE_37_EURO_CASE, headers=account.live)
    report = await _rescore(cli_env, "--as-of", TODAY.isoformat(), "--dry-run")
    assert (report["dry_run"], report["changed"]) == (True, 1)
    assert report["changes"][0]["new_verdict"] in {"risky", "unsafe"}
    assert await _events(sessionmaker) == []
    async with sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(ClassificationVerdict)) == 0


async def test_only_monitored_classifications_of_that_environment_are_rescored(
    client: AsyncClient,
    sandbox_client: AsyncClient,
    account: Account,
    cli_env: dict[str, str],
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    await client.post(ZW, json={**THE_37_EURO_CASE, "monitor": False}, headers=account.live)
    await sandbox_client.post(ZW, json=THE_37_EURO_CASE, headers=account.test)
    live = await _rescore(cli_env, "--as-of", TODAY.isoformat())
    assert (live["examined"], live["changed"]) == (0, 0)
    sandbox = await _rescore(cli_env, "--as-of", TODAY.isoformat(), "--env", "test")
    assert (sandbox["examined"], sandbox["changed"]) == (1, 1)
    [event] = await _events(sessionmaker)
    async with sessionmaker() as session:
        [row] = await session.scalars(select(OutboxEvent).where(OutboxEvent.type == VERDICT_CHANGED))
    assert row.environment.value == "test"
    assert event["kind"] == "zelfstandigenwet"


async def test_cross_border_verdicts_are_rescored_too(
    client: AsyncClient, account: Account, cli_env: dict[str, str]
) -> None:
    body = {"country": "DE", "criteria": {"subject_to_instructions": True}, "monitor": True}
    made = (await client.post(CB, json=body, headers=account.live)).json()
    report = await _rescore(cli_env, "--as-of", TODAY.isoformat())
    assert (report["examined"], report["changed"]) == (1, 0)
    record = (await client.get(f"/v1/classifications/{made['id']}", headers=account.live)).json()
    assert (record["verdict"], record["history"]) == (made["verdict"], [])


async def test_monitoring_is_switched_off_by_its_owner_only(
    client: AsyncClient,
    sandbox_client: AsyncClient,
    account: Account,
    cli_env: dict[str, str],
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
) -> None:
    made = (await client.post(ZW, json=THE_37_EURO_CASE, headers=account.live)).json()
    path = f"/v1/classifications/{made['id']}"
    stranger = await make_account(sessionmaker, pepper)
    assert (await client.patch(path, json={"monitor": False}, headers=stranger.live)).status_code == 404
    assert (await sandbox_client.patch(path, json={"monitor": False}, headers=account.test)).status_code == 404
    for bad in ({}, {"monitor": "no"}, {"monitor": False, "verdict": "safe"}):
        answer = await client.patch(path, json=bad, headers=account.live)
        assert answer.status_code == 400, bad
    switched = await client.patch(path, json={"monitor": False}, headers=account.live)
    assert switched.status_code == 200
    assert switched.json()["monitor"] is False
    assert (await _rescore(cli_env, "--as-of", TODAY.isoformat()))["examined"] == 0
    assert await _events(sessionmaker) == []
    assert (await client.get(path, headers=account.live)).json()["monitor"] is False
    async with sessionmaker() as session:
        stored = await session.get(Classification, uuid.UUID(made["id"]))
    assert stored is not None
    assert stored.result["monitor"] is True, "the verdict as answered is kept; only the setting changed"


async def test_the_worker_rescores_once_a_day_and_again_under_new_rulesets(
    client: AsyncClient,
    account: Account,
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await client.post(ZW, json=THE_37_EURO_CASE, headers=account.live)
    noon = dt.datetime(2026, 11, 25, 12, tzinfo=dt.UTC)
    assert await run_once(sessionmaker, settings, now=noon)
    assert len(await _events(sessionmaker)) == 1
    await client.post(ZW, json={**THE_37_EURO_CASE, "reference": "second"}, headers=account.live)
    assert await run_once(sessionmaker, settings, now=noon + dt.timedelta(hours=1))
    assert len(await _events(sessionmaker)) == 1, "the second run that day under the same rulesets did nothing"
    monkeypatch.setattr("compliance_api.retention.jobs.rulesets_signature", lambda _: "nl-zw@2027-01-01")
    assert await run_once(sessionmaker, settings, now=noon + dt.timedelta(hours=2))
    assert [event["reference"] for event in await _events(sessionmaker)] == ["contract-37", "second"]
    monkeypatch.undo()
    await client.post(ZW, json={**THE_37_EURO_CASE, "reference": "third"}, headers=account.live)
    assert await run_once(sessionmaker, settings, now=noon + dt.timedelta(days=1))
    assert [event["reference"] for event in await _events(sessionmaker)] == ["contract-37", "second", "third"]


def test_causes_name_the_ruleset_threshold_criteria_and_rules_that_changed() -> None:
    previous = {
        "ruleset": {"id": "be-arbeidsrelatiewet", "version": "2026-07-09"},
        "tariefgrens": {"value": 32},
        "criteria": [{"name": "a", "met": True}, {"name": "b", "met": False}],
        "rules_applied": [{"reason": "kept"}, {"reason": "gone"}],
    }
    new = {
        "ruleset": {"id": "be-arbeidsrelatiewet", "version": "2026-11-25"},
        "tariefgrens": {"value": 33},
        "criteria": [{"name": "a", "met": True}, {"name": "b", "met": True}],
        "rules_applied": [{"reason": "kept"}, {"reason": "new"}],
    }
    assert causes(previous, new) == [
        {"what": "ruleset", "name": "be-arbeidsrelatiewet", "previous": "2026-07-09", "new": "2026-11-25"},
        {"what": "threshold", "name": "tariefgrens", "previous": 32.0, "new": 33.0},
        {"what": "criterion", "name": "b", "previous": False, "new": True},
        {"what": "rule", "name": "new", "previous": False, "new": True},
        {"what": "rule", "name": "gone", "previous": True, "new": False},
    ]
    assert causes(previous, previous) == []


async def test_a_rescore_reports_its_progress_page_by_page(
    client: AsyncClient,
    account: Account,
    sessionmaker: async_sessionmaker[AsyncSession],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rescore_module, "PAGE", 2)
    for _ in range(5):
        assert (await client.post(ZW, json=THE_37_EURO_CASE, headers=account.live)).status_code == 200
    since = dt.datetime.now(dt.UTC) - dt.timedelta(days=1)
    heard: list[int] = []
    async with sessionmaker.begin() as session:
        total = await rescore_module.count_monitored(session, Environment.live, since)
        report = await rescore_module.rescore(
            session,
            packaged_rulesets(),
            Environment.live,
            as_of=TODAY,
            now=dt.datetime.now(dt.UTC),
            since=since,
            progress=heard.append,
        )
    assert total == report.examined == 5
    assert heard == [2, 2, 1]
    assert len(report.changes) == 5
    async with sessionmaker() as session:
        current = set(await session.scalars(select(Classification.verdict)))
        stored = await session.scalar(select(func.count()).select_from(ClassificationVerdict))
    assert "safe" not in current
    assert stored == 5
    assert len(await _events(sessionmaker)) == 5
