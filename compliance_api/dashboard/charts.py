"""Bar charts drawn on the server: the geometry of an inline SVG (templates/charts.html draws it), so a chart needs
no script and no style attribute (the dashboard's Content-Security-Policy allows neither inline)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

WIDTH = 640
AXIS = 48  # room for the value labels left of the plot
FOOT = 22  # room for the labels under the bars
RIGHT = 28  # room for the last bar's label, centred under it
TOP = 8


@dataclass(frozen=True, slots=True)
class Column:
    """One bar's data: its label, its value, and the part of it drawn as highlighted (e.g. answered 429)."""

    label: str
    value: int
    highlighted: int = 0


@dataclass(frozen=True, slots=True)
class Bar:
    column: Column
    x: float
    width: float
    y: float
    height: float
    highlighted_y: float
    highlighted_height: float
    labelled: bool  # whether its label is written under the axis (every few bars)


@dataclass(frozen=True, slots=True)
class Tick:
    value: int
    y: float


@dataclass(frozen=True, slots=True)
class BarChart:
    id: str
    title: str
    description: str
    width: int
    height: int
    plot_left: int
    plot_right: int
    plot_bottom: int
    bars: tuple[Bar, ...]
    ticks: tuple[Tick, ...]


def _nice_top(largest: int) -> int:
    """The smallest of 1, 2 or 5 × 10^n at or above `largest` (at least 1), the top of the value axis."""
    if largest <= 1:
        return 1
    power = 10 ** math.floor(math.log10(largest))
    return int(next(step * power for step in (1, 2, 5, 10) if step * power >= largest))


def bar_chart(
    id: str, title: str, description: str, columns: Sequence[Column], *, height: int = 180, label_every: int = 7
) -> BarChart:
    top = _nice_top(max((c.value for c in columns), default=0))
    plot_height = height - FOOT - TOP
    plot_bottom = height - FOOT
    slot = (WIDTH - AXIS - RIGHT) / max(len(columns), 1)

    def scaled(value: int) -> float:
        return round(plot_height * value / top, 2)

    bars = []
    for index, column in enumerate(columns):
        bar_height, highlighted_height = scaled(column.value), scaled(column.highlighted)
        bars.append(
            Bar(
                column=column,
                x=round(AXIS + index * slot + slot * 0.1, 2),
                width=round(slot * 0.8, 2),
                y=plot_bottom - bar_height,
                height=bar_height,
                highlighted_y=plot_bottom - highlighted_height,
                highlighted_height=highlighted_height,
                labelled=(len(columns) - 1 - index) % label_every == 0,
            )
        )
    middle = (top // 2,) if top % 2 == 0 else ()
    ticks = tuple(Tick(value, plot_bottom - scaled(value)) for value in (0, *middle, top))
    return BarChart(id, title, description, WIDTH, height, AXIS, WIDTH - RIGHT, plot_bottom, tuple(bars), ticks)
