"""Property tests, for both classifiers: from the weighing's floor up, more employment indicators never give a safer
verdict (nor ever a lower score); a decisive verdict never rests on an unknown fact; a fact not stated is never
weighed; below the floor only a statutory rule decides; every answer that could change a verdict is listed."""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compliance_api.classify.crossborder import CrossBorderAssessment, assess_criteria
from compliance_api.classify.dutch import DutchAssessment, assess_engagement, dutch_test
from compliance_api.classify.language import DEFAULT_LANGUAGE
from compliance_api.classify.ruleset import ENGAGEMENT_FIELDS, packaged_rulesets
from compliance_api.classify.verdict import Country

RULESETS = packaged_rulesets()
DAYS = st.dates(min_value=dt.date(2020, 1, 1), max_value=dt.date(2030, 12, 31))
RATES = st.floats(min_value=0, max_value=9_999.99, allow_nan=False, allow_infinity=False)
EMPLOYMENT_ANSWER = {
    "own_tools": False,
    "own_liability": False,
    "sets_own_hours": False,
    "can_delegate": False,
    "profit_risk": False,
    "works_under_instructions": True,
    "client_supervises_work": True,
    "embedded_in_organisation": True,
    "structural_work": True,
    "same_work_as_employees": True,
    "terms_set_by_client": True,
    "acts_as_entrepreneur": False,
}
"""Each yes/no input's answer that points to employment."""
INDICATOR_BOOLEANS = tuple(EMPLOYMENT_ANSWER)


def optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


ENGAGEMENTS = st.fixed_dictionaries(
    {
        "hourly_rate_eur": optional(RATES | st.sampled_from([32.24, 33.0, 36.0, 38.0, 38.01, 37.99])),
        "months_duration": optional(st.integers(0, 600)),
        "days_per_week": optional(st.integers(0, 7)),
        "other_clients_count": optional(st.integers(0, 100_000)),
        **{name: optional(st.booleans()) for name in INDICATOR_BOOLEANS},
    }
)


def assess(engagement: dict[str, Any], day: dt.date) -> DutchAssessment:
    return assess_engagement(RULESETS.dutch, engagement, day)


FLOOR = RULESETS.dutch.weighing.floor


def judgeable(*assessments: DutchAssessment | CrossBorderAssessment) -> bool:
    """Whether each assessment states enough facts for the weighing to decide (below the floor it abstains, so
    crossing the floor is a step towards having enough facts, not a step towards either verdict)."""
    return all(assessment.balance[2] >= FLOOR for assessment in assessments)


def assert_not_safer(before: DutchAssessment, after: DutchAssessment) -> None:
    if judgeable(before, after):
        assert after.verdict.rank >= before.verdict.rank, (before, after)
    assert after.score >= before.score


@given(ENGAGEMENTS, DAYS, st.sampled_from(INDICATOR_BOOLEANS))
def test_turning_an_indicator_on_is_never_safer(engagement: dict[str, Any], day: dt.date, field: str) -> None:
    """From answered the other way or from unanswered to answered the way that points to employment."""
    before = assess(engagement, day)
    after = assess({**engagement, field: EMPLOYMENT_ANSWER[field]}, day)
    assert_not_safer(before, after)


@given(ENGAGEMENTS, DAYS, st.sampled_from(INDICATOR_BOOLEANS))
def test_leaving_an_indicator_unanswered_is_never_safer_than_answering_it_the_other_way(
    engagement: dict[str, Any], day: dt.date, field: str
) -> None:
    answered_no = assess({**engagement, field: not EMPLOYMENT_ANSWER[field]}, day)
    unanswered = assess({**engagement, field: None}, day)
    if judgeable(answered_no, unanswered):
        assert unanswered.verdict.rank >= answered_no.verdict.rank


@given(ENGAGEMENTS, DAYS, RATES, RATES)
def test_lowering_the_rate_is_never_safer(engagement: dict[str, Any], day: dt.date, a: float, b: float) -> None:
    before = assess({**engagement, "hourly_rate_eur": max(a, b)}, day)
    after = assess({**engagement, "hourly_rate_eur": min(a, b)}, day)
    assert_not_safer(before, after)


HIT_VALUES = {"hourly_rate_eur": 0.0, "months_duration": 600, "days_per_week": 7, "other_clients_count": 0}


@given(ENGAGEMENTS, DAYS, st.sampled_from(sorted(HIT_VALUES)))
def test_answering_a_number_with_a_hit_is_never_safer(engagement: dict[str, Any], day: dt.date, field: str) -> None:
    hit_value = HIT_VALUES[field]
    before = assess({**engagement, field: None}, day)
    after = assess({**engagement, field: hit_value}, day)
    assert_not_safer(before, after)


@given(ENGAGEMENTS, DAYS, st.integers(0, 600), st.integers(0, 600))
def test_lengthening_the_engagement_is_never_safer(engagement: dict[str, Any], day: dt.date, a: int, b: int) -> None:
    before = assess({**engagement, "months_duration": min(a, b)}, day)
    after = assess({**engagement, "months_duration": max(a, b)}, day)
    assert_not_safer(before, after)


@given(ENGAGEMENTS, DAYS, st.integers(0, 7), st.integers(0, 7))
def test_adding_days_is_never_safer(engagement: dict[str, Any], day: dt.date, a: int, b: int) -> None:
    before = assess({**engagement, "days_per_week": min(a, b)}, day)
    after = assess({**engagement, "days_per_week": max(a, b)}, day)
    assert_not_safer(before, after)


@given(ENGAGEMENTS, DAYS, st.integers(0, 100_000), st.integers(0, 100_000))
def test_removing_other_clients_is_never_safer(engagement: dict[str, Any], day: dt.date, a: int, b: int) -> None:
    before = assess({**engagement, "other_clients_count": max(a, b)}, day)
    after = assess({**engagement, "other_clients_count": min(a, b)}, day)
    assert_not_safer(before, after)


@given(ENGAGEMENTS, DAYS)
def test_same_input_same_output_and_ratio_is_score_over_100(engagement: dict[str, Any], day: dt.date) -> None:
    first, second = assess(engagement, day), assess(dict(engagement), day)
    assert first == second
    assert 0 <= first.score <= 100
    assert first.ratio == first.score / 100
    assert set(first.criteria_hit) <= {criterion.id for criterion in RULESETS.dutch.criteria}


@given(ENGAGEMENTS, DAYS)
def test_the_rate_presumption_is_never_safe(engagement: dict[str, Any], day: dt.date) -> None:
    assessment = assess(engagement, day)
    if assessment.presumption_of_employment:
        assert assessment.verdict.value != "safe"


COUNTRIES = st.sampled_from(list(Country))


@st.composite
def criteria_maps(draw: st.DrawFn) -> tuple[Country, dict[str, bool], str]:
    """A country, a partial map of its criteria, and one of its criterion names."""
    country = draw(COUNTRIES)
    names = RULESETS.cross_border[country].criterion_names
    chosen = draw(st.lists(st.sampled_from(names), unique=True))
    return country, {name: draw(st.booleans()) for name in chosen}, draw(st.sampled_from(names))


@given(criteria_maps(), DAYS)
def test_cross_border_turning_a_criterion_on_is_never_safer(
    drawn: tuple[Country, dict[str, bool], str], day: dt.date
) -> None:
    country, criteria, name = drawn
    ruleset = RULESETS.cross_border[country]
    before = assess_criteria(ruleset, criteria, day)
    after = assess_criteria(ruleset, {**criteria, name: True}, day)
    if judgeable(before, after):
        assert after.verdict.rank >= before.verdict.rank
    assert after.score >= before.score


@given(criteria_maps(), DAYS)
def test_cross_border_same_input_same_output(drawn: tuple[Country, dict[str, bool], str], day: dt.date) -> None:
    country, criteria, _ = drawn
    ruleset = RULESETS.cross_border[country]
    first = assess_criteria(ruleset, criteria, day)
    assert first == assess_criteria(ruleset, dict(criteria), day)
    assert set(first.not_provided) == set(ruleset.criterion_names) - set(criteria)
    unanswered = [c.question[DEFAULT_LANGUAGE] for c in ruleset.criteria if c.name in first.not_provided]
    assert all(question in first.advice for question in unanswered)
    assert not any(name in first.advice for name in first.not_provided), "a question is named by its text"


@given(criteria_maps(), DAYS)
def test_rate_below_tariefgrens_alone_is_never_beyond_risky(
    drawn: tuple[Country, dict[str, bool], str], day: dt.date
) -> None:
    country, _, _ = drawn
    assessment = assess_criteria(RULESETS.cross_border[country], {"rate_below_tariefgrens": True}, day)
    assert assessment.verdict.value == "risky"


# Each input from most self-employed, through unanswered, to most employee-like.
ANSWER_ORDER: dict[str, list[Any]] = {
    "hourly_rate_eur": [100.0, None, 38.0],
    "months_duration": [0, None, 12],
    "days_per_week": [3, None, 4],
    "other_clients_count": [1, None, 0],
    **{name: [not employment, None, employment] for name, employment in EMPLOYMENT_ANSWER.items()},
}


def verdict_and_score(engagement: dict[str, Any], day: dt.date) -> tuple[int, int, int]:
    """The verdict's rank, the score and how many stated facts weigh, through the compiled test (without the advice
    and next questions)."""
    test = dutch_test(RULESETS.dutch, day)
    true, false = test.table.known(engagement)
    return test.verdict(true, false).rank, test.score(true), test.balance.stated(true, false)


@pytest.mark.parametrize(
    "fields",
    [
        list(ENGAGEMENT_FIELDS[:9]),
        ["sets_own_hours", "can_delegate", "profit_risk", *ENGAGEMENT_FIELDS[9:]],
    ],
    ids=["the nine original inputs", "the newer inputs with freedom of hours, substitution and risk"],
)
def test_every_step_towards_employment_is_never_safer_exhaustively(fields: list[str]) -> None:
    """All 3^9 answer combinations of nine inputs (the others unanswered), on a date with and without a threshold:
    one step towards employment never lowers the score, nor the verdict where both sides of the step state enough
    facts to judge."""
    for day in (dt.date(2022, 1, 1), dt.date(2026, 7, 9)):
        results = {
            combo: verdict_and_score({f: ANSWER_ORDER[f][i] for f, i in zip(fields, combo, strict=True)}, day)
            for combo in itertools.product(range(3), repeat=len(fields))
        }
        for combo, before in results.items():
            for position in (p for p, level in enumerate(combo) if level < 2):
                after = results[(*combo[:position], combo[position] + 1, *combo[position + 1 :])]
                if min(before[2], after[2]) >= FLOOR:
                    assert after[0] >= before[0], (combo, position)
                assert after[1] >= before[1], (combo, position)


@st.composite
def unanswered_criteria(draw: st.DrawFn) -> tuple[Country, dict[str, bool], str]:
    """A country, a partial map of its criteria, and one criterion the map leaves unanswered."""
    country, criteria, _ = draw(criteria_maps())
    left_out = [name for name in RULESETS.cross_border[country].criterion_names if name not in criteria]
    if not left_out:
        criteria.popitem()
        left_out = [name for name in RULESETS.cross_border[country].criterion_names if name not in criteria]
    return country, criteria, draw(st.sampled_from(left_out))


@given(unanswered_criteria(), DAYS)
def test_cross_border_every_answer_that_changes_the_verdict_is_listed(
    drawn: tuple[Country, dict[str, bool], str], day: dt.date
) -> None:
    """The verdict decides on the stated facts; an unanswered criterion whose answer would change it is listed in
    `could_change` with where that answer leads, and one no answer of which changes it is not listed."""
    country, criteria, name = drawn
    ruleset = RULESETS.cross_border[country]
    assessment = assess_criteria(ruleset, criteria, day)
    listed = {question.input: question for question in assessment.could_change}
    leads = {value: assess_criteria(ruleset, {**criteria, name: value}, day).verdict for value in (True, False)}
    if set(leads.values()) == {assessment.verdict}:
        assert name not in listed
    else:
        assert {answer.value: answer.verdict for answer in listed[name].answers} == leads


@given(ENGAGEMENTS, DAYS, st.sampled_from(sorted({**HIT_VALUES, **EMPLOYMENT_ANSWER}.items())))
def test_dutch_an_answer_that_changes_the_verdict_is_listed(
    engagement: dict[str, Any], day: dt.date, field_and_hit: tuple[str, Any]
) -> None:
    field, hit_value = field_and_hit
    unanswered = {**engagement, field: None}
    assessment = assess(unanswered, day)
    hit = assess({**engagement, field: hit_value}, day)
    listed = {question.input: question for question in assessment.could_change}
    if hit.verdict is not assessment.verdict:
        assert hit.verdict in {answer.verdict for answer in listed[field].answers}
    for question in assessment.could_change:
        assert any(answer.verdict is not assessment.verdict for answer in question.answers)


@given(criteria_maps(), DAYS)
def test_cross_border_a_decisive_verdict_never_rests_on_an_unknown_fact(
    drawn: tuple[Country, dict[str, bool], str], day: dt.date
) -> None:
    """Answering an unanswered criterion the way the verdict points (met for unsafe, not met for safe) keeps it."""
    country, criteria, _ = drawn
    ruleset = RULESETS.cross_border[country]
    assessment = assess_criteria(ruleset, criteria, day)
    if assessment.verdict.value == "risky":
        return
    pointing = assessment.verdict.value == "unsafe"
    for name in assessment.not_provided:
        assert assess_criteria(ruleset, {**criteria, name: pointing}, day).verdict is assessment.verdict, name


@given(ENGAGEMENTS, DAYS)
def test_dutch_a_decisive_verdict_never_rests_on_an_unknown_fact(engagement: dict[str, Any], day: dt.date) -> None:
    assessment = assess(engagement, day)
    if assessment.verdict.value == "risky":
        return
    for field in assessment.unanswered:
        if field in EMPLOYMENT_ANSWER:
            value = EMPLOYMENT_ANSWER[field] if assessment.verdict.value == "unsafe" else not EMPLOYMENT_ANSWER[field]
            assert assess({**engagement, field: value}, day).verdict is assessment.verdict, field


@given(criteria_maps(), DAYS)
def test_cross_border_a_fact_not_stated_is_never_weighed(
    drawn: tuple[Country, dict[str, bool], str], day: dt.date
) -> None:
    """The weighing is the sum of the stated answers' weights, as the ruleset gives them, and nothing else."""
    country, criteria, _ = drawn
    ruleset = RULESETS.cross_border[country]
    weights = {indicator.input: indicator for indicator in ruleset.weighing.indicators}
    employment = sum(weights[name].employment for name, value in criteria.items() if value)
    self_employment = sum(weights[name].self_employment for name, value in criteria.items() if not value)
    stated = len(criteria)
    assert assess_criteria(ruleset, criteria, day).balance == (employment, self_employment, stated)


@given(ENGAGEMENTS, DAYS)
def test_dutch_an_unanswered_field_is_the_same_as_one_left_out(engagement: dict[str, Any], day: dt.date) -> None:
    stated = {field: value for field, value in engagement.items() if value is not None}
    full, left_out = assess(engagement, day), assess(stated, day)
    assert (full.verdict, full.balance, full.could_change) == (
        left_out.verdict,
        left_out.balance,
        left_out.could_change,
    )


@given(criteria_maps(), DAYS)
def test_cross_border_below_the_floor_only_a_statutory_rule_decides(
    drawn: tuple[Country, dict[str, bool], str], day: dt.date
) -> None:
    country, criteria, _ = drawn
    assessment = assess_criteria(RULESETS.cross_border[country], criteria, day)
    if assessment.balance[2] < FLOOR and assessment.verdict.value != "risky":
        assert assessment.decided_by
        assert all(rule.statutory for rule in assessment.decided_by)


@given(ENGAGEMENTS, DAYS)
def test_dutch_below_the_floor_only_a_statutory_rule_decides(engagement: dict[str, Any], day: dt.date) -> None:
    assessment = assess(engagement, day)
    if assessment.balance[2] < FLOOR and assessment.verdict.value != "risky":
        assert assessment.decided is not None
        assert all(rule.statutory for rule in assessment.decided.rules)
        assert assessment.decided.rules or assessment.presumption_of_employment


@given(criteria_maps(), DAYS)
def test_cross_border_the_advice_gives_the_range_the_unanswered_criteria_leave(
    drawn: tuple[Country, dict[str, bool], str], day: dt.date
) -> None:
    country, criteria, _ = drawn
    ruleset = RULESETS.cross_border[country]
    assessment = assess_criteria(ruleset, criteria, day)
    none_met = assess_criteria(ruleset, {name: criteria.get(name, False) for name in ruleset.criterion_names}, day)
    all_met = assess_criteria(ruleset, {name: criteria.get(name, True) for name in ruleset.criterion_names}, day)
    assert (assessment.best_case, assessment.worst_case) == (none_met.verdict, all_met.verdict)
    if none_met.verdict is not all_met.verdict:
        assert f"from {none_met.verdict.value} to {all_met.verdict.value}" in assessment.advice


@given(ENGAGEMENTS, DAYS)
def test_dutch_each_next_answer_leads_where_answering_it_does(engagement: dict[str, Any], day: dt.date) -> None:
    """The ranking decides each answer from the current facts with only the rules it touches re-read: the verdict it
    names must be the verdict of the engagement answered that way, assessed from scratch."""
    assessment = assess(engagement, day)
    for question in assessment.next_questions:
        assert engagement.get(question.input) is None
        assert any(answer.verdict is not assessment.verdict for answer in question.answers), "it moves something"
        for answer in question.answers:
            assert assess({**engagement, question.input: answer.value}, day).verdict is answer.verdict


@given(criteria_maps(), DAYS)
def test_cross_border_each_next_answer_leads_where_answering_it_does(
    drawn: tuple[Country, dict[str, bool], str], day: dt.date
) -> None:
    country, criteria, _ = drawn
    ruleset = RULESETS.cross_border[country]
    assessment = assess_criteria(ruleset, criteria, day)
    assert len(assessment.next_questions) <= 5
    for question in assessment.next_questions:
        assert question.input not in criteria
        assert any(answer.verdict is not assessment.verdict for answer in question.answers), "it moves something"
        for answer in question.answers:
            assert isinstance(answer.value, bool), "a criterion is answered yes or no"
            assert assess_criteria(ruleset, {**criteria, question.input: answer.value}, day).verdict is answer.verdict


COMPLETE_ENGAGEMENTS = st.fixed_dictionaries(
    {
        "hourly_rate_eur": RATES,
        "months_duration": st.integers(0, 600),
        "days_per_week": st.integers(0, 7),
        "other_clients_count": st.integers(0, 100_000),
        **{name: st.booleans() for name in INDICATOR_BOOLEANS},
    }
)


def truly_balanced(balance: tuple[int, int, int], margin: int) -> bool:
    employment, self_employment, _ = balance
    return abs(employment - self_employment) * 100 <= margin * (employment + self_employment)


@given(COMPLETE_ENGAGEMENTS, st.dates(min_value=dt.date(2023, 7, 1), max_value=dt.date(2030, 12, 31)))
def test_dutch_complete_answers_decide_unless_truly_balanced(engagement: dict[str, Any], day: dt.date) -> None:
    assessment = assess(engagement, day)
    assert assessment.unanswered == []
    if assessment.verdict.value == "risky":
        assert truly_balanced(assessment.balance, RULESETS.dutch.weighing.balanced_within_percent), assessment.balance


@given(COUNTRIES, st.data(), DAYS)
def test_cross_border_complete_answers_decide_unless_truly_balanced(
    country: Country, data: st.DataObject, day: dt.date
) -> None:
    ruleset = RULESETS.cross_border[country]
    criteria = {name: data.draw(st.booleans()) for name in ruleset.criterion_names}
    assessment = assess_criteria(ruleset, criteria, day)
    if assessment.verdict.value == "risky":
        assert truly_balanced(assessment.balance, ruleset.weighing.balanced_within_percent), assessment.balance
