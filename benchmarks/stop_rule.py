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

    nice -n 19 python -m benchmarks.stop_rule       # about 2 minutes
"""
from __future__ import annotations

import os
import sys

import numpy as np
from scipy import optimize, stats

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from benchmarks.calibration import sequential  # noqa: E402

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
    main()
