"""The published catalogue: validated at load, and the pure scoring rules."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from pydantic import ValidationError

from compliance_api.passport.catalogue import Catalogue, is_valid, packaged_catalogue


def test_packaged_catalogue_publishes_the_five_checks_with_weights_adding_up_to_100() -> None:
    catalogue = packaged_catalogue()
    assert set(catalogue.check_ids) == {
        "kvk_registration",
        "vat_number",
        "identity",
        "professional_liability_insurance",
        "certificate_of_conduct",
    }
    assert catalogue.score(set(catalogue.check_ids)) == 100
    assert catalogue.score(set()) == 0


@pytest.mark.parametrize(
    ("valid", "score", "level", "verified"),
    [
        (set(), 0, "none", False),
        ({"vat_number"}, 15, "low", False),
        ({"identity"}, 25, "low", False),
        ({"identity", "kvk_registration"}, 50, "medium", True),
        ({"identity", "kvk_registration", "professional_liability_insurance"}, 70, "medium", True),
        ({"identity", "kvk_registration", "professional_liability_insurance", "vat_number"}, 85, "high", True),
        (
            {"vat_number", "professional_liability_insurance", "certificate_of_conduct", "kvk_registration"},
            75,
            "high",
            False,
        ),
    ],
)
def test_score_level_and_verified(valid: set[str], score: int, level: str, verified: bool) -> None:
    catalogue = packaged_catalogue()
    assert catalogue.score(valid) == score
    assert catalogue.level(score) == level
    assert catalogue.is_verified(valid) is verified


def test_validity_runs_from_the_verified_date_through_the_expiry_date() -> None:
    verified, expires = dt.date(2026, 1, 1), dt.date(2026, 12, 31)
    assert not is_valid(verified, expires, dt.date(2025, 12, 31))
    assert is_valid(verified, expires, verified)
    assert is_valid(verified, expires, expires)
    assert not is_valid(verified, expires, dt.date(2027, 1, 1))
    assert is_valid(verified, None, dt.date(2099, 1, 1))


def _document(**changes: Any) -> dict[str, Any]:
    document = packaged_catalogue().model_dump(mode="json")
    document.update(changes)
    return document


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"checks": [{**packaged_catalogue().checks[0].model_dump(), "weight": 99}]}, "add up to 100"),
        ({"levels": [{"level": "low", "min_score": 10}]}, "start at min_score 0"),
        ({"levels": [{"level": "aa", "min_score": 0}, {"level": "bb", "min_score": 0}]}, "rise strictly"),
        ({"verified_requires": ["passport_photo"]}, "unknown checks"),
    ],
)
def test_an_inconsistent_catalogue_is_refused_at_load(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Catalogue.model_validate(_document(**changes))


def test_duplicate_check_ids_are_refused() -> None:
    first = packaged_catalogue().checks[0].model_dump()
    with pytest.raises(ValidationError, match="unique"):
        Catalogue.model_validate(_document(checks=[{**first, "weight": 50}, {**first, "weight": 50}]))


def test_unknown_check_names_the_allowed_ones() -> None:
    with pytest.raises(ValueError, match="allowed: kvk_registration"):
        packaged_catalogue().check("passport_photo")
