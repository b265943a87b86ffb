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
safety (GameFacts.safety_end_reasons, e.g. `turn_limit`, which every file carries in its
Parquet schema metadata with the other facts of its game) are *truncated*: they are left out of
every figure unless include_truncated=True, and their count is reported per cell.

Two kinds of figures come from the same tables (pipelines.stats holds every formula):
- fixed-n (interim=False, a finished run): Jeffreys' intervals for rates (Blaker's below 10
  wins or losses), t intervals for means, p-values adjusted by Benjamini-Hochberg over one
  family per experiment (the seat tests of every cell; the comparisons of every cell),
  intervals at the matching level;
- always-valid (interim=True, a run in progress): confidence sequences that hold at every
  look, Bonferroni over the same family; no p-values.
Every cell and comparison carries a one-sentence `verdict`.

Modules: dataset (scan, rows, units, game facts), shard_tables (a shard's statistics table),
sufficient (the tables merged: the figures' inputs), figures (Look, interval columns),
summaries, breakdowns, comparisons, verdicts, stopping (the stop_when rules), ladder (rungs,
ratings), stats (every formula).
"""
from __future__ import annotations

import importlib

# name -> the module that defines it: imported on first use (PEP 562), so that a Ray worker
# can import pipelines.shard_tables (numpy and pyarrow only) without Polars or SciPy.
_EXPORTS = {
    "agent_summary": "breakdowns", "breakdown": "breakdowns", "compare": "comparisons",
    "CELL": "dataset", "SEAT": "dataset", "GameFacts": "dataset", "game_facts": "dataset",
    "results": "dataset", "scan": "dataset", "units": "dataset", "DELTA": "figures",
    "Look": "figures", "decided": "stopping", "games_for_precision": "stopping",
    "pilot_units": "stopping", "plan_spread": "stopping", "precise": "stopping",
    "simulate_decision": "stopping",
    "cell_summary": "summaries", "end_reasons": "summaries", "seat_summary": "summaries",
    "summary": "summaries", "DamagedShard": "sufficient"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'pipelines' has no attribute {name!r}")
    return getattr(importlib.import_module(f"pipelines.{_EXPORTS[name]}"), name)
