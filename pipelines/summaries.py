"""Per seat and per cell: win shares, scores, the seat-balance test, lengths, end reasons
and provenance (seat_summary, cell_summary, summary, end_reasons), computed from the
experiment's merged statistics tables (pipelines.sufficient), not from its rows."""
from __future__ import annotations

import numpy as np
import polars as pl

from pipelines import stats as st
from pipelines import sufficient as sf
from pipelines.dataset import CELL, SEAT
from pipelines.figures import Look, _mean_columns, _rate_columns
from pipelines.verdicts import (_seat_spread_warnings, _seat_verdicts, _team_verdicts,
                                _truncation_notes)


# ---- per seat ----------------------------------------------------------------------------
def _finish_seats(seats: pl.DataFrame, look: Look) -> pl.DataFrame:
    seats = _rate_columns(seats, "win_share", "share_var", "units", "win", look)
    seats = _mean_columns(seats, "score_mean", "score_sd", "units", "score", look, look.alpha)
    return seats.with_columns(small_n=pl.col("units") < st.SMALL_N).select(
        *SEAT, "agent", "games", "units", "wins", "win_share", "win_lo", "win_hi", "share_var",
        "score_mean", "score_sd", "score_lo", "score_hi", "small_n")


def seat_summary(path: str, include_truncated: bool = False, look: Look = Look()
                 ) -> pl.DataFrame:
    """Per (arm, players, seat) of a competitive game: agent, games, units (the games, or
    with rotations the deals, the intervals rest on), wins, win share with its 95% interval,
    mean score with its 95% t interval (small_n: fewer than 30 units)."""
    return _finish_seats(sf.seat_frame(sf.statistics(path), include_truncated), look)


# ---- per cell ----------------------------------------------------------------------------
def _interim_rule(look: Look) -> str:
    return "the triangle" if look.triangle("seats") else "confidence sequences"


def _seat_tests(cells: pl.DataFrame, matrices: dict, look: Look) -> pl.DataFrame:
    """Per cell the omnibus seat-balance test, stratified by the agents' seating, from the
    distinct share vectors and their counts (sufficient.share_kinds); p-values adjusted over
    the experiment's cells (one family)."""
    stat, p = [], []
    for arm, players in cells.select(CELL).iter_rows():
        shares, seating, counts = matrices.get((arm, players), (np.zeros((0, players)), None,
                                                                None))
        s, pv = (st.seat_balance_test(shares, seating, len(cells), look.alpha, counts)
                 if len(shares) else (np.nan, np.nan))
        stat.append(s)
        p.append(pv)
    p = np.asarray(p, dtype=np.float64)
    tested = int(np.sum(~np.isnan(p)))
    if look.interim:
        return cells.with_columns(seat_stat=pl.lit(None, pl.Float64),
                                  seat_p_value=pl.lit(None, pl.Float64),
                                  seat_p_adjusted=pl.lit(None, pl.Float64),
                                  p_adjust=pl.lit(f"interim: {_interim_rule(look)}, Bonferroni "
                                                  f"over {tested} cell(s); no p-values"))
    return cells.with_columns(seat_stat=pl.Series(stat, dtype=pl.Float64),
                              seat_p_value=pl.Series(p), seat_p_adjusted=pl.Series(
                                  st.benjamini_hochberg(p)),
                              p_adjust=pl.lit(f"{st.FAMILY_METHOD} over {tested} seat-balance "
                                              f"test(s)"))


def _seat_gaps(seats: pl.DataFrame, kinds: dict, look: Look) -> pl.DataFrame:
    """Per cell the gap between its best and its worst seat (by win share) in the same
    units: the mean of the per-unit difference of their shares with its interval (a t
    interval, interim: a confidence sequence), from the distinct share vectors."""
    rows = []
    for (arm, players), part in seats.group_by(CELL):
        rate = part.sort("seat")["win_share"].to_numpy()
        shares, _, counts = kinds.get((arm, players), (np.zeros((0, players)), None, None))
        if len(rate) < 2 or not len(shares) or counts.sum() < 2:
            continue
        best, worst = int(np.argmax(rate)), int(np.argmin(rate))
        d, n = shares[:, best] - shares[:, worst], int(counts.sum())
        mean = float((d * counts).sum() / n)
        sd = float(np.sqrt(((d - mean) ** 2 * counts).sum() / (n - 1)))
        if look.interim:
            half = float(st.cs_half_width(sd, n, look.alpha, look.planned_games,
                                          st.DIFF_PRIOR_VAR))
            lo, hi = mean - half, mean + half
        else:
            lo, hi = (float(x) for x in st.mean_interval(mean, sd, n, look.alpha))
        rows.append({"arm": arm, "players": players, "best_seat": best, "worst_seat": worst,
                     "seat_gap": mean, "seat_gap_lo": lo, "seat_gap_hi": hi})
    return pl.DataFrame(rows, schema={"arm": seats.schema["arm"],
                                      "players": seats.schema["players"],
                                      "best_seat": pl.Int8, "worst_seat": pl.Int8,
                                      "seat_gap": pl.Float64, "seat_gap_lo": pl.Float64,
                                      "seat_gap_hi": pl.Float64})


GAP_COLUMNS = ["best_seat", "worst_seat", "seat_gap", "seat_gap_lo", "seat_gap_hi"]


def _collect(path: str, include_truncated: bool, look: Look,
             stats: sf.Statistics | None = None):
    """(seat frame or None for a cooperative game, cell frame), from the experiment's
    merged statistics tables (`stats`: already merged ones)."""
    stats = sf.statistics(path) if stats is None else stats
    seats = sf.seat_frame(stats, include_truncated)
    cells = sf.cell_frame(stats, include_truncated)
    wide = (sf.end_reason_frame(stats).with_columns(pl.format("end_{}", "end_reason")
                                                    .alias("reason"))
            .pivot(on="reason", index=CELL, values="share", sort_columns=True))
    cells = cells.join(wide, on=CELL, how="left").with_columns(
        pl.col("^end_.*$").fill_null(0.0)).sort(CELL)
    cells = _rate_columns(cells, "team_win_rate", "team_var", "units", "team_win", look)
    cells = cells.with_columns(interim=pl.lit(look.interim), cooperative=pl.lit(stats.cooperative),
                               interval_level=pl.lit(1 - look.alpha))
    notes = _truncation_notes(cells, include_truncated)
    if stats.cooperative:  # one team result per game: no seats, ties or margins
        verdicts = _team_verdicts(cells, look)
        warned = [None] * len(cells)
        cells = cells.with_columns(*(pl.lit(None, pl.Float64).alias(c) for c in
                                     ("tie_rate", "no_winner_share", "fair_share",
                                      "margin_mean", "seat_gap", "seat_gap_lo", "seat_gap_hi",
                                      "seat_stat",
                                      "seat_p_value",
                                      "seat_p_adjusted")), p_adjust=pl.lit(None, pl.String),
                                   best_seat=pl.lit(None, pl.Int8),
                                   worst_seat=pl.lit(None, pl.Int8))
        seats = None
    else:
        seats = _finish_seats(seats, look)
        kinds = sf.share_kinds(stats, include_truncated)
        cells = _seat_tests(cells, kinds, look).join(
            seats.group_by(CELL).agg(fair_share=pl.col("win_share").mean()), on=CELL,
            how="left").join(_seat_gaps(seats, kinds, look), on=CELL, how="left")
        verdicts = _seat_verdicts(cells, seats, look)
        warned = _seat_spread_warnings(cells, seats, look)
        cells = cells.with_columns(*(pl.lit(None, pl.Float64).alias(c) for c in
                                     ("team_win_rate", "team_win_lo", "team_win_hi")))
    cells = cells.with_columns(
        verdict=pl.Series([None if v is None else v + note
                           for (_, v, _), note in zip(verdicts, notes)], dtype=pl.String),
        decided=pl.Series([d for d, _, _ in verdicts], dtype=pl.Boolean),
        seat_answer=pl.Series([a for _, _, a in verdicts], dtype=pl.String),
        spread_warning=pl.Series(warned, dtype=pl.String),
        unit=pl.when(pl.col("unit_games") > 1).then(pl.format("deal of {} rotations",
                                                              "unit_games"))
        .otherwise(pl.lit("game")))
    return seats, cells.select(*CELL, "games", "units", "unit", *CELL_COLUMNS,
                               pl.col("^end_.*$"))


CELL_COLUMNS = ["verdict", "decided", "seat_answer", "spread_warning", "interim",
                "interval_level", "cooperative",
                "truncated", "truncated_share",
                "engine_version", "team_win_rate", "team_win_lo", "team_win_hi",
                "seat_stat", "seat_p_value", "seat_p_adjusted", "p_adjust", "tie_rate",
                "no_winner_share", "fair_share", *GAP_COLUMNS,
                "margin_mean", "length_mean", "length_p10", "length_p50", "length_p90"]


def cell_summary(path: str, include_truncated: bool = False, look: Look = Look()
                 ) -> pl.DataFrame:
    """Per (arm, players): games (truncated ones left out), units (what the intervals count:
    the games, or with pairing 'rotations' the complete deals) and `unit`, a one-sentence
    verdict, whether it is decided and the seat answer ('unbalanced', 'balanced' or
    'undecided'; null in a cooperative game), whether
    the figures are interim, `spread_warning` (a run whose stored spread, stop_when.spread,
    is the seats': the sentence that says the games contradict it, and which spread the run
    used instead; else null), the level of their intervals (1 - look.alpha), truncated
    games (count and share of all played), the engine
    version, the team win rate with its 95% interval (cooperative games), the seat-balance
    test (Hotelling T^2 on the seats' shares against each other: a permutation test
    below 500 units; p-value, Benjamini-Hochberg adjusted over the cells), tie rate, the
    share of games without a winner (no_winner_share), the fair share of a seat (the
    mean of the cell's seat shares: 1/k less the games without a winner, fair_share), the
    gap between the best and the worst seat's win share in the same games with its interval
    (best_seat, worst_seat, seat_gap, seat_gap_lo, seat_gap_hi),
    mean margin of the first over the second, game length mean and p10/p50/p90, and the
    share of every end reason among all games played (end_<reason>)."""
    return _collect(path, include_truncated, look)[1]


def summary(path: str, include_truncated: bool = False, look: Look = Look(),
            stats: sf.Statistics | None = None) -> pl.DataFrame:
    """A competitive game: per (arm, players, seat) the columns of seat_summary, then those
    of cell_summary (repeated on every seat row).  A cooperative game: one row per cell
    (seat null, agent = the team's agents), since every seat shares the team's result."""
    stats = sf.statistics(path) if stats is None else stats
    seats, cells = _collect(path, include_truncated, look, stats)
    if seats is None:
        teams = sf.team_frame(stats, include_truncated)
        return (cells.join(teams, on=CELL, how="left")
                .with_columns(seat=pl.lit(None, pl.Int8))
                .select(*CELL, "seat", "agent", pl.all().exclude(*SEAT, "agent")).sort(CELL))
    return seats.join(cells.drop("games", "units"), on=CELL, how="left").sort(SEAT)


def end_reasons(path: str) -> pl.DataFrame:
    """Per (arm, players, end_reason): games and share of the cell's games (all games
    played, truncated ones included: they are an end reason too)."""
    return sf.end_reason_frame(sf.statistics(path))
