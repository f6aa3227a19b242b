"""The published Dutch rate figures as shipped in `reference/nl_rate_publications.csv`, with their provenance.

These are published statistics, not observations: they never become a benchmark themselves. A published mean stays a
mean; only the synthetic generator uses them, as the mean of the distribution it draws from.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from functools import cache
from importlib.resources import files

from compliance_api.rates.catalogue import NATIONAL

REFERENCE_FILE = "nl_rate_publications.csv"
STATISTICS = frozenset({"mean", "median", "p10", "p25", "p75", "mean_at_least", "mean_at_most"})
ALL_SECTORS = "all"


@dataclass(frozen=True, slots=True)
class Publication:
    sector: str
    region: str
    statistic: str
    value_eur: Decimal
    year: int
    n: int | None
    source_url: str
    retrieved_on: date


@cache
def publications() -> tuple[Publication, ...]:
    text = files("compliance_api.rates").joinpath("reference", REFERENCE_FILE).read_text(encoding="utf-8")
    return tuple(
        Publication(
            sector=row["sector"],
            region=row["region"],
            statistic=row["statistic"],
            value_eur=Decimal(row["value_eur"]),
            year=int(row["year"]),
            n=int(row["n"]) if row["n"] else None,
            source_url=row["source_url"],
            retrieved_on=date.fromisoformat(row["retrieved_on"]),
        )
        for row in csv.DictReader(io.StringIO(text))
    )


def newest_mean(sector: str, region: str = NATIONAL) -> Publication | None:
    """The most recent published mean for a sector and region (ties: the later row of the file)."""
    means = [p for p in publications() if (p.sector, p.region, p.statistic) == (sector, region, "mean")]
    return max(means, key=lambda p: p.year, default=None)
