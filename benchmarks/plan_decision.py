"""The plan of a stop_when.delta run against the runs it plans (issue 37.2), with known
truth: 3-player games (one winner each), delta 3 points, waves of 200 games, max_games
10,000.  The runs are the rule itself (stats.cs_seat_decisions / cs_comparison_decisions
on the games' running means and sds, Bonferroni over the rows); each pilot (200 units, or
grown as pipelines.pilot_units grows it for stop_when.delta) is planned by
pipelines.simulate_decision with the pilot's means
and covariances, as services.plan does.

    nice -n 19 python -m benchmarks.plan_decision          # a few minutes
    nice -n 19 python -m benchmarks.plan_decision model    # the simulation at the true means
    nice -n 19 python -m benchmarks.plan_decision pilots   # the pilot's error alone
    nice -n 19 python -m benchmarks.plan_decision triangle # a run with a stored spread

Prints per truth: the real median games, and per way of planning the median over pilots of
planned median / real median, the share of pilots within 15%, and the share whose reported
p10-p90 range (of the "shrunk" plan, the product's) holds the real median.  "shrunk" plans
every run at the pilot's estimates shrunk towards no difference, "point" at the estimates.
"model" checks the simulation given the truth; "pilots" plans from pilots of fixed sizes.
"triangle" measures the plan of a run started with the spread the plan hands out
(stop_when.spread, pipelines.plan_spread): per pilot (grown as pipelines.pilot_units grows
it), the "shrunk" plan of the triangle at that spread against the median of real runs that
decide by the triangle (stats.triangle_decisions / triangle_seat_decisions at
stats.guarded_spread of the running sd) with the same stored spread, on one common set of
real runs per truth.
"""
from __future__ import annotations

import sys

import numpy as np

from pipelines import simulate_decision  # noqa: E402
from pipelines import stats as st  # noqa: E402

DELTA, WAVE, MAX_GAMES, ALPHA = 0.03, 200, 10_000, 0.05
FAIR = np.full(3, 1 / 3)
TRUTHS = {  # name: (seats?, base arm's seat probabilities, other arm's)
    "fair 3-player seats": (True, FAIR, None),
    "seat 0 +2.7 points": (True, FAIR + np.array([0.027, -0.0135, -0.0135]), None),
    "comparison +2 points": (False, FAIR, FAIR + np.array([0.02, -0.01, -0.01])),
    "no difference": (False, FAIR, FAIR),
}
KINDS = ("shrunk", "point")
RHO = 0.5  # the two arms' games share their winner's draw half of the time (common deals)


def games(rng, probs: np.ndarray, reps: int, n: int, u=None) -> np.ndarray:
    """reps x n x 3 win shares (one winner per game) from the seat probabilities; `u`: the
    uniforms that pick the winners (shared draws make two arms' games alike)."""
    u = rng.random((reps, n)) if u is None else u
    winner = (u[..., None] > np.cumsum(probs)[None, None, :]).sum(axis=-1)
    return np.eye(3)[np.minimum(winner, 2)]


def outcomes(rng, truth, reps: int, n: int) -> np.ndarray:
    """reps x n x 3 of what decides: the seat shares, or the paired differences."""
    seats, base, other = truth
    if seats:
        return games(rng, base, reps, n)
    u = rng.random((reps, n))
    own = np.where(rng.random((reps, n)) < RHO, u, rng.random((reps, n)))
    return games(rng, other, reps, n, own) - games(rng, base, reps, n, u)


def real_runs(rng, truth, reps: int = 2000, chunk: int = 400) -> np.ndarray:
    """Games at which the rule stops on `reps` runs of the truth (in chunks of `chunk` runs:
    the median of 400 runs alone moves by about 5% with the seed at seat 0 +2.7 points)."""
    return np.concatenate([_stops(rng, truth, chunk) for _ in range(reps // chunk)])


def _stops(rng, truth, reps: int) -> np.ndarray:
    looks, mean, sd = _running(rng, truth, reps)
    strict = ALPHA / 3
    if truth[0]:
        shown, equal = st.cs_seat_decisions(mean, sd, looks[None, :], DELTA, strict, MAX_GAMES)
        done = shown | equal
    else:
        n = looks[None, :, None]
        shown, equal = st.cs_comparison_decisions(mean, sd, n, DELTA, strict, MAX_GAMES)
        done = np.all(shown | equal, axis=-1)
    return _first(looks, done)


def _running(rng, truth, reps: int):
    """(looks, running means, running sds) of `reps` runs of the truth: reps x looks x 3."""
    looks = np.arange(WAVE, MAX_GAMES + 1, WAVE)
    x = outcomes(rng, truth, reps, MAX_GAMES)
    s1 = np.cumsum(x, axis=1)[:, looks - 1]
    s2 = np.cumsum(x * x, axis=1)[:, looks - 1]
    n = looks[None, :, None]
    return looks, s1 / n, np.sqrt(np.maximum(s2 / n - (s1 / n) ** 2, 0))


def _first(looks: np.ndarray, done: np.ndarray) -> np.ndarray:
    """Games at each run's first decided look (the last look when undecided)."""
    first = np.where(done.any(axis=1), np.argmax(done, axis=1), len(looks) - 1)
    return looks[first].astype(float)


def triangle_stops(running, seats: bool, spread: float) -> np.ndarray:
    """Games at which runs stop by the triangle with a stored `spread`, as the product judges
    them (pipelines.verdicts / comparisons): the spread guarded by each row's running sd
    (a cell's seats: the largest), Bonferroni over the three rows, looks WAVE apart."""
    looks, mean, sd = running
    strict = ALPHA / 3
    if seats:
        used = np.max(st.guarded_spread(spread, sd, looks[None, :, None]), axis=-1,
                      keepdims=True)
        shown, equal = st.triangle_seat_decisions(mean, used, looks[None, :], DELTA, strict,
                                                  WAVE)
        return _first(looks, shown | equal)
    n = looks[None, :, None]
    used = st.guarded_spread(spread, sd, n, mean)
    shown, equal = st.triangle_decisions(mean, used, n, DELTA, strict, WAVE)
    return _first(looks, np.all(shown | equal, axis=-1))


def block(pilot: np.ndarray) -> tuple:
    """The pilot as services.plan hands it to the simulation: (means, covariance, units, 1)."""
    return pilot.mean(axis=0), np.cov(pilot, rowvar=False), len(pilot), 1


def plan(pilot: np.ndarray, seats: bool, truth_kind: str, seed: int,
         spread: float | None = None) -> np.ndarray:
    looks = np.arange(WAVE, MAX_GAMES + 1, WAVE)
    return simulate_decision([block(pilot)], looks, DELTA, ALPHA, MAX_GAMES, seats=seats,
                             reps=400, seed=seed, truth=truth_kind, spread=spread)


def main(pilots: int = 80, first: int = 200) -> None:
    rng = np.random.default_rng(37)
    print("truth | real median | pilot | planning | median plan / real | within 15% | "
          "real median in p10-p90")
    for name, truth in TRUTHS.items():
        real = float(np.median(real_runs(rng, truth)))
        grown = outcomes(rng, truth, pilots, MAX_GAMES)
        for grow in (False, True):  # the pilot of `first` units, or grown as the plan does
            size = grown_size(rng, truth, grown, first) if grow else first
            samples = grown[:, :size]
            runs = {k: [plan(p, truth[0], k, i) for i, p in enumerate(samples)]
                    for k in KINDS}
            inside = np.mean([np.percentile(d, 10) <= real <= np.percentile(d, 90)
                              for d in runs["shrunk"]])
            for kind, planned in runs.items():
                ratio = np.array([np.median(p) for p in planned]) / real
                print(f"{name} | {real:.0f} | {size} | {kind} | {np.median(ratio):.2f} | "
                      f"{100 * np.mean(np.abs(ratio - 1) <= 0.15):.0f}% | "
                      f"{100 * inside:.0f}% (shrunk range)", flush=True)


def grown_size(rng, truth, grown: np.ndarray, first: int) -> int:
    """The units pipelines.pilot_units grows a stop_when.delta pilot of `first` units to
    (from the first pilot: its win shares and, for a comparison, its differences)."""
    from pipelines import pilot_units

    return pilot_units([games(rng, truth[1], 1, first)[0]], first, DELTA,
                       None if truth[0] else [grown[0, :first]])


def triangle(pilots: int = 80, first: int = 200, reps: int = 2000, seed: int = 371) -> None:
    """The plan of a run with a stored spread against such runs: per truth, `reps` real runs
    (one common set) and `pilots` pilots grown as the plan grows them; per pilot the spread
    it hands out (plan_spread), its shrunk plan of the triangle at that spread, and the
    median of the real runs judged with that stored spread."""
    from pipelines import plan_spread

    rng = np.random.default_rng(seed)
    print("truth | pilot units | spread: median (p10-p90) | real median: median over pilots | "
          "median plan / real (p10-p90) | within 15% | real median in p10-p90")
    for name, truth in TRUTHS.items():
        running = [_running(rng, truth, 400) for _ in range(reps // 400)]
        running = tuple(np.concatenate(a) if a[0].ndim > 1 else a[0] for a in zip(*running))
        grown = outcomes(rng, truth, pilots, MAX_GAMES)
        size = grown_size(rng, truth, grown, first)
        spreads, real, ratio, inside = [], [], [], []
        for i, pilot in enumerate(grown[:, :size]):
            spreads.append(plan_spread([block(pilot)], seats=truth[0]))
            real.append(float(np.median(triangle_stops(running, truth[0], spreads[-1]))))
            planned = plan(pilot, truth[0], "shrunk", i, spreads[-1])
            ratio.append(np.median(planned) / real[-1])
            inside.append(np.percentile(planned, 10) <= real[-1] <= np.percentile(planned, 90))
        ratio = np.array(ratio)
        print(f"{name} | {size} | {np.median(spreads):.4f} ({np.percentile(spreads, 10):.4f}-"
              f"{np.percentile(spreads, 90):.4f}) | {np.median(real):.0f} | "
              f"{np.median(ratio):.2f} ({np.percentile(ratio, 10):.2f}-"
              f"{np.percentile(ratio, 90):.2f}) | {100 * np.mean(np.abs(ratio - 1) <= 0.15):.0f}% | "
              f"{100 * np.mean(inside):.0f}%", flush=True)


def true_block(truth) -> tuple:
    """The decisive outcomes' true means and covariance (the covariance of the paired
    differences from a million games)."""
    seats, base, other = truth
    if seats:
        return base, np.diag(base) - np.outer(base, base)
    big = outcomes(np.random.default_rng(0), truth, 1, 1_000_000)[0]
    return other - base, np.cov(big, rowvar=False)


def at_truth(mean, cov, seats: bool, reps: int, seed: int = 5) -> np.ndarray:
    """The plan's simulation of the rule with the true means and covariance."""
    looks = np.arange(WAVE, MAX_GAMES + 1, WAVE)
    return simulate_decision([(mean, cov, 10 ** 9, 1)], looks, DELTA, ALPHA, MAX_GAMES,
                             seats=seats, reps=reps, seed=seed, truth="point")


def model(reps: int = 2000) -> None:
    """Does the plan's model match the runs when it is given the truth?  Percentiles of the
    real runs' games and of simulate_decision's at the true means; then the simulation's
    median along each truth's line (the first row x points, the others -x/2 each) and, for
    the comparison, its rows alone."""
    rng = np.random.default_rng(37)
    cut = (10, 25, 50, 75, 90)
    print("truth | p10 / p25 / median / p75 / p90: real runs | simulated at the truth")
    for name, truth in TRUTHS.items():
        real, sim = real_runs(rng, truth, reps), at_truth(*true_block(truth), truth[0], reps)
        print(f"{name} | " + " | ".join(" / ".join(f"{np.percentile(a, q):.0f}" for q in cut)
                                         for a in (real, sim)), flush=True)
    for name in ("seat 0 +2.7 points", "comparison +2 points"):
        seats, base, _ = TRUTHS[name]
        medians = []
        for x in np.arange(0, 5.01, 0.5):
            shift = np.array([x, -x / 2, -x / 2]) / 100
            line = (True, FAIR + shift, None) if seats else (False, FAIR, FAIR + shift)
            medians.append(f"{x:g}: {np.median(at_truth(*true_block(line), seats, 600)):.0f}")
        print(name.split(" +")[0], "median games along (x, -x/2, -x/2) points: "
              + ", ".join(medians), flush=True)
    cov = true_block(TRUTHS["comparison +2 points"])[1]
    print("comparison rows alone (points): " + ", ".join(
        f"{v}: {np.median(at_truth(np.array(v) / 100, cov, False, 1000)):.0f}"
        for v in ((2, -1, -1), (2, 0, 0), (1.5, 0, 0), (0, -1, -1), (0, 0, 0))))


def pilots(count: int = 40, sizes=(1000, 2000, 4000, 8000)) -> None:
    """The pilot's error alone: every simulated run at a pilot's estimates ("point") or at
    them shrunk ("shrunk"), for pilots of several sizes; median over pilots of planned
    median / real median (share within 15%)."""
    rng = np.random.default_rng(37)
    print("truth | real median | pilot units | point | shrunk")
    for name, truth in TRUTHS.items():
        real = float(np.median(real_runs(rng, truth)))
        samples = outcomes(rng, truth, count, max(sizes))
        for size in sizes:
            cols = []
            for kind in ("point", "shrunk"):
                ratio = np.array([np.median(plan(p[:size], truth[0], kind, i))
                                  for i, p in enumerate(samples)]) / real
                cols.append(f"{np.median(ratio):.2f} ({100 * np.mean(np.abs(ratio - 1) <= 0.15):.0f}%)")
            print(f"{name} | {real:.0f} | {size} | " + " | ".join(cols), flush=True)


if __name__ == "__main__":
    {"model": model, "pilots": pilots, "triangle": triangle}.get(sys.argv[1] if len(sys.argv) > 1 else "", main)()
