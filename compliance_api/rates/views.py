"""Rate benchmarks and the catalogue of sectors as the API's schemas."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from compliance_api.kit.environment import Environment
from compliance_api.rates.catalogue import NATIONAL, REGIONS, SECTORS
from compliance_api.rates.models import RateBenchmark
from compliance_api.rates.schemas import RateBenchmarkOut, RateSectorOut, RateSectorsOut


def benchmark(row: RateBenchmark) -> RateBenchmarkOut:
    """The answer of `GET /v1/rates/benchmark` for a precomputed row (the dashboard shows the same)."""
    kind = "synthetic observations generated for the sandbox/demo" if row.synthetic else "imported observations"
    return RateBenchmarkOut(
        sector=row.sector,
        region=row.region,
        p25_eur=round(row.p25_eur, 2),
        p50_eur=round(row.p50_eur, 2),
        p75_eur=round(row.p75_eur, 2),
        sample_size=row.sample_size,
        as_of=row.as_of,
        window_months=row.window_months,
        synthetic=row.synthetic,
        source=(
            f"Percentiles (linear interpolation) of {row.sample_size} {kind} dated {row.window_start} to {row.as_of}"
            + ("." if row.region != NATIONAL else ", all regions.")
        ),
        livemode=row.livemode,
    )


def sectors(published: Mapping[str, Sequence[str]], min_sample: int, environment: Environment) -> RateSectorsOut:
    """Every sector of the catalogue, with the regions of `published` (sector → regions with a benchmark)."""
    return RateSectorsOut(
        sectors=[
            RateSectorOut(sector=slug, label=label, regions=list(published.get(slug, [])))
            for slug, label in SECTORS.items()
        ],
        regions=list(REGIONS),
        min_sample=min_sample,
        livemode=environment is Environment.live,
    )
