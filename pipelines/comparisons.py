"""Each arm against the baseline, paired by deal: one family of win-share tests and one of
score tests over the experiment (compare), from the merged pair tables (pipelines.paired)."""
from __future__ import annotations

import numpy as np
import polars as pl

from pipelines import paired
from pipelines import stats as st
from pipelines import sufficient as sf
from pipelines.figures import Look, spread_warning, wave_units
from pipelines.verdicts import _comparison_verdict


def _family(df: pl.DataFrame, name: str, tested: np.ndarray, look: Look,
            twins: np.ndarray | None = None) -> tuple[pl.DataFrame, float, str]:
    """p-values and adjusted p-values of the `name` tests (win or score) of every row over one
    family (the experiment's tests of that quantity only: the win-share tests decide, the
    score tests are reported beside them and never dilute them), and the interval level.
    Every seat has its own test, also seat 1 of a two-player cell; `twins` marks the rows
    that mirror the row before them (seat 1 of a two-player cell whose differences cancel in
    every game): the same test, counted once in the family and given its twin's figures."""
    col = {c: df[f"{name}_{c}"].fill_null(0).to_numpy().astype(np.float64)
           for c in ("diff", "sd", "pos", "neg")}
    p = st.paired_p_value(col["diff"], col["sd"], df["pairs"].to_numpy().astype(np.float64),
                          col["pos"], col["neg"])
    p = np.where(tested, p, np.nan)
    twins = np.zeros(len(p), bool) if twins is None else twins
    counted = np.where(twins, np.nan, p)
    m = int(np.sum(~np.isnan(counted)))
    what = "win-share" if name == "win" else "score"
    triangle = look.triangle("comparisons") and name == "win"
    if look.interim:
        return df.with_columns(pl.lit(None, pl.Float64).alias(f"{name}_p"),
                               pl.lit(None, pl.Float64).alias(f"{name}_p_adjusted")), \
            look.alpha / max(m, 1), \
            (f"interim: {'the triangle' if triangle else 'confidence sequences'}, "
             f"Bonferroni over {m} {what} test(s); no p-values")
    level = st.family_alpha(counted, look.alpha)
    adjusted = st.benjamini_hochberg(counted)
    adjusted[twins] = np.roll(adjusted, 1)[twins]
    return df.with_columns(pl.Series(f"{name}_p", p),
                           pl.Series(f"{name}_p_adjusted", adjusted)), level, \
        (f"{st.FAMILY_METHOD} over {m} {what} test(s); intervals at the matching "
         f"{100 * (1 - level):.2f}% level")


def _interval_columns(df: pl.DataFrame, name: str, look: Look, alpha: float,
                      bounded: bool) -> pl.DataFrame:
    """<name>_diff_lo/_hi: the interval that matches the row's test (st.paired_interval), or
    interim: of the win-share difference (bounded, in [-1, 1]) with a stored spread the
    triangle's, which excludes 0 exactly when the triangle says 'different', else the
    confidence sequence."""
    c = {k: df[f"{name}_{k}"].fill_null(0).to_numpy().astype(np.float64)
         for k in ("diff", "sd", "pos", "neg")}
    n = df["pairs"].to_numpy().astype(np.float64)
    if look.triangle("comparisons") and bounded:
        per_unit = np.where(df["unit"].to_numpy() == "game", 1, df["players"].to_numpy())
        half = st.triangle_half_widths(st.guarded_spread(look.spread, c["sd"], n, c["diff"]), n,
                                       look.delta, alpha, wave_units(look, n, per_unit))[0]
        low, high = c["diff"] - half, c["diff"] + half
    elif look.interim:
        half = st.cs_half_width(c["sd"], n, alpha, look.planned_games,
                                st.DIFF_PRIOR_VAR if bounded else None)
        low, high = c["diff"] - half, c["diff"] + half
    else:
        low, high = st.paired_interval(c["diff"], c["sd"], n, c["pos"], c["neg"], alpha)
    low, high = (np.where(n > 1, x, np.nan) for x in (low, high))
    return df.with_columns(pl.Series(f"{name}_diff_lo", low), pl.Series(f"{name}_diff_hi", high))


def _spread_warnings(df: pl.DataFrame, look: Look) -> list[str | None]:
    """Per row, when the stored spread is the comparisons' (look.guards): the sentence that
    says the games of its arm against the baseline (its player count's rows, each scaled by
    its own guarded spread) contradict it (figures.spread_warning), else None."""
    if not look.guards("comparisons") or df.is_empty():
        return [None] * len(df)
    c = {k: df[k].fill_null(0).to_numpy().astype(np.float64)
         for k in ("win_diff", "win_sd", "pairs")}
    used, side, bound = st.spread_guard(look.spread, c["win_sd"], c["pairs"], c["win_diff"])
    keys = list(zip(df["arm"], df["players"]))
    said = {}
    for key in dict.fromkeys(keys):
        rows = np.array([k == key for k in keys])
        said[key] = spread_warning(look, used[rows], side[rows], bound[rows],
                                   f"{key[0]} against {df['baseline'][0]}", one_spread=False)
    return [said[k] for k in keys]


def compare(path: str, baseline: str, include_truncated: bool = False, look: Look = Look(),
            stats: sf.Statistics | None = None, pairs: pl.DataFrame | None = None
            ) -> pl.DataFrame:
    """Each arm against `baseline`, paired by game_index (arms share deals game by game; with
    pairing 'rotations' paired by deal, each deal's mean over its rotations: `unit` 'deal').
    Competitive games: per (players, seat) the difference in win share and in mean score;
    cooperative games: one row per player count (seat null), the team win rate.  Intervals
    and p-values form two families over the experiment (see Look), one of the win-share tests
    (they decide the verdicts) and one of the score tests: t tests, and when fewer than 30
    pairs differ the larger of the t and the exact sign test's p-values (`test` 'sign+t'),
    with the interval that matches the test on every row (stats.paired_interval);
    `win_significant` (`score_significant`) when the adjusted p-value of the win-share (score)
    test is at most alpha, which is exactly when its interval excludes 0 (interval_level,
    score_interval_level); `decided` when the win-share question is answered at +-delta; a
    one-sentence `verdict` per row, from the win-share test (when every pair is `identical`,
    the same game in both arms, it says so: the option never changed a decision);
    `spread_warning` when the games contradict a stored spread of the comparisons
    (_spread_warnings; else null).  `stats`
    and `pairs`: the
    experiment's merged statistics and pair tables when already at hand."""
    stats = sf.statistics(path) if stats is None else stats
    arms = stats.table["arm"].unique().to_list()
    if baseline not in arms:
        raise ValueError(f"baseline {baseline!r} is not an arm of this experiment; "
                         f"arms: {sorted(arms)}")
    pairs = paired.pair_statistics(path, baseline, stats) if pairs is None else pairs
    df = paired.paired_frame(pairs, include_truncated, stats.cooperative)
    df = df.with_columns(pl.lit(baseline).alias("baseline"),
                         unit=pl.lit("deal" if stats.deals else "game"))
    everyone = np.full(len(df), True)
    df, level, win_method = _family(df, "win", everyone, look, df["mirrored"].to_numpy())
    df, score_level, score_method = _family(df, "score", everyone & (not stats.cooperative), look)
    df = _interval_columns(df, "win", look, level, bounded=True)
    df = _interval_columns(df, "score", look, score_level, bounded=False)
    excludes = lambda p: (pl.col(f"{p}_lo") > 0) | (pl.col(f"{p}_hi") < 0)  # noqa: E731
    adjusted_ok = (lambda c: pl.lit(True)) if look.interim else \
        (lambda c: pl.col(c).fill_null(1.0) <= look.alpha)
    df = df.with_columns(
        win_significant=excludes("win_diff") & adjusted_ok("win_p_adjusted"),
        score_significant=(excludes("score_diff") & adjusted_ok("score_p_adjusted")
                           & pl.lit(not stats.cooperative)),
        test=pl.when(pl.Series(st.uses_sign_test(df["win_sd"].fill_null(0).to_numpy(),
                                                 df["win_pos"].to_numpy(),
                                                 df["win_neg"].to_numpy())))
        .then(pl.lit("sign+t")).otherwise(pl.lit("t")),
        small_n=pl.col("pairs") < st.SMALL_N, level=pl.lit(level), interim=pl.lit(look.interim),
        interval_level=pl.lit(1 - level), score_interval_level=pl.lit(1 - score_level),
        p_adjust=pl.lit(win_method if stats.cooperative else f"{win_method}; {score_method}"))
    if stats.cooperative:
        df = df.with_columns(*(pl.lit(None, pl.Float64).alias(c) for c in
                               ("score_diff", "score_diff_lo", "score_diff_hi")))
    verdicts = [_comparison_verdict(r, look) for r in df.rename(
        {"win_diff": "win_share_diff"}).iter_rows(named=True)]
    df = df.rename({"win_diff": "win_share_diff"}).with_columns(
        decided=pl.Series([v[0] for v in verdicts], dtype=pl.Boolean),
        verdict=pl.Series([v[1] for v in verdicts], dtype=pl.String),
        spread_warning=pl.Series(_spread_warnings(df, look), dtype=pl.String))
    return df.select("arm", "baseline", "players", "seat", "pairs", "identical", "unit",
                     "verdict", "decided", "spread_warning",
                     "win_share_diff", "win_diff_lo", "win_diff_hi", "win_p", "win_p_adjusted",
                     "win_significant", "score_diff", "score_diff_lo", "score_diff_hi",
                     "score_p", "score_p_adjusted", "score_significant", "test", "small_n",
                     "interval_level", "score_interval_level", "p_adjust", "interim")
