"""Precomputed benchmarks equal numpy over the same observations, on the backend under test (SQLite or PostgreSQL)."""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.kit.environment import Environment
from compliance_api.rates import service
from compliance_api.rates.compute import window_start
from compliance_api.rates.models import RateBenchmark
from compliance_api.rates.service import Observation
from tests.rates.helpers import AS_OF, observations, store

REGIONS = ("NL", "NL-UT", "NL-NH")
rates = st.one_of(
    st.sampled_from([4500, 7500, 7500, 9000]),  # ties
    st.integers(min_value=3000, max_value=15000),
    st.integers(min_value=1, max_value=999_999),  # outliers at both ends
)
rows = st.lists(
    st.tuples(rates, st.sampled_from(REGIONS), st.integers(min_value=0, max_value=1200)), min_size=10, max_size=150
)


def expected(rows: list[Observation], region: str, window_months: int) -> tuple[int, list[float], date]:
    chosen = [r for r in rows if region == "NL" or r.region == region]
    as_of = max(r.observed_on for r in chosen)
    start = window_start(as_of, window_months)
    values = [r.rate_cents / 100 for r in chosen if r.observed_on >= start]
    return len(values), [float(v) for v in np.percentile(values, [25, 50, 75])], as_of


async def benchmarks(session: AsyncSession, environment: Environment = Environment.live) -> dict[str, RateBenchmark]:
    found = await session.scalars(select(RateBenchmark).where(RateBenchmark.environment == environment))
    return {b.region: b for b in found}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=rows, window_months=st.sampled_from([1, 12, 24]))
async def test_every_percentile_equals_numpy(
    sessionmaker: async_sessionmaker[AsyncSession], drawn: list[tuple[int, str, int]], window_months: int
) -> None:
    data = [Observation("ict", region, cents, AS_OF - timedelta(days=back)) for cents, region, back in drawn]
    async with sessionmaker() as session:  # rolled back at the end: every example starts empty
        await store(session, data, window_months=window_months)
        stored = await benchmarks(session)
        await discard(session)
    for region in {"NL", *(r.region for r in data if r.region != "NL")}:
        size, percentiles, as_of = expected(data, region, window_months)
        row = stored[region]
        assert (row.sample_size, row.as_of, row.window_months) == (size, as_of, window_months)
        assert [row.p25_eur, row.p50_eur, row.p75_eur] == pytest.approx(percentiles, rel=1e-9, abs=1e-9)


async def test_incremental_recompute_equals_a_fresh_one(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    async with sessionmaker() as session:
        await store(session, observations("ict", "NL-UT", range(5000, 9000, 100)))
        await store(session, observations("ict", "NL-NH", [12000] * 15, AS_OF + timedelta(days=-400)))
        await store(session, observations("legal", "NL", range(9000, 20000, 500)))
        await store(session, observations("ict", "NL-UT", [1, 999_999], AS_OF + timedelta(days=2)))
        incremental = {(b.region, b.sector): _figures(b) for b in await session.scalars(select(RateBenchmark))}
        await service.recompute(session, environment=Environment.live, window_months=24)
        fresh = {(b.region, b.sector): _figures(b) for b in await session.scalars(select(RateBenchmark))}
        await discard(session)
    assert incremental == fresh
    assert set(fresh) == {("NL-UT", "ict"), ("NL-NH", "ict"), ("NL", "ict"), ("NL", "legal")}


async def discard(session: AsyncSession) -> None:
    """Roll back, keeping the loaded rows readable (detached, not expired)."""
    session.expunge_all()
    await session.rollback()


def _figures(b: RateBenchmark) -> tuple[object, ...]:
    return (b.p25_eur, b.p50_eur, b.p75_eur, b.sample_size, b.as_of, b.window_start, b.synthetic)


async def test_an_import_recomputes_only_the_pairs_it_touches(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    async with sessionmaker() as session:
        await store(session, observations("ict", "NL-UT", range(5000, 6000, 50)))
        await store(session, observations("legal", "NL-ZH", range(5000, 6000, 50)))
        before = {(b.sector, b.region): b.computed_at for b in await session.scalars(select(RateBenchmark))}
        result = await store(session, observations("legal", "NL-ZH", [7000]))
        after = {(b.sector, b.region): b.computed_at for b in await session.scalars(select(RateBenchmark))}
        await discard(session)
    assert result.benchmarks == 2, "the pair and its national aggregate"
    assert after[("ict", "NL-UT")] == before[("ict", "NL-UT")]
    assert after[("ict", "NL")] == before[("ict", "NL")]
    assert after[("legal", "NL-ZH")] != before[("legal", "NL-ZH")]


async def test_old_observations_fall_out_of_the_window(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    old = AS_OF - timedelta(days=800)
    async with sessionmaker() as session:
        await store(session, observations("ict", "NL-UT", [100_000] * 50, old) + observations("ict", "NL-UT", [5000]))
        row = (await benchmarks(session))["NL-UT"]
        await discard(session)
    assert (row.sample_size, row.p50_eur, row.as_of, row.window_start) == (1, 50.0, AS_OF, date(2024, 7, 1))


async def test_environments_have_their_own_benchmarks(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    async with sessionmaker() as session:
        await store(session, observations("ict", "NL-UT", [5000] * 10), environment=Environment.test)
        await store(session, observations("ict", "NL-UT", [9000] * 10))
        live, sandbox = await benchmarks(session), await benchmarks(session, Environment.test)
        await discard(session)
    assert (live["NL-UT"].p50_eur, sandbox["NL-UT"].p50_eur) == (90.0, 50.0)
