"""Classify engagements, keep every verdict as an audit record, and read or purge those records."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.auth.caller import Caller
from compliance_api.classify import views
from compliance_api.classify.crossborder import assess_criteria, unknown_criteria
from compliance_api.classify.dutch import assess_engagement
from compliance_api.classify.language import DEFAULT_LANGUAGE, Language
from compliance_api.classify.models import Classification, ClassificationKind, ClassificationVerdict
from compliance_api.classify.ruleset import RulesetHeader, Rulesets
from compliance_api.classify.schemas import ClassificationRecord, CrossBorderRequest, ZelfstandigenwetRequest
from compliance_api.errors import ApiError, FieldError
from compliance_api.events.models import OutboxEvent
from compliance_api.events.service import outbox_row
from compliance_api.kit.environment import Environment, scoped
from compliance_api.kit.group_commit import GroupCommit

CLASSIFICATION_CREATED = "classification.created"


@dataclass(frozen=True, slots=True)
class Retention:
    """How long audit records are kept: years in production, days in the sandbox."""

    live_years: int
    sandbox_days: int

    def cutoff(self, environment: Environment, now: dt.datetime) -> dt.datetime:
        """Records created before this instant are expired."""
        if environment is Environment.test:
            return now - dt.timedelta(days=self.sandbox_days)
        try:
            return now.replace(year=now.year - self.live_years)
        except ValueError:  # 29 February, in a year without one
            return now.replace(year=now.year - self.live_years, day=28)


async def _keep(
    audit: GroupCommit,
    caller: Caller,
    kind: ClassificationKind,
    ruleset: RulesetHeader,
    body: BaseModel,
    verdict: dict[str, Any],
    now: dt.datetime,
    language: Language,
) -> dict[str, Any]:
    """Store the verdict with the request as received and the language it is written in, and its
    `classification.created` event in the same transaction; returns the verdict once both are committed."""
    classification = {
        "id": uuid.UUID(verdict["id"]),
        "environment": caller.environment,
        "user_id": caller.user_id,
        "token_id": caller.token_id,
        "kind": kind,
        "ruleset_id": ruleset.id,
        "ruleset_version": ruleset.version.isoformat(),
        "request": body.model_dump(mode="json", exclude_unset=True),
        "result": verdict,
        "verdict": verdict["verdict"],
        "country": verdict.get("country"),
        "reference": verdict["reference"],
        "client_metadata": verdict["metadata"] or None,
        "monitor": verdict["monitor"],
        "language": language.code,
        "created_at": now,
    }
    event = outbox_row(
        environment=caller.environment,
        type=CLASSIFICATION_CREATED,
        payload={
            "classification_id": verdict["id"],
            "user_id": str(caller.user_id),
            "kind": kind.value,
            "verdict": verdict["verdict"],
            "created_at": verdict["created_at"],
        },
        at=now,
    )
    await audit.insert((Classification, classification), (OutboxEvent, event))
    return verdict


async def classify_engagement(
    audit: GroupCommit,
    caller: Caller,
    body: ZelfstandigenwetRequest,
    rulesets: Rulesets,
    now: dt.datetime,
    language: Language = DEFAULT_LANGUAGE,
) -> dict[str, Any]:
    """Score under the Dutch ruleset and store the verdict with its input; returns the verdict as JSON."""
    ruleset = rulesets.dutch
    assessment = assess_engagement(ruleset, body.engagement.model_dump(), body.as_of or now.date(), language)
    verdict = views.dutch_verdict(assessment, ruleset, id=uuid.uuid4(), created_at=now, tracked=body)
    return await _keep(audit, caller, ClassificationKind.zelfstandigenwet, ruleset, body, verdict, now, language)


async def classify_cross_border(
    audit: GroupCommit,
    caller: Caller,
    body: CrossBorderRequest,
    rulesets: Rulesets,
    now: dt.datetime,
    language: Language = DEFAULT_LANGUAGE,
) -> dict[str, Any]:
    """Score under the country's ruleset and store the verdict; unknown criterion names are a 400."""
    ruleset = rulesets.cross_border[body.country]
    unknown = unknown_criteria(ruleset, body.criteria)
    if unknown:
        allowed = ", ".join(ruleset.criterion_names)
        raise ApiError(
            "validation_failed",
            f"Unknown criteria for {body.country}: {', '.join(unknown)}. Allowed: {allowed}.",
            errors=[
                FieldError(f"criteria.{name}", f"not a {body.country} criterion; allowed: {allowed}")
                for name in unknown
            ],
        )
    assessment = assess_criteria(ruleset, body.criteria, body.as_of or now.date(), language)
    verdict = views.cross_border_verdict(assessment, id=uuid.uuid4(), created_at=now, tracked=body)
    return await _keep(audit, caller, ClassificationKind.cross_border, ruleset, body, verdict, now, language)


async def _own_record(
    session: AsyncSession, caller: Caller, classification_id: uuid.UUID, retention: Retention, now: dt.datetime
) -> Classification:
    """The caller's own record (same user, same environment, within retention); anything else is 404."""
    statement = scoped(select(Classification), Classification, caller.environment).where(
        Classification.id == classification_id,
        Classification.user_id == caller.user_id,
        Classification.created_at >= retention.cutoff(caller.environment, now),
    )
    record = await session.scalar(statement)
    if record is None:
        raise ApiError("not_found", "No classification with this id for this account in this environment.")
    return record


async def _record_view(session: AsyncSession, record: Classification) -> ClassificationRecord:
    history = list(
        await session.scalars(
            select(ClassificationVerdict)
            .where(ClassificationVerdict.classification_id == record.id)
            .order_by(ClassificationVerdict.created_at)
        )
    )
    return ClassificationRecord.model_validate(
        {
            "id": record.id,
            "kind": record.kind,
            "created_at": record.created_at,
            "language": record.language,
            "reference": record.reference,
            "metadata": record.client_metadata or {},
            "monitor": record.monitor,
            "verdict": history[-1].verdict if history else record.result["verdict"],
            "history": [
                {
                    "id": later.id,
                    "verdict": later.verdict,
                    "previous_verdict": later.previous_verdict,
                    "supersedes": later.supersedes_id,
                    "as_of": later.as_of,
                    "ruleset": later.result["ruleset"],
                    "created_at": later.created_at,
                    "result": later.result,
                }
                for later in history
            ],
            "ruleset": record.result["ruleset"],
            "request": record.request,
            "result": record.result,
        }
    )


async def get_classification(
    session: AsyncSession, caller: Caller, classification_id: uuid.UUID, retention: Retention, now: dt.datetime
) -> ClassificationRecord:
    """The caller's own record with its current verdict and history; anything else is 404."""
    return await _record_view(session, await _own_record(session, caller, classification_id, retention, now))


async def set_monitoring(
    session: AsyncSession,
    caller: Caller,
    classification_id: uuid.UUID,
    monitor: bool,
    retention: Retention,
    now: dt.datetime,
) -> ClassificationRecord:
    """Switch re-scoring on or off for the caller's own classification (the verdicts themselves never change)."""
    record = await _own_record(session, caller, classification_id, retention, now)
    record.monitor = monitor
    await session.flush()
    return await _record_view(session, record)


async def purge_expired(session: AsyncSession, retention: Retention, now: dt.datetime) -> dict[Environment, int]:
    """Delete the audit records past retention; returns how many per environment."""
    removed: dict[Environment, int] = {}
    for environment in Environment:
        result = await session.execute(
            delete(Classification).where(
                Classification.environment == environment,
                Classification.created_at < retention.cutoff(environment, now),
            )
        )
        removed[environment] = int(result.rowcount)  # type: ignore[attr-defined]
    return removed
