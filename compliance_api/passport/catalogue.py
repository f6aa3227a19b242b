"""The published catalogue of verification types, their weights and the level thresholds (a data file).

`compliance_score` is the sum of the weights of the valid verifications (the weights add up to 100);
`compliance_level` is the highest level whose `min_score` the score reaches; `verified` needs every check in
`verified_requires` to be valid. A verification is valid from its verified date through its expiry date.
"""

from __future__ import annotations

import datetime as dt
import functools
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _StrictCatalogue(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CheckType(_StrictCatalogue):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]{1,63}$")
    name: str
    description: str
    weight: int = Field(ge=0, le=100)
    default_validity_days: int | None = Field(ge=1, le=36500)


class Level(_StrictCatalogue):
    level: str = Field(pattern=r"^[a-z][a-z0-9_]{1,31}$")
    min_score: int = Field(ge=0, le=100)


class Catalogue(_StrictCatalogue):
    id: str
    version: dt.date
    checks: tuple[CheckType, ...]
    levels: tuple[Level, ...]
    verified_requires: tuple[str, ...]

    @model_validator(mode="after")
    def _consistent(self) -> Catalogue:
        ids = [c.id for c in self.checks]
        if len(set(ids)) != len(ids):
            raise ValueError("check ids must be unique")
        if sum(c.weight for c in self.checks) != 100:
            raise ValueError("check weights must add up to 100")
        thresholds = [level.min_score for level in self.levels]
        if not thresholds or thresholds[0] != 0 or thresholds != sorted(set(thresholds)):
            raise ValueError("levels must start at min_score 0 and rise strictly")
        if not set(self.verified_requires) <= set(ids):
            raise ValueError("verified_requires names unknown checks")
        return self

    @property
    def check_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.checks)

    def check(self, check_id: str) -> CheckType:
        for candidate in self.checks:
            if candidate.id == check_id:
                return candidate
        raise ValueError(f"unknown check {check_id!r}; allowed: {', '.join(self.check_ids)}")

    def score(self, valid: set[str]) -> int:
        return sum(c.weight for c in self.checks if c.id in valid)

    def level(self, score: int) -> str:
        return [lv.level for lv in self.levels if score >= lv.min_score][-1]

    def is_verified(self, valid: set[str]) -> bool:
        return set(self.verified_requires) <= valid


def is_valid(verified_on: dt.date, expires_on: dt.date | None, today: dt.date) -> bool:
    """Valid from the verified date through the expiry date (inclusive); no expiry date means no end."""
    return verified_on <= today and (expires_on is None or today <= expires_on)


@functools.cache
def packaged_catalogue() -> Catalogue:
    text = resources.files("compliance_api.passport").joinpath("catalogue.json").read_text()
    return Catalogue.model_validate_json(text)
