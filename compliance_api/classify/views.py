"""Turn assessments and rulesets into response bodies."""

from __future__ import annotations

import datetime as dt
import uuid

from compliance_api.classify.crossborder import CrossBorderAssessment
from compliance_api.classify.dutch import DutchAssessment
from compliance_api.classify.ruleset import CrossBorderRuleset, CrossBorderTariefgrens, RulesetHeader
from compliance_api.classify.schemas import (
    AppliedRule,
    CatalogueCriterion,
    CatalogueRule,
    CriteriaCatalogue,
    CrossBorderCriterionOut,
    CrossBorderTariefgrensOut,
    CrossBorderVerdict,
    DutchCriterionOut,
    DutchTariefgrensOut,
    LegalBasis,
    RulesetRef,
    ZWVerdict,
)


def ruleset_ref(ruleset: RulesetHeader) -> RulesetRef:
    return RulesetRef(id=ruleset.id, version=ruleset.version, valid_from=ruleset.valid_from)


def dutch_verdict(
    assessment: DutchAssessment, ruleset: RulesetHeader, *, id: uuid.UUID, created_at: dt.datetime
) -> ZWVerdict:
    threshold = assessment.tariefgrens
    return ZWVerdict(
        id=id,
        verdict=assessment.verdict,
        score=assessment.score,
        ratio=assessment.ratio,
        criteria_hit=assessment.criteria_hit,
        advice=assessment.advice,
        presumption_of_employment=assessment.presumption_of_employment,
        tariefgrens=None
        if threshold is None
        else DutchTariefgrensOut(
            amount_eur=float(threshold.amount_eur),
            valid_from=threshold.valid_from,
            legal_status=threshold.legal_status,
            basis=threshold.basis,
            source_url=str(threshold.source_url),
        ),
        as_of=assessment.as_of,
        ruleset=ruleset_ref(ruleset),
        criteria=[
            DutchCriterionOut(
                id=result.criterion.id,
                group=result.criterion.group,
                input=result.criterion.input,
                answered=result.answered,
                hit=result.hit,
                weight=result.criterion.weight,
                legal_basis=LegalBasis(text=result.criterion.basis, source_url=str(result.criterion.source_url)),
            )
            for result in assessment.results
        ],
        unanswered=assessment.unanswered,
        created_at=created_at,
    )


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


def cross_border_verdict(
    assessment: CrossBorderAssessment, *, id: uuid.UUID, created_at: dt.datetime
) -> CrossBorderVerdict:
    ruleset = assessment.ruleset
    threshold = assessment.tariefgrens
    return CrossBorderVerdict(
        id=id,
        country=ruleset.country,
        verdict=assessment.verdict,
        law=ruleset.law,
        tariefgrens_min_eur=None if threshold is None else float(threshold.value),
        advice=assessment.advice,
        score=assessment.score,
        criteria_met=list(assessment.met),
        criteria_not_provided=list(assessment.not_provided),
        rules_applied=[AppliedRule(verdict=rule.verdict, reason=rule.reason) for rule in assessment.fired],
        tariefgrens=None if threshold is None else cross_border_tariefgrens(threshold),
        as_of=assessment.as_of,
        ruleset=ruleset_ref(ruleset),
        criteria=[
            CrossBorderCriterionOut(
                name=criterion.name,
                group=criterion.group,
                weight=criterion.weight,
                met=criterion.name in assessment.met,
                provided=criterion.name not in assessment.not_provided,
                legal_basis=LegalBasis(text=criterion.basis, source_url=str(criterion.source_url)),
            )
            for criterion in ruleset.criteria
        ],
        created_at=created_at,
    )


def criteria_catalogue(ruleset: CrossBorderRuleset) -> CriteriaCatalogue:
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
                description=criterion.description,
                legal_basis=LegalBasis(text=criterion.basis, source_url=str(criterion.source_url)),
            )
            for criterion in ruleset.criteria
        ],
        rules=[
            CatalogueRule(
                verdict=rule.verdict,
                reason=rule.reason,
                all_of=list(rule.all_of),
                at_least=rule.at_least,
                of=list(rule.of),
                share_at_least_percent=rule.share_at_least_percent,
            )
            for rule in ruleset.rules
        ],
        tariefgrens=[cross_border_tariefgrens(entry) for entry in ruleset.tariefgrens],
    )
