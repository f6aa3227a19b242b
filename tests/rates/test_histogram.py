"""The observations behind a benchmark, counted in round bins in the database (the dashboard draws them), and a
sector's benchmarks side by side."""

from __future__ import annotations

import random
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.kit.environment import Environment
from compliance_api.rates import service
from compliance_api.rates.compute import nice_step
from compliance_api.rates.models import RateBenchmark
from compliance_api.rates.service import Histogram
from tests.rates.helpers import AS_OF, observations, seed


async def _benchmark(
    sessionmaker: async_sessionmaker[AsyncSession],
    sector: str,
    region: str,
    environment: Environment = Environment.live,
) -> tuple[RateBenchmark, Histogram]:
    async with sessionmaker() as session:
        row = await service.get_benchmark(session, environment=environment, sector=sector, region=region)
        assert row is not None
        return row, await service.window_histogram(session, row)


def _binned(values: list[int], histogram: Histogram) -> list[int]:
    """The histogram's bins counted in Python, outliers folded into the edge bins."""
    counts = [0] * len(histogram.counts)
    for value in values:
        index = (value - histogram.start_cents) // histogram.width_cents
        counts[min(max(index, 0), len(counts) - 1)] += 1
    return counts


def _is_round(number: int) -> bool:
    return number == nice_step(number)


async def test_the_histogram_counts_exactly_the_window_of_the_benchmark(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    rng = random.Random(7)
    utrecht = [rng.randint(4000, 14000) for _ in range(300)]
    holland = [rng.randint(6000, 16000) for _ in range(200)]
    old = AS_OF - timedelta(days=800)  # before the 24-month window
    await seed(
        sessionmaker,
        observations("ict", "NL-UT", utrecht)
        + observations("ict", "NL-NH", holland)
        + observations("ict", "NL-UT", [100_000] * 5, day=old)
        + observations("legal", "NL-UT", [1] * 50),
    )
    await seed(sessionmaker, observations("ict", "NL-UT", [50] * 40), environment=Environment.test)

    row, histogram = await _benchmark(sessionmaker, "ict", "NL-UT")
    assert histogram.total == row.sample_size == len(utrecht)
    assert histogram.counts == tuple(_binned(utrecht, histogram))
    assert (histogram.below, histogram.above) == (0, 0)
    assert histogram.start_cents <= min(utrecht)
    assert histogram.end_cents > max(utrecht)
    assert _is_round(histogram.width_cents)
    assert 10 <= len(histogram.counts) <= service.HISTOGRAM_BINS + 1

    national, whole = await _benchmark(sessionmaker, "ict", "NL")
    assert whole.total == national.sample_size == len(utrecht) + len(holland)
    assert whole.counts == tuple(_binned(utrecht + holland, whole))


async def test_outliers_are_folded_into_the_edge_bins_and_counted(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    typical = [8000 + 10 * i for i in range(100)]
    await seed(sessionmaker, observations("ict", "NL-UT", [*typical, 5, 999_999]))
    row, histogram = await _benchmark(sessionmaker, "ict", "NL-UT")
    assert (histogram.below, histogram.above) == (1, 1)
    assert histogram.total == row.sample_size == 102
    assert histogram.start_cents > 5
    assert histogram.end_cents < 999_999, "one extreme rate does not flatten the picture"
    assert histogram.counts == tuple(_binned([*typical, 5, 999_999], histogram))


async def test_equal_rates_make_one_bin(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    await seed(sessionmaker, observations("ict", "NL-UT", [7500] * 12))
    _, histogram = await _benchmark(sessionmaker, "ict", "NL-UT")
    assert histogram.counts == (12,)
    assert histogram.start_cents <= 7500 < histogram.end_cents


async def test_a_sector_s_benchmarks_come_national_first_then_by_province(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    await seed(
        sessionmaker,
        observations("ict", "NL-ZH", [9000] * 3) + observations("ict", "NL-DR", [8000] * 12),
    )
    async with sessionmaker() as session:
        rows = await service.sector_benchmarks(session, environment=Environment.live, sector="ict")
        assert [(r.region, r.sample_size) for r in rows] == [("NL", 15), ("NL-DR", 12), ("NL-ZH", 3)]
        assert await service.sector_benchmarks(session, environment=Environment.test, sector="ict") == []


def test_round_steps() -> None:
    assert [nice_step(x) for x in (0, 0.4, 1, 1.5, 3, 7, 11, 26, 333, 4001)] == [1, 1, 1, 2, 5, 10, 20, 50, 500, 5000]
