"""The one-sentence verdicts of cells and comparisons, and the games that would decide."""
from __future__ import annotations

import numpy as np
import polars as pl

from pipelines import stats as st
from pipelines.figures import (Look, _margin_text, _more_games, _pct, _unit_text,
                               spread_warning, wave_units)


def _seat_verdicts(cells: pl.DataFrame, seats: pl.DataFrame, look: Look) -> list[tuple]:
    """(decided, sentence, answer) per competitive cell: which seat is favoured ('unbalanced'),
    or balanced within +-delta ('balanced'), or 'undecided' (with the games that would decide).  The seats are judged among
    themselves: a fair share is the mean of the cell's seat shares, (1 - no-winner share)/k,
    and 'unbalanced' is the seat-balance test of the table (seat_p_adjusted)."""
    family = max(int(seats.height), 1)  # Bonferroni over every seat rate of the experiment
    out = []
    for cell in cells.iter_rows(named=True):
        part = seats.filter(arm=cell["arm"], players=cell["players"]).sort("seat")
        if part.is_empty():
            out.append((None, None, None))
            continue
        n, per_unit = cell["units"], cell["unit_games"]
        rate = part["win_share"].to_numpy()
        fair = cell["fair_share"]  # among the seats: 1/k less the games without a winner
        sd = np.sqrt(part["share_var"].to_numpy())
        strict = look.alpha / family
        if look.triangle("seats"):
            unbalanced, balanced = (bool(x) for x in st.triangle_seat_decisions(
                rate, np.max(st.guarded_spread(look.spread, sd, n)), n, look.delta, strict,
                wave_units(look, n, per_unit)))
        elif look.interim:
            unbalanced, balanced = (bool(x) for x in st.cs_seat_decisions(
                rate, sd, n, look.delta, strict, look.planned_games))
        else:
            half = (lambda lo_hi: (lo_hi[1] - lo_hi[0]) / 2)(st.rate_interval(
                rate, sd ** 2, n, strict))
            unbalanced = cell["seat_p_adjusted"] is not None and cell["seat_p_adjusted"] <= look.alpha
            balanced = bool(np.all(np.abs(rate - fair) + half < look.delta))
        top = int(np.argmax(rate))
        best = part.row(top, named=True)
        lead = (f"Seat {top + 1} wins {_pct(best['win_share'])} [{_pct(best['win_lo'])}, "
                f"{_pct(best['win_hi'])}] against a fair {_pct(fair)}{_no_winner_text(cell)} "
                f"over {_unit_text(n, per_unit)}")
        tag = "Interim: " if look.interim else ""
        if unbalanced:
            low = int(np.argmin(rate))
            out.append((True, f"{tag}{lead}: the seats are unbalanced (seat {top + 1} favoured, "
                       f"seat {low + 1} least).", "unbalanced"))
        elif balanced:
            out.append((True, f"{tag}Every seat wins within {_margin_text(look.delta)} of a fair "
                       f"{_pct(fair)}{_no_winner_text(cell)} over {_unit_text(n, per_unit)}: "
                       "balanced.", "balanced"))
        else:
            total = _games_for_seats(rate - fair, sd, n, strict, look, per_unit)
            out.append((False, f"{tag}{lead}: no seat advantage shown yet, undecided at "
                        f"{_margin_text(look.delta)}; {_more_games(total, n, per_unit)}.",
                        "undecided"))
    return out


def _seat_spread_warnings(cells: pl.DataFrame, seats: pl.DataFrame, look: Look
                          ) -> list[str | None]:
    """Per cell, when the stored spread is the seats' (look.guards): the sentence that says
    its games contradict it (figures.spread_warning: one spread per cell, the largest
    guarded seat's, as the triangle uses it), else None."""
    out = []
    for cell in cells.iter_rows(named=True):
        part = seats.filter(arm=cell["arm"], players=cell["players"])
        if not look.guards("seats") or part.is_empty():
            out.append(None)
            continue
        sd = np.sqrt(part["share_var"].to_numpy())
        out.append(spread_warning(look, *st.spread_guard(look.spread, sd, cell["units"]),
                                  f"{cell['arm']}'s seats", one_spread=True))
    return out


def _no_winner_text(cell: dict) -> str:
    share = cell.get("no_winner_share")
    return f" ({_pct(share)} of the games have no winner)" if share else ""


def _games_for_seats(deviation, sd, n, alpha, look: Look, per_unit) -> float:
    """Units after which a cell's seats would be decided: one seat shown off fair, or every
    seat within +-delta of it."""
    off = np.abs(deviation)
    if look.triangle("seats"):
        differ, equal = st.games_for_triangle(off, np.max(st.guarded_spread(look.spread, sd, n)),
                                              look.delta, alpha, wave_units(look, n, per_unit))
        return float(max(min(np.min(differ), np.max(equal)), n))
    planned = look.planned_games if look.interim else None
    differ = np.min(st.games_for(sd, off, alpha, planned, st.RATE_PRIOR_VAR))
    equal_alpha = alpha if planned is None else st.equivalence_alpha(alpha)
    equal = np.max(st.games_for(sd, look.delta - off, equal_alpha, planned, st.RATE_PRIOR_VAR))
    return float(max(min(differ, equal), n))


def _team_verdicts(cells: pl.DataFrame, look: Look) -> list[tuple]:
    tag = "Interim: " if look.interim else ""
    return [(None, f"{tag}The team wins {_pct(c['team_win_rate'])} [{_pct(c['team_win_lo'])}, "
            f"{_pct(c['team_win_hi'])}] of {_unit_text(c['units'], c['unit_games'])}.", None)
            if c["units"] else (None, None, None)  # every game truncated: nothing to say
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


def identical_sentence(row: dict) -> str:
    """An arm whose every paired game is the baseline's game: no interval to weigh."""
    unit = "deals" if row["unit"] == "game" else "deals of rotations"
    return (f"{row['arm']} against {row['baseline']} ({row['players']} players): the two "
            f"arms played identical games in {row['pairs']:,} {unit}: this option never "
            "changed a decision.")


def _comparison_verdict(row: dict, look: Look) -> tuple[bool, str]:
    """(decided, sentence) for one comparison row (win share, or team win rate)."""
    if row["pairs"] and row["identical"] == row["pairs"]:
        return True, identical_sentence(row)
    d, lo, hi, delta = row["win_share_diff"], row["win_diff_lo"], row["win_diff_hi"], look.delta
    what = "the team win rate" if row["seat"] is None else f"seat {row['seat'] + 1}'s win share"
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
    sd, n, level = row["win_sd"] or 0.0, row["pairs"], row["level"]
    per_unit = 1 if row["unit"] == "game" else row["players"]
    if look.triangle("comparisons"):  # the triangle's equivalence bound
        spread = st.guarded_spread(look.spread, sd, n, d)
        wave = wave_units(look, n, per_unit)
        half = float(st.triangle_half_widths(spread, n, delta, level, wave)[1])
        if abs(d) + half <= delta:
            return True, (f"{tag}{text}: not shown to matter at {margin} (equivalent: by the "
                          f"triangle, [{100 * (d - half):+.1f}, {100 * (d + half):+.1f}] lies "
                          "within).")
        differ, equal = st.games_for_triangle(d, spread, delta, level, wave)
        total = max(min(float(differ), float(equal)), n)
        return False, (f"{tag}{text}: undecided at {margin}; "
                       f"{_more_games(total, n, per_unit)}.")
    if look.interim:  # the equivalence sequence (two one-sided bounds at the row's level)
        if bool(st.cs_comparison_decisions(d, sd, n, delta, level, look.planned_games)[1]):
            half = float(st.cs_half_width(sd, n, st.equivalence_alpha(level),
                                          look.planned_games, st.DIFF_PRIOR_VAR))
            return True, (f"{tag}{text}: not shown to matter at {margin} (equivalent: its "
                          f"{100 * (1 - 2 * level):.4g}% interval [{100 * (d - half):+.1f}, "
                          f"{100 * (d + half):+.1f}] lies within).")
    elif -delta < lo and hi < delta:
        return True, f"{tag}{text}: not shown to matter at {margin} (equivalent)."
    total = st.games_to_decide(d, sd, n, delta, level,
                               look.planned_games if look.interim else None,
                               st.DIFF_PRIOR_VAR)
    return False, (f"{tag}{text}: undecided at {margin}; "
                   f"{_more_games(float(total), row['pairs'], per_unit)}.")
