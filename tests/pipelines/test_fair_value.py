"""Calibration of the fair-value search (pipelines/fair_value.py) on synthetic games of known
fair value (seeded): a seat's figure is a 0/1 outcome whose logit moves linearly with the
option, plus a deal effect shared by every value played on that deal (common deals), so the
marginal curve is not exactly the fitted logistic one.  The interval on the fair value covers
the truth 93.5-96.5% of the time; "no value in range" is claimed falsely at most 5% of the
time; the search stops with an interval as narrow as asked."""
import math

import numpy as np
import pytest

from pipelines import fair_value as fv

LOW, HIGH = 0.935, 0.965


def _player(rng, slope, fair, sigma=0.5):
    """play(values, start, count): 0/1 figures, P = expit(slope (x - fair) + deal effect)."""
    def play(values, start, count):
        deal = rng.normal(0.0, sigma, size=(count, 1))
        p = fv.expit(slope * (np.asarray(values, dtype=float)[None, :] - fair) + deal)
        return (rng.random((count, len(values))) < p).astype(float)
    return play


def _fixed_fit(rng, slope, fair, values, games):
    return fv.fit([(np.asarray(values, dtype=float), _player(rng, slope, fair)(values, 0, games))])


def test_fixed_design_interval_covers_the_fair_value():
    """One wave on common deals: Fieller's interval with the deal-clustered covariance."""
    rng = np.random.default_rng(28)
    reps, covered = 1000, 0
    for _ in range(reps):
        f = _fixed_fit(rng, 0.15, 2.6, [0, 2, 4, 6], 600)
        low, high, shape = fv.fieller(f, 0.5)
        covered += shape == "bounded" and low <= 2.6 <= high
    assert LOW <= covered / reps <= HIGH


def test_common_deals_need_the_clustered_covariance():
    """Ignoring the shared deals (a plain binomial covariance) would misstate the slope's
    error; the clustered one matches the spread of the estimates over replications."""
    rng = np.random.default_rng(5)
    fits = [_fixed_fit(rng, 0.15, 2.6, [0, 3, 6], 500) for _ in range(300)]
    spread = np.std([f.coef[1] for f in fits])
    stated = np.sqrt(np.mean([f.cov[1, 1] for f in fits]))
    assert 0.85 < stated / spread < 1.15


@pytest.mark.parametrize("fair, slope", [(2.3, 0.12), (5.6, 0.2)])
def test_sequential_search_covers_and_stops_at_the_precision(fair, slope):
    rng = np.random.default_rng(int(fair * 10))
    reps, covered, outside, games = 300, 0, 0, []
    for _ in range(reps):
        ans, f, waves = fv.search(_player(rng, slope, fair), 0, 6, 0.5, 0.5, 500, 80_000,
                                  integer=True)
        covered += ans.low <= fair <= ans.high
        outside += ans.status == "outside_range"
        if ans.status == "found":
            assert ans.half_width <= 0.5 or f.games + 2 * len(waves[-1][0]) > 80_000
            assert set(ans.nearest) <= {math.floor(fair) - 1, math.floor(fair),
                                        math.ceil(fair), math.ceil(fair) + 1}
        games.append(f.games)
    # 300 replications: a true 95% falls in 92-98% with probability 0.98 (wider than LOW, HIGH)
    assert 0.92 <= covered / reps <= 0.98
    assert outside / reps <= 0.05


def test_no_value_in_range_is_claimed_when_the_range_misses():
    rng = np.random.default_rng(3)
    found = [fv.search(_player(rng, 0.15, 9.0), 0, 6, 0.5, 0.5, 500, 40_000, integer=True)[0]
             for _ in range(40)]
    assert sum(a.status == "outside_range" for a in found) >= 36
    assert all(a.low > 6 for a in found if a.status == "outside_range")


def test_a_flat_figure_is_not_given_a_fair_value_and_says_so():
    rng = np.random.default_rng(4)
    answers = [fv.search(_player(rng, 0.0, 0.0), 0, 6, 0.5, 0.5, 500, 20_000, integer=True)[0]
               for _ in range(60)]
    flat = sum(a.status == "no_dependence" for a in answers)
    assert flat >= 50
    text = fv.sentence(answers[[a.status for a in answers].index("no_dependence")],
                       "seat_bonus_gold", "gold", "fair")
    assert "not shown to depend" in text


def test_the_figure_of_equal_seats():
    shares = np.array([[1, 0, 0], [0, 0, 1], [0.5, 0.5, 0], [0, 0, 0]], dtype=float)
    assert fv.seat_figure(shares, 2).tolist() == [0.25, 1.0, 0.25, 0.5]


def test_paired_difference_interval():
    rng = np.random.default_rng(9)
    hits = 0
    for _ in range(400):
        d = fv.paired_difference(rng.normal(0.1, 1.0, 200))
        hits += d["low"] <= 0.1 <= d["high"]
    assert 0.92 <= hits / 400 <= 0.98
