"""Golden cases for the Dutch test: worked cases, the decisive rules of the ruleset, and the edges of every rule."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from compliance_api.classify.dutch import DutchAssessment, assess_engagement
from compliance_api.classify.language import Language
from compliance_api.classify.ruleset import ENGAGEMENT_FIELDS, DutchRuleset, packaged_rulesets

RULESET = packaged_rulesets().dutch
AS_OF = dt.date(2026, 7, 9)
WEIGHT = {criterion.id: criterion.weight for criterion in RULESET.criteria}

# Answers that hit nothing: an entrepreneur at a high rate, short and part time, with other clients and all freedoms,
# whom the client neither steers nor embeds.
FREE: dict[str, Any] = {
    "hourly_rate_eur": 120.0,
    "months_duration": 6,
    "days_per_week": 2,
    "other_clients_count": 3,
    "own_tools": True,
    "own_liability": True,
    "sets_own_hours": True,
    "can_delegate": True,
    "profit_risk": True,
    "works_under_instructions": False,
    "client_supervises_work": False,
    "embedded_in_organisation": False,
    "structural_work": False,
    "same_work_as_employees": False,
    "terms_set_by_client": False,
    "acts_as_entrepreneur": True,
}
NINE = ENGAGEMENT_FIELDS[:9]
"""The inputs of the original contract."""


def free(**changes: Any) -> dict[str, Any]:
    return {**FREE, **changes}


def only_nine(**changes: Any) -> dict[str, Any]:
    """The free answers to the original nine inputs only (the newer ones unanswered), with changes."""
    return {**{name: FREE[name] for name in NINE}, **changes}


def score(*criteria: str) -> int:
    return sum(WEIGHT[criterion] for criterion in criteria)


def assess(engagement: dict[str, Any], as_of: dt.date = AS_OF) -> DutchAssessment:
    return assess_engagement(RULESET, engagement, as_of)


def decided_by(assessment: DutchAssessment) -> list[str]:
    return [] if assessment.decided is None else [rule.id for rule in assessment.decided.rules]


CLEANER = {
    "hourly_rate_eur": 30,
    "months_duration": 24,
    "days_per_week": 3,
    "other_clients_count": 0,
    "own_tools": False,
    "own_liability": False,
    "sets_own_hours": False,
    "can_delegate": False,
    "profit_risk": False,
}
CLEANER_HITS = (
    "rate_at_or_below_tariefgrens",
    "no_profit_risk",
    "single_client",
    "no_own_liability",
    "no_own_tools",
    "client_sets_hours",
    "long_engagement",
    "personal_service_only",
)


def test_the_nine_original_inputs_alone_still_decide_when_they_weigh_enough() -> None:
    """A EUR 30 cleaner, 24 months, no tools, risk, liability or other clients, on the client's hours: the rate
    presumption with the indicators' weight is enough (the weighing decides, no decisive rule)."""
    assessment = assess(CLEANER)
    assert (assessment.verdict.value, assessment.score) == ("unsafe", score(*CLEANER_HITS))
    assert assessment.decided is not None
    assert decided_by(assessment) == []
    assert set(assessment.decided.facts) == {
        criterion.input for criterion in RULESET.criteria if criterion.id in CLEANER_HITS
    }
    assert assessment.next_questions == ()


def test_the_same_cleaner_steered_and_embedded_is_decided_by_the_rules() -> None:
    engagement = {**CLEANER, "works_under_instructions": True, "embedded_in_organisation": True}
    assessment = assess(engagement)
    assert assessment.verdict.value == "unsafe"
    assert decided_by(assessment) == [
        "authority_and_embedding",
        "instructions_without_own_risk",
        "organisational_embedding",
    ]


def test_a_single_client_it_contractor_is_weighed_on_the_facts_stated() -> None:
    """EUR 95, 12 months full time, one client, fixed hours, personal work, no profit risk, own tools and liability
    cover: no decisive rule holds and nothing says whether the client steers the work, but the stated facts weigh
    clearly towards employment (Deliveroo: all circumstances together, none ranked first). An answer that the client
    gives no instructions would make it risky again, and the answer says so."""
    engagement = only_nine(
        hourly_rate_eur=95,
        months_duration=12,
        days_per_week=5,
        other_clients_count=0,
        sets_own_hours=False,
        can_delegate=False,
        profit_risk=False,
    )
    assessment = assess(engagement)
    expected = score("no_profit_risk", "single_client", "client_sets_hours", "long_engagement", "near_full_time")
    assert (assessment.verdict.value, assessment.score) == ("unsafe", expected + WEIGHT["personal_service_only"])
    assert (decided_by(assessment), assessment.balance) == ([], (36, 12, 9))
    assert assessment.decided is not None
    assert set(assessment.decided.facts) == {
        "months_duration",
        "days_per_week",
        "other_clients_count",
        "sets_own_hours",
        "can_delegate",
        "profit_risk",
    }, "the stated facts that point to employment decided it"
    assert assessment.next_questions == ()
    could_change = {question.input: question for question in assessment.could_change}
    no = next(answer for answer in could_change["works_under_instructions"].answers if answer.value is False)
    assert no.verdict.value == "risky"
    steered = assess({**engagement, "works_under_instructions": True})
    assert (steered.verdict.value, decided_by(steered)) == ("unsafe", ["instructions_without_own_risk"])


@pytest.mark.parametrize(
    ("changes", "rule"),
    [
        (
            {
                "embedded_in_organisation": True,
                "works_under_instructions": True,
                "acts_as_entrepreneur": None,
                "profit_risk": None,
            },
            "authority_and_embedding",
        ),
        (
            {
                "embedded_in_organisation": True,
                "client_supervises_work": True,
                "acts_as_entrepreneur": None,
                "profit_risk": None,
            },
            "authority_and_embedding",
        ),
        (
            {"works_under_instructions": True, "profit_risk": False, "acts_as_entrepreneur": None},
            "instructions_without_own_risk",
        ),
        (
            {
                "works_under_instructions": True,
                "can_delegate": False,
                "profit_risk": None,
                "acts_as_entrepreneur": None,
            },
            "instructions_without_own_risk",
        ),
        (
            {
                "embedded_in_organisation": True,
                "sets_own_hours": False,
                "structural_work": True,
                "acts_as_entrepreneur": None,
            },
            "organisational_embedding",
        ),
        (
            {
                "embedded_in_organisation": True,
                "sets_own_hours": False,
                "profit_risk": False,
                "acts_as_entrepreneur": None,
            },
            "organisational_embedding",
        ),
    ],
)
def test_each_rule_for_employment_decides_on_its_facts(changes: dict[str, Any], rule: str) -> None:
    assessment = assess({name: value for name, value in free(**changes).items() if value is not None})
    assert assessment.verdict.value == "unsafe"
    assert rule in decided_by(assessment)


def test_entrepreneurship_stops_the_rules_for_employment() -> None:
    """Uber (HR 2025): entrepreneurship counts and can decide; with it, steering and embedding are weighed, not
    decisive."""
    steered = free(embedded_in_organisation=True, works_under_instructions=True)
    assessment = assess(steered)
    assert assessment.verdict.value != "unsafe"
    assert decided_by(assessment) == []
    assert assess({**steered, "acts_as_entrepreneur": False, "profit_risk": False}).verdict.value == "unsafe"


@pytest.mark.parametrize(
    ("engagement", "rule"),
    [
        (
            {
                "works_under_instructions": False,
                "client_supervises_work": False,
                "embedded_in_organisation": False,
                "sets_own_hours": True,
            },
            "no_steering",
        ),
        (
            {"acts_as_entrepreneur": True, "profit_risk": True, "sets_own_hours": True, "own_tools": True},
            "entrepreneur_at_own_risk",
        ),
        (
            {"acts_as_entrepreneur": True, "profit_risk": True, "other_clients_count": 2, "own_liability": True},
            "entrepreneur_at_own_risk",
        ),
        (
            {
                "acts_as_entrepreneur": True,
                "works_under_instructions": False,
                "sets_own_hours": True,
                "can_delegate": True,
            },
            "free_entrepreneur",
        ),
    ],
)
def test_each_rule_for_self_employment_decides_on_its_facts_alone(engagement: dict[str, Any], rule: str) -> None:
    """Each rule with the floor's four stated facts; with one fewer, no rule drawn from case law decides."""
    assessment = assess(engagement)
    assert assessment.verdict.value == "safe", assessment
    assert rule in decided_by(assessment)
    fewer = dict(list(engagement.items())[:-1])
    assert (assess(fewer).verdict.value, decided_by(assess(fewer))) == ("risky", [])


def test_below_the_floor_the_answer_says_so_and_what_would_decide() -> None:
    """Two facts that point to employment are too few to decide (no statutory rule holds): risky, with the floor in
    the advice. No single answer reaches the floor, so no next question is listed (none would move anything); the
    smallest set of answers that would decide is named instead."""
    assessment = assess({"works_under_instructions": True, "can_delegate": False})
    assert (assessment.verdict.value, assessment.balance) == ("risky", (16, 0, 2))
    assert "fewer than 4" in assessment.advice
    assert (assessment.next_questions, assessment.could_change) == ((), ())
    assert assessment.answer_sets
    assert assessment.sets_complete
    for found in assessment.answer_sets:
        assert len(found.answers) == 2
        answered = {answer.input: answer.value for answer in found.answers}
        assert assess({"works_under_instructions": True, "can_delegate": False, **answered}).verdict is found.verdict


@pytest.mark.parametrize("left_out", ["works_under_instructions", "client_supervises_work", "embedded_in_organisation"])
def test_an_unknown_fact_never_makes_a_rule_decide(left_out: str) -> None:
    """No steering, less one of its facts: unknown is not no."""
    engagement = {
        "works_under_instructions": False,
        "client_supervises_work": False,
        "embedded_in_organisation": False,
        "sets_own_hours": True,
    }
    del engagement[left_out]
    assessment = assess(engagement)
    assert assessment.verdict.value == "risky"
    assert left_out in [question.input for question in assessment.could_change]


def in_force_on(day: dt.date) -> DutchRuleset:
    """The ruleset as it would read once the rate presumption's act has a published date of entry into force."""
    entries = list(RULESET.tariefgrens)
    entries[-1] = entries[-1].model_copy(update={"in_force_from": day})
    return RULESET.model_copy(update={"tariefgrens": tuple(entries)})


def test_the_rate_presumption_applies_only_once_its_act_is_in_force() -> None:
    """Adopted but without a published date of entry into force, the presumption never applies; the low
    rate is weighed as the Deliveroo circumstance it is, and the answer says what would change once it is in force."""
    low = free(hourly_rate_eur=38.0)
    assessment = assess(low)
    assert (assessment.verdict.value, "no_steering" in decided_by(assessment)) == ("safe", True)
    assert not assessment.presumption_of_employment
    assert "rate_at_or_below_tariefgrens" in assessment.criteria_hit
    assert assessment.balance[0] == 6, "the level of pay still weighs"
    assert "No date of entry into force has been published" in assessment.advice
    future = in_force_on(dt.date(2027, 1, 1))
    before = assess_engagement(future, low, dt.date(2026, 12, 31))
    after = assess_engagement(future, low, dt.date(2027, 1, 1))
    assert (before.presumption_of_employment, before.verdict.value) == (False, "safe")
    assert (after.presumption_of_employment, after.verdict.value, decided_by(after)) == (True, "risky", [])
    assert "No date of entry into force" not in after.advice


def test_indicators_weighing_as_much_as_unsafe_keep_a_safe_rule_from_deciding() -> None:
    heavy = free(
        other_clients_count=0,
        own_tools=False,
        own_liability=False,
        months_duration=24,
        days_per_week=5,
        structural_work=True,
        same_work_as_employees=True,
        terms_set_by_client=True,
        can_delegate=False,
        profit_risk=False,
    )
    assessment = assess(heavy)
    assert assessment.score < RULESET.scoring.unsafe_at_score
    assert assessment.verdict.value == "safe"  # no steering: authority is a required element
    heavier = {**heavy, "hourly_rate_eur": 30}
    assert assess(heavier).verdict.value == "safe", "the rate presumption is not law yet"
    in_force = assess_engagement(in_force_on(AS_OF), heavier, AS_OF)
    assert in_force.verdict.value == "unsafe", "with the presumption, the lower threshold of the score rule applies"


WORKED = [
    pytest.param(FREE, AS_OF, "safe", 0, id="an entrepreneur with every freedom, neither steered nor embedded"),
    pytest.param(
        free(hourly_rate_eur=60, other_clients_count=1, months_duration=3, days_per_week=5),
        AS_OF,
        "safe",
        score("near_full_time"),
        id="EUR 60, one other client, 3 months full time, no steering",
    ),
    pytest.param(
        only_nine(hourly_rate_eur=120, months_duration=6, days_per_week=4, other_clients_count=2),
        AS_OF,
        "safe",
        score("near_full_time"),
        id="the nine inputs all free, the newer ones unanswered: with own risk, no answer could make it unsafe",
    ),
]

EDGES = [
    pytest.param(free(hourly_rate_eur=38.0), AS_OF, "safe", 12, id="rate exactly at the threshold is hit"),
    pytest.param(free(hourly_rate_eur=38), AS_OF, "safe", 12, id="rate as an integer at the threshold"),
    pytest.param(free(hourly_rate_eur=37.99), AS_OF, "safe", 12, id="rate a cent below the threshold"),
    pytest.param(free(hourly_rate_eur=38.01), AS_OF, "safe", 0, id="rate a cent above the threshold"),
    pytest.param(free(hourly_rate_eur=0), AS_OF, "safe", 12, id="rate zero"),
    pytest.param(free(hourly_rate_eur=36.0), dt.date(2025, 6, 1), "safe", 12, id="EUR 36 under the 2025 bill"),
    pytest.param(free(hourly_rate_eur=36.5), dt.date(2025, 6, 1), "safe", 0, id="EUR 36.50 above the 2025 bill"),
    pytest.param(free(hourly_rate_eur=36.5), dt.date(2026, 1, 1), "safe", 12, id="EUR 36.50 on 1 Jan 2026"),
    pytest.param(free(hourly_rate_eur=32.24), dt.date(2023, 7, 1), "safe", 12, id="EUR 32.24 on its first day"),
    pytest.param(free(hourly_rate_eur=10), dt.date(2023, 6, 30), "safe", 0, id="no threshold before Jul 2023"),
    pytest.param(free(months_duration=12), AS_OF, "safe", score("long_engagement"), id="exactly 12 months is long"),
    pytest.param(free(months_duration=11), AS_OF, "safe", 0, id="11 months is not long"),
    pytest.param(free(days_per_week=4), AS_OF, "safe", score("near_full_time"), id="exactly 4 days is near full time"),
    pytest.param(free(days_per_week=3), AS_OF, "safe", 0, id="3 days is not near full time"),
    pytest.param(free(other_clients_count=0), AS_OF, "safe", score("single_client"), id="no other client"),
    pytest.param(free(other_clients_count=1), AS_OF, "safe", 0, id="one other client"),
    pytest.param({}, AS_OF, "risky", 0, id="all fields missing"),
    pytest.param(free(months_duration=600, days_per_week=7), AS_OF, "safe", 10, id="largest duration and days"),
]


@pytest.mark.parametrize(("engagement", "as_of", "verdict", "expected_score"), [*WORKED, *EDGES])
def test_golden_case(engagement: dict[str, Any], as_of: dt.date, verdict: str, expected_score: int) -> None:
    assessment = assess(engagement, as_of)
    assert (assessment.verdict.value, assessment.score) == (verdict, expected_score)
    assert assessment.ratio == expected_score / 100


WEIGHING = [
    pytest.param(
        only_nine(
            sets_own_hours=False,
            other_clients_count=0,
            profit_risk=False,
            own_liability=False,
            can_delegate=False,
            own_tools=False,
            months_duration=12,
            days_per_week=5,
        )
        | {
            "acts_as_entrepreneur": False,
            "structural_work": True,
            "terms_set_by_client": True,
            "same_work_as_employees": True,
        },
        "unsafe",
        id="weighing at least unsafe_at_score is unsafe",
    ),
    pytest.param(
        only_nine(
            hourly_rate_eur=38,
            profit_risk=False,
            own_tools=False,
            sets_own_hours=False,
            months_duration=12,
            can_delegate=False,
        ),
        "unsafe",
        id="a low rate weighed with the other facts is unsafe without the presumption",
    ),
]


@pytest.mark.parametrize(("engagement", "verdict"), WEIGHING)
def test_the_weighing_thresholds(engagement: dict[str, Any], verdict: str) -> None:
    assessment = assess(engagement)
    assert not assessment.presumption_of_employment
    assert (assessment.verdict.value, decided_by(assessment)) == (verdict, [])
    employment, self_employment, _ = assessment.balance
    assert assessment.score >= RULESET.scoring.unsafe_at_score or employment >= 2 * self_employment


def test_every_hit_has_its_own_advice_sentence() -> None:
    assessment = assess({"profit_risk": False})
    hits = [criterion for criterion in RULESET.criteria if criterion.id in assessment.criteria_hit]
    assert [criterion.id for criterion in hits] == ["no_profit_risk"]
    assert hits[0].advice[Language.en] in assessment.advice
    assert RULESET.texts.not_assessed[Language.en] in assessment.advice


def test_deliveroo_couriers_are_unsafe() -> None:
    """HR 24 Mar 2023, ECLI:NL:HR:2023:443: employment, despite free log-in, substitution and own phone and bike: the
    riders' work was structural, supervised through the app, and embedded in Deliveroo's organisation."""
    deliveroo = {
        "sets_own_hours": True,
        "can_delegate": True,
        "own_tools": True,
        "structural_work": True,
        "client_supervises_work": True,
        "embedded_in_organisation": True,
        "profit_risk": False,
    }
    assessment = assess(deliveroo, dt.date(2023, 7, 1))
    assert assessment.verdict.value == "unsafe"
    assert decided_by(assessment) == ["authority_and_embedding"]


def test_a_golf_pro_found_self_employed_is_not_unsafe() -> None:
    """Rb Gelderland 27 May 2025 (AR 2025-0745): no employment contract for a golf teacher who planned his own lessons,
    need not work personally and bore commercial risk, though he used the club's facilities
    (https://lammersthijssen.nl/nieuws/2025/06/de-deliveroo-gezichtspunten-toegepast). Unknown facts stay unanswered."""
    golf_pro = {
        "sets_own_hours": True,
        "can_delegate": True,
        "profit_risk": True,
        "own_tools": False,
        "months_duration": 19,
    }
    assert assess(golf_pro, dt.date(2025, 5, 27)).verdict.value != "unsafe"
