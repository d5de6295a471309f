"""render/charts.py and render/svg.py: every chart described once as data and drawn by one SVG writer,
for the briefs and the page alike. What a chart shows is checked on its description; the drawing on
the SVG: text stays text and escaped, a log axis places its points, a line above the top is cut there."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pandas as pd

from ckptreport.render import charts, svg
from ckptreport.render.charts import Axis, BarChart, Line, LineChart, Marker, Row, Segment

NS = {"s": "http://www.w3.org/2000/svg"}


def parsed(markup) -> ET.Element:
    return ET.fromstring(str(markup))


def test_a_line_chart_places_its_points_on_a_log_axis_and_cuts_a_line_at_the_top():
    c = LineChart(
        "t",
        Axis("x", 1.0, 100.0, log=True, ticks=((1.0, "1"), (10.0, "10"), (100.0, "100"))),
        Axis("y", 0.0, 10.0, ticks=((0.0, "0"), (10.0, "10"))),
        (Line("a", ((1.0, 0.0), (10.0, 5.0), (100.0, 20.0)), "#000000"),),
        (Marker(10.0, 5.0, "#111111"),),
        width=300,
        height=200,
        left=50,
    )
    root = parsed(svg.draw(c))
    (poly,) = root.findall("s:polyline", NS)
    points = [tuple(map(float, p.split(","))) for p in poly.get("points").split()]
    x0, x1 = 50.0, 300.0 - 16
    assert points[0][0] == x0 and math.isclose(
        points[1][0], (x0 + x1) / 2, abs_tol=0.1
    )  # 10 is mid-way on log
    y_top = 14.0
    assert math.isclose(
        points[-1][1], y_top, abs_tol=0.1
    )  # 20 is above the top (10): the line stops there
    assert len(points) == 3 and points[-1][0] < x1  # cut where it crosses 10, between 10 and 100
    assert [t.text for t in root.findall("s:text", NS)][:2] == ["0", "10"]


def test_every_string_is_text_never_markup():
    name = "<script>alert(1)</script> & =HYPERLINK()"
    c = BarChart(
        name,
        Axis(name, 0.0, 2.0),
        (Row(name, (Segment(0.0, 1.0, "#000", tip=name, label=name),)),),
        legend=(("#000", name),),
    )
    text = str(svg.draw(c))
    assert "<script>" not in text and "&lt;script&gt;" in text
    root = parsed(text)
    assert root.find("s:title", NS).text == name
    assert name in [t.text for t in root.iter(f"{{{NS['s']}}}text")]


def test_the_purchase_curve_describes_what_the_buyer_weighs():
    points = pd.DataFrame(
        {
            "tier": ["a", "b", "a", "b"],
            "strategy": ["async", "async", "sync", "sync"],
            "engine": ["e"] * 4,
            "tier_bought_GBps": [30.0, 80.0, 30.0, 80.0],
            "storage_usd_month": [10.0, 40.0, 10.0, 40.0],
            "lost_gpu_usd_month": [90.0, 20.0, 300.0, 100.0],
            "total_usd_month": [100.0, 60.0, 310.0, 140.0],
            "total_usd": [1.0, 0.6, 3.1, 1.4],
            "choice_usd": [1.0, 0.6, 3.1, 1.4],
            "recommendable": [True] * 4,
        },
        index=[7, 8, 9, 10],
    )
    c = charts.purchase(points, 8, "async", "the test family")
    assert [line.name for line in c.lines] == [
        "storage",
        "GPU time lost (async)",
        "total (async)",
        "total (sync)",
    ]
    assert c.lines[2].points == ((30.0, 100.0), (80.0, 60.0)) and c.lines[3].dash
    assert c.markers == (Marker(80.0, 60.0, charts.BLUE, "optimum: b"),)
    assert c.x.log and [t for _, t in c.x.ticks] == ["30", "80"] and c.y.hi >= 310.0
    drawn = str(svg.draw(c))
    assert "optimum: b" in drawn and "the test family" in drawn
    assert (
        charts.purchase(points.assign(total_usd_month=math.nan), None, "async", "x") is None
    )  # nothing priced


def test_the_briefs_and_the_page_draw_one_chart_the_same(report):
    """A summary line's purchase curve in its brief and on the page: one description, one drawing."""
    data = report.briefs[0]  # a job's brief
    p = data.purchase
    once = svg.draw(charts.purchase(p.points, p.optimum, str(data.pick.row["strategy"]), p.what))
    again = svg.draw(charts.purchase(p.points, p.optimum, str(data.pick.row["strategy"]), p.what))
    assert once == again and once.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    assert re.search(r'viewBox="0 0 640 \d+"', once)
    waste = charts.waste(data)
    assert {line.name.split(" ")[0] for line in waste.lines} == {"sync", "async"}
    assert all(m.y <= waste.y.hi for m in waste.markers)  # each optimum is in view
    size = charts.size(data.pick.row)
    assert math.isclose(
        sum(s.end - s.start for s in size.rows[0].segments),
        data.pick.row["ckpt_bytes"] / 1e12,
        rel_tol=1e-9,
    )
