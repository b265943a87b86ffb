"""Tune the Forbidden Desert search policies' evaluation weights (their agent parameters, the
SearchWeights block of core_cy/games/forbidden_desert/engine.pyx, declared with their defaults
in its agent_params.toml) with a separable CMA-ES, derivative-free, on one core.

    python -m benchmarks.forbidden_desert.tune_search_weights --out desert_search_weights.json
        [--agent search] [--only NAME,...] [--players 4] [--games 3000] [--mix-players 3]
        [--mix-games 1000] [--sel-games N] [--tiebreak 0.03] [--budget 900] [--minutes 50]
        [--seed 1] [--lam 10] [--sigma 0.35] [--start FILE] [--set NAME=VALUE ...]
    python -m benchmarks.forbidden_desert.tune_search_weights --validate desert_search_weights.json
        [--agent search] [--val-seed 777001] [--val-games 10000,5000,5000]

--agent is the policy whose games are the objective (and the validation): "search" (the
one-pawn beam search, rounds 1-3) or e.g. "team_search" (round 4).  --only tunes the named
weights and keeps the others at their starting values (fewer dimensions for a slower agent).
Each candidate plays as the agent string that gives its weights, e.g.
search(part_held=500.1, sand=3.2); its output names the weights, and a chosen set becomes the
default by writing it into agent_params.toml.

Search space: w_i = w0_i * exp(z_i) for the tuned weights (w0 = the default weights,
agent_params.toml), so every weight stays
positive and steps are multiplicative.  Objective, on common random numbers (the same seeds,
hence the same setups and storm decks, for every candidate): the Novice win rate of --games
games at --players plus --mix-games at --mix-players (pooled by game count), plus
--tiebreak * mean parts_collected as a smoother signal than rare wins.

The best candidates of the run overfit their tuning seeds (a maximum over hundreds of noisy
evaluations), so at the end the top candidates and the final search mean are re-scored on
other seeds (--seed + 1000, "selection") and the best there goes to --out.  --validate then
compares a weights file with the default weights on a third set of seeds: both win rates, the
paired difference game by game (the same seeds, t interval) and the loss causes.
"""
from __future__ import annotations

import argparse
import collections
import json
import math
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core: no idle BLAS threads

import numpy as np  # noqa: E402

import core_cy  # noqa: E402
from core_cy import agents  # noqa: E402
from core_cy.play import batch  # noqa: E402
from core_cy.games.forbidden_desert import engine as fd  # noqa: E402
from pipelines.stats import mean_interval
from benchmarks import share_interval

NAMES = list(fd.SEARCH_WEIGHT_NAMES)  # the engine's names: weights are lists in this order
PARAMS = {p.name: p for p in fd.GAME.policy_params.params}
DEFAULTS = [float(PARAMS[name].default) for name in NAMES]
BASE = list(DEFAULTS)           # the search's origin: --start / --set change it
# Indices of the weights the search moves (--only narrows it): the numbers, not team_search's
# widths or the line_sharing switch.
TUNED = [i for i, name in enumerate(NAMES) if PARAMS[name].kind == "float"]
KINDS = {"int": int, "float": float, "bool": bool}
RULES = {"difficulty": "novice"}
Z_LO, Z_HI = -4.0, 3.0  # a weight may shrink to ~2% or grow to 20x its default


def agent_with(game, agent, weights):
    """The agent string of policy `agent` with `weights` (a list in NAMES order) as its
    parameters: those that differ from their default (a weight the policy does not take
    must keep its default)."""
    taken = {p.name for p in agents.agent_params(game, agent)}
    given = []
    for name, w, default in zip(NAMES, weights, DEFAULTS, strict=True):
        if w != default:
            if name not in taken:
                raise SystemExit(f"agent {agent!r} takes no parameter {name!r}")
            given.append(f"{name}={PARAMS[name].spell(KINDS[PARAMS[name].kind](w))}")
    return f"{agent}({', '.join(given)})" if given else agent


def play(game, agent, weights, players, seed, count):
    """Plays `count` Novice games of `agent` with `weights` (its agent parameters); returns
    (record batch, CPU seconds)."""
    c = time.process_time()
    rb = batch.play(game, players, RULES, agent_with(game, agent, weights), seed=seed,
                    count=count)
    return rb, time.process_time() - c


def load_weights(path):
    """The weights of a JSON file this script wrote, as a full list in NAMES order: the names
    it gives are checked against the engine's, the ones it lacks (files of earlier rounds
    tuned fewer weights) keep their default."""
    data = json.load(open(path))
    names = data.get("names", NAMES[:len(data["weights"])])
    unknown = sorted(set(names) - set(NAMES))
    if unknown or len(names) != len(data["weights"]):
        raise SystemExit(f"{path}: weight names {unknown or names} do not match the weights or "
                         f"the engine's names {NAMES}")
    given = dict(zip(names, data["weights"]))
    return [given.get(name, default) for name, default in zip(NAMES, DEFAULTS)]


class Objective:
    def __init__(self, game, agent, sets, tiebreak):
        self.game, self.agent, self.sets, self.tiebreak = game, agent, sets, tiebreak
        # sets: [(players, n, seed)]

    def __call__(self, weights):
        wins = parts = games = 0
        for players, n, seed in self.sets:
            if n <= 0:
                continue
            rb, _ = play(self.game, self.agent, weights, players, seed, n)
            wins += int(rb.column("win").to_numpy().sum())
            parts += float(rb.column("parts_collected").to_numpy().sum())
            games += n
        win_rate, mean_parts = wins / games, parts / games
        return win_rate + self.tiebreak * mean_parts, win_rate, mean_parts


def to_weights(z):
    """All weights: BASE, with the TUNED ones scaled by exp(z)."""
    weights = list(BASE)
    for i, zi in zip(TUNED, np.clip(z, Z_LO, Z_HI), strict=True):
        weights[i] = BASE[i] * math.exp(float(zi))
    return weights


def sep_cma(f, z0, sigma, lam, budget, deadline, log):
    """Separable CMA-ES (diagonal covariance) maximising f over z; yields nothing, returns the
    list of every (value, win, parts, z) evaluated and the final mean."""
    n = len(z0)
    mu = lam // 2
    w = np.log(mu + 0.5) - np.log(np.arange(1, mu + 1))
    w /= w.sum()
    mueff = 1.0 / (w ** 2).sum()
    cs = (mueff + 2) / (n + mueff + 5)
    ds = 1 + 2 * max(0.0, math.sqrt((mueff - 1) / (n + 1)) - 1) + cs
    cc = (4 + mueff / n) / (n + 4 + 2 * mueff / n)
    sep = (n + 2) / 3.0  # sep-CMA learns n variances, so it may learn them faster
    c1 = min(1.0, sep * 2 / ((n + 1.3) ** 2 + mueff))
    cmu = min(1 - c1, sep * 2 * (mueff - 2 + 1 / mueff) / ((n + 2) ** 2 + mueff))
    chin = math.sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n))
    m, C = np.array(z0, float), np.ones(n)
    ps, pc = np.zeros(n), np.zeros(n)
    rng = np.random.default_rng(12345)
    history, evals, gen = [], 0, 0
    best = None
    while evals + lam <= budget and time.time() < deadline:
        D = np.sqrt(C)
        zs = rng.standard_normal((lam, n))
        ys = zs * D
        xs = m + sigma * ys
        scored = []
        for k in range(lam):
            val, win, parts = f(to_weights(xs[k]))
            scored.append((val, k))
            history.append((val, win, parts, np.clip(xs[k], Z_LO, Z_HI).tolist()))
            if best is None or val > best[0]:
                best = (val, win, parts, xs[k].copy())
        evals += lam
        gen += 1
        order = [k for _, k in sorted(scored, reverse=True)[:mu]]
        yw = (w[:, None] * ys[order]).sum(0)
        zw = (w[:, None] * zs[order]).sum(0)
        m = np.clip(m + sigma * yw, Z_LO, Z_HI)
        ps = (1 - cs) * ps + math.sqrt(cs * (2 - cs) * mueff) * zw
        hsig = (np.linalg.norm(ps) / math.sqrt(1 - (1 - cs) ** (2 * gen))
                < (1.4 + 2 / (n + 1)) * chin)
        pc = (1 - cc) * pc + hsig * math.sqrt(cc * (2 - cc) * mueff) * yw
        C = ((1 - c1 - cmu) * C + c1 * (pc ** 2 + (1 - hsig) * cc * (2 - cc) * C)
             + cmu * (w[:, None] * ys[order] ** 2).sum(0))
        sigma *= math.exp((cs / ds) * (np.linalg.norm(ps) / chin - 1))
        vals = sorted(v for v, _ in scored)
        log(f"gen {gen:3d} evals {evals:4d} sigma {sigma:.3f} gen best {vals[-1]:.4f} "
            f"median {vals[len(vals) // 2]:.4f} | run best {best[0]:.4f} "
            f"(win {best[1]:.4f}, parts {best[2]:.3f})")
        log("   mean w: " + " ".join(f"{x:.2f}" for x in to_weights(m)))
    return history, m


def tune(args):
    game = core_cy.load("forbidden_desert")
    sets = [(args.players, args.games, args.seed)]
    if args.mix_games > 0:
        sets.append((args.mix_players, args.mix_games, args.seed))
    f = Objective(game, args.agent, sets, args.tiebreak)
    t0 = time.time()
    logf = open(args.out + ".log", "a")

    def log(msg):
        line = f"[{time.time() - t0:7.1f}s] {msg}"
        print(line, flush=True)
        logf.write(line + "\n")
        logf.flush()

    if args.start:
        BASE[:] = load_weights(args.start)
    for item in args.set or []:
        # A default weight of 0 cannot move by multiplication: give it a starting value.
        name, v = item.split("=")
        if name not in NAMES:
            raise SystemExit(f"--set {item}: {name!r} is not one of {NAMES}")
        BASE[NAMES.index(name)] = float(v)
    taken = {p.name for p in agents.agent_params(game, args.agent)}
    TUNED[:] = [i for i in TUNED if NAMES[i] in taken]   # the weights this agent reads
    if args.only:
        only = args.only.split(",")
        unknown = sorted(set(only) - {NAMES[i] for i in TUNED})
        if unknown:
            raise SystemExit(f"--only: {unknown} not among {[NAMES[i] for i in TUNED]}")
        TUNED[:] = [NAMES.index(name) for name in only]
    z0 = np.zeros(len(TUNED))
    log(f"agent {args.agent}, objective sets {sets}, tiebreak {args.tiebreak}, budget "
        f"{args.budget}, lambda {args.lam}, sigma {args.sigma}, tuned "
        f"{[NAMES[i] for i in TUNED]}")
    base = f(to_weights(z0))
    log(f"start: value {base[0]:.4f} win {base[1]:.4f} parts {base[2]:.3f}")
    deadline = t0 + args.minutes * 60
    history, mean = sep_cma(f, z0, args.sigma, args.lam, args.budget - 1, deadline, log)

    # Re-score the top candidates and the final mean on other seeds: the run's maximum is
    # biased upward by the noise of its own seeds.
    history.sort(key=lambda h: -h[0])
    finalists = [("start", z0.tolist(), base)] + [
        (f"top{i + 1}", h[3], h[:3]) for i, h in enumerate(history[:args.finalists])]
    finalists.append(("mean", np.clip(mean, Z_LO, Z_HI).tolist(), None))
    sel_sets = [(p, args.sel_games or n, s + 1000) for p, n, s in sets[:1]]
    sel_sets += [(p, n, s + 1000) for p, n, s in sets[1:]]
    sel = Objective(game, args.agent, sel_sets, args.tiebreak)
    rows = []
    for name, z, tuned in finalists:
        val = sel(to_weights(z))
        rows.append((val[0], name, z, tuned, val))
        log(f"selection {name:6s}: value {val[0]:.4f} win {val[1]:.4f} parts {val[2]:.3f}"
            + (f"  (tuning value {tuned[0]:.4f})" if tuned else ""))
    val, name, z, tuned, sval = max(rows, key=lambda r: r[0])
    result = {
        "weights": [round(x, 4) for x in to_weights(z)],
        "names": NAMES,
        "defaults": DEFAULTS,
        "chosen": name,
        "tuning_value": tuned[0] if tuned else None,
        "selection": {"value": sval[0], "win": sval[1], "parts": sval[2],
                      "seed": args.seed + 1000, "sets": sel_sets},
        "objective": {"agent": args.agent, "sets": sets, "tiebreak": args.tiebreak,
                      "rules": RULES, "tuned": [NAMES[i] for i in TUNED]},
        "run": {"evaluations": len(history) + 1, "seconds": round(time.time() - t0, 1),
                "command": " ".join(sys.argv)},
    }
    with open(args.out, "w") as fh:
        json.dump(result, fh, indent=1)
    log(f"chose {name}; wrote {args.out}: {result['weights']}")


def validate(args):
    game = core_cy.load("forbidden_desert")
    new = load_weights(args.validate)
    counts = [int(x) for x in args.val_games.split(",")]
    print(f"held-out seed {args.val_seed}, Novice, agent {args.agent}; weights that differ: "
          + ", ".join(f"{name} {d:g} -> {w:g}" for name, d, w in zip(NAMES, DEFAULTS, new)
                      if d != w))
    for players, n in zip((4, 3, 2), counts):
        wins = {}
        for label, wts in (("default", DEFAULTS), ("tuned", new)):
            rb, cpu = play(game, args.agent, wts, players, args.val_seed, n)
            reasons = collections.Counter(rb.column("end_reason").to_pylist())
            k = reasons.get("win", 0)
            lo, hi = share_interval(k / n, n)
            parts = rb.column("parts_collected").to_numpy().mean()
            turns = rb.column("turns").to_numpy().mean()
            losses = ", ".join(f"{r} {reasons.get(r, 0) / n:.1%}"
                               for r in ("thirst", "buried", "swept_away"))
            won = rb.column("win").to_numpy() > 0
            early = (rb.column("parts_collected").to_numpy() < 4) & ~won
            losses += f" (lost before all parts held {early.mean():.1%})"
            print(f"{players}p {label:7s} n={n:5d} win {k / n:6.2%} [{lo:.2%}, {hi:.2%}] | "
                  f"{losses} | parts {parts:.2f} turns {turns:.1f} | {n / cpu:.0f} games/CPU-s",
                  flush=True)
            wins[label] = won.astype(float)
        # The same seeds, so the games are paired: the mean difference with a t interval.
        diff = wins["tuned"] - wins["default"]
        lo, hi = mean_interval(diff.mean(), diff.std(ddof=1), n)
        print(f"{players}p tuned - default: {diff.mean():+.2%} [{lo:+.2%}, {hi:+.2%}] (paired by "
              f"seed; {int((diff > 0).sum())} games won only by tuned, "
              f"{int((diff < 0).sum())} only by default)", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="desert_search_weights.json")
    ap.add_argument("--agent", default="search", help="the policy whose games are scored")
    ap.add_argument("--only", help="tune only these weights (comma-separated names)")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--games", type=int, default=3000)
    ap.add_argument("--mix-players", type=int, default=3)
    ap.add_argument("--mix-games", type=int, default=1000)
    ap.add_argument("--sel-games", type=int, help="--players games per finalist in the "
                    "selection (default: --games)")
    ap.add_argument("--tiebreak", type=float, default=0.03)
    ap.add_argument("--budget", type=int, default=900, help="evaluations")
    ap.add_argument("--minutes", type=float, default=50.0, help="stop the search after this")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lam", type=int, default=10)
    ap.add_argument("--sigma", type=float, default=0.35)
    ap.add_argument("--finalists", type=int, default=5)
    ap.add_argument("--start", help="a weights JSON to start from (default: the default weights)")
    ap.add_argument("--set", nargs="*", help="starting weights by name, e.g. sand_risk=20 meter_risk=20")
    ap.add_argument("--validate", help="compare this weights JSON with the defaults")
    ap.add_argument("--val-seed", type=int, default=777001)
    ap.add_argument("--val-games", default="10000,5000,5000", help="4p,3p,2p")
    args = ap.parse_args()
    validate(args) if args.validate else tune(args)


if __name__ == "__main__":
    main()
