# The engine contract shared by every game (see ../shared/ARCHITECTURE.md, "The engine contract").
#
# An engine is a table of C functions over one flat state struct of `state_size` bytes.
# Agents and the batch runner only ever see `Engine*` and `void*` states, so they never know
# which game they play.  Everything here is nogil and allocation-free.
from libc.stdint cimport uint64_t, uint32_t, int32_t

cdef extern from "meeple_rng.h":
    ctypedef struct Rng:
        uint64_t key
        uint64_t ctr
    void rng_seed(Rng* r, uint64_t seed, uint64_t a, uint64_t b, uint64_t c) noexcept nogil
    uint64_t rng_next(Rng* r) noexcept nogil
    uint32_t rng_below(Rng* r, uint32_t n) noexcept nogil
    double rng_uniform(Rng* r) noexcept nogil

cdef enum:
    MAX_SEATS = 8            # the largest player count any engine may declare
    MAX_LEGAL = 4096         # capacity of a legal-action buffer
    MAX_GAME_OUTCOMES = 16   # game-level outcome fields an engine may report
    MAX_SEAT_OUTCOMES = 16   # per-seat outcome fields an engine may report
    STREAM_CHANCE = 0        # RNG stream id for the game's own chance events
    STREAM_SEAT = 1          # seat k's agent uses stream STREAM_SEAT + k
    POLICY_SCRATCH = 65536   # bytes of scratch memory handed to Engine.policy

# Per-seat parameters that belong to the player rather than to its decisions,
# e.g. the speed of a hand in a real-time game (action durations are divided by it).
ctypedef struct SeatParams:
    double speed

# Where a state keeps the five int32 fields every game has (byte offsets in its struct), so
# that one set of readers below serves every engine.
ctypedef struct StateFields:
    size_t players
    size_t current       # the seat that acts next; in real time the hand whose decision comes first
    size_t terminal      # non-zero once the game is over
    size_t moves         # decisions taken so far (the game length in moves)
    size_t end_reason    # the end reason code (0 while running)

ctypedef struct Engine:
    size_t state_size
    StateFields fields
    size_t rules_size
    int num_actions          # actions are integers in [0, num_actions)
    int min_players
    int max_players
    bint cooperative         # win shares are the team outcome (0 or 1 for every seat)
    int num_game_outcomes
    int num_seat_outcomes
    int num_policies         # engine-specific policies (planners) callable by agents
    # Set up a new game: copies `rules` (rules_size bytes) into the state, draws all
    # chance it needs from `rng` (which the state keeps for later chance events).
    void (*setup)(void* st, const void* rules, int players, const SeatParams* seats,
                  const Rng* rng) noexcept nogil
    # Writes the legal actions (ascending) into out, returns how many.
    int (*legal_actions)(const void* st, int* out) noexcept nogil
    # Applies a legal action; chance is drawn from the rng inside the state.
    void (*apply)(void* st, int action) noexcept nogil
    # Final scores and win shares per seat (shares sum to 1, or team 0/1 when cooperative).
    void (*scores)(const void* st, double* out) noexcept nogil
    void (*win_shares)(const void* st, double* out) noexcept nogil
    # Game-specific outcome fields: game_out[num_game_outcomes],
    # seat_out[seat * num_seat_outcomes + k].
    void (*outcomes)(const void* st, double* game_out, double* seat_out) noexcept nogil
    # A heuristic value of the state for `seat` (higher is better for that seat).
    double (*heuristic)(const void* st, int seat) noexcept nogil
    # Copies st to out as `seat` may see it: hidden information is re-drawn from rng
    # (a determinization), so look-ahead agents never peek.
    void (*observe)(const void* st, int seat, void* out, Rng* rng) noexcept nogil
    # Optional (may be NULL): engine-specific policy number `which` picks an action.
    int (*policy)(const void* st, int which, Rng* rng, void* scratch) noexcept nogil
    # Optional (may be NULL): fills out[i] = heuristic(apply(st, actions[i]), seat) exactly,
    # faster than clone+apply, using only what `seat` may see (the values of a hidden-
    # information game must not depend on hidden parts); returns 0 (out untouched) to ask
    # for the generic path (determinize with observe, then clone+apply+heuristic).
    int (*action_values)(const void* st, int seat, const int* actions, int n,
                         double* out) noexcept nogil

cdef inline int32_t state_field(const void* st, size_t offset) noexcept nogil:
    return (<const int32_t*>(<const char*>st + offset))[0]

cdef inline int st_players(const Engine* e, const void* st) noexcept nogil:
    return state_field(st, e.fields.players)

cdef inline int st_current(const Engine* e, const void* st) noexcept nogil:
    return state_field(st, e.fields.current)

cdef inline bint st_terminal(const Engine* e, const void* st) noexcept nogil:
    return state_field(st, e.fields.terminal) != 0

cdef inline int st_moves(const Engine* e, const void* st) noexcept nogil:
    return state_field(st, e.fields.moves)

cdef inline int st_end_reason(const Engine* e, const void* st) noexcept nogil:
    return state_field(st, e.fields.end_reason)

cdef inline void set_state_fields(Engine* e, const void* base, const int32_t* players,
                                  const int32_t* current, const int32_t* terminal,
                                  const int32_t* moves, const int32_t* end_reason) noexcept nogil:
    """Records where a state struct keeps its common fields, from pointers into one
    instance of it (Cython has no offsetof)."""
    e.fields.players = <const char*>players - <const char*>base
    e.fields.current = <const char*>current - <const char*>base
    e.fields.terminal = <const char*>terminal - <const char*>base
    e.fields.moves = <const char*>moves - <const char*>base
    e.fields.end_reason = <const char*>end_reason - <const char*>base


cdef class EngineHandle:
    cdef const Engine* engine


cdef class State:
    cdef EngineHandle handle
    cdef void* buf
    cdef readonly object game      # the Python game object (rules, names, dict codec)
    cdef void _check_alive(self) except *


cdef State new_state(object game, EngineHandle handle)


cdef inline void redraw_chance(Rng* state_rng, Rng* rng) noexcept nogil:
    """For Engine.observe: the game's future chance is hidden too, so a view's own stream is
    re-keyed from the observer's `rng` (a search that kept it would foresee every draw)."""
    state_rng.key = rng_next(rng)
    state_rng.ctr = 0
