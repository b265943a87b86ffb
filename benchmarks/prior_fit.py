"""Fits a game's move prior (mcts(prior=fitted)) to the search's own choices.

Plays --games 3-player games of --game with --agent (default: the game's `strong` preset of
its presets.json; seed --seed, one decision at a time) and, at every --every-th
decision with a choice, searches the position afresh with --search (default: the same
agent without light decisions, so that every kind of decision gets its full budget) and
records every legal action's one-ply value for the acting seat (the engine's action values,
what greedy and the expansion order read), its action kind and the root's visits.  The
prior is the conditional logit the search evaluates (core_cy/agents/mcts.pxi,
prior_probabilities), one weight pair per action kind k:

    P(a) = exp(value_k (v(a) - max_b v(b)) + offset_k) / sum over the legal b of the same,

fitted by maximum likelihood to the root's visit shares (soft labels; actions the search
never tried count 0; a small ridge keeps the weights of rare kinds finite), scipy's L-BFGS.
The games split into a fitting part and a held-out fifth, on which it prints the log loss of
the search's choice (its most visited action) under the prior and under the uniform policy,
and the top-1 agreement of the prior and of the one-ply best action with the search.
--write stores the weights (refitted on every game) in the game's data/move_prior.json;
--cache keeps the records for refits.

    nice -n 19 python -m benchmarks.prior_fit --game mondo [--games 200] [--every 3] [--write]
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy.optimize import minimize  # noqa: E402

import core_cy  # noqa: E402
from core_cy import agents  # noqa: E402
from core_cy.agents.game import MOVE_PRIOR  # noqa: E402
from core_cy.catalogue import presets  # noqa: E402

PLAYERS = 3


def strong_preset(name: str) -> str:
    return presets(name)["presets"]["strong"]["agent"]


def search_agent(game, agent: str) -> str:
    """`agent` (an mcts string) spelled without `light`, so every decision has its budget."""
    _, values = agents.parse_agent(game, agent)
    body = agent[agent.index("(") + 1:-1] if "(" in agent else ""
    kept = [p.strip() for p in body.split(",") if p.strip()
            and p.split("=")[0].strip() not in ("light", "light_iterations")]
    return f"mcts({', '.join(kept)})" if values.get("light") else agent


def record(name: str, games: int, agent: str, search: str, every: int, seed: int) -> dict:
    """Flat arrays over every recorded legal action (value, kind, visit share) and per record
    its start, its game and the searched choice's index."""
    game = core_cy.load(name)
    kinds = [k.name for k in game.actions.kinds]
    value, kind, share, start, owner = [], [], [], [], []
    decisions = 0
    for g in range(games):
        state = game.new(PLAYERS, seed=seed * 1_000_003 + g)
        while not state.is_terminal():
            legal = state.legal_actions()
            if len(legal) > 1:
                decisions += 1
            if len(legal) > 1 and decisions % every == 0:
                visits = agents.search_visits(state, search, seed=seed * 1_000_003 + state.num_moves)
                total = sum(visits.values())
                values = agents.action_values(state, state.current_player)
                if total > 0:
                    start.append(len(value))
                    owner.append(g)
                    for a in legal:
                        value.append(values[a])
                        kind.append(kinds.index(game.actions.kind_of(a)))
                        share.append(visits.get(a, 0) / total)
            state.apply(agents.choose(state, agent, seed=seed * 1_000_003 + state.num_moves))
    return {"value": np.asarray(value, dtype=float), "kind": np.asarray(kind, dtype=np.int64),
            "share": np.asarray(share, dtype=float), "start": np.asarray(start, dtype=np.int64),
            "owner": np.asarray(owner, dtype=np.int64)}


def select(rec: dict, keep: np.ndarray) -> dict:
    """The records where `keep` holds (a boolean per record), re-indexed."""
    bounds = np.append(rec["start"], len(rec["value"]))
    rows = np.concatenate([np.arange(bounds[r], bounds[r + 1]) for r in np.flatnonzero(keep)])
    sizes = np.diff(bounds)[keep]
    return {"value": rec["value"][rows], "kind": rec["kind"][rows], "share": rec["share"][rows],
            "start": np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64),
            "owner": rec["owner"][keep]}


def _segments(rec: dict) -> np.ndarray:
    """The record index of every flat row."""
    sizes = np.diff(np.append(rec["start"], len(rec["value"])))
    return np.repeat(np.arange(len(sizes)), sizes)


def probabilities(theta: np.ndarray, rec: dict, seg: np.ndarray) -> np.ndarray:
    """Per flat row the prior's probability (the engine's formula): theta = values, offsets."""
    k = len(theta) // 2
    gap = rec["value"] - np.maximum.reduceat(rec["value"], rec["start"])[seg]
    z = theta[:k][rec["kind"]] * gap + theta[k:][rec["kind"]]
    z = z - np.maximum.reduceat(z, rec["start"])[seg]
    e = np.exp(z)
    return e / np.add.reduceat(e, rec["start"])[seg]


def fit(rec: dict, kinds: int, ridge: float) -> np.ndarray:
    seg = _segments(rec)
    gap = rec["value"] - np.maximum.reduceat(rec["value"], rec["start"])[seg]
    n = len(rec["start"])

    def objective(theta):
        p = probabilities(theta, rec, seg)
        loss = -(rec["share"] * np.log(p + 1e-300)).sum() / n + ridge * theta @ theta
        r = (p - rec["share"]) / n        # d loss / d z per row (the shares sum to 1)
        grad = np.concatenate([np.bincount(rec["kind"], r * gap, minlength=kinds),
                               np.bincount(rec["kind"], r, minlength=kinds)]) + 2 * ridge * theta
        return loss, grad
    out = minimize(objective, np.zeros(2 * kinds), jac=True, method="L-BFGS-B")
    if not out.success:
        raise RuntimeError(f"the fit did not converge: {out.message}")
    return out.x


def agreement(theta: np.ndarray, rec: dict) -> dict:
    """On these records: the log loss of the search's choice (most visited) under the prior
    and under the uniform policy; top-1 agreement of the prior and of the one-ply best."""
    seg = _segments(rec)
    p = probabilities(theta, rec, seg)
    bounds = np.append(rec["start"], len(rec["value"]))
    loss = uniform = prior_top = greedy_top = 0.0
    for r in range(len(rec["start"])):
        lo, hi = bounds[r], bounds[r + 1]
        choice = lo + int(np.argmax(rec["share"][lo:hi]))
        loss -= np.log(p[choice] + 1e-300)
        uniform += np.log(hi - lo)
        prior_top += rec["share"][lo + int(np.argmax(p[lo:hi]))] == rec["share"][choice]
        greedy_top += rec["share"][lo + int(np.argmax(rec["value"][lo:hi]))] == rec["share"][choice]
    n = len(rec["start"])
    return {"records": n, "log_loss": loss / n, "uniform": uniform / n,
            "top1_prior": prior_top / n, "top1_one_ply": greedy_top / n}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", required=True)
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--agent", help="the agent that plays the games (default: the strong preset)")
    ap.add_argument("--search", help="the search whose visits are recorded (default: --agent "
                    "without light decisions)")
    ap.add_argument("--every", type=int, default=3, help="record every n-th decision with a choice")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ridge", type=float, default=1e-4)
    ap.add_argument("--cache", type=Path, help="an .npz of the records: read if it exists, "
                    "else written after recording")
    ap.add_argument("--write", action="store_true", help="store the weights in the game's data")
    args = ap.parse_args(argv)
    game = core_cy.load(args.game)
    kinds = [k.name for k in game.actions.kinds]
    agent = args.agent or strong_preset(args.game)
    search = args.search or search_agent(game, agent)
    t0 = time.process_time()
    if args.cache and args.cache.exists():
        with np.load(args.cache) as saved:
            rec = {key: saved[key] for key in saved.files}
    else:
        rec = record(args.game, args.games, agent, search, args.every, args.seed)
        if args.cache:
            np.savez(args.cache, **rec)
    print(f"{len(rec['start'])} records of {rec['owner'].max() + 1} games ({search}), "
          f"{time.process_time() - t0:.0f} CPU s", flush=True)
    held = rec["owner"] % 5 == 4
    theta = fit(select(rec, ~held), len(kinds), args.ridge)
    out = agreement(theta, select(rec, held))
    print(f"held-out ({out['records']} decisions): log loss of the search's choice "
          f"{out['log_loss']:.3f} (uniform {out['uniform']:.3f}); top-1 agreement "
          f"{out['top1_prior']:.1%} (the one-ply best {out['top1_one_ply']:.1%})")
    theta = fit(rec, len(kinds), args.ridge)
    weights = {name: {"value": round(float(theta[j]), 4),
                      "offset": round(float(theta[len(kinds) + j]), 4)}
               for j, name in enumerate(kinds)}
    print("weights (every game):", weights)
    if args.write:
        path = Path(core_cy.__file__).parent / "games" / args.game / MOVE_PRIOR
        data = json.loads(path.read_text()) if path.exists() else {}
        data.update({"_about": f"The search's move prior (mcts(prior=fitted)), fitted by "
                     f"`python -m benchmarks.prior_fit --game {args.game} --games {args.games} "
                     f"--every {args.every} --seed {args.seed}` to the root visits of {search} "
                     f"(docs/lab/2026-12-07-move-prior.md)", "kinds": weights})
        path.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
