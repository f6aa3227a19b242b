"""The geometry of the rate charts: bars in proportion, quartiles where their values are, one scale for regions."""

from __future__ import annotations

from datetime import date

import pytest

from compliance_api.dashboard import rate_chart
from compliance_api.rates.schemas import RateBenchmarkOut
from compliance_api.rates.service import Histogram


def _answer(p25: float, p50: float, p75: float, region: str = "NL") -> RateBenchmarkOut:
    return RateBenchmarkOut(
        sector="ict",
        region=region,
        p25_eur=p25,
        p50_eur=p50,
        p75_eur=p75,
        sample_size=10,
        as_of=date(2026, 6, 30),
        window_months=24,
        synthetic=False,
        source="test",
        livemode=True,
    )


def test_bars_stand_on_the_baseline_in_proportion_to_their_counts() -> None:
    histogram = Histogram(start_cents=6000, width_cents=1000, counts=(2, 8, 4, 0), below=0, above=0)
    chart = rate_chart.histogram_chart(histogram, _answer(70, 75, 85))
    assert [bar.count for bar in chart.bars] == [2, 8, 4, 0]
    for bar in chart.bars:
        assert bar.y + bar.height == pytest.approx(chart.baseline)
    assert chart.bars[1].height == pytest.approx(4 * chart.bars[0].height)
    assert chart.bars[3].height == 0
    assert chart.bars[1].height <= chart.plot_height
    assert [(bar.low, bar.high) for bar in chart.bars[:2]] == [("€60", "€70"), ("€70", "€80")]
    assert (chart.y_ticks[0].label, chart.y_ticks[0].at) == ("0", chart.baseline)
    assert all(chart.left <= tick.at <= chart.left + chart.plot_width for tick in chart.x_ticks)


def test_quartiles_are_marked_at_their_values() -> None:
    histogram = Histogram(start_cents=6000, width_cents=1000, counts=(1, 1, 1, 1), below=0, above=0)
    chart = rate_chart.histogram_chart(histogram, _answer(70, 75, 90.5))
    p25, p50, p75 = chart.markers
    assert (p25.name, p50.name, p75.name) == ("p25", "p50", "p75")
    assert p25.x == pytest.approx(chart.left + chart.plot_width / 4)
    assert p50.x == pytest.approx(chart.left + chart.plot_width * 15 / 40)
    assert p75.x == pytest.approx(chart.left + chart.plot_width * 30.5 / 40)
    assert (p25.label, p50.label, p75.label) == ("p25 €70", "p50 €75", "p75 €90.50")
    assert (p25.anchor, p75.anchor) == ("end", "start"), "their labels never overlap"


def test_regions_share_one_scale() -> None:
    bars = rate_chart.range_bars([_answer(50, 60, 70, "NL"), _answer(60, 65, 90, "NL-UT")])
    national, utrecht = bars["NL"], bars["NL-UT"]
    assert national.low_x < utrecht.low_x
    assert national.low_x + national.width < utrecht.low_x + utrecht.width
    assert national.low_x + national.width == pytest.approx(utrecht.mid_x + (utrecht.mid_x - utrecht.low_x))
    assert rate_chart.range_bars([]) == {}
