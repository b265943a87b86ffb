"""The results view: one model of what an experiment says, rendered by the page (server-side
HTML fragments, dashboards/report.py's markup), the one-file report (the same markup in one
document) and the terminal (`text`).  Nothing is formatted elsewhere.

`build(spec, root, look)` turns a spec, its results folder and a look into:
- the question, how the run ended (`ended`: a cancelled, failed or budget-stopped run says so,
  with the games it played) and whether the figures are interim;
- the headline (services.report.headline: each item's answer in words);
- per player count in the spec's order: its sentences, warnings, figures and tables as
  formatted rows (one number format: a percent with "[low, high]", a change in points with
  "[low, high]"; each table says its level once, in its note; agents named once);
- the strength ladder, and the provenance of the rows.
A new statistic touches pipelines/ and this module, nothing else.
"""
from __future__ import annotations

import textwrap

import polars as pl

import pipelines
from services import report
from services.report import agents_text, plural, short_agent


# ---- one number format: report.pct ('33.3%'), report.interval ('33.3% [30.1%, 36.5%]') ----
pct, rate = report.pct, report.interval


def points(v, lo, hi) -> str:
    """A change of a share in points: '+7.5 [-1.5, +16.5]'."""
    return "–" if v is None else report.interval(v, lo, hi, report.signed_points)


def number(v, lo=None, hi=None, signed: bool = False) -> str:
    """'12.34 [10.10, 13.20]' (two decimals; '+' with `signed`)."""
    if v is None:
        return "–"
    f = "{:+.2f}" if signed else "{:.2f}"
    return f.format(v) + ("" if lo is None else f" [{f.format(lo)}, {f.format(hi)}]")


def level_text(interim: bool, level: float, adjust: str | None = None) -> str:
    """How a table's intervals are to be read, said once per table."""
    if interim:
        return (f"Intervals: {100 * level:.3g}% confidence sequences, valid at any look "
                "(interim: wider than the final ones, no p-values).")
    out = f"Intervals: {100 * level:.3g}%"
    return out + (f" ({adjust})." if adjust else ".")


def _cell(text: str, title: str | None = None):
    return text if title is None or title == text else {"text": text, "title": title}


def _table(key: str, title: str, head: list[str], rows: list, note: str = "",
           agents: str = "", classes: list[str] | None = None) -> dict:
    return {"key": key, "title": title, "head": head, "note": note, "agents": agents,
            "rows": [{"cells": r, "class": (classes[i] if classes else "")}
                     for i, r in enumerate(rows)]}


# ---- how the run ended ---------------------------------------------------------------------
ENDED_WORDS = {"cancelled": "was cancelled", "failed": "failed"}


def ended(root: str, status: str | None = None, games: int | None = None,
          error: str | None = None) -> dict | None:
    """A run that ended before its spec's end (cancelled, failed, or stopped by its CPU
    budget): its status, the games it played and the sentence that says so; None for a
    run that is done or still going.  `status`: the registry's, when there is one (a
    service's run), else the manifest's."""
    from pipelines.folder import read_manifest

    manifest = read_manifest(root) or {}
    status = status or manifest.get("status")
    if status not in ENDED_WORDS:
        return None
    games = manifest.get("games", games or 0) if manifest else (games or 0)
    error = error or manifest.get("error")
    budget = bool(error) and "budget" in error
    words = "stopped at its CPU budget" if budget else ENDED_WORDS[status]
    why = f" ({error})" if error and not budget and error != status else ""
    return {"status": status, "games": games, "error": error,
            "sentence": f"This experiment {words}{why} after {plural(games, 'game')}: "
                        "every figure here is of those games, not of the games its spec "
                        "asked for."}


# ---- the tables ----------------------------------------------------------------------------
def _agents_line(agents: list[str], game: str | None = None) -> str:
    """The agents of a table, named once: 'agents: greedy in every seat' or each short name
    with its full string."""
    distinct = list(dict.fromkeys(agents))
    if len(distinct) == 1:
        short = short_agent(distinct[0], game)
        full = "" if short == distinct[0] else f" = {distinct[0]}"
        return f"agents: {short} in every seat{full}"
    named = [a if short_agent(a, game) == a else f"{short_agent(a, game)} = {a}"
             for a in distinct]
    return "agents: " + "; ".join(named)


def seat_table(players: int, seats: list[dict], interim: bool, game: str) -> dict:
    """Win share and mean score per arm and seat; the agent column only when seats differ."""
    one_agent = len({r["agent"] for r in seats}) == 1
    head = ["arm", "seat"] + ([] if one_agent else ["agent"]) + [
        "games", "win share", "mean score"]
    rows = [[r["arm"], str(r["seat"] + 1)]
            + ([] if one_agent else [_cell(short_agent(r["agent"], game), r["agent"])])
            + [f"{r['games']:,}", rate(r["win_share"], r["win_lo"], r["win_hi"]),
               number(r["score_mean"], r["score_lo"], r["score_hi"])] for r in seats]
    small = [r for r in seats if r["small_n"]]
    note = level_text(interim, seats[0]["interval_level"]) + (
        " Fewer than 30 games: approximate." if small else "")
    return _table(f"{players}p-seats", "Seats", head, rows, note,
                  _agents_line([r["agent"] for r in seats], game))


def game_table(players: int, cells: list[dict], interim: bool) -> dict:
    """Per arm: the games counted and truncated, ties, the team rate of a cooperative game,
    the game length and how games end."""
    cooperative = bool(cells) and cells[0]["cooperative"]
    head = ["arm", "games", "truncated"] + (["team win rate"] if cooperative else
                                           ["ties", "no winner", "1st-2nd margin"]) + [
        "length mean (p10, p50, p90)", "end reasons"]
    rows = []
    for c in cells:
        reasons = sorted(((k[len("end_"):].replace("_", " "), v) for k, v in c.items()
                          if k.startswith("end_") and v), key=lambda kv: -kv[1])
        rows.append([c["arm"], f"{c['games']:,}", f"{c['truncated']:,}"]
                    + ([rate(c["team_win_rate"], c["team_win_lo"], c["team_win_hi"])]
                       if cooperative else [pct(c["tie_rate"]), pct(c["no_winner_share"]),
                                            number(c["margin_mean"])])
                    + [f"{c['length_mean']:.1f} ({c['length_p10']:.0f}, "
                       f"{c['length_p50']:.0f}, {c['length_p90']:.0f})",
                       ", ".join(f"{k} {pct(v)}" for k, v in reasons)])
    note = (level_text(interim, cells[0]["interval_level"]) if cooperative else "") + \
        " Truncated games (ended by a " \
        "simulator safety) are left out of every other figure."
    return _table(f"{players}p-games", "Games", head, rows, note.strip())


def outcome_tables(spec, root: str, players: int, arms: list[str], game) -> list[dict]:
    """The game's own outcome columns (Game.game_outcome_names, seat_outcome_names): their
    means over the games that count, per seat for a competitive game's seat columns.
    Labelled outcomes (codes) are the breakdowns'."""
    game_cols = [n for n in game.game_outcome_names if n not in game.outcome_labels]
    seat_cols = [n for n in game.seat_outcome_names
                 if n not in game.outcome_labels and not game.cooperative]
    if not game_cols and not seat_cols:
        return []
    rows = pipelines.results(root)
    seat_value = [pl.col("seat_" + n).cast(pl.List(pl.Float64)).list.get(k).mean()
                  .alias(f"{n}/{k}") for n in seat_cols for k in range(players)]
    out_game, out_seat, shown = {n: [n] for n in game_cols}, [], []
    for arm in arms:
        means = (rows.filter((pl.col("arm") == arm) & (pl.col("players") == players))
                 .select([pl.col(n).cast(pl.Float64).mean() for n in game_cols] + seat_value)
                 .collect())
        if means.is_empty():
            continue
        means, shown = means.row(0, named=True), shown + [arm]
        for n in game_cols:
            out_game[n].append(number(means[n]))
        out_seat += [[arm, n] + [number(means[f"{n}/{k}"]) for k in range(players)]
                     for n in seat_cols]
    tables = []
    if game_cols:
        tables.append(_table(f"{players}p-outcomes", "Outcomes (mean per game)",
                             ["outcome"] + shown, list(out_game.values())))
    if seat_cols:
        tables.append(_table(f"{players}p-seat-outcomes", "Seat outcomes (mean per game)",
                             ["arm", "outcome"] + [f"seat {k + 1}" for k in range(players)],
                             out_seat))
    return tables


def label_tables(root: str, players: int, game, look, interim: bool) -> list[dict]:
    """A cooperative game's team win rate per labelled seat value (e.g. an adventurer)."""
    tables = []
    for name in game.outcome_labels:
        if name not in game.seat_outcome_names:
            continue
        rows = [r for r in pipelines.breakdown(root, "seat_" + name, look=look).to_dicts()
                if r["players"] == players]
        tables.append(_table(f"{players}p-by-{name}", f"Team win rate by {name}",
                             ["arm", name, "team win rate"],
                             [[r["arm"], str(r["value"]), rate(r["win_rate"], r["win_lo"],
                                                               r["win_hi"])] for r in rows],
                             level_text(interim, 1 - look.alpha)))
    return tables


def agent_table(root: str, players: int, look, interim: bool, game: str) -> dict | None:
    """Win share per agent (per seat held; each game once) and head-to-head ratings, when
    the seats' agents differ."""
    from pipelines import ladder

    agents = [a for a in pipelines.agent_summary(root, look=look).to_dicts()
              if a["players"] == players]
    if not agents:
        return None
    ratings = {(r["arm"], r["agent"]): r for r in ladder.ratings(root).to_dicts()
               if r["players"] == players}
    rows = []
    for a in agents:
        r = ratings.get((a["arm"], a["agent"]))
        elo = "–" if r is None else (r["note"] if r["elo"] is None else
                                     f"{r['elo']:+.0f} [{r['elo_lo']:+.0f}, {r['elo_hi']:+.0f}]")
        rows.append([a["arm"], _cell(short_agent(a["agent"], game), a["agent"]),
                     f"{a['games']:,}",
                     rate(a["win_share"], a["win_lo"], a["win_hi"]), number(a["score_mean"]),
                     elo])
    return _table(f"{players}p-agents", "Win share per agent (per seat held; each game once)",
                  ["arm", "agent", "games", "win share", "mean score",
                   "rating (Elo scale, reference = 0)"], rows,
                  level_text(interim, 1 - look.alpha) + " Ratings: Bradley-Terry over the "
                  "games where the agents met.", _agents_line([a["agent"] for a in agents], game))


def compare_table(players: int, rows: list[dict]) -> dict:
    """Each arm against the baseline, paired by game: the change of the win share (team win
    rate) and of the mean score, each with whether it is significant."""
    team = rows[0]["seat"] is None
    interim = bool(rows[0].get("interim"))
    head = ["arm"] + ([] if team else ["seat"]) + [
        "paired games", ("team win rate" if team else "win share") + " change (points)",
        "significant"] + ([] if team else ["mean score change", "significant"])
    body = [[r["arm"]] + ([] if team else [str(r["seat"] + 1)])
            + [f"{r['pairs']:,}", points(r["win_share_diff"], r["win_diff_lo"],
                                         r["win_diff_hi"]),
               "yes" if r["win_significant"] else "no"]
            + ([] if team else [number(r["score_diff"], r["score_diff_lo"],
                                       r["score_diff_hi"], signed=True),
                                "–" if r["score_diff"] is None else
                                ("yes" if r["score_significant"] else "no")])
            for r in rows]
    level = rows[0]["interval_level"]
    note = level_text(interim, level, rows[0]["p_adjust"]) + (
        "" if interim else " The verdicts use this level.")
    return _table(f"{players}p-compare", f"Each arm against {rows[0]['baseline']}", head,
                  body, note, classes=["significant" if r["win_significant"] else ""
                                       for r in rows])


def ladder_table(spec, root: str) -> dict:
    """The seat win shares per rung of the strength ladder, weakest first (95%: the
    ladder's intervals are not the run's setting)."""
    from pipelines import ladder, stats

    seats = report._in_arm_order(spec, ladder.ladder_summary(root, spec.ladder).to_dicts())
    return _table("ladder", "Seat win share per rung, weakest first",
                  ["arm", "players", "rung", "seat", "win share"],
                  [[r["base"], str(r["players"]), short_agent(r["rung"], spec.game),
                    str(r["seat"] + 1), rate(r["win_share"], r["win_lo"], r["win_hi"])] for r in seats],
                  level_text(False, 1 - stats.ALPHA), _agents_line(list(spec.ladder), spec.game))


def provenance_table(spec, root: str) -> dict:
    """Where the rows come from: engine version(s), rules fingerprint and agents per cell."""
    prov = report.provenance(spec, root)
    agents = [a for c in prov["cells"] for seats in c["seat_agent"] for a in seats.split(" / ")]
    table = _table("provenance", "Provenance",
                   ["arm", "players", "games", "engine version", "rules fingerprint",
                    "agents"],
                   [[c["arm"], str(c["players"]), f"{c['games']:,}",
                     ", ".join(c["engine_version"]), ", ".join(c["rules_fingerprint"]),
                     _cell("; ".join(agents_text(a.split(" / "))[0] for a in c["seat_agent"]),
                           "; ".join(agents_text(a.split(" / "))[1] for a in c["seat_agent"]))]
                    for c in prov["cells"]], agents=_agents_line(agents, spec.game).replace(
                        " in every seat", ""))
    return {**table, "game": prov["game"], "meeplelab": prov["meeplelab"],
            "seed": prov["seed"]}


# ---- the view ------------------------------------------------------------------------------
def warnings(cells: list[dict], diffs: list[dict] = ()) -> list[str]:
    """A player count's warnings: its truncated games, and each sentence that says the
    games contradict the stored spread (the cells' and comparisons' spread_warning), once."""
    over = [c for c in cells if c["truncated"]]
    spread = list(dict.fromkeys(r["spread_warning"] for r in [*cells, *diffs]
                                if r.get("spread_warning")))
    if not over:
        return spread
    return ["Truncated games (ended by a simulator safety, left out of every figure): "
            + ", ".join(f"{c['arm']} {plural(c['truncated'], 'game')} "
                        f"({pct(c['truncated_share'])})" for c in over)
            + ". The agents may stall in these rules."] + spread


def build(spec, root: str, look: pipelines.Look, *, status: str | None = None,
          games: int | None = None, error: str | None = None, drawn: bool = True,
          provenance: bool = True) -> dict:
    """The view of an experiment (see the module doc).  status/games/error: the registry's
    record of a service's run (else the folder's manifest says how it ended); `drawn`: with
    the figures (SVG); `provenance`: with the provenance table."""
    import core_cy

    tables = report.figures(spec, root, look)
    head = report.headline(spec, root, look, tables)
    figures = report.experiment_figure_list(spec, root, look, tables) if drawn else []
    game = core_cy.load(spec.game)
    arms = spec.result_arms()
    sections = []
    for players in spec.player_counts():
        cells = [c for c in tables["cells"] if c["players"] == players]
        if not cells:
            continue
        seats = [r for r in tables["summary"] if r["players"] == players]
        diffs = [r for r in tables["compare"] if r["players"] == players]
        present = [c["arm"] for c in cells]
        parts = ([] if game.cooperative else [seat_table(players, seats, look.interim,
                                                          spec.game)]) + [
            game_table(players, cells, look.interim)]
        parts += label_tables(root, players, game, look, look.interim) \
            if game.cooperative else []
        parts += outcome_tables(spec, root, players, present, game)
        if len(set(spec.agent_list(players))) > 1:
            parts.append(agent_table(root, players, look, look.interim, spec.game))
        if diffs:
            parts.append(compare_table(players, diffs))
        sections.append({
            "players": players, "title": f"{players} players",
            "sentences": [f"{c['arm']}: {c['verdict']}" for c in cells if c["verdict"]]
            + [r["verdict"] for r in diffs if r["verdict"]],
            "warnings": warnings(cells, diffs),
            "figures": [f for f in figures
                        if f["section"] == "players" and f["players"] == players],
            "tables": [t for t in parts if t]})
    ladder = None
    if spec.ladder:
        block = next((b for b in head["blocks"] if b["kind"] == "ladder"), None)
        ladder = {"sentences": [s for i in (block["items"] if block else [])
                                for s in i["sentences"]],
                  "figures": [f for f in figures if f["section"] == "ladder"],
                  "tables": [ladder_table(spec, root)]}
    end = ended(root, status, games, error)
    return {"name": spec.name, "game": spec.game, "title": game.title,
            "question": head["question"], "interim": look.interim, "ended": end,
            "headline": head, "answers": report.answer_lines(head),
            "arms": arms, "sections": sections, "ladder": ladder,
            "provenance": provenance_table(spec, root) if provenance else None}


# ---- the terminal --------------------------------------------------------------------------
WIDTH = 100


def _text_table(table: dict, width: int = WIDTH) -> list[str]:
    """A table as aligned columns; a column that would not fit is cut to the width left."""
    head = table["head"]
    rows = [[c if isinstance(c, str) else c["text"] for c in r["cells"]] for r in table["rows"]]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    over = sum(widths) + 2 * len(widths) + 2 - width
    if over > 0:  # the widest column gives way (wrapped)
        k = widths.index(max(widths))
        widths[k] = max(12, widths[k] - over)

    def line(cells: list[str]) -> list[str]:
        parts = [textwrap.wrap(str(c), w) or [""] for c, w in zip(cells, widths)]
        return ["  " + "  ".join(f"{(p[i] if i < len(p) else ''):<{w}}" for p, w in
                                 zip(parts, widths)).rstrip()
                for i in range(max(len(p) for p in parts))]

    out = line(head)
    for r in rows:
        out += line(r)
    return out


def _wrapped(text: str, indent: str = "", width: int = WIDTH) -> list[str]:
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + "  ") \
        or [indent]


def text(view: dict, width: int = WIDTH) -> str:
    """The view as the terminal prints it: every line within `width` columns (the tables'
    agents named once above them)."""
    out = _wrapped(view["question"], width=width)
    if view["ended"]:
        out += [""] + _wrapped("warning: " + view["ended"]["sentence"], width=width)
    if view["interim"]:
        out += [""] + _wrapped("Interim figures: the run is not done; every interval is a "
                               "confidence sequence that holds at any look.", width=width)
    out += ["", "the answer:"]
    for line in view["answers"]:
        out += _wrapped(line, "  ", width)
    groups = ([("strength ladder", view["ladder"])] if view["ladder"] else []) + [
        (s["title"], s) for s in view["sections"]]
    for title, part in groups:
        out += ["", f"== {title} =="]
        for s in part["sentences"]:
            out += _wrapped(s, "  ", width)
        for w in part.get("warnings", []):
            out += _wrapped("warning: " + w, "  ", width)
        for table in part["tables"]:
            out += [""] + _wrapped(f"{table['title']}:", "  ", width)
            if table["agents"]:
                out += _wrapped(table["agents"], "  ", width)
            out += _text_table(table, width)
            if table["note"]:
                out += _wrapped(table["note"], "  ", width)
    prov = view["provenance"]
    if prov:
        out += ["", f"== provenance: {prov['game']}, meeplelab {prov['meeplelab']}, "
                f"seed {prov['seed']} =="]
        out += _wrapped(prov["agents"], "  ", width) + _text_table(prov, width)
    return "\n".join(out)
