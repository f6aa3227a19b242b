"""Synthetic rate observations for the sandbox and demos, drawn from the published means with a fixed seed.

Generator `nl-lognormal-v1`, documented in docs/operate/rates-data.md:

- For each catalogue sector, the newest published national mean `m` (reference file). For each province, a factor:
  its newest published all-sector mean divided by the national all-sector mean of the same source year; 1 where no
  provincial figure is published.
- Rates are log-normal with sigma 0.35 and mean `m × factor` (mu = ln(mean) − sigma²/2), so the published *mean* is
  reproduced as a mean; the median of the draws is lower, as real rate distributions are skewed. Rates are rounded to
  cents and kept within (0, 10000).
- Per (sector, province), the number of observations is drawn between 0 and 40, so some pairs stay below the
  publication minimum (as real thin data would); dates are uniform over the `window_months` before `as_of`.
- The same seed, `as_of` and window give the same rows. Every row is stored with `synthetic = true`, under an import
  whose source names the generator and seed.
"""

from __future__ import annotations

import math
import random
from datetime import date, timedelta

from compliance_api.rates.catalogue import NATIONAL, PROVINCES, SECTORS
from compliance_api.rates.compute import months_before
from compliance_api.rates.reference import ALL_SECTORS, newest_mean, publications
from compliance_api.rates.service import Observation
from compliance_api.rates.synthetic_seed import DEFAULT_SEED

GENERATOR = "nl-lognormal-v1"
SIGMA = 0.35
MAX_PER_PAIR = 40


def province_factor(province: str) -> float:
    """A province's newest all-sector mean over the national all-sector mean of the same year; 1 if unpublished."""
    regional = newest_mean(ALL_SECTORS, province)
    if regional is None:
        return 1.0
    national = [
        p
        for p in publications()
        if (p.sector, p.region, p.statistic, p.year) == (ALL_SECTORS, NATIONAL, "mean", regional.year)
    ]
    return float(regional.value_eur / national[-1].value_eur)


def sector_mean(sector: str) -> float:
    published = newest_mean(sector)
    if published is None:
        raise ValueError(f"no published mean for sector {sector!r} in the reference file")
    return float(published.value_eur)


def generate(*, seed: int = DEFAULT_SEED, as_of: date, window_months: int = 24) -> list[Observation]:
    """The observations of one run; deterministic in (seed, as_of, window_months)."""
    rng = random.Random(seed)  # noqa: S311 (reproducible demo data, not security)
    first = months_before(as_of, window_months) + timedelta(days=1)
    span = (as_of - first).days
    observations: list[Observation] = []
    for sector in SECTORS:
        for province in PROVINCES:
            mean = sector_mean(sector) * province_factor(province)
            mu = math.log(mean) - SIGMA**2 / 2
            for _ in range(rng.randint(0, MAX_PER_PAIR)):
                cents = min(max(round(rng.lognormvariate(mu, SIGMA) * 100), 1), 999_999)
                day = first + timedelta(days=rng.randint(0, span))
                observations.append(Observation(sector, province, cents, day))
    return observations


def source_label(seed: int, as_of: date) -> str:
    return f"synthetic: generator {GENERATOR}, seed {seed}, as_of {as_of}, from reference/nl_rate_publications.csv"
