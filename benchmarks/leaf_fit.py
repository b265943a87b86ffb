"""Fits a game's search cut-off judgement (mcts(judge=fitted)) to game outcomes.

Plays --games 3-player games of --game with --agent (seed --seed, one decision at a time),
records the engine's leaf features (engine.LEAF_FEATURES, every seat) at every --every-th
decision, and labels each record with the game's final win shares.  The weights w (and
no_winner, in a game where nobody may win: the Golden Island) then maximise the likelihood
of the conditional logit the engine evaluates,

    P(seat k wins) = exp(w.f_k) / (exp(no_winner) + sum_j exp(w.f_j)),

with w = b H + d: H the greedy heuristic's own direction (heuristic = H.f), b a free scale
and d corrections held small by a ridge (--ridge); scipy.optimize.minimize, L-BFGS.  The
games split into a fitting part and a held-out fifth, on which the mean log loss is printed
next to the uniform guess's.  --write stores the weights (refitted on every game) in the
game's data/leaf_value.json; --cache keeps the records for refits.

    nice -n 19 python -m benchmarks.leaf_fit --game golden_island [--games 500]
        [--agent "mcts(stop=true)"] [--every 2] [--seed 1] [--ridge 1.0] [--write]
    nice -n 19 python -m benchmarks.leaf_fit --game mondo --games 300 --every 4 --write
"""
from __future__ import annotations

import argparse
import importlib
import json
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

import core_cy
from core_cy import agents

PLAYERS = 3
# The agent whose games the weights learn from, per game (--agent): the search the
# judgement serves, or in Mondo, where mcts costs 1.2 CPU s a game, its strong preset.
RECORD_AGENT = {"golden_island": "mcts(stop=true)",
                "mondo": "mcts(cutoff=6, exploration=0.2, stop=true, light=place, "
                         "light_iterations=1, forbid=flip)"}
# The one-ply agent whose states check that the heuristic is linear in the features.
GREEDY = {"golden_island": "greedy", "mondo": "greedy_placer"}


def engine_of(name: str):
    return importlib.import_module(f"core_cy.games.{name}.engine")
# The weights are the heuristic's direction H times a free scale, plus corrections d held
# small by a ridge (--ridge): fitted freely to the outcomes of real games, the weights read
# correlations (the chance of surviving got no weight in searched games, where everybody
# survives because the search's heuristic sees to it), which a search then chases.


def record(name: str, games: int, agent: str, every: int, seed: int):
    """Features (records x seats x features), win shares (records x seats), game of each."""
    game, engine = core_cy.load(name), engine_of(name)
    feats, shares, owner = [], [], []
    for g in range(games):
        state = game.new(PLAYERS, seed=seed * 1_000_003 + g)
        start = len(feats)
        while not state.is_terminal():
            if state.num_moves % every == 0:
                feats.append(engine.leaf_features(state))
            state.apply(agents.choose(state, agent, seed=seed * 1_000_003 + state.num_moves))
        won = state.win_shares()
        shares.extend([won] * (len(feats) - start))
        owner.extend([g] * (len(feats) - start))
    return np.asarray(feats), np.asarray(shares), np.asarray(owner)


def probabilities(theta: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Per record the chances of every seat and, last, of nobody (the engine's formula;
    theta's last entry is no_winner, -inf where nobody cannot win)."""
    z = np.concatenate([x @ theta[:-1], np.full((x.shape[0], 1), theta[-1])], axis=1)
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def labels(shares: np.ndarray) -> np.ndarray:
    return np.concatenate([shares, 1.0 - shares.sum(axis=1, keepdims=True)], axis=1)


def log_loss(theta, x, y) -> float:
    return float(-(y * np.log(probabilities(theta, x) + 1e-300)).sum(axis=1).mean())


def heuristic_direction(name: str, games: int = 10) -> np.ndarray:
    """H with heuristic = H.f on running states (the heuristic is linear in the features):
    least squares over the states of a few greedy games, checked exact."""
    game, engine = core_cy.load(name), engine_of(name)
    xs, hs = [], []
    for g in range(games):
        state = game.new(PLAYERS, seed=g)
        while not state.is_terminal():
            xs.extend(engine.leaf_features(state))
            hs.extend(state.heuristic(k) for k in range(PLAYERS))
            state.apply(agents.choose(state, GREEDY[name], seed=state.num_moves))
    xs, hs = np.asarray(xs), np.asarray(hs)
    h = np.linalg.lstsq(xs, hs, rcond=None)[0]
    if np.abs(xs @ h - hs).max() > 1e-6:
        raise RuntimeError("the heuristic is not linear in the leaf features")
    return h


def fit(x: np.ndarray, y: np.ndarray, ridge: float, h: np.ndarray, features: tuple,
        nobody: bool) -> np.ndarray:
    """The weights (then no_winner, -inf without nobody) of the largest likelihood with
    w = b H + d, ridge on d."""
    f = x.shape[2]

    def theta_of(params):
        return np.append(params[0] * h + params[1:f + 1], params[-1] if nobody else -np.inf)

    def objective(params):
        d = params[1:f + 1]
        p = probabilities(theta_of(params), x)
        r = p - y                                       # d(-log L)/dz per record and option
        grad_w = np.einsum("rk,rkf->f", r[:, :-1], x) / x.shape[0]
        grad = np.concatenate([[grad_w @ h], grad_w + 2 * ridge * d,
                               [r[:, -1].mean()] if nobody else []])
        value = -(y * np.log(p + 1e-300)).sum(axis=1).mean() + ridge * d @ d
        return value, grad
    out = minimize(objective, np.zeros(f + 1 + nobody), jac=True, method="L-BFGS-B")
    if not out.success:
        raise RuntimeError(f"the fit did not converge: {out.message}")
    print(f"scale of the heuristic {out.x[0]:.4f}, corrections "
          f"{dict(zip(features, np.round(out.x[1:f + 1], 4)))}")
    return theta_of(out.x)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", choices=sorted(RECORD_AGENT), default="golden_island")
    ap.add_argument("--games", type=int, default=500)
    ap.add_argument("--agent", help="the agent whose games are recorded (default: per game, "
                    "RECORD_AGENT)")
    ap.add_argument("--every", type=int, default=2, help="record every n-th decision")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ridge", type=float, default=1.0, help="on the corrections to the "
                    "heuristic's direction")
    ap.add_argument("--cache", type=Path, help="an .npz of the records: read if it exists, "
                    "else written after recording")
    ap.add_argument("--write", action="store_true", help="store the weights in the game's data")
    args = ap.parse_args(argv)
    engine = engine_of(args.game)
    features = engine.LEAF_FEATURES
    nobody = "no_winner" in engine.leaf_weights()
    t0 = time.process_time()
    if args.cache and args.cache.exists():
        with np.load(args.cache) as saved:
            x, shares, owner = saved["x"], saved["shares"], saved["owner"]
    else:
        x, shares, owner = record(args.game, args.games, args.agent or RECORD_AGENT[args.game],
                                  args.every, args.seed)
        if args.cache:
            np.savez(args.cache, x=x, shares=shares, owner=owner)
    y = labels(shares)
    print(f"{len(x)} records of {owner.max() + 1} games, "
          f"{time.process_time() - t0:.0f} CPU s", flush=True)
    held = owner % 5 == 4
    h = heuristic_direction(args.game)
    theta = fit(x[~held], y[~held], args.ridge, h, features, nobody)
    uniform = np.append(np.zeros(len(features)), 0.0 if nobody else -np.inf)
    print(f"held-out log loss: fitted {log_loss(theta, x[held], y[held]):.4f}, "
          f"uniform {log_loss(uniform, x[held], y[held]):.4f}")
    theta = fit(x, y, args.ridge, h, features, nobody)
    weights = {name: round(float(w), 4) for name, w in zip(features, theta[:-1])}
    extra = {"no_winner": round(float(theta[-1]), 4)} if nobody else {}
    print("weights (every game):", weights, extra)
    if args.write:
        path = Path(engine.__file__).parent / "data" / "leaf_value.json"
        with open(path) as f:
            data = json.load(f)
        data.update(weights=weights, **extra)
        with open(path, "w") as f:
            json.dump(data, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
