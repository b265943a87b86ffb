"""The statistics' audit with known truth (issue 26), the long version of
tests/pipelines/test_calibration.py: seeded synthetic outcomes pushed through pipelines.stats.

    nice -n 19 python benchmarks/calibration.py            # about 15 minutes on one core,
                                                            # and the seat families (seats)
                                                            # about 10 CPU-minutes more
    nice -n 19 python benchmarks/calibration.py plan sequential   # some parts only

Prints, per property, the goal and the measured figure with its Monte Carlo +- (2 s.e.):
- seat test: one 70% seat among 1,000 cells of 100 games flagged (100 families), some of
  1,000 fair cells flagged (1,000 families; the public test where the family's decision
  turns, the exact p-value elsewhere, and with the exact p-values alone); some cell of 12
  fair cells of 100 games called unbalanced (BH 5%), 3 and 4 seats;
- rare rates: the least exact coverage of the rate interval at rates 0.5-5%, n 50-100, and
  the mean and least of it and of other intervals (exact ones at several levels) there, at
  rates 0.1-0.5% with n 10-50, at n 200-1,000 and at rates 0.5-50% with n 200-10,000; the
  product's with 5% two-seat ties; a second implementation of the product's (acceptance
  regions of Blaker's test, Jeffreys' bounds from scipy's beta);
- sign-test rows: the interval and the p-value agree;
- the precision rule (stop_when.half_width) at rates 1-5%, waves of 10 games: the coverage
  of the interval it stops on; the plan's pilot: a 3% seat planned within +-25%;
- the confidence sequence watched at every unit until `planned` (its horizon);
- the decision rule (stop_when.delta): a false 'different' at 20/100/1000 looks, a false
  'equivalent' at a difference of delta, and the games it needs against the fixed-n sample
  with 80% power at the same delta, at true differences 0 and 2 x delta, for independent
  and strongly correlated (rho 0.9) arms, max_games 4 and 2 x fixed-n; the plan's
  simulation of it against its runs.
"""
from __future__ import annotations

import sys

import numpy as np
from scipy import stats

from benchmarks import wilson_interval
from pipelines import stats as st


def _pm(hits: np.ndarray) -> str:
    p = float(np.mean(hits))
    return f"{100 * p:.1f}% +-{200 * np.sqrt(p * (1 - p) / hits.size):.1f}"


def seat_family(rng, k: int, reps: int = 150, cells: int = 12, n: int = 100) -> str:
    anyone = []
    for _ in range(reps):
        p = [st.seat_balance_test(np.eye(k)[rng.integers(0, k, n)])[1] for _ in range(cells)]
        anyone.append(bool((st.benjamini_hochberg(np.array(p)) <= 0.05).any()))
    return _pm(np.array(anyone))


def exact_seat_p(n: int = 100, k: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """(every win-count vector of n k-player games with a winner each, the exact p-value of
    the seat test at it): a second implementation of the seat-permutation p-value.  Turning
    every game's seats by a random rotation makes its winner a uniform seat, so the
    permutation null of win counts is Multinomial(n, 1/k) whatever was observed, and p is
    the null's probability of a T^2 at least the observed (T^2 of the seat contrasts with
    their observed covariance, as stats.seat_balance_test; a seat that never wins is left
    infinite: below 1e-12 at these sizes)."""
    grid = np.stack(np.meshgrid(*[np.arange(n + 1)] * (k - 1), indexing="ij"), -1)
    grid = grid.reshape(-1, k - 1)
    counts = np.column_stack([grid, n - grid.sum(1)])
    counts = counts[counts[:, -1] >= 0]
    share = counts[:, :-1] / n
    cov = (share[:, :, None] * np.eye(k - 1) - share[:, :, None] * share[:, None, :]) * n / (n - 1)
    centred = share - 1 / k
    t2 = np.full(len(counts), np.inf)
    full = (counts > 0).all(1)
    t2[full] = n * np.einsum("ci,ci->c", centred[full], np.linalg.solve(
        cov[full], centred[full][..., None])[..., 0])
    order = np.argsort(-t2)
    mass = np.cumsum(stats.multinomial.pmf(counts[order], n, np.full(k, 1 / k)))
    sorted_t2 = t2[order]
    last_tie = np.searchsorted(-sorted_t2, -sorted_t2 * (1 - 1e-9), side="right") - 1
    p = np.empty(len(counts))
    p[order] = mass[last_tie]
    return counts, p


DECISIVE = (5e-6, 2e-4)  # exact p-values at which the product's Monte Carlo p is computed


def large_family(rng, families: int = 1000, cells: int = 1000, n: int = 100, k: int = 4,
                 first: float = 0.7, with_bad: int = 100) -> tuple:
    """(bad cell flagged, some fair cell flagged, the same with the exact p-values, cells at
    which the public function was called) per family of `cells` cells of n k-player games
    (BH 5%): every cell fair, and in the first `with_bad` families one cell's seat 0 winning
    `first` of its games instead (its p-value drawn to 400,000 permutations each time).  A
    cell's p-value depends only on its win counts: the public seat_balance_test (tests =
    cells) is called once per count vector whose exact p (exact_seat_p) lies in DECISIVE,
    where the family's decision could turn on its Monte Carlo error, and on the bad cell;
    elsewhere the exact p stands in (below 5e-6 the staged test's p is under the first
    threshold, 5e-5, either way; above 2e-4 its draws reach 10 hits before it could fall
    under twice the threshold of any rank a fair family reaches)."""
    counts, exact = exact_seat_p(n, k)
    index = np.full((n + 1,) * (k - 1), -1)
    index[tuple(counts[:, :-1].T)] = np.arange(len(counts))
    cache: dict = {}

    def product_p(row: int) -> float:
        if row not in cache:
            shares = np.repeat(np.eye(k), counts[row], axis=0)
            cache[row] = st.seat_balance_test(shares, tests=cells)[1]
        return cache[row]

    flagged, anyone, anyone_exact = [], [], []
    for family in range(families):
        rows = index[tuple(rng.multinomial(n, np.full(k, 1 / k), size=cells)[:, :-1].T)]
        p = exact[rows]
        anyone_exact.append(bool((st.benjamini_hochberg(p) <= 0.05).any()))
        near = (p >= DECISIVE[0]) & (p < DECISIVE[1])
        p[near] = [product_p(r) for r in rows[near]]
        anyone.append(bool((st.benjamini_hochberg(p) <= 0.05).any()))
        if family < with_bad:
            bad = rng.multinomial(n, [first] + [(1 - first) / (k - 1)] * (k - 1))
            p[0] = product_p(int(index[tuple(bad[:-1])]))
            flagged.append(bool(st.benjamini_hochberg(p)[0] <= 0.05))
    return np.array(flagged), np.array(anyone), np.array(anyone_exact), len(cache)


def rare_coverage() -> float:
    worst = 1.0
    for n in range(50, 101, 5):
        x = np.arange(n + 1)
        low, high = st.rate_interval(x / n, x / n * (1 - x / n), n)
        for p in np.linspace(0.005, 0.05, 46):
            worst = min(worst, float((stats.binom.pmf(x, n, p) * ((low <= p) & (p <= high))).sum()))
    return worst


def _grid_coverage(interval, ns, rates) -> np.ndarray:
    """Exact coverage (len(ns) x len(rates)) of `interval(x, n)` for 0/1 outcomes."""
    out = np.zeros((len(ns), len(rates)))
    for i, n in enumerate(ns):
        x = np.arange(n + 1)
        low, high = interval(x, n)
        pmf = stats.binom.pmf(x[None, :], n, rates[:, None])
        out[i] = (pmf * ((low[None] <= rates[:, None]) & (rates[:, None] <= high[None]))).sum(1)
    return out


def _beta_interval(x, n, alpha, shift: float, modified: bool):
    """Jeffreys (shift 0.5) or Clopper-Pearson (shift None) at `alpha`; `modified`: Brown,
    Cai & DasGupta's bounds at 0 and 1 successes (the product's interval until round 6)."""
    x = np.asarray(x, np.float64)
    if shift is None:
        low = stats.beta.ppf(alpha / 2, np.maximum(x, 1e-12), n - x + 1)
        high = stats.beta.ppf(1 - alpha / 2, x + 1, np.maximum(n - x, 1e-12))
    else:
        low = stats.beta.ppf(alpha / 2, x + shift, n - x + shift)
        high = stats.beta.ppf(1 - alpha / 2, x + shift, n - x + shift)
    low, high = np.where(x <= 0, 0.0, low), np.where(x >= n, 1.0, high)
    if modified:
        edge = (alpha / 2) ** (1 / n)
        low, high = np.where(x <= 1, 0.0, low), np.where(x >= n - 1, 1.0, high)
        high = np.where(x <= 0, 1 - edge, high)
        low = np.where(x >= n, edge, low)
    return low, high


def _wilson_cc(x, n, alpha=0.05):
    """Wilson's score interval with continuity correction (Newcombe 1998, method 4)."""
    x, z = np.asarray(x, np.float64), stats.norm.isf(alpha / 2)
    p, z2 = x / n, z * z
    low = (2 * n * p + z2 - 1 - z * np.sqrt(np.maximum(z2 - 2 - 1 / n + 4 * p * (n * (1 - p)
                                                                                  + 1), 0)))
    high = (2 * n * p + z2 + 1 + z * np.sqrt(np.maximum(z2 + 2 - 1 / n + 4 * p * (n * (1 - p)
                                                                                   - 1), 0)))
    low, high = low / (2 * (n + z2)), high / (2 * (n + z2))
    return np.where(x <= 0, 0.0, np.clip(low, 0, 1)), np.where(x >= n, 1.0, np.clip(high, 0, 1))


def _wilson_modified(x, n, alpha=0.05):
    """Wilson's score interval as Brown, Cai & DasGupta (2001) modify it: at 1 to 2 (n <= 50)
    or 3 (n <= 100) successes the lower bound is the Poisson one, chi2(alpha/2, 2x) / 2n
    (mirrored for failures)."""
    x = np.asarray(x, np.float64)
    low, high = wilson_interval(x / n, n, stats.norm.isf(alpha / 2))
    top = 2 if n <= 50 else 3
    poisson = lambda k: 0.5 * stats.chi2.ppf(alpha / 2, 2 * np.maximum(k, 1e-9)) / n  # noqa: E731
    low = np.where((x >= 1) & (x <= top), poisson(x), low)
    high = np.where((n - x >= 1) & (n - x <= top), 1 - poisson(n - x), high)
    return low, high


def _exact_test_coverage(ns, rates, level: float, blaker: bool) -> np.ndarray:
    """Exact coverage (len(ns) x len(rates)) of the interval that inverts an exact test at
    `level`: Blaker's (2000; p-value: the observed tail plus the opposite tail's points no
    more likely than it) or Sterne's (the points no more likely than the observed count).
    The interval is the set of rates the test accepts, so it covers p exactly when the
    count is in p's acceptance region."""
    out = np.zeros((len(ns), len(rates)))
    for i, n in enumerate(ns):
        x = np.arange(n + 1)
        for j, p in enumerate(rates):
            pmf = stats.binom.pmf(x, n, p)
            rank = (np.minimum(stats.binom.sf(x - 1, n, p), stats.binom.cdf(x, n, p))
                    if blaker else pmf)
            order = np.argsort(rank)
            below = np.searchsorted(rank[order], rank * (1 + 1e-7), side="right") - 1
            out[i, j] = pmf[np.cumsum(pmf[order])[below] > 1 - level].sum()
    return out


RATE_GRIDS = {  # the goal's grid (mean <= 96.5%, least >= 93%), and its dips
    "grid": (np.arange(50, 101, 5), np.linspace(0.005, 0.05, 46)),
    "tiny": (np.array([10, 20, 30, 40, 50]), np.linspace(0.001, 0.005, 41)),
    "long": (np.array([200, 300, 500, 700, 1000]), np.linspace(0.005, 0.05, 46)),
    "large": (np.array([200, 500, 1000, 2000, 5000, 10_000]), np.linspace(0.005, 0.5, 100)),
}


def _frontier_line(name: str, grids: dict) -> str:
    grid, tiny, long = grids["grid"], grids["tiny"], grids["long"]
    line = (f"{name} | mean {100 * grid.mean():.2f}%, least {100 * grid.min():.2f}%, in "
            f"93.5-96.5%: {100 * np.mean((grid >= .935) & (grid <= .965)):.0f}% of the grid | "
            f"least at 0.1-0.5%, n 10-50: {100 * tiny.min():.2f}% | n 200-1,000: least "
            f"{100 * long.min():.2f}%, mean {100 * long.mean():.2f}%")
    if "large" in grids:
        line += (f" | rates 0.5-50%, n 200-10,000: least {100 * grids['large'].min():.2f}%, "
                 f"mean {100 * grids['large'].mean():.2f}%")
    return line


def _shown_reference_coverage(ns, rates, few: int = 10, level: float = 0.94) -> np.ndarray:
    """Exact coverage of the product's interval computed another way: below `few` wins or
    losses, the acceptance region of Blaker's test at `level` (the pmf enumerated); from
    `few` on, Jeffreys' 95% bounds (scipy's beta quantiles)."""
    out = np.zeros((len(ns), len(rates)))
    for i, n in enumerate(ns):
        x = np.arange(n + 1)
        low = np.where(x > 0, stats.beta.ppf(0.025, x + 0.5, n - x + 0.5), 0.0)
        high = np.where(x < n, stats.beta.ppf(0.975, x + 0.5, n - x + 0.5), 1.0)
        few_x = np.minimum(x, n - x) < few
        for j, p in enumerate(rates):
            pmf = stats.binom.pmf(x, n, p)
            rank = np.minimum(stats.binom.sf(x - 1, n, p), stats.binom.cdf(x, n, p))
            order = np.argsort(rank)
            below = np.searchsorted(rank[order], rank * (1 + 1e-9), side="right") - 1
            accepted = np.cumsum(pmf[order])[below] > 1 - level
            covered = np.where(few_x, accepted, (low <= p) & (p <= high))
            out[i, j] = pmf[covered].sum()
    return out


def tied_coverage(ns, rates, ties: float = 0.05) -> np.ndarray:
    """Exact coverage of stats.rate_interval for a seat's win share when `ties` of the games
    end in a two-seat tie: the seat wins alone with probability (1 - ties) p and shares a tie
    (1/2) with probability 2 ties p (its mean share is p); every (wins, ties) count of n
    games enumerated with its multinomial probability."""
    out = np.zeros((len(ns), len(rates)))
    for i, n in enumerate(ns):
        wins, tied = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
        keep = wins + tied <= n
        wins, tied = wins[keep], tied[keep]
        mean = (wins + tied / 2) / n
        low, high = st.rate_interval(mean, np.maximum((wins + tied / 4) / n - mean ** 2, 0), n)
        counts = np.stack([wins, tied, n - wins - tied], axis=1)
        for j, p in enumerate(rates):
            chances = [(1 - ties) * p, 2 * ties * p, 1 - (1 + ties) * p]
            pmf = stats.multinomial.pmf(counts, n, chances)
            out[i, j] = pmf[(low <= p) & (p <= high)].sum()
    return out


def _mid_p(x, n, alpha=0.05):
    """Mid-p Clopper-Pearson (half the observed count's probability in each tail; Berry &
    Armitage 1995), with Clopper-Pearson's exact bound at 0 (and n) successes."""
    x = np.asarray(x, np.float64)

    def solve(tail, target):  # the rate at which tail(rate), increasing, reaches target
        lo, hi = np.zeros_like(x), np.ones_like(x)
        for _ in range(60):
            mid = (lo + hi) / 2
            up = tail(mid) < target
            lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
        return (lo + hi) / 2

    at_least = lambda p: stats.binom.sf(x - 1, n, p) - stats.binom.pmf(x, n, p) / 2  # noqa: E731
    at_most = lambda p: stats.binom.cdf(x, n, p) - stats.binom.pmf(x, n, p) / 2  # noqa: E731
    low = solve(at_least, alpha / 2)
    high = solve(lambda p: -at_most(p), -alpha / 2)
    edge = (alpha / 2) ** (1 / n)
    return (np.where(x <= 0, 0.0, np.where(x >= n, edge, low)),
            np.where(x >= n, 1.0, np.where(x <= 0, 1 - edge, high)))


def rate_frontier() -> list[str]:
    """Mean and least exact coverage over rates 0.5-5%, n 50-100 (and the least at rates
    0.1-0.5%, n 10-50, and at rates 0.5-5%, n 200-1,000) of the product's interval and of
    the standard ones beside it."""
    product = lambda x, n: st.rate_interval(x / n, x / n * (1 - x / n), n)  # noqa: E731
    rows = [("stats.rate_interval (the product)", product)]
    for alpha in (0.05, 0.06, 0.07):
        rows.append((f"modified Jeffreys at {100 * (1 - alpha):g}%",
                     lambda x, n, a=alpha: _beta_interval(x, n, a, 0.5, True)))
    rows.append(("Jeffreys, unmodified, 95%", lambda x, n: _beta_interval(x, n, .05, .5, False)))
    for alpha in (0.05, 0.07, 0.08):
        rows.append((f"Clopper-Pearson at {100 * (1 - alpha):g}%",
                     lambda x, n, a=alpha: _beta_interval(x, n, a, None, False)))
    rows.append(("Wilson with continuity correction", _wilson_cc))
    rows.append(("Wilson, Brown-Cai-DasGupta's modification", _wilson_modified))
    rows.append(("mid-p Clopper-Pearson, Clopper-Pearson's bound at 0", _mid_p))
    out = [_frontier_line(name, {key: _grid_coverage(interval, *grid)
                                 for key, grid in RATE_GRIDS.items()})
           for name, interval in rows]
    out.insert(1, _frontier_line("the product computed another way (Blaker's acceptance "
                                 "regions below 10 events, Jeffreys' from 10)",
                                 {key: _shown_reference_coverage(*grid)
                                  for key, grid in RATE_GRIDS.items()}))
    out.insert(2, _frontier_line("the product, 5% two-seat ties", {
        key: tied_coverage(*RATE_GRIDS[key]) for key in ("grid", "tiny", "long")}))
    for blaker in (True, False):
        for level in (0.93, 0.935, 0.94, 0.95):
            out.append(_frontier_line(
                f"{'Blaker' if blaker else 'Sterne'} (exact) at {100 * level:g}%",
                {key: _exact_test_coverage(*grid, level, blaker)
                 for key, grid in RATE_GRIDS.items()}))
    return out


def sign_rows(rng, reps: int = 20_000) -> str:
    agree = []
    for _ in range(reps):
        n = int(rng.integers(5, 60))
        d = rng.choice([-1.0, 0.0, 1.0], p=[0.1, 0.8, 0.1], size=n)
        pos, neg = (d > 0).sum(), (d < 0).sum()
        if not st.uses_sign_test(d.std(ddof=1), pos, neg):
            continue
        low, high = st.paired_interval(d.mean(), d.std(ddof=1), n, pos, neg)
        p = st.paired_p_value(d.mean(), d.std(ddof=1), n, pos, neg)
        agree.append(bool(((low > 0) | (high < 0)) == (p <= 0.05)))
    return _pm(np.array(agree))


def _differences(rng, reps, n, shift, rho):
    """Paired differences of two arms' 0/1 results at base rate 0.3 (arm B + shift): with
    probability rho the two games share their result (common deals)."""
    a = rng.random((reps, n)) < 0.3
    b_own = rng.random((reps, n)) < 0.3 + shift
    same = rng.random((reps, n)) < rho
    b = np.where(same & (shift == 0), a, b_own)
    if shift:
        b = np.where(same, a | (rng.random((reps, n)) < shift / 0.7), b_own)
    return b.astype(float) - a


def sequential(rng, delta=0.05, rho=0.0, looks=20, reps=2000, shift=0.0, alpha=0.05, cap=4):
    """(wrong decisions, games to decide, fixed-n games) of the stop_when.delta rule
    (st.cs_comparison_decisions) on one paired difference, max_games = cap x the fixed-n
    sample (the sequences are tuned for max_games, as in a run)."""
    sd_truth = np.sqrt(_differences(rng, 1, 200_000, shift, rho).var())
    fixed = float(st.games_for_power(sd_truth, delta))
    total = int(cap * fixed)
    d = _differences(rng, reps, total, shift, rho)
    at = np.unique(np.linspace(total / looks, total, looks).astype(int))
    s1, s2 = np.cumsum(d, axis=1)[:, at - 1], np.cumsum(d * d, axis=1)[:, at - 1]
    mean = s1 / at
    sd = np.sqrt(np.maximum(s2 / at - mean ** 2, 0))
    differ, equal = st.cs_comparison_decisions(mean, sd, at, delta, alpha, total)
    decided = differ | equal
    first = np.where(decided.any(axis=1), np.argmax(decided, axis=1), len(at) - 1)
    games = at[first]
    wrong = differ[np.arange(reps), first] if shift == 0 else equal[np.arange(reps), first]
    wrong &= decided[np.arange(reps), first]
    return wrong, games, fixed


def horizon(rng, alpha, reps, units=4000, chunk=1000) -> np.ndarray:
    """Runs whose mean of N(0, 1) units leaves the confidence sequence (tuned for `units`) at
    some unit from the 10th to the `units`-th: every unit a look, as often as a run could."""
    n = np.arange(1, units + 1)
    half = st.cs_half_width(1.0, n, alpha, units)[10:]
    out = []
    for _ in range(reps // chunk):
        s = np.cumsum(rng.standard_normal((chunk, units), dtype=np.float32), axis=1)
        out.append(np.any(np.abs(s / n)[:, 10:] > half, axis=1))
    return np.concatenate(out)


def _shown_interval(x, n):
    return st.rate_interval(x / n, x / n * (1 - x / n), n)


def precision_rule(rng, rate, half_width, counted=True, reps=2000, wave=10, total=20_000):
    """(coverage at the stop of the interval shown, mean games) of stop_when.half_width at
    waves of `wave` games (counted: st.precise_enough; else the interval's width alone)."""
    looks = np.arange(wave, total + 1, wave)
    wins = np.cumsum(rng.random((reps, total), dtype=np.float32) < rate, axis=1,
                     dtype=np.int32)[:, looks - 1]
    key, back = np.unique(wins.astype(np.int64) * 1_000_000 + looks, return_inverse=True)
    x, n = key // 1_000_000, key % 1_000_000
    low, high = _shown_interval(x, n)
    stop = (st.precise_enough(x / n, low, high, n, half_width) if counted
            else (high - low) / 2 < half_width)[back].reshape(wins.shape)
    first = np.where(stop.any(axis=1), np.argmax(stop, axis=1), len(looks) - 1)
    x, n = wins[np.arange(reps), first], looks[first]
    low, high = _shown_interval(x, n)
    return (low <= rate) & (rate <= high), n.mean()


def pilot_accuracy(rng, rate=0.03, half_width=0.01, pilot=200, reps=4000) -> tuple:
    """Share of pilots whose planned games for a seat winning `rate` (st.games_for_precision)
    are within +-25% of those at the true rate, with the pilot the plan plays (extended by
    pipelines.pilot_units) and with `pilot` games alone; and the mean pilot size."""
    from pipelines import pilot_units

    truth = float(st.games_for_precision(rate, rate * (1 - rate), half_width))
    first = rng.random((reps, pilot)) < rate
    sizes = np.array([pilot_units([w[:, None].astype(float)], pilot) for w in first])
    wins = first.sum(axis=1) + rng.binomial(sizes - pilot, rate)
    out = []
    for x, n in ((wins, sizes), (first.sum(axis=1), np.full(reps, pilot))):
        p, back = np.unique(x / n, return_inverse=True)  # a few hundred distinct rates
        planned = st.games_for_precision(p, p * (1 - p), half_width)[back]
        out.append(np.abs(planned / truth - 1) <= 0.25)
    return out[0], out[1], sizes.mean()


def plan_of_decision(rng, shift, rho=0.5, delta=0.05, reps=1500) -> str:
    """The plan's simulation of the stop_when.delta rule (pipelines.simulate_decision, at the
    true mean and sd) against the rule run on 0/1 outcomes, waves of 1% of max_games."""
    import pipelines

    sd_truth = np.sqrt(_differences(rng, 1, 200_000, shift, rho).var())
    total = int(4 * float(st.games_for_power(sd_truth, delta)))
    looks = np.linspace(total / 100, total, 100).astype(int)
    _, games, _ = sequential(rng, delta, rho, 100, reps, shift)
    sim = pipelines.simulate_decision([(np.array([shift]), np.atleast_2d(sd_truth ** 2), 1e12,
                                        1)], looks, delta, 0.05, total, seats=False, reps=reps)
    return (f"mean {sim.mean():.0f} vs {games.mean():.0f}, p90 {np.percentile(sim, 90):.0f} vs "
            f"{np.percentile(games, 90):.0f}")


def main(parts: list[str]) -> None:
    """parts: any of seats, rates, precision, plan, sequential (default: all)."""
    rng = np.random.default_rng(2026)
    print("property | goal | measured", flush=True)
    for name, part in (("seats", _seats), ("rates", _rates), ("precision", _precision),
                       ("plan", _plan), ("sequential", _sequential)):
        if not parts or name in parts:
            part(rng)


def _seats(rng) -> None:
    flagged, anyone, exact, called = large_family(rng)
    print(f"1,000 cells x 100 4-player games, one seat 0 at 70%: flagged (BH 5%) | >= 95% "
          f"| {int(flagged.sum())} of {flagged.size}")
    print(f"1,000 fair cells x 100 games: some cell flagged | <= 5% | {_pm(anyone)} "
          f"({called} count vectors through seat_balance_test); with the exact p-values "
          f"{_pm(exact)}")
    for k in (3, 4):
        print(f"seat test, 12 fair cells x 100 games, {k} seats: some cell unbalanced | <= 5% | "
              f"{seat_family(rng, k)}")


def _rates(rng) -> None:
    print(f"rare rates 0.5-5%, n 50-100: least exact coverage | >= 92% | "
          f"{100 * rare_coverage():.1f}% (exact)")
    for line in rate_frontier():
        print(f"rate interval: {line}")
    print(f"sign-test rows: interval agrees with its p-value | 100% | {sign_rows(rng)}")


def _precision(rng) -> None:
    worst = (1.0, None)
    for half_width in (0.005, 0.01, 0.02):
        for rate in (0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05):
            covered, games = precision_rule(rng, rate, half_width)
            if covered.mean() < worst[0]:
                worst = (covered.mean(), covered, rate, half_width)
    print(f"stop_when.half_width, rates 1-5%, +-0.5/1/2 points, waves of 10: least coverage "
          f"| >= 94% | {_pm(worst[1])} (at {100 * worst[2]:g}%, +-{100 * worst[3]:g})")
    covered, _ = precision_rule(rng, 0.05, 0.02, counted=False)
    print(f"  the same without the {st.PRECISION_MIN_COUNT}-win count, 5%, +-2 points | | "
          f"{_pm(covered)}")


def _plan(rng) -> None:
    planned, alone, size = pilot_accuracy(rng)
    print(f"plan: a 3% seat planned within +-25% (pilot of 200 grown to {size:.0f} games on "
          f"average) | high | {_pm(planned)}; 200 games alone {_pm(alone)}")
    for shift in (0.0, 0.1):
        print(f"plan of stop_when.delta, true difference {shift}: simulated vs the rule's "
              f"games | within 15% | {plan_of_decision(rng, shift)}")


def _sequential(rng) -> None:
    for alpha, reps in ((0.05, 6000), (0.01, 20000)):
        print(f"confidence sequence at {alpha:g}, every unit a look until planned: leaves the "
              f"truth | <= {alpha:g} | {_pm(horizon(rng, alpha, reps))}")
    for looks in (20, 100, 1000):
        wrong, _, _ = sequential(rng, looks=looks, reps=1000 if looks == 1000 else 2000)
        print(f"stop_when.delta, no difference, {looks} looks: 'different' | 3-5%, <= 5% | "
              f"{_pm(wrong)}")
    wrong, _, _ = sequential(rng, looks=100, shift=0.05)
    print(f"stop_when.delta, difference delta, 100 looks: 'equivalent' | <= 5% | {_pm(wrong)}")
    for cap in (4, 2):
        for rho in (0.0, 0.9):
            ratios = []
            for shift in (0.0, 0.1):
                wrong, games, fixed = sequential(rng, rho=rho, looks=100, shift=shift, cap=cap)
                ratios.append(games.mean() / fixed)
                print(f"max_games {cap} x fixed-n, rho {rho}, true difference {shift}: games to "
                      f"decide / fixed-n 80% power ({fixed:.0f}) | | mean "
                      f"{games.mean() / fixed:.2f}, p90 {np.percentile(games, 90) / fixed:.2f}; "
                      f"wrong {_pm(wrong)}")
            print(f"max_games {cap} x fixed-n, rho {rho}: mean ratio over 0 and 2 x delta | <= 1 "
                  f"| {np.mean(ratios):.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
