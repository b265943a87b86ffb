"""Statistics over an experiment's results (Polars lazy scans of the Parquet dataset).

    >>> import pipelines
    >>> pipelines.summary("results/my-experiment")          # per arm, player count and seat
    >>> pipelines.compare("results/my-experiment", "basic")  # each arm vs the baseline

The dataset is the one services.runner writes (<root>/arm=.../players=.../shard-*.parquet);
every file holds its own arm and players columns, so the scan reads no partition paths.
Pipelines never need the engine, except to ask the catalogue whether a game is cooperative.
"""
from __future__ import annotations

import numpy as np
import polars as pl
from scipy.stats import chi2 as chi2_distribution

from pipelines.stats import holm, mean_interval, normal_p_value, wilson_interval

CELL = ["arm", "players"]
SEAT = ["arm", "players", "seat"]

__all__ = ["scan", "summary", "cell_summary", "seat_summary", "agent_summary",
           "end_reasons", "breakdown", "compare"]


# ---- reading -----------------------------------------------------------------------------
def scan(path: str) -> pl.LazyFrame:
    """A lazy scan of every shard of an experiment (a local folder or a URI such as
    s3://bucket/results/<id>).  FileNotFoundError when no shard is written yet."""
    path = str(path).rstrip("/")
    if path.startswith("file://"):
        path = path[len("file://"):]
    if "://" not in path:
        import glob
        if not glob.glob(f"{path}/**/*.parquet", recursive=True):
            raise FileNotFoundError(f"no result files under {path}")
    return pl.scan_parquet(f"{path}/**/*.parquet", hive_partitioning=False)


def _one_row_per_seat(lf: pl.LazyFrame) -> pl.LazyFrame:
    """(arm, players, game_index, seat, agent, score, share): the list columns exploded."""
    return (lf.select(*CELL, "game_index", agent="seat_agent", score="seat_score",
                      share="seat_win_share")
            .with_columns(seat=pl.int_ranges(0, pl.col("score").list.len(), dtype=pl.Int8))
            .explode("seat", "agent", "score", "share"))


# ---- small named expressions ----------------------------------------------------------------
def _wilson(p: str, n: str, prefix: str) -> list[pl.Expr]:
    low, high = wilson_interval(pl.col(p), pl.col(n))
    return [low.alias(f"{prefix}_lo"), high.alias(f"{prefix}_hi")]


def _mean_ci(mean: str, sd: str, n: str, prefix: str) -> list[pl.Expr]:
    low, high = mean_interval(pl.col(mean), pl.col(sd), pl.col(n))
    return [low.alias(f"{prefix}_lo"), high.alias(f"{prefix}_hi")]


def _agent_of_seat() -> pl.Expr:
    """The seat's agent, or "rotated" when the agent in that seat changes from game to game."""
    return (pl.when(pl.col("agent").n_unique() == 1).then(pl.col("agent").first())
            .otherwise(pl.lit("rotated")).alias("agent"))


def _top_two_gap(scores: pl.Series) -> pl.Series:
    """Per game, best score minus second best (0 for a tie at the top).  Numpy partition on
    the flat list values: a per-row list sort in Polars is ~50x slower on a million games."""
    lengths = scores.list.len().to_numpy().astype(np.int64)
    flat = scores.explode().to_numpy()
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    gap = np.full(len(scores), np.nan)
    for width in np.unique(lengths):
        if width < 2:
            continue
        rows = np.flatnonzero(lengths == width)
        block = flat[starts[rows, None] + np.arange(width)]
        top = np.partition(block, width - 2, axis=1)
        gap[rows] = top[:, -1] - top[:, -2]
    return pl.Series(gap, dtype=pl.Float64)


def _margin() -> pl.Expr:
    """Score of the first minus score of the second, per game."""
    return pl.col("seat_score").map_batches(_top_two_gap, return_dtype=pl.Float64,
                                            is_elementwise=True)


# ---- per seat ----------------------------------------------------------------------------
def _seat_query(lf: pl.LazyFrame) -> pl.LazyFrame:
    return (_one_row_per_seat(lf).group_by(SEAT)
            .agg(_agent_of_seat(), games=pl.len(), wins=pl.col("share").sum(),
                 score_mean=pl.col("score").mean(), score_sd=pl.col("score").std())
            .with_columns(win_share=pl.col("wins") / pl.col("games"))
            .with_columns(*_wilson("win_share", "games", "win"),
                          *_mean_ci("score_mean", "score_sd", "games", "score"))
            .select(*SEAT, "agent", "games", "wins", "win_share", "win_lo", "win_hi",
                    "score_mean", "score_sd", "score_lo", "score_hi")
            .sort(SEAT))


def seat_summary(path: str) -> pl.DataFrame:
    """Per (arm, players, seat): agent, games, wins, win share with its 95% Wilson interval,
    mean score with its 95% interval."""
    return _seat_query(scan(path)).collect()


# ---- per cell ----------------------------------------------------------------------------
def _cell_query(lf: pl.LazyFrame) -> pl.LazyFrame:
    return (lf.group_by(CELL)
            .agg(games=pl.len(),
                 tie_rate=(pl.col("num_winners") > 1).mean(),
                 margin_mean=_margin().mean(),
                 length_mean=pl.col("length").mean(),
                 **{f"length_p{q}": pl.col("length").quantile(q / 100, "nearest")
                    for q in (10, 50, 90)},
                 team_wins=pl.col("seat_win_share").list.max().sum())
            .sort(CELL))


def _end_reason_query(lf: pl.LazyFrame) -> pl.LazyFrame:
    return (lf.group_by(*CELL, "end_reason").agg(games=pl.len())
            .with_columns(share=pl.col("games") / pl.col("games").sum().over(CELL))
            .sort(*CELL, "end_reason"))


def _seat_balance(seats: pl.DataFrame) -> pl.DataFrame:
    """Chi-square test of seat balance per cell: observed wins per seat against an equal
    share of all wins (a goodness-of-fit test of the winner's seat)."""
    chi = (seats.group_by(CELL)
           .agg(k=pl.len(), wins=pl.col("wins"), total=pl.col("wins").sum())
           .explode("wins")
           .with_columns(expected=pl.col("total") / pl.col("k"))
           .group_by(CELL)
           .agg(k=pl.col("k").first(), seat_chi2=(
               (pl.col("wins") - pl.col("expected")) ** 2 / pl.col("expected")).sum()))
    p = chi2_distribution.sf(chi["seat_chi2"].to_numpy(), np.maximum(chi["k"].to_numpy() - 1, 1))
    return chi.with_columns(seat_p_value=pl.Series(p, dtype=pl.Float64)).drop("k")


def _is_cooperative(games: list[str]) -> bool:
    import core_cy
    try:
        return any(core_cy.load(g).info()["cooperative"] for g in games)
    except ValueError:  # a game no longer in the catalogue: treat as competitive
        return False


def _finish_cells(cells, reasons, seats, games) -> pl.DataFrame:
    cooperative = _is_cooperative(games)
    cells = cells.with_columns(team_win_rate=pl.col("team_wins") / pl.col("games"))
    cells = cells.with_columns(*_wilson("team_win_rate", "games", "team_win"))
    if not cooperative:  # a competitive game has no team: keep the columns, empty
        cells = cells.with_columns(pl.lit(None, pl.Float64).alias(c) for c in
                                   ("team_win_rate", "team_win_lo", "team_win_hi"))
    cells = cells.drop("team_wins").join(_seat_balance(seats), on=CELL, how="left")
    if cooperative:  # every seat shares the team result: no seat balance to test
        cells = cells.with_columns(pl.lit(None, pl.Float64).alias(c)
                                   for c in ("seat_chi2", "seat_p_value"))
    wide = (reasons.with_columns(pl.format("end_{}", "end_reason").alias("reason"))
            .pivot(on="reason", index=CELL, values="share", sort_columns=True))
    cells = cells.join(wide, on=CELL, how="left")
    return cells.with_columns(pl.col("^end_.*$").fill_null(0.0)).sort(CELL)


CELL_COLUMNS = ["seat_chi2", "seat_p_value", "tie_rate", "margin_mean", "length_mean",
                "length_p10", "length_p50", "length_p90", "team_win_rate", "team_win_lo",
                "team_win_hi"]


def _collect(lf: pl.LazyFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(per-seat frame, per-cell frame), computed in one pass over the scan."""
    seats, cells, reasons, games = pl.collect_all(
        [_seat_query(lf), _cell_query(lf), _end_reason_query(lf),
         lf.select(pl.col("game").unique())])
    cells = _finish_cells(cells, reasons, seats, games["game"].to_list())
    return seats, cells.select(*CELL, "games", *CELL_COLUMNS, pl.col("^end_.*$"))


def cell_summary(path: str) -> pl.DataFrame:
    """Per (arm, players): games, seat-balance chi-square and p-value, tie rate, mean margin
    of the first over the second, game length mean and p10/p50/p90, team win rate with its
    Wilson interval (cooperative games; null otherwise), end_<reason> shares."""
    return _collect(scan(path))[1]


def summary(path: str) -> pl.DataFrame:
    """Per (arm, players, seat): the seat columns of seat_summary, then the columns of
    cell_summary but `games` (repeated on every seat row of the cell)."""
    seats, cells = _collect(scan(path))
    return seats.join(cells.drop("games"), on=CELL, how="left").sort(SEAT)


def end_reasons(path: str) -> pl.DataFrame:
    """Per (arm, players, end_reason): games and share of the cell's games."""
    return _end_reason_query(scan(path)).collect()


def agent_summary(path: str) -> pl.DataFrame:
    """Per (arm, players, agent): seat-games, win share with its Wilson interval, mean
    score (useful when seats hold different agents, e.g. with rotation)."""
    return (_one_row_per_seat(scan(path)).group_by(*CELL, "agent")
            .agg(seat_games=pl.len(), wins=pl.col("share").sum(),
                 score_mean=pl.col("score").mean())
            .with_columns(win_share=pl.col("wins") / pl.col("seat_games"))
            .with_columns(*_wilson("win_share", "seat_games", "win"))
            .select(*CELL, "agent", "seat_games", "win_share", "win_lo", "win_hi", "score_mean")
            .sort(*CELL, "agent").collect())


def _breakdown_key(lf: pl.LazyFrame, by: str, team: bool) -> tuple[pl.LazyFrame, str]:
    """Rows keyed by the value of outcome column `by`: a game-level column as it is; a seat
    list column (seat_*) one row per seat (the seat's own win share), or with team=True one
    row per game keyed by the sorted values of all seats joined with '+'."""
    schema = lf.collect_schema()
    if by not in schema:
        raise ValueError(f"no outcome column {by!r}; columns: {sorted(schema.names())}")
    is_list = isinstance(schema[by], (pl.List, pl.Array))
    if not is_list and team:
        raise ValueError(f"team=True needs a per-seat column (seat_*), not {by!r}")
    first_share = pl.col("seat_win_share").cast(pl.List(pl.Float64)).list.first()
    if is_list and team:
        key = pl.col(by).cast(pl.List(pl.String)).list.sort().list.join("+")
        return lf.with_columns(key.alias("value"), share=first_share), "value"
    if is_list:
        return (lf.select(*CELL, value=pl.col(by).cast(pl.List(pl.String)),
                          share=pl.col("seat_win_share").cast(pl.List(pl.Float64)))
                .explode("value", "share")), "value"
    return lf.with_columns(pl.col(by).cast(pl.String).alias("value"), share=first_share), "value"


def breakdown(path: str, by: str, team: bool = False) -> pl.DataFrame:
    """Per (arm, players, value of outcome column `by`): rows, share of the cell's rows, and
    win share with its Wilson interval.  In a cooperative game the win share is the team win
    rate, so `breakdown(path, "seat_adventurer", team=True)` gives the win rate per
    adventurer team and `breakdown(path, "seat_adventurer")` per adventurer taking part."""
    lf, key = _breakdown_key(scan(path), by, team)
    return (lf.group_by(*CELL, key)
            .agg(rows=pl.len(), wins=pl.col("share").sum())
            .with_columns(row_share=pl.col("rows") / pl.col("rows").sum().over(CELL),
                          win_rate=pl.col("wins") / pl.col("rows"))
            .with_columns(*_wilson("win_rate", "rows", "win"))
            .select(*CELL, key, "rows", "row_share", "win_rate", "win_lo", "win_hi")
            .sort(*CELL, key).collect())


# ---- comparisons -----------------------------------------------------------------------------
def _paired_differences(lf: pl.LazyFrame, baseline: str) -> pl.LazyFrame:
    seats = _one_row_per_seat(lf).select(*SEAT, "game_index", "score", "share")
    base = (seats.filter(pl.col("arm") == baseline).drop("arm")
            .rename({"score": "base_score", "share": "base_share"}))
    return (seats.filter(pl.col("arm") != baseline)
            .join(base, on=["players", "game_index", "seat"], how="inner")
            .group_by(SEAT)
            .agg(pairs=pl.len(),
                 win_share_diff=(pl.col("share") - pl.col("base_share")).mean(),
                 win_sd=(pl.col("share") - pl.col("base_share")).std(),
                 score_diff=(pl.col("score") - pl.col("base_score")).mean(),
                 score_sd=(pl.col("score") - pl.col("base_score")).std())
            .sort(SEAT))


def compare(path: str, baseline: str) -> pl.DataFrame:
    """Each arm against `baseline` per (players, seat), paired by game_index (arms share
    seeds game by game): difference in win share and in mean score with 95% intervals and
    two-sided p-values, Holm-adjusted over every test in the table (both metrics)."""
    lf = scan(path)
    arms = lf.select(pl.col("arm").unique()).collect()["arm"].to_list()
    if baseline not in arms:
        raise ValueError(f"baseline {baseline!r} is not an arm of this experiment; "
                         f"arms: {sorted(arms)}")
    df = _paired_differences(lf, baseline).collect()
    df = df.with_columns(pl.lit(baseline).alias("baseline"),
                         *_mean_ci("win_share_diff", "win_sd", "pairs", "win_diff"),
                         *_mean_ci("score_diff", "score_sd", "pairs", "score_diff"))
    win_p = normal_p_value(df["win_share_diff"], df["win_sd"].fill_null(0), df["pairs"])
    score_p = normal_p_value(df["score_diff"], df["score_sd"].fill_null(0), df["pairs"])
    adjusted = holm(np.concatenate([win_p, score_p]))
    df = df.with_columns(win_p=pl.Series(win_p), score_p=pl.Series(score_p),
                         win_p_holm=pl.Series(adjusted[:len(df)]),
                         score_p_holm=pl.Series(adjusted[len(df):]))
    df = df.with_columns(significant=(pl.col("win_p_holm") < 0.05)
                         | (pl.col("score_p_holm") < 0.05))
    return df.select("arm", "baseline", "players", "seat", "pairs", "win_share_diff",
                     "win_diff_lo", "win_diff_hi", "win_p", "win_p_holm", "score_diff",
                     "score_diff_lo", "score_diff_hi", "score_p", "score_p_holm", "significant")
