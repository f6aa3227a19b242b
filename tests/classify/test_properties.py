"""Property tests: more employment indicators never give a safer verdict or a lower score, for both classifiers."""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compliance_api.classify.crossborder import assess_criteria
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


def assert_not_safer(before: DutchAssessment, after: DutchAssessment) -> None:
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


def verdict_and_score(engagement: dict[str, Any], day: dt.date) -> tuple[int, int]:
    """The verdict's rank and the score alone, through the compiled test (without the advice and next questions)."""
    test = dutch_test(RULESETS.dutch, day)
    true, false = test.table.known(engagement)
    return test.verdict(true, false).rank, test.score(true)


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
    one step towards employment never lowers the verdict or the score."""
    for day in (dt.date(2022, 1, 1), dt.date(2026, 7, 9)):
        results = {
            combo: verdict_and_score({f: ANSWER_ORDER[f][i] for f, i in zip(fields, combo, strict=True)}, day)
            for combo in itertools.product(range(3), repeat=len(fields))
        }
        for combo, before in results.items():
            for position in (p for p, level in enumerate(combo) if level < 2):
                after = results[(*combo[:position], combo[position] + 1, *combo[position + 1 :])]
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
def test_cross_border_never_safe_while_answering_true_would_be_unsafe(
    drawn: tuple[Country, dict[str, bool], str], day: dt.date
) -> None:
    country, criteria, name = drawn
    ruleset = RULESETS.cross_border[country]
    if assess_criteria(ruleset, {**criteria, name: True}, day).verdict.value == "unsafe":
        assert assess_criteria(ruleset, criteria, day).verdict.value != "safe"


@given(ENGAGEMENTS, DAYS, st.sampled_from(sorted({**HIT_VALUES, **EMPLOYMENT_ANSWER}.items())))
def test_dutch_never_safe_while_answering_with_a_hit_would_be_unsafe(
    engagement: dict[str, Any], day: dt.date, field_and_hit: tuple[str, Any]
) -> None:
    field, hit_value = field_and_hit
    if assess({**engagement, field: hit_value}, day).verdict.value == "unsafe":
        assert assess({**engagement, field: None}, day).verdict.value != "safe"


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
        for answer in question.answers:
            assert isinstance(answer.value, bool), "a criterion is answered yes or no"
            assert assess_criteria(ruleset, {**criteria, question.input: answer.value}, day).verdict is answer.verdict
