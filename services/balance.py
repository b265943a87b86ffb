"""What to change: the fair value of a rule option, and the value of an action kind.

    meeplelab balance SPEC          # a spec with a `balance` section (services/spec.py Balance)

- run_fair_value: plays the option's values on common deals (every value of a wave plays the
  same deals: game i of seed s), in waves chosen by pipelines.fair_value.search, until the
  interval on the fair value is as narrow as asked; then confirms the nearest integers on
  fresh deals (the spec's seed + 1) with a verdict at +-delta.
- run_forbid_value: the same deals with the seat's agent as given and restricted
  (agent(forbid=kind)): the paired difference in win share and score of every seat.
Both play in the calling process (the nogil loop, one core), so the answer is the same on any
machine; the service runs them as jobs of its one queue (services.worker: a niced process of
their own under a CPU budget, ended at once by a cancel).  `progress(event)` hears after
every value of a wave and every confirmation: {"players", "games" (new since the last event),
"left" (about how many games the question still needs: None until that is known),
"detail" (where it stands, in words)}.  The statistics are pipelines.fair_value's (this
module only plays and words).
"""
from __future__ import annotations

import math
import time

import numpy as np

import core_cy
from core_cy.agents import canonical_agent
from pipelines import fair_value as fv
from pipelines import stats as st

CONFIRM_SEED_OFFSET = 1   # the confirmation's fresh deals: the spec's seed + 1
CURVE_POINTS = 41


def balance_rules(spec, players: int, value) -> dict:
    """The rules one searched value plays: the first arm's rules with the option set (a
    per-seat option: `value` at the seat, 0 elsewhere)."""
    b = spec.balance
    rules = dict(next(iter(spec.arm_rules().values())))
    game = core_cy.load(spec.game)
    opt = next(o for o in game.options if o.name == b.option)
    if opt.kind == "seats":
        seats = [0] * players
        seats[b.seat_of(players)] = int(value)
        rules[b.option] = seats
    else:
        rules[b.option] = int(value)
    return rules


def _figure(spec, players: int, shares: np.ndarray) -> np.ndarray:
    b = spec.balance
    if b.target == "equal":
        return fv.seat_figure(shares, b.seat_of(players))
    return shares[:, b.seat_of(players)]


def _play(spec, players, rules, agents, seed, start, count) -> dict:
    """Units start..start+count-1 (a game, or with pairing 'rotations' a deal: `players`
    games) of the cell with `rules` and the seat `agents`, played as the runner plays a cell
    (spec.play_arguments) and made units as its statistics make them (pipelines.units):
    seat_win_share and seat_score (units, seats), a unit per row in order, a row of NaN for a
    unit left out (a game ended at a simulator safety; a deal missing one), so that the
    values of a search stay paired by deal; seat_forced (games, seats) of every game with
    restricted play; games and truncated, the games played and those left out."""
    import polars as pl

    import pipelines
    from core_cy.play.batch import play
    from services.spec import Cell

    game = core_cy.load(spec.game)
    how = spec.play_arguments(Cell(next(iter(spec.arm_rules())), rules, players), agents)
    per = how["games_per_deal"]
    rows = pl.from_arrow(play(game, seed=seed, start=start * per, count=count * per, **how))
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


def budget_games(spec) -> int:
    """The most games a spec's balance question may play: the search's max_games and the
    confirmation of (at most) two nearest integers per player count, or the two arms of a
    forbid question."""
    b = spec.balance
    per_count = (b.max_games + 2 * b.confirm_games) if b.option is not None \
        else 2 * b.confirm_games
    return per_count * len(spec.player_counts())


def _search_left(waves: list, spec, players: int, used: int) -> int | None:
    """About how many more games the search of one player count needs: the interval
    narrows as one over the root of the games, so (half-width / precision)^2 times the games
    so far, within max_games; None while the interval is unbounded (not yet known)."""
    b = spec.balance
    if not waves:
        return None
    ans = fv.answer(fv.fit(waves), b.range[0], b.range[1], _target(spec), integer=True)
    if fv.done(ans, b.precision):
        return 0
    if not math.isfinite(ans.half_width):
        return None
    return int(min(b.max_games - used, used * ((ans.half_width / b.precision) ** 2 - 1)))


def _target(spec) -> float:
    return 0.5 if spec.balance.target == "equal" else float(spec.balance.target)


def confirm(spec, players: int, value: int) -> dict:
    """The value on fresh deals: the seat's figure with its interval and a verdict."""
    b = spec.balance
    seat = b.seat_of(players)
    seed = spec.seed + CONFIRM_SEED_OFFSET
    out = _play(spec, players, balance_rules(spec, players, value), spec.agent_list(players),
                seed, 0, b.confirm_games)
    shares = out["seat_win_share"]
    shares = shares[~np.isnan(shares).any(axis=1)]  # units that finished by the rules
    n = len(shares)
    if b.target == "equal":   # the seat's share less the others' mean: 0 when fair
        diff = 2 * fv.seat_figure(shares, seat) - 1
        mean, sd = float(diff.mean()), float(diff.std(ddof=1))
        low, high = (float(v) for v in st.mean_interval(mean, sd, n))
        what, centre = "its win share less the others' mean", 0.0
    else:
        rate = shares[:, seat]
        mean = float(rate.mean())
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
    sentence += {"fair": f": fair within +-{100 * b.delta:g} points",
                 "unfair": ": not fair", "not decided": f": not decided at +-{100 * b.delta:g} "
                 "points (more games would decide)"}[verdict]
    return {"value": value, "games": n, "seed": seed, "mean": mean, "low": low, "high": high,
            "verdict": verdict, "sentence": sentence}


def curve(f: fv.Fit, ans: fv.Answer, delta: float, equal: bool) -> dict:
    """The sensitivity chart's data: the fitted curve and band over the range, the observed
    points, the window of values whose band lies within +-delta of the target."""
    xs = np.linspace(ans.lo, ans.hi, CURVE_POINTS)
    mid, low, high = f.band(xs)
    scale = 2.0 if equal else 1.0   # the figure in win-share points (equal: share difference)
    shift = 1.0 if equal else 0.0
    tgt = ans.target * scale - shift
    conv = (lambda v: (np.asarray(v) * scale - shift).tolist())
    inside = [float(x) for x, lo_, hi_ in zip(xs, conv(low), conv(high))
              if tgt - delta <= lo_ and hi_ <= tgt + delta]
    return {"x": xs.tolist(), "curve": conv(mid), "low": conv(low), "high": conv(high),
            "points": {"x": f.values.tolist(), "y": conv(f.means), "games": f.counts.tolist()},
            "target": tgt, "delta": delta,
            "window": [min(inside), max(inside)] if inside else None,
            "figure": ("seat share less the others' mean" if equal else "win rate")}


def run_fair_value(spec, progress=None) -> dict:
    """The fair-value search of every player count (spec.balance.option); see the module."""
    b = spec.balance
    game = core_cy.load(spec.game)
    cells = []
    confirming = 2 * b.confirm_games  # the confirmation's games, at most
    counts = spec.player_counts()
    for players in counts:
        later = counts.index(players) < len(counts) - 1  # what they need is not known yet
        agents = spec.agent_list(players)
        seat = b.seat_of(players)

        seen: list = []  # the waves so far, for the progress's estimate of what is left

        def play(values, start, count, players=players, agents=agents, seen=seen,
                 later=later):
            used = sum(y.size for _, y in seen)
            left = _search_left(seen, spec, players, used)
            cols = []
            for k, v in enumerate(values):
                out = _play(spec, players, balance_rules(spec, players, v), agents, spec.seed,
                            start, count)
                cols.append(_figure(spec, players, out["seat_win_share"]))
                if progress:
                    wave = (len(values) - k - 1) * count  # the wave's games still to play
                    progress({"players": players, "games": count,
                              "left": None if left is None or later else
                              max(left - (k + 1) * count, wave) + confirming,
                              "detail": f"{players} players: searching {b.option}, wave "
                                        f"{len(seen) + 1}, {used + (k + 1) * count:,} games"})
            seen.append((np.asarray(values, dtype=np.float64), np.column_stack(cols)))
            return seen[-1][1]

        started = time.process_time()
        ans, f, waves = fv.search(play, b.range[0], b.range[1], _target(spec), b.precision,
                                  b.wave_games, b.max_games, integer=True)
        who = "the team" if game.cooperative else f"seat {seat + 1} of {players}"
        aim = "to be fair" if b.target == "equal" else f"to win {100 * b.target:g}%"
        text = _answer_sentence(ans, b, who, agents[seat], aim)
        confirmations = []
        for k, v in enumerate(ans.nearest if b.confirm_games else []):
            confirmations.append(confirm(spec, players, v))
            if progress:
                progress({"players": players, "games": b.confirm_games,
                          "left": (len(ans.nearest) - k - 1) * b.confirm_games,
                          "detail": f"{players} players: confirmed {b.option} = {v}"})
        cells.append({"players": players, "seat": seat, "agent": agents[seat],
                      "answer": ans.as_dict(), "sentence": text,
                      "games": int(sum(w[1].size for w in waves)),
                      "waves": [{"values": w[0].tolist(), "games_per_value": int(w[1].shape[0])}
                                for w in waves],
                      "cpu_seconds": time.process_time() - started,
                      "chart": curve(f, ans, b.delta, b.target == "equal"),
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
        if ans.nearest:
            text += f"; the nearest integers: {ans.nearest}"
        return text
    goal = "the seat fair" if b.target == "equal" else f"the seat win {100 * b.target:g}%"
    return f"{who} under {agent}: " + fv.sentence(ans, b.option, _unit(b.option), goal)


def with_forbid(game, agent: str, kinds: str) -> str:
    """`agent` restricted from `kinds` (an agent string; ValueError if it cannot be)."""
    spelled = canonical_agent(game, agent)
    text = (f"{spelled[:-1]}, forbid={kinds})" if spelled.endswith(")")
            else f"{spelled}(forbid={kinds})")
    return canonical_agent(game, text)


def run_forbid_value(spec, progress=None) -> dict:
    """The value of action kinds (spec.balance.forbid) to a seat, per player count: the same
    deals with the seat's agent as given and restricted, paired by game."""
    b = spec.balance
    game = core_cy.load(spec.game)
    rules = next(iter(spec.arm_rules().values()))
    cells = []
    for players in spec.player_counts():
        seat = b.seat_of(players)
        agents = spec.agent_list(players)
        restricted = list(agents)
        restricted[seat] = with_forbid(game, agents[seat], b.forbid)
        free = _play(spec, players, rules, agents, spec.seed, 0, b.confirm_games)
        kept = _play(spec, players, rules, restricted, spec.seed, 0, b.confirm_games)
        if progress:
            progress({"players": players, "games": 2 * b.confirm_games, "left": None,
                      "detail": f"{players} players: {b.forbid} measured"})
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


def run_balance(spec, progress=None) -> dict:
    """The spec's balance question (a fair-value search, or the value of an action kind)."""
    if spec.balance is None:
        raise ValueError("the spec has no balance section")
    if spec.balance.option is not None:
        return run_fair_value(spec, progress)
    return run_forbid_value(spec, progress)
