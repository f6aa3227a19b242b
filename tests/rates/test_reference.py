from __future__ import annotations

import csv
import math
from datetime import date
from decimal import Decimal
from importlib.resources import files
from statistics import fmean, median

import pytest

from compliance_api.rates import synthetic
from compliance_api.rates.catalogue import REGIONS, SECTORS
from compliance_api.rates.reference import ALL_SECTORS, REFERENCE_FILE, STATISTICS, newest_mean, publications

AS_OF = date(2026, 6, 30)


def test_reference_file_has_the_documented_columns() -> None:
    text = files("compliance_api.rates").joinpath("reference", REFERENCE_FILE).read_text()
    header = next(csv.reader(text.splitlines()))
    assert header == ["sector", "region", "statistic", "value_eur", "year", "n", "source_url", "retrieved_on"]


def test_every_row_carries_its_provenance() -> None:
    rows = publications()
    assert len(rows) > 40
    for row in rows:
        assert row.statistic in STATISTICS
        assert row.region in REGIONS
        assert row.source_url.startswith(("https://", "http://"))
        assert 2010 < row.year <= row.retrieved_on.year
        assert row.value_eur > 0


def test_published_means_stay_means() -> None:
    """The only median in the file is the one SEO published; the Knab/MKB figures are means."""
    medians = [p for p in publications() if p.statistic == "median"]
    assert [(p.sector, p.value_eur, p.year) for p in medians] == [("all-net-of-costs", Decimal(38), 2018)]
    ict = newest_mean("ict")
    assert ict is not None
    assert (ict.statistic, ict.value_eur, ict.year) == ("mean", Decimal(98), 2024)


def test_every_catalogue_sector_has_a_published_mean() -> None:
    assert all(newest_mean(sector) is not None for sector in SECTORS)
    assert newest_mean(ALL_SECTORS) is not None


def test_generator_is_deterministic_and_seeded() -> None:
    first = synthetic.generate(seed=7, as_of=AS_OF)
    assert first == synthetic.generate(seed=7, as_of=AS_OF)
    assert first != synthetic.generate(seed=8, as_of=AS_OF)
    assert all(0 < o.rate_cents < 1_000_000 and o.observed_on <= AS_OF for o in first)
    assert {o.region for o in first} <= set(REGIONS) - {"NL"}


def test_generator_reproduces_the_published_mean_not_the_median() -> None:
    draws = [
        o.rate_cents / 100
        for seed in range(40)
        for o in synthetic.generate(seed=seed, as_of=AS_OF)
        if (o.sector, o.region) == ("ict", "NL-NH")  # a province without a published factor: the national mean
    ]
    assert len(draws) > 500
    assert fmean(draws) == pytest.approx(98, rel=0.05)
    assert median(draws) == pytest.approx(98 * math.exp(-(synthetic.SIGMA**2) / 2), rel=0.05)


def test_province_factor_uses_the_published_regional_mean() -> None:
    assert synthetic.province_factor("NL-FR") == 71 / 81
    assert synthetic.province_factor("NL-ZE") == 1.0
