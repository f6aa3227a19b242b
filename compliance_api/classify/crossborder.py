"""The FR, DE and BE tests: score a map of criteria against the country's ruleset (pure; no I/O).

Each criterion is an indicator of employment: `true` met, `false` known not to be met, left out unanswered. The
verdict follows the facts, in this order:

1. `unsafe` when a decisive rule for employment holds (the ruleset's `decisive` rules, each with its source; below
   the weighing's floor only a statutory one);
2. `unsafe` when a weighing rule for `unsafe` (`rules`: a share of the weighted indicators met) fires;
3. `safe` when a decisive rule for self-employment holds, unless the weighing points to employment;
4. otherwise the weighing of the stated facts (`decide.Balance`): `unsafe` or `safe` where they clearly point that
   way, `risky` where they are balanced or too few.

Unanswered criteria are never weighed and never make a verdict decisive; every verdict lists the unanswered criteria
whose answer could still change it (`could_change`), and a `risky` one the next questions.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from compliance_api.classify.decide import (
    AnswerSet,
    Balance,
    CompiledTest,
    FactTable,
    Memo,
    RankedQuestion,
    RuleSides,
    WeightSum,
    compile_rule,
    conditions_of,
    equals_bool,
    rules_by_input,
)
from compliance_api.classify.language import DEFAULT_LANGUAGE, Language
from compliance_api.classify.ruleset import (
    CrossBorderRule,
    CrossBorderRuleset,
    CrossBorderTariefgrens,
    DecisiveRule,
)
from compliance_api.classify.verdict import Verdict, word


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
    decided_by: tuple[DecisiveRule, ...]
    decided_facts: tuple[str, ...]
    next_questions: tuple[RankedQuestion, ...]
    advice: str
    language: Language
    could_change: tuple[RankedQuestion, ...] = ()
    answer_sets: tuple[AnswerSet, ...] = ()
    sets_complete: bool = True
    balance: tuple[int, int, int] = (0, 0, 0)  # the stated facts' weight toward employment and self-employment, count


def unknown_criteria(ruleset: CrossBorderRuleset, names: Iterable[str]) -> list[str]:
    allowed = set(ruleset.criterion_names)
    return sorted(name for name in names if name not in allowed)


@dataclass(frozen=True, slots=True)
class _Weighing:
    """A weighing rule as masks of the criteria met."""

    rule: CrossBorderRule
    all_mask: int
    of_mask: int


class CrossBorderTest(CompiledTest):
    """One country's ruleset compiled to facts: built once, used for every verdict."""

    def __init__(self, ruleset: CrossBorderRuleset) -> None:
        super().__init__()
        self.ruleset = ruleset
        self.order = ruleset.criterion_names
        self.kinds = dict.fromkeys(ruleset.criterion_names, "boolean")
        met = [equals_bool(name, True) for name in ruleset.criterion_names]
        self.table = FactTable(met + conditions_of(ruleset.decisive, self.kinds), self.kinds)
        self.met_bits = {
            name: self.table.bit(condition) for name, condition in zip(ruleset.criterion_names, met, strict=True)
        }
        self.all_met = sum(self.met_bits.values())
        self.weight_met = WeightSum((self.met_bits[c.name], c.weight) for c in ruleset.criteria)
        self.total_weight = sum(criterion.weight for criterion in ruleset.criteria)
        self.weight = {criterion.name: criterion.weight for criterion in ruleset.criteria}
        self.weighing = [
            _Weighing(
                rule,
                sum(self.met_bits[name] for name in rule.all_of),
                sum(self.met_bits[name] for name in rule.of),
            )
            for rule in ruleset.rules
        ]
        rules = [compile_rule(rule, self.table, self.kinds) for rule in ruleset.decisive]
        self.rules = rules
        self.touching = rules_by_input(self.table, rules)
        self.sides = RuleSides.of(rules)
        self.balance = Balance(ruleset.weighing, self.met_bits)
        self._weighed = Memo()

    def fired(self, true: int) -> tuple[CrossBorderRule, ...]:
        """The weighing rules that fire on the criteria met."""
        weight_met = self.weight_met(true)
        return tuple(
            entry.rule
            for entry in self.weighing
            if true & entry.all_mask == entry.all_mask
            and (entry.rule.at_least is None or (true & entry.of_mask).bit_count() >= entry.rule.at_least)
            # Integer arithmetic: a share of exactly 50 % must count as 50 %, whatever the float rounding.
            and (
                entry.rule.share_at_least_percent is None
                or weight_met * 100 >= entry.rule.share_at_least_percent * self.total_weight
            )
        )

    def weighed(self, true: int) -> Verdict:
        """The least safe verdict of the weighing rules that fire on the criteria met (`safe` if none does),
        remembered: the next questions ask it of few distinct sets of criteria."""
        found = self._weighed.get(true)
        if found is None:
            found = Verdict.safe
            for rule in self.fired(true):
                if rule.verdict.rank > found.rank:
                    found = rule.verdict
            self._weighed.remember(true, found)
        return found  # type: ignore[return-value]

    def _outweighed(self, true: int) -> bool:
        """A rule for self-employment answers the legal test's core, which the weighing of the other indicators does
        not outweigh; a weighing rule for `unsafe` does."""
        return self.weighed(true) is Verdict.unsafe

    def _undecided(self, true: int, false: int, far: list[int]) -> Verdict:
        """The verdict where no decisive rule holds: a weighing rule for `unsafe`, then the weighing of the stated
        facts."""
        enough = self.balance.stated(true, false) >= self.balance.floor
        if enough and self.weighed(true) is Verdict.unsafe:
            return Verdict.unsafe
        return self.balance.verdict(true, false)

    def answered_all(self, true: int, false: int, *, employment: bool) -> tuple[int, int]:
        """The facts were every unanswered criterion met (or not met)."""
        for name, bits in self.table.inputs.items():
            if not bits & (true | false):
                add_true, add_false = self.table.answered_as(name, employment)
                true, false = true | add_true, false | add_false
        return true, false


_TESTS: dict[int, CrossBorderTest] = {}


def cross_border_test(ruleset: CrossBorderRuleset) -> CrossBorderTest:
    """The compiled test of a ruleset, built once per ruleset object (keyed by identity: the rulesets are frozen, and
    hashing them would cost as much as a verdict; the test holds its ruleset, so the id is not reused)."""
    test = _TESTS.get(id(ruleset))
    if test is None or test.ruleset is not ruleset:
        test = _TESTS[id(ruleset)] = CrossBorderTest(ruleset)
    return test


def _advice(
    ruleset: CrossBorderRuleset,
    verdict: Verdict,
    reasons: list[str],
    met: tuple[str, ...],
    not_provided: tuple[str, ...],
    bounds: tuple[Verdict, Verdict],
    language: Language,
    stated: int,
) -> str:
    texts = ruleset.texts
    sentences = [ruleset.advice[verdict][language]]
    if stated < ruleset.weighing.floor:
        sentences.append(ruleset.weighing.texts.too_few[language].format(stated=stated, floor=ruleset.weighing.floor))
    sentences += [texts.rule_applied[language].format(reason=reason) for reason in reasons]
    sentences += [criterion.advice[language] for criterion in ruleset.criteria if criterion.name in met]
    if not_provided:
        asked = [criterion.question[language] for criterion in ruleset.criteria if criterion.name in not_provided]
        sentences.append(texts.unanswered[language].format(questions=" ".join(asked)))
        if bounds[0] is not bounds[1]:
            best, worst = word(bounds[0], language), word(bounds[1], language)
            sentences.append(texts.unanswered_range[language].format(best=best, worst=worst))
    return " ".join(sentences)


def assess_criteria(
    ruleset: CrossBorderRuleset,
    criteria: Mapping[str, bool],
    as_of: dt.date,
    language: Language = DEFAULT_LANGUAGE,
    dont_know: frozenset[str] = frozenset(),
) -> CrossBorderAssessment:
    """Score the criteria, advising in `language`; names must be the ruleset's (see `unknown_criteria`). `dont_know`
    names the criteria answered "don't know": they are not ranked first among the next questions."""
    test = cross_border_test(ruleset)
    true, false = test.table.known(criteria)
    met = tuple(name for name in ruleset.criterion_names if test.met_bits[name] & true)
    not_provided = tuple(name for name in ruleset.criterion_names if name not in criteria)
    outcome = test.outcome(true, false, dont_know)
    employment, self_employment = test.balance.sides(true, false)
    stated = test.balance.stated(true, false)
    verdict, held = outcome.verdict, outcome.rules
    fired = test.fired(true)
    bounds = (outcome.best_case, outcome.worst_case)
    reasons = [rule.source.reason[language] for rule in held] + [
        rule.reason[language] for rule in fired if rule.verdict is verdict
    ]
    facts = 0
    for rule in held:
        facts |= rule.facts_of(true)
    if verdict is not Verdict.risky and not held:  # the weighing decided: the stated facts that point its way
        facts = (true if verdict is Verdict.unsafe else false) & test.all_met
    return CrossBorderAssessment(
        ruleset=ruleset,
        verdict=verdict,
        best_case=bounds[0],
        worst_case=bounds[1],
        score=test.weight_met(true) * 100 // test.total_weight,
        as_of=as_of,
        tariefgrens=ruleset.tariefgrens_on(as_of),
        met=met,
        not_provided=not_provided,
        fired=fired,
        decided_by=tuple(rule.source for rule in held),
        decided_facts=tuple(name for name, bits in test.table.inputs.items() if bits & facts),
        next_questions=outcome.next_questions,
        advice=_advice(ruleset, verdict, reasons, met, not_provided, bounds, language, stated),
        language=language,
        could_change=outcome.could_change,
        answer_sets=outcome.answer_sets,
        sets_complete=outcome.sets_complete,
        balance=(employment, self_employment, stated),
    )
