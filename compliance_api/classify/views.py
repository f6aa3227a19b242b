"""Turn assessments and rulesets into response bodies."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from typing import Any, TypeVar, cast

from compliance_api.classify.crossborder import CrossBorderAssessment
from compliance_api.classify.dutch import DutchAssessment
from compliance_api.classify.language import Language
from compliance_api.classify.models import Classification, RecordWithHistory
from compliance_api.classify.ruleset import (
    CrossBorderCriterion,
    CrossBorderRuleset,
    CrossBorderTariefgrens,
    DutchCriterion,
    DutchTariefgrens,
    RulesetHeader,
)
from compliance_api.classify.schemas import (
    CatalogueCriterion,
    CatalogueRule,
    ClassificationList,
    ClassificationRecord,
    ClassificationSummary,
    CriteriaCatalogue,
    CrossBorderTariefgrensOut,
    LegalBasis,
    RulesetRef,
    Tracked,
)
from compliance_api.classify.verdict import Verdict
from compliance_api.kit.pagination import Paged

SourceT = TypeVar("SourceT")
FragmentT = TypeVar("FragmentT")


def ruleset_ref(ruleset: RulesetHeader) -> RulesetRef:
    return RulesetRef(id=ruleset.id, version=ruleset.version, valid_from=ruleset.valid_from)


def _timestamp(moment: dt.datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


# The verdict bodies are built as plain JSON from parts computed once per ruleset: constructing the response models
# per request cost a third of the endpoint's CPU. Tests validate these bodies against ZWVerdict and
# CrossBorderVerdict, and schemathesis checks them against the contract.


_FRAGMENTS: dict[tuple[Callable[[Any], Any], int], tuple[object, Any]] = {}


def _fragment(build: Callable[[SourceT], FragmentT], source: SourceT) -> FragmentT:
    """`build(source)`, computed once per source object. Keyed by identity, because hashing the rulesets' frozen
    models costs as much as building the fragment; the entry holds the source, so its id cannot be reused."""
    entry = _FRAGMENTS.get((build, id(source)))
    if entry is None or entry[0] is not source:
        entry = (source, build(source))
        _FRAGMENTS[(build, id(source))] = entry
    return cast(FragmentT, entry[1])


def _ruleset_json(ruleset: RulesetHeader) -> dict[str, str]:
    return ruleset_ref(ruleset).model_dump(mode="json")


def _dutch_criterion_json(criterion: DutchCriterion) -> dict[str, Any]:
    return {
        "id": criterion.id,
        "group": criterion.group,
        "input": criterion.input,
        "weight": criterion.weight,
        "legal_basis": {"text": criterion.basis, "source_url": str(criterion.source_url)},
    }


def _dutch_tariefgrens_json(entry: DutchTariefgrens) -> tuple[dict[str, Any], ...]:
    """The threshold in each language, indexed by `Language` (its basis is translated)."""
    return tuple(
        {
            "amount_eur": float(entry.amount_eur),
            "valid_from": entry.valid_from.isoformat(),
            "legal_status": entry.legal_status,
            "basis": entry.basis[language],
            "source_url": str(entry.source_url),
        }
        for language in Language
    )


def _tracking(tracked: Tracked) -> dict[str, Any]:
    return {"reference": tracked.reference, "metadata": tracked.metadata or {}, "monitor": tracked.monitor}


def dutch_verdict(
    assessment: DutchAssessment, ruleset: RulesetHeader, *, id: uuid.UUID, created_at: dt.datetime, tracked: Tracked
) -> dict[str, Any]:
    """The ZWVerdict body, as JSON-ready data."""
    return {
        "id": str(id),
        "verdict": assessment.verdict.value,
        "score": assessment.score,
        "ratio": assessment.ratio,
        "criteria_hit": assessment.criteria_hit,
        "advice": assessment.advice,
        "presumption_of_employment": assessment.presumption_of_employment,
        "tariefgrens": None
        if assessment.tariefgrens is None
        else _fragment(_dutch_tariefgrens_json, assessment.tariefgrens)[assessment.language],
        "as_of": assessment.as_of.isoformat(),
        "ruleset": _fragment(_ruleset_json, ruleset),
        "criteria": [
            {**_fragment(_dutch_criterion_json, result.criterion), "answered": result.answered, "hit": result.hit}
            for result in assessment.results
        ],
        "unanswered": assessment.unanswered,
        **_tracking(tracked),
        "created_at": _timestamp(created_at),
    }


def cross_border_tariefgrens(entry: CrossBorderTariefgrens) -> CrossBorderTariefgrensOut:
    return CrossBorderTariefgrensOut(
        value=float(entry.value),
        multiplier=float(entry.multiplier),
        min_wage_hourly=float(entry.min_wage_hourly),
        min_wage_valid_from=entry.min_wage_valid_from,
        valid_from=entry.valid_from,
        basis=entry.basis,
        source_url=str(entry.source_url),
    )


def _cross_border_tariefgrens_json(entry: CrossBorderTariefgrens) -> dict[str, Any]:
    return cross_border_tariefgrens(entry).model_dump(mode="json")


def _cross_border_criterion_json(criterion: CrossBorderCriterion) -> dict[str, Any]:
    return {
        "name": criterion.name,
        "group": criterion.group,
        "weight": criterion.weight,
        "legal_basis": {"text": criterion.basis, "source_url": str(criterion.source_url)},
    }


def cross_border_verdict(
    assessment: CrossBorderAssessment, *, id: uuid.UUID, created_at: dt.datetime, tracked: Tracked
) -> dict[str, Any]:
    """The CrossBorderVerdict body, as JSON-ready data."""
    ruleset = assessment.ruleset
    threshold = assessment.tariefgrens
    return {
        "id": str(id),
        "country": ruleset.country.value,
        "verdict": assessment.verdict.value,
        "law": ruleset.law,
        "tariefgrens_min_eur": None if threshold is None else float(threshold.value),
        "advice": assessment.advice,
        "score": assessment.score,
        "criteria_met": list(assessment.met),
        "criteria_not_provided": list(assessment.not_provided),
        "unanswered": list(assessment.not_provided),
        "rules_applied": [
            {"verdict": rule.verdict.value, "reason": rule.reason[assessment.language]} for rule in assessment.fired
        ],
        "tariefgrens": None if threshold is None else _fragment(_cross_border_tariefgrens_json, threshold),
        "as_of": assessment.as_of.isoformat(),
        "ruleset": _fragment(_ruleset_json, ruleset),
        "criteria": [
            {
                **_fragment(_cross_border_criterion_json, criterion),
                "met": criterion.name in assessment.met,
                "provided": criterion.name not in assessment.not_provided,
            }
            for criterion in ruleset.criteria
        ],
        **_tracking(tracked),
        "created_at": _timestamp(created_at),
    }


def criteria_catalogue(ruleset: CrossBorderRuleset, language: Language) -> CriteriaCatalogue:
    """The catalogue with its descriptions and rule reasons in `language`."""
    return CriteriaCatalogue(
        country=ruleset.country,
        law=ruleset.law,
        source_note=ruleset.source_note,
        ruleset=ruleset_ref(ruleset),
        criteria=[
            CatalogueCriterion(
                name=criterion.name,
                group=criterion.group,
                weight=criterion.weight,
                description=criterion.description[language],
                legal_basis=LegalBasis(text=criterion.basis, source_url=str(criterion.source_url)),
            )
            for criterion in ruleset.criteria
        ],
        rules=[
            CatalogueRule(
                verdict=rule.verdict,
                reason=rule.reason[language],
                all_of=list(rule.all_of),
                at_least=rule.at_least,
                of=list(rule.of),
                share_at_least_percent=rule.share_at_least_percent,
            )
            for rule in ruleset.rules
        ],
        tariefgrens=[cross_border_tariefgrens(entry) for entry in ruleset.tariefgrens],
    )


def classification_summary(record: Classification) -> ClassificationSummary:
    return ClassificationSummary(
        id=record.id,
        kind=record.kind,
        country=record.country,
        verdict=Verdict(record.verdict),
        original_verdict=Verdict(record.result["verdict"]),
        ruleset=record.result["ruleset"],
        reference=record.reference,
        metadata=record.client_metadata or {},
        monitor=record.monitor,
        created_at=record.created_at,
    )


def classification_list(page: Paged[Classification]) -> ClassificationList:
    rows = page.rows
    return ClassificationList(
        data=[classification_summary(row) for row in rows], has_more=page.has_more, next_cursor=page.next_cursor
    )


def classification_record(found: RecordWithHistory) -> ClassificationRecord:
    record, history = found.record, found.history
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
