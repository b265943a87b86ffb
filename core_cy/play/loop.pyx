# cython: language_level=3
"""The batch runner: plays a shard of games of one (game, rules, players, agents) in nogil.

Game `i` draws its chance from stream (seed, stream, i // games_per_deal, STREAM_CHANCE) and
seat k's agent from (seed, stream, i, STREAM_SEAT + k): a game's result depends only on those
numbers, never on how the games were split into shards.  Experiments pass the same `stream` to
every arm, so arms play the same deals game by game (common random numbers); with
games_per_deal = players and rotation, every deal is also played once per seat rotation.
"""
import numpy as np
cimport numpy as cnp
from libc.stdlib cimport malloc, free
from libc.stdint cimport uint64_t
from core_cy.engine.contract cimport (Engine, EngineHandle, Rng, SeatParams, MAX_SEATS,
                               st_terminal, st_current, st_moves, st_end_reason,
                               MAX_GAME_OUTCOMES, MAX_SEAT_OUTCOMES, rng_seed,
                               STREAM_CHANCE, STREAM_SEAT)
from core_cy.agents.agent cimport (Agent, Agents, Workspace, workspace_init, workspace_free,
                             agent_act, agent_new_game, agent_seen)

cnp.import_array()


cdef int play_one(const Engine* e, void* st, const char* rules, int players,
                  const SeatParams* seats, Agent** agents, uint64_t seed,
                  uint64_t stream, uint64_t index, uint64_t deal, long max_moves,
                  Workspace* w) noexcept nogil:
    """Plays game `index` (chance from deal `deal`) to the end (or max_moves); returns 0, or 1
    if it hit max_moves."""
    cdef Rng chance
    cdef Rng seat_rng[MAX_SEATS]
    cdef int k, seat, action
    cdef long moves = 0
    rng_seed(&chance, seed, stream, deal, STREAM_CHANCE)
    for k in range(players):
        rng_seed(&seat_rng[k], seed, stream, index, STREAM_SEAT + k)
    e.setup(st, rules, players, seats, &chance)
    for k in range(players):
        agent_new_game(agents[k])
    while not st_terminal(e, st):
        if moves >= max_moves:
            return 1
        seat = st_current(e, st)
        action = agent_act(e, st, seat, agents[seat], &seat_rng[seat], w)
        e.apply(st, action)
        for k in range(players):
            agent_seen(agents[k], action)
        moves += 1
    return 0


def play_batch(EngineHandle handle, bytes rules, int players, agents, speeds,
               uint64_t seed, uint64_t stream, uint64_t start, long count,
               long max_moves=10_000_000, bint rotate=False, uint64_t games_per_deal=1):
    """Plays games start..start+count-1 and returns a dict of numpy arrays.

    agents: per seat, AgentSpec fields (dicts) from core_cy.agents.agent_spec.
    rotate: game i seats agents[(k + i) % players] in seat k, so that over any `players`
    consecutive games every agent sits in every seat once (depends on i alone, not on shards).
    games_per_deal: games i with the same i // games_per_deal share their chance (one deal);
    with rotate and games_per_deal = players, a deal is played in every seat rotation.
    """
    cdef const Engine* e = handle.engine
    if len(rules) != e.rules_size:
        raise ValueError("packed rules do not match the engine")
    if not e.min_players <= players <= e.max_players:
        raise ValueError(f"players must be in {e.min_players}..{e.max_players}")
    if count < 0:
        raise ValueError("count must be >= 0")
    if games_per_deal < 1:
        raise ValueError("games_per_deal must be >= 1")
    cdef int ng = e.num_game_outcomes, ns = e.num_seat_outcomes
    if len(agents) != players:
        raise ValueError(f"agents must give one agent per seat ({players})")
    # Each seat's agent owns its search tree; rotation moves agents (and trees) between seats.
    cdef Agents owned = Agents(handle, [dict(a) for a in agents])
    cdef Agent* seat_agents[MAX_SEATS]
    cdef SeatParams seats[MAX_SEATS]
    cdef long g
    cdef int k, j
    for k in range(players):
        seat_agents[k] = &owned.agents[k]
        seats[k].speed = 1.0 if speeds is None else float(speeds[k])
    scores = np.zeros((count, players), dtype=np.float64)
    shares = np.zeros((count, players), dtype=np.float64)
    length = np.zeros(count, dtype=np.int32)
    reason = np.zeros(count, dtype=np.int16)
    truncated = np.zeros(count, dtype=np.bool_)
    game_out = np.zeros((count, max(ng, 1)), dtype=np.float64)
    seat_out = np.zeros((count, players, max(ns, 1)), dtype=np.float64)
    forced = np.zeros((count, players), dtype=np.int32)
    cdef int[:, ::1] v_forced = forced
    cdef double[:, ::1] v_scores = scores, v_shares = shares, v_game = game_out
    cdef double[:, :, ::1] v_seat = seat_out
    cdef int[::1] v_len = length
    cdef short[::1] v_reason = reason
    cdef cnp.npy_bool[::1] v_trunc = truncated
    cdef const char* r = rules
    cdef Workspace w
    cdef void* st = malloc(e.state_size)
    cdef double tmp_g[MAX_GAME_OUTCOMES]
    cdef double tmp_s[MAX_SEATS * MAX_SEAT_OUTCOMES]
    cdef double tmp_p[MAX_SEATS]
    if st == NULL or workspace_init(&w, e) != 0:
        free(st)
        raise MemoryError()
    try:
        with nogil:
            for g in range(count):
                if rotate:
                    for k in range(players):
                        seat_agents[k] = &owned.agents[(k + (start + g)) % players]
                v_trunc[g] = play_one(e, st, r, players, seats, seat_agents, seed, stream,
                                      start + g, (start + g) // games_per_deal, max_moves, &w)
                e.scores(st, tmp_p)
                for k in range(players):
                    v_scores[g, k] = tmp_p[k]
                e.win_shares(st, tmp_p)
                for k in range(players):
                    v_shares[g, k] = tmp_p[k]
                for k in range(players):   # restricted play: decisions with nothing allowed
                    v_forced[g, k] = seat_agents[k].forced
                v_len[g] = st_moves(e, st)
                v_reason[g] = st_end_reason(e, st)
                e.outcomes(st, tmp_g, tmp_s)
                for j in range(ng):
                    v_game[g, j] = tmp_g[j]
                for k in range(players):
                    for j in range(ns):
                        v_seat[g, k, j] = tmp_s[k * ns + j]
    finally:
        workspace_free(&w)
        free(st)
    return {"scores": scores, "win_shares": shares, "length": length, "end_reason": reason,
            "truncated": truncated, "game_outcomes": game_out[:, :ng],
            "seat_outcomes": seat_out[:, :, :ns], "forced": forced}
