"""The Golden Island: fits the search's cut-off judgement (mcts(judge=fitted)) to game outcomes.

Plays --games 3-player games with --agent (seed --seed, one decision at a time), records the
engine's leaf features (engine.LEAF_FEATURES, every seat) at every --every-th decision, and
labels each record with the game's final win shares.  The weights w and no_winner then
maximise the likelihood of the conditional logit the engine evaluates,

    P(seat k wins) = exp(w.f_k) / (exp(no_winner) + sum_j exp(w.f_j)),

with w = b H + d: H the greedy heuristic's own direction (g_heuristic = H.f), b a free scale
and d corrections held small by a ridge (--ridge); scipy.optimize.minimize, L-BFGS.  The
games split into a fitting part and a held-out fifth, on which the mean log loss is printed
next to the uniform guess's.  --write stores the weights (refitted on every game) in the
game's data/leaf_value.json; --cache keeps the records for refits.

    nice -n 19 python -m benchmarks.golden_island.leaf_fit [--games 500]
        [--agent "mcts(stop=true)"] [--every 2] [--seed 1] [--ridge 1.0] [--write]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

import core_cy
from core_cy import agents
from core_cy.games.golden_island import engine

PLAYERS = 3
WEIGHTS = Path(engine.__file__).parent / "data" / "leaf_value.json"
# The weights are the heuristic's direction H times a free scale, plus corrections d held
# small by a ridge (--ridge): fitted freely to the outcomes of real games, the weights read
# correlations (the chance of surviving got no weight in searched games, where everybody
# survives because the search's heuristic sees to it), which a search then chases.


def record(games: int, agent: str, every: int, seed: int):
    """Features (records x seats x features), win shares (records x seats), game of each."""
    game = core_cy.load("golden_island")
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
    """Per record the chances of every seat and, last, of nobody (the engine's formula)."""
    z = np.concatenate([x @ theta[:-1], np.full((x.shape[0], 1), theta[-1])], axis=1)
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def labels(shares: np.ndarray) -> np.ndarray:
    return np.concatenate([shares, 1.0 - shares.sum(axis=1, keepdims=True)], axis=1)


def log_loss(theta, x, y) -> float:
    return float(-(y * np.log(probabilities(theta, x) + 1e-300)).sum(axis=1).mean())


def heuristic_direction(games: int = 10) -> np.ndarray:
    """H with g_heuristic = H.f on running states (the heuristic is linear in the features):
    least squares over the states of a few greedy games, checked exact."""
    game = core_cy.load("golden_island")
    xs, hs = [], []
    for g in range(games):
        state = game.new(PLAYERS, seed=g)
        while not state.is_terminal():
            xs.extend(engine.leaf_features(state))
            hs.extend(state.heuristic(k) for k in range(PLAYERS))
            state.apply(agents.choose(state, "greedy", seed=state.num_moves))
    xs, hs = np.asarray(xs), np.asarray(hs)
    h = np.linalg.lstsq(xs, hs, rcond=None)[0]
    if np.abs(xs @ h - hs).max() > 1e-6:
        raise RuntimeError("the heuristic is not linear in the leaf features")
    return h


def fit(x: np.ndarray, y: np.ndarray, ridge: float, h: np.ndarray) -> np.ndarray:
    """The weights (then no_winner) of the largest likelihood with w = b H + d, ridge on d."""
    f = x.shape[2]

    def objective(params):
        theta = np.append(params[0] * h + params[1:f + 1], params[-1])
        d = params[1:f + 1]
        p = probabilities(theta, x)
        r = p - y                                       # d(-log L)/dz per record and option
        grad_w = np.einsum("rk,rkf->f", r[:, :-1], x) / x.shape[0]
        grad = np.concatenate([[grad_w @ h], grad_w + 2 * ridge * d, [r[:, -1].mean()]])
        value = -(y * np.log(p + 1e-300)).sum(axis=1).mean() + ridge * d @ d
        return value, grad
    out = minimize(objective, np.zeros(f + 2), jac=True, method="L-BFGS-B")
    if not out.success:
        raise RuntimeError(f"the fit did not converge: {out.message}")
    print(f"scale of the heuristic {out.x[0]:.4f}, corrections "
          f"{dict(zip(engine.LEAF_FEATURES, np.round(out.x[1:f + 1], 4)))}")
    return np.append(out.x[0] * h + out.x[1:f + 1], out.x[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=500)
    ap.add_argument("--agent", default="mcts(stop=true)")
    ap.add_argument("--every", type=int, default=2, help="record every n-th decision")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ridge", type=float, default=1.0, help="on the corrections to the "
                    "heuristic's direction")
    ap.add_argument("--cache", type=Path, help="an .npz of the records: read if it exists, "
                    "else written after recording")
    ap.add_argument("--write", action="store_true", help="store the weights in the game's data")
    args = ap.parse_args(argv)
    t0 = time.process_time()
    if args.cache and args.cache.exists():
        with np.load(args.cache) as saved:
            x, shares, owner = saved["x"], saved["shares"], saved["owner"]
    else:
        x, shares, owner = record(args.games, args.agent, args.every, args.seed)
        if args.cache:
            np.savez(args.cache, x=x, shares=shares, owner=owner)
    y = labels(shares)
    print(f"{len(x)} records of {owner.max() + 1} games, "
          f"{time.process_time() - t0:.0f} CPU s", flush=True)
    held = owner % 5 == 4
    h = heuristic_direction()
    theta = fit(x[~held], y[~held], args.ridge, h)
    uniform = np.zeros_like(theta)
    print(f"held-out log loss: fitted {log_loss(theta, x[held], y[held]):.4f}, "
          f"uniform {log_loss(uniform, x[held], y[held]):.4f}")
    theta = fit(x, y, args.ridge, h)
    weights = {name: round(float(w), 4) for name, w in zip(engine.LEAF_FEATURES, theta[:-1])}
    print("weights (every game):", weights, "no_winner", round(float(theta[-1]), 4))
    if args.write:
        with open(WEIGHTS) as f:
            data = json.load(f)
        data.update(weights=weights, no_winner=round(float(theta[-1]), 4))
        with open(WEIGHTS, "w") as f:
            json.dump(data, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
