"""The bar charts' geometry: bars scaled to a round top value, the highlighted part inside its bar, labels every week
counted back from the last bar."""

from __future__ import annotations

from compliance_api.dashboard.charts import Column, bar_chart


def test_bars_scale_to_a_round_top_and_the_highlighted_part_stays_inside() -> None:
    columns = [Column(f"d{n}", value, limited) for n, (value, limited) in enumerate([(0, 0), (40, 10), (80, 80)])]
    chart = bar_chart("c", "t", "d", columns, height=122, label_every=2)
    assert [tick.value for tick in chart.ticks] == [0, 50, 100]
    plot_height = chart.plot_bottom - chart.ticks[-1].y
    heights = [bar.height for bar in chart.bars]
    assert heights == [0, round(0.4 * plot_height, 2), round(0.8 * plot_height, 2)]
    for bar in chart.bars:
        assert bar.y + bar.height == chart.plot_bottom
        assert bar.highlighted_height <= bar.height
        assert chart.plot_left <= bar.x
        assert bar.x + bar.width <= chart.plot_right
    assert chart.bars[2].highlighted_height == chart.bars[2].height
    assert [bar.labelled for bar in chart.bars] == [True, False, True]


def test_an_empty_chart_still_has_an_axis() -> None:
    chart = bar_chart("c", "t", "d", [Column("d", 0)] * 30)
    assert [tick.value for tick in chart.ticks] == [0, 1]
    assert {bar.height for bar in chart.bars} == {0}
