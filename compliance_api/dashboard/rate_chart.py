"""The geometry of the rate benchmark's charts, computed here so the templates only draw (inline SVG, no script).

Coordinates are in SVG user units of a fixed `viewBox`; the stylesheet scales the picture to the page width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from compliance_api.rates.compute import nice_step
from compliance_api.rates.schemas import RateBenchmarkOut
from compliance_api.rates.service import Histogram

WIDTH, HEIGHT = 720, 320
LEFT, RIGHT, TOP, BOTTOM = 56, 24, 56, 48
PLOT_WIDTH, PLOT_HEIGHT = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
BAR_GAP = 1.0
X_TICKS, Y_TICKS = 6, 4
RANGE_WIDTH, RANGE_HEIGHT, RANGE_PAD = 240, 24, 8


def euros(cents: float) -> str:
    """€ and whole euros when round, else with cents: axis labels and markers."""
    return f"€{cents / 100:.0f}" if round(cents) % 100 == 0 else f"€{cents / 100:.2f}"


@dataclass(frozen=True, slots=True)
class RateBar:
    x: float
    y: float
    width: float
    height: float
    low: str
    high: str
    count: int


@dataclass(frozen=True, slots=True)
class Marker:
    name: str
    label: str
    x: float
    label_y: float
    anchor: str  # text-anchor: p25's label sits left of its line, p75's right, p50's above both


@dataclass(frozen=True, slots=True)
class RateTick:
    at: float
    label: str


@dataclass(frozen=True, slots=True)
class HistogramChart:
    bars: tuple[RateBar, ...]
    markers: tuple[Marker, ...]
    x_ticks: tuple[RateTick, ...]
    y_ticks: tuple[RateTick, ...]
    below: int
    above: int
    first_edge: str
    last_edge: str
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    top: int = TOP
    plot_width: int = PLOT_WIDTH
    plot_height: int = PLOT_HEIGHT

    @property
    def baseline(self) -> int:
        return TOP + PLOT_HEIGHT


def histogram_chart(histogram: Histogram, benchmark: RateBenchmarkOut) -> HistogramChart:
    """Bars of the histogram on a euro axis, with p25, p50 and p75 of the benchmark marked."""
    start, end = histogram.start_cents, histogram.end_cents

    def x_of(cents: float) -> float:
        return LEFT + (min(max(cents, start), end) - start) / (end - start) * PLOT_WIDTH

    y_step = nice_step(max(histogram.counts, default=1) / Y_TICKS)
    y_top = max(y_step, math.ceil(max(histogram.counts, default=1) / y_step) * y_step)
    bar_width = PLOT_WIDTH / max(len(histogram.counts), 1)
    bars = []
    for index, count in enumerate(histogram.counts):
        low = start + index * histogram.width_cents
        height = count / y_top * PLOT_HEIGHT
        bars.append(
            RateBar(
                x=LEFT + index * bar_width + BAR_GAP / 2,
                y=TOP + PLOT_HEIGHT - height,
                width=max(bar_width - BAR_GAP, 0.5),
                height=height,
                low=euros(low),
                high=euros(low + histogram.width_cents),
                count=count,
            )
        )
    quartiles = (
        ("p25", benchmark.p25_eur, TOP - 10, "end"),
        ("p50", benchmark.p50_eur, TOP - 30, "middle"),
        ("p75", benchmark.p75_eur, TOP - 10, "start"),
    )
    markers = tuple(
        Marker(name, f"{name} {euros(value * 100)}", x_of(value * 100), label_y, anchor)
        for name, value, label_y, anchor in quartiles
    )
    x_step = nice_step((end - start) / X_TICKS)
    first_tick = math.ceil(start / x_step) * x_step
    x_ticks = tuple(RateTick(x_of(at), euros(at)) for at in range(first_tick, end + 1, x_step))
    y_ticks = tuple(
        RateTick(TOP + PLOT_HEIGHT - at / y_top * PLOT_HEIGHT, str(at)) for at in range(0, y_top + 1, y_step)
    )
    return HistogramChart(
        bars=tuple(bars),
        markers=markers,
        x_ticks=x_ticks,
        y_ticks=y_ticks,
        below=histogram.below,
        above=histogram.above,
        first_edge=euros(start),
        last_edge=euros(end),
    )


@dataclass(frozen=True, slots=True)
class RangeBar:
    """One region's p25–p75 as a bar and its p50 as a tick, on a scale shared by every region of the sector."""

    low_x: float
    width: float
    mid_x: float
    width_total: int = RANGE_WIDTH
    height: int = RANGE_HEIGHT


def range_bars(benchmarks: list[RateBenchmarkOut]) -> dict[str, RangeBar]:
    """A `RangeBar` per region (keyed by region code), all on one euro scale so they compare at a glance."""
    if not benchmarks:
        return {}
    low = min(b.p25_eur for b in benchmarks)
    high = max(b.p75_eur for b in benchmarks)
    span = (high - low) or 1.0

    def x_of(eur: float) -> float:
        return RANGE_PAD + (eur - low) / span * (RANGE_WIDTH - 2 * RANGE_PAD)

    return {
        b.region: RangeBar(
            low_x=x_of(b.p25_eur), width=max(x_of(b.p75_eur) - x_of(b.p25_eur), 1.0), mid_x=x_of(b.p50_eur)
        )
        for b in benchmarks
    }
