"""Which figures an experiment has, each drawn once by dashboards/charts.py: the one list the
page (GET /api/experiments/{id}/figures), the shareable report and the command line's
`meeplelab report --svg` show.

A competitive game, per player count: win share per seat per arm against the fair share,
each arm's difference from the baseline, game length, and score per seat.  A cooperative
game: team win rate per arm, the difference from the baseline, how games end, team win rate
per role (each seat outcome the game labels), game length.  A strength ladder adds, per
(base arm, players), the seat advantage per rung.  Every bar carries its interval: 95%, a
comparison's adjusted level, or while the run goes the confidence sequence valid at any
look.  The figures are computed from the tables services.report.figure_tables gathers
(pipelines' rows as dicts), so this module reads no dataset."""
from __future__ import annotations

import re

from dashboards import charts
from dashboards.svg import OUTCOME_PALETTE, PALETTE, SEAT_PALETTE

CLIP = 0.01  # histograms span the 1%-99% quantiles; the tails are counted apart
CLIP_WORDS = "outside the 1%-99% range"
BINS = 20


def colours(tables: dict) -> dict:
    """One colour per arm for every figure of the experiment (the page's and the report's:
    the palette in the spec's arm order), one per way a game ends and one per seat, from
    palettes of their own: a colour means one thing on a page."""
    reasons = sorted({k for c in tables["cells"] for k, v in c.items()
                      if k.startswith("end_") and v and v > 0})
    return {"arm": {a: PALETTE[i % len(PALETTE)] for i, a in enumerate(tables["arms"])},
            "end": {r: OUTCOME_PALETTE[i % len(OUTCOME_PALETTE)] for i, r in enumerate(reasons)},
            "seat": lambda s: SEAT_PALETTE[(s or 0) % len(SEAT_PALETTE)]}


def _figure(key: str, players: int | None, section: str, title: str, svg: str) -> dict:
    return {"key": key, "players": players, "section": section, "title": title, "svg": svg}


def _seat(s: int | None) -> str:
    return "team" if s is None else str(s + 1)


def _level(rows: list[dict]) -> str:
    """'95%': the level of the rows' intervals (the run's 1 - stop_when.alpha)."""
    level = rows[0].get("interval_level") if rows else None
    return "" if level is None else f"{100 * level:.3g}% "


def _intervals(rows: list[dict]) -> str:
    return f"{_level(rows)}confidence sequences, interim" if any(
        r.get("interim") for r in rows) else f"{_level(rows)}intervals"


def _interval_entry(rows: list[dict]) -> str:
    return f"{_level(rows)}confidence sequence (valid at any look)" if any(
        r.get("interim") for r in rows) else f"{_level(rows)}interval"


def _win_share(players: int, rows: list[dict], arms: list[str], paint: dict) -> dict:
    seats = sorted({r["seat"] for r in rows})
    series = [{"name": arm, "colour": paint["arm"][arm], "points": [next(((r["win_share"], r["win_lo"], r["win_hi"])
                                             for r in rows if r["arm"] == arm and r["seat"] == s),
                                            None) for s in seats]}
              for arm in arms if any(r["arm"] == arm for r in rows)]
    title = f"Win share per seat, {players} players ({_intervals(rows)}; dashed: fair)"
    return _figure(f"{players}p-win-share", players, "players", title, charts.bars(
        title, [f"seat {_seat(s)}" for s in seats], series, "win share", "seat", y_min=0,
        reference=_fair_line(rows, arms), percent=True,
        interval=_interval_entry(rows), width=charts.WIDE))


def _fair_line(rows: list[dict], arms: list[str]) -> tuple[float, str]:
    """The fair share the verdicts judge the seats against (pipelines' fair_share: 1/k less
    the games without a winner), of the first arm shown; named by its arm when the arms'
    fair shares differ."""
    fair = {r["arm"]: r["fair_share"] for r in rows}
    first = next(arm for arm in arms if arm in fair)
    differ = len({f"{100 * v:.1f}" for v in fair.values()}) > 1
    return fair[first], (f"fair share{', ' + first if differ else ''} "
                         f"({100 * fair[first]:.1f}%)")


def _team(players: int, cells: list[dict], paint: dict) -> dict:
    title = f"Team win rate per arm, {players} players ({_intervals(cells)})"
    return _figure(f"{players}p-team", players, "players", title, charts.bars(
        title, [c["arm"] for c in cells], [{"name": "team win rate", "points": [
            (c["team_win_rate"], c["team_win_lo"], c["team_win_hi"]) for c in cells]}],
        "team win rate", "arm", y_min=0, percent=True, interval=_interval_entry(cells),
        width=charts.WIDE, group_colours=[(paint["arm"][c["arm"]], c["arm"]) for c in cells]))


def _difference(players: int, diffs: list[dict], paint: dict) -> dict:
    level = diffs[0]["interval_level"]
    what = "team win rate" if diffs[0]["seat"] is None else "win share"
    words = ("confidence sequences, interim" if diffs[0].get("interim")
             else f"{100 * level:.3g}% intervals, adjusted")
    title = f"Difference from {diffs[0]['baseline']} in {what}, {players} players ({words})"
    labels = [r["arm"] if r["seat"] is None else f"{r['arm']}, seat {r['seat'] + 1}"
              for r in diffs]
    return _figure(f"{players}p-difference", players, "players", title, charts.bars(
        title, labels, [{"name": f"difference in {what}", "points": [
            (100 * r["win_share_diff"], 100 * r["win_diff_lo"], 100 * r["win_diff_hi"])
            for r in diffs]}],
        f"{what} difference (points)", reference=(0.0, "no difference"), signed=True,
        interval="confidence sequence (valid at any look)" if diffs[0].get("interim")
        else f"{100 * level:.3g}% interval (adjusted over the experiment's tests)",
        width=charts.WIDE, group_colours=[(paint["arm"][r["arm"]], r["arm"]) for r in diffs]))


def _histogram(key: str, players: int, title: str, hist: dict, arms: list[str],
               x_label: str, paint: dict, seat: int | None = None) -> dict | None:
    series = [s for arm in arms for s in hist["series"]
              if s["arm"] == arm and s["players"] == players and s.get("seat") == seat]
    if not series:
        return None
    return _figure(key, players, "players", title, charts.histogram(
        title, hist["edges"], [{**s, "name": s["arm"], "colour": paint["arm"][s["arm"]]}
                               for s in series], x_label, CLIP_WORDS))


def _endings(players: int, cells: list[dict], paint: dict) -> dict | None:
    reasons = sorted({k for c in cells for k, v in c.items()
                      if k.startswith("end_") and v and v > 0})
    if not reasons:
        return None
    title = f"How games end per arm, {players} players"
    return _figure(f"{players}p-endings", players, "players", title, charts.stacked_bars(
        title, [c["arm"] for c in cells], [{"name": k[4:].replace("_", " "), "colour":
                                             paint["end"][k], "values": [
            c.get(k) or 0.0 for c in cells]} for k in reasons], x_label="arm"))


def _by_role(players: int, label: str, rows: list[dict], arms: list[str],
             paint: dict) -> dict:
    values = sorted({r["value"] for r in rows}, key=str)
    series = [{"name": arm, "colour": paint["arm"][arm], "points": [next(((r["win_rate"], r["win_lo"], r["win_hi"])
                                             for r in rows
                                             if r["arm"] == arm and r["value"] == v), None)
                                       for v in values]}
              for arm in arms if any(r["arm"] == arm for r in rows)]
    title = f"Team win rate per {label}, {players} players ({_intervals(rows)})"
    return _figure(f"{players}p-by-{_slug(label)}", players, "players", title, charts.bars(
        title, [str(v) for v in values], series, "team win rate", label, y_min=0,
        percent=True, interval=_interval_entry(rows)))


def _ladder(base: str, players: int, rows: list[dict], paint: dict) -> dict:
    rungs = list(dict.fromkeys(r["rung"] for r in sorted(rows, key=lambda r: r["level"])))
    seats = sorted({r["seat"] for r in rows})
    series = [{"name": f"seat {_seat(seat)}", "colour": paint["seat"](seat), "points": [next((
        (100 * r["advantage"], 100 * (r["advantage"] - (r["win_share"] - r["win_lo"])),
         100 * (r["advantage"] + (r["win_hi"] - r["win_share"])))
        for r in rows if r["rung"] == rung and r["seat"] == seat), None) for rung in rungs]}
        for seat in seats]
    title = f"Seat advantage per agent strength, {base}, {players} players (weakest first)"
    return _figure(f"ladder-{_slug(base)}-{players}p", players, "ladder", title, charts.bars(
        title, rungs, series, "seat advantage (points of win share)", "agent (rung)",
        reference=(0.0, "no advantage (the mean share)"), signed=True,
        interval="95% interval of the win share"))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text))


def _players_figures(players: int, tables: dict, paint: dict) -> list[dict | None]:
    arms, hist = tables["arms"], tables["histograms"]
    cells = [c for arm in arms for c in tables["cells"]
             if c["arm"] == arm and c["players"] == players]
    diffs = [r for r in tables["compare"] if r["players"] == players]
    length = _histogram(f"{players}p-length", players, f"Game length, {players} players",
                        hist["length"], arms, "game length (moves)", paint)
    if cells and cells[0]["cooperative"]:
        return [_team(players, cells, paint),
                _difference(players, diffs, paint) if diffs else None,
                _endings(players, cells, paint),
                *[_by_role(players, label, [r for r in rows if r["players"] == players], arms,
                           paint)
                  for label, rows in tables["breakdowns"].items()], length]
    rows = [r for r in tables["summary"] if r["players"] == players]
    scores = [_histogram(f"{players}p-score-seat{seat + 1}", players,
                         f"Score distribution, seat {seat + 1}, {players} players",
                         hist["score"], arms, "score", paint, seat)
              for seat in sorted({s["seat"] for s in hist["score"]["series"]
                                  if s["players"] == players})]
    return [_win_share(players, rows, arms, paint),
            _difference(players, diffs, paint) if diffs else None, length, *scores]


def experiment_figures(tables: dict) -> list[dict]:
    """Every figure of an experiment, in reading order: [{key, players, section ("players"
    or "ladder"), title, svg}].  `tables`: arms (the spec's order), cells, summary, compare
    (rows of pipelines.cell_summary, summary, compare), histograms (services.datasets'), and
    breakdowns {role label: rows of pipelines.breakdown} and ladder (rows of
    pipelines.ladder.ladder_summary, or None)."""
    out, paint = [], colours(tables)
    for (base, players) in dict.fromkeys((r["base"], r["players"])
                                         for r in tables.get("ladder") or []):
        out.append(_ladder(base, players, [r for r in tables["ladder"]
                                            if r["base"] == base and r["players"] == players],
                           paint))
    for players in sorted({c["players"] for c in tables["cells"]}):
        out += [f for f in _players_figures(players, tables, paint) if f is not None]
    return out
