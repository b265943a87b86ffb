"""Each arm against the baseline, paired by deal, in one family of tests (compare)."""
from __future__ import annotations

import numpy as np
import polars as pl

from pipelines import stats as st
from pipelines.dataset import CELL, SEAT, _data, _one_row_per_seat, _team_share
from pipelines.figures import Look, _mean_columns
from pipelines.verdicts import _comparison_verdict


# ---- comparisons -----------------------------------------------------------------------------
def _signs(diff: pl.Expr, name: str) -> list[pl.Expr]:
    return [diff.mean().alias(f"{name}_diff"), diff.std().alias(f"{name}_sd"),
            (diff > 0).sum().alias(f"{name}_pos"), (diff < 0).sum().alias(f"{name}_neg")]


def _paired_differences(lf: pl.LazyFrame, baseline: str, cooperative: bool) -> pl.LazyFrame:
    if cooperative:  # one team result per game: seat 0 stands for the team
        seats = lf.select(*CELL, "game_index", share=_team_share(),
                          score=pl.col("seat_score").cast(pl.List(pl.Float64)).list.mean(),
                          seat=pl.lit(None, pl.Int8))
    else:
        seats = _one_row_per_seat(lf).select(*SEAT, "game_index", "score", "share")
    base = (seats.filter(pl.col("arm") == baseline).drop("arm")
            .rename({"score": "base_score", "share": "base_share"}))
    return (seats.filter(pl.col("arm") != baseline)
            .join(base, on=["players", "game_index", "seat"], how="inner", nulls_equal=True)
            .group_by(SEAT)
            .agg(pairs=pl.len(), *_signs(pl.col("share") - pl.col("base_share"), "win"),
                 *_signs(pl.col("score") - pl.col("base_score"), "score"))
            .sort(SEAT))


def _tested(df: pl.DataFrame, cooperative: bool) -> tuple[np.ndarray, np.ndarray]:
    """Which rows' win and score tests enter the family.  Two players: seat 1's win share
    difference mirrors seat 0's, so it is one test; a cooperative game: the team result only."""
    win = ~((df["players"] == 2) & (df["seat"] == 1)).fill_null(False).to_numpy()
    score = np.full(len(df), not cooperative)
    return win, score


def _family(df: pl.DataFrame, cooperative: bool, look: Look) -> tuple[pl.DataFrame, float, str]:
    """p-values, adjusted p-values and the interval level of every row, over one family."""
    win_in, score_in = _tested(df, cooperative)
    col = {c: df[c].fill_null(0).to_numpy().astype(np.float64) for c in df.columns
           if c.startswith(("win_", "score_")) or c == "pairs"}
    win_p = st.paired_p_value(col["win_diff"], col["win_sd"], col["pairs"], col["win_pos"],
                              col["win_neg"])
    score_p = st.paired_p_value(col["score_diff"], col["score_sd"], col["pairs"],
                                col["score_pos"], col["score_neg"])
    family = np.concatenate([np.where(win_in, win_p, np.nan), np.where(score_in, score_p, np.nan)])
    m = int(np.sum(~np.isnan(family)))
    if look.interim:
        level = look.alpha / max(m, 1)
        return df.with_columns(*(pl.lit(None, pl.Float64).alias(c) for c in
                                 ("win_p", "win_p_adjusted", "score_p", "score_p_adjusted"))), \
            level, f"interim: confidence sequences, Bonferroni over {m} test(s); no p-values"
    q = st.benjamini_hochberg(family)
    n = len(df)
    win_q = np.where(win_in, q[:n], np.nan)
    if n:  # the mirrored seat of a two-player cell shows its twin's test
        twin = np.flatnonzero(~win_in)
        win_p[twin], win_q[twin] = win_p[twin - 1], q[:n][twin - 1]
    score_q = np.where(score_in, q[n:], np.nan)
    level = st.family_alpha(family, look.alpha)
    return df.with_columns(win_p=pl.Series(win_p), win_p_adjusted=pl.Series(win_q),
                           score_p=pl.Series(np.where(score_in, score_p, np.nan)),
                           score_p_adjusted=pl.Series(score_q)), level, \
        (f"{st.FAMILY_METHOD} over {m} test(s); intervals at the matching "
         f"{100 * (1 - level):.2f}% level")


def compare(path: str, baseline: str, include_truncated: bool = False, look: Look = Look()
            ) -> pl.DataFrame:
    """Each arm against `baseline`, paired by game_index (arms share deals game by game; with
    pairing 'rotations' paired by deal, each deal's mean over its rotations: `unit` 'deal').
    Competitive games: per (players, seat) the difference in win share and in mean score;
    cooperative games: one row per player count (seat null), the team win rate.  Intervals
    and p-values form one family over the experiment (see Look): t tests, or the exact sign
    test when fewer than 30 pairs differ; `significant` when the adjusted p-value is at most
    alpha and the interval excludes 0 (the two agree by construction); `decided` when the
    win-share question is answered at +-delta; a one-sentence `verdict` per row."""
    data = _data(path, include_truncated)
    arms = data.rows.select(pl.col("arm").unique()).collect()["arm"].to_list()
    if baseline not in arms:
        raise ValueError(f"baseline {baseline!r} is not an arm of this experiment; "
                         f"arms: {sorted(arms)}")
    df = _paired_differences(data.units, baseline, data.cooperative).collect()
    df = df.with_columns(pl.lit(baseline).alias("baseline"),
                         unit=pl.lit("deal" if data.deals else "game"))
    df, level, method = _family(df, data.cooperative, look)
    df = _mean_columns(df, "win_diff", "win_sd", "pairs", "win_diff", look, level, scale=0.5)
    df = _mean_columns(df, "score_diff", "score_sd", "pairs", "score_diff", look, level)
    excludes = lambda p: (pl.col(f"{p}_lo") > 0) | (pl.col(f"{p}_hi") < 0)  # noqa: E731
    adjusted_ok = (lambda c: pl.lit(True)) if look.interim else \
        (lambda c: pl.col(c).fill_null(1.0) <= look.alpha)
    df = df.with_columns(
        win_significant=excludes("win_diff") & adjusted_ok("win_p_adjusted"),
        score_significant=(excludes("score_diff") & adjusted_ok("score_p_adjusted")
                           & pl.lit(not data.cooperative)),
        test=pl.when(pl.Series(st.uses_sign_test(df["win_sd"].fill_null(0).to_numpy(),
                                                 df["win_pos"].to_numpy(),
                                                 df["win_neg"].to_numpy())))
        .then(pl.lit("sign")).otherwise(pl.lit("t")),
        small_n=pl.col("pairs") < st.SMALL_N, level=pl.lit(level), interim=pl.lit(look.interim),
        interval_level=pl.lit(1 - level), p_adjust=pl.lit(method))
    df = df.with_columns(significant=pl.col("win_significant") | pl.col("score_significant"))
    if data.cooperative:
        df = df.with_columns(*(pl.lit(None, pl.Float64).alias(c) for c in
                               ("score_diff", "score_diff_lo", "score_diff_hi")))
    verdicts = [_comparison_verdict(r, look) for r in df.rename(
        {"win_diff": "win_share_diff"}).iter_rows(named=True)]
    df = df.rename({"win_diff": "win_share_diff"}).with_columns(
        decided=pl.Series([v[0] for v in verdicts], dtype=pl.Boolean),
        verdict=pl.Series([v[1] for v in verdicts], dtype=pl.String))
    return df.select("arm", "baseline", "players", "seat", "pairs", "unit", "verdict", "decided",
                     "win_share_diff", "win_diff_lo", "win_diff_hi", "win_p", "win_p_adjusted",
                     "win_significant", "score_diff", "score_diff_lo", "score_diff_hi",
                     "score_p", "score_p_adjusted", "score_significant", "significant",
                     "test", "small_n", "interval_level", "p_adjust", "interim")
