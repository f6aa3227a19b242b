"""Rate benchmarks as the API's schema."""

from __future__ import annotations

from compliance_api.rates.catalogue import NATIONAL
from compliance_api.rates.models import RateBenchmark
from compliance_api.rates.schemas import RateBenchmarkOut


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
