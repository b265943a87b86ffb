"""Plays a shard of games and returns it as one Arrow record batch (the results schema).

One row per game, columns as in ../shared/ARCHITECTURE.md "Results schema":
experiment, arm, game_index, seed, players, per-seat agent/score/win share (list columns, seat
order), length, end_reason, num_winners, rules fingerprint, engine version, and the game's own
outcome fields (`<name>` per game, `seat_<name>` lists per seat).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from core_cy.agents import agent_spec, canonical_agent
from core_cy.game import PACKAGE_VERSION
from core_cy.runner import play_batch


def _list_column(values: np.ndarray) -> pa.Array:
    """A (games, seats) array as a fixed-size list column, without a Python loop per game."""
    games, seats = values.shape
    return pa.FixedSizeListArray.from_arrays(pa.array(values.reshape(-1)), seats)


def _agent_column(names: list[str], start: int, n: int, rotate: bool) -> pa.Array:
    """Per-game seat agents as a fixed-size list column (dictionary indices, no loop per game)."""
    players = len(names)
    seats = np.arange(players)
    if rotate:
        index = (seats[None, :] + np.arange(start, start + n)[:, None]) % players
    else:
        index = np.broadcast_to(seats, (n, players))
    values = pa.DictionaryArray.from_arrays(pa.array(index.reshape(-1).astype(np.int32)),
                                            pa.array(names, pa.string()))
    return pa.FixedSizeListArray.from_arrays(values.cast(pa.string()), players)


def _outcome_column(game, name: str, values: np.ndarray) -> pa.Array:
    """Numbers as they are; coded fields (Game.outcome_labels) as their labels."""
    labels = game.outcome_labels.get(name)
    if labels is None:
        return pa.array(values)
    return pa.array(np.asarray(labels, dtype=object)[values.astype(np.int64)], pa.string())


def check_agents(game, players: int, agents) -> list[str]:
    """Per-seat agent strings spelled with every parameter (one agent string means every
    seat); ValueError names the problem."""
    if isinstance(agents, str):
        agents = [agents] * players
    agents = list(agents)
    if len(agents) != players:
        raise ValueError(f"agents must name one agent per seat ({players}), got {len(agents)}")
    return [canonical_agent(game, a) for a in agents]


def engine_label(game) -> str:
    """The engine_version column of a game's results: the game's engine and the package."""
    return f"{game.name}-{game.engine_version}/meeplelab-{PACKAGE_VERSION}"


def play(game, players: int, rules: dict | None = None, agents="random", seed: int = 0,
         start: int = 0, count: int = 1, stream: int = 0, speeds=None,
         experiment: str = "", arm: str = "", rotate: bool = False,
         games_per_deal: int = 1) -> pa.RecordBatch:
    """Games start..start+count-1 of (game, players, rules, agents, seed) as a record batch.

    rotate: the agent list turns one seat per game (game i puts agents[(k + i) % players] in
    seat k), so every agent sits in every seat equally often.
    games_per_deal: games i with the same i // games_per_deal share their chance (a `deal`
    column then says which); with rotate and games_per_deal = players every deal is played
    once in every seat rotation.
    """
    resolved = game.resolve_rules(rules, players)
    names = check_agents(game, players, agents)
    if speeds is not None and len(speeds) != players:
        raise ValueError(f"speeds must give one value per seat ({players})")
    out = play_batch(game.handle, game.pack_rules(resolved, players), players,
                     [agent_spec(game, a) for a in names], speeds, seed, stream, start, count,
                     rotate=bool(rotate), games_per_deal=games_per_deal)
    if out["truncated"].any():
        raise RuntimeError(f"{game.name}: a game did not end within the move limit")
    n = count
    shares = out["win_shares"]
    columns = {
        "experiment": pa.array([experiment] * n, pa.string()).dictionary_encode(),
        "arm": pa.array([arm] * n, pa.string()).dictionary_encode(),
        "game_index": pa.array(np.arange(start, start + n, dtype=np.int64)),
        **({"deal": pa.array(np.arange(start, start + n, dtype=np.int64) // games_per_deal)}
           if games_per_deal > 1 else {}),
        "seed": pa.array(np.full(n, seed, dtype=np.uint64)),
        "players": pa.array(np.full(n, players, dtype=np.int8)),
        "seat_agent": _agent_column(names, start, n, rotate),
        "seat_score": _list_column(out["scores"]),
        "seat_win_share": _list_column(shares),
        "num_winners": pa.array((shares > 0).sum(axis=1).astype(np.int8)),
        "length": pa.array(out["length"]),
        "end_reason": pa.DictionaryArray.from_arrays(
            pa.array(out["end_reason"].astype(np.int32)), pa.array(list(game.end_reasons))),
    }
    for j, name in enumerate(game.game_outcome_names):
        columns[name] = _outcome_column(game, name, out["game_outcomes"][:, j])
    for j, name in enumerate(game.seat_outcome_names):
        values = _outcome_column(game, name, out["seat_outcomes"][:, :, j].reshape(-1))
        columns["seat_" + name] = pa.FixedSizeListArray.from_arrays(values, players)
    columns["game"] = pa.array([game.name] * n, pa.string()).dictionary_encode()
    columns["rules_fingerprint"] = pa.array(
        [game.rules_fingerprint(resolved, players)] * n, pa.string()).dictionary_encode()
    columns["engine_version"] = pa.array([engine_label(game)] * n,
                                         pa.string()).dictionary_encode()
    return pa.RecordBatch.from_pydict(columns)
