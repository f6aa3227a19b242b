"""Law-change alerts: re-score monitored classifications under the rules and thresholds in force on a date.

A changed verdict is stored as a new `ClassificationVerdict` linked to the one it supersedes (the audit record itself
is never altered) and emits `classification.verdict_changed` in the same transaction. An unchanged verdict stores
nothing, so re-scoring twice on the same date changes nothing the second time.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson
from sqlalchemy import Row
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.classify import queries, views
from compliance_api.classify.crossborder import assess_criteria
from compliance_api.classify.dutch import assess_engagement
from compliance_api.classify.language import Language
from compliance_api.classify.models import ClassificationKind
from compliance_api.classify.ruleset import RulesetHeader, Rulesets
from compliance_api.classify.schemas import CrossBorderRequest, ZelfstandigenwetRequest
from compliance_api.classify.verdict_body import VerdictBody, json_data
from compliance_api.events.service import outbox_row
from compliance_api.events.types import EventName
from compliance_api.kit.environment import Environment

VERDICT_CHANGED = EventName.CLASSIFICATION_VERDICT_CHANGED
PAGE = 2000


@dataclass(frozen=True, slots=True)
class VerdictChange:
    classification_id: uuid.UUID
    kind: ClassificationKind
    user_id: uuid.UUID
    reference: str | None
    previous_verdict: str
    new_verdict: str
    previous_ruleset: dict[str, str]
    new_ruleset: dict[str, str]
    as_of: dt.date
    causes: list[dict[str, Any]]

    def payload(self) -> dict[str, Any]:
        """The `classification.verdict_changed` event's data."""
        return {
            "classification_id": str(self.classification_id),
            "user_id": str(self.user_id),
            "kind": self.kind.value,
            "reference": self.reference,
            "previous_verdict": self.previous_verdict,
            "new_verdict": self.new_verdict,
            "previous_ruleset": self.previous_ruleset,
            "new_ruleset": self.new_ruleset,
            "as_of": self.as_of.isoformat(),
            "causes": self.causes,
        }


@dataclass(slots=True)
class RescoreReport:
    environment: Environment
    as_of: dt.date
    dry_run: bool
    examined: int = 0
    changes: list[VerdictChange] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "environment": self.environment.value,
            "as_of": self.as_of.isoformat(),
            "dry_run": self.dry_run,
            "examined": self.examined,
            "changed": len(self.changes),
            "changes": [change.payload() for change in self.changes],
        }


def rulesets_signature(rulesets: Rulesets) -> str:
    """Every loaded ruleset's id and version: a start that changes this re-scores once more that day."""
    headers: list[RulesetHeader] = [rulesets.dutch, *rulesets.cross_border.values()]
    return ",".join(sorted(f"{ruleset.id}@{ruleset.version.isoformat()}" for ruleset in headers))


def rescored_verdict(record: Scorable, rulesets: Rulesets, as_of: dt.date, now: dt.datetime) -> VerdictBody:
    """The record's request judged as of `as_of` with the loaded rulesets, as a verdict body with the record's id,
    written in the record's language (so its rule reasons compare with the ones it had)."""
    raw = orjson.dumps(record.request)
    language = Language[record.language]
    record_id = uuid.UUID(int=record.id.int)  # asyncpg reads a uuid as a type of its own, which orjson does not write
    if record.kind is ClassificationKind.zelfstandigenwet:
        dutch = ZelfstandigenwetRequest.model_validate_json(raw)
        engagement = dutch.engagement.model_dump()
        assessment = assess_engagement(rulesets.dutch, engagement, as_of, language, frozenset(dutch.dont_know))
        return views.dutch_verdict(
            assessment,
            rulesets.dutch,
            rulesets.phrases,
            id=record_id,
            created_at=now,
            tracked=dutch,
            livemode=record.environment is Environment.live,
        )
    cross_border = CrossBorderRequest.model_validate_json(raw)
    ruleset = rulesets.cross_border[cross_border.country]
    return views.cross_border_verdict(
        assess_criteria(ruleset, cross_border.criteria, as_of, language, frozenset(cross_border.dont_know)),
        rulesets.phrases,
        id=record_id,
        created_at=now,
        tracked=cross_border,
        livemode=record.environment is Environment.live,
    )


def causes(previous: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """What made the difference: the ruleset version, the threshold, and each criterion or rule that changed."""
    found: list[dict[str, Any]] = []
    old_version, new_version = previous["ruleset"]["version"], new["ruleset"]["version"]
    if old_version != new_version:
        found.append({"what": "ruleset", "name": new["ruleset"]["id"], "previous": old_version, "new": new_version})
    old_threshold, new_threshold = _threshold(previous), _threshold(new)
    if old_threshold != new_threshold:
        found.append({"what": "threshold", "name": "tariefgrens", "previous": old_threshold, "new": new_threshold})
    old_criteria, new_criteria = _criteria(previous), _criteria(new)
    for name in sorted(old_criteria.keys() | new_criteria.keys()):
        if old_criteria.get(name) != new_criteria.get(name):
            found.append(
                {"what": "criterion", "name": name, "previous": old_criteria.get(name), "new": new_criteria.get(name)}
            )
    old_rules, new_rules = _rules(previous), _rules(new)
    found += [
        {"what": "rule", "name": reason, "previous": False, "new": True} for reason in sorted(new_rules - old_rules)
    ]
    found += [
        {"what": "rule", "name": reason, "previous": True, "new": False} for reason in sorted(old_rules - new_rules)
    ]
    return found


def _threshold(verdict: dict[str, Any]) -> float | None:
    threshold = verdict.get("tariefgrens")
    if threshold is None:
        return None
    return float(threshold.get("amount_eur", threshold.get("value")))


def _criteria(verdict: dict[str, Any]) -> dict[str, bool]:
    return {c.get("id") or c["name"]: bool(c.get("hit", c.get("met"))) for c in verdict.get("criteria", [])}


def _rules(verdict: dict[str, Any]) -> set[str]:
    """The reasons of the rules that applied: the weighing rules, and the decisive rules that decided."""
    decisive = [rule for rule in verdict.get("decided_by", []) if rule["rule"] != "weighing"]
    return {rule["reason"] for rule in [*verdict.get("rules_applied", []), *decisive]}


class Scorable(Protocol):
    """What re-scoring reads of a classification: its id, test and request as received."""

    @property
    def id(self) -> uuid.UUID: ...

    @property
    def kind(self) -> ClassificationKind: ...

    @property
    def request(self) -> dict[str, Any]: ...

    @property
    def language(self) -> str: ...

    @property
    def environment(self) -> Environment: ...


@dataclass(frozen=True, slots=True)
class Latest:
    """A classification's newest re-scored verdict."""

    id: uuid.UUID
    result: dict[str, Any]


async def _latest(session: AsyncSession, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Latest]:
    """The newest re-scored verdict of each classification that has one."""
    rows = await queries.latest_verdicts(session, ids)
    return {classification_id: Latest(id, result) for classification_id, id, result in rows}


async def count_monitored(session: AsyncSession, environment: Environment, since: dt.datetime) -> int:
    """How many classifications `rescore` would examine (for a progress display)."""
    return await queries.count_monitored(session, environment, since)


async def rescore(
    session: AsyncSession,
    rulesets: Rulesets,
    environment: Environment,
    *,
    as_of: dt.date,
    now: dt.datetime,
    since: dt.datetime,
    dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
) -> RescoreReport:
    """Re-score the environment's monitored classifications created after `since` (retention); in the caller's
    transaction, so a crash or a dry run (rolled back by the caller) keeps nothing. `progress` hears how many were
    examined after each page."""
    report = RescoreReport(environment, as_of, dry_run)
    after: tuple[dt.datetime, uuid.UUID] | None = None
    while True:
        page = await queries.monitored_page(session, environment, since, after, PAGE)
        if not page:
            return report
        latest = await _latest(session, [record.id for record in page])
        changed = [
            (record, change, new)
            for record in page
            for change, new in [_rescored(record, latest.get(record.id), rulesets, as_of, now)]
            if change is not None
        ]
        report.examined += len(page)
        report.changes.extend(change for _, change, _ in changed)
        if changed and not dry_run:
            await _store(session, [(r.environment, change, new, latest.get(r.id)) for r, change, new in changed], now)
        if progress is not None:
            progress(len(page))
        after = (page[-1].created_at, page[-1].id)


def _rescored(
    record: Row[Any], latest: Latest | None, rulesets: Rulesets, as_of: dt.date, now: dt.datetime
) -> tuple[VerdictChange | None, VerdictBody]:
    """The verdict change (None when the verdict stays) and the new verdict."""
    current = latest.result if latest is not None else record.result
    rescored = rescored_verdict(record, rulesets, as_of, now)
    if rescored.verdict == current["verdict"]:
        return None, rescored
    new = json_data(rescored)  # compared with the current one as a stored verdict reads back
    change = VerdictChange(
        classification_id=record.id,
        kind=record.kind,
        user_id=record.user_id,
        reference=record.reference,
        previous_verdict=current["verdict"],
        new_verdict=new["verdict"],
        previous_ruleset={"id": current["ruleset"]["id"], "version": current["ruleset"]["version"]},
        new_ruleset={"id": new["ruleset"]["id"], "version": new["ruleset"]["version"]},
        as_of=as_of,
        causes=causes(current, new),
    )
    return change, rescored


async def _store(
    session: AsyncSession,
    changes: Sequence[tuple[Environment, VerdictChange, VerdictBody, Latest | None]],
    now: dt.datetime,
) -> None:
    """A page's new verdicts, current verdicts and events, in three statements."""
    verdicts = [
        {
            "id": uuid.uuid4(),
            "environment": environment,
            "classification_id": change.classification_id,
            "supersedes_id": None if latest is None else latest.id,
            "verdict": change.new_verdict,
            "previous_verdict": change.previous_verdict,
            "ruleset_version": change.new_ruleset["version"],
            "as_of": change.as_of,
            "result": new,
            "created_at": now,
        }
        for environment, change, new, latest in changes
    ]
    current = [{"id": change.classification_id, "verdict": change.new_verdict} for _, change, _, _ in changes]
    events = [
        outbox_row(environment=environment, type=VERDICT_CHANGED, payload=change.payload(), at=now)
        for environment, change, _, _ in changes
    ]
    await queries.store_rescored(session, verdicts, current, events)


async def claim_run(
    session: AsyncSession, environment: Environment, signature: str, today: dt.date, now: dt.datetime
) -> bool:
    """Whether this process should re-score the environment now (not yet today, or under other rulesets), claiming
    the run in the caller's transaction: a concurrent worker waits on the row, then finds it claimed."""
    return await queries.claim_run(session, environment, signature, today, now)
