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
    # Fisher-Yates over n items of `size` bytes: rng_shuffle(&rng, a, n, sizeof(a[0])).
    void rng_shuffle(Rng* r, void* items, int n, size_t size) noexcept nogil

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

# Where a state keeps the fields every game has (byte offsets in its struct), so that one set
# of readers below (and one state-dict template in game.py) serves every engine.
ctypedef struct StateFields:
    size_t players       # int32
    size_t current       # int32: the seat that acts next; in real time the hand whose decision comes first
    size_t terminal      # int32: non-zero once the game is over
    size_t moves         # int32: decisions taken so far (the game length in moves)
    size_t end_reason    # int32: the end reason code (0 while running)
    size_t rules         # the packed rules (Engine.rules_size bytes), NO_FIELD if not kept
    size_t rng           # the state's Rng (chance events), NO_FIELD if not kept

cdef enum:
    NO_FIELD = -1        # a StateFields offset the engine does not declare

# The engine functions, one type each (comments at their Engine fields below).
ctypedef void (*SetupFn)(void* st, const void* rules, int players, const SeatParams* seats,
                         const Rng* rng) noexcept nogil
ctypedef int (*LegalFn)(const void* st, int* out) noexcept nogil
ctypedef void (*ApplyFn)(void* st, int action) noexcept nogil
ctypedef void (*PerSeatFn)(const void* st, double* out) noexcept nogil
ctypedef void (*OutcomesFn)(const void* st, double* game_out, double* seat_out) noexcept nogil
ctypedef double (*HeuristicFn)(const void* st, int seat) noexcept nogil
ctypedef void (*ObserveFn)(const void* st, int seat, void* out, Rng* rng) noexcept nogil
ctypedef int (*PolicyFn)(const void* st, int which, Rng* rng, void* scratch) noexcept nogil
ctypedef int (*ActionValuesFn)(const void* st, int seat, const int* actions, int n,
                               double* out) noexcept nogil

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
    SetupFn setup
    # Writes the legal actions (ascending) into out, returns how many.
    LegalFn legal_actions
    # Applies a legal action; chance is drawn from the rng inside the state.
    ApplyFn apply
    # Final scores and win shares per seat (shares sum to 1, or team 0/1 when cooperative).
    PerSeatFn scores
    PerSeatFn win_shares
    # Game-specific outcome fields: game_out[num_game_outcomes],
    # seat_out[seat * num_seat_outcomes + k].
    OutcomesFn outcomes
    # A heuristic value of the state for `seat` (higher is better for that seat).
    HeuristicFn heuristic
    # Copies st to out as `seat` may see it: hidden information is re-drawn from rng
    # (a determinization), so look-ahead agents never peek.
    ObserveFn observe
    # Optional (may be NULL): engine-specific policy number `which` picks an action.
    PolicyFn policy
    # Optional (may be NULL): fills out[i] = heuristic(apply(st, actions[i]), seat) exactly,
    # faster than clone+apply, using only what `seat` may see (the values of a hidden-
    # information game must not depend on hidden parts); returns 0 (out untouched) to ask
    # for the generic path (determinize with observe, then clone+apply+heuristic).
    ActionValuesFn action_values

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
                                  const int32_t* moves, const int32_t* end_reason,
                                  const void* rules=NULL, const Rng* rng=NULL) noexcept nogil:
    """Records where a state struct keeps its common fields, from pointers into one
    instance of it (Cython has no offsetof).  With `rules` and `rng`, Game.from_dict's
    template loads the rules and restores the stream itself (game.py)."""
    e.fields.players = <const char*>players - <const char*>base
    e.fields.current = <const char*>current - <const char*>base
    e.fields.terminal = <const char*>terminal - <const char*>base
    e.fields.moves = <const char*>moves - <const char*>base
    e.fields.end_reason = <const char*>end_reason - <const char*>base
    e.fields.rules = <size_t>NO_FIELD if rules == NULL else <const char*>rules - <const char*>base
    e.fields.rng = <size_t>NO_FIELD if rng == NULL else <const char*>rng - <const char*>base


cdef inline void set_engine_functions(Engine* e, SetupFn setup, LegalFn legal_actions,
                                      ApplyFn apply, PerSeatFn scores, PerSeatFn win_shares,
                                      OutcomesFn outcomes, HeuristicFn heuristic,
                                      ObserveFn observe, PolicyFn policy,
                                      ActionValuesFn action_values) noexcept nogil:
    """Fills the function part of the table (policy and action_values may be NULL)."""
    e.setup = setup
    e.legal_actions = legal_actions
    e.apply = apply
    e.scores = scores
    e.win_shares = win_shares
    e.outcomes = outcomes
    e.heuristic = heuristic
    e.observe = observe
    e.policy = policy
    e.action_values = action_values


cdef class EngineHandle:
    cdef const Engine* engine


cdef class State:
    cdef EngineHandle handle
    cdef void* buf
    cdef readonly object game      # the Python game object (rules, names, dict codec)
    cdef void _check_alive(self) except *


cdef State new_state(object game, EngineHandle handle)

# The data part of the table, derived from the game's Python face (never counted by hand):
# sizes as given, num_actions = len(game.actions), players and cooperative from the class,
# outcome counts from the name lists, num_policies from game.policies.  Returns the handle
# the Game class keeps (`handle`).  Call once at import, after set_state_fields and
# set_engine_functions.
cdef EngineHandle engine_handle(Engine* e, object game, size_t state_size, size_t rules_size)
