# The engine contract shared by every game (see ../shared/ARCHITECTURE.md, "The engine contract").
#
# An engine is a table of C functions over one flat state struct of `state_size` bytes.
# Agents and the batch runner only ever see `Engine*` and `void*` states, so they never know
# which game they play.  Everything here is nogil and allocation-free.
from libc.stdint cimport uint64_t, uint32_t, int32_t, int8_t, uint8_t, int16_t
from libc.string cimport memcpy, memset

cdef extern from "meeple_rng.h":
    ctypedef struct Rng:
        uint64_t key
        uint64_t ctr
    void rng_seed(Rng* r, uint64_t seed, uint64_t a, uint64_t b, uint64_t c) noexcept nogil
    uint64_t rng_next(Rng* r) noexcept nogil
    uint32_t rng_below(Rng* r, uint32_t n) noexcept nogil
    double rng_uniform(Rng* r) noexcept nogil
    # A uniformly drawn set bit of a 32-bit mask (-1 for an empty one; one draw either way).
    int rng_bit(Rng* r, uint32_t mask) noexcept nogil
    # Orders equal values at random: the item hashed with one draw per decision (the salt).
    uint64_t rng_tie_key(uint64_t salt, uint64_t item) noexcept nogil
    # Fisher-Yates over n items of `size` bytes: rng_shuffle(&rng, a, n, sizeof(a[0])).
    void rng_shuffle(Rng* r, void* items, int n, size_t size) noexcept nogil

cdef enum:
    MAX_SEATS = 8            # the largest player count any engine may declare
    MAX_LEGAL = 4096         # capacity of a legal-action buffer
    MAX_GAME_OUTCOMES = 16   # game-level outcome fields an engine may report
    MAX_SEAT_OUTCOMES = 16   # per-seat outcome fields an engine may report
    STREAM_CHANCE = 0        # RNG stream id for the game's own chance events
    STREAM_SEAT = 1          # seat k's agent uses stream STREAM_SEAT + k
    POLICY_SCRATCH = 131072  # bytes of scratch memory handed to Engine.policy (the largest
                             # need: Forbidden Desert's team_search at its widest, checked
                             # when its planner.pxi is imported)
    POLICY_PARAMS = 64       # capacity of a policy parameter block (doubles)

# Per-seat parameters that belong to the player rather than to its decisions,
# e.g. the speed of a hand in a real-time game (action durations are divided by it).
ctypedef struct SeatParams:
    double speed

# The fields every game has: the first member of every state struct (so at offset 0), read
# by the contract's readers below, the runner, the agents and Game.from_dict's template
# without knowing the game.
ctypedef struct GameHeader:
    Rng rng                  # the state's own stream for chance events
    int32_t players
    int32_t current          # the seat that acts next; in real time the hand whose decision comes first
    int32_t terminal         # non-zero once the game is over
    int32_t moves            # decisions taken so far (the game length in moves)
    int32_t end_reason       # the end reason code (0 while running)
    double share[MAX_SEATS]  # win shares once the game is over (share_best); a cooperative
                             # game may hand its own win_shares and leave them 0

# The engine functions, one type each (comments at their Engine fields below).
ctypedef void (*SetupFn)(void* st, const void* rules, int players, const SeatParams* seats,
                         const Rng* rng) noexcept nogil
ctypedef int (*LegalFn)(const void* st, int* out) noexcept nogil
ctypedef void (*ApplyFn)(void* st, int action) noexcept nogil
ctypedef void (*PerSeatFn)(const void* st, double* out) noexcept nogil
ctypedef void (*OutcomesFn)(const void* st, double* game_out, double* seat_out) noexcept nogil
ctypedef double (*HeuristicFn)(const void* st, int seat) noexcept nogil
ctypedef void (*ObserveFn)(const void* st, int seat, void* out, Rng* rng) noexcept nogil
ctypedef int (*PolicyFn)(const void* st, int which, const double* params, Rng* rng,
                         void* scratch) noexcept nogil
ctypedef int (*ActionValuesFn)(const void* st, int seat, const int* actions, int n,
                               double* out) noexcept nogil
ctypedef int (*RandomActionFn)(const void* st, Rng* rng) noexcept nogil

ctypedef struct Engine:
    size_t state_size
    size_t rules_offset      # where the state keeps its packed rules (rules_size bytes)
    size_t rules_size
    int num_actions          # actions are integers in [0, num_actions)
    int min_players
    int max_players
    bint cooperative         # win shares are the team outcome (0 or 1 for every seat)
    int num_game_outcomes
    int num_seat_outcomes
    int num_policies         # engine-specific policies (planners) callable by agents
    int num_policy_params    # doubles of a policy parameter block (<= POLICY_PARAMS)
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
    # Optional (may be NULL): engine-specific policy number `which` picks an action, reading
    # its parameters from `params` (num_policy_params doubles in the order of the game's
    # policy parameter table, Game.policy_params: the agent's own block, defaults filled in).
    PolicyFn policy
    # Optional (may be NULL): fills out[i] = heuristic(apply(st, actions[i]), seat) exactly,
    # faster than clone+apply, using only what `seat` may see (the values of a hidden-
    # information game must not depend on hidden parts); returns 0 (out untouched) to ask
    # for the generic path (determinize with observe, then clone+apply+heuristic).
    ActionValuesFn action_values
    # Optional (may be NULL): legal[rng_below(rng, n)] of the n legal actions, drawn from rng
    # exactly so but without listing them (the random agent's fast path: same games).
    RandomActionFn random_action
    # Optional (may be NULL): the actions a search considers (ascending), a subset of the
    # legal ones through which every legal turn stays reachable: a step whose effect another
    # order of the same turn's steps reaches too may be left out (Reef Encounter: a shrimp
    # moved again before anything else happened).  The search agent's `turns` parameter.
    LegalFn search_actions
    # Optional (may be NULL): each seat's chance to win a running game, in [0, 1], estimated
    # from the position (a model fitted to game outcomes): the search's cut-off judgement
    # with mcts(judge=fitted).
    PerSeatFn leaf_values

# The common fields of a state of engine e (every state opens with its GameHeader).
cdef inline GameHeader* header(void* st) noexcept nogil:
    return <GameHeader*>st

cdef inline const GameHeader* const_header(const void* st) noexcept nogil:
    return <const GameHeader*>st

cdef inline int st_players(const Engine* e, const void* st) noexcept nogil:
    return const_header(st).players

cdef inline int st_current(const Engine* e, const void* st) noexcept nogil:
    return const_header(st).current

cdef inline bint st_terminal(const Engine* e, const void* st) noexcept nogil:
    return const_header(st).terminal != 0

cdef inline int st_moves(const Engine* e, const void* st) noexcept nogil:
    return const_header(st).moves

cdef inline int st_end_reason(const Engine* e, const void* st) noexcept nogil:
    return const_header(st).end_reason

cdef inline Rng* st_rng(const Engine* e, void* st) noexcept nogil:
    return &header(st).rng


# ---- pieces every engine uses (nogil, allocation-free)

cdef inline void begin_setup(const Engine* e, void* st, const void* rules, int players,
                             const Rng* rng) noexcept nogil:
    """The opening of every Engine.setup: a zeroed state (zero padding too, so states
    compare by memcmp) with the rules copied in, the random stream and the player count."""
    memset(st, 0, e.state_size)
    memcpy(<char*>st + e.rules_offset, rules, e.rules_size)
    header(st).rng = rng[0]
    header(st).players = players


cdef inline void end_game(void* st, int reason) noexcept nogil:
    header(st).terminal = 1
    header(st).end_reason = reason


cdef inline int compare_keys(const int* a, const int* b, int nkeys) noexcept nogil:
    """Tie-break keys compared in order: 1 if a is better (higher), -1 if worse, 0 if equal."""
    cdef int k
    for k in range(nkeys):
        if a[k] != b[k]:
            return 1 if a[k] > b[k] else -1
    return 0


cdef inline void share_best(void* st, const int* keys, int nkeys) noexcept nogil:
    """Win shares from per-seat tie-break keys (keys[seat * nkeys + k], compared in order,
    higher is better): 1/n for each of the n seats with the best keys, 0 for the others."""
    cdef GameHeader* h = header(st)
    cdef int i, best = 0, n = 0
    for i in range(1, h.players):
        if compare_keys(&keys[i * nkeys], &keys[best * nkeys], nkeys) > 0:
            best = i
    for i in range(h.players):
        n += compare_keys(&keys[i * nkeys], &keys[best * nkeys], nkeys) == 0
    for i in range(h.players):
        h.share[i] = (1.0 / n) if compare_keys(&keys[i * nkeys], &keys[best * nkeys],
                                               nkeys) == 0 else 0.0


cdef inline void header_shares(const void* st, double* out) noexcept nogil:
    """Engine.win_shares of every game that keeps its shares in the header."""
    cdef const GameHeader* h = const_header(st)
    cdef int i
    for i in range(h.players):
        out[i] = h.share[i]


# A draw pile kept bottom-first in deck[0 .. count - 1] (its top is deck[count - 1]), with
# cards and count in small integer types.
ctypedef fused pile_card_t:
    int8_t
    uint8_t

ctypedef fused pile_count_t:
    int8_t
    int32_t

cdef inline int pop_top(pile_card_t* deck, pile_count_t* count) noexcept nogil:
    """Takes the top card off a pile: the card, or -1 when the pile is empty.  Its slot is
    cleared, so that equal piles are equal byte for byte (states compare by memcmp)."""
    cdef int card
    if count[0] == 0:
        return -1
    count[0] -= 1
    card = deck[count[0]]
    deck[count[0]] = 0
    return card


# The cards of a hidden pile (small integers of one of these types).
ctypedef fused hidden_card_t:
    int8_t
    uint8_t
    int16_t
    int32_t

cdef inline void sort_cards(hidden_card_t* cards, int n) noexcept nogil:
    """Sorts cards[0 .. n-1] ascending, by insertion: a pile holds a few dozen cards, where a
    library sort's call per comparison costs more than the sort."""
    cdef int i, j
    cdef hidden_card_t card
    for i in range(1, n):
        card = cards[i]
        j = i - 1
        while j >= 0 and cards[j] > card:
            cards[j + 1] = cards[j]
            j -= 1
        cards[j + 1] = card


cdef inline void canonical_shuffle(Rng* rng, hidden_card_t* cards, int n) noexcept nogil:
    """Shuffles cards[0 .. n-1] from their sorted order, so that the result depends only on
    which cards are hidden, not on their hidden order (an observe's redeal: two states a
    seat cannot tell apart give the same view)."""
    sort_cards(cards, n)
    rng_shuffle(rng, cards, n, sizeof(cards[0]))


cdef inline int emit(int* out, int n, int action) noexcept nogil:
    """Appends a legal action to out[0 .. n-1]: the new count."""
    out[n] = action
    return n + 1


ctypedef void (*EndFn)(void* st, int reason) noexcept nogil

cdef inline const void* as_if_ended(const Engine* e, const void* st, void* tmp, EndFn end,
                                    int reason) noexcept nogil:
    """st itself once the game is over; before, a copy in tmp (a state of e) that `end`
    ended now with `reason` (provisional scores: what the game would score if it ended now)."""
    if const_header(st).terminal:
        return st
    memcpy(tmp, st, e.state_size)
    end(tmp, reason)
    return tmp


cdef class EngineHandle:
    cdef const Engine* engine


cdef class State:
    cdef EngineHandle handle
    cdef void* buf
    cdef readonly object game      # the Python game object (rules, names, dict codec)
    cdef void _check_alive(self) except *


cdef State new_state(object game, EngineHandle handle)

# Fills the engine table, once at the end of a game module, and returns the handle the
# Game class keeps (`handle`):
#     cdef MState _LAYOUT   # one instance, to read where the rules are
#     MaoriGame.handle = engine_handle(&ENGINE, MaoriGame, &_LAYOUT, sizeof(MState),
#         &_LAYOUT.rules, sizeof(MRules), m_setup, m_legal, m_apply, m_scores, m_outcomes,
#         m_heuristic, m_observe, NULL, m_action_values)
# The data part is derived from the game's Python face, never counted by hand:
# num_actions = len(game.actions), players and cooperative from the class, outcome counts
# from the name lists, num_policies from game.policies.  win_shares defaults to
# header_shares; policy, action_values, random_action, search_actions and leaf_values may
# be NULL.
cdef EngineHandle engine_handle(Engine* e, object game, const void* layout, size_t state_size,
                                const void* rules, size_t rules_size, SetupFn setup,
                                LegalFn legal_actions, ApplyFn apply, PerSeatFn scores,
                                OutcomesFn outcomes, HeuristicFn heuristic, ObserveFn observe,
                                PolicyFn policy, ActionValuesFn action_values,
                                PerSeatFn win_shares=*, RandomActionFn random_action=*,
                                LegalFn search_actions=*, PerSeatFn leaf_values=*)
