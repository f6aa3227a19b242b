"""Rate observations in, precomputed benchmarks out.

Definitions (in the guide): a benchmark belongs to one (sector, region). Region `NL` is the national aggregate:
every observation of the sector, whatever its region. `as_of` is the newest observation date of that (sector, region);
only observations dated in the window (`as_of` minus `window_months` calendar months, exclusive, up to `as_of`)
count. Benchmarks are recomputed whenever observations change (after an import, only the pairs it touched plus their
national aggregate), never on a request; the endpoint reads one row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.errors import ApiError
from compliance_api.kit.environment import Environment
from compliance_api.rates import queries
from compliance_api.rates.catalogue import NATIONAL, REGIONS, SECTORS
from compliance_api.rates.compute import QUANTILES, nice_step, percentile, window_start
from compliance_api.rates.models import RateBenchmark, RateImport

Pair = tuple[str, str]
INSERT_CHUNK = 5000


@dataclass(frozen=True, slots=True)
class Observation:
    sector: str
    region: str
    rate_cents: int
    observed_on: date


@dataclass(frozen=True, slots=True)
class Computed:
    sector: str
    region: str
    percentiles: tuple[float, float, float]
    sample_size: int
    synthetic: bool


@dataclass(frozen=True, slots=True)
class RateImportResult:
    import_id: str
    rows: int
    already_imported: bool
    benchmarks: int


async def find_import(session: AsyncSession, *, environment: Environment, content_sha256: str) -> RateImport | None:
    return await queries.find_import(session, environment, content_sha256)


async def add_observations(
    session: AsyncSession,
    *,
    environment: Environment,
    observations: Sequence[Observation],
    content_sha256: str,
    source: str,
    synthetic: bool = False,
    window_months: int,
    on_progress: Callable[[int], None] | None = None,
) -> RateImportResult:
    """Store one import's observations and recompute the benchmarks they touch; a file already imported is a no-op."""
    existing = await find_import(session, environment=environment, content_sha256=content_sha256)
    if existing is not None:
        return RateImportResult(str(existing.id), existing.row_count, already_imported=True, benchmarks=0)
    batch = RateImport(
        environment=environment,
        content_sha256=content_sha256,
        source=source,
        synthetic=synthetic,
        row_count=len(observations),
    )
    queries.add_import(session, batch)
    await session.flush()
    for start in range(0, len(observations), INSERT_CHUNK):
        chunk = observations[start : start + INSERT_CHUNK]
        rows = [
            {
                "environment": environment,
                "import_id": batch.id,
                "sector": o.sector,
                "region": o.region,
                "rate_cents": o.rate_cents,
                "observed_on": o.observed_on,
                "synthetic": synthetic,
            }
            for o in chunk
        ]
        await queries.insert_observations(session, rows)
        if on_progress is not None:
            on_progress(len(chunk))
    touched = {(o.sector, o.region) for o in observations}
    count = await recompute(session, environment=environment, window_months=window_months, pairs=touched)
    return RateImportResult(str(batch.id), len(observations), already_imported=False, benchmarks=count)


async def delete_synthetic(session: AsyncSession, *, environment: Environment, window_months: int) -> int:
    """Remove every synthetic observation of an environment, recompute what they fed; returns benchmarks rewritten."""
    touched = await queries.synthetic_pairs(session, environment)
    await queries.delete_synthetic(session, environment)
    return await recompute(session, environment=environment, window_months=window_months, pairs=touched)


def affected(pairs: Iterable[Pair]) -> set[Pair]:
    """The benchmarks an observation of (sector, region) feeds: its own and its sector's national aggregate."""
    return {p for sector, region in pairs for p in ((sector, region), (sector, NATIONAL))}


async def recompute(
    session: AsyncSession, *, environment: Environment, window_months: int, pairs: Iterable[Pair] | None = None
) -> int:
    """Replace the benchmarks of `pairs` (with their national aggregates), or of every pair when `pairs` is None."""
    targets = None if pairs is None else affected(pairs)
    if targets is not None and not targets:
        return 0
    postgresql = session.get_bind().dialect.name == "postgresql"
    if postgresql:  # concurrent imports recompute one after the other (SQLite serialises writers by itself)
        await queries.lock_recompute(session, environment)
    windows = await _windows(session, environment, window_months, targets)
    if postgresql:
        computed = await _compute_postgresql(session, environment, windows)
    else:
        computed = await _compute_python(session, environment, windows)
    rows = [
        {
            "environment": environment,
            "sector": c.sector,
            "region": c.region,
            "p25_eur": c.percentiles[0] / 100,
            "p50_eur": c.percentiles[1] / 100,
            "p75_eur": c.percentiles[2] / 100,
            "sample_size": c.sample_size,
            "as_of": windows[(c.sector, c.region)][0],
            "window_start": windows[(c.sector, c.region)][1],
            "window_months": window_months,
            "synthetic": c.synthetic,
        }
        for c in computed
    ]
    await queries.replace_benchmarks(session, environment, targets, rows)
    return len(rows)


async def _windows(
    session: AsyncSession, environment: Environment, window_months: int, targets: set[Pair] | None
) -> dict[Pair, tuple[date, date]]:
    """(as_of, first day counted) per pair that has observations: the newest date decides, per pair."""
    sectors = sorted(SECTORS) if targets is None else sorted({sector for sector, _ in targets})
    found: dict[Pair, date] = {}
    for (sector, region), newest in (await queries.newest(session, environment, sectors, REGIONS)).items():
        if region != NATIONAL:
            found[(sector, region)] = newest
        found[(sector, NATIONAL)] = max(newest, found.get((sector, NATIONAL), newest))
    return {
        pair: (as_of, window_start(as_of, window_months))
        for pair, as_of in found.items()
        if targets is None or pair in targets
    }


async def _compute_postgresql(
    session: AsyncSession, environment: Environment, windows: dict[Pair, tuple[date, date]]
) -> list[Computed]:
    await queries.tune_for_percentiles(session)
    computed: list[Computed] = []
    for national in (False, True):
        chosen = sorted((p, w) for p, w in windows.items() if (p[1] == NATIONAL) is national)
        if not chosen:
            continue
        for row in await queries.percentiles_postgresql(session, environment, chosen, QUANTILES, national=national):
            (sector, region), _ = chosen[row.pair - 1]
            low, mid, high = row.p
            computed.append(Computed(sector, region, (low, mid, high), row.n, row.synthetic))
    return computed


async def _compute_python(
    session: AsyncSession, environment: Environment, windows: dict[Pair, tuple[date, date]]
) -> list[Computed]:
    """SQLite has no percentile function: read each pair's window sorted by the index and interpolate in Python."""
    computed: list[Computed] = []
    for (sector, region), (_, start) in sorted(windows.items()):
        rows = await queries.window_rates(session, environment, sector, None if region == NATIONAL else region, start)
        values = [r.rate_cents for r in rows]
        low, mid, high = (percentile(values, q) for q in QUANTILES)
        computed.append(Computed(sector, region, (low, mid, high), len(values), any(r.synthetic for r in rows)))
    return computed


async def get_benchmark(
    session: AsyncSession, *, environment: Environment, sector: str, region: str
) -> RateBenchmark | None:
    """The hot path: one read of the precomputed row through its unique index."""
    return await queries.benchmark(session, environment, sector, region)


async def publishable_regions(
    session: AsyncSession, *, environment: Environment, min_sample: int
) -> dict[str, list[str]]:
    """Sector → regions whose benchmark has at least `min_sample` observations."""
    found: dict[str, list[str]] = {}
    for sector, region in await queries.regions_with_sample(session, environment, min_sample):
        found.setdefault(sector, []).append(region)
    return found


def is_published(sample_size: int, min_sample: int) -> bool:
    return sample_size >= min_sample


def insufficient_data(sector: str, region: str, sample_size: int, min_sample: int) -> ApiError:
    """Why a benchmark is not published: too few observations (none at all when no benchmark exists)."""
    return ApiError(
        "insufficient_data",
        f"{sample_size} observations for {sector} in {region}; at least {min_sample} are needed to publish a benchmark",
    )


async def sector_benchmarks(session: AsyncSession, *, environment: Environment, sector: str) -> list[RateBenchmark]:
    """Every precomputed benchmark of a sector (national first, then the provinces), published or not."""
    rows = await queries.sector_benchmarks(session, environment, sector)
    return sorted(rows, key=lambda row: REGIONS.index(row.region) if row.region in REGIONS else len(REGIONS))


@dataclass(frozen=True, slots=True)
class Histogram:
    """Counts of a benchmark's observations (those of its window) in bins of `width_cents` from `start_cents`.

    Bins span the middle of the distribution (at most three interquartile ranges beyond p25 and p75): the first bin
    also counts the `below` rates under `start_cents`, the last the `above` rates at or over `end_cents`."""

    start_cents: int
    width_cents: int
    counts: tuple[int, ...]
    below: int
    above: int

    @property
    def end_cents(self) -> int:
        return self.start_cents + self.width_cents * len(self.counts)

    @property
    def total(self) -> int:
        return sum(self.counts)


HISTOGRAM_BINS = 24
OUTLIER_IQRS = 3


async def window_histogram(session: AsyncSession, benchmark: RateBenchmark, *, bins: int = HISTOGRAM_BINS) -> Histogram:
    """The observations of a benchmark's window, counted in about `bins` bins of a round width, in the database (a
    national window may hold millions of rates): one pass for the range, one for the counts."""
    national = benchmark.region == NATIONAL
    low, high = await queries.window_range(session, benchmark, national=national)
    if low is None:
        return Histogram(0, 1, (), 0, 0)
    spread = OUTLIER_IQRS * (benchmark.p75_eur - benchmark.p25_eur) * 100
    low = max(low, int(benchmark.p25_eur * 100 - spread))
    high = min(high, int(benchmark.p75_eur * 100 + spread))
    width = nice_step((high - low) / bins)
    start = low // width * width
    count = (high - start) // width + 1
    end = start + width * count
    counts = [0] * count
    below = above = 0
    buckets = await queries.window_buckets(
        session, benchmark, national=national, start=start, end=end, width=width, count=count
    )
    for index, n in buckets:
        counts[min(max(index, 0), count - 1)] += n
        below += n if index < 0 else 0
        above += n if index >= count else 0
    return Histogram(start, width, tuple(counts), below, above)
