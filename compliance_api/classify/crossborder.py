"""The FR, DE and BE tests: score a map of criteria against the country's ruleset (pure; no I/O)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from compliance_api.classify.ruleset import CrossBorderRule, CrossBorderRuleset, CrossBorderTariefgrens
from compliance_api.classify.verdict import Verdict, worst


@dataclass(frozen=True, slots=True)
class CrossBorderAssessment:
    ruleset: CrossBorderRuleset
    verdict: Verdict
    score: int
    as_of: dt.date
    tariefgrens: CrossBorderTariefgrens | None
    met: tuple[str, ...]
    not_provided: tuple[str, ...]
    fired: tuple[CrossBorderRule, ...]
    advice: str


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


def _advice(
    ruleset: CrossBorderRuleset,
    verdict: Verdict,
    fired: tuple[CrossBorderRule, ...],
    met: tuple[str, ...],
    not_provided: tuple[str, ...],
) -> str:
    sentences = [ruleset.advice[verdict]]
    sentences += [f"Rule applied: {rule.reason}." for rule in fired if rule.verdict is verdict]
    sentences += [criterion.advice for criterion in ruleset.criteria if criterion.name in met]
    if not_provided:
        sentences.append(f"Not provided, so counted as false: {', '.join(not_provided)}.")
    return " ".join(sentences)


def assess_criteria(ruleset: CrossBorderRuleset, criteria: Mapping[str, bool], as_of: dt.date) -> CrossBorderAssessment:
    """Score the criteria; names must be the ruleset's (see `unknown_criteria`), missing ones count as false."""
    met = tuple(name for name in ruleset.criterion_names if criteria.get(name) is True)
    not_provided = tuple(name for name in ruleset.criterion_names if name not in criteria)
    weights = {criterion.name: criterion.weight for criterion in ruleset.criteria}
    weight_met, weight_total = sum(weights[name] for name in met), sum(weights.values())
    fired = tuple(rule for rule in ruleset.rules if _fires(rule, set(met), weight_met, weight_total))
    verdict = worst(Verdict.safe, *(rule.verdict for rule in fired))
    return CrossBorderAssessment(
        ruleset=ruleset,
        verdict=verdict,
        score=weight_met * 100 // weight_total,
        as_of=as_of,
        tariefgrens=ruleset.tariefgrens_on(as_of),
        met=met,
        not_provided=not_provided,
        fired=fired,
        advice=_advice(ruleset, verdict, fired, met, not_provided),
    )
