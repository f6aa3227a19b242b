"""The Dutch 5+4 test: score an engagement against the `nl-zw` ruleset (pure; no I/O)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from compliance_api.classify.language import DEFAULT_LANGUAGE, Language, decimal
from compliance_api.classify.ruleset import DutchCriterion, DutchRuleset, DutchTariefgrens
from compliance_api.classify.verdict import Verdict, guarded, worst

EngagementValue = bool | int | float | None


@dataclass(frozen=True, slots=True)
class DutchCriterionResult:
    criterion: DutchCriterion
    answered: bool
    hit: bool


@dataclass(frozen=True, slots=True)
class DutchAssessment:
    verdict: Verdict
    best_case: Verdict
    worst_case: Verdict
    score: int
    as_of: dt.date
    tariefgrens: DutchTariefgrens | None
    presumption_of_employment: bool
    results: tuple[DutchCriterionResult, ...]
    advice: str
    language: Language

    @property
    def ratio(self) -> float:
        return self.score / 100

    @property
    def criteria_hit(self) -> list[str]:
        return [result.criterion.id for result in self.results if result.hit]

    @property
    def unanswered(self) -> list[str]:
        return [result.criterion.input for result in self.results if not result.answered]


def _is_hit(criterion: DutchCriterion, value: EngagementValue, tariefgrens: DutchTariefgrens | None) -> bool:
    condition = criterion.hit_when
    match condition.op:
        case "is_false":
            return value is False
        case "equals":
            return value == condition.value
        case "at_least":
            return isinstance(value, int) and value >= condition.value
        case "at_most_tariefgrens":
            # Decimal(str(x)) compares the rate as written (38.0 is exactly EUR 38.00), not its binary float.
            return (
                tariefgrens is not None
                and isinstance(value, int | float)
                and (Decimal(str(value)) <= tariefgrens.amount_eur)
            )
    raise AssertionError(condition)


def _scored_verdict(ruleset: DutchRuleset, score: int, presumption: bool) -> Verdict:
    rules = ruleset.scoring
    verdicts = [Verdict.safe]
    if score >= rules.unsafe_at_score or (presumption and score >= rules.unsafe_at_score_with_presumption):
        verdicts.append(Verdict.unsafe)
    if score >= rules.risky_at_score:
        verdicts.append(Verdict.risky)
    if presumption:
        verdicts.append(rules.presumption_floor)
    return worst(*verdicts)


def _bounds(
    ruleset: DutchRuleset, results: tuple[DutchCriterionResult, ...], tariefgrens_known: bool
) -> tuple[Verdict, Verdict]:
    """The verdict with every unanswered criterion counted as not hit (the scored one), and as hit (the worst case)."""
    score = sum(result.criterion.weight for result in results if result.hit)
    presumption = any(result.hit and result.criterion.presumption for result in results)
    # Without a threshold on that date the rate criterion cannot be hit, answered or not.
    could_hit = [
        result.criterion
        for result in results
        if not result.answered and (tariefgrens_known or not result.criterion.presumption)
    ]
    worst_case = _scored_verdict(
        ruleset,
        score + sum(criterion.weight for criterion in could_hit),
        presumption or any(criterion.presumption for criterion in could_hit),
    )
    return _scored_verdict(ruleset, score, presumption), worst_case


def _advice(
    ruleset: DutchRuleset,
    assessment_parts: tuple[DutchCriterionResult, ...],
    as_of: dt.date,
    tariefgrens: DutchTariefgrens | None,
    bounds: tuple[Verdict, Verdict],
    language: Language,
) -> str:
    texts = ruleset.texts
    sentences = [result.criterion.advice[language] for result in assessment_parts if result.hit]
    if tariefgrens is None:
        sentences.append(texts.no_threshold[language].format(as_of=as_of.isoformat()))
    elif any(result.hit and result.criterion.presumption for result in assessment_parts):
        sentences.append(
            texts.threshold_used[language].format(
                amount=decimal(tariefgrens.amount_eur, language),
                valid_from=tariefgrens.valid_from.isoformat(),
                status=texts.legal_status[tariefgrens.legal_status][language],
                basis=tariefgrens.basis[language],
            )
        )
    unanswered = [result.criterion.input for result in assessment_parts if not result.answered]
    if unanswered:
        sentences.append(texts.unanswered[language].format(fields=", ".join(unanswered)))
        if bounds[0] is not bounds[1]:
            sentences.append(texts.unanswered_range[language].format(best=bounds[0].value, worst=bounds[1].value))
    sentences.append(texts.not_assessed[language])
    return " ".join(sentences)


def assess_engagement(
    ruleset: DutchRuleset,
    engagement: Mapping[str, EngagementValue],
    as_of: dt.date,
    language: Language = DEFAULT_LANGUAGE,
) -> DutchAssessment:
    """Score the engagement, advising in `language`; a field that is missing (or null) is unanswered and counts as
    not hit."""
    tariefgrens = ruleset.tariefgrens_on(as_of)
    results = tuple(
        DutchCriterionResult(
            criterion=criterion,
            answered=engagement.get(criterion.input) is not None,
            hit=_is_hit(criterion, engagement.get(criterion.input), tariefgrens),
        )
        for criterion in ruleset.criteria
    )
    scored, worst_case = _bounds(ruleset, results, tariefgrens is not None)
    return DutchAssessment(
        verdict=guarded(scored, worst_case, ruleset.scoring.unanswered_floor),
        best_case=scored,
        worst_case=worst_case,
        score=sum(result.criterion.weight for result in results if result.hit),
        as_of=as_of,
        tariefgrens=tariefgrens,
        presumption_of_employment=any(result.hit and result.criterion.presumption for result in results),
        results=results,
        advice=_advice(ruleset, results, as_of, tariefgrens, (scored, worst_case), language),
        language=language,
    )
