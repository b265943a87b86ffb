"""Plays a shard of games and hands back its columns by name (one row per game).

The columns, in this order (numpy arrays: one value per game, or (games, seats) per seat in
seat order; text as object arrays): experiment, arm, game_index, deal (only when games share
deals), seed, players, seat_agent, seat_score, seat_win_share, num_winners, length,
end_reason, seat_forced (only with restricted play: per seat, the decisions where every
legal action was forbidden, so the agent played one anyway), the game's own outcome fields (`<name>` per game, `seat_<name>` per seat: numbers,
or labels for coded fields), game, rules_fingerprint, engine_version.  Their Arrow types are
the results schema, defined once in core_cy/play/schema.py (RESULT_COLUMNS), which `play` uses
to return them as a record batch and the runner to store them.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from core_cy.agents import agent_spec, canonical_agent
from core_cy.engine.game import PACKAGE_VERSION
from core_cy.play.loop import play_batch
from core_cy.play.schema import result_batch


def _seat_agents(names: list[str], start: int, n: int, rotate: bool) -> np.ndarray:
    """Per-game seat agents, (games, seats) (an index array, no loop per game)."""
    players = len(names)
    seats = np.arange(players)
    if rotate:
        index = (seats[None, :] + np.arange(start, start + n)[:, None]) % players
    else:
        index = np.broadcast_to(seats, (n, players))
    return np.asarray(names, dtype=object)[index]


def _outcome(game, name: str, values: np.ndarray) -> np.ndarray:
    """Numbers as they are; coded fields (Game.outcome_labels) as their labels."""
    labels = game.outcome_labels.get(name)
    if labels is None:
        return values
    return np.asarray(labels, dtype=object)[values.astype(np.int64)]


def _same(value, n: int) -> np.ndarray:
    """One value for every game (a text column)."""
    return np.full(n, value, dtype=object)


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


def game_facts(game, players: int) -> dict:
    """What the statistics need to know of `game`'s results beyond their rows (stored with
    every shard: core_cy.play.schema.FACTS_KEY)."""
    return {"game": game.name, "cooperative": bool(game.cooperative),
            "safety_end_reasons": list(game.safety_end_reasons), "players": int(players)}


def play_columns(game, players: int, rules: dict | None = None, agents="random",
                 seed: int = 0, start: int = 0, count: int = 1, stream: int = 0, speeds=None,
                 experiment: str = "", arm: str = "", rotate: bool = False,
                 games_per_deal: int = 1) -> dict[str, np.ndarray]:
    """Games start..start+count-1 of (game, players, rules, agents, seed) as columns.

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
    index = np.arange(start, start + n, dtype=np.int64)
    shares = out["win_shares"]
    columns = {
        "experiment": _same(experiment, n),
        "arm": _same(arm, n),
        "game_index": index,
        **({"deal": index // games_per_deal} if games_per_deal > 1 else {}),
        "seed": np.full(n, seed, dtype=np.uint64),
        "players": np.full(n, players, dtype=np.int8),
        "seat_agent": _seat_agents(names, start, n, rotate),
        "seat_score": out["scores"],
        "seat_win_share": shares,
        "num_winners": (shares > 0).sum(axis=1).astype(np.int8),
        "length": out["length"],
        "end_reason": np.asarray(game.end_reasons, dtype=object)[out["end_reason"]],
    }
    if any("forbid=" in a for a in names):   # restricted play (agent(forbid=kind))
        columns["seat_forced"] = out["forced"]
    for j, name in enumerate(game.game_outcome_names):
        columns[name] = _outcome(game, name, out["game_outcomes"][:, j])
    for j, name in enumerate(game.seat_outcome_names):
        columns["seat_" + name] = _outcome(game, name, out["seat_outcomes"][:, :, j])
    columns["game"] = _same(game.name, n)
    columns["rules_fingerprint"] = _same(game.rules_fingerprint(resolved, players), n)
    columns["engine_version"] = _same(engine_label(game), n)
    return columns


def play(game, players: int, rules: dict | None = None, agents="random", seed: int = 0,
         **options) -> pa.RecordBatch:
    """play_columns(...) as a record batch of the stored results schema, the game's facts
    (game_facts) in its metadata."""
    return result_batch(play_columns(game, players, rules, agents, seed, **options),
                        game_facts(game, players))
