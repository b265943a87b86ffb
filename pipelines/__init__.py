"""Statistics over an experiment's results (Polars lazy scans of the Parquet dataset).

    >>> import pipelines
    >>> pipelines.summary("results/my-experiment")          # per arm, player count and seat
    >>> pipelines.compare("results/my-experiment", "basic")  # each arm vs the baseline

The dataset is the one services.runner writes (<root>/arm=.../players=.../shard-*.parquet);
every file holds its own arm and players columns, so the scan reads no partition paths.

The unit of every figure is one game: a cooperative game is one team result (never one per
seat), and a competitive game counts once per seat it has.  With the spec's pairing
'rotations' (a `deal` column: every deal played once in every seat rotation of the agents) the
unit is the deal instead: its seat shares and scores are the means over its k games, so the
deal's luck cancels out of seat and agent effects; deals missing a rotation (a truncated game)
are left out whole.  Games cut short by a simulator
safety (Game.safety_end_reasons, e.g. `turn_limit`) are *truncated*: they are left out of
every figure unless include_truncated=True, and their count is reported per cell.

Two kinds of figures come from the same tables (pipelines.stats holds every formula):
- fixed-n (interim=False, a finished run): Jeffreys intervals for rates, t intervals for
  means, p-values adjusted by Benjamini-Hochberg over one family per experiment (the seat
  tests of every cell; the comparisons of every cell), intervals at the matching level;
- always-valid (interim=True, a run in progress): confidence sequences that hold at every
  look, Bonferroni over the same family; no p-values.
Every cell and comparison carries a one-sentence `verdict`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from pipelines import stats as st

CELL = ["arm", "players"]
SEAT = ["arm", "players", "seat"]
DELTA = 0.01  # the default margin that matters: 1 point of win share

__all__ = ["scan", "results", "summary", "cell_summary", "seat_summary", "agent_summary",
           "end_reasons", "breakdown", "compare", "decided", "Look", "DELTA"]


@dataclass(frozen=True)
class Look:
    """How the figures are computed: fixed-n (a finished run) or always-valid (interim, a
    run in progress, tuned for `planned_games` per cell); `delta` is the difference that
    matters (win share, as a fraction)."""

    interim: bool = False
    planned_games: int = 10_000
    delta: float = DELTA
    alpha: float = st.ALPHA


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


def _games_in(lf: pl.LazyFrame) -> list:
    import core_cy

    found = []
    for name in lf.select(pl.col("game").unique()).collect()["game"].to_list():
        try:
            found.append(core_cy.load(name))
        except ValueError:  # a game no longer in the catalogue: competitive, no safeties
            pass
    return found


def _is_cooperative(games: list) -> bool:
    return any(g.cooperative for g in games)


def _truncated(games: list) -> pl.Expr:
    reasons = sorted({r for g in games for r in g.safety_end_reasons})
    return pl.col("end_reason").cast(pl.String).is_in(reasons)


@dataclass
class _Data:
    everything: pl.LazyFrame  # every row, truncated games included
    rows: pl.LazyFrame  # the rows the figures use
    cooperative: bool
    deals: bool  # pairing 'rotations': the deal is the unit
    units: pl.LazyFrame  # one row per unit (a game, or a complete deal), unit_games in it


def _complete_deals(lf: pl.LazyFrame) -> pl.LazyFrame:
    """The rows of deals played in every seat rotation (k games for k seats)."""
    return lf.filter(pl.len().over(*CELL, "deal") == pl.col("players").cast(pl.UInt32))


def _deal_units(lf: pl.LazyFrame) -> pl.LazyFrame:
    """One row per complete deal: seat shares and scores the means over its games (seat by
    seat), game_index the deal, seat_agent 'rotated' (each agent sat in every seat once)."""
    seats = (_complete_deals(lf)
             .select(*CELL, "deal", share=pl.col("seat_win_share").cast(pl.List(pl.Float64)),
                     score=pl.col("seat_score").cast(pl.List(pl.Float64)))
             .with_columns(seat=pl.int_ranges(0, pl.col("share").list.len()))
             .explode("seat", "share", "score")
             .group_by(*CELL, "deal", "seat").agg(pl.col("share").mean(),
                                                  pl.col("score").mean())
             .sort(*CELL, "deal", "seat"))
    return (seats.group_by(*CELL, "deal", maintain_order=True)
            .agg(seat_win_share="share", seat_score="score")
            .select(*CELL, game_index="deal", seat_agent=pl.col("seat_win_share").list.eval(
                        pl.lit("rotated")), seat_win_share="seat_win_share",
                    seat_score="seat_score", unit_games=pl.col("players").cast(pl.UInt32)))


def _data(path: str, include_truncated: bool = False) -> _Data:
    lf = scan(path)
    games = _games_in(lf)
    lf = lf.with_columns(truncated=_truncated(games))
    kept = lf if include_truncated else lf.filter(~pl.col("truncated"))
    deals = "deal" in lf.collect_schema().names()
    units = _deal_units(kept) if deals else kept.with_columns(unit_games=pl.lit(1, pl.UInt32))
    return _Data(lf, kept, _is_cooperative(games), deals, units)


def results(path: str, include_truncated: bool = False) -> pl.LazyFrame:
    """The rows every figure uses: truncated games left out unless include_truncated."""
    return _data(path, include_truncated).rows


def _one_row_per_seat(lf: pl.LazyFrame) -> pl.LazyFrame:
    """(arm, players, game_index, seat, agent, score, share[, unit_games]): the list columns
    exploded."""
    return (lf.select(*CELL, "game_index", pl.col("^unit_games$"), agent="seat_agent",
                      score="seat_score", share="seat_win_share")
            .with_columns(seat=pl.int_ranges(0, pl.col("score").list.len(), dtype=pl.Int8))
            .explode("seat", "agent", "score", "share"))


def _agent_of_seat() -> pl.Expr:
    """The seat's agent, or "rotated" when the agent in that seat changes from game to game."""
    return (pl.when(pl.col("agent").n_unique() == 1).then(pl.col("agent").first())
            .otherwise(pl.lit("rotated")).alias("agent"))


def _team_share() -> pl.Expr:
    return pl.col("seat_win_share").cast(pl.List(pl.Float64)).list.first()


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


# ---- intervals on collected frames -------------------------------------------------------------
def _rate_columns(df: pl.DataFrame, rate: str, var: str, n: str, prefix: str,
                  look: Look, alpha: float | None = None) -> pl.DataFrame:
    """<prefix>_lo/_hi of a rate: Jeffreys (fixed-n) or a confidence sequence (interim)."""
    alpha = look.alpha if alpha is None else alpha
    p, v, m = (df[c].to_numpy().astype(np.float64) for c in (rate, var, n))
    if look.interim:
        half = st.cs_half_width(np.sqrt(v), m, alpha, look.planned_games)
        low, high = np.clip(p - half, 0, 1), np.clip(p + half, 0, 1)
    else:
        low, high = st.rate_interval(p, v, m, alpha)
    return df.with_columns(pl.Series(f"{prefix}_lo", low), pl.Series(f"{prefix}_hi", high))


def _mean_columns(df: pl.DataFrame, mean: str, sd: str, n: str, prefix: str, look: Look,
                  alpha, scale=None) -> pl.DataFrame:
    """<prefix>_lo/_hi of a mean: t interval (fixed-n) or a confidence sequence (interim,
    tuned to `scale`, default the observed sd)."""
    mu, s, m = (df[c].fill_null(0).to_numpy().astype(np.float64) for c in (mean, sd, n))
    if look.interim:
        tune = np.where(s > 0, s, 1.0) if scale is None else scale
        half = st.cs_half_width(s, m, alpha, look.planned_games, tune)
    else:
        half = st.t_quantile(m, alpha) * s / np.sqrt(m)
    half = np.where(m > 1, half, np.nan)
    return df.with_columns(pl.Series(f"{prefix}_lo", mu - half),
                           pl.Series(f"{prefix}_hi", mu + half))


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _margin_text(delta: float) -> str:
    return f"±{100 * delta:g} point{'' if delta == 0.01 else 's'}"


def _more_games(total: float, n: float, per_unit: int = 1) -> str:
    """How many more games would decide, from unit counts (per_unit games per unit)."""
    if not np.isfinite(total):
        return "more games would not decide it at this margin"
    return f"about {int(max(total - n, 1)) * per_unit:,} more games per cell would decide"


def _unit_text(n: int, per_unit: int) -> str:
    """'1,000 games', or with rotations '1,000 deals (3 rotations each)'."""
    return f"{n:,} games" if per_unit == 1 else f"{n:,} deals ({per_unit} rotations each)"


# ---- per seat ----------------------------------------------------------------------------
def _seat_query(units: pl.LazyFrame) -> pl.LazyFrame:
    """Per seat over the units (games, or deals whose shares are their games' means)."""
    share = pl.col("share")
    return (_one_row_per_seat(units).group_by(SEAT)
            .agg(_agent_of_seat(), units=pl.len(), games=pl.col("unit_games").sum(),
                 wins=(share * pl.col("unit_games")).sum(), win_share=share.mean(),
                 share_var=share.var(ddof=0),
                 score_mean=pl.col("score").mean(), score_sd=pl.col("score").std())
            .sort(SEAT))


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
    return _finish_seats(_seat_query(_data(path, include_truncated).units).collect(), look)


# ---- per cell ----------------------------------------------------------------------------
def _cell_query(lf: pl.LazyFrame) -> pl.LazyFrame:
    return (lf.group_by(CELL)
            .agg(games=pl.len(),
                 tie_rate=(pl.col("num_winners") > 1).mean(),
                 margin_mean=_margin().mean(),
                 length_mean=pl.col("length").mean(),
                 **{f"length_p{q}": pl.col("length").quantile(q / 100, "nearest")
                    for q in (10, 50, 90)})
            .sort(CELL))


def _unit_query(units: pl.LazyFrame) -> pl.LazyFrame:
    """Per cell: the units (games, or deals) and the team win rate over them."""
    return (units.group_by(CELL)
            .agg(units=pl.len(), unit_games=pl.col("unit_games").max(),
                 team_win_rate=_team_share().mean(), team_var=_team_share().var(ddof=0))
            .sort(CELL))


def _provenance_query(everything: pl.LazyFrame) -> pl.LazyFrame:
    """Per cell: truncated games (count and share of all games played) and the engine
    version(s) the rows were played with."""
    return (everything.group_by(CELL)
            .agg(truncated=pl.col("truncated").sum(),
                 truncated_share=pl.col("truncated").mean(),
                 engine_version=pl.col("engine_version").cast(pl.String).unique().sort()
                 .str.join(", "))
            .sort(CELL))


def _end_reason_query(lf: pl.LazyFrame) -> pl.LazyFrame:
    return (lf.group_by(*CELL, "end_reason").agg(games=pl.len())
            .with_columns(share=pl.col("games") / pl.col("games").sum().over(CELL))
            .sort(*CELL, "end_reason"))


def _share_matrices(lf: pl.LazyFrame) -> dict:
    """(arm, players) -> (per-game share matrix, per-game agent seating) for the seat test."""
    frame = lf.select(*CELL, seating=pl.col("seat_agent").cast(pl.List(pl.String))
                      .list.join("+"),
                      shares=pl.col("seat_win_share").cast(pl.List(pl.Float64))).collect()
    out = {}
    for (arm, players), part in frame.group_by(CELL, maintain_order=True):
        matrix = part["shares"].list.to_array(int(players)).to_numpy()
        out[(arm, players)] = (matrix, part["seating"].to_numpy())
    return out


def _seat_tests(cells: pl.DataFrame, matrices: dict, look: Look) -> pl.DataFrame:
    """Per cell the omnibus seat-balance test, stratified by the agents' seating; p-values
    adjusted over the experiment's cells (one family)."""
    stat, p = [], []
    for arm, players in cells.select(CELL).iter_rows():
        shares, seating = matrices.get((arm, players), (np.zeros((0, players)), None))
        s, pv = st.seat_balance_test(shares, seating) if len(shares) else (np.nan, np.nan)
        stat.append(s)
        p.append(pv)
    p = np.asarray(p, dtype=np.float64)
    tested = int(np.sum(~np.isnan(p)))
    if look.interim:
        return cells.with_columns(seat_stat=pl.lit(None, pl.Float64),
                                  seat_p_value=pl.lit(None, pl.Float64),
                                  seat_p_adjusted=pl.lit(None, pl.Float64),
                                  p_adjust=pl.lit(f"interim: confidence sequences, Bonferroni "
                                                  f"over {tested} cell(s); no p-values"))
    return cells.with_columns(seat_stat=pl.Series(stat, dtype=pl.Float64),
                              seat_p_value=pl.Series(p), seat_p_adjusted=pl.Series(
                                  st.benjamini_hochberg(p)),
                              p_adjust=pl.lit(f"{st.FAMILY_METHOD} over {tested} seat-balance "
                                              f"test(s)"))


def _seat_verdicts(cells: pl.DataFrame, seats: pl.DataFrame, look: Look) -> list[tuple]:
    """(decided, sentence) per competitive cell: which seat is favoured, or balanced within
    +-delta, or undecided (with the games that would decide)."""
    family = max(int(seats.height), 1)  # Bonferroni over every seat rate of the experiment
    out = []
    for cell in cells.iter_rows(named=True):
        part = seats.filter(arm=cell["arm"], players=cell["players"]).sort("seat")
        if part.is_empty():
            out.append((None, None))
            continue
        k, n, per_unit = cell["players"], cell["units"], cell["unit_games"]
        fair = 1 / k
        rate = part["win_share"].to_numpy()
        sd = np.sqrt(part["share_var"].to_numpy())
        strict = look.alpha / family
        if look.interim:
            half = st.cs_half_width(sd, n, strict, look.planned_games)
            unbalanced = bool(np.any(np.abs(rate - fair) > half))
        else:
            half = (lambda lo_hi: (lo_hi[1] - lo_hi[0]) / 2)(st.rate_interval(
                rate, sd ** 2, n, strict))
            unbalanced = cell["seat_p_adjusted"] is not None and cell["seat_p_adjusted"] <= look.alpha
        balanced = bool(np.all(np.abs(rate - fair) + half < look.delta))
        top = int(np.argmax(rate))
        best = part.row(top, named=True)
        lead = (f"Seat {top} wins {_pct(best['win_share'])} (95% CI {_pct(best['win_lo'])}-"
                f"{_pct(best['win_hi'])}) against a fair {_pct(fair)} over "
                f"{_unit_text(n, per_unit)}")
        tag = "Interim: " if look.interim else ""
        if unbalanced:
            low = int(np.argmin(rate))
            out.append((True, f"{tag}{lead}: the seats are unbalanced (seat {top} favoured, seat "
                       f"{low} least)."))
        elif balanced:
            out.append((True, f"{tag}Every seat wins within {_margin_text(look.delta)} of a fair "
                       f"{_pct(fair)} over {_unit_text(n, per_unit)}: balanced."))
        else:
            total = _games_for_seats(rate - fair, sd, n, strict, look)
            out.append((False, f"{tag}{lead}: no seat advantage shown yet, undecided at "
                        f"{_margin_text(look.delta)}; {_more_games(total, n, per_unit)}."))
    return out


def _games_for_seats(deviation, sd, n, alpha, look: Look) -> float:
    """Games after which a cell's seats would be decided: one seat shown off fair, or every
    seat within +-delta of it."""
    planned = look.planned_games if look.interim else None
    off = np.abs(deviation)
    differ = np.min(st.games_for(sd, off, alpha, planned))
    equal = np.max(st.games_for(sd, look.delta - off, alpha, planned))
    return float(max(min(differ, equal), n))


def _team_verdicts(cells: pl.DataFrame, look: Look) -> list[tuple]:
    tag = "Interim: " if look.interim else ""
    return [(None, f"{tag}The team wins {_pct(c['team_win_rate'])} (95% CI {_pct(c['team_win_lo'])}-"
            f"{_pct(c['team_win_hi'])}) of {_unit_text(c['units'], c['unit_games'])}.")
            for c in cells.iter_rows(named=True)]


def _truncation_notes(cells: pl.DataFrame, include_truncated: bool) -> list[str]:
    notes = []
    for c in cells.iter_rows(named=True):
        if not c["truncated"]:
            notes.append("")
        elif include_truncated:
            notes.append(f" {c['truncated']:,} truncated games are counted.")
        else:
            notes.append(f" {c['truncated']:,} truncated games ({_pct(c['truncated_share'])}) "
                         "are left out.")
    return notes


def _collect(path: str, include_truncated: bool, look: Look):
    """(seat frame or None for a cooperative game, cell frame), in one pass over the scan."""
    data = _data(path, include_truncated)
    lf = data.rows
    seats, cells, units, reasons, provenance = pl.collect_all(
        [_seat_query(data.units), _cell_query(lf), _unit_query(data.units),
         _end_reason_query(data.everything), _provenance_query(data.everything)])
    cells = (provenance.join(cells, on=CELL, how="left").join(units, on=CELL, how="left")
             .with_columns(pl.col("games", "units").fill_null(0),
                           pl.col("unit_games").fill_null(1)))
    wide = (reasons.with_columns(pl.format("end_{}", "end_reason").alias("reason"))
            .pivot(on="reason", index=CELL, values="share", sort_columns=True))
    cells = cells.join(wide, on=CELL, how="left").with_columns(
        pl.col("^end_.*$").fill_null(0.0)).sort(CELL)
    cells = _rate_columns(cells, "team_win_rate", "team_var", "units", "team_win", look)
    cells = cells.with_columns(interim=pl.lit(look.interim), cooperative=pl.lit(data.cooperative))
    notes = _truncation_notes(cells, include_truncated)
    if data.cooperative:  # one team result per game: no seats, ties or margins
        verdicts = _team_verdicts(cells, look)
        cells = cells.with_columns(*(pl.lit(None, pl.Float64).alias(c) for c in
                                     ("tie_rate", "margin_mean", "seat_stat", "seat_p_value",
                                      "seat_p_adjusted")), p_adjust=pl.lit(None, pl.String))
        seats = None
    else:
        seats = _finish_seats(seats, look)
        cells = _seat_tests(cells, _share_matrices(data.units), look)
        verdicts = _seat_verdicts(cells, seats, look)
        cells = cells.with_columns(*(pl.lit(None, pl.Float64).alias(c) for c in
                                     ("team_win_rate", "team_win_lo", "team_win_hi")))
    cells = cells.with_columns(
        verdict=pl.Series([None if v is None else v + note
                           for (_, v), note in zip(verdicts, notes)], dtype=pl.String),
        decided=pl.Series([d for d, _ in verdicts], dtype=pl.Boolean),
        unit=pl.when(pl.col("unit_games") > 1).then(pl.format("deal of {} rotations",
                                                              "unit_games"))
        .otherwise(pl.lit("game")))
    return seats, cells.select(*CELL, "games", "units", "unit", *CELL_COLUMNS,
                               pl.col("^end_.*$"))


CELL_COLUMNS = ["verdict", "decided", "interim", "cooperative", "truncated", "truncated_share",
                "engine_version", "team_win_rate", "team_win_lo", "team_win_hi",
                "seat_stat", "seat_p_value", "seat_p_adjusted", "p_adjust", "tie_rate",
                "margin_mean", "length_mean", "length_p10", "length_p50", "length_p90"]


def cell_summary(path: str, include_truncated: bool = False, look: Look = Look()
                 ) -> pl.DataFrame:
    """Per (arm, players): games (truncated ones left out), units (what the intervals count:
    the games, or with pairing 'rotations' the complete deals) and `unit`, a one-sentence
    verdict, whether
    the figures are interim, truncated games (count and share of all played), the engine
    version, the team win rate with its 95% interval (cooperative games), the seat-balance
    test (Hotelling T^2, p-value, Benjamini-Hochberg adjusted over the cells), tie rate,
    mean margin of the first over the second, game length mean and p10/p50/p90, and the
    share of every end reason among all games played (end_<reason>)."""
    return _collect(path, include_truncated, look)[1]


def summary(path: str, include_truncated: bool = False, look: Look = Look()) -> pl.DataFrame:
    """A competitive game: per (arm, players, seat) the columns of seat_summary, then those
    of cell_summary (repeated on every seat row).  A cooperative game: one row per cell
    (seat null, agent = the team's agents), since every seat shares the team's result."""
    seats, cells = _collect(path, include_truncated, look)
    if seats is None:
        teams = (results(path, include_truncated).group_by(CELL)
                 .agg(agent=pl.col("seat_agent").cast(pl.List(pl.String)).list.join("+")
                      .unique().sort().str.join(", ")).collect())
        return (cells.join(teams, on=CELL, how="left")
                .with_columns(seat=pl.lit(None, pl.Int8))
                .select(*CELL, "seat", "agent", pl.all().exclude(*SEAT, "agent")).sort(CELL))
    return seats.join(cells.drop("games", "units"), on=CELL, how="left").sort(SEAT)


def end_reasons(path: str) -> pl.DataFrame:
    """Per (arm, players, end_reason): games and share of the cell's games (all games
    played, truncated ones included: they are an end reason too)."""
    return _end_reason_query(scan(path)).collect()


# ---- per value of an outcome column: one unit per game -----------------------------------------
def _per_game_value(lf: pl.LazyFrame, by: str, team: bool) -> pl.LazyFrame:
    """(arm, players, game_index, value, share, score, seats): one row per game and value of
    outcome column `by`.  A game-level column as it is; a seat list column (seat_*) gives the
    game once per distinct value among its seats (share and score: the mean over the seats
    holding it), or with team=True once, keyed by the sorted values of all seats joined '+'."""
    schema = lf.collect_schema()
    if by not in schema:
        raise ValueError(f"no outcome column {by!r}; columns: {sorted(schema.names())}")
    is_list = isinstance(schema[by], (pl.List, pl.Array))
    if not is_list and team:
        raise ValueError(f"team=True needs a per-seat column (seat_*), not {by!r}")
    score = pl.col("seat_score").cast(pl.List(pl.Float64))
    if is_list and not team:
        return (lf.select(*CELL, "game_index", value=pl.col(by).cast(pl.List(pl.String)),
                          share=pl.col("seat_win_share").cast(pl.List(pl.Float64)),
                          score=score)
                .explode("value", "share", "score")
                .group_by(*CELL, "game_index", "value")
                .agg(pl.col("share").mean(), pl.col("score").mean(), seats=pl.len()))
    key = (pl.col(by).cast(pl.List(pl.String)).list.sort().list.join("+") if is_list
           else pl.col(by).cast(pl.String))
    return lf.select(*CELL, "game_index", value=key, share=_team_share(),
                     score=score.list.mean(), seats=pl.lit(1, pl.UInt32))


def _per_deal_value(lf: pl.LazyFrame, by: str, team: bool) -> pl.LazyFrame:
    """_per_game_value with the deal as the unit (pairing 'rotations'): per complete deal and
    value, the means over the deal's games holding it."""
    games = _complete_deals(lf)
    deal_of = games.select(*CELL, "game_index", "deal")
    return (_per_game_value(games, by, team).join(deal_of, on=[*CELL, "game_index"])
            .group_by(*CELL, "deal", "value")
            .agg(pl.col("share").mean(), pl.col("score").mean(), pl.col("seats").sum()))


def _per_value(path: str, by: str, team: bool, include_truncated: bool, look: Look
               ) -> pl.DataFrame:
    data = _data(path, include_truncated)
    lf = (_per_deal_value if data.deals else _per_game_value)(data.rows, by, team)
    df = (lf.group_by(*CELL, "value")
          .agg(games=pl.len(), seat_games=pl.col("seats").sum(),
               win_rate=pl.col("share").mean(), share_var=pl.col("share").var(ddof=0),
               score_mean=pl.col("score").mean())
          .with_columns(game_share=pl.col("games") / pl.col("games").sum().over(CELL))
          .sort(*CELL, "value").collect())
    return _rate_columns(df, "win_rate", "share_var", "games", "win", look)


def breakdown(path: str, by: str, team: bool = False, include_truncated: bool = False,
              look: Look = Look()) -> pl.DataFrame:
    """Per (arm, players, value of outcome column `by`): games in which the value occurs (each
    game once), their share of the cell's games, and the win rate with its 95% interval (in a
    cooperative game the team win rate; in a competitive game the mean win share of the seats
    holding the value).  `breakdown(path, "seat_adventurer", team=True)` gives the win rate
    per adventurer team, `breakdown(path, "seat_adventurer")` per adventurer taking part.
    With pairing 'rotations' the counts are deals (each deal once) and the rates their means."""
    df = _per_value(path, by, team, include_truncated, look)
    return df.select(*CELL, "value", "games", "game_share", "win_rate", "win_lo", "win_hi")


def agent_summary(path: str, include_truncated: bool = False, look: Look = Look()
                  ) -> pl.DataFrame:
    """Per (arm, players, agent): games the agent took part in (each game once), seat-games,
    win share per seat it held with its 95% interval, and mean score (useful when seats hold
    different agents, e.g. with rotation: these are the agent effects, the seat test is
    stratified by them)."""
    df = _per_value(path, "seat_agent", False, include_truncated, look).rename(
        {"value": "agent", "win_rate": "win_share"})
    return df.select(*CELL, "agent", "games", "seat_games", "win_share", "win_lo", "win_hi",
                     "score_mean")


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


def _comparison_verdict(row: dict, look: Look) -> tuple[bool, str]:
    """(decided, sentence) for one comparison row (win share, or team win rate)."""
    d, lo, hi, delta = row["win_share_diff"], row["win_diff_lo"], row["win_diff_hi"], look.delta
    what = "the team win rate" if row["seat"] is None else f"seat {row['seat']}'s win share"
    unit = "games" if row["unit"] == "game" else "deals"
    text = (f"{row['arm']} changes {what} by {100 * d:+.1f} points [{100 * lo:+.1f}, "
            f"{100 * hi:+.1f}] against {row['baseline']} ({row['players']} players, "
            f"{row['pairs']:,} paired {unit})")
    margin = _margin_text(delta)
    tag = "Interim: " if look.interim else ""
    if row["win_significant"]:
        size = ("by at least " + margin if lo >= delta or hi <= -delta else
                "smaller than " + margin if -delta < lo and hi < delta else
                "of a size not yet known against " + margin)
        return True, f"{tag}{text}: a real difference, {size}."
    if -delta < lo and hi < delta:
        return True, f"{tag}{text}: not shown to matter at {margin} (equivalent)."
    total = st.games_to_decide(d, row["win_sd"] or 0.0, row["pairs"], delta, row["level"],
                               look.planned_games if look.interim else None)
    per_unit = 1 if row["unit"] == "game" else row["players"]
    return False, (f"{tag}{text}: undecided at {margin}; "
                   f"{_more_games(float(total), row['pairs'], per_unit)}.")


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


def decided(path: str, baseline: str | None, look: Look) -> bool:
    """Whether the experiment's question is decided at +-look.delta with always-valid
    figures (the stop_when rule): every comparison with the baseline when there are other
    arms, else every cell's seat balance (competitive games)."""
    if baseline is not None:
        table = compare(path, baseline, look=look)
        if not table.is_empty():
            return bool(table["decided"].all())
    cells = cell_summary(path, look=look)  # decided is null for a cooperative cell
    return bool(len(cells)) and bool(cells["decided"].fill_null(False).all())
