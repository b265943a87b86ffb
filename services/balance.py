"""What to change: the fair value of a rule option, and the value of an action kind.

    meeplelab balance SPEC          # a spec with a `balance` section (services/spec.py Balance)

- run_fair_value: plays the option's values on common deals (every value of a wave plays the
  same deals: game i of seed s), in waves chosen by pipelines.fair_value.search, until the
  interval on the fair value is as narrow as asked; then confirms the nearest integers on
  fresh deals (the spec's seed + 1) with a verdict at +-delta, playing on within the budget
  until the confirmation agrees with the search (reconcile), and leads with what to do in
  the option's units (recommendation).  Asked per strength (balance.agents a list), every
  rung is such a search, and each player count ends with whether the fair value moves with
  strength (strength_verdict, from the rungs' intervals).
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
from pipelines.figures import _margin_text as margin_text
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


def _value_arm(option: str, value, fresh: bool = False, rung: str | None = None) -> str:
    """The results folder's arm of one value searched (`fresh`: its confirmation's deals;
    `rung`: the agent of a question asked per strength, '<arm>@<agent>' as a ladder's)."""
    from services.spec import ladder_arm

    text = f"{option}={int(value) if float(value).is_integer() else value}"
    text += ",confirmation" if fresh else ""
    return text if rung is None else ladder_arm(text, rung)


def budget_games(spec) -> int:
    """The most games a spec's balance question may play: cell_budget per player count and
    rung."""
    return cell_budget(spec) * len(spec.player_counts()) * len(spec.balance_rungs())


def cell_budget(spec) -> int:
    """The games one answer (a player count, a rung) may play: a search's max_games and two
    confirmations of confirm_games (what the search leaves unplayed goes to reconciling it
    with its confirmation, reconcile), or the two arms of a forbid question."""
    b = spec.balance
    return (b.max_games + 2 * b.confirm_games) if b.option is not None \
        else 2 * b.confirm_games


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
            c: fv.Curve | None = None, ans: fv.Answer | None = None,
            agents: list[str] | None = None, rung: str | None = None,
            games: dict | None = None) -> list[dict]:
    """Each value on fresh deals (the spec's seed + 1), played together: the seat's figure
    with its interval and a verdict at +-delta, on as many games as should decide it
    (confirm_games), saying so when that cap is too small, and saying both when it disagrees
    with the search's interval.  `games` (value -> games) replaces that plan: a value played
    before plays only its games not yet written (the first ones are the same deals)."""
    seed = spec.seed + CONFIRM_SEED_OFFSET
    agents = agents or spec.agent_list(players)
    plans = [confirm_games(spec, players, v, c) if c is not None
             else (spec.balance.confirm_games, math.nan) for v in values]
    if games:
        plans = [(games.get(v, plan), needed) for v, (plan, needed) in zip(values, plans)]
    parts = [_part(spec, _value_arm(spec.balance.option, v, fresh=True, rung=rung), players,
                   spec.searched_rules(players, v), agents, seed, 0, plan)
             for v, (plan, _) in zip(values, plans)]
    return [_confirmation(spec, players, v, out, needed, seed, ans, agents)
            for v, out, (_, needed) in zip(values, _play(player, spec, parts), plans)]


def _confirmation(spec, players: int, value: int, out: dict, needed: float, seed: int,
                  ans: fv.Answer | None, agents: list[str] | None = None) -> dict:
    """One value's confirmation (confirm) from its fresh games `out` (_units)."""
    b = spec.balance
    seat = b.seat_of(players)
    agents = agents or spec.agent_list(players)
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
    sentence = (f"{b.option} = {value}, {players} players, {agents[seat]}: "
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
    if verdict == "not decided" and math.isfinite(needed) and n < needed \
            and n <= b.confirm_games:
        sentence += (f" (the search's estimate there needed about {needed:,.0f} games to decide; "
                     f"confirm_games caps it at {b.confirm_games:,})")
    if ans is not None and verdict == "unfair" and any(a <= value <= b_ for a, b_ in ans.pieces):
        sentence += (f"; yet the search's interval still allows {value} as the fair value: the "
                     "fresh deals and the search disagree, and more games on both would tell "
                     "which is wrong")
    return {"value": value, "games": n, "seed": seed, "mean": mean, "low": low, "high": high,
            "sd": _finite(sd), "verdict": verdict, "sentence": sentence,
            "games_needed": _finite(needed)}


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
    """The fair-value search of every player count (spec.balance.option) and, asked per
    strength (balance.agents a list), of every rung, each its own search of the same
    question (the same deals), then per player count whether the fair value moves with
    strength (strength); see the module."""
    rungs = spec.balance_rungs()
    questions = [(players, rung) for players in spec.player_counts() for rung in rungs]
    cells = [_fair_value_cell(spec, player, players, rung, len(rungs) > 1,
                              later=len(questions) - 1 - k)
             for k, (players, rung) in enumerate(questions)]
    result = {"kind": "fair_value", "game": spec.game, "option": spec.balance.option,
              "cells": cells}
    if len(rungs) > 1:
        result["strength"] = [
            {"players": n, **strength([c for c in cells if c["players"] == n], spec)}
            for n in spec.player_counts()]
    return result


def _fair_value_cell(spec, player: Player, players: int, rung: str | None, named: bool,
                     later: int) -> dict:
    """One answer: the search of one player count under one rung's agents (rung None: the
    spec's agents), its confirmation reconciled with it (reconcile) and the recommendation;
    `named`: the rung's agent names its arms (a question asked per strength); `later`: the
    answers still to search after it (for the progress's estimate)."""
    b = spec.balance
    game = core_cy.load(spec.game)
    agents = spec.agent_list(players) if rung is None else [rung] * players
    seat = b.seat_of(players)
    per = spec.games_per_deal(players)
    confirming = 2 * b.confirm_games * per  # the confirmation's games, at most
    arm_rung = rung if named else None
    under = f" under {agents[seat]}" if named else ""
    seen: list = []  # the waves so far, for the progress's estimate of what is left

    def play(values, start, count):
        used = sum(y.size for _, y in seen)
        left = _search_left(seen, spec, players, used)
        here = None if left is None else max(left, len(values) * count) * per + confirming
        # each answer still to search: about as many games as this one
        player.expect(None if here is None else here + later * (used * per + here),
                      f"{players} players{under}: searching {b.option}, wave {len(seen) + 1} "
                      f"({len(values)} values x {count:,} games), {used:,} games so far")
        parts = [_part(spec, _value_arm(b.option, v, rung=arm_rung), players,
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
    searched = int(sum(w[1].size for w in waves))
    confirmations = []
    if b.confirm_games and ans.nearest:
        player.expect(len(ans.nearest) * b.confirm_games * per + later * searched * per,
                      f"{players} players{under}: confirming {b.option} = "
                      + " and ".join(map(str, ans.nearest)) + " on fresh deals")
        confirmations = reconcile(player, spec, players, ans, c, cell_budget(spec) - searched,
                                  agents, arm_rung)
    return {"players": players, "seat": seat, "agent": agents[seat], "rung": rung,
            "answer": ans.as_dict(), "sentence": text,
            "recommendation": recommendation(spec, players, ans, confirmations,
                                             cell_budget(spec) * per, float(c.trend[1]) >= 0),
            "games": searched,
            "waves": [{"values": w[0].tolist(), "games_per_value": int(w[1].shape[0])}
                      for w in waves],
            "cpu_seconds": player.cpu_seconds - started,
            "chart": curve(c, ans, b.delta, _points(spec, players),
                           "seat share less the others' mean"
                           if b.target == "equal" else "win rate"),
            "confirmations": confirmations}


MAX_ROUNDS = 8      # rounds of reconciling a search with its confirmation (reconcile)
MIN_MORE = 50       # fewer fresh games than this left in the budget: reconcile stops


def _state(conf: dict, centre: float, delta: float) -> str:
    """What a confirmed value shows for the recommendation: 'fair' (within +-delta of the
    target), 'short' or 'over' (its whole interval beyond delta below or above it), else
    'open' (it may still be fair within +-delta: a value shown off the target by less than
    delta is not shown unfit)."""
    if conf["verdict"] == "fair":
        return "fair"
    if conf["high"] < centre - delta:
        return "short"
    return "over" if conf["low"] > centre + delta else "open"


def next_step(confs: dict, centre: float, delta: float, rising: bool, lo: int, hi: int):
    """What reconciling a search with its confirmation does next, from the confirmations so
    far (value -> confirmation; _state): None when they answer (a value shown fair; two
    neighbours shown beyond delta on either side of the target; every value beyond delta on
    one side up to the range's end), ('more', values) to play more fresh games on the values
    still open, ('add', value) to confirm the next integer toward the target when every value
    played is shown off it on one side, beyond delta or by less (`rising`: the figure rises
    with the option)."""
    states = {v: _state(c, centre, delta) for v, c in confs.items()}
    if "fair" in states.values():
        return None
    # every value shown off the target on one side (perhaps by less than delta): the next
    # integer toward it first, before more games on values that at best sit at the margin
    sides = {-1 if c["high"] < centre else 1 if c["low"] > centre else 0
             for c in confs.values()}
    if len(sides) == 1 and 0 not in sides:
        up = (sides == {-1}) == rising
        new = max(confs) + 1 if up else min(confs) - 1
        if lo <= new <= hi and new not in confs:
            return ("add", new)
    open_ = sorted(v for v, state in states.items() if state == "open")
    if open_:
        return ("more", open_)
    values = sorted(states)
    if any(states[a] != states[b] for a, b in zip(values, values[1:]) if b == a + 1):
        return None                      # the target lies between two neighbours
    up = (states[values[0]] == "short") == rising
    new = values[-1] + 1 if up else values[0] - 1
    return ("add", new) if lo <= new <= hi and new not in confs else None


def reconcile(player: Player, spec, players: int, ans: fv.Answer, c: fv.Curve, budget: int,
              agents: list[str], rung: str | None = None) -> list[dict]:
    """The search's answer confirmed on fresh deals until the two agree: the nearest integers
    first (confirm, sized to decide), then, while no value is shown fair and the answer is
    not settled (next_step), more fresh games on the values not decided (as many as should
    decide them, at least twice what they had) or the next integer toward the target when
    every value confirmed is on one side of it, within `budget` games (the answer's budget
    less what the search played), in at most MAX_ROUNDS rounds.  The confirmations, by
    value."""
    b = spec.balance
    centre = 0.0 if b.target == "equal" else float(b.target)
    rising = float(c.trend[1]) >= 0
    plans = {v: confirm_games(spec, players, v, c)[0] for v in ans.nearest}
    plans = {v: min(n, max(budget // len(plans), 1)) for v, n in plans.items()}
    confs: dict = {}
    todo = list(plans)
    for _ in range(MAX_ROUNDS):
        confs.update({g["value"]: g for g in confirm(player, spec, players, todo, c, ans,
                                                     agents, rung, plans)})
        step = next_step(confs, centre, b.delta, rising, *b.range)
        left = budget - sum(plans.values())
        if step is None or left < MIN_MORE:
            break
        if step[0] == "add":
            todo = [step[1]]
            plans[step[1]] = min(confirm_games(spec, players, step[1], c)[0], left)
        else:
            todo = step[1]
            _more_plans(spec, confs, plans, todo, centre, left // len(todo))
        player.expect(sum(plans[v] for v in todo) * spec.games_per_deal(players),
                      f"{players} players: the confirmation does not agree with the search "
                      f"yet: confirming {b.option} = " + " and ".join(map(str, todo))
                      + " on more fresh deals")
    return [confs[v] for v in sorted(confs)]


def _more_plans(spec, confs: dict, plans: dict, values: list, centre: float,
                share: int) -> None:
    """The fresh games each undecided value of `values` plays next (plans, updated): as many
    as should decide it at its estimate (times 1.5), at least twice what it had, at most
    `share` more."""
    b = spec.balance
    for v in values:
        conf = confs[v]
        sd = max(conf["sd"] or 0.0, 1e-9)
        need = float(st.games_to_decide(conf["mean"] - centre, sd, conf["games"], b.delta))
        want = 2 * plans[v] if not math.isfinite(need) else max(
            int(math.ceil(1.5 * need)), 2 * plans[v])
        plans[v] = min(want, plans[v] + share)


def _unit(option: str) -> str:
    """The option's unit in words (seat_bonus_gold -> gold)."""
    return option.rsplit("_", 1)[-1] if option.startswith("seat_bonus_") else "(option units)"


def _amount(value: int, unit: str) -> str:
    """'4 polyps', '1 polyp', '2 gold'."""
    one = abs(value) == 1 and unit.endswith("s") and not unit.startswith("(")
    return f"{abs(value)} {unit[:-1] if one else unit}"


def action(spec, players: int, value: int) -> str:
    """What to do, in the option's own units: 'give the last seat 4 extra polyps', 'take 2
    polyps from seat 3', 'give the last seat nothing extra (seat_bonus_polyps 0)', or for
    an option that is not per seat 'set max_turns to 70'."""
    b = spec.balance
    opt = next(o for o in core_cy.load(spec.game).options if o.name == b.option)
    if opt.kind != "seats":
        return f"set {b.option} to {value}"
    whom = "the last seat" if b.seat < 0 else f"seat {b.seat}"
    unit = _unit(b.option)
    if value > 0:
        return f"give {whom} {value} extra {_amount(value, unit)[len(str(value)) + 1:]}"
    if value < 0:
        return f"take {_amount(value, unit)} from {whom}"
    return f"give {whom} nothing extra ({b.option} 0)"


def _shown(spec, players: int, conf: dict) -> str:
    """A confirmed value's figure in short: '-1.2 points [-2.6, +0.2]' (a rate: '31.0%
    [29.1, 32.9]')."""
    if spec.balance.target == "equal":
        return (f"{100 * conf['mean']:+.1f} points [{100 * conf['low']:+.1f}, "
                f"{100 * conf['high']:+.1f}]")
    return f"{100 * conf['mean']:.1f}% [{100 * conf['low']:.1f}, {100 * conf['high']:.1f}]"


def recommendation(spec, players: int, ans: fv.Answer, confs: list[dict], budget: int,
                   rising: bool = True) -> dict:
    """What to do, in one sentence that leads every answer: the integer confirmed fair on
    fresh deals ('Give the last seat 4 extra polyps: fair within ±1 point, shown on 9,000
    fresh games'), or plainly why none is named: no whole number is fair (two neighbours
    shown on either side of the target), no value in the range (every value up to its end
    shown on one side), or 'cannot yet decide between 3 and 4 ... within the budget (N
    games)' (reconcile ran out of games); without a confirmation, the search's nearest
    integer, said to be unconfirmed.  {verdict: give | between | outside | undecided |
    unconfirmed | none, value, values, sentence}."""
    b = spec.balance
    centre = 0.0 if b.target == "equal" else float(b.target)
    who = "the team" if core_cy.load(spec.game).cooperative else (
        "the last seat" if b.seat < 0 else f"seat {b.seat}")
    on_target = (f"fair within {margin_text(b.delta)}" if b.target == "equal"
                 else f"{who} wins {100 * b.target:g}% within {margin_text(b.delta)}")
    goal = "fair" if b.target == "equal" else f"win {100 * b.target:g}%"
    lo, hi = b.range
    by = {c["value"]: c for c in confs}

    def say(verdict, text, values=()):
        return {"verdict": verdict, "value": values[0] if len(values) == 1 else None,
                "values": list(values), "sentence": text[0].upper() + text[1:]}

    def shown(c):
        return f"{c['value']} at {_shown(spec, players, c)} ({c['games']:,} fresh games)"

    fair = [c for c in confs if c["verdict"] == "fair"]
    if fair:
        best = min(fair, key=lambda c: abs(c["mean"] - centre))
        return say("give", f"{action(spec, players, best['value'])}: {on_target}, shown on "
                   f"{best['games']:,} fresh games", [best["value"]])
    if ans.status == "outside_range":
        return say("outside", f"no value of {b.option} in {lo:g}..{hi:g} makes {who} {goal}: "
                   + (f"the fair value lies {ans.side} the range (widen the range to find it)"
                      if ans.side else "every value is shown unfair, on both sides of the "
                      "target"))
    states = {c["value"]: _state(c, centre, b.delta) for c in confs}
    if confs and "open" not in states.values():
        split = [(c, by[c["value"] + 1]) for c in confs if c["value"] + 1 in by
                 and states[c["value"]] != states[c["value"] + 1]]
        if split:
            a, z = split[0]
            return say("between", f"no whole number is {on_target}: {b.option} = {shown(a)}, "
                       f"{z['value']} at {_shown(spec, players, z)} ({z['games']:,} fresh "
                       "games); the fair value lies between them", [a["value"], z["value"]])
        up = (states[confs[0]["value"]] == "short") == rising
        end = confs[-1] if up else confs[0]
        if next_step(by, centre, b.delta, rising, lo, hi) is None:
            return say("outside", f"no value of {b.option} in {lo:g}..{hi:g} makes {who} "
                       f"{goal}: even at the range's {'high' if up else 'low'} end "
                       f"{b.option} = {shown(end)}")
        return say("undecided", f"cannot yet decide within the budget ({budget:,} games): "
                   f"every value confirmed leaves {who} beyond {margin_text(b.delta)} on one "
                   f"side of the target, the closest {b.option} = {shown(end)}",
                   [end["value"]])
    if confs:
        def near(c):                     # the nearer the target on fresh deals, first
            return abs(c["mean"] - centre)
        best = min((c for c in confs if states[c["value"]] == "open"), key=near)
        pick = [best] + sorted((by[v] for v in (best["value"] - 1, best["value"] + 1)
                                if v in by), key=near)[:1]
        pick.sort(key=lambda c: c["value"])
        words = {"open": "not decided", "short": "not fair (short)", "over": "not fair (ahead)"}
        states_text = "; ".join(
            f"{c['value']} {words[states[c['value']]]} ({_shown(spec, players, c)}, "
            f"{c['games']:,} fresh games)" for c in pick)
        which = (f"between {pick[0]['value']} and {pick[1]['value']}" if len(pick) > 1
                 else f"whether {pick[0]['value']} is {goal}")
        return say("undecided", f"cannot yet decide {which} ({b.option}) within the budget "
                   f"({budget:,} games) at {margin_text(b.delta)}: {states_text}",
                   [c["value"] for c in pick])
    if ans.status in ("found", "edge") and ans.estimate is not None:
        value = int(min(max(round(ans.estimate), lo), hi))
        return say("unconfirmed", f"{action(spec, players, value)}: the search's estimate "
                   f"{ans.estimate:.2f} {fv.interval_text(ans)}, not confirmed on fresh games "
                   "(confirm_games is 0)", [value])
    why = ("the figure is not shown to depend on it" if ans.status == "no_dependence"
           else "every value in the range is still possible")
    return say("none", f"no value of {b.option} to recommend yet: {why} (searched "
               f"{lo:g}..{hi:g} within the budget of {budget:,} games)")


def strength(cells: list[dict], spec) -> dict:
    """Whether one player count's fair value moves with the players' strength, decided from
    its rungs' intervals (strength_verdict)."""
    opt = next(o for o in core_cy.load(spec.game).options if o.name == spec.balance.option)
    return strength_verdict([(c["agent"], c["answer"]) for c in cells],
                            spec.balance.precision,
                            "the compensation" if opt.kind == "seats"
                            else f"the fair value of {spec.balance.option}")


def _rung_set(a: dict) -> tuple[float, float] | None:
    """A rung's values still possible as one interval (an answer's dict, fv.Answer.as_dict):
    an open end unbounded, a fair value beyond the range the values past its end; None when
    every value is shown unfair on both sides (no fair value to compare)."""
    lo, hi = a["range"]
    if a["status"] == "outside_range":
        return None if a["side"] is None else ((hi, math.inf) if a["side"] == "above"
                                               else (-math.inf, lo))
    if a["status"] in ("no_dependence", "unresolved"):
        return (-math.inf, math.inf)
    return (-math.inf if a["low"] is None else a["low"],
            math.inf if a["high"] is None else a["high"])


def _rung_text(agent: str, a: dict) -> str:
    lo, hi = a["range"]
    span = _rung_set(a)
    if span is None:
        return f"{agent}: no fair value in {lo:g}..{hi:g}"
    if a["status"] == "outside_range":
        return f"{agent}: {a['side']} the range {lo:g}..{hi:g}"
    return f"{agent}: {fv.bound_text(span[0], lo, hi)} to {fv.bound_text(span[1], lo, hi)}"


def rungs_apart(names: list[str], spans: list[list[tuple]]):
    """The first two rungs whose intervals are disjoint on some coordinate (spans: per rung,
    an interval (lo, hi) per coordinate, a seat or the one fair value): (one, two, the
    coordinates apart), or None."""
    for i, (one, a) in enumerate(zip(names, spans)):
        for two, b in zip(names[i + 1:], spans[i + 1:]):
            apart = [k for k, (x, y) in enumerate(zip(a, b)) if x[1] < y[0] or y[1] < x[0]]
            if apart:
                return one, two, apart
    return None


def not_decided_sentence(what: str, overlap: str, wide: list[str], precision: float,
                         listed: str) -> dict:
    """The strength verdict while the rungs overlap and `wide` are not known to precision."""
    return {"verdict": "undecided", "sentence": (
        f"not decided yet whether {what} moves with strength: {overlap}, and "
        f"{' and '.join(wide)} {'is' if len(wide) == 1 else 'are'} not known to "
        f"+-{precision:g} ({listed})")}


def strength_verdict(rungs: list[tuple[str, dict]], precision: float,
                     what: str = "the compensation") -> dict:
    """From the rungs' answers [(agent, answer dict)]: 'moves' when two rungs' intervals on
    the fair value are disjoint (the difference of their fair values excludes 0), 'holds'
    when every rung names its fair value within +-precision and the intervals overlap,
    else 'undecided'; {verdict, sentence}."""
    spans = [_rung_set(a) for _, a in rungs]
    listed = "; ".join(_rung_text(agent, a) for agent, a in rungs)
    known = [(agent, s) for (agent, _), s in zip(rungs, spans) if s is not None]
    apart = rungs_apart([agent for agent, _ in known], [[s] for _, s in known])
    if apart:
        return {"verdict": "moves", "sentence": (
            f"{what} moves with strength: the fair values under {apart[0]} and {apart[1]} do "
            f"not overlap ({listed})")}
    narrow = [a["status"] == "found" and a["low"] is not None and a["high"] is not None
              and (a["high"] - a["low"]) / 2 <= precision for _, a in rungs]
    if all(narrow) and len(known) == len(rungs):
        return {"verdict": "holds", "sentence": (
            f"{what} holds across strengths: every rung's fair value is known to "
            f"+-{precision:g} and their intervals overlap ({listed})")}
    wide = [agent for (agent, _), ok in zip(rungs, narrow) if not ok]
    return not_decided_sentence(what, "the intervals overlap", wide, precision, listed)


def _answer_sentence(ans: fv.Answer, b, who: str, agent: str, aim: str) -> str:
    if ans.status == "found":
        text = (f"{who} under {agent} needs {b.option} = {ans.estimate:.2f} "
                f"{fv.interval_text(ans)} {_unit(b.option)} {aim} (95% interval on the value, "
                f"searched {b.range[0]}..{b.range[1]})")
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
    shows it): each answer leads with its recommendation and cost, then the search's
    sentence, its confirmations and the window of fair values; asked per strength, each
    player count's rungs are followed by whether the fair value moves with strength."""
    lines = []
    strength_of = {s["players"]: s for s in result.get("strength", [])}
    cells = result["cells"]
    for k, cell in enumerate(cells):
        confirming = sum(c["games"] for c in cell.get("confirmations", []))
        cost = f"{cell['games']:,} games" + (f" + {confirming:,} confirming" if confirming
                                            else "")
        if "cpu_seconds" in cell:
            cost += f"; {cell['cpu_seconds']:,.0f} CPU-s"
        lead = cell.get("recommendation")
        if lead:
            lines += [f"{lead['sentence']} [{cost}]", "  search: " + cell["sentence"]]
        else:
            lines.append(cell["sentence"] + f" [{cost}]")
        for c in cell.get("confirmations", []):
            lines.append("  confirmation: " + c["sentence"])
        if "chart" in cell:
            window = cell["chart"].get("window")
            delta = 100 * cell["chart"]["delta"]
            lines.append(f"  values within +-{delta:g} points of fair (95% band): "
                         + (f"{window[0]:g}..{window[1]:g}" if window else "none in the range"))
        last = k + 1 == len(cells) or cells[k + 1]["players"] != cell["players"]
        if last and cell["players"] in strength_of:
            lines.append(f"{cell['players']} players, per strength: "
                         + strength_of[cell["players"]]["sentence"])
    return lines


def run_balance(spec, player: Player) -> dict:
    """The spec's balance question (a fair-value search, or the value of an action kind),
    its games played by `player` (services.runner.Player: shard tasks of the job's results
    folder); Stopped when the job is cancelled, a task fails or its budget is spent."""
    if spec.balance is None:
        raise ValueError("the spec has no balance section")
    if spec.balance.all_seats:  # every seat's value at once
        from services.all_seats import run_all_seats
        return run_all_seats(spec, player)
    if spec.balance.option is not None:
        return run_fair_value(spec, player)
    return run_forbid_value(spec, player)
