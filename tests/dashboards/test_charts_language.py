"""One visual language (dashboards/charts.py, dashboards/experiment_figures.py): a colour
means one arm, one outcome or one seat in every figure of an experiment; a curve equal to
another stays visible; the figures that carry the answer are drawn wide."""
import re

from dashboards import charts
from dashboards.experiment_figures import colours, experiment_figures


def _fills(svg: str, cls: str) -> list[str]:
    return re.findall(rf'<(?:rect|path) class="{cls}"[^>]*?(?:fill|stroke)="(#[0-9a-f]+)"', svg)


def test_an_equal_histogram_is_drawn_dashed_over_the_other_and_said():
    same = {"counts": [1, 4, 2], "below": 0, "above": 0}
    svg = charts.histogram("t", [0, 1, 2, 3], [{**same, "name": "a"}, {**same, "name": "b"},
                                               {"name": "c", "counts": [3, 1, 1]}], "x")
    paths = re.findall(r'<path class="hist"[^>]*>', svg)
    assert len(paths) == 3
    assert "stroke-dasharray" not in paths[0] and "stroke-dasharray" in paths[1]
    assert "stroke-dasharray" not in paths[2]
    assert "b is the same as a: drawn dashed over it." in svg
    assert "the same as" not in charts.histogram("t", [0, 1, 2, 3], [
        {**same, "name": "a"}, {"name": "c", "counts": [3, 1, 1]}], "x")


def test_equal_curves_side_by_side_stay_visible():
    one = {"x": [0, 1, 2], "y": [1.0, 2.0, 3.0], "low": [0, 1, 2], "high": [2, 3, 4]}
    svg = charts.curves("t", [{**one, "name": "greedy"}, {**one, "name": "strong"}], "x", "y")
    lines = re.findall(r'<polyline class="curve"[^>]*>', svg)
    assert "stroke-dasharray" in lines[1] and "stroke-dasharray" not in lines[0]
    assert "strong equals greedy: drawn dashed over it." in svg


def _tables(arms, reasons):
    cells = [{"arm": a, "players": 3, "cooperative": True, "team_win_rate": 0.4,
              "team_win_lo": 0.3, "team_win_hi": 0.5,
              **{f"end_{r}": 1 / len(reasons) for r in reasons}} for a in arms]
    length = {"edges": [0, 10, 20], "series": [
        {"arm": a, "players": 3, "seat": None, "counts": [3, 4], "below": 0, "above": 0}
        for a in arms]}
    compare = [{"arm": a, "players": 3, "seat": None, "baseline": arms[0],
                "interval_level": 0.95, "win_share_diff": 0.01, "win_diff_lo": -0.02,
                "win_diff_hi": 0.04} for a in arms[1:]]
    rows = [{"arm": a, "players": 3, "value": v, "win_rate": 0.3, "win_lo": 0.2,
             "win_hi": 0.4} for a in arms for v in ("climber", "navigator")]
    return {"arms": arms, "cells": cells, "summary": [], "compare": compare,
            "histograms": {"length": length, "score": {"series": []}},
            "breakdowns": {"adventurer": rows}, "ladder": None}


def test_every_figure_gives_an_arm_its_colour_and_outcomes_colours_of_their_own():
    arms, reasons = ["novice", "normal", "elite"], ["thirst", "sand", "escaped"]
    tables = _tables(arms, reasons)
    paint = colours(tables)
    figures = {f["key"]: f["svg"] for f in experiment_figures(tables)}
    assert set(figures) == {"3p-team", "3p-difference", "3p-endings", "3p-by-adventurer",
                            "3p-length"}
    arm_colours = [paint["arm"][a] for a in arms]
    assert len(set(arm_colours)) == 3
    assert _fills(figures["3p-team"], "bar") == arm_colours  # a bar per arm, its colour
    assert _fills(figures["3p-difference"], "bar") == arm_colours[1:]
    assert _fills(figures["3p-by-adventurer"], "bar") == arm_colours * 2  # per role, per arm
    assert _fills(figures["3p-length"], "hist") == arm_colours
    endings = set(_fills(figures["3p-endings"], "segment"))
    assert len(endings) == 3 and not endings & set(arm_colours)  # "normal" is never "thirst"
    # the answer's figures are drawn wide, the others beside each other
    for key in ("3p-team", "3p-difference"):
        assert 'class="chart wide"' in figures[key]
    assert 'class="chart wide"' not in figures["3p-length"]
