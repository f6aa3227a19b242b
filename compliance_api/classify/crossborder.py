"""The FR, DE and BE tests: score a map of criteria against the country's ruleset (pure; no I/O)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from compliance_api.classify.language import DEFAULT_LANGUAGE, Language
from compliance_api.classify.ruleset import CrossBorderRule, CrossBorderRuleset, CrossBorderTariefgrens
from compliance_api.classify.verdict import Verdict, guarded, worst


@dataclass(frozen=True, slots=True)
class CrossBorderAssessment:
    ruleset: CrossBorderRuleset
    verdict: Verdict
    best_case: Verdict
    worst_case: Verdict
    score: int
    as_of: dt.date
    tariefgrens: CrossBorderTariefgrens | None
    met: tuple[str, ...]
    not_provided: tuple[str, ...]
    fired: tuple[CrossBorderRule, ...]
    advice: str
    language: Language


def unknown_criteria(ruleset: CrossBorderRuleset, names: Iterable[str]) -> list[str]:
    allowed = set(ruleset.criterion_names)
    return sorted(name for name in names if name not in allowed)


def _fires(rule: CrossBorderRule, met: set[str], weight_met: int, weight_total: int) -> bool:
    if not set(rule.all_of) <= met:
        return False
    if rule.at_least is not None and len(met.intersection(rule.of)) < rule.at_least:
        return False
    # Integer arithmetic: a share of exactly 50 % must count as 50 %, whatever the float rounding.
    return rule.share_at_least_percent is None or weight_met * 100 >= rule.share_at_least_percent * weight_total


def _fired(ruleset: CrossBorderRuleset, met: set[str]) -> tuple[CrossBorderRule, ...]:
    weights = {criterion.name: criterion.weight for criterion in ruleset.criteria}
    weight_met, weight_total = sum(weights[name] for name in met), sum(weights.values())
    return tuple(rule for rule in ruleset.rules if _fires(rule, met, weight_met, weight_total))


def _rules_verdict(fired: tuple[CrossBorderRule, ...]) -> Verdict:
    return worst(Verdict.safe, *(rule.verdict for rule in fired))


def _advice(
    ruleset: CrossBorderRuleset,
    verdict: Verdict,
    fired: tuple[CrossBorderRule, ...],
    met: tuple[str, ...],
    not_provided: tuple[str, ...],
    bounds: tuple[Verdict, Verdict],
    language: Language,
) -> str:
    texts = ruleset.texts
    sentences = [ruleset.advice[verdict][language]]
    sentences += [
        texts.rule_applied[language].format(reason=rule.reason[language]) for rule in fired if rule.verdict is verdict
    ]
    sentences += [criterion.advice[language] for criterion in ruleset.criteria if criterion.name in met]
    if not_provided:
        sentences.append(texts.unanswered[language].format(fields=", ".join(not_provided)))
        if bounds[0] is not bounds[1]:
            sentences.append(texts.unanswered_range[language].format(best=bounds[0].value, worst=bounds[1].value))
    return " ".join(sentences)


def assess_criteria(
    ruleset: CrossBorderRuleset,
    criteria: Mapping[str, bool],
    as_of: dt.date,
    language: Language = DEFAULT_LANGUAGE,
) -> CrossBorderAssessment:
    """Score the criteria, advising in `language`; names must be the ruleset's (see `unknown_criteria`), missing
    ones count as not met, but the verdict is never safe while meeting them could make it unsafe (`guarded`, as the
    Dutch test)."""
    met = tuple(name for name in ruleset.criterion_names if criteria.get(name) is True)
    not_provided = tuple(name for name in ruleset.criterion_names if name not in criteria)
    weights = {criterion.name: criterion.weight for criterion in ruleset.criteria}
    fired = _fired(ruleset, set(met))
    scored = _rules_verdict(fired)
    worst_case = _rules_verdict(_fired(ruleset, set(met + not_provided))) if not_provided else scored
    verdict = guarded(scored, worst_case, ruleset.unanswered_floor)
    return CrossBorderAssessment(
        ruleset=ruleset,
        verdict=verdict,
        best_case=scored,
        worst_case=worst_case,
        score=sum(weights[name] for name in met) * 100 // sum(weights.values()),
        as_of=as_of,
        tariefgrens=ruleset.tariefgrens_on(as_of),
        met=met,
        not_provided=not_provided,
        fired=fired,
        advice=_advice(ruleset, verdict, fired, met, not_provided, (scored, worst_case), language),
        language=language,
    )
