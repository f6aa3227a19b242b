"""Golden cases for the FR, DE and BE tests, each with the outcome its court or statute gave.

Facts are mapped onto the rulesets' criteria from the sources cited per case; a court that found genuine
self-employment must never get `unsafe`.
"""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pytest
from httpx import AsyncClient

from compliance_api.classify.crossborder import assess_criteria
from compliance_api.classify.language import Language
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.classify.verdict import Country
from tests.classify.conftest import Account

RULESETS = packaged_rulesets()
AS_OF = dt.date(2026, 7, 9)
CB = "/v1/classify/cross-border"

BE_NINE = (
    "no_financial_risk",
    "no_financial_decision_power",
    "no_purchasing_power",
    "no_pricing_power",
    "no_result_obligation",
    "guaranteed_fixed_pay",
    "cannot_hire_or_substitute",
    "single_client_or_no_own_enterprise",
    "client_premises_and_equipment",
)


def verdict(country: Country, *met: str) -> str:
    """The verdict when the facts are known: the criteria named are met, every other one is answered as not met."""
    ruleset = RULESETS.cross_border[country]
    return assess_criteria(ruleset, {name: name in met for name in ruleset.criterion_names}, AS_OF).verdict.value


@pytest.mark.parametrize("nine", [BE_NINE[:5], BE_NINE[4:], BE_NINE[::2]])
def test_be_construction_with_5_of_9_is_unsafe(nine: tuple[str, ...]) -> None:
    """Law of 25.08.2012: in a presumption sector, more than half of the 9 criteria presumes employment."""
    assert verdict(Country.BE, "in_presumption_sector", *nine) == "unsafe"


@pytest.mark.parametrize("nine", [BE_NINE[:4], BE_NINE[5:], BE_NINE[1::2]])
def test_be_construction_with_4_of_9_is_not_unsafe(nine: tuple[str, ...]) -> None:
    """Fewer than half: the statute presumes self-employment, so the nine alone cannot make it unsafe."""
    assert verdict(Country.BE, "in_presumption_sector", *nine) == "safe"


def test_be_5_of_9_outside_the_sectors_does_not_show_authority() -> None:
    """Outside the presumption sectors, facts that fit both statuses (one client, fixed pay, no business risk) do not
    by themselves show authority: with the self-employed qualification agreed and the general criteria free, the
    parties' choice stands (Programme Law (I) of 27.12.2006, art. 331-333)."""
    assessment = assess_criteria(
        RULESETS.cross_border[Country.BE],
        {name: name in BE_NINE[:5] for name in RULESETS.cross_border[Country.BE].criterion_names},
        AS_OF,
    )
    assert assessment.verdict.value == "safe"
    assert [rule.id for rule in assessment.decided_by] == ["qualification_respected"]


def test_be_general_criteria() -> None:
    factual = ("no_freedom_working_time", "no_freedom_work_organisation", "hierarchical_control_possible")
    assert verdict(Country.BE, *factual) == "unsafe"
    assert verdict(Country.BE, *factual[:2]) == "risky"
    assert verdict(Country.BE, factual[2]) == "safe"


def test_fr_uber_2020_is_unsafe() -> None:
    """Cass. soc. 4 mars 2020, n° 19-13.316: the driver, registered as independent (Sirene), was an employee:
    a service wholly organised by Uber, no own clientele, no free pricing, imposed routes, fare corrections and
    deactivation (https://lexbase.fr/article-juridique/57260673-jurisprudencelacourdecassationetleschauffeurssalariesdelaplateformeuber)."""
    facts = {
        "not_registered_as_independent": False,
        "integrated_in_organised_service": True,
        "no_own_clientele": True,
        "client_sets_price": True,
        "client_gives_orders": True,
        "client_controls_execution": True,
        "client_can_sanction": True,
        "client_sets_schedule": False,
    }
    assessment = assess_criteria(RULESETS.cross_border[Country.FR], facts, AS_OF)
    assert assessment.verdict.value == "unsafe"


def test_fr_take_eat_easy_2018_is_unsafe() -> None:
    """Cass. soc. 28 nov. 2018, n° 17-20.079: real-time geolocation and a power to sanction ("strikes") showed a
    power of direction and control, so subordination, although the registered courier chose his own shifts and had
    no exclusivity (https://www.legifrance.gouv.fr/juri/id/JURITEXT000037787075)."""
    facts = {
        "not_registered_as_independent": False,
        "client_gives_orders": True,
        "client_controls_execution": True,
        "client_can_sanction": True,
        "client_sets_schedule": False,
        "single_client_dependency": False,
    }
    assert assess_criteria(RULESETS.cross_border[Country.FR], facts, AS_OF).verdict.value == "unsafe"


def test_fr_societe_generale_triad_is_unsafe_and_control_with_sanction_is_enough() -> None:
    """Cass. soc. 13 nov. 1996, n° 94-13.187 defines subordination as orders, control of their execution and
    sanction; all three present is unsafe on their own. Take Eat Easy (Cass. soc. 28 nov. 2018) found control (real
    time tracking) with a power to sanction enough; orders with only one of the other two are not. With every other
    fact pointing to independence, a registered freelancer keeps the statutory presumption of non-employment, which
    only permanent legal subordination rebuts (Code du travail art. L8221-6 I and II): the complete answers weigh
    safe; without the registration they weigh unsafe."""
    triad = ("client_gives_orders", "client_controls_execution", "client_can_sanction")
    assert verdict(Country.FR, *triad) == "unsafe"
    assert verdict(Country.FR, "client_controls_execution", "client_can_sanction") == "unsafe"
    for pair in (("client_gives_orders", "client_controls_execution"), ("client_gives_orders", "client_can_sanction")):
        assert verdict(Country.FR, *pair) == "safe"
        assert verdict(Country.FR, *pair, "not_registered_as_independent") == "unsafe"


def test_de_herrenberg_2022_is_unsafe() -> None:
    """BSG 28.06.2022, B 12 R 3/20 R: the music-school teacher was dependently employed although both sides wanted
    self-employment: timetable and curricula set by the school, lessons in its rooms on its pianos, paid per lesson
    even when pupils cancelled, teaching personally (https://www.sozialgerichtsbarkeit.de/node/172232)."""
    facts = {
        "subject_to_instructions": True,
        "integrated_in_client_organisation": True,
        "fixed_working_hours": True,
        "works_at_client_premises": True,
        "paid_by_time": True,
        "no_entrepreneurial_risk": True,
        "must_work_personally": True,
    }
    assessment = assess_criteria(RULESETS.cross_border[Country.DE], facts, AS_OF)
    assert assessment.verdict.value == "unsafe"
    assert any("Herrenberg" in rule.reason[Language.en] + rule.basis for rule in assessment.decided_by)


def test_de_instructions_or_integration_alone_is_not_unsafe() -> None:
    assert verdict(Country.DE, "subject_to_instructions") == "safe"
    assert verdict(Country.DE, "integrated_in_client_organisation") == "safe"


# The rate benchmark is 2.5 x the hourly minimum wage, rounded half up to a whole euro
# (2.5 x 14.60 = 36.50 gives 37), and dated by the minimum wage's steps.
EU_MD_TARIEFGRENS = {
    Country.FR: [(dt.date(2026, 1, 1), 30), (dt.date(2026, 6, 1), 31)],
    Country.DE: [(dt.date(2026, 1, 1), 35), (dt.date(2027, 1, 1), 37)],
    Country.BE: [(dt.date(2025, 2, 1), 32)],
}


def test_the_ruleset_files_carry_the_dated_thresholds_of_eu_md() -> None:
    for country, steps in EU_MD_TARIEFGRENS.items():
        table = RULESETS.cross_border[country].tariefgrens
        assert [(entry.valid_from, entry.value) for entry in table] == steps, country
        for entry in table:
            assert entry.min_wage_valid_from == entry.valid_from
            benchmark = (entry.multiplier * entry.min_wage_hourly).quantize(Decimal(1), rounding=ROUND_HALF_UP)
            assert entry.value == benchmark, (country, entry)


async def cross_border_on(client: AsyncClient, account: Account, country: Country, as_of: str) -> dict[str, Any]:
    response = await client.post(CB, json={"country": country, "criteria": {}, "as_of": as_of}, headers=account.live)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["as_of"] == as_of
    return body


@pytest.mark.parametrize(
    ("country", "as_of", "expected"),
    [
        (Country.DE, "2025-12-31", None),
        (Country.DE, "2026-01-01", 35),
        (Country.DE, "2026-12-31", 35),
        (Country.DE, "2027-01-01", 37),
        (Country.DE, "2030-06-30", 37),
        (Country.BE, "2025-01-31", None),
        (Country.BE, "2025-02-01", 32),
        (Country.BE, "2026-07-09", 32),
        (Country.FR, "2025-12-31", None),
        (Country.FR, "2026-01-01", 30),
        (Country.FR, "2026-05-31", 30),
        (Country.FR, "2026-06-01", 31),
    ],
)
async def test_as_of_selects_the_cross_border_threshold_in_force_then(
    client: AsyncClient, account: Account, country: Country, as_of: str, expected: int | None
) -> None:
    body = await cross_border_on(client, account, country, as_of)
    assert body["tariefgrens_min_eur"] == expected
    if expected is None:
        assert body["tariefgrens"] is None
        return
    entry = RULESETS.cross_border[country].tariefgrens_on(dt.date.fromisoformat(as_of))
    assert entry is not None
    assert body["tariefgrens"]["value"] == expected == entry.value
    assert body["tariefgrens"]["valid_from"] == entry.valid_from.isoformat()
    assert body["tariefgrens"]["min_wage_hourly"] == float(entry.min_wage_hourly)


def left_out_cases() -> list[tuple[Country, tuple[str, ...]]]:
    """Per country: nothing met, every other criterion met, and a golden case's facts (all at different verdicts)."""
    cases = []
    for country, ruleset in RULESETS.cross_border.items():
        names = ruleset.criterion_names
        cases += [(country, ()), (country, names[::2]), (country, names[1::3])]
    cases += [(Country.BE, ("in_presumption_sector", *BE_NINE[:5])), (Country.DE, ("subject_to_instructions",))]
    return cases


@pytest.mark.parametrize(("country", "met"), left_out_cases())
async def test_criteria_left_out_count_as_not_met_but_never_make_it_safer(
    client: AsyncClient, account: Account, country: Country, met: tuple[str, ...]
) -> None:
    """Left out scores as answered false, but an unknown fact never decides: the verdict with the criteria left out is
    never safer than with them answered false, and never `safe` while answering one left out as met would make it
    `unsafe`."""
    names = RULESETS.cross_border[country].criterion_names
    explicit = {name: name in met for name in names}
    short = await client.post(CB, json={"country": country, "criteria": dict.fromkeys(met, True)}, headers=account.live)
    full = await client.post(CB, json={"country": country, "criteria": explicit}, headers=account.live)
    assert short.status_code == full.status_code == 200
    left_out, answered = short.json(), full.json()
    for key in ("score", "criteria_met", "tariefgrens_min_eur"):
        assert left_out[key] == answered[key], key
    rank = {"safe": 0, "risky": 1, "unsafe": 2}
    assert rank[left_out["verdict"]] >= rank[answered["verdict"]]
    if left_out["verdict"] == "safe":
        ruleset = RULESETS.cross_border[country]
        for name in set(names) - set(met):
            one_more = assess_criteria(ruleset, {**dict.fromkeys(met, True), name: True}, AS_OF)
            assert one_more.verdict.value != "unsafe", name
    assert [(c["name"], c["met"]) for c in left_out["criteria"]] == [
        (c["name"], c["met"]) for c in answered["criteria"]
    ]


@pytest.mark.parametrize("country", list(Country))
async def test_nothing_answered_is_never_safe(client: AsyncClient, account: Account, country: Country) -> None:
    """`{"criteria": {}}` used to answer `safe`: answering everything could make it unsafe, so it is risky, and the
    advice says so."""
    response = await client.post(CB, json={"country": country, "criteria": {}}, headers=account.live)
    assert response.status_code == 200
    body = response.json()
    assert body["verdict"] == "risky"
    assert body["unanswered"] == list(RULESETS.cross_border[country].criterion_names)
    assert "could be anything from safe to unsafe" in body["advice"]
