"""What pairing 'rotations' buys over the current pairing (issue 11, item 5).

Both schemes play the same number of games per arm with the agent list turned one seat per
game and common random numbers between arms (game i of both arms is dealt alike):
- current ('deals'): every game its own deal; the seat figure is stratified by the agents'
  seating (what pipelines' seat test does), comparisons pair the arms game by game;
- 'rotations': every deal is played once per seat rotation (k games for k seats), and the
  unit is the deal: the mean of its k games (what pipelines does with the option on).
For each figure the variance of its estimate per game played is measured under both, and the
ratio current / rotations says how many times fewer games rotations need for the same
precision (above 1: rotations are better).  Ranges: 95% bootstrap over games and deals (200 draws).

    nice -n 10 python -m benchmarks.pairing                  # about two minutes on one core
    nice -n 10 python -m benchmarks.pairing --deals 500 --only mondo
"""
from __future__ import annotations

import argparse
import time

import numpy as np


import core_cy  # noqa: E402
from core_cy.play import batch  # noqa: E402

# (label, game, players, agents, baseline rules, variant rules, deals)
SETTINGS = [
    ("maori", "maori 3p greedy x3, basic vs advanced", 3, ["greedy"] * 3,
     {"mode": "basic"}, {"mode": "advanced"}, 3000),
    ("maori-mcts", "maori 3p mcts(10)/greedy/greedy, basic vs advanced", 3,
     ["mcts(iterations=10)", "greedy", "greedy"], {"mode": "basic"}, {"mode": "advanced"}, 500),
    ("mondo", "mondo 2p greedy vs greedy_placer, beginner vs advanced", 2,
     ["greedy", "greedy_placer"], {"level": "beginner"}, {"level": "advanced"}, 1200),
]
GAMES = {"maori": "maori", "maori-mcts": "maori", "mondo": "mondo"}


def play(game, players, agents, rules, deals, per_deal, seed):
    """(shares games x seats, seat of agent 0 per game, kept) with rotation."""
    rows = batch.play(game, players, rules, agents, seed=seed, count=deals * players,
                      rotate=True, games_per_deal=per_deal)
    shares = np.array(rows.column("seat_win_share").to_pylist(), dtype=np.float64)
    kept = ~np.isin(np.array(rows.column("end_reason").to_pylist()), game.safety_end_reasons)
    seat_of_first = (-np.arange(len(shares))) % players  # agents[(k + i) % n] sits in seat k
    return shares, seat_of_first, kept


def figures(shares, seat_of_first):
    """Per game: seat 0's share and agent 0's share."""
    return {"seat 0 win share": shares[:, 0],
            "agent 0 win share": shares[np.arange(len(shares)), seat_of_first]}


def per_game_variance_current(values, strata):
    """Variance per game of a mean stratified by seating (equal strata)."""
    return np.mean([values[strata == s].var(ddof=1) for s in np.unique(strata)])


def per_game_variance_rotations(values, players):
    """Variance per game of a mean over deals: k x the variance of the deal means."""
    return players * values.reshape(-1, players).mean(axis=1).var(ddof=1)


def bootstrap_ratio(rng, cur, strata, rot, players, draws=200):
    """95% range of the variance ratio, resampling the current games and the deals."""
    units = rot.reshape(-1, players)
    ratios = []
    for _ in range(draws):
        pick = rng.integers(0, len(cur), len(cur))
        deals = units[rng.integers(0, len(units), len(units))]
        ratios.append(per_game_variance_current(cur[pick], strata[pick])
                      / per_game_variance_rotations(deals.reshape(-1), players))
    return np.percentile(ratios, [2.5, 97.5])


def run(label, title, players, agents, base_rules, variant_rules, deals, seed=1):
    game = core_cy.load(GAMES[label])
    began = time.time()
    out = {}
    for scheme, per_deal in (("current", 1), ("rotations", players)):
        a = play(game, players, agents, base_rules, deals, per_deal, seed)
        b = play(game, players, agents, variant_rules, deals, per_deal, seed)
        out[scheme] = (a, b)
    print(f"\n{title}: {deals} deals x {players} rotations = {deals * players} games per arm "
          f"and scheme ({time.time() - began:.0f} s)")
    rng = np.random.default_rng(seed)
    (ca, cb), (ra, rb) = out["current"], out["rotations"]
    cur_keep = ca[2] & cb[2]
    rot_keep = (ra[2] & rb[2]).reshape(-1, players).all(axis=1).repeat(players)
    print(f"  kept: current {cur_keep.sum()} games, rotations {rot_keep.sum() // players} whole"
          " deals")
    same_agents = len(set(agents)) == 1
    for name in ("seat 0 win share", "agent 0 win share"):
        if same_agents and name.startswith("agent"):
            continue
        for what in ("", "difference "):
            cur = figures(ca[0], ca[1])[name]
            rot = figures(ra[0], ra[1])[name]
            if what:
                cur = figures(cb[0], cb[1])[name] - cur
                rot = figures(rb[0], rb[1])[name] - rot
            strata = ca[1][cur_keep]
            cur, rot = cur[cur_keep], rot[rot_keep]
            v_cur = per_game_variance_current(cur, strata)
            v_rot = per_game_variance_rotations(rot, players)
            lo, hi = bootstrap_ratio(rng, cur, strata, rot, players)
            print(f"  {what}{name:<20} var/game current {v_cur:.4f}  rotations {v_rot:.4f}  "
                  f"ratio {v_cur / v_rot:5.2f} [{lo:.2f}, {hi:.2f}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, help="deals per arm (default: per setting)")
    parser.add_argument("--only", choices=[s[0] for s in SETTINGS])
    args = parser.parse_args()
    for label, title, players, agents, base, variant, deals in SETTINGS:
        if args.only and label != args.only:
            continue
        run(label, title, players, agents, base, variant, args.deals or deals)


if __name__ == "__main__":
    main()
