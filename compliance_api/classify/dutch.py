"""The Dutch test: score an engagement against the `nl-zw` ruleset (pure; no I/O).

The verdict follows the facts, in this order:

1. `unsafe` when a decisive rule for employment holds (the ruleset's `decisive` rules, each with its source);
2. `unsafe` when the employment indicators hit weigh at least `unsafe_at_score` (or `unsafe_at_score_with_presumption`
   while the rate presumption is law and the rate is at or below the tariefgrens);
3. `safe` when a decisive rule for self-employment holds, unless the presumption applies or the weighing points to
   employment;
4. otherwise the weighing of the stated facts (`decide.Balance`): `unsafe` or `safe` where they clearly point that
   way, `risky` where they are balanced or too few (below the floor, only a statutory rule decides).

Unanswered inputs are never weighed and never make a verdict decisive; every verdict lists the unanswered inputs
whose answer could still change it (`could_change`), and a `risky` one the next questions.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from compliance_api.classify.decide import (
    STEPS,
    AnswerSet,
    Balance,
    CompiledRule,
    CompiledTest,
    Condition,
    FactTable,
    Memo,
    RankedQuestion,
    RuleSides,
    WeightSum,
    at_least,
    at_most,
    compile_rule,
    conditions_of,
    equals_bool,
    equals_number,
    rules_by_input,
)
from compliance_api.classify.language import DEFAULT_LANGUAGE, Language, day, money
from compliance_api.classify.ruleset import DecisiveRule, DutchCriterion, DutchRuleset, DutchTariefgrens
from compliance_api.classify.verdict import Verdict, word

EngagementValue = bool | int | float | None


@dataclass(frozen=True, slots=True)
class DutchCriterionResult:
    criterion: DutchCriterion
    answered: bool
    hit: bool


@dataclass(frozen=True, slots=True)
class Decided:
    """Why a verdict is decisive: the rules that held (none: the weighing of the indicators decided)."""

    rules: tuple[DecisiveRule, ...]
    facts: tuple[str, ...]  # the inputs whose answers decided it


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
    decided: Decided | None
    next_questions: tuple[RankedQuestion, ...]
    could_change: tuple[RankedQuestion, ...] = ()
    answer_sets: tuple[AnswerSet, ...] = ()
    sets_complete: bool = True
    balance: tuple[int, int, int] = (0, 0, 0)  # the stated facts' weight toward employment and self-employment, count

    @property
    def ratio(self) -> float:
        return self.score / 100

    @property
    def criteria_hit(self) -> list[str]:
        return [result.criterion.id for result in self.results if result.hit]

    @property
    def unanswered(self) -> list[str]:
        return [result.criterion.input for result in self.results if not result.answered]


def _criterion_fact(criterion: DutchCriterion, tariefgrens: DutchTariefgrens | None) -> Condition | None:
    """The fact that hits the criterion; None for the rate criterion on a day without a threshold."""
    condition = criterion.hit_when
    match condition.op:
        case "is_false":
            return equals_bool(criterion.input, False)
        case "is_true":
            return equals_bool(criterion.input, True)
        case "equals":
            return equals_number(criterion.input, condition.value)
        case "at_least":
            return at_least(criterion.input, Decimal(condition.value))
        case "at_most_tariefgrens":
            return None if tariefgrens is None else at_most(criterion.input, tariefgrens.amount_eur, STEPS["number"])
    raise AssertionError(condition)


def _hit_answers(
    criterion: DutchCriterion, tariefgrens: DutchTariefgrens | None
) -> tuple[bool | int | float, bool | int | float]:
    """An answer that hits the criterion, and one that does not."""
    condition = criterion.hit_when
    match condition.op:
        case "is_false":
            return False, True
        case "is_true":
            return True, False
        case "equals":
            return condition.value, condition.value + 1
        case "at_least":
            return condition.value, max(condition.value - 1, 0)
        case "at_most_tariefgrens":
            amount = float(tariefgrens.amount_eur) if tariefgrens is not None else 0.0
            return amount, amount + 0.01
    raise AssertionError(condition)


class DutchTest(CompiledTest):
    """One ruleset with one tariefgrens entry (or none), compiled to facts: built once, used for every verdict."""

    def __init__(self, ruleset: DutchRuleset, tariefgrens: DutchTariefgrens | None, presumption_in_force: bool) -> None:
        super().__init__()
        self.ruleset = ruleset
        self.tariefgrens = tariefgrens
        self.presumption_in_force = presumption_in_force
        self.scoring = ruleset.scoring
        self.kinds = {question.input: question.kind for question in ruleset.questions}
        self.order = [question.input for question in ruleset.questions]
        criterion_facts = [(criterion, _criterion_fact(criterion, tariefgrens)) for criterion in ruleset.criteria]
        self.table = FactTable(
            [fact for _, fact in criterion_facts if fact is not None] + conditions_of(ruleset.decisive, self.kinds),
            self.kinds,
        )
        self.criteria = [
            (criterion, 0 if fact is None else self.table.bit(fact), criterion.weight)
            for criterion, fact in criterion_facts
        ]
        self.score = WeightSum((bit, weight) for _, bit, weight in self.criteria)
        self.weight = {criterion.input: criterion.weight for criterion in ruleset.criteria}
        self.rate_bit = sum(bit for criterion, bit, _ in self.criteria if criterion.presumption)
        self.presumption_bit = self.rate_bit if presumption_in_force else 0
        self.balance = Balance(ruleset.weighing, {criterion.input: bit for criterion, bit, _ in self.criteria})
        rules = [compile_rule(rule, self.table, self.kinds) for rule in ruleset.decisive]
        self.rules = rules
        self.touching = rules_by_input(self.table, rules)
        self.sides = RuleSides.of(rules)
        # Each input answered the way that hits its criterion, and the way that does not: the verdict's bounds.
        self.hit_bits = {}
        for criterion in ruleset.criteria:
            if criterion.input in self.table.inputs:
                hit, miss = _hit_answers(criterion, tariefgrens)
                self.hit_bits[criterion.input] = (
                    self.table.answered_as(criterion.input, hit),
                    self.table.answered_as(criterion.input, miss),
                )
        self._answers = Memo()

    def _weighs_unsafe(self, score: int, presumption: bool) -> bool:
        rules = self.scoring
        return score >= rules.unsafe_at_score or (presumption and score >= rules.unsafe_at_score_with_presumption)

    def _outweighed(self, true: int) -> bool:
        """A rule for self-employment answers the legal test's core, which the weighing of the other indicators does
        not outweigh; the rate presumption (while it is law) or indicators scoring as much as `unsafe` do."""
        presumption = bool(true & self.presumption_bit)
        return presumption or self._weighs_unsafe(self.score(true), presumption)

    def _undecided(self, true: int, false: int, far: list[int]) -> Verdict:
        """The verdict where no decisive rule holds: the score rule, then the weighing of the stated facts (never
        `safe` against the rate presumption while it is law)."""
        score, presumption = self.score(true), bool(true & self.presumption_bit)
        enough = self.balance.stated(true, false) >= self.balance.floor
        if enough and self._weighs_unsafe(score, presumption):
            return Verdict.unsafe
        weighed = self.balance.verdict(true, false)
        if weighed is Verdict.safe and presumption:
            return self.scoring.presumption_floor
        return weighed

    def answered_all(self, true: int, false: int, *, employment: bool) -> tuple[int, int]:
        """The facts were every unanswered input answered the way that hits its criterion (or the way that does not)."""
        known = true | false
        for name, answers in self.hit_bits.items():
            if not self.table.inputs[name] & known:
                add_true, add_false = answers[0 if employment else 1]
                true, false = true | add_true, false | add_false
        return true, false

    def read(self, engagement: Mapping[str, EngagementValue]) -> tuple[int, int, tuple[DutchCriterionResult, ...]]:
        """The facts the answers make true and false, and each criterion's result (remembered per answers; the
        request schema fixes each field's type, so equal answers are equal values)."""
        values = tuple(engagement.get(criterion.input) for criterion, _, _ in self.criteria)
        found = self._answers.get(values)
        if found is None:
            true, false = self.table.known(engagement)
            results = tuple(
                DutchCriterionResult(criterion=criterion, answered=value is not None, hit=bool(bit & true))
                for (criterion, bit, _), value in zip(self.criteria, values, strict=True)
            )
            found = (true, false, results)
            self._answers.remember(values, found)
        return found  # type: ignore[return-value]


_TESTS: dict[tuple[int, int, bool], DutchTest] = {}


def dutch_test(ruleset: DutchRuleset, as_of: dt.date) -> DutchTest:
    """The compiled test for the rules in force on `as_of`, built once per ruleset, threshold entry and whether its
    presumption is law on that day (keyed by identity: the rulesets are frozen, and hashing them would cost as much
    as a verdict; the test holds both objects, so their ids are not reused)."""
    tariefgrens = ruleset.tariefgrens_on(as_of)
    in_force = tariefgrens is not None and tariefgrens.presumption_on(as_of)
    key = (id(ruleset), id(tariefgrens), in_force)
    test = _TESTS.get(key)
    if test is None or test.ruleset is not ruleset or test.tariefgrens is not tariefgrens:
        test = _TESTS[key] = DutchTest(ruleset, tariefgrens, in_force)
    return test


def _advice(
    test: DutchTest,
    assessment_parts: tuple[DutchCriterionResult, ...],
    as_of: dt.date,
    bounds: tuple[Verdict, Verdict],
    language: Language,
    stated: int,
) -> str:
    ruleset, tariefgrens = test.ruleset, test.tariefgrens
    texts = ruleset.texts
    sentences = [result.criterion.advice[language] for result in assessment_parts if result.hit]
    rate_hit = any(result.hit and result.criterion.presumption for result in assessment_parts)
    pending = ruleset.weighing.presumption_pending
    if tariefgrens is None:
        sentences.append(texts.no_threshold[language].format(as_of=day(as_of, language)))
    elif rate_hit and not test.presumption_in_force and pending is not None:
        sentences.append(pending[language].format(amount=money(tariefgrens.amount_eur, language)))
    elif rate_hit:
        sentences.append(
            texts.threshold_used[language].format(
                amount=money(tariefgrens.amount_eur, language),
                valid_from=day(tariefgrens.valid_from, language),
                status=texts.legal_status[tariefgrens.legal_status][language],
                basis=tariefgrens.basis[language],
            )
        )
    if stated < ruleset.weighing.floor:
        sentences.append(ruleset.weighing.texts.too_few[language].format(stated=stated, floor=ruleset.weighing.floor))
    unanswered = {result.criterion.input for result in assessment_parts if not result.answered}
    if unanswered:
        asked = [question.text[language] for question in ruleset.questions if question.input in unanswered]
        sentences.append(texts.unanswered[language].format(questions=" ".join(asked)))
        if bounds[0] is not bounds[1]:
            best, worst = word(bounds[0], language), word(bounds[1], language)
            sentences.append(texts.unanswered_range[language].format(best=best, worst=worst))
    sentences.append(texts.not_assessed[language])
    return " ".join(sentences)


def _decided(
    test: DutchTest, verdict: Verdict, rules: tuple[CompiledRule, ...], true: int, false: int
) -> Decided | None:
    if verdict is Verdict.risky:
        return None
    if rules:
        facts = 0
        for rule in rules:
            facts |= rule.facts_of(true)
        inputs = tuple(name for name, bits in test.table.inputs.items() if bits & facts)
        return Decided(tuple(rule.source for rule in rules), inputs)
    weighed = true if verdict is Verdict.unsafe else false  # the stated facts that point the verdict's way
    inputs = tuple(criterion.input for criterion, bit, _ in test.criteria if bit & weighed)
    return Decided((), inputs)


def assess_engagement(
    ruleset: DutchRuleset,
    engagement: Mapping[str, EngagementValue],
    as_of: dt.date,
    language: Language = DEFAULT_LANGUAGE,
    dont_know: frozenset[str] = frozenset(),
) -> DutchAssessment:
    """Score the engagement, advising in `language`; a field that is missing (or null) is unanswered and is not
    weighed. `dont_know` names the questions answered "don't know": they are not ranked first among the next
    questions."""
    test = dutch_test(ruleset, as_of)
    true, false, results = test.read(engagement)
    outcome = test.outcome(true, false, dont_know)
    employment, self_employment = test.balance.sides(true, false)
    stated = test.balance.stated(true, false)
    verdict, rules, best_case, worst_case = outcome.verdict, outcome.rules, outcome.best_case, outcome.worst_case
    return DutchAssessment(
        verdict=verdict,
        best_case=best_case,
        worst_case=worst_case,
        score=test.score(true),
        as_of=as_of,
        tariefgrens=test.tariefgrens,
        presumption_of_employment=bool(true & test.presumption_bit),
        results=results,
        advice=_advice(test, results, as_of, (best_case, worst_case), language, stated),
        language=language,
        decided=_decided(test, verdict, rules, true, false),
        next_questions=outcome.next_questions,
        could_change=outcome.could_change,
        answer_sets=outcome.answer_sets,
        sets_complete=outcome.sets_complete,
        balance=(employment, self_employment, stated),
    )
