"""Facts, decisive rules and the next questions: the part of every test that says when the facts decide.

A fact is one condition on one input ("profit_risk is false", "other_clients_count is at least 1"). Given the
answers, each fact is true, false or unknown (its input not answered), and a set of facts is held as two bit masks:
the facts known to be true and those known to be false. A decisive rule of a ruleset holds when all of its `all`
facts are true, at least one of its `any` facts is true (if it has any), and none of its `unless` facts is true. An
unknown `unless` fact does not stop a rule: the rule decides on what is known, and the next questions say what
answering it would change. No rule ever holds because a fact is unknown.

Hand-rolled on purpose: the masks keep a verdict, and the two or three re-verdicts per unanswered question that the
ranking of the next questions needs, to a few microseconds each (bench/classify_ratio.py).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import combinations, product
from typing import Any, NamedTuple

from compliance_api.classify.ruleset import DecisiveRule, Fact, Weighing
from compliance_api.classify.verdict import Verdict

Value = bool | int | float | None
STEPS = {"integer": Decimal(1), "number": Decimal("0.01")}


@dataclass(frozen=True, slots=True)
class Condition:
    """A fact's test on its input's answer, `key` naming it in the table (equal conditions share one fact). A yes/no
    condition tests the answer itself; a numeric one tests it as a Decimal (the number as written: 38.0 is exactly
    38.00, not its binary float) and lists the answers from which it changes (`thresholds`)."""

    input: str
    key: str
    test: Callable[[Any], bool]  # the answer: a bool, or a Decimal for a numeric condition
    numeric: bool = False
    thresholds: tuple[Decimal, ...] = ()


def equals_bool(input_name: str, expected: bool) -> Condition:
    return Condition(input_name, f"{input_name}={expected}", lambda value: value is expected)


def at_least(input_name: str, bound: Decimal) -> Condition:
    return Condition(
        input_name,
        f"{input_name}>={bound}",
        lambda value: value >= bound,
        numeric=True,
        thresholds=(bound,),
    )


def at_most(input_name: str, bound: Decimal, step: Decimal) -> Condition:
    """At most `bound`, for an input answered in steps of `step` (1 for a count, 0.01 for euros)."""
    return Condition(
        input_name,
        f"{input_name}<={bound}",
        lambda value: value <= bound,
        numeric=True,
        thresholds=(bound + step,),
    )


def equals_number(input_name: str, expected: int) -> Condition:
    return Condition(
        input_name,
        f"{input_name}=={expected}",
        lambda value: value == expected,
        numeric=True,
        thresholds=(Decimal(expected), Decimal(expected + 1)),
    )


def _normal(value: bool | int | float, numeric: bool) -> object:
    """An answer as the conditions test it; None for a yes/no given to a numeric input (it matches nothing)."""
    if not numeric:
        return value
    return None if isinstance(value, bool) else Decimal(str(value))


@dataclass(frozen=True, slots=True)
class Branch:
    """One way to answer an input: a representative answer, the range it stands for (numbers), and the facts it
    makes true and false."""

    value: bool | int | float
    low: Decimal | None
    high: Decimal | None
    true: int
    false: int


class FactTable:
    """The facts one test reads, each a bit; built once per ruleset (and threshold)."""

    def __init__(self, conditions: Iterable[Condition], kinds: Mapping[str, str]) -> None:
        self.conditions: list[Condition] = []
        self._bit: dict[str, int] = {}
        for condition in conditions:
            if condition.key not in self._bit:
                self._bit[condition.key] = 1 << len(self.conditions)
                self.conditions.append(condition)
        self.by_input: dict[str, list[tuple[int, Condition]]] = {}
        for condition in self.conditions:
            self.by_input.setdefault(condition.input, []).append((self._bit[condition.key], condition))
        self.inputs = {name: sum(bit for bit, _ in found) for name, found in self.by_input.items()}
        self.numeric = {name: any(c.numeric for _, c in found) for name, found in self.by_input.items()}
        self.branches = {name: self._branches(name, kinds.get(name, "boolean")) for name in self.by_input}

    def bit(self, condition: Condition) -> int:
        return self._bit[condition.key]

    def mask(self, conditions: Iterable[Condition]) -> int:
        found = 0
        for condition in conditions:
            found |= self._bit[condition.key]
        return found

    def known(self, answers: Mapping[str, Value]) -> tuple[int, int]:
        """The facts known to be true and those known to be false, given the answers (None: not answered)."""
        true = false = 0
        for name in self.by_input:
            value = answers.get(name)
            if value is None:
                continue
            add_true, add_false = self.answered_as(name, value)
            true, false = true | add_true, false | add_false
        return true, false

    def answered_as(self, input_name: str, value: bool | int | float) -> tuple[int, int]:
        """The true and false bits of `input_name`'s facts, were it answered `value`."""
        true = false = 0
        normal = _normal(value, self.numeric[input_name])
        for bit, condition in self.by_input[input_name]:
            if normal is not None and condition.numeric == self.numeric[input_name] and condition.test(normal):
                true |= bit
            else:
                false |= bit
        return true, false

    def _branches(self, input_name: str, kind: str) -> tuple[Branch, ...]:
        """One representative answer per outcome of the input's facts: yes and no, or, for a number, each range
        between the thresholds its facts compare with (never below zero)."""
        if kind == "boolean":
            return tuple(Branch(value, None, None, *self.answered_as(input_name, value)) for value in (True, False))
        cuts = sorted({t for _, c in self.by_input[input_name] for t in c.thresholds if t > 0})
        step = STEPS[kind]
        lows = [Decimal(0), *cuts]
        highs: list[Decimal | None] = [cut - step for cut in cuts]
        highs.append(None)
        found = []
        for low, high in zip(lows, highs, strict=True):
            value: int | float = int(low) if kind == "integer" else float(low)
            found.append(Branch(value, low, high, *self.answered_as(input_name, value)))
        return tuple(found)


@dataclass(frozen=True, slots=True)
class CompiledRule:
    """A decisive rule as bit masks of its facts (`source` is the rule as the ruleset states it)."""

    id: str
    verdict: Verdict
    all_mask: int
    any_mask: int
    count_mask: int
    count_min: int
    unless_mask: int
    source: DecisiveRule
    rebutted_by: frozenset[str] = frozenset()

    def facts_of(self, true: int) -> int:
        """The facts that made it hold: its `all` facts and the true ones of `any_of` and `of`."""
        return self.all_mask | ((self.any_mask | self.count_mask) & true)


class Answer(NamedTuple):
    """One way to answer a question, and where it leads: `value` is an answer that takes this branch (a named tuple:
    the ranking makes one per answer of every unanswered question)."""

    value: bool | int | float
    low: Decimal | None  # for a numeric input: the range of answers taking this branch (None: unbounded)
    high: Decimal | None
    verdict: Verdict


class RankedQuestion(NamedTuple):
    input: str
    answers: tuple[Answer, ...]


def condition_of(fact: Fact, kinds: Mapping[str, str]) -> Condition:
    """A ruleset's fact as a condition (`kinds`: each input's kind, for the step of an `at_most`)."""
    if fact.is_ is not None:
        return equals_bool(fact.input, fact.is_)
    if fact.at_least is not None:
        return at_least(fact.input, fact.at_least)
    assert fact.at_most is not None
    return at_most(fact.input, fact.at_most, STEPS[kinds.get(fact.input, "integer")])


def conditions_of(rules: Iterable[DecisiveRule], kinds: Mapping[str, str]) -> list[Condition]:
    return [condition_of(fact, kinds) for rule in rules for fact in rule.facts]


def compile_rule(rule: DecisiveRule, table: FactTable, kinds: Mapping[str, str]) -> CompiledRule:
    """A decisive rule as masks of the table's facts (the table must hold every fact of the rule)."""

    def mask(facts: Iterable[Fact]) -> int:
        return table.mask(condition_of(fact, kinds) for fact in facts)

    return CompiledRule(
        rule.id,
        rule.verdict,
        mask(rule.all_of),
        mask(rule.any_of),
        mask(rule.of),
        rule.at_least or 0,
        mask(rule.unless),
        rule,
        frozenset(rule.rebutted_by),
    )


Decide = Callable[[int, int, list[int]], Verdict]
"""A test's verdict from the facts known true and false, and each of its rules' distance given them."""


class WeightSum:
    """The sum of the weights of the facts in a mask, by tables of eight facts each (a few lookups, not a loop)."""

    def __init__(self, weights: Iterable[tuple[int, int]]) -> None:
        weighted = [(bit, weight) for bit, weight in weights if bit]
        width = max((bit.bit_length() for bit, _ in weighted), default=0)
        self._tables = [
            [sum(weight for bit, weight in weighted if (bit >> (8 * chunk)) & byte) for byte in range(256)]
            for chunk in range((width + 7) // 8)
        ]
        self.mask = sum(bit for bit, _ in weighted)

    def __call__(self, mask: int) -> int:
        total = 0
        for table in self._tables:
            total += table[mask & 255]
            mask >>= 8
        return total


def distance(rule: CompiledRule, true: int, false: int) -> int:
    """How many more facts must turn true for `rule` to hold (64 if answers can no longer make it hold)."""
    if (
        false & rule.all_mask
        or (rule.any_mask and not rule.any_mask & ~false)
        or true & rule.unless_mask
        or (rule.count_mask & ~false).bit_count() < rule.count_min
    ):
        return 64
    missing = (rule.all_mask & ~true).bit_count()
    if rule.any_mask and not true & rule.any_mask:
        missing += 1
    if rule.count_min:
        missing += max(0, rule.count_min - (true & rule.count_mask).bit_count())
    return missing


def distances(rules: Sequence[CompiledRule], true: int, false: int) -> list[int]:
    """Each rule's `distance`: 0 where it holds, 64 where answers can no longer make it hold."""
    return [distance(rule, true, false) for rule in rules]


class Balance:
    """The weighing of the stated facts, as the country's courts weigh them (the ruleset's `weighing`).

    Each indicator is one fact: known true, it weighs its `employment` weight; known false, its `self_employment`
    weight; unknown, nothing (a fact that is not stated is never weighed). Below `floor` stated facts (answered
    inputs of the test, whatever they weigh), the weighing gives no verdict. From the floor up, one side decides when
    it weighs at least `clear_ratio` times the other, or when its lead over the other exceeds
    `balanced_within_percent` of their total plus `unanswered_share_percent` of what the unanswered indicators could
    weigh against it. The margin asked for shrinks as more is answered: with every indicator answered, any lead
    beyond a true balance decides. Each side's condition only gets easier as facts pointing its way are added, so a
    step toward employment never makes a verdict safer
    (from the floor up). Integer arithmetic throughout."""

    def __init__(self, weighing: Weighing, bits: Mapping[str, int]) -> None:
        weights = {indicator.input: indicator for indicator in weighing.indicators}
        present = [(bits[name], weights[name]) for name in weights if bits.get(name)]
        self.employment = WeightSum((bit, indicator.employment) for bit, indicator in present)
        self.self_employment = WeightSum((bit, indicator.self_employment) for bit, indicator in present)
        self.unanswered = weighing.unanswered_share_percent
        self.mask = sum(bit for bit, _ in present)
        self.floor = weighing.floor
        ratio = weighing.clear_ratio.as_integer_ratio()
        self.ratio_num, self.ratio_den = ratio
        self.margin = weighing.balanced_within_percent

    def stated(self, true: int, false: int) -> int:
        """How many of the test's inputs are answered."""
        return ((true | false) & self.mask).bit_count()

    def sides(self, true: int, false: int) -> tuple[int, int]:
        """The weight of the stated facts toward employment, and toward self-employment."""
        return self.employment(true & self.mask), self.self_employment(false & self.mask)

    def verdict(self, true: int, false: int) -> Verdict:
        """`unsafe` or `safe` where the stated facts clearly point that way, else `risky`."""
        if self.stated(true, false) < self.floor:
            return Verdict.risky
        employment, self_employment = self.sides(true, false)
        if employment and employment * self.ratio_den >= self.ratio_num * self_employment:
            return Verdict.unsafe
        if self_employment and self_employment * self.ratio_den >= self.ratio_num * employment:
            return Verdict.safe
        unknown = self.mask & ~(true | false)
        balanced = self.margin * (employment + self_employment)
        lead = (employment - self_employment) * 100
        if lead > balanced + self.unanswered * self.self_employment(unknown):
            return Verdict.unsafe
        if -lead > balanced + self.unanswered * self.employment(unknown):
            return Verdict.safe
        return Verdict.risky


@dataclass(frozen=True, slots=True)
class RuleSides:
    """A test's decisive rules split by verdict, as positions in its list of rules (and of their distances);
    `statutory` the positions of the rules a statute makes decisive (they decide below the weighing's floor)."""

    rules: tuple[CompiledRule, ...]
    unsafe: tuple[int, ...]
    safe: tuple[int, ...]
    statutory: frozenset[int] = frozenset()

    @classmethod
    def of(cls, rules: Sequence[CompiledRule]) -> RuleSides:
        return cls(
            tuple(rules),
            tuple(i for i, rule in enumerate(rules) if rule.verdict is Verdict.unsafe),
            tuple(i for i, rule in enumerate(rules) if rule.verdict is Verdict.safe),
            frozenset(i for i, rule in enumerate(rules) if rule.source.statutory),
        )

    def holding(
        self, far: Sequence[int], below_floor: bool = False
    ) -> tuple[tuple[CompiledRule, ...], tuple[CompiledRule, ...]]:
        """The rules for employment and for self-employment that hold, given each rule's distance (an employment rule
        that a holding self-employment rule rebuts does not hold). Below the weighing's floor, only statutory rules
        decide."""
        if 0 not in far:  # most often no rule holds: say so without building anything
            return (), ()
        rules = self.rules
        statutory = self.statutory
        safe = tuple(rules[i] for i in self.safe if not far[i] and (not below_floor or i in statutory))
        unsafe = tuple(rules[i] for i in self.unsafe if not far[i] and (not below_floor or i in statutory))
        if unsafe and safe:  # a presumption its rebuttal answers does not decide
            safe_ids = {rule.id for rule in safe}
            unsafe = tuple(rule for rule in unsafe if not rule.rebutted_by & safe_ids)
        return unsafe, safe

    def one_answer_away(self, far: Sequence[int], safe: Sequence[CompiledRule]) -> bool:
        """Whether one more answer could make a rule for employment hold (one the holding `safe` rules do not rebut)."""
        holding_ids = {rule.id for rule in safe}
        rules = self.rules
        return any(far[i] <= 1 for i in self.unsafe if not rules[i].rebutted_by & holding_ids)


NEXT_QUESTIONS = 5
"""How many next questions a `risky` verdict lists."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """Everything a test's facts decide: the verdict, the rules that gave it, its bounds (every unanswered input
    answered the way that does not point to employment, and the way that does), and what could change it."""

    verdict: Verdict
    rules: tuple[CompiledRule, ...]
    best_case: Verdict
    worst_case: Verdict
    next_questions: tuple[RankedQuestion, ...]
    could_change: tuple[RankedQuestion, ...] = ()
    answer_sets: tuple[AnswerSet, ...] = ()
    sets_complete: bool = True


class CompiledTest:
    """What the Dutch and the cross-border tests share: the decisive rules' order of precedence, the verdict from the
    facts and everything they decide (both remembered), and the verdict of one answer the next questions weigh.
    Each test says what keeps a holding rule for self-employment from deciding (`_outweighed`), what it answers
    where no decisive rule decides (`_undecided`), and the facts were every unanswered input answered one way
    (`answered_all`)."""

    rules: list[CompiledRule]
    sides: RuleSides
    table: FactTable
    touching: dict[str, tuple[int, ...]]
    weight: dict[str, int]
    balance: Balance
    order: Sequence[str]

    def __init__(self) -> None:
        self._decided = Memo()
        self._outcomes = Memo()

    def _outweighed(self, true: int) -> bool:
        """Whether the stated facts keep a holding rule for self-employment from deciding."""
        raise NotImplementedError

    def _undecided(self, true: int, false: int, far: list[int]) -> Verdict:
        raise NotImplementedError

    def answered_all(self, true: int, false: int, *, employment: bool) -> tuple[int, int]:
        """The facts were every unanswered input answered the way that points to employment (or the way that does
        not)."""
        raise NotImplementedError

    def _decide(self, true: int, false: int, far: list[int]) -> tuple[Verdict, tuple[CompiledRule, ...]]:
        """A rule for employment decides; then a rule for self-employment, unless the stated facts outweigh it or a
        rule for employment is one answer away (then the weighing of the stated facts decides, as it does where no
        rule holds)."""
        unsafe, safe = self.sides.holding(far, self.balance.stated(true, false) < self.balance.floor)
        if unsafe:
            return Verdict.unsafe, unsafe
        if not safe or self._outweighed(true) or self.sides.one_answer_away(far, safe):
            return self._undecided(true, false, far), ()
        return Verdict.safe, safe

    def decide(self, true: int, false: int) -> tuple[Verdict, tuple[CompiledRule, ...]]:
        """The verdict from the facts known true and false, and the decisive rules that gave it (remembered)."""
        key = (true, false)
        found = self._decided.get(key)
        if found is None:
            found = self._decide(true, false, distances(self.rules, true, false))
            self._decided.remember(key, found)
        return found  # type: ignore[return-value]

    def verdict(self, true: int, false: int) -> Verdict:
        return self.decide(true, false)[0]

    def outcome(self, true: int, false: int, deferred: frozenset[str] = frozenset()) -> Outcome:
        """Everything the facts decide (remembered): the verdict and its rules, its bounds, what could change it."""
        key = (true, false, deferred)
        found = self._outcomes.get(key)
        if found is None:
            verdict, rules = self.decide(true, false)
            bounds = (
                self.verdict(*self.answered_all(true, false, employment=False)),
                self.verdict(*self.answered_all(true, false, employment=True)),
            )
            found = self.changes(true, false, verdict, rules, bounds, self.order, deferred)
            self._outcomes.remember(key, found)
        return found  # type: ignore[return-value]

    def changes(
        self,
        true: int,
        false: int,
        verdict: Verdict,
        rules: tuple[CompiledRule, ...],
        bounds: tuple[Verdict, Verdict],
        order: Sequence[str],
        deferred: frozenset[str],
    ) -> Outcome:
        """The verdict with what could change it: every unanswered input one of whose answers changes it, the next
        questions of a `risky` verdict (the five that can move it most), and, where no single answer changes a
        `risky` verdict, the smallest sets of answers that would."""
        could_change = tuple(
            next_questions(
                self.table,
                self.branch_verdict,
                true,
                false,
                verdict,
                order,
                self.rules,
                self.touching,
                self.weight,
                None,
                deferred,
            )
        )
        sets: tuple[AnswerSet, ...] = ()
        complete = True
        if verdict is Verdict.risky and not could_change:
            sets, complete = answer_sets(
                self.table, self.verdict, true, false, verdict, order, deferred, self.answers_to_decide(true, false)
            )
        questions = could_change[:NEXT_QUESTIONS] if verdict is Verdict.risky else ()
        return Outcome(verdict, rules, bounds[0], bounds[1], questions, could_change, sets, complete)

    def answers_to_decide(self, true: int, false: int) -> int:
        """A lower bound on how many more answers a decisive verdict needs: below the weighing's floor only a
        statutory rule decides, and each answer adds at most one stated fact."""
        balance = self.balance
        missing = balance.floor - balance.stated(true, false)
        if missing <= 1:
            return 1
        far = distances(self.rules, true, false)
        if any(far[index] < 64 for index in self.sides.statutory):
            return 1
        return missing

    def branch_verdict(self, true: int, false: int, far: list[int]) -> Verdict:
        """The verdict of one answer the next questions weigh, from the rules' distances given it (not remembered:
        the ranking it is part of is). Most answers make no decisive rule hold: they go straight to `_undecided`."""
        if 0 in far:
            return self._decide(true, false, far)[0]
        return self._undecided(true, false, far)


def rules_by_input(table: FactTable, rules: Sequence[CompiledRule]) -> dict[str, tuple[int, ...]]:
    """For each input, the positions of the rules that read one of its facts."""
    return {
        name: tuple(
            index
            for index, rule in enumerate(rules)
            if bits & (rule.all_mask | rule.any_mask | rule.count_mask | rule.unless_mask)
        )
        for name, bits in table.inputs.items()
    }


def next_questions(
    table: FactTable,
    decide: Decide,
    true: int,
    false: int,
    current: Verdict,
    order: Sequence[str],
    rules: Sequence[CompiledRule],
    touching: Mapping[str, tuple[int, ...]],
    weight: Mapping[str, int],
    limit: int | None = 5,
    deferred: frozenset[str] = frozenset(),
) -> list[RankedQuestion]:
    """The unanswered inputs one of whose answers changes the verdict, the one that can move it most first, at most
    `limit` (all of them with None). An input no answer of which changes the verdict is never listed.

    Ranked first by whether the question was answered "don't know" (`deferred`: those come after every other), then
    by how many of their answers decide the verdict, then how many change it, then how much closer to a decisive rule
    the best answer brings it (fewer facts missing is closer), then how much the input weighs in the weighing of the
    indicators (`weight`), then the ruleset's order. `touching` names, per input, the rules that read its facts: an
    answer changes only their distances, so each answer's verdict is decided from the current distances with just
    those recomputed.
    """
    far = distances(rules, true, false)
    closest = min(far, default=64)
    by_distance = sorted(range(len(rules)), key=far.__getitem__)
    known = true | false
    ranked = []
    for position, input_name in enumerate(order):
        bits = table.inputs.get(input_name, 0)
        if not bits or known & bits:
            continue
        near_rules = touching[input_name]
        # The closest rule the answer cannot move: the first by distance that does not read this input.
        others = next((far[index] for index in by_distance if index not in near_rules), 64)
        answers = []
        nearer = decisive = moving = 0
        for branch in table.branches[input_name]:
            after_true, after_false = true | branch.true, false | branch.false
            after = far
            if near_rules:  # written out: this is the inner loop of the ranking
                after = far.copy()
                moved = others
                for index in near_rules:
                    moved_to = after[index] = distance(rules[index], after_true, after_false)
                    if moved_to < moved:
                        moved = moved_to
                if closest - moved > nearer:
                    nearer = closest - moved
            verdict = decide(after_true, after_false, after)
            decisive += verdict is not Verdict.risky
            moving += verdict is not current
            answers.append(Answer(branch.value, branch.low, branch.high, verdict))
        if not moving:
            continue
        rank = (input_name in deferred, -decisive, -moving, -nearer, -weight.get(input_name, 0), position)
        ranked.append((rank, RankedQuestion(input_name, tuple(answers))))
    ranked.sort(key=lambda entry: entry[0])
    return [question for _, question in ranked[:limit]]


class SetAnswer(NamedTuple):
    input: str
    value: bool | int | float
    low: Decimal | None
    high: Decimal | None


class AnswerSet(NamedTuple):
    """Answers to several unanswered questions that, given together, change a verdict no single answer changes."""

    answers: tuple[SetAnswer, ...]
    verdict: Verdict


SET_SIZE = 3
SET_BUDGET = 4096
"""The bounded search for a set of answers: sets of at most SET_SIZE answers, at most SET_BUDGET verdicts tried
(bench/next_questions.py measures what it costs)."""


def answer_sets(
    table: FactTable,
    verdict_of: Callable[[int, int], Verdict],
    true: int,
    false: int,
    current: Verdict,
    order: Sequence[str],
    deferred: frozenset[str] = frozenset(),
    least: int = 2,
) -> tuple[tuple[AnswerSet, ...], bool]:
    """The smallest sets of at most SET_SIZE answers that change the verdict (the first found for each verdict they
    lead to), and whether the search was complete: `((), True)` says that no such set exists.

    Sets of two answers are tried before sets of three, questions answered "don't know" last; the search stops at
    the first size that changes the verdict, or after SET_BUDGET verdicts (then `complete` is False). `least` is a
    lower bound on the answers any change needs (the floor still to reach): smaller sets are not tried, and beyond
    SET_SIZE none would."""
    known = true | false
    inputs = [name for name in order if table.inputs.get(name, 0) and not known & table.inputs[name]]
    inputs.sort(key=lambda name: name in deferred)
    tried = 0
    for size in range(max(2, least), SET_SIZE + 1):
        found: dict[Verdict, AnswerSet] = {}
        for names in combinations(inputs, size):
            for branches in product(*(table.branches[name] for name in names)):
                tried += 1
                if tried > SET_BUDGET:
                    return tuple(found.values()), False
                after_true, after_false = true, false
                for branch in branches:
                    after_true, after_false = after_true | branch.true, after_false | branch.false
                verdict = verdict_of(after_true, after_false)
                if verdict is not current and verdict not in found:
                    found[verdict] = AnswerSet(
                        tuple(
                            SetAnswer(name, branch.value, branch.low, branch.high)
                            for name, branch in zip(names, branches, strict=True)
                        ),
                        verdict,
                    )
        if found:
            return tuple(found.values()), True
    return (), True


class Memo(dict[Hashable, object]):
    """Results by what they are computed from (the facts known true and false, or the answers), for one compiled
    test: the same facts always give the same answer, and real engagements repeat few patterns. Emptied when it grows
    past `size` (a crafted stream of patterns cannot grow it without bound)."""

    def __init__(self, size: int = 65_536) -> None:
        super().__init__()
        self.size = size

    def remember(self, key: Hashable, value: object) -> None:
        if len(self) >= self.size:
            self.clear()
        self[key] = value
