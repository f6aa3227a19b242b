"""The rates' statements: imports, observations and precomputed benchmarks. The rules that call them live in
`service.py`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from sqlalchemy import Row, Select, case, delete, func, insert, select, text, tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.kit.environment import Environment, scoped
from compliance_api.rates.models import RateBenchmark, RateImport, RateObservation

Pair = tuple[str, str]


async def find_import(session: AsyncSession, environment: Environment, content_sha256: str) -> RateImport | None:
    statement = scoped(select(RateImport), RateImport, environment)
    return await session.scalar(statement.where(RateImport.content_sha256 == content_sha256))


def add_import(session: AsyncSession, batch: RateImport) -> None:
    session.add(batch)


async def insert_observations(session: AsyncSession, rows: list[dict[str, Any]]) -> None:
    await session.execute(insert(RateObservation), rows)


async def synthetic_pairs(session: AsyncSession, environment: Environment) -> set[Pair]:
    """The (sector, region) pairs that hold synthetic observations."""
    rows = await session.execute(
        scoped(select(RateObservation.sector, RateObservation.region), RateObservation, environment)
        .where(RateObservation.synthetic.is_(True))
        .distinct()
    )
    return {(row.sector, row.region) for row in rows}


async def delete_synthetic(session: AsyncSession, environment: Environment) -> None:
    """Remove every synthetic observation and import of an environment."""
    await session.execute(
        delete(RateObservation).where(RateObservation.environment == environment, RateObservation.synthetic.is_(True))
    )
    await session.execute(
        delete(RateImport).where(RateImport.environment == environment, RateImport.synthetic.is_(True))
    )


async def lock_recompute(session: AsyncSession, environment: Environment) -> None:
    """PostgreSQL: concurrent imports recompute one after the other (SQLite serialises writers by itself)."""
    await session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"rates:{environment}"})


async def replace_benchmarks(
    session: AsyncSession, environment: Environment, targets: set[Pair] | None, rows: list[dict[str, Any]]
) -> None:
    """Delete the benchmarks of `targets` (every one when None) and insert `rows`."""
    stale = delete(RateBenchmark).where(RateBenchmark.environment == environment)
    if targets is not None:
        stale = stale.where(tuple_(RateBenchmark.sector, RateBenchmark.region).in_(sorted(targets)))
    await session.execute(stale)
    if rows:
        await session.execute(insert(RateBenchmark), rows)


# One backward index probe per (sector, region): a grouped max() would read the whole index.
_PG_NEWEST = text(
    """
    SELECT w.sector, w.region,
           (SELECT max(o.observed_on) FROM rate_observation o
            WHERE o.environment = :environment AND o.sector = w.sector AND o.region = w.region) AS newest
    FROM unnest(CAST(:sectors AS text[]), CAST(:regions AS text[])) AS w(sector, region)
    """
)


async def newest(
    session: AsyncSession, environment: Environment, sectors: list[str], regions: Sequence[str]
) -> dict[Pair, date]:
    """Newest observation date of every (sector, region) of these sectors, regions as recorded (`NL` included)."""
    if session.get_bind().dialect.name == "postgresql":
        pairs = [(sector, region) for sector in sectors for region in regions]
        params = {
            "environment": environment.value,
            "sectors": [p[0] for p in pairs],
            "regions": [p[1] for p in pairs],
        }
        rows = await session.execute(_PG_NEWEST, params)
    else:
        o = RateObservation
        statement = scoped(select(o.sector, o.region, func.max(o.observed_on)), o, environment)
        rows = await session.execute(statement.where(o.sector.in_(sectors)).group_by(o.sector, o.region))
    return {(sector, region): newest for sector, region, newest in rows if newest is not None}


# PostgreSQL sorts and interpolates in the database (percentile_cont shares one sort for the three quantiles). The
# window of each pair comes in as arrays, so both backends use the same windows from `_windows`; rows are grouped by
# the pair's position in those arrays (an integer sorts far faster than two collated text columns).
_PG_SELECT = """
    SELECT w.pair, count(*) AS n, bool_or(o.synthetic) AS synthetic,
           percentile_cont(CAST(:quantiles AS float8[])) WITHIN GROUP (ORDER BY o.rate_cents) AS p
    FROM unnest(CAST(:sectors AS text[]), CAST(:regions AS text[]), CAST(:starts AS date[]))
         WITH ORDINALITY AS w(sector, region, start, pair)
    JOIN rate_observation o ON o.environment = :environment AND o.sector = w.sector AND o.observed_on >= w.start
"""
_PG_REGIONAL = text(_PG_SELECT + " AND o.region = w.region GROUP BY w.pair")
_PG_NATIONAL = text(_PG_SELECT + " GROUP BY w.pair")


async def tune_for_percentiles(session: AsyncSession) -> None:
    """Each pair's values are sorted in memory; JIT compilation costs more than it saves on these plans."""
    await session.execute(text("SET LOCAL work_mem = '512MB'"))
    await session.execute(text("SET LOCAL jit = off"))


async def percentiles_postgresql(
    session: AsyncSession,
    environment: Environment,
    chosen: list[tuple[Pair, tuple[date, date]]],
    quantiles: Sequence[float],
    *,
    national: bool,
) -> Sequence[Row[Any]]:
    """Per chosen pair (`pair`, its 1-based position): the count `n`, whether any is `synthetic`, and the quantiles
    `p`, computed in PostgreSQL over each pair's window (its whole sector when `national`)."""
    params = {
        "environment": environment.value,
        "quantiles": list(quantiles),
        "sectors": [p[0] for p, _ in chosen],
        "regions": [p[1] for p, _ in chosen],
        "starts": [w[1] for _, w in chosen],
    }
    return (await session.execute(_PG_NATIONAL if national else _PG_REGIONAL, params)).all()


async def window_rates(
    session: AsyncSession, environment: Environment, sector: str, region: str | None, start: date
) -> Sequence[Row[int, bool]]:
    """The rates (and whether synthetic) of a sector (and region, unless None) observed since `start`, sorted."""
    o = RateObservation
    statement = scoped(select(o.rate_cents, o.synthetic), o, environment).where(
        o.sector == sector, o.observed_on >= start
    )
    if region is not None:
        statement = statement.where(o.region == region)
    return (await session.execute(statement.order_by(o.rate_cents))).all()


async def benchmark(session: AsyncSession, environment: Environment, sector: str, region: str) -> RateBenchmark | None:
    """One read of the precomputed row through its unique index."""
    statement = scoped(select(RateBenchmark), RateBenchmark, environment)
    return await session.scalar(statement.where(RateBenchmark.sector == sector, RateBenchmark.region == region))


async def regions_with_sample(
    session: AsyncSession, environment: Environment, min_sample: int
) -> Sequence[Row[str, str]]:
    """(sector, region) of every benchmark with at least `min_sample` observations, in order."""
    statement = (
        scoped(select(RateBenchmark.sector, RateBenchmark.region), RateBenchmark, environment)
        .where(RateBenchmark.sample_size >= min_sample)
        .order_by(RateBenchmark.sector, RateBenchmark.region)
    )
    return (await session.execute(statement)).all()


async def sector_benchmarks(session: AsyncSession, environment: Environment, sector: str) -> list[RateBenchmark]:
    statement = scoped(select(RateBenchmark), RateBenchmark, environment).where(RateBenchmark.sector == sector)
    return list(await session.scalars(statement))


def _window_of(benchmark: RateBenchmark, national: bool) -> Select[int]:
    """The rates the benchmark was computed from: its sector (and region, unless national) in its window."""
    o = RateObservation
    statement = scoped(select(o.rate_cents), o, benchmark.environment).where(
        o.sector == benchmark.sector, o.observed_on >= benchmark.window_start, o.observed_on <= benchmark.as_of
    )
    return statement if national else statement.where(o.region == benchmark.region)


async def window_range(session: AsyncSession, benchmark: RateBenchmark, *, national: bool) -> Row[int, int]:
    """The lowest and highest rate of the benchmark's window (None, None when it is empty)."""
    window = _window_of(benchmark, national).subquery()
    return (await session.execute(select(func.min(window.c.rate_cents), func.max(window.c.rate_cents)))).one()


async def window_buckets(
    session: AsyncSession, benchmark: RateBenchmark, *, national: bool, start: int, end: int, width: int, count: int
) -> Sequence[Row[int, int]]:
    """(bucket, rates) of the benchmark's window, counted in the database: -1 for rates under `start`, `count` for
    those at or over `end`, else the bin of `width` from `start`."""
    rate = _window_of(benchmark, national).subquery().c.rate_cents
    buckets = select(
        case((rate < start, -1), (rate >= end, count), else_=(rate - start) // width).label("bucket")
    ).subquery()
    return (await session.execute(select(buckets.c.bucket, func.count()).group_by(buckets.c.bucket))).all()
