"""What an experiment concluded, in words, and the shareable report.

`headline` turns pipelines' figures into the blocks a designer reads first (seat balance per
cell, each arm against the baseline, the strength ladder's stability): each item names the
arm, the players and the agent, says "decided" or "not decided yet (about half the time within
N more games)" and the level the verdict used.  The dashboard shows these blocks as they are (no sentence is
rebuilt in JavaScript), the terminal prints them (services.cli), and `render` writes them into
one self-contained HTML file (dashboards/report.py's markup) with the page's figures inline
(dashboards/experiment_figures.py), the provenance of the rows and the command that
reproduces them (`meeplelab report`, GET /api/experiments/{eid}/report.html).
"""
from __future__ import annotations

import json
from datetime import datetime, timezone

import polars as pl

import pipelines
from pipelines import ladder as ladder_stats
from pipelines.figures import MORE_GAMES, half_the_time
from pipelines.figures import _margin_text as margin_text
from dashboards import experiment_figures
from dashboards import report as report_page



# ---- words -------------------------------------------------------------------------------
def plural(n: int, word: str, words: str | None = None) -> str:
    """'1 game', '2 games', '1,000 games'."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def games_per_second(rate: float) -> str:
    """'30 games/s', '2.4 games/s', '0.42 games/s': two significant figures below 10, so a
    slow search never reads as 0."""
    digits = 0 if rate >= 10 else 1 if rate >= 1 else 2
    return f"{rate:,.{digits}f} games/s"


def short_agent(agent: str, game: str | None = None) -> str:
    """An agent string as a designer reads it: the name without its parameters
    ('mcts(iterations=400, ...)' -> 'mcts'), and with `game` the preset it is, when its
    parameters are one of the game's presets ('the strong preset (mcts)')."""
    short = agent.split("(", 1)[0].strip()
    if game is not None and short != agent.strip():
        from core_cy.catalogue import presets

        for name, preset in presets(game)["presets"].items():
            if preset["agent"] == agent:
                return f"the {name} preset ({short})"
    return short


def agents_text(agents: list[str], game: str | None = None) -> tuple[str, str]:
    """(short, full) text of a cell's seat agents: one name when every seat plays the same
    agent, else the seats' names in seat order (presets named, with `game`)."""
    if len(set(agents)) == 1:
        return short_agent(agents[0], game), agents[0]
    return " / ".join(short_agent(a, game) for a in agents), " / ".join(agents)


def status_text(decided: bool | None, sentence: str | None) -> str:
    """'decided', 'not decided yet (about 1,200 more games)', or 'estimate' (a figure with no
    question to decide, e.g. a cooperative cell's team win rate)."""
    if decided is None:
        return "estimate"
    if decided:
        return "decided"
    found = MORE_GAMES.search(sentence or "")
    if found:
        n = int(found.group(1).replace(",", ""))
        return f"not decided yet (about half the time within {plural(n, 'more game')})"
    return "not decided yet"


def _cell_agents(spec, arm: str, players: int) -> tuple[str, str]:
    cell = next((c for c in spec.cells() if c.arm == arm and c.players == players), None)
    return agents_text(spec.agent_list(players, cell), spec.game)


def question(spec) -> str:
    """The experiment's question in one sentence, from its spec."""
    import core_cy

    game = core_cy.load(spec.game)
    counts = spec.player_counts()
    who = (f"{counts[0]} players" if len(counts) == 1
           else ", ".join(map(str, counts[:-1])) + f" and {counts[-1]} players")
    arms = [a for a in spec.result_arms() if a != spec.baseline_arm()]
    agent = (short_agent(spec.agents, spec.game) if isinstance(spec.agents, str) and not spec.ladder
             else None)
    under = f" with {agent} in every seat" if agent else ""
    if game.cooperative:
        first = f"How often does a team of {who} win {game.title}{under}"
    else:
        first = f"Are the seats of {game.title} balanced with {who}{under}"
    if arms:
        named = ", ".join(arms[:3]) + (f" and {len(arms) - 3} more" if len(arms) > 3 else "")
        first += f", and what does {named} change against {spec.baseline_arm()}"
    if spec.ladder:
        names = rung_names(spec)
        first += (f", and does the answer hold from {names[spec.ladder[0]]} up to "
                  f"{names[spec.ladder[-1]]}")
    return first + "?"


# ---- the headline ------------------------------------------------------------------------
def _level_of_cells(cell: dict) -> str:
    return cell.get("p_adjust") or f"{100 * cell['interval_level']:.3g}% intervals"


def seat_block(spec, cells: list[dict]) -> dict:
    items = []
    for c in cells:
        short, full = _cell_agents(spec, c["arm"], c["players"])
        items.append({"arm": c["arm"], "players": c["players"], "agent": short,
                      "agent_full": full, "decided": c["decided"],
                      "status": status_text(c["decided"], c["verdict"]),
                      "title": f"{c['arm']}, {c['players']} players, {short}",
                      "sentences": [c["verdict"]], "level": _level_of_cells(c)})
    return {"kind": "seats", "title": "Seat balance", "items": items}


def team_block(spec, cells: list[dict]) -> dict:
    items = []
    for c in cells:
        short, full = _cell_agents(spec, c["arm"], c["players"])
        items.append({"arm": c["arm"], "players": c["players"], "agent": short,
                      "agent_full": full, "decided": None, "status": "estimate",
                      "title": f"{c['arm']}, {c['players']} players, {short}",
                      "sentences": [c["verdict"]], "level": _level_of_cells(c)})
    return {"kind": "team", "title": "Team win rate", "items": items}


def arm_block(spec, rows: list[dict]) -> dict | None:
    """One item per (arm, players) against the baseline: decided when every seat's row is."""
    if not rows:
        return None
    items = []
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["arm"], r["players"]), []).append(r)
    for (arm, players), part in groups.items():
        short, full = _cell_agents(spec, arm, players)
        decided = all(r["decided"] for r in part)
        open_rows = [r for r in part if not r["decided"]]
        status = status_text(decided, open_rows[0]["verdict"] if open_rows else None)
        if not decided:  # the most games any open seat needs
            needs = [int(m.group(1).replace(",", "")) for r in open_rows
                     if (m := MORE_GAMES.search(r["verdict"] or ""))]
            if needs:
                status = (f"not decided yet (about half the time within "
                          f"{plural(max(needs), 'more game')})")
        level = part[0]["p_adjust"] or ""
        items.append({"arm": arm, "players": players, "agent": short, "agent_full": full,
                      "baseline": part[0]["baseline"], "decided": decided, "status": status,
                      "title": f"{arm} against {part[0]['baseline']}, {players} players, {short}",
                      "sentences": [r["verdict"] for r in part], "level": level})
    return {"kind": "arms", "title": f"Each arm against the baseline ({rows[0]['baseline']})",
            "items": items}


def rung_names(spec) -> dict[str, str]:
    """Each ladder rung as a designer reads it: its short name (the preset it is), or its
    full string when two rungs would read the same ('mcts' twice)."""
    short = {r: short_agent(r, spec.game) for r in spec.ladder}
    return short if len(set(short.values())) == len(short) else {r: r for r in spec.ladder}


def ladder_sentence(v: dict, names: dict[str, str]) -> str:
    word = "stable" if v["stable"] else "not stable"
    return (f"{v['base']}, {v['players']} players: the seats' advantages are {word} between "
            f"{names[v['second']]} and {names[v['strongest']]} (the largest change "
            f"of a seat's advantage is {100 * v['change']:+.2f} points, seat {v['seat'] + 1}, "
            f"against a 95% half-width of {100 * v['half_width']:.2f} points).")


AGREEMENT_STATUS = {ladder_stats.AGREES: "the stronger rung agrees",
                    ladder_stats.STRONGER_UNDECIDED: "the stronger rung is undecided",
                    ladder_stats.REVERSES: "the stronger rung reverses the answer",
                    ladder_stats.WEAKER_UNDECIDED: "the weaker rung is undecided"}


def _seat_wins(seat: dict, fair: float, where: str = "against") -> str:
    """'80.0% [74.0%, 85.1%] against a fair 50.0%'."""
    share = interval(seat["win_share"], seat["win_lo"], seat["win_hi"])
    return f"{share} {where} a fair {pct(fair)}"


def agreement_sentence(a: dict, names: dict[str, str], look) -> str:
    """Whether the stronger rung agrees with the weaker, with both rungs' figures."""
    weak, strong, how = a["weaker_cell"], a["stronger_cell"], a["agreement"]
    seat, up = a["weaker_seat"], a["stronger_seat"]
    k = None if seat is None else seat["seat"] + 1
    w, s = f"under {names[a['weaker']]}", f"under {names[a['stronger']]}"
    balanced = f"the seats are balanced within {margin_text(look.delta)}"
    if how == ladder_stats.WEAKER_UNDECIDED:
        said = (f"{w} the answer is not decided yet, so there is nothing for "
                f"{names[a['stronger']]} to confirm")
    else:
        said = (f"{w} {balanced}" if seat is None else f"{w} seat {k} is "
                f"favoured, winning {_seat_wins(seat, weak['fair_share'])}")
        fair = strong["fair_share"]
        if how == ladder_stats.STRONGER_UNDECIDED:
            said += f"; {s} not decided yet" + ("" if up is None else
                                                 f" (seat {k} wins {_seat_wins(up, fair)})")
        elif strong["seat_answer"] == "balanced":
            said += f"; {s} too" if how == ladder_stats.AGREES else f"; {s} {balanced}"
        elif how == ladder_stats.AGREES:
            said += f"; {s} seat {k} wins {_seat_wins(up, fair)}"
        elif up is not None and up["win_hi"] < fair:
            said += f"; {s} seat {k} wins {_seat_wins(up, fair, 'below')}"
        else:
            said += (f"; {s} the seats are unbalanced, seat {strong['best_seat'] + 1} favoured"
                     + ("" if up is None else f" (seat {k} wins {_seat_wins(up, fair)})"))
    return f"{a['base']}, {a['players']} players: {AGREEMENT_STATUS[how]}: {said}."


def ladder_block(spec, root: str, tables: dict, look) -> dict | None:
    """One item per rung and the next stronger one (per base arm and player count): whether
    the stronger rung agrees (pipelines.ladder.rung_agreement), with, for the two strongest,
    whether the seats' advantages are stable between them (ladder_verdicts; alone when the
    cells have no seat answer)."""
    if not spec.ladder:
        return None
    names = rung_names(spec)
    stable = {(v["base"], v["players"], v["second"], v["strongest"]): v for v in
              ladder_stats.ladder_verdicts(root, spec.ladder).iter_rows(named=True)}
    def item(base, players, weaker, stronger, **fields) -> dict:
        return {"arm": base, "players": players, "agent": names[stronger],
                "agent_full": f"{weaker} -> {stronger}",
                "title": f"{base}, {players} players, {names[weaker]} -> {names[stronger]}",
                **fields}

    items = []
    for a in ladder_stats.rung_agreement(tables["cells"], tables["summary"], spec.ladder):
        v = stable.pop((a["base"], a["players"], a["weaker"], a["stronger"]), None)
        how = a["agreement"]
        items.append(item(a["base"], a["players"], a["weaker"], a["stronger"], agreement=how,
                          decided=how in (ladder_stats.AGREES, ladder_stats.REVERSES),
                          status=AGREEMENT_STATUS[how],
                          sentences=[agreement_sentence(a, names, look)]
                          + ([ladder_sentence(v, names)] if v else []),
                          level=_level_of_cells(a["stronger_cell"])))
    items += [item(v["base"], v["players"], v["second"], v["strongest"], decided=True,
                   status="stable" if v["stable"] else "not stable",
                   sentences=[ladder_sentence(v, names)], level="95% interval of each change")
              for v in stable.values()]  # a cooperative game's: no seat answer to agree on
    return {"kind": "ladder", "title": "Strength ladder", "items": items}


def figures(spec, root: str, look: pipelines.Look) -> dict:
    """The tables the headline and the report read (JSON-able rows)."""
    order = {arm: i for i, arm in enumerate(spec.result_arms())}

    def in_spec_order(frame) -> list[dict]:  # pipelines sort arms by name; a designer wrote them
        return sorted(frame.to_dicts(), key=lambda r: (order.get(r["arm"], len(order)),
                                                       r["players"]))

    cells = pipelines.cell_summary(root, look=look)
    out = {"cells": in_spec_order(cells),
           "summary": in_spec_order(pipelines.summary(root, look=look)), "compare": []}
    if len(spec.result_arms()) > 1 and spec.baseline_arm() in {c["arm"] for c in out["cells"]}:
        out["compare"] = in_spec_order(pipelines.compare(root, spec.baseline_arm(), look=look))
    return out


# ---- the answer: one or two sentences per item, and their short form ----------------------
def signed_points(v) -> str:
    """A change of a share in points, signed: '+7.5'."""
    return "–" if v is None else f"{100 * v:+.1f}"


def _points(d: float, lo: float, hi: float) -> str:
    return f"{signed_points(d)} points [{signed_points(lo)}, {signed_points(hi)}]"


def _more(item: dict) -> str:
    found = MORE_GAMES.search(item["status"])
    if not found:
        return "more games would decide"
    return half_the_time(int(found.group(1).replace(',', '')))


def _seated(agent: str) -> str:
    """'greedy in every seat', or 'greedy / random / random' (the seats' agents in order)."""
    return agent if " / " in agent else f"{agent} in every seat"


def _gap(cell: dict) -> str:
    """'the best seat (2) wins +8.0 points [+1.2, +14.8] more than the worst (3)'."""
    if cell.get("seat_gap") is None:
        return ""
    return (f"; the best seat ({cell['best_seat'] + 1}) wins "
            f"{_points(cell['seat_gap'], cell['seat_gap_lo'], cell['seat_gap_hi'])} more "
            f"than the worst ({cell['worst_seat'] + 1}) in the same games")


def _seat_answer(item: dict, seats: list[dict], look) -> tuple[str, str]:
    who = f"{item['arm']}, {item['players']} players, {_seated(item['agent'])}"
    if not seats:
        return f"{who}: no game finished by the rules yet.", item["status"]
    top = max(seats, key=lambda r: r["win_share"])
    fair = pct(seats[0]["fair_share"])  # the verdicts' and the chart's fair line
    gap = _gap(seats[0])
    best = (f"seat {top['seat'] + 1} wins "
            f"{interval(top['win_share'], top['win_lo'], top['win_hi'])}")
    if item["decided"] and "unbalanced" in (item["sentences"][0] or ""):
        return (f"{who}: the seats are unbalanced, {best} against a fair {fair}{gap}.",
                f"seat {top['seat'] + 1} favoured: {pct(top['win_share'])} against {fair}")
    margin = margin_text(look.delta)
    if item["decided"]:
        return (f"{who}: balanced, every seat wins within {margin} of a fair {fair} (the "
                f"most: {best}){gap}.", f"balanced within {margin}")
    return (f"{who}: not decided yet at {margin}, {best} against a fair {fair}{gap}; "
            f"{_more(item)}.", item["status"])


def _team_answer(item: dict, cell: dict) -> tuple[str, str]:
    rate = interval(cell["team_win_rate"], cell["team_win_lo"], cell["team_win_hi"])
    return (f"With {_seated(item['agent'])}, a team of {item['players']} wins "
            f"{item['arm']} {rate} of its {plural(cell['games'], 'game')}."), f"team wins {rate}"


def _team_arm_answer(item: dict, row: dict, cells: dict, look) -> tuple[str, str]:
    arm, base, players = item["arm"], item["baseline"], item["players"]
    a, b = cells.get((arm, players)), cells.get((base, players))
    rates = "" if a is None or b is None else (
        f"the team wins {interval(a['team_win_rate'], a['team_win_lo'], a['team_win_hi'])} "
        f"against {interval(b['team_win_rate'], b['team_win_lo'], b['team_win_hi'])}, ")
    d, lo, hi = row["win_share_diff"], row["win_diff_lo"], row["win_diff_hi"]
    change = f"{rates}{_points(d, lo, hi)} on the same deals"
    who = f"for a team of {players} under {item['agent']}"
    short_rates = ("" if a is None or b is None else
                   f"{pct(a['team_win_rate'])} against {pct(b['team_win_rate'])}, ")
    if row["win_significant"]:
        word = "harder" if d < 0 else "easier"
        return (f"{arm.capitalize()} is {word} than {base} {who}: {change}.",
                f"{word}: {short_rates}{100 * d:+.1f} points")
    if item["decided"]:
        return (f"{arm.capitalize()} is as hard as {base} within {margin_text(look.delta)} "
                f"{who}: {change}.", f"as hard within {margin_text(look.delta)}")
    return (f"Not decided yet whether {arm} is harder than {base} {who}: {change} so far; "
            f"{_more(item)}.", item["status"])


def _seat_arm_answer(item: dict, rows: list[dict], look) -> tuple[str, str]:
    arm, base = item["arm"], item["baseline"]
    who = f"{arm} against {base}, {item['players']} players, {_seated(item['agent'])}"
    real = [r for r in rows if r["win_significant"]]
    big = max(real or rows, key=lambda r: abs(r["win_share_diff"]))
    change = (f"seat {big['seat'] + 1}'s win share by "
              + _points(big["win_share_diff"], big["win_diff_lo"], big["win_diff_hi"]))
    if real:
        others = f"; {plural(len(real) - 1, 'other seat')} change too" if len(real) > 1 else ""
        return (f"{who}: {arm} changes {change}{others}.",
                f"seat {big['seat'] + 1} {100 * big['win_share_diff']:+.1f} points")
    if item["decided"]:
        return (f"{who}: {arm} changes no seat's win share by {margin_text(look.delta)} or "
                f"more (the largest change is {change}).",
                f"no seat changes by {margin_text(look.delta)}")
    return (f"{who}: not decided yet, the largest change so far is {change}; {_more(item)}.",
            item["status"])


def _identical_answer(item: dict, rows: list[dict]) -> tuple[str, str] | None:
    """When every paired game of the arm is the baseline's own game: that, and nothing else."""
    if not rows or not all(r["pairs"] and r["identical"] == r["pairs"] for r in rows):
        return None
    who = (f"{item['arm']} against {item['baseline']}, {item['players']} players, "
           f"{_seated(item['agent'])}")
    return (f"{who}: the two arms played identical games in {rows[0]['pairs']:,} deals: this "
            "option never changed a decision.", "identical games: never changed a decision")


def add_answers(blocks: list[dict], tables: dict, look) -> None:
    """Gives every headline item its `answer` (one or two sentences naming the arm, the
    players and the agent, with the figures and their intervals) and `short` (the answer's
    short form, for a list)."""
    cells = {(c["arm"], c["players"]): c for c in tables["cells"]}
    for block in blocks:
        for item in block["items"]:
            key = (item["arm"], item["players"])
            if block["kind"] == "seats":
                seats = [r for r in tables["summary"]
                         if (r["arm"], r["players"]) == key]
                item["answer"], item["short"] = _seat_answer(item, seats, look)
            elif block["kind"] == "team":
                item["answer"], item["short"] = _team_answer(item, cells[key])
            elif block["kind"] == "arms":
                rows = [r for r in tables["compare"] if (r["arm"], r["players"]) == key]
                item["answer"], item["short"] = _identical_answer(item, rows) or (
                    _team_arm_answer(item, rows[0], cells, look) if rows[0]["seat"] is None
                    else _seat_arm_answer(item, rows, look))
            else:
                item["answer"], item["short"] = item["sentences"][0], item["status"]


def answer_lines(head: dict) -> list[str]:
    """What the terminal prints when an experiment ends: each item's answer, the comparisons
    first; a cooperative game's team rates only when no comparison states them."""
    kinds = [b["kind"] for b in head["blocks"]]
    order = ["arms", "seats", "ladder"] + ([] if "arms" in kinds else ["team"])
    return [i["answer"] for kind in order for b in head["blocks"] if b["kind"] == kind
            for i in b["items"]]


def headline(spec, root: str, look: pipelines.Look, tables: dict | None = None) -> dict:
    """The question and the blocks that answer it (see the module doc)."""
    tables = tables or figures(spec, root, look)
    cells = tables["cells"]
    cooperative = bool(cells) and cells[0]["cooperative"]
    blocks = [team_block(spec, cells) if cooperative else seat_block(spec, cells),
              arm_block(spec, tables["compare"]), ladder_block(spec, root, tables, look)]
    blocks = [b for b in blocks if b]
    add_answers(blocks, tables, look)
    questions = [i for b in blocks for i in b["items"] if i["decided"] is not None]
    return {"question": question(spec), "interim": look.interim,
            "decided": bool(questions) and all(i["decided"] for i in questions),
            "blocks": blocks}


def headline_verdict(block_list: list[dict]) -> str:
    """One short line for a list of experiments: the short answer of the comparison with the
    baseline when there is one (the question of a multi-arm experiment), else of the first
    cell; an open item first, since "decided" is only true of the whole when every item is."""
    for kind in ("arms", "seats", "team"):
        items = [i for b in block_list if b["kind"] == kind for i in b["items"]]
        if items:
            item = next((i for i in items if i["decided"] is False), items[0])
            more = f" (and {len(items) - 1} more)" if len(items) > 1 else ""
            return f"{item['title']}: {item['short']}{more}"
    return ""


# ---- the report --------------------------------------------------------------------------
def pct(v) -> str:
    return "–" if v is None else f"{100 * v:.1f}%"


def interval(v, lo, hi, f=pct) -> str:
    return f"{f(v)} [{f(lo)}, {f(hi)}]"


def figure_tables(spec, root: str, look: pipelines.Look, tables: dict | None = None) -> dict:
    """What the experiment's figures are drawn from (dashboards.experiment_figures): the
    tables of `figures`, the histograms, the team win rate per role of a cooperative game
    and the strength ladder's seats."""
    import core_cy
    from services import datasets

    tables = tables or figures(spec, root, look)
    cooperative = bool(tables["cells"]) and tables["cells"][0]["cooperative"]
    game = core_cy.load(spec.game)
    roles = [n for n in game.outcome_labels if n in game.seat_outcome_names] \
        if cooperative else []
    return {**tables, "arms": spec.result_arms(),
            "histograms": datasets.histograms(root, experiment_figures.BINS,
                                              experiment_figures.CLIP),
            "breakdowns": {label: pipelines.breakdown(root, f"seat_{label}", look=look)
                           .to_dicts() for label in roles},
            "ladder": _in_arm_order(spec, ladder_stats.ladder_summary(root, spec.ladder)
                                    .to_dicts()) if spec.ladder else None}


def _in_arm_order(spec, rows: list[dict]) -> list[dict]:
    """The ladder's rows with its base arms in the spec's order (pipelines sort by name)."""
    order = {arm: i for i, arm in enumerate(spec.arms or {})}
    return sorted(rows, key=lambda r: (order.get(r["base"], len(order)), r["players"],
                                       r["level"], r["seat"]))


def experiment_figure_list(spec, root: str, look: pipelines.Look,
                           tables: dict | None = None) -> list[dict]:
    """Every figure of the experiment, drawn (dashboards.experiment_figures): the page's,
    the report's and `meeplelab report --svg`'s."""
    return experiment_figures.experiment_figures(figure_tables(spec, root, look, tables))


def provenance(spec, root: str) -> dict:
    """Where the rows come from: game, engine version(s), rules fingerprint per arm, agents,
    seeds and the meeplelab version, read from the rows themselves."""
    from core_cy.engine.game import PACKAGE_VERSION

    rows = pipelines.scan(root)
    per_arm = (rows.group_by("arm", "players")
               .agg(pl.col("engine_version").unique().sort(),
                    pl.col("rules_fingerprint").unique().sort(),
                    pl.col("seat_agent").list.join(" / ").unique().sort(),
                    seeds=pl.col("seed").n_unique(), games=pl.len())
               .sort("arm", "players").collect())
    return {"game": spec.game, "meeplelab": PACKAGE_VERSION, "seed": spec.seed,
            "cells": per_arm.to_dicts()}


def _made() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def render(spec, root: str, look: pipelines.Look, title: str | None = None,
           command: str = "meeplelab run spec.json", drawn: list[dict] | None = None,
           status: str | None = None, games: int | None = None,
           error: str | None = None, replay: str = "`meeplelab replay`") -> str:
    """The whole report: the results view (services.view) in one HTML document with its
    stylesheet and figures inline (`drawn`: already drawn by experiment_figure_list);
    status/games/error: the registry's record of a service's run; the shards that do not
    verify against the manifest are named, with how to `replay` them."""
    from services import view as results_view

    model = results_view.build(spec, root, look, status=status, games=games, error=error,
                               drawn=drawn is None)
    if drawn is not None:
        for section in model["sections"]:
            section["figures"] = [f for f in drawn if f["section"] == "players"
                                  and f["players"] == section["players"]]
        if model["ladder"]:
            model["ladder"]["figures"] = [f for f in drawn if f["section"] == "ladder"]
    from services import datasets

    found = datasets.integrity(root, rows=False)
    spec_json = json.dumps(spec.model_dump(mode="json", exclude_unset=True), indent=2)
    return report_page.experiment_report(
        model, title or spec.name, _made(), command, spec_json,
        None if found is None else datasets.damage_notice(found, replay))


def balance_answers(result: dict) -> str:
    """A finished balance search's answers as HTML (dashboards/report.balance_results): per
    answer its recommendation, sentence, confirmations, sensitivity chart (the page's SVG,
    dashboards/balance_chart.py) and waves; per player count asked per strength, whether the
    fair value moves with strength.  The page shows it, the report holds it."""
    from dashboards.balance_chart import chart_svg

    fair_value = result["kind"] == "fair_value"
    cells = [{"players": cell["players"], "agent": cell.get("agent"), "rung": cell.get("rung")
              if len(result.get("strength", [])) else None,
              "recommendation": (cell.get("recommendation") or {}).get("sentence"),
              "sentence": cell["sentence"],
              "confirmations": [c["sentence"] for c in cell.get("confirmations", [])],
              "chart": chart_svg(cell, result["option"]) if fair_value else None,
              "waves": (["wave", "values", "games per value"],
                        [[k + 1, ", ".join(f"{v:g}" for v in w["values"]),
                          f"{w['games_per_value']:,}"]
                         for k, w in enumerate(cell.get("waves", []))]) if fair_value else None,
              "games": cell["games"]} for cell in result["cells"]]
    return report_page.balance_results(cells, result.get("strength", []))


def render_balance(record: dict) -> str:
    """The shareable report of a finished balance search (a registry record of kind
    'balance'): one HTML document, styles and charts inline, with its answers
    (balance_answers) and the spec that reproduces it."""
    from core_cy.engine.game import PACKAGE_VERSION

    spec = record["spec"]
    return report_page.balance_report(
        record["name"], record["game"], _made(), balance_answers(record["result"]),
        PACKAGE_VERSION, spec.get("seed", 0), json.dumps(spec, indent=2, ensure_ascii=False))


class VerdictLog:
    """The verdicts of a running experiment as they are decided: `new_lines()` gives one line
    per headline item decided since the last call (interim figures, valid at any look), for a
    terminal to print."""

    def __init__(self, spec, root: str):
        self.spec, self.root, self.seen = spec, root, set()
        self.most_more_games = 0  # the most games an open item said it needs, at the last look

    def look(self, interim: bool = True) -> pipelines.Look:
        return self.spec.look(interim=interim)

    def answer_lines(self) -> list[str]:
        """The answer of the finished experiment (answer_lines), at the fixed-n level."""
        return answer_lines(headline(self.spec, self.root, self.look(interim=False)))

    def new_lines(self, interim: bool = True) -> list[str]:
        head = headline(self.spec, self.root, self.look(interim))
        needs = [int(m.group(1).replace(",", "")) for b in head["blocks"] for i in b["items"]
                 if i["decided"] is False and (m := MORE_GAMES.search(i["status"]))]
        self.most_more_games = max(needs, default=0)
        lines = []
        for block in head["blocks"]:
            for item in block["items"]:
                key = (block["kind"], item["arm"], item["players"])
                if item["decided"] and key not in self.seen:
                    self.seen.add(key)
                    lines.append(f"decided: {item['title']}: " + " ".join(
                        s for s in item["sentences"] if s))
        return lines
