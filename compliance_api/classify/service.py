"""Classify engagements, keep every verdict as an audit record, and read or purge those records."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.auth.caller import Actor, Caller
from compliance_api.classify import queries, views
from compliance_api.classify.crossborder import assess_criteria, unknown_criteria
from compliance_api.classify.dutch import assess_engagement
from compliance_api.classify.language import DEFAULT_LANGUAGE, Language
from compliance_api.classify.models import (
    Classification,
    ClassificationKind,
    ClassificationVerdict,
    RecordWithHistory,
)
from compliance_api.classify.ruleset import CrossBorderRuleset, RulesetHeader, Rulesets
from compliance_api.classify.schemas import CrossBorderRequest, ZelfstandigenwetRequest
from compliance_api.classify.verdict_body import CrossBorderVerdictBody, VerdictBody, json_data, unkept
from compliance_api.config import Settings
from compliance_api.errors import MAX_LISTED_ERRORS, ApiError, FieldError
from compliance_api.events.models import OutboxEvent
from compliance_api.events.service import outbox_row
from compliance_api.events.types import EventName
from compliance_api.kit.environment import Environment
from compliance_api.kit.field_names import nearest, shown
from compliance_api.kit.group_commit import GroupCommit, TableRow

CLASSIFICATION_CREATED = EventName.CLASSIFICATION_CREATED


@dataclass(frozen=True, slots=True)
class Retention:
    """How long audit records are kept: years in production, days in the sandbox."""

    live_years: int
    sandbox_days: int

    @classmethod
    def of(cls, settings: Settings) -> Retention:
        return cls(settings.classification_retention_years, settings.sandbox_retention_days)

    def cutoff(self, environment: Environment, now: dt.datetime) -> dt.datetime:
        """Records created before this instant are expired."""
        if environment is Environment.test:
            return now - dt.timedelta(days=self.sandbox_days)
        try:
            return now.replace(year=now.year - self.live_years)
        except ValueError:  # 29 February, in a year without one
            return now.replace(year=now.year - self.live_years, day=28)


@dataclass(frozen=True, slots=True)
class Scored:
    """A verdict, what it was scored from and the language it is written in, before it is kept."""

    kind: ClassificationKind
    ruleset: RulesetHeader
    body: ZelfstandigenwetRequest | CrossBorderRequest
    verdict: VerdictBody
    language: Language


def audit_rows(
    caller: Actor, scored: Scored, now: dt.datetime, request_id: str | None = None
) -> tuple[TableRow, TableRow]:
    """The audit record of a verdict, with who asked (an API caller's token, or the person signed in to the
    dashboard), the request as received, its language and the `X-Request-Id` it was answered under, and its
    `classification.created` event."""
    verdict = scored.verdict
    token_id = caller.token_id if isinstance(caller, Caller) else None
    classification = {
        "id": verdict.id,
        "environment": caller.environment,
        "user_id": caller.user_id,
        "token_id": token_id,
        "asked_by_user_id": None if token_id else caller.user_id,
        "kind": scored.kind,
        "ruleset_id": scored.ruleset.id,
        "ruleset_version": scored.ruleset.version.isoformat(),
        "request": scored.body.model_dump(mode="json", exclude_unset=True),
        "result": verdict,
        "verdict": verdict.verdict.value,
        "original_verdict": verdict.verdict.value,
        "ruleset_valid_from": scored.ruleset.valid_from,
        "country": verdict.country.value if isinstance(verdict, CrossBorderVerdictBody) else None,
        "reference": verdict.reference,
        "client_metadata": verdict.metadata or None,
        "monitor": verdict.monitor,
        "language": scored.language.code,
        "request_id": request_id,
        "created_at": now,
    }
    event = outbox_row(
        environment=caller.environment,
        type=CLASSIFICATION_CREATED,
        payload={
            "classification_id": str(verdict.id),
            "user_id": str(caller.user_id),
            "kind": scored.kind.value,
            "verdict": verdict.verdict.value,
            "created_at": verdict.created_at,
        },
        at=now,
    )
    return (Classification, classification), (OutboxEvent, event)


def dry_run(scored: Scored) -> dict[str, Any]:
    """A dry run's verdict as JSON data, as a kept verdict reads back (the dashboard's preview shows both): with a
    null `id`, for nothing is kept (no audit record, no event, no dossier)."""
    return json_data(unkept(scored.verdict))


def score_engagement(
    body: ZelfstandigenwetRequest,
    rulesets: Rulesets,
    now: dt.datetime,
    language: Language,
    environment: Environment,
) -> Scored:
    """The verdict of the Dutch test, for a caller in `environment`."""
    ruleset = rulesets.dutch
    assessment = assess_engagement(
        ruleset, body.engagement.model_dump(), body.as_of or now.date(), language, frozenset(body.dont_know)
    )
    verdict = views.dutch_verdict(
        assessment,
        ruleset,
        rulesets.phrases,
        id=uuid.uuid4(),
        created_at=now,
        tracked=body,
        livemode=environment is Environment.live,
    )
    return Scored(ClassificationKind.zelfstandigenwet, ruleset, body, verdict, language)


def score_cross_border(
    body: CrossBorderRequest,
    rulesets: Rulesets,
    now: dt.datetime,
    language: Language,
    environment: Environment,
) -> Scored:
    """The verdict of the country's test, for a caller in `environment`; unknown criterion names are a 400."""
    ruleset = rulesets.cross_border[body.country]
    unknown = [("criteria", name) for name in unknown_criteria(ruleset, body.criteria)]
    unknown += [("dont_know", name) for name in unknown_criteria(ruleset, body.dont_know)]
    if unknown:
        allowed = ", ".join(ruleset.criterion_names)
        named = ", ".join(shown(name) for _, name in unknown[:MAX_LISTED_ERRORS])
        more = f" and {len(unknown) - MAX_LISTED_ERRORS} more" if len(unknown) > MAX_LISTED_ERRORS else ""
        raise ApiError(
            "validation_failed",
            f"Unknown criteria for {body.country}: {named}{more}. Allowed: {allowed}.",
            errors=[
                FieldError(f"{field}.{shown(name)}", _unknown_criterion(name, body.country.value, allowed, ruleset))
                for field, name in unknown[:MAX_LISTED_ERRORS]
            ],
            error_count=len(unknown),
        )
    assessment = assess_criteria(ruleset, body.criteria, body.as_of or now.date(), language, frozenset(body.dont_know))
    verdict = views.cross_border_verdict(
        assessment,
        rulesets.phrases,
        id=uuid.uuid4(),
        created_at=now,
        tracked=body,
        livemode=environment is Environment.live,
    )
    return Scored(ClassificationKind.cross_border, ruleset, body, verdict, language)


def _unknown_criterion(name: str, country: str, allowed: str, ruleset: CrossBorderRuleset) -> str:
    """The error of one unknown name, with the nearest criterion if one is close."""
    likely = nearest(name, ruleset.criterion_names)
    return f"not a {country} criterion; " + (f"did you mean `{likely}`? " if likely else "") + f"allowed: {allowed}"


async def classify_engagement(
    audit: GroupCommit,
    caller: Actor,
    body: ZelfstandigenwetRequest,
    rulesets: Rulesets,
    now: dt.datetime,
    language: Language = DEFAULT_LANGUAGE,
    request_id: str | None = None,
) -> VerdictBody:
    """Score under the Dutch ruleset and keep the verdict with its input; returns the verdict once committed."""
    scored = score_engagement(body, rulesets, now, language, caller.environment)
    await audit.insert(*audit_rows(caller, scored, now, request_id))
    return scored.verdict


async def classify_cross_border(
    audit: GroupCommit,
    caller: Actor,
    body: CrossBorderRequest,
    rulesets: Rulesets,
    now: dt.datetime,
    language: Language = DEFAULT_LANGUAGE,
    request_id: str | None = None,
) -> VerdictBody:
    """Score under the country's ruleset and keep the verdict with its input; returns it once committed."""
    scored = score_cross_border(body, rulesets, now, language, caller.environment)
    await audit.insert(*audit_rows(caller, scored, now, request_id))
    return scored.verdict


async def _own_record(
    session: AsyncSession, caller: Actor, classification_id: uuid.UUID, retention: Retention, now: dt.datetime
) -> Classification:
    """The caller's own record (same user, same environment, within retention); anything else is 404."""
    since = retention.cutoff(caller.environment, now)
    record = await queries.own_record(session, caller.user_id, caller.environment, classification_id, since)
    if record is None:
        raise ApiError("not_found", "No classification with this id for this account in this environment.")
    return record


async def with_histories(session: AsyncSession, records: Sequence[Classification]) -> list[RecordWithHistory]:
    """Each record with its later verdicts, oldest first, in one read for all of them (a page of an export)."""
    found: dict[uuid.UUID, list[ClassificationVerdict]] = {record.id: [] for record in records}
    if records:
        for later in await queries.later_verdicts(session, list(found)):
            found[later.classification_id].append(later)
    return [RecordWithHistory(record, found[record.id]) for record in records]


async def _with_history(session: AsyncSession, record: Classification) -> RecordWithHistory:
    return RecordWithHistory(record, list(await queries.history(session, record.id)))


async def get_classification(
    session: AsyncSession, caller: Actor, classification_id: uuid.UUID, retention: Retention, now: dt.datetime
) -> RecordWithHistory:
    """The caller's own record with its history; anything else is 404."""
    return await _with_history(session, await _own_record(session, caller, classification_id, retention, now))


async def set_monitoring(
    session: AsyncSession,
    caller: Caller,
    classification_id: uuid.UUID,
    monitor: bool,
    retention: Retention,
    now: dt.datetime,
) -> RecordWithHistory:
    """Switch re-scoring on or off for the caller's own classification (the verdicts themselves never change)."""
    record = await _own_record(session, caller, classification_id, retention, now)
    record.monitor = monitor
    await session.flush()
    return await _with_history(session, record)


async def purge_expired(session: AsyncSession, retention: Retention, now: dt.datetime) -> dict[Environment, int]:
    """Delete the audit records past retention; returns how many per environment."""
    removed: dict[Environment, int] = {}
    for environment in Environment:
        removed[environment] = await queries.delete_before(session, environment, retention.cutoff(environment, now))
    return removed
