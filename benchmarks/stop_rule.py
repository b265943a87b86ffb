"""The stop_when.delta rule's cost per true difference theta, beside two standard designs
(issue 37.1): games to decide / n80 (the fixed-n sample for 80% power at delta, 5%
two-sided) at theta = 0, delta/2, delta, 2 delta, with max_games 4 x n80 and 100 looks.

- rule: stats.cs_comparison_decisions on paired 0/1 differences (benchmarks.calibration's
  sequential: base rate 0.3, rho 0 and 0.9), delta 0.05;
- GSPRT: Sobel-Wald's two-sided SPRT (two one-sided SPRTs of 0 against +-delta, alpha/2 and
  beta = 5% each, sigma known), the same 100 looks, undecided at max_games;
- group-sequential: Pampallona-Tsiatis (O'Brien-Fleming type, Delta = 0) with an inner
  futility wedge, K = 20 equally spaced looks, alpha = beta = 5%, its constants solved here
  by Monte Carlo on Brownian motion (so each error is 5% at K = 20);
- double triangular test (Whitehead): straight boundaries on the sum's scale (efficacy
  |X| >= a0 + a1 tau, futility |X| <= Z tau - g0 - g1 tau, tau = games / n80) that meet at
  tau_max, so every run decides there; a0, g0 from the closed-form crossing probability of
  Brownian motion over a line (alpha two-sided, beta one-sided, each boundary alone), moved
  inwards by Siegmund's 0.583 sqrt(look spacing) for discrete looks ("Christmas tree"), and
  the same with the corrections multiplied to spend the errors of exactly these 100 looks
  (tuned on them: valid for this schedule only).  A candidate measured here, not the rule.
- the same triangle with its intercepts solved for a run watched continuously (a numerical
  recursion on the density of X, Armitage-McPherson-Rowe, the errors 0.95 x 5% each way)
  and moved in at each look by 0.583 sqrt(the information since the run's previous look)
  (Whitehead's Christmas tree), so it needs no schedule in advance: on Brownian motion
  (sigma known) at 100, 50, 20, 10 equal and 30 uneven looks, and on the paired 0/1
  outcomes (rho 0 and 0.9) with sigma estimated at each look (one pseudo-unit of variance
  1, as the product's sequences), at 100 and 20 looks; and with the variance of the
  equivalence decision taken where the claim is tested (the three-point distribution of
  the differences, -1 / 0 / +1 matched to the mean and sd, exponentially tilted to a mean
  of delta); with the information from a spread that does not move with the run's later
  games: the run's own frozen after a quarter of max_games (an internal pilot), an
  independent 200-unit pilot's (a spread stored with the run), the true one (an oracle);
  and with the sum scaled by that spread (a z statistic) instead of the look's estimate.
  PT beside it planned with the true sd and with the same pilot's.  Candidates measured
  here, not the rule.

    nice -n 19 python -m benchmarks.stop_rule       # about 8 minutes
    nice -n 19 python -m benchmarks.stop_rule tree  # the candidates alone, about 6
    nice -n 19 python -m benchmarks.stop_rule stored  # the rule with a stored spread
    nice -n 19 python -m benchmarks.stop_rule guard   # its guard, the spread stored wrong
"""
from __future__ import annotations

import sys

import numpy as np
from scipy import optimize, stats

from benchmarks import wilson_interval
from benchmarks.calibration import _differences, sequential
from pipelines import stats as st
from pipelines.stopping import PLAN_SPREAD_Z

Z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)  # n80 = (Z sigma / delta)^2
THETAS = (0.0, 0.5, 1.0, 2.0)  # in units of delta


def _paths(rng, reps: int, looks: int, drift: float) -> np.ndarray:
    """reps x looks Brownian motion with drift `drift` per unit time on [0, 1] at t = k /
    looks."""
    steps = rng.standard_normal((reps, looks)) / np.sqrt(looks) + drift / looks
    return np.cumsum(steps, axis=1)


def gsprt(rng, theta: float, reps: int = 20_000, looks: int = 100, cap: float = 4.0,
          alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """(games / n80, share decided wrongly) of Sobel-Wald's two-sided SPRT at theta (in
    units of delta), on the standardized scale: n80 = 1 unit of delta^2 / (Z sigma)^2."""
    upper, lower = np.log((1 - beta) / (alpha / 2)), np.log(beta / (1 - alpha / 2))
    info = cap * Z ** 2  # delta^2 n / sigma^2 at max_games
    b = _paths(rng, reps, looks, theta * np.sqrt(info)) * np.sqrt(info)  # sum in delta units
    t = np.arange(1, looks + 1) / looks * info
    up = b - t / 2  # log LR of +delta against 0
    down = -b - t / 2
    different = (up >= upper) | (down >= upper)
    equal = (up <= lower) & (down <= lower)
    done = different | equal
    first = np.where(done.any(axis=1), np.argmax(done, axis=1), looks - 1)
    rows = np.arange(reps)
    wrong = different[rows, first] if theta == 0 else equal[rows, first] if theta >= 1 else \
        np.zeros(reps, bool)
    return float(np.mean((first + 1) / looks * cap)), float(np.mean(wrong))


def _pt_errors(c1: float, eta: float, rng_seed: int = 5, reps: int = 200_000, k: int = 20):
    """(P(reject | 0), P(accept | delta), expected looks at 0 and at delta) of a
    Pampallona-Tsiatis design (Delta = 0) with constants c1 and eta = delta sqrt(I_K)."""
    rng = np.random.default_rng(rng_seed)
    t = np.arange(1, k + 1) / k
    c2 = eta - c1
    out = []
    for drift in (0.0, eta):
        z = _paths(rng, reps, k, drift) / np.sqrt(t)
        reject = np.abs(z) >= c1 / np.sqrt(t)
        accept = np.abs(z) < np.maximum(eta * np.sqrt(t) - c2 / np.sqrt(t), 0)
        accept[:, -1] |= ~reject[:, -1]
        done = reject | accept
        first = np.argmax(done, axis=1)
        out.append((reject[np.arange(reps), first], accept[np.arange(reps), first] &
                    ~reject[np.arange(reps), first]))
    return float(np.mean(out[0][0])), float(np.mean(out[1][1]))


def pampallona_tsiatis(k: int = 20, alpha: float = 0.05, beta: float = 0.05):
    """(c1, eta) with both errors at their targets."""
    def gap(x):
        a, b = _pt_errors(x[0], x[1], k=k)
        return [a - alpha, b - beta]
    return optimize.fsolve(gap, [2.1, 3.8], epsfcn=1e-3)


def pt_cost(rng, theta: float, c1: float, eta: float, k: int = 20, reps: int = 50_000):
    """(games / n80, share wrong) of the design at theta (units of delta)."""
    t = np.arange(1, k + 1) / k
    c2 = eta - c1
    z = _paths(rng, reps, k, theta * eta) / np.sqrt(t)
    reject = np.abs(z) >= c1 / np.sqrt(t)
    accept = np.abs(z) < np.maximum(eta * np.sqrt(t) - c2 / np.sqrt(t), 0)
    accept[:, -1] |= ~reject[:, -1]
    first = np.argmax(reject | accept, axis=1)
    rows = np.arange(reps)
    wrong = reject[rows, first] if theta == 0 else accept[rows, first] & ~reject[rows, first] \
        if theta >= 1 else np.zeros(reps, bool)
    return float(np.mean((first + 1) / k) * (eta / Z) ** 2), float(np.mean(wrong))


def _line_crossing(a0: float, a1: float, horizon: float) -> float:
    """P(Brownian motion crosses a0 + a1 t for some t <= horizon), a0 > 0."""
    root = np.sqrt(horizon)
    return float(stats.norm.sf((a0 + a1 * horizon) / root) + np.exp(-2 * a0 * a1)
                 * stats.norm.cdf((a1 * horizon - a0) / root))


def triangular_design(a1: float, g1: float, spacing: float, efficacy_shift: float = 1.0,
                      futility_shift: float = 1.0, alpha: float = 0.05, beta: float = 0.05):
    """(a0, g0, tau_max) of the double triangular test with slopes a1, g1 (n80 units), looks
    every `spacing` n80; the shifts multiply Siegmund's correction 0.583 sqrt(spacing)."""
    step, horizon = 0.5826 * np.sqrt(spacing), 2.0
    for _ in range(200):
        a0 = optimize.brentq(lambda x: 2 * _line_crossing(x, a1, horizon) - alpha, 1e-9, 30)
        g0 = optimize.brentq(lambda x: _line_crossing(x, g1, horizon) - beta, 1e-9, 30)
        a0, g0 = a0 - efficacy_shift * step, g0 - futility_shift * step
        following = (a0 + g0) / (Z - a1 - g1)
        if abs(following - horizon) < 1e-10:
            break
        horizon = following
    return a0, g0, horizon


def triangular_cost(rng, theta: float, design, a1: float, g1: float, reps: int = 20_000,
                    looks: int = 100, cap: float = 4.0) -> tuple[float, float]:
    """(games / n80, share wrong) of the double triangular test at theta (units of delta),
    100 looks up to cap x n80 (it decides by tau_max)."""
    a0, g0, _ = design
    tau = np.arange(1, looks + 1) / looks * cap
    x = np.abs(_paths(rng, reps, looks, theta * Z * np.sqrt(cap)) * np.sqrt(cap))
    different = x >= a0 + a1 * tau
    equal = (x <= Z * tau - g0 - g1 * tau) & ~different
    first = np.argmax(different | equal, axis=1)
    first = np.where((different | equal).any(axis=1), first, looks - 1)
    rows = np.arange(reps)
    wrong = different[rows, first] if theta == 0 else equal[rows, first] if theta >= 1 else \
        np.zeros(reps, bool)
    return float(np.mean(tau[first])), float(np.mean(wrong))


TRIANGULAR = {  # name: (a1, g1, efficacy shift, futility shift), slopes the best on a 0.1 grid
    "double triangular (Christmas tree)": (1.1, 0.9, 1.0, 1.0),
    "double triangular tuned to these 100 looks": (1.2, 0.9, 1.2, 2.0),
}


SIEGMUND = st.SIEGMUND
SLOPES = st.TRIANGLE_SLOPES  # efficacy and futility slopes, shares of the drift at delta (n80 units)


def continuous_triangle() -> tuple[float, float]:
    """(a0, g0) with both errors 0.95 x 5% when watched continuously: the product's design
    (stats.triangle_design, solved by a numerical recursion on X's density)."""
    return st.triangle_design(0.05)[:2]


def _christmas_tree(design, tau, spacing):
    """(efficacy, futility) boundaries on |X| at information tau, spacing since the last look."""
    a0, g0 = design
    a1, g1 = (x * Z for x in SLOPES)
    moved = SIEGMUND * np.sqrt(spacing)
    return (np.maximum(a0 - moved, 0) + a1 * tau,
            (Z - g1) * tau - np.maximum(g0 - moved, 0))


def _first(different, equal, theta):
    """(index of the first decision, wrong at it) per run (the last look when none)."""
    done = different | equal
    first = np.where(done.any(axis=1), np.argmax(done, axis=1), done.shape[1] - 1)
    rows = np.arange(len(done))
    wrong = different[rows, first] if theta == 0 else equal[rows, first] if theta >= 1 else \
        np.zeros(len(done), bool)
    return first, wrong


def tree_on_brownian(rng, design, taus, theta: float, reps: int = 20_000):
    """(games / n80, share wrong) at the looks `taus` (n80 units), sigma known."""
    taus = np.asarray(taus)
    spacing = np.diff(np.concatenate([[0.0], taus]))
    x = np.abs(np.cumsum(rng.standard_normal((reps, len(taus))) * np.sqrt(spacing)
                         + theta * Z * spacing, axis=1))
    efficacy, futility = _christmas_tree(design, taus, spacing)
    different = x >= efficacy
    first, wrong = _first(different, (x <= futility) & ~different, theta)
    return float(np.mean(taus[first])), float(np.mean(wrong))


def _tilted_sd(mean, sd, delta):
    """The sd of the -1 / 0 / +1 distribution with this mean and sd, exponentially tilted to
    a mean of delta (towards the estimate's sign; unchanged beyond delta)."""
    m = np.abs(mean)
    q = np.clip(sd ** 2 + m ** 2, 0, 1)
    up, down, zero = (np.maximum(v, 1e-3) for v in ((q + m) / 2, (q - m) / 2, 1 - q))
    low, high = np.zeros(m.shape), np.full(m.shape, 30.0)
    for _ in range(60):
        lam = (low + high) / 2
        a, b = up * np.exp(lam), down * np.exp(-lam)
        below = (a - b) / (zero + a + b) < delta
        low, high = np.where(below, lam, low), np.where(below, high, lam)
    a, b = up * np.exp(low), down * np.exp(-low)
    var = (a + b) / (zero + a + b) - ((a - b) / (zero + a + b)) ** 2
    return np.where(m >= delta, sd, np.sqrt(np.maximum(var, sd ** 2)))


INFORMATION = {  # the sd that measures a look's information on the outcomes
    "estimated": "the sd estimated at the look",
    "tilted": "the equivalence decision's: the -1/0/+1 distribution tilted to a mean of delta",
    "bounded": "the Wilson upper bound of the sd (z 1, sd^2 as a rate); the statistic's: estimated",
    "internal": "the run's own sd frozen at its first look after a quarter of max_games (n80 "
                "here: an internal pilot, Wittes-Brittain), the running one before",
    "pilot": "the sd of an independent pilot of PILOT_UNITS units, fixed in advance (what a "
             "spread stored with the run from the plan's pilot gives)",
    "planned": "the true sd, as a plan would give it (an oracle)",
}
PILOT_UNITS = 200  # the plan's default pilot (services.plan.PILOT_GAMES)


def _outcome_sums(rng, reps, total, at, theta, rho, delta, chunk=500):
    """(sums, sums of squares) of the paired 0/1 differences at the looks `at`, in chunks."""
    s1, s2 = np.zeros((reps, len(at))), np.zeros((reps, len(at)))
    for lo in range(0, reps, chunk):
        d = _differences(rng, min(chunk, reps - lo), total, theta * delta, rho)
        s1[lo:lo + chunk], s2[lo:lo + chunk] = (np.cumsum(d, axis=1)[:, at - 1],
                                                np.cumsum(d * d, axis=1)[:, at - 1])
    return s1, s2


def _pilot_sd(rng, reps, theta, rho, delta, units=PILOT_UNITS):
    """Per run, the sd of an independent pilot's differences (one pseudo-unit of variance 1)."""
    d = _differences(rng, reps, units, theta * delta, rho)
    return np.sqrt((units * d.var(axis=1) + 1.0) / (units + 1))


def tree_on_outcomes(rng, design, looks, theta: float, rho: float, information: str,
                     statistic: str = "t", delta: float = 0.05, reps: int = 2000, cap: int = 4):
    """(games / n80, share wrong) on paired 0/1 outcomes (benchmarks.calibration), tau =
    n / n80 with n80 from the sd INFORMATION[information] says; the statistic |X| = |mean|
    sqrt(n) / sd x sqrt(tau) with sd the one estimated at the look (statistic "t", one
    pseudo-unit of variance 1, as the product's sequences) or the information's ("z": the
    sum on the information scale, Whitehead's Z = S / sigma^2); `looks` equal waves or
    shares of max_games."""
    sd_truth = np.sqrt(_differences(rng, 1, 200_000, theta * delta, rho).var())
    fixed = float((Z * sd_truth / delta) ** 2)
    total = int(cap * fixed)
    shares = np.linspace(1 / looks, 1, looks) if np.isscalar(looks) else np.asarray(looks)
    at = np.unique(np.maximum((shares * total).astype(int), 1))
    s1, s2 = _outcome_sums(rng, reps, total, at, theta, rho, delta)
    mean = s1 / at
    var = np.maximum(s2 / at - mean ** 2, 0)
    sd = np.sqrt((at * var + 1.0) / (at + 1))
    spacing = np.diff(np.concatenate([[0], at]))

    def decisions(stat_sd, info_sd):
        n80 = (Z * info_sd / delta) ** 2
        efficacy, futility = _christmas_tree(design, at / n80, spacing / n80)
        x = np.abs(mean) * np.sqrt(at) / stat_sd * np.sqrt(at / n80)
        return x >= efficacy, x <= futility

    frozen = int(np.argmax(at >= total / cap))
    info = {"estimated": sd, "tilted": sd, "planned": np.full_like(sd, sd_truth),
            "internal": np.concatenate([sd[:, :frozen],
                                        np.repeat(sd[:, [frozen]], len(at) - frozen, 1)], 1),
            "pilot": np.repeat(_pilot_sd(rng, reps, theta, rho, delta)[:, None], len(at), 1),
            "bounded": np.sqrt(wilson_interval(np.clip(var, 0, 1), at, 1.0)[1])}[information]
    different, equal = decisions(sd if statistic == "t" else info, info)
    if information == "tilted":
        tilted = _tilted_sd(mean, sd, delta)
        equal = decisions(tilted, tilted)[1]
    first, wrong = _first(different, equal & ~different, theta)
    return float(np.mean(at[first]) / fixed), float(np.mean(wrong))


def pt_on_outcomes(rng, c1: float, eta: float, theta: float, rho: float, k: int = 20,
                   delta: float = 0.05, reps: int = 2000, information: str = "planned"):
    """(games / n80, share wrong) of the Pampallona-Tsiatis design on the paired 0/1
    outcomes: planned with the true sd ("planned") or, per run, with an independent pilot's
    ("pilot", PILOT_UNITS units): its max sample (eta / Z)^2 n80, K equal looks; each look's
    z statistic with the sd estimated there (a t-type statistic, as run in practice)."""
    sd_truth = np.sqrt(_differences(rng, 1, 200_000, theta * delta, rho).var())
    fixed = float((Z * sd_truth / delta) ** 2)
    plan_sd = (np.full(reps, sd_truth) if information == "planned"
               else _pilot_sd(rng, reps, theta, rho, delta))
    t = np.arange(1, k + 1) / k
    at = np.maximum((t * (eta / Z) ** 2 * (Z * plan_sd[:, None] / delta) ** 2).astype(int), 2)
    d = _differences(rng, reps, int(at.max()), theta * delta, rho)
    rows = np.arange(reps)[:, None]
    s1, s2 = np.cumsum(d, axis=1)[rows, at - 1], np.cumsum(d * d, axis=1)[rows, at - 1]
    sd = np.sqrt((at * np.maximum(s2 / at - (s1 / at) ** 2, 0) + 1.0) / (at + 1))
    z = np.abs(s1 / at) * np.sqrt(at) / sd
    reject = z >= c1 / np.sqrt(t)
    accept = (z < np.maximum(eta * np.sqrt(t) - (eta - c1) / np.sqrt(t), 0)) & ~reject
    accept[:, -1] |= ~reject[:, -1]
    first, wrong = _first(reject, accept, theta)
    return float(np.mean(at[rows[:, 0], first]) / fixed), float(np.mean(wrong))


def _uneven(count: int = 30, cap: float = 4.0, seed: int = 3) -> np.ndarray:
    widths = np.random.default_rng(seed).uniform(0.2, 1.8, count)
    return np.cumsum(widths) / widths.sum() * cap


def _row(cells) -> str:
    return " / ".join(f"{c:.2f} ({100 * w:.1f}%)" for c, w in cells)


def main_tree(rng) -> None:
    c1, eta = pampallona_tsiatis()
    for information in ("planned", "pilot"):
        for rho in (0.0, 0.9):
            print(f"  PT K=20 on 0/1 outcomes, planned with the {information} sd, rho {rho}: "
                  + _row(pt_on_outcomes(rng, c1, eta, t, rho, information=information)
                         for t in THETAS), flush=True)
    design = continuous_triangle()
    print(f"Christmas tree on the continuous triangle: a0 {design[0]:.3f}, g0 {design[1]:.3f}, "
          f"slopes {SLOPES} x Z; games / n80 (wrong) at theta 0 / delta/2 / delta / 2 delta")
    for name, taus in (("100 looks", np.arange(1, 101) / 100 * 4),
                       ("50 looks", np.arange(1, 51) / 50 * 4),
                       ("20 looks", np.arange(1, 21) / 20 * 4),
                       ("10 looks", np.arange(1, 11) / 10 * 4), ("30 uneven looks", _uneven())):
        print(f"  Brownian, {name}: "
              + _row(tree_on_brownian(rng, design, taus, t) for t in THETAS), flush=True)
    for information in INFORMATION:
        for rho in (0.0, 0.9):
            for looks in ((100, 20, _uneven() / 4) if information in ("estimated", "tilted")
                          else (100,)):
                name = f"{looks} looks" if np.isscalar(looks) else "30 uneven looks"
                print(f"  0/1 outcomes, information: {information}, rho {rho}, {name}: "
                      + _row(tree_on_outcomes(rng, design, looks, t, rho, information)
                             for t in THETAS), flush=True)
    for information in ("internal", "pilot", "planned"):  # the sum scaled by a fixed sd
        for rho in (0.0, 0.9):
            print(f"  0/1 outcomes, z statistic, information: {information}, rho {rho}, 100 "
                  "looks: " + _row(tree_on_outcomes(rng, design, 100, t, rho, information, "z",
                                                   reps=4000) for t in THETAS), flush=True)


def stored_rule(rng, theta: float, rho: float, pilot: int | None, factor: float = 1.0,
                guard: bool = True, delta: float = 0.05, reps: int = 4000, looks: int = 100,
                cap: int = 4) -> tuple[float, float]:
    """(games / n80, share wrong) of the product's rule for a run with a stored spread
    (st.triangle_decisions at the spread st.guarded_spread gives, 100 equal looks, max_games
    cap x n80 at the true sd) on the paired 0/1 outcomes: the stored spread is, per run, the
    one a plan hands out from an independent pilot of `pilot` units (its sd raised by
    PLAN_SPREAD_Z of its errors, pipelines.plan_spread), or with pilot None the true sd,
    times `factor` (below 1: a spread stored too low);
    `guard` False: the stored spread alone."""
    sd_truth = np.sqrt(_differences(rng, 1, 200_000, theta * delta, rho).var())
    fixed = float((Z * sd_truth / delta) ** 2)
    total = int(cap * fixed)
    at = np.unique(np.maximum((np.linspace(1 / looks, 1, looks) * total).astype(int), 1))
    s1, s2 = _outcome_sums(rng, reps, total, at, theta, rho, delta)
    mean = s1 / at
    sd = np.sqrt(np.maximum(s2 / at - mean ** 2, 0))
    if pilot is None:
        stored = np.full(reps, sd_truth)
    else:  # the spread a plan hands out (pipelines.plan_spread): the sd's upper bound
        d = _differences(rng, reps, pilot, theta * delta, rho)
        stored = st.sd_bound(d.std(axis=1, ddof=1), pilot, d.mean(axis=1), PLAN_SPREAD_Z)
    spread = stored[:, None] * factor
    if guard:
        spread = st.guarded_spread(spread, sd, at[None, :], mean)
    wave = np.diff(np.concatenate([[0], at]))[None, :]
    different, equal = st.triangle_decisions(mean, spread, at[None, :], delta, 0.05, wave)
    first, wrong = _first(different, equal & ~different, theta)
    return float(np.mean(at[first]) / fixed), float(np.mean(wrong))


def main_stored(rng) -> None:
    """The rule of a run with a stored spread (issue 37.1) beside GSPRT and PT K=20."""
    c1, eta = pampallona_tsiatis()
    print("games / n80 (wrong: 'different' at 0, 'equivalent' at delta) at theta 0 / delta/2 / "
          "delta / 2 delta; 100 looks, max_games 4 x n80", flush=True)
    print("  GSPRT, Brownian (sigma known): " + _row(gsprt(rng, t) for t in THETAS), flush=True)
    print("  PT K=20, Brownian (sigma known): " + _row(pt_cost(rng, t, c1, eta) for t in THETAS),
          flush=True)
    for rho in (0.0, 0.9):
        print(f"  PT K=20 on 0/1 outcomes, true sd, rho {rho}: "
              + _row(pt_on_outcomes(rng, c1, eta, t, rho) for t in THETAS), flush=True)
    for pilot, reps in ((4000, 16_000), (800, 4000), (None, 4000)):
        for rho in (0.0, 0.9):
            name = "the true sd" if pilot is None else f"a {pilot}-unit pilot"
            print(f"  rule, spread stored from {name}, guarded, rho {rho}, {reps:,} runs: "
                  + _row(stored_rule(rng, t, rho, pilot, reps=reps) for t in THETAS),
                  flush=True)
    for factor in (0.5, 0.8, 0.9):  # a spread stored too low: the guard's work
        for guard in (False, True):
            for rho in (0.0, 0.9):
                print(f"  rule, spread stored at {factor} x the true sd, "
                      f"{'guarded' if guard else 'unguarded'}, rho {rho}: "
                      + _row(stored_rule(rng, t, rho, None, factor, guard) for t in (0.0, 1.0)),
                      flush=True)


def _paired(rng, reps: int, total: int, shift: float, rho: float) -> np.ndarray:
    """reps x total paired differences of two arms' 0/1 results at a base rate of 0.3, arm B
    `shift` better; with probability rho the two results are the same (common deals)."""
    a = rng.random((reps, total)) < 0.3
    b = rng.random((reps, total)) < 0.3 + shift
    same = rng.random((reps, total)) < rho
    return np.where(same & (shift == 0), a, b).astype(float) - a


def guard_runs(rng, theta: float, rho: float, reps: int, factor: float = 1.0, delta: float = 0.05,
          guard: bool = True):
    """(games / n80, 'different', 'equivalent') of runs of the stored-spread rule at 100 looks
    up to 4 x n80, the spread stored at `factor` x the true sd, guarded as the product does
    (or not)."""
    sd = np.sqrt(_paired(rng, 1, 200_000, theta * delta, rho).var())
    n80 = (st.power_quantile(0.05) * sd / delta) ** 2
    total = int(4 * n80)
    looks = np.unique(np.linspace(total / 100, total, 100).astype(int))
    d = _paired(rng, reps, total, theta * delta, rho)
    s1, s2 = np.cumsum(d, axis=1)[:, looks - 1], np.cumsum(d * d, axis=1)[:, looks - 1]
    mean = s1 / looks
    running = np.sqrt(np.maximum(s2 / looks - mean ** 2, 0))
    spread = st.guarded_spread(factor * sd, running, looks, mean) if guard else factor * sd
    different, equivalent = st.triangle_decisions(mean, spread, looks, delta, 0.05,
                                                  np.diff(np.concatenate([[0], looks])))
    done = different | equivalent
    first = np.where(done.any(axis=1), np.argmax(done, axis=1), len(looks) - 1)
    rows = np.arange(reps)
    return looks[first] / n80, different[rows, first], equivalent[rows, first] & \
        ~different[rows, first]


GUARD_ROWS = [(rho, delta) for rho in (0.0, 0.5, 0.9) for delta in (0.05, 0.02)]


def main_guard(rng, reps: int = 1000) -> None:
    """The guard (stats.guarded_spread) with the spread stored at 0.5x, 1x and 2x the truth
    (issue 52): false 'different' at no difference, false 'equivalent' at delta, the runs
    undecided at max_games (4 x n80) and the games / n80 at no difference."""
    print("rho | delta | stored | 'different' at 0 | 'equivalent' at delta | undecided at 0 | "
          "games / n80 at 0")
    print("|---|---|---|---|---|---|---|")
    for rho, delta in GUARD_ROWS:
        for factor in (0.5, 1.0, 2.0):
            games, different, equivalent = guard_runs(rng, 0.0, rho, reps, factor, delta)
            _, _, at_delta = guard_runs(rng, 1.0, rho, reps, factor, delta)
            print(f"| {rho:g} | {100 * delta:g} points | {factor:g} x | "
                  f"{100 * different.mean():.1f}% | {100 * at_delta.mean():.1f}% | "
                  f"{100 * (~different & ~equivalent).mean():.1f}% | {games.mean():.2f} |",
                  flush=True)


def main() -> None:
    rng = np.random.default_rng(371)
    c1, eta = pampallona_tsiatis()
    print(f"Pampallona-Tsiatis K=20: c1 {c1:.3f}, eta {eta:.3f}, max sample "
          f"{(eta / Z) ** 2:.2f} x n80")
    print("theta | rule rho 0 | rule rho 0.9 | GSPRT | group-sequential (PT K=20)   "
          "(wrong: 'different' at 0, 'equivalent' at delta; at delta/2 neither is wrong)")
    for theta in THETAS:
        cells = []
        for rho in (0.0, 0.9):
            wrong, games, fixed = sequential(rng, rho=rho, looks=100, shift=0.05 * theta,
                                             cap=4, reps=2000)
            shown = f"{100 * np.mean(wrong):.1f}%" if theta in (0, 1) else "-"
            cells.append(f"{games.mean() / fixed:.2f} (wrong {shown})")
        g, gw = gsprt(rng, theta)
        p, pw = pt_cost(rng, theta, c1, eta)
        print(f"{theta:g} delta | {cells[0]} | {cells[1]} | {g:.2f} (wrong {100 * gw:.1f}%) | "
              f"{p:.2f} (wrong {100 * pw:.1f}%)", flush=True)
    for name, (a1, g1, shift_a, shift_g) in TRIANGULAR.items():
        design = triangular_design(a1, g1, 4.0 / 100, shift_a, shift_g)
        cells = [triangular_cost(rng, theta, design, a1, g1) for theta in THETAS]
        print(f"{name}: a0 {design[0]:.2f}, a1 {a1}, g0 {design[1]:.2f}, g1 {g1}, decides by "
              f"{design[2]:.2f} x n80 | " + " / ".join(
                  f"{c:.2f} (wrong {100 * w:.1f}%)" for c, w in cells), flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["tree"]:
        main_tree(np.random.default_rng(372))
    elif sys.argv[1:] == ["stored"]:
        main_stored(np.random.default_rng(373))
    elif sys.argv[1:] == ["guard"]:
        main_guard(np.random.default_rng(52))
    else:
        main()
        main_tree(np.random.default_rng(372))
