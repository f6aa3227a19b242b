"""Golden cases for the Dutch test: worked cases from the Dutch rules and the edges of every rule."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from compliance_api.classify.dutch import assess_engagement
from compliance_api.classify.language import Language
from compliance_api.classify.ruleset import packaged_rulesets

RULESET = packaged_rulesets().dutch
AS_OF = dt.date(2026, 7, 9)

# Answers that hit nothing: an entrepreneur at a high rate, short and part time, with other clients and all freedoms.
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
}


def free(**changes: Any) -> dict[str, Any]:
    return {**FREE, **changes}


def without(*fields: str) -> dict[str, Any]:
    return {name: value for name, value in FREE.items() if name not in fields}


WORKED = [
    pytest.param(
        free(
            hourly_rate_eur=30,
            months_duration=24,
            days_per_week=3,
            other_clients_count=0,
            own_tools=False,
            own_liability=False,
            sets_own_hours=False,
            can_delegate=False,
            profit_risk=False,
        ),
        AS_OF,
        "unsafe",
        90,
        id="EUR 30 cleaner, 24 months, no tools, risk or clients",
    ),
    pytest.param(
        free(
            hourly_rate_eur=95,
            months_duration=12,
            days_per_week=5,
            other_clients_count=0,
            sets_own_hours=False,
            can_delegate=False,
            profit_risk=False,
        ),
        AS_OF,
        "unsafe",
        66,
        id="EUR 95 single-client IT contractor, 12 months full time",
    ),
    pytest.param(
        free(
            hourly_rate_eur=60,
            other_clients_count=1,
            months_duration=3,
            days_per_week=5,
            sets_own_hours=False,
            can_delegate=False,
        ),
        AS_OF,
        "risky",
        30,
        id="EUR 60, one other client, 3 months full time, fixed hours",
    ),
    pytest.param(
        free(hourly_rate_eur=120, months_duration=6, days_per_week=4, other_clients_count=2),
        AS_OF,
        "safe",
        10,
        id="EUR 120, 6 months, 4 days, 2 clients, all freedoms",
    ),
]

EDGES = [
    pytest.param(free(hourly_rate_eur=38.0), AS_OF, "risky", 20, id="rate exactly at the threshold is hit"),
    pytest.param(free(hourly_rate_eur=38), AS_OF, "risky", 20, id="rate as an integer at the threshold"),
    pytest.param(free(hourly_rate_eur=37.99), AS_OF, "risky", 20, id="rate a cent below the threshold"),
    pytest.param(free(hourly_rate_eur=38.01), AS_OF, "safe", 0, id="rate a cent above the threshold"),
    pytest.param(free(hourly_rate_eur=0), AS_OF, "risky", 20, id="rate zero"),
    pytest.param(free(hourly_rate_eur=36.0), dt.date(2025, 6, 1), "risky", 20, id="EUR 36 under the 2025 bill"),
    pytest.param(free(hourly_rate_eur=36.5), dt.date(2025, 6, 1), "safe", 0, id="EUR 36.50 above the 2025 bill"),
    pytest.param(free(hourly_rate_eur=36.5), dt.date(2026, 1, 1), "risky", 20, id="EUR 36.50 on 1 Jan 2026"),
    pytest.param(free(hourly_rate_eur=32.24), dt.date(2023, 7, 1), "risky", 20, id="EUR 32.24 on its first day"),
    pytest.param(free(hourly_rate_eur=10), dt.date(2023, 6, 30), "safe", 0, id="no threshold before Jul 2023"),
    pytest.param(free(months_duration=12), AS_OF, "safe", 10, id="exactly 12 months is long"),
    pytest.param(free(months_duration=11), AS_OF, "safe", 0, id="11 months is not long"),
    pytest.param(free(days_per_week=4), AS_OF, "safe", 10, id="exactly 4 days is near full time"),
    pytest.param(free(days_per_week=3), AS_OF, "safe", 0, id="3 days is not near full time"),
    pytest.param(free(other_clients_count=0), AS_OF, "safe", 12, id="no other client"),
    pytest.param(free(other_clients_count=1), AS_OF, "safe", 0, id="one other client"),
    pytest.param({}, AS_OF, "risky", 0, id="all fields missing"),
    pytest.param(
        free(sets_own_hours=False, months_duration=12, can_delegate=False),
        AS_OF,
        "risky",
        30,
        id="score exactly 30 is risky",
    ),
    pytest.param(
        free(profit_risk=False, own_liability=False, own_tools=False), AS_OF, "safe", 28, id="score 28 is safe"
    ),
    pytest.param(
        free(
            sets_own_hours=False,
            other_clients_count=0,
            profit_risk=False,
            own_liability=False,
            can_delegate=False,
            own_tools=False,
        ),
        AS_OF,
        "unsafe",
        60,
        id="score exactly 60 is unsafe",
    ),
    pytest.param(
        free(sets_own_hours=False, other_clients_count=0, profit_risk=False, months_duration=12, days_per_week=5),
        AS_OF,
        "risky",
        58,
        id="score 58 without the presumption is risky",
    ),
    pytest.param(
        free(hourly_rate_eur=38, profit_risk=False, own_tools=False),
        AS_OF,
        "unsafe",
        40,
        id="presumption with score exactly 40 is unsafe",
    ),
    pytest.param(
        free(hourly_rate_eur=38, sets_own_hours=False, own_tools=False),
        AS_OF,
        "risky",
        38,
        id="presumption with score 38 is risky",
    ),
    pytest.param(
        without("own_tools", "own_liability", "can_delegate"),
        AS_OF,
        "safe",
        0,
        id="three small unanswered criteria cannot reach unsafe",
    ),
    pytest.param(
        without("hourly_rate_eur", "sets_own_hours", "profit_risk"),
        AS_OF,
        "risky",
        0,
        id="unanswered rate, hours and risk could reach unsafe",
    ),
    pytest.param(free(months_duration=600, days_per_week=7), AS_OF, "safe", 20, id="largest duration and days"),
]


@pytest.mark.parametrize(("engagement", "as_of", "verdict", "score"), [*WORKED, *EDGES])
def test_golden_case(engagement: dict[str, Any], as_of: dt.date, verdict: str, score: int) -> None:
    assessment = assess_engagement(RULESET, engagement, as_of)
    assert (assessment.verdict.value, assessment.score) == (verdict, score)
    assert assessment.ratio == score / 100


def test_every_hit_has_its_own_advice_sentence() -> None:
    assessment = assess_engagement(RULESET, {name: None for name in FREE} | {"profit_risk": False}, AS_OF)
    hits = [criterion for criterion in RULESET.criteria if criterion.id in assessment.criteria_hit]
    assert [criterion.id for criterion in hits] == ["no_profit_risk"]
    assert hits[0].advice[Language.en] in assessment.advice
    assert RULESET.texts.not_assessed[Language.en] in assessment.advice


def test_deliveroo_couriers_are_unsafe() -> None:
    """HR 24 Mar 2023, ECLI:NL:HR:2023:443: employment, despite free log-in, substitution and own phone and bike.
    Our inputs miss the deciding factors (pay set unilaterally, algorithmic control); the facts we can map: own
    tools, formal freedom of hours and substitution, no profit risk, no own customers. The rate is illustrative
    (pay was per delivery; no hourly figure is published), so the presumption carries the verdict."""
    deliveroo = {
        "hourly_rate_eur": 15,
        "months_duration": 6,
        "days_per_week": 2,
        "other_clients_count": 0,
        "own_tools": True,
        "own_liability": False,
        "sets_own_hours": True,
        "can_delegate": True,
        "profit_risk": False,
    }
    assessment = assess_engagement(RULESET, deliveroo, dt.date(2023, 7, 1))
    assert (assessment.verdict.value, assessment.score) == ("unsafe", 54)


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
    assert assess_engagement(RULESET, golf_pro, dt.date(2025, 5, 27)).verdict.value != "unsafe"
