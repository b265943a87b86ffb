"""What a designer reads: option labels and help, the headline blocks, clipped histograms, and
the shareable report (one offline file).  Results are played here without Ray (the engine's
batch loop, written in the service's layout), so these tests take seconds."""
import json
import posixpath
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core_cy
import pipelines
from core_cy.play import batch
from dashboards import charts, experiment_figures
from dashboards.report import STYLESHEET
from services import cli, datasets, report
from services.spec import ExperimentSpec
from pipelines.folder import cell_dir, filesystem, shard_name, storage_table, write_atomically


def play_into(root: str, raw: dict) -> ExperimentSpec:
    """Every cell of `raw` played with the engine's batch loop into the service's layout."""
    spec = ExperimentSpec.model_validate(raw)
    game = core_cy.load(spec.game)
    fs, base = filesystem(root)
    for cell in spec.cells():
        games, size = spec.max_games_per_cell(), spec.shard_size
        for start, count in ((s, min(size, games - s)) for s in range(0, games, size)):
            rows = batch.play(game, seed=spec.seed, start=start, count=count,
                              experiment="t", **spec.play_arguments(cell))
            write_atomically(storage_table(rows), fs, posixpath.join(
                cell_dir(base, cell.arm, cell.players), shard_name(start)))
    return spec


MAORI = {"name": "maori modes", "game": "maori", "players": 3, "agents": "greedy",
         "arms": {"basic": {"mode": "basic"}, "coral": {"board_side": "coral_reef"}},
         "baseline": "basic", "games_per_arm": 300, "shard_size": 150, "seed": 4}
DESERT = {"name": "desert levels", "game": "forbidden_desert", "players": 4,
          "agents": "search", "arms": {"novice": {"difficulty": "novice"},
                                       "legendary": {"difficulty": "legendary"}},
          "baseline": "novice", "games_per_arm": 300, "shard_size": 150, "seed": 2}


@pytest.fixture(scope="module")
def maori(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("maori") / "exp")
    return play_into(root, MAORI), root


@pytest.fixture(scope="module")
def desert(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("desert") / "exp")
    return play_into(root, DESERT), root


# ---- words ---------------------------------------------------------------------------------
def test_plurals_and_short_agents():
    assert report.plural(1, "game") == "1 game" and report.plural(2, "game") == "2 games"
    assert report.plural(1200, "more game") == "1,200 more games"
    assert report.short_agent("mcts(iterations=400, rollout=greedy)") == "mcts"
    assert report.agents_text(["greedy", "random", "random"]) == (
        "greedy / random / random", "greedy / random / random")
    assert report.agents_text(["mcts(iterations=4)"] * 3) == ("mcts", "mcts(iterations=4)")
    sentence = "x: undecided; 1 more game per cell would decide it about half the time."
    assert report.status_text(False, sentence) \
        == "not decided yet (about half the time within 1 more game)"
    assert report.status_text(True, "") == "decided"
    assert report.status_text(None, "The team wins") == "estimate"


# ---- the headline ----------------------------------------------------------------------------
def test_headline_names_arm_players_and_agent_and_agrees_with_the_tables(maori):
    spec, root = maori
    look = pipelines.Look(interim=False, planned_games=300)
    head = report.headline(spec, root, look)
    assert head["question"].startswith("Are the seats of Maori balanced with 3 players with "
                                       "greedy in every seat") and "coral" in head["question"]
    kinds = [b["kind"] for b in head["blocks"]]
    assert kinds == ["seats", "arms"]
    seats, arms = head["blocks"]
    cells = pipelines.cell_summary(root, look=look)
    assert [(i["arm"], i["players"]) for i in seats["items"]] == \
        list(zip(cells["arm"], cells["players"]))
    for item, cell in zip(seats["items"], cells.iter_rows(named=True)):
        assert item["agent"] == "greedy" and item["title"] == f"{cell['arm']}, 3 players, greedy"
        assert item["sentences"] == [cell["verdict"]] and item["decided"] == cell["decided"]
        assert item["status"] == ("decided" if cell["decided"] else item["status"])
    (item,) = arms["items"]
    rows = pipelines.compare(root, "basic", look=look)
    assert item["arm"] == "coral" and item["baseline"] == "basic"
    assert "coral against basic, 3 players, greedy" == item["title"]
    assert item["sentences"] == rows["verdict"].to_list()
    assert item["decided"] == bool(rows["decided"].all())
    if not item["decided"]:
        assert item["status"].startswith("not decided yet")
    assert item["level"] == rows["p_adjust"][0]
    assert report.headline_verdict(head["blocks"]) == f"{item['title']}: {item['short']}"


def test_headline_of_a_cooperative_game_is_the_team_rate_and_the_arms(desert):
    spec, root = desert
    head = report.headline(spec, root, pipelines.Look(interim=False, planned_games=300))
    assert [b["kind"] for b in head["blocks"]] == ["team", "arms"]
    assert all(i["status"] == "estimate" and i["decided"] is None
               for i in head["blocks"][0]["items"])
    (item,) = head["blocks"][1]["items"]
    # Legendary is far harder than Novice: decided at the default margin with 300 games.
    assert item["decided"] and item["status"] == "decided" and head["decided"]
    assert item["sentences"][0].startswith("legendary changes the team win rate by -")


def test_the_answer_of_a_team_game_names_both_rates_and_the_difference(desert):
    spec, root = desert
    look = pipelines.Look(interim=False, planned_games=300)
    head = report.headline(spec, root, look)
    (item,) = head["blocks"][1]["items"]
    cells = {c["arm"]: c for c in pipelines.cell_summary(root, look=look).to_dicts()}
    (row,) = pipelines.compare(root, "novice", look=look).to_dicts()
    rate = {arm: f"{100 * c['team_win_rate']:.1f}% [{100 * c['team_win_lo']:.1f}%, "
                 f"{100 * c['team_win_hi']:.1f}%]" for arm, c in cells.items()}
    assert item["answer"] == (
        f"Legendary is harder than novice for a team of 4 under search: the team wins "
        f"{rate['legendary']} against {rate['novice']}, {100 * row['win_share_diff']:+.1f} "
        f"points [{100 * row['win_diff_lo']:+.1f}, {100 * row['win_diff_hi']:+.1f}] on the "
        "same deals.")
    assert item["short"].startswith(f"harder: {100 * cells['legendary']['team_win_rate']:.1f}% "
                                    f"against {100 * cells['novice']['team_win_rate']:.1f}%")
    assert report.answer_lines(head) == [item["answer"]]  # the rates are in it: no team lines


def test_the_answer_of_seats_numbers_them_from_1(maori):
    spec, root = maori
    look = pipelines.Look(interim=False, planned_games=300)
    head = report.headline(spec, root, look)
    seats, arms = head["blocks"]
    summary = pipelines.summary(root, look=look)
    for item in seats["items"]:
        part = summary.filter(arm=item["arm"]).sort("seat")
        top = int(part["win_share"].arg_max())
        assert item["answer"].startswith(f"{item['arm']}, 3 players, greedy in every seat: ")
        assert f"seat {top + 1} wins {100 * part['win_share'][top]:.1f}% [" in item["answer"]
        assert "seat 0" not in item["answer"] + " ".join(item["sentences"])
    lines = report.answer_lines(head)
    assert lines == [arms["items"][0]["answer"]] + [i["answer"] for i in seats["items"]]
    assert lines[0].startswith("coral against basic, 3 players, greedy in every seat: ")
    assert re.search(r"seat [123]'s win share by [+-]\d+\.\d points \[", lines[0])


# ---- histograms clipped to a quantile range ---------------------------------------------------
def test_clipped_histograms_count_every_game_once(maori):
    _spec, root = maori
    rows = pipelines.results(root).collect()
    full = datasets.histograms(root, 20)
    clipped = datasets.histograms(root, 20, 0.05)
    lengths = rows["length"].to_numpy()
    for series in clipped["length"]["series"]:
        games = int(((rows["arm"] == series["arm"]) & (rows["players"] == series["players"])).sum())
        assert sum(series["counts"]) + series["below"] + series["above"] == games
    edges = clipped["length"]["edges"]
    assert edges[0] >= lengths.min() - 0.5 and edges[-1] <= lengths.max() + 0.5
    below = sum(s["below"] for s in clipped["length"]["series"])
    above = sum(s["above"] for s in clipped["length"]["series"])
    assert below == int((lengths < edges[0]).sum()) and above == int((lengths > edges[-1]).sum())
    assert all(s["below"] == s["above"] == 0 for s in full["length"]["series"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=300), st.floats(0, 0.49),
       st.integers(1, 50))
def test_histogram_of_any_values_counts_each_once(values, clip, bins):
    import polars as pl

    frame = pl.LazyFrame({"g": ["x"] * len(values), "v": [float(v) for v in values]})
    out = datasets._histogram(frame, "v", ["g"], bins, clip)
    (series,) = out["series"]
    assert sum(series["counts"]) + series["below"] + series["above"] == len(values)
    assert len(out["edges"]) - 1 == len(series["counts"]) <= bins


# ---- the report --------------------------------------------------------------------------------
SVG_NAMESPACE = 'xmlns="http://www.w3.org/2000/svg"'  # a name, never fetched


def _outside_provenance(text: str) -> str:
    return text.split("<h2>Provenance</h2>", 1)[0]


def test_report_is_one_offline_file_with_verdicts_figures_and_provenance(maori, tmp_path):
    spec, root = maori
    (tmp_path / "results").mkdir()
    (tmp_path / "spec.json").write_text(json.dumps(MAORI))
    out = tmp_path / "report.html"
    assert cli.main(["report", root, "-o", str(out), "--spec", str(tmp_path / "spec.json")]) == 0
    text = out.read_text()
    assert "http" not in _outside_provenance(text).replace(SVG_NAMESPACE, "")
    assert not re.search(r"<(script|link|img|iframe)\b", text)  # nothing to fetch or run
    # the page's figures, drawn once: win share, difference, length, a score per seat
    drawn = report.experiment_figure_list(spec, root, spec.look(interim=False))
    assert [f["key"] for f in drawn] == ["3p-win-share", "3p-difference", "3p-length",
                                         "3p-score-seat1", "3p-score-seat2", "3p-score-seat3"]
    assert text.count("<svg") == len(drawn) and all(f["svg"] in text for f in drawn)
    assert "<style>" + STYLESHEET.read_text() + "</style>" in text  # the page's, inline
    head = report.headline(spec, root, pipelines.Look(interim=False, planned_games=300))
    for block in head["blocks"]:
        for item in block["items"]:
            for sentence in item["sentences"]:
                assert sentence.replace("'", "&#x27;") in text
    for needle in ("Provenance", "rules fingerprint", "meeplelab run spec.json",
                   '"board_side": "coral_reef"', "maori-", "greedy"):
        assert needle in text, needle
    fingerprint = core_cy.load("maori").rules_fingerprint({"board_side": "coral_reef"}, 3)
    assert fingerprint in text


def test_report_of_a_folder_reads_its_spec_json_or_asks_for_one(maori, tmp_path, capsys):
    _spec, root = maori
    assert cli.main(["report", root, "-o", str(tmp_path / "r.html")]) == 2
    assert "--spec" in capsys.readouterr().err
    assert cli.main(["report", str(tmp_path / "nowhere"), "-o", str(tmp_path / "r.html")]) == 2
    assert "neither a results folder nor an experiment" in capsys.readouterr().err


# ---- the figures, drawn once --------------------------------------------------------------------
def _svg(text: str):
    import xml.etree.ElementTree as ET

    return ET.fromstring(text)  # a standalone, well-formed SVG document


NS = "{http://www.w3.org/2000/svg}"


def _texts(root, cls: str) -> list[str]:
    return ["".join(e.itertext()) for e in root.iter(f"{NS}text")
            if cls in (e.get("class") or "").split()]


def _number(text: str) -> float:
    return float(text.replace("\u2212", "-").rstrip("%"))


def _assert_round(ticks: list[float]) -> None:
    import math

    assert len(ticks) >= 2, ticks
    step = ticks[1] - ticks[0]
    assert all(abs((b - a) - step) < 1e-9 * max(1.0, step) for a, b in zip(ticks, ticks[1:]))
    mantissa = step / 10 ** math.floor(math.log10(step) + 1e-12)
    assert any(abs(mantissa - m) < 1e-9 for m in (1, 2, 5)), ticks


def test_every_figure_is_labelled_with_round_ticks_a_legend_and_the_tables_numbers(maori):
    spec, root = maori
    look = spec.look(interim=False)
    drawn = report.experiment_figure_list(spec, root, look)
    summary = pipelines.summary(root, look=look).to_dicts()
    for figure in drawn:
        svg = _svg(figure["svg"])
        assert svg.find(f"{NS}title").text == figure["title"]
        _assert_round([_number(t) for t in _texts(svg, "ytick")])
        assert _texts(svg, "ylabel") and _texts(svg, "legend-entry")
        legend = _texts(svg, "legend-entry")
        assert {"basic", "coral"} <= set(legend) or figure["key"] == "3p-difference"
        bars = [e for e in svg.iter(f"{NS}rect") if e.get("class") == "bar"]
        errorbars = [e for e in svg.iter(f"{NS}line") if e.get("class") == "errorbar"]
        assert len(errorbars) == 3 * len(bars)  # every bar keeps its interval
        if bars:
            assert any("interval" in entry for entry in legend)
    (win,) = [_svg(f["svg"]) for f in drawn if f["key"] == "3p-win-share"]
    tips = [e.find(f"{NS}title").text for e in win.iter(f"{NS}rect") if e.get("class") == "bar"]
    assert sorted(tips) == sorted(
        f"{r['arm']}, seat {r['seat'] + 1}: {100 * r['win_share']:.1f}% "
        f"[{100 * r['win_lo']:.1f}%, {100 * r['win_hi']:.1f}%]" for r in summary)
    assert "fair share (33.3%)" in _texts(win, "legend-entry")
    (diff,) = [_svg(f["svg"]) for f in drawn if f["key"] == "3p-difference"]
    compare = pipelines.compare(root, "basic", look=look).to_dicts()
    tips = [e.find(f"{NS}title").text for e in diff.iter(f"{NS}rect") if e.get("class") == "bar"]
    points = [charts.value_text(100 * r[k], signed=True) for r in compare
              for k in ("win_share_diff", "win_diff_lo", "win_diff_hi")]
    assert tips == [f"difference in win share, coral, seat {r['seat'] + 1}: {d} [{lo}, {hi}]"
                    for r, d, lo, hi in zip(compare, points[::3], points[1::3], points[2::3])]


def test_the_length_histogram_counts_every_game_drawn_or_named(maori):
    spec, root = maori
    drawn = report.experiment_figure_list(spec, root, spec.look(interim=False))
    (length,) = [f for f in drawn if f["key"] == "3p-length"]
    hist = datasets.histograms(root, experiment_figures.BINS, experiment_figures.CLIP)["length"]
    below = sum(s["below"] for s in hist["series"])
    above = sum(s["above"] for s in hist["series"])
    notes = " ".join(_texts(_svg(length["svg"]), "note"))
    if below or above:
        assert notes.startswith("Not drawn (outside the 1%-99% range): ")
        for n in (below, above):
            if n:
                assert f"{n:,} game" in notes
    else:
        assert notes == ""


def test_a_cooperative_games_figures_are_the_team_its_endings_and_roles(desert):
    spec, root = desert
    look = spec.look(interim=False)
    drawn = report.experiment_figure_list(spec, root, look)
    assert [f["key"] for f in drawn] == ["4p-team", "4p-difference", "4p-endings",
                                         "4p-by-adventurer", "4p-length"]
    cells = {c["arm"]: c for c in pipelines.cell_summary(root, look=look).to_dicts()}
    endings = _svg(drawn[2]["svg"])
    shares: dict = {}
    for e in endings.iter(f"{NS}rect"):
        if e.get("class") == "segment":
            arm, rest = e.find(f"{NS}title").text.split(", ", 1)
            reason, value = rest.rsplit(": ", 1)
            assert value == f"{100 * cells[arm]['end_' + reason.replace(' ', '_')]:.1f}%"
            shares[arm] = shares.get(arm, 0) + float(value.rstrip("%"))
    assert set(shares) == set(cells) and all(abs(v - 100) < 0.3 for v in shares.values())
    team = _svg(drawn[0]["svg"])
    assert not [e for e in team.iter(f"{NS}line") if e.get("class") == "reference"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(-50, 50), st.floats(0, 20), st.floats(0, 20)),
                min_size=1, max_size=12), st.integers(1, 3), st.booleans())
def test_bars_of_any_values_keep_every_value_and_interval_on_round_axes(points, n, signed):
    groups = [f"g{i}" for i in range(len(points))]
    series = [{"name": f"arm {k}", "points": [(v, v - a, v + b) for v, a, b in points]}
              for k in range(n)]
    svg = _svg(charts.bars("t", groups, series, "y", reference=(0.0, "zero"), signed=signed))
    ticks = [_number(t) for t in _texts(svg, "ytick")]
    _assert_round(ticks)
    values = [x for v, a, b in points for x in (v, v - a, v + b)]
    assert ticks[0] <= min(values + [0.0]) + 1e-9 and ticks[-1] >= max(values + [0.0]) - 1e-9
    bars = [e for e in svg.iter(f"{NS}rect") if e.get("class") == "bar"]
    assert len(bars) == n * len(points)
    assert len([e for e in svg.iter(f"{NS}line") if e.get("class") == "errorbar"]) == 3 * len(bars)


def test_report_svg_writes_every_figure_as_its_file(maori, tmp_path):
    spec, root = maori
    (tmp_path / "spec.json").write_text(json.dumps(MAORI))
    assert cli.main(["report", root, "-o", str(tmp_path / "r.html"), "--spec",
                     str(tmp_path / "spec.json"), "--svg", str(tmp_path / "figures")]) == 0
    drawn = report.experiment_figure_list(spec, root, spec.look(interim=False))
    files = sorted(p.name for p in (tmp_path / "figures").iterdir())
    assert files == sorted(f"{f['key']}.svg" for f in drawn)
    for f in drawn:
        assert (tmp_path / "figures" / f"{f['key']}.svg").read_text() == f["svg"]


def test_interim_figures_say_their_intervals_hold_at_any_look(maori):
    spec, root = maori
    drawn = {f["key"]: f for f in report.experiment_figure_list(spec, root,
                                                                 spec.look(interim=True))}
    win, diff = _svg(drawn["3p-win-share"]["svg"]), _svg(drawn["3p-difference"]["svg"])
    assert "confidence sequences, interim" in drawn["3p-win-share"]["title"]
    assert "95% confidence sequence (valid at any look)" in _texts(win, "legend-entry")
    assert "confidence sequence (valid at any look)" in _texts(diff, "legend-entry")
    final = report.experiment_figure_list(spec, root, spec.look(interim=False))
    assert all("interim" not in f["title"] for f in final)


def test_a_long_label_is_cut_in_its_middle_and_kept_whole_in_its_tooltip():
    groups = [f"a very long arm name for testing, seat {k}" for k in range(1, 10)]
    svg = _svg(charts.bars("t", groups, [{"name": "d", "points": [(1.0, 0.0, 2.0)] * 9}], "y"))
    ticks = [e for e in svg.iter(f"{NS}text") if "xtick" in (e.get("class") or "")]
    assert [e.find(f"{NS}title").text for e in ticks] == groups
    shown = [e.find(f"{NS}title").tail for e in ticks]
    assert all("\u2026" in s and s.endswith(f"seat {k}") for k, s in enumerate(shown, 1))
    from dashboards.svg import text_width

    # slanted by 35 degrees, each ends at its tick and starts inside the chart
    assert all("rotate(-35" in e.get("transform") for e in ticks)
    assert all(float(e.get("x")) - 0.82 * text_width(s) >= 0 for e, s in zip(ticks, shown))
