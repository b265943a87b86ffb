"""The results schema: one row per game, the columns every game's results share and their
Arrow types, defined here once (core_cy.play.batch hands back columns by these names; the
service stores them)."""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

# core_cy.play.batch hands back these columns by name (plain numpy arrays) plus the game's own
# outcome fields, `<name>` per game and `seat_<name>` lists per seat (numbers or labels), and
# result_batch gives them these types.  Stored types are plain (no dictionaries, variable-size lists) so that files of
# different player counts share one schema and scan together.
RESULT_COLUMNS = pa.schema([
    ("experiment", pa.string()),
    ("arm", pa.string()),
    ("game_index", pa.int64()),
    ("seed", pa.uint64()),
    ("players", pa.int8()),
    ("seat_agent", pa.list_(pa.string())),
    ("seat_score", pa.list_(pa.float64())),
    ("seat_win_share", pa.list_(pa.float64())),
    ("num_winners", pa.int8()),
    ("length", pa.int32()),
    ("end_reason", pa.string()),
    ("game", pa.string()),
    ("rules_fingerprint", pa.string()),
    ("engine_version", pa.string()),
])
# Columns that only some results carry: `deal` when games share their chance (games_per_deal);
# `seat_forced` with restricted play (an agent's forbid=): per seat, the decisions where every
# legal action was forbidden.
OPTIONAL_COLUMNS = pa.schema([
    ("deal", pa.int64()),
    ("seat_forced", pa.list_(pa.int32())),
])


def _arrow(values: np.ndarray) -> pa.Array:
    """A column of plain values: (games, seats) arrays as list columns (seat order), text
    (object arrays) as strings, numbers in their numpy type."""
    values = np.asarray(values)
    if values.ndim == 2:
        games, seats = values.shape
        offsets = pa.array(np.arange(0, games * seats + 1, seats, dtype=np.int32))
        return pa.ListArray.from_arrays(offsets, _arrow(values.reshape(-1)))
    return pa.array(values, pa.string() if values.dtype == object else None)


# The facts about the game that its rows alone do not tell, as the statistics need them to
# read a file (pipelines.dataset reads them by this key): JSON {"game": name, "cooperative":
# one team result per game, "safety_end_reasons": the end reasons of games a simulator safety
# cut short (truncated), "players": the seats}, in every file's Parquet schema metadata.
FACTS_KEY = b"meeplelab.game_facts"


def facts_metadata(facts: dict) -> dict[bytes, bytes]:
    """The schema metadata that carries a game's facts (see FACTS_KEY)."""
    missing = {"game", "cooperative", "safety_end_reasons", "players"} - set(facts)
    if missing:
        raise ValueError(f"the game facts lack {sorted(missing)}")
    return {FACTS_KEY: json.dumps(facts, sort_keys=True).encode()}


def result_batch(columns: dict, facts: dict | None = None) -> pa.RecordBatch:
    """An engine's columns (core_cy.play.batch.play_columns) as a record batch of the stored types,
    in the engine's order: RESULT_COLUMNS and OPTIONAL_COLUMNS as declared, the game's own
    outcome columns as plain numbers, strings and lists; `facts` (core_cy.play.batch.game_facts)
    in its schema metadata."""
    missing = [f.name for f in RESULT_COLUMNS if f.name not in columns]
    if missing:
        raise ValueError(f"the engine's columns lack result columns {missing}")
    arrays = []
    for name, values in columns.items():
        column = _arrow(values)
        for schema in (RESULT_COLUMNS, OPTIONAL_COLUMNS):
            if name in schema.names:
                column = column.cast(schema.field(name).type)
        arrays.append(column)
    batch = pa.RecordBatch.from_arrays(arrays, names=list(columns))
    return batch if facts is None else batch.replace_schema_metadata(facts_metadata(facts))
