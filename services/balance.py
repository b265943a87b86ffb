"""What to change: the fair value of a rule option, and the value of an action kind.

    meeplelab balance SPEC          # a spec with a `balance` section (services/spec.py Balance)

- run_fair_value: plays the option's values on common deals (every value of a wave plays the
  same deals: game i of seed s), in waves chosen by pipelines.fair_value.search, until the
  interval on the fair value is as narrow as asked; then confirms the nearest integers on
  fresh deals (the spec's seed + 1) with a verdict at +-delta.
- run_forbid_value: the same deals with the seat's agent as given and restricted
  (agent(forbid=kind)): the paired difference in win share and score of every seat.
Both play every game as shard tasks of the one runner (services.runner.Player): the values of
a wave (and the two arms of restricted play, the confirmations) in parallel over the cluster's
CPUs, into the job's own results folder, so the games are kept, verifiable and downloadable
like an experiment's, and a job whose process died resumes from the shards it wrote with the
same answer; the answer is the same for a spec and seed on any cluster.  The service runs them
as jobs of its one queue (services.worker), under a CPU budget, ended at once by a cancel.
Progress goes through the Player (`expect`: the games still expected, where the job stands).
The statistics are pipelines.fair_value's (this
module only plays and words).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

import core_cy
from core_cy.agents import canonical_agent
from pipelines import fair_value as fv
from pipelines import stats as st
from pipelines.figures import half_the_time

if TYPE_CHECKING:  # the runner imports Ray: only a job that plays needs it (services.app does not)
    from services.runner import Part, Player

CONFIRM_SEED_OFFSET = 1   # the confirmation's fresh deals: the spec's seed + 1
CURVE_POINTS = 41


def _figure(spec, players: int, shares: np.ndarray) -> np.ndarray:
    b = spec.balance
    if b.target == "equal":
        return fv.seat_figure(shares, b.seat_of(players))
    return shares[:, b.seat_of(players)]


def _part(spec, arm: str, players: int, rules: dict, agents: list[str], seed: int,
          start: int, count: int) -> Part:
    """Units start..start+count-1 (a game, or with pairing 'rotations' a deal: `players`
    games) of the cell with `rules` and the seat `agents`, as a Part of the job's results
    folder (arm `arm`), played as the runner plays a cell (spec.play_arguments)."""
    from services.runner import Part
    from services.spec import Cell

    cell = Cell(arm, rules, players)
    how = spec.play_arguments(cell, agents)
    per = how["games_per_deal"]
    return Part(cell, how, seed, start * per, count * per)


def _units(player: Player, spec, part: Part) -> dict:
    """The part's games (written by `player`) made units as the runner's statistics make them
    (pipelines.units): seat_win_share and seat_score (units, seats), a unit per row in order,
    a row of NaN for a unit left out (a game ended at a simulator safety; a deal missing
    one), so that the values of a search stay paired by deal; seat_forced (games, seats) of
    every game with restricted play; games and truncated, the games played and those left
    out."""
    import polars as pl

    import pipelines

    game = core_cy.load(spec.game)
    players, per = part.cell.players, part.play["games_per_deal"]
    start, count = part.start // per, part.count // per
    rows = pl.from_arrow(player.rows(part))
    kept = pipelines.units(rows, game.safety_end_reasons)
    at = kept["game_index"].to_numpy() - start
    out = {"games": len(rows), "truncated": int(rows["end_reason"].is_in(
        list(game.safety_end_reasons)).sum())}
    for column in ("seat_win_share", "seat_score"):
        values = np.full((count, players), np.nan)
        values[at] = np.array(kept[column].to_list(), dtype=np.float64).reshape(-1, players)
        out[column] = values
    if "seat_forced" in rows.columns:
        out["seat_forced"] = np.array(rows["seat_forced"].to_list()).reshape(-1, players)
    return out


def _play(player: Player, spec, parts: list[Part]) -> list[dict]:
    """Plays `parts` together (as shard tasks spread over the cluster) and reads them back
    as units (_units), in order."""
    player.play(parts)
    return [_units(player, spec, part) for part in parts]


def _value_arm(option: str, value, fresh: bool = False) -> str:
    """The results folder's arm of one value searched (`fresh`: its confirmation's deals)."""
    text = f"{option}={int(value) if float(value).is_integer() else value}"
    return text + (",confirmation" if fresh else "")


def budget_games(spec) -> int:
    """The most games a spec's balance question may play: the search's max_games and the
    confirmation of (at most) two nearest integers per player count, or the two arms of a
    forbid question."""
    b = spec.balance
    per_count = (b.max_games + 2 * b.confirm_games) if b.option is not None \
        else 2 * b.confirm_games
    return per_count * len(spec.player_counts())


def _search_left(waves: list, spec, players: int, used: int) -> int | None:
    """About how many more games the search of one player count needs
    (pipelines.fair_value.games_to_precision), within max_games; None while the figure is not
    shown to depend on the option (not yet known)."""
    b = spec.balance
    if not waves:
        return None
    c = fv.fit(waves)
    ans = fv.answer(c, b.range[0], b.range[1], _target(spec, players), integer=True)
    more = fv.games_to_precision(ans, c, b.precision)
    return None if more is None else int(min(b.max_games - used, more))


def _target(spec, players: int) -> float:
    """The figure's fair value: 1/k for equal seats (pipelines.fair_value.seat_figure), or
    the target rate."""
    if spec.balance.target == "equal":
        return fv.fair_share(players)
    return float(spec.balance.target)


def _points(spec, players: int):
    """The figure as the verdict judges it: equal seats, the seat's win share less the
    others' mean (0 when fair); a rate, the rate."""
    if spec.balance.target == "equal":
        return lambda y: fv.figure_points(y, players)
    return lambda y: np.asarray(y, dtype=np.float64)


def confirm_games(spec, players: int, value: int, c: fv.Curve) -> tuple[int, float]:
    """(games to play, games needed): the fresh games after which the confirmation of
    `value` should decide at +-delta (its interval excluding the target, or within +-delta of
    it) were the figure what the search saw there, with half as many again for the
    search's own error, at most confirm_games (the spec's cap)."""
    b = spec.balance
    mean, sd = fv.at_value(c, value)
    conv = _points(spec, players)
    centre = 0.0 if b.target == "equal" else float(b.target)
    est = float(conv(mean)) - centre
    spread = float(conv(mean + sd) - conv(mean))
    needed = float(st.games_to_decide(est, max(spread, 1e-9), 0, b.delta))
    plan = b.confirm_games if not math.isfinite(needed) else min(
        b.confirm_games, max(int(math.ceil(1.5 * needed)), 100))
    return plan, needed


def confirm(player: Player, spec, players: int, values: list[int],
            c: fv.Curve | None = None, ans: fv.Answer | None = None) -> list[dict]:
    """Each value on fresh deals (the spec's seed + 1), played together: the seat's figure
    with its interval and a verdict at +-delta, on as many games as should decide it
    (confirm_games), saying so when that cap is too small, and saying both when it disagrees
    with the search's interval."""
    seed = spec.seed + CONFIRM_SEED_OFFSET
    plans = [confirm_games(spec, players, v, c) if c is not None
             else (spec.balance.confirm_games, math.nan) for v in values]
    parts = [_part(spec, _value_arm(spec.balance.option, v, fresh=True), players,
                   spec.searched_rules(players, v), spec.agent_list(players), seed, 0, plan)
             for v, (plan, _) in zip(values, plans)]
    return [_confirmation(spec, players, v, out, needed, seed, ans)
            for v, out, (_, needed) in zip(values, _play(player, spec, parts), plans)]


def _confirmation(spec, players: int, value: int, out: dict, needed: float, seed: int,
                  ans: fv.Answer | None) -> dict:
    """One value's confirmation (confirm) from its fresh games `out` (_units)."""
    b = spec.balance
    seat = b.seat_of(players)
    shares = out["seat_win_share"]
    shares = shares[~np.isnan(shares).any(axis=1)]  # units that finished by the rules
    n = len(shares)
    if b.target == "equal":   # the seat's share less the others' mean: 0 when fair
        diff = fv.figure_points(fv.seat_figure(shares, seat), players)
        mean, sd = float(diff.mean()), float(diff.std(ddof=1))
        low, high = (float(v) for v in st.mean_interval(mean, sd, n))
        what, centre = "its win share less the others' mean", 0.0
    else:
        rate = shares[:, seat]
        mean, sd = float(rate.mean()), float(rate.std(ddof=1))
        low, high = (float(v) for v in st.rate_interval(mean, rate.var(), n))
        what, centre = "its win rate", float(b.target)
    if centre - b.delta <= low and high <= centre + b.delta:
        verdict = "fair"
    elif high < centre or low > centre:
        verdict = "unfair"
    else:
        verdict = "not decided"
    who = "the team" if core_cy.load(spec.game).cooperative else f"seat {seat + 1}"
    sentence = (f"{b.option} = {value}, {players} players, {spec.agent_list(players)[seat]}: "
                f"{who}: {what} is {100 * mean:+.1f} points [{100 * low:+.1f}, "
                f"{100 * high:+.1f}] over {n:,} fresh games (seed {seed})" if b.target == "equal"
                else f"{b.option} = {value}, {players} players: {who} wins "
                f"{100 * mean:.1f}% [{100 * low:.1f}, {100 * high:.1f}] over {n:,} fresh games "
                f"(seed {seed})")
    more = float(st.games_to_decide(mean - centre, max(sd, 1e-9), n, b.delta))
    if verdict == "fair":
        sentence += f": fair within +-{100 * b.delta:g} points"
    elif verdict == "unfair":
        sentence += ": not fair"
    elif math.isfinite(more):
        sentence += (f": not decided at +-{100 * b.delta:g} points; "
                     + half_the_time(more - n).replace(" more game", " more fresh game"))
    else:
        sentence += (f": not decided at +-{100 * b.delta:g} points, and it sits at the margin: "
                     "no number of games would decide it")
    if verdict == "not decided" and math.isfinite(needed) and n < needed:
        sentence += (f" (the search's estimate there needed about {needed:,.0f} games to decide; "
                     f"confirm_games caps it at {b.confirm_games:,})")
    if ans is not None and verdict == "unfair" and any(a <= value <= b_ for a, b_ in ans.pieces):
        sentence += (f"; yet the search's interval still allows {value} as the fair value: the "
                     "fresh deals and the search disagree, and more games on both would tell "
                     "which is wrong")
    return {"value": value, "games": n, "seed": seed, "mean": mean, "low": low, "high": high,
            "verdict": verdict, "sentence": sentence, "games_needed": _finite(needed)}


def _finite(v: float):
    return float(v) if math.isfinite(v) else None


def curve(c: fv.Curve, ans: fv.Answer, delta: float, conv, figure: str) -> dict:
    """The sensitivity chart's data: the observed curve (the means joined by lines) and its
    pointwise band over the range, the observed points, the window of values whose band lies
    within +-delta of the target; conv maps the figure to the verdict's scale."""
    xs = np.linspace(ans.lo, ans.hi, CURVE_POINTS)
    mid, low, high = c.band(xs)
    tgt = float(conv(ans.target))
    low, high = conv(low).tolist(), conv(high).tolist()
    inside = [float(x) for x, lo_, hi_ in zip(xs, low, high)
              if tgt - delta <= lo_ and hi_ <= tgt + delta]
    return {"x": xs.tolist(), "curve": conv(mid).tolist(), "low": low, "high": high,
            "points": {"x": c.values.tolist(), "y": conv(c.means).tolist(),
                       "games": c.counts.tolist()},
            "target": tgt, "delta": delta,
            "window": [min(inside), max(inside)] if inside else None, "figure": figure}


def run_fair_value(spec, player: Player) -> dict:
    """The fair-value search of every player count (spec.balance.option); see the module."""
    b = spec.balance
    game = core_cy.load(spec.game)
    cells = []
    counts = spec.player_counts()
    for players in counts:
        later = len(counts) - 1 - counts.index(players)  # player counts still to search
        agents = spec.agent_list(players)
        seat = b.seat_of(players)
        per = spec.games_per_deal(players)
        confirming = 2 * b.confirm_games * per  # the confirmation's games, at most

        seen: list = []  # the waves so far, for the progress's estimate of what is left

        def play(values, start, count, players=players, agents=agents, seen=seen,
                 later=later, per=per, confirming=confirming):
            used = sum(y.size for _, y in seen)
            left = _search_left(seen, spec, players, used)
            here = None if left is None else max(left, len(values) * count) * per + confirming
            # each player count still to search: about as many games as this one
            player.expect(None if here is None else here + later * (used * per + here),
                          f"{players} players: searching {b.option}, wave {len(seen) + 1} "
                          f"({len(values)} values x {count:,} games), {used:,} games so far")
            parts = [_part(spec, _value_arm(b.option, v), players,
                           spec.searched_rules(players, v), agents, spec.seed, start, count)
                     for v in values]
            cols = [_figure(spec, players, out["seat_win_share"])
                    for out in _play(player, spec, parts)]
            seen.append((np.asarray(values, dtype=np.float64), np.column_stack(cols)))
            return seen[-1][1]

        started = player.cpu_seconds
        ans, c, waves = fv.search(play, b.range[0], b.range[1], _target(spec, players),
                                  b.precision, b.wave_games, b.max_games, integer=True)
        who = "the team" if game.cooperative else f"seat {seat + 1} of {players}"
        aim = "to be fair" if b.target == "equal" else f"to win {100 * b.target:g}%"
        text = _answer_sentence(ans, b, who, agents[seat], aim)
        more = fv.games_to_precision(ans, c, b.precision)
        if ans.status in ("found", "edge", "unresolved") and more != 0:
            text += (f"; not decided to +-{b.precision:g}: " + (
                half_the_time(more, would="narrow it that far") if more is not None
                else "the figure is not shown to depend on the option, so no number of "
                "games can be named"))
        confirmations = []
        if b.confirm_games and ans.nearest:
            mine = sum(w[1].size for w in waves) * per
            player.expect(len(ans.nearest) * b.confirm_games * per + later * mine,
                          f"{players} players: confirming {b.option} = "
                          + " and ".join(map(str, ans.nearest)) + " on fresh deals")
            confirmations = confirm(player, spec, players, list(ans.nearest), c, ans)
        cells.append({"players": players, "seat": seat, "agent": agents[seat],
                      "answer": ans.as_dict(), "sentence": text,
                      "games": int(sum(w[1].size for w in waves)),
                      "waves": [{"values": w[0].tolist(), "games_per_value": int(w[1].shape[0])}
                                for w in waves],
                      "cpu_seconds": player.cpu_seconds - started,
                      "chart": curve(c, ans, b.delta, _points(spec, players),
                                     "seat share less the others' mean"
                                     if b.target == "equal" else "win rate"),
                      "confirmations": confirmations})
    return {"kind": "fair_value", "game": spec.game, "option": b.option, "cells": cells}


def _unit(option: str) -> str:
    """The option's unit in words (seat_bonus_gold -> gold)."""
    return option.rsplit("_", 1)[-1] if option.startswith("seat_bonus_") else "(option units)"


def _answer_sentence(ans: fv.Answer, b, who: str, agent: str, aim: str) -> str:
    def v(x):
        return f"{x:.2f}" if math.isfinite(x) else ("-inf" if x < 0 else "+inf")
    if ans.status == "found":
        text = (f"{who} under {agent} needs {b.option} = {ans.estimate:.2f} [{v(ans.low)}, "
                f"{v(ans.high)}] {_unit(b.option)} {aim} (95% interval on the value, searched "
                f"{b.range[0]}..{b.range[1]})")
        if len(ans.pieces) > 1:
            text += "; the values still possible: " + " and ".join(
                f"{a:.2f}..{b_:.2f}" for a, b_ in ans.pieces)
        if ans.nearest:
            text += f"; the nearest integers: {ans.nearest}"
        warn = fv.shape_text(ans)
        return text + (f"; {warn}" if warn else "")
    goal = "the seat fair" if b.target == "equal" else f"the seat win {100 * b.target:g}%"
    return f"{who} under {agent}: " + fv.sentence(ans, b.option, _unit(b.option), goal)


def with_forbid(game, agent: str, kinds: str) -> str:
    """`agent` restricted from `kinds` (an agent string; ValueError if it cannot be)."""
    spelled = canonical_agent(game, agent)
    text = (f"{spelled[:-1]}, forbid={kinds})" if spelled.endswith(")")
            else f"{spelled}(forbid={kinds})")
    return canonical_agent(game, text)


def run_forbid_value(spec, player: Player) -> dict:
    """The value of action kinds (spec.balance.forbid) to a seat, per player count: the same
    deals with the seat's agent as given and restricted, paired by game (played together)."""
    b = spec.balance
    game = core_cy.load(spec.game)
    rules = next(iter(spec.arm_rules().values()))
    cells = []
    counts = spec.player_counts()
    for players in counts:
        seat = b.seat_of(players)
        agents = spec.agent_list(players)
        restricted = list(agents)
        restricted[seat] = with_forbid(game, agents[seat], b.forbid)
        per = spec.games_per_deal(players)
        player.expect(2 * b.confirm_games * per * (len(counts) - counts.index(players)),
                      f"{players} players: {b.forbid} allowed and forbidden, "
                      f"{b.confirm_games:,} paired games")
        free, kept = _play(player, spec, [
            _part(spec, "as given", players, rules, agents, spec.seed, 0, b.confirm_games),
            _part(spec, f"forbid={b.forbid}", players, rules, restricted, spec.seed, 0,
                  b.confirm_games)])
        seats = []
        for k in range(1 if game.cooperative else players):
            row = {"seat": k}
            for what, column in (("win_share", "seat_win_share"), ("score", "seat_score")):
                # the kind's value: what the seat has with it less what it has without
                row[what] = fv.paired_difference(free[column][:, k] - kept[column][:, k])
            seats.append(row)
        forced = kept["seat_forced"][:, seat]
        mine = seats[0 if game.cooperative else seat]["win_share"]
        who = "the team" if game.cooperative else f"seat {seat + 1} of {players}"
        text = (f"using {b.forbid} is worth {100 * mine['mean']:+.1f} points of win share "
                f"[{100 * mine['low']:+.1f}, {100 * mine['high']:+.1f}] to {who} under "
                f"{agents[seat]} ({b.confirm_games:,} paired games, seed {spec.seed}; "
                f"{int((forced > 0).sum()):,} restricted games had a decision with nothing "
                f"else legal, {int(forced.sum()):,} such decisions in all)")
        cells.append({"players": players, "seat": seat, "agent": agents[seat],
                      "restricted_agent": restricted[seat], "games": 2 * b.confirm_games,
                      "seats": seats, "forced_decisions": int(forced.sum()),
                      "forced_games": int((forced > 0).sum()), "sentence": text})
    return {"kind": "forbid_value", "game": spec.game, "forbid": b.forbid, "cells": cells}


def answer_lines(result: dict) -> list[str]:
    """A balance result in words, as `meeplelab balance` prints it (and docs/balance.md
    shows it): each cell's sentence, its confirmations and the window of fair values."""
    lines = []
    for cell in result["cells"]:
        confirming = sum(c["games"] for c in cell.get("confirmations", []))
        cost = f"{cell['games']:,} games" + (f" + {confirming:,} confirming" if confirming
                                            else "")
        if "cpu_seconds" in cell:
            cost += f"; {cell['cpu_seconds']:,.0f} CPU-s"
        lines.append(cell["sentence"] + f" [{cost}]")
        for c in cell.get("confirmations", []):
            lines.append("  confirmation: " + c["sentence"])
        if "chart" in cell:
            window = cell["chart"].get("window")
            delta = 100 * cell["chart"]["delta"]
            lines.append(f"  values within +-{delta:g} points of fair (95% band): "
                         + (f"{window[0]:g}..{window[1]:g}" if window else "none in the range"))
    return lines


def run_balance(spec, player: Player) -> dict:
    """The spec's balance question (a fair-value search, or the value of an action kind),
    its games played by `player` (services.runner.Player: shard tasks of the job's results
    folder); Stopped when the job is cancelled, a task fails or its budget is spent."""
    if spec.balance is None:
        raise ValueError("the spec has no balance section")
    if spec.balance.option is not None:
        return run_fair_value(spec, player)
    return run_forbid_value(spec, player)
