# cython: language_level=3
"""The Golden Island (Cartagena - Die Goldinsel, Ruediger Dorn, Winning Moves 2008).

Rules: ../shared/rules/golden_island.md (section numbers below refer to it; the Hungarian
rulebook in ../shared/seeds/001_b57d29ae659b9fc8.txt is the authority).  The state is one
flat C struct (`GState`, rules and data tables included) so that clone is a memcpy; every
function of the engine table is nogil and allocation-free.

The state knows everything, including the hidden Golden Island, the chest values, the deck
orders and every permit's value.  What each seat knows is kept in the state too (island
cards it holds or remembers, chests it peeked), and `observe(seat)` redraws everything else
consistently with that knowledge.  A memory model (rule option `recall_error_per_mille`)
makes seats forget remembered facts; the `written_notes` variant switches it off.

A turn is split into decisions, each one action (section 4):
  PH_START    relic R4 owner: discard 1-2 hand cards and draw as many, or not
  PH_MOVE     play a card for movement: the action names the card and where the captain
              and the ship end (the path is irrelevant: only the final spaces matter,
              and a nest action happens only where a captain that moved ends)
  PH_GAMBLE   a won gamble: choose the colour of the pirate to take
  PH_ABILITY  play a second card for its ability (with its parameters), or pass
  PH_COPY     the Imitator: the copied ability's parameters
Hand refill, reshuffles, the end trigger and scoring follow automatically.
"""
from libc.math cimport exp
from libc.string cimport memcpy, memset
from libc.stdint cimport int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, uint64_t
from core_cy.engine.contract cimport (Engine, GameHeader, begin_setup, end_game, share_best,
                               as_if_ended, EngineHandle, State, SeatParams, Rng, rng_below,
                               rng_next, rng_uniform, rng_seed, rng_tie_key, rng_bit, rng_shuffle, engine_handle, MAX_SEATS, MAX_LEGAL,
                               STREAM_SEAT, emit, pop_top, canonical_shuffle)
from core_cy.engine import contract
from core_cy.engine.actions import ActionSpace, Kind
from core_cy.engine.codec import (INT32_MAX, check_live, choice, fail, integer, leaf_weight_values,
                                  load_data)
from core_cy.engine.game import options_from_data
from core_cy.agents import AgentGame

import functools

ENGINE_VERSION = "1.2"   # 1.2: steal_at_home (captains | both | none), default captains;
                         # the bank_short outcome

cdef extern from "meeple_bits.h":
    int popcount "meeple_popcount32"(unsigned int x) noexcept nogil
    int lowest_bit "meeple_lowest64"(uint64_t x) noexcept nogil

cdef enum:
    MAX_PLAYERS = 4
    N_ISLANDS = 12          # treasure islands = island cards = chest tokens (rulebook)
    N_NODES = 15            # H, T1..T12, VL, VU
    NODE_H = 0              # the harbour; T_k is node k
    NODE_VL = 13            # lower volcano: relics
    NODE_VU = 14            # upper volcano: the 7-permits
    NODE_SLOTS = 16         # nodes as they are laid out in action ids
    MAX_EDGES = 48
    MAX_DEGREE = N_NODES - 1
    MAX_NEST = 16
    MAX_CARDS = 16          # one pirate deck (the rulebook's 16)
    MAX_HAND = 5
    N_COLOURS = 4
    N_RELICS = 4
    TOP_PERMIT = 7          # permits 1..7 per colour; the 7 starts at the upper volcano
    PIRATE_CAP = 3          # a player holds at most three pirates (section 4.2)
    HAND_SIZE = 4
    HAND_SIZE_R3 = 5
    SIXTH_PERMIT = 6        # placing the sixth permit triggers the end (section 5.1)
    GOLDEN_COIN = 3         # the 3-coin on the Golden Island
    TOTAL_COINS = 47        # 17 x 1 + 10 x 3 (section 2.1)
    MAX_STACK = MAX_PLAYERS # one permit per player per island
    ALL_ISLANDS = 0xFFF
    NO_MOVE = 99            # movement points of a lighthouse card
    MAX_MOVE = 6            # the largest movement value a card may carry (data check)
    MAX_POINTS = MAX_MOVE + 1   # with relic R2's extra step
    N_SEAT_OUTCOMES = 12    # g_outcomes' fields per seat (SEAT_OUTCOMES names them)
    MAX_ABILITY_IDS = 128   # action ids one ability offers at most (landing: 14 combos x 7)

# Thief co-location at home (section 7, steal_at_home): indices of the option's choices.
cdef enum:
    HOME_CAPTAINS = 0
    HOME_BOTH = 1
    HOME_NONE = 2

# Nest space kinds (section 2.2).
cdef enum:
    NK_LIGHTHOUSE = 0
    NK_ISLAND_CARD = 1
    NK_PERMIT = 2
    NK_PIRATES = 3
    NK_GAMBLE = 4

# Card abilities (section 4.5).
cdef enum:
    AB_LANDING = 0
    AB_THIEF = 1
    AB_MASTER_THIEF = 2
    AB_FORTUNE_TELLER = 3
    AB_PIRATE = 4
    AB_VETERAN = 5
    AB_IMITATOR = 6

# Relics (section 2.7).
cdef enum:
    R1_ANY_COLOUR = 0
    R2_EXTRA_STEP = 1
    R3_HAND_FIVE = 2
    R4_SWAP_CARDS = 3

cdef enum:
    PH_START = 0
    PH_MOVE = 1
    PH_GAMBLE = 2
    PH_ABILITY = 3
    PH_COPY = 4

cdef enum:
    END_RUNNING = 0
    END_SIXTH_PERMIT = 1
    END_ROUND_LIMIT = 2

# Chest whereabouts (section 5.2).
cdef enum:
    CHEST_ON_ISLAND = -1
    CHEST_BOX = -2

cdef enum:
    N_WAYS = 2              # the captain's way round the ring: clockwise (or none), counter
    N_COMBOS = 14           # pirate combos: 4 single colours, then 10 pairs c1 <= c2
    SLOTS = MAX_HAND + 1    # hand slots, and COPY_SLOT: the Imitator's copied ability
    COPY_SLOT = MAX_HAND

# Action ids: contiguous blocks, one per kind (the named ActionSpace at the Python face is
# built from these constants); inside a block, mixed-radix parameters, first most significant.
cdef enum:
    A_SWAP = 0                                           # R4: hand-slot mask (0: keep)
    A_MOVE = A_SWAP + (1 << MAX_HAND)                    # slot, way, captain space, ship node
    A_GAMBLE_PIRATE = A_MOVE + MAX_HAND * N_WAYS * MAX_NEST * NODE_SLOTS   # colour
    A_PASS = A_GAMBLE_PIRATE + N_COLOURS                 # no ability card
    A_STEAL = A_PASS + 1                                 # slot, victim, cards (1-2)
    A_PEEK = A_STEAL + SLOTS * MAX_PLAYERS * 2           # slot, island
    A_TAKE = A_PEEK + SLOTS * N_ISLANDS                  # slot, pirate combo
    A_LAND = A_TAKE + SLOTS * N_COMBOS                   # slot, pirate combo, permit (1-7)
    A_VOLCANO = A_LAND + SLOTS * N_COMBOS * TOP_PERMIT   # slot, pirate colour, relic (VL)
    A_IMITATE = A_VOLCANO + SLOTS * N_COLOURS * N_RELICS # slot, opponent
    A_STEAL_SPLIT = A_IMITATE + SLOTS * MAX_PLAYERS      # slot, victim, second victim
    NUM_ACTIONS = A_STEAL_SPLIT + SLOTS * MAX_PLAYERS * MAX_PLAYERS

# Action kinds, as decompose() returns them.
cdef enum:
    K_SWAP = 0
    K_MOVE = 1
    K_GAMBLE_PIRATE = 2
    K_PASS = 3
    K_STEAL = 4
    K_PEEK = 5
    K_TAKE = 6
    K_LAND = 7
    K_VOLCANO = 8
    K_IMITATE = 9
    K_STEAL_SPLIT = 10

ctypedef struct GAction:
    int kind
    int slot          # the hand slot of the card played (COPY_SLOT: the copied ability)
    int x             # first parameter (mask, captain, colour, victim, island, combo, target)
    int y             # second (ship, cards, permit value, relic, second victim)
    int way           # a move's captain direction: 0 clockwise (or no captain step), 1 counter

# Heuristic weights (greedy agent), not rules: see g_heuristic().
cdef double W_SURVIVE = 20.0      # value of being sure to survive (a permit on the Golden Island);
                                  # mcts(iterations=400) vs greedy, 400 games on the same deals:
                                  # 20: 0.79, 30: 0.75, 45: 0.68; on others 10: 0.82, 15: 0.78,
                                  # 20: 0.81 (greedy itself: 20 vs 30 even, 0.493 over 4,000)
cdef double W_PERMIT = 1.5        # a permit in hand
cdef double W_PERMIT_VALUE = 0.1  # per point of a held permit
cdef double W_PIRATE = 0.7        # a pirate held
cdef double W_KNOWN = 0.6         # an island known not to be golden
cdef double W_CHEST_KNOWN = 0.2   # a peeked chest
cdef double W_DISTANCE = 0.3      # per sea step from where the ship should be
cdef double W_RELIC_BONUS = 1.0   # a relic's bonus beyond its gold
cdef double W_WIN = 100.0         # a finished game: the win

ctypedef struct GRules:
    int32_t exact_move            # section 4.1: a card that cannot use all points is unplayable
    int32_t steal_at_home         # section 7: HOME_NONE / HOME_CAPTAINS (on the lighthouse) /
                                  # HOME_BOTH (and ships in H) count as co-located
    int32_t volcano_by_pirates    # section 8.1: pirate cards (not landing cards) land on volcanoes
    int32_t max_rounds            # section 5.1 safety
    int32_t no_survivor_highest   # section 5.2 step 6: most gold wins when nobody survives
    int32_t recall_error          # per mille: chance to forget a remembered fact each own turn
    int32_t written_notes         # the two options as given, for to_dict (written_notes
    int32_t recall_option         # makes recall_error 0)
    int32_t first_random          # section 3.7: random first player (else seat 0)
    int32_t bank_limited          # section 5.2: payouts stop when the bank's coins run out
    int32_t nest_every_space      # section 4.3: every space the captain enters has its action
    int32_t negative_payout_paid  # section 5.2/8.9: a rank below the chest's value pays the
                                  # bank the difference (else it gets nothing)
    int32_t master_thief_split    # section 4.5/8.8: the Master thief's two cards may come
                                  # from two opponents
    int32_t n_nest
    int32_t lighthouse            # index of the lighthouse on the ring
    int32_t n_edges
    int32_t n_cards[MAX_PLAYERS]  # each seat's pirate deck (seat k: colour k, spec 2.4)
    int32_t chest_total           # sum of the chest values
    int8_t nest_kind[MAX_NEST]
    int8_t nest_colour[MAX_NEST]
    int8_t edge_a[MAX_EDGES]
    int8_t edge_b[MAX_EDGES]
    int8_t degree[N_NODES]
    int8_t adj_edge[N_NODES][MAX_DEGREE]
    int8_t adj_node[N_NODES][MAX_DEGREE]
    int8_t dist[N_NODES][N_NODES] # shortest sea distances (heuristic)
    uint16_t trail_ends[N_NODES][MAX_POINTS + 1]  # nodes a trail of k lines from a node ends on
    int8_t island_colour[N_ISLANDS]
    int8_t card_ability[MAX_PLAYERS][MAX_CARDS]
    int8_t card_move[MAX_PLAYERS][MAX_CARDS]   # NO_MOVE for a lighthouse card
    int8_t card_symbol[MAX_PLAYERS][MAX_CARDS]
    int16_t chest_values[N_ISLANDS]
    int16_t relic_gold[N_RELICS]
    int32_t n_seat_gold           # seat compensation (an analysis option): values listed
    int32_t seat_gold[MAX_PLAYERS]  # coins seat k starts with, beside the bank

ctypedef struct GPlayer:
    int8_t captain                # nest space
    int8_t ship                   # sea node
    int8_t deck[MAX_CARDS]        # face down; the top is deck[deck_len - 1]
    int8_t hand[MAX_HAND]         # kept sorted by card id
    int8_t discard[MAX_CARDS]     # face up; the top is discard[disc_len - 1]
    int8_t deck_len
    int8_t hand_len
    int8_t disc_len
    int8_t pirates[N_COLOURS]
    uint8_t permits_held          # bit v-1: permit v in hand (face down, owner knows)
    uint8_t permits_pool          # bit v-1: permit v in the nest pool
    uint8_t seven_at_volcano
    int8_t relic                  # -1: none
    int8_t placed                 # permits on treasure islands
    uint16_t dug                  # the islands those permits lie on (the stacks say it too:
                                  # kept because the heuristic and landing ask so often)
    uint16_t islands_held         # island cards held (face down)
    uint16_t islands_remembered   # island cards seen (the holder always knows its own)
    uint16_t chests_known         # chests peeked and remembered
    int16_t gold_chests           # final scoring lines (section 5.2)
    int16_t gold_coins
    int16_t gold_golden
    int16_t gold_relic
    int16_t gold_total
    int8_t golden_rank            # 1 = best on the Golden Island, 0 = no permit there
    int8_t eliminated

ctypedef struct GState:
    GameHeader head               # rng, players, current, terminal, moves, end reason, shares
    GRules rules
    int32_t phase
    int32_t turns
    int32_t first_player
    int32_t end_trigger           # the seat that placed its sixth permit, or -1
    int32_t copy_target           # PH_COPY: whose discard top is copied
    int32_t bank_gold             # coins left in the bank (unlimited: may go below 0)
    int32_t bank_short            # a payout asked for more than the box's coins left (8.9)
    int32_t golden_coin_owner     # -1 while on the Golden Island
    int8_t golden                 # the Golden Island (hidden under the board)
    int8_t island_deck[N_ISLANDS] # the top is island_deck[island_deck_len - 1]
    int8_t island_deck_len
    uint8_t relics_free
    int8_t houses[N_COLOURS]      # pirates on their nest houses
    int8_t node_pirates[N_NODES][N_COLOURS]
    int8_t stack_owner[N_ISLANDS][MAX_STACK]   # bottom (earliest) first
    int8_t stack_value[N_ISLANDS][MAX_STACK]
    int8_t stack_len[N_ISLANDS]
    int16_t chest[N_ISLANDS]      # chest value on treasure island i (T_{i+1})
    int8_t chest_owner[N_ISLANDS]
    GPlayer p[MAX_PLAYERS]
    int8_t path_at                # nest_actions = every_space: the last space resolved,
    int8_t path_dir               # the captain's direction (+1 clockwise, -1 counter)
    int8_t path_left              # and the spaces still to resolve (a won gamble pauses)

cdef Engine ENGINE       # the engine table, filled at the end of the module (engine_handle)
cdef GState _LAYOUT      # one instance, to read where the rules are

# Pirate combos: singles 0..3, then the pairs (a, b) with a <= b.
cdef int COMBO_A[N_COMBOS]
cdef int COMBO_B[N_COMBOS]
COMBO_A[:] = [0, 1, 2, 3, 0, 0, 0, 0, 1, 1, 1, 2, 2, 3]
COMBO_B[:] = [-1, -1, -1, -1, 0, 1, 2, 3, 1, 2, 3, 2, 3, 3]


cdef inline void digits(GAction* x, int r, int nx, int ny, int y0) noexcept nogil:
    """Splits an offset inside a block into slot, x (nx values) and y (ny values from y0)."""
    x.slot = r // (nx * ny)
    x.x = (r // ny) % nx
    x.y = r % ny + y0


cdef inline GAction decompose(int a) noexcept nogil:
    """The kind and parameters of action id a (Pgx's _decompose_action): apply and
    action_values read actions only through it."""
    cdef GAction x
    x.slot = 0
    x.x = 0
    x.y = 0
    x.way = 0
    if a < A_MOVE:
        x.kind = K_SWAP
        x.x = a - A_SWAP
    elif a < A_GAMBLE_PIRATE:
        x.kind = K_MOVE
        digits(&x, a - A_MOVE, MAX_NEST, NODE_SLOTS, 0)
        x.way = x.slot % N_WAYS
        x.slot = x.slot // N_WAYS
    elif a < A_PASS:
        x.kind = K_GAMBLE_PIRATE
        x.x = a - A_GAMBLE_PIRATE
    elif a == A_PASS:
        x.kind = K_PASS
    elif a < A_PEEK:
        x.kind = K_STEAL
        digits(&x, a - A_STEAL, MAX_PLAYERS, 2, 1)
    elif a < A_TAKE:
        x.kind = K_PEEK
        digits(&x, a - A_PEEK, N_ISLANDS, 1, 0)
    elif a < A_LAND:
        x.kind = K_TAKE
        digits(&x, a - A_TAKE, N_COMBOS, 1, 0)
    elif a < A_VOLCANO:
        x.kind = K_LAND
        digits(&x, a - A_LAND, N_COMBOS, TOP_PERMIT, 1)
    elif a < A_IMITATE:
        x.kind = K_VOLCANO
        digits(&x, a - A_VOLCANO, N_COLOURS, N_RELICS, 0)
    elif a < A_STEAL_SPLIT:
        x.kind = K_IMITATE
        digits(&x, a - A_IMITATE, MAX_PLAYERS, 1, 0)
    else:
        x.kind = K_STEAL_SPLIT
        digits(&x, a - A_STEAL_SPLIT, MAX_PLAYERS, MAX_PLAYERS, 0)
    return x


# The ability action ids a hand slot offers, one encoder per kind (the inverse of decompose).
cdef inline int steal_id(int slot, int victim, int cards) noexcept nogil:
    return A_STEAL + (slot * MAX_PLAYERS + victim) * 2 + cards - 1


cdef inline int steal_split_id(int slot, int victim, int second) noexcept nogil:
    return A_STEAL_SPLIT + (slot * MAX_PLAYERS + victim) * MAX_PLAYERS + second


cdef inline int move_id(int slot, int way, int end) noexcept nogil:
    """end: captain * NODE_SLOTS + ship."""
    return A_MOVE + (slot * N_WAYS + way) * MAX_NEST * NODE_SLOTS + end


cdef inline int peek_id(int slot, int isl) noexcept nogil:
    return A_PEEK + slot * N_ISLANDS + isl


cdef inline int take_id(int slot, int combo) noexcept nogil:
    return A_TAKE + slot * N_COMBOS + combo


cdef inline int land_id(int slot, int combo, int value) noexcept nogil:
    return A_LAND + (slot * N_COMBOS + combo) * TOP_PERMIT + value - 1


cdef inline int volcano_id(int slot, int colour, int relic) noexcept nogil:
    return A_VOLCANO + (slot * N_COLOURS + colour) * N_RELICS + relic


cdef inline int imitate_id(int slot, int target) noexcept nogil:
    return A_IMITATE + slot * MAX_PLAYERS + target


# ---------------------------------------------------------------- small helpers

cdef inline int island_of(int node) noexcept nogil:
    """The treasure island index (0..11) of a sea node, or -1."""
    return node - 1 if 1 <= node <= N_ISLANDS else -1


cdef inline int pirates_held(const GPlayer* pl) noexcept nogil:
    return pl.pirates[0] + pl.pirates[1] + pl.pirates[2] + pl.pirates[3]


cdef inline int hand_limit(const GPlayer* pl) noexcept nogil:
    return HAND_SIZE_R3 if pl.relic == R3_HAND_FIVE else HAND_SIZE


cdef inline void draw_to_end(int8_t* items, int n, uint32_t eligible, Rng* rng) noexcept nogil:
    """Swaps items[i] for a uniformly drawn i of eligible (bit i: items[i] may be drawn) with
    items[n - 1]; the draw is made even when none is eligible (then nothing moves)."""
    cdef int i = rng_bit(rng, eligible)
    cdef int8_t x
    if i >= 0:
        x = items[i]
        items[i] = items[n - 1]
        items[n - 1] = x


cdef inline bint has_permit_on(const GState* s, int isl, int seat) noexcept nogil:
    return (s.p[seat].dug >> isl) & 1


cdef inline uint32_t islands_with_permit(const GState* s, int seat) noexcept nogil:
    return s.p[seat].dug


cdef inline uint32_t known_islands(const GPlayer* pl) noexcept nogil:
    """Island cards a seat knows are not the Golden Island."""
    return pl.islands_held | pl.islands_remembered


# ---------------------------------------------------------------- cards

cdef void sort_hand(GPlayer* pl) noexcept nogil:
    cdef int i, j
    cdef int8_t t
    for i in range(1, pl.hand_len):
        j = i
        while j > 0 and pl.hand[j - 1] > pl.hand[j]:
            t = pl.hand[j]
            pl.hand[j] = pl.hand[j - 1]
            pl.hand[j - 1] = t
            j -= 1


cdef int draw_card(GState* s, GPlayer* pl) noexcept nogil:
    """The top card of the own deck (the discard pile reshuffled when it is empty, section
    4), or -1 if deck and discard are both empty."""
    cdef int c
    if pl.deck_len == 0:
        if pl.disc_len == 0:
            return -1
        memcpy(pl.deck, pl.discard, pl.disc_len)
        pl.deck_len = pl.disc_len
        memset(pl.discard, 0, MAX_CARDS)
        pl.disc_len = 0
        rng_shuffle(&s.head.rng, pl.deck, pl.deck_len, sizeof(pl.deck[0]))
    pl.deck_len -= 1
    c = pl.deck[pl.deck_len]
    pl.deck[pl.deck_len] = 0
    return c


cdef void refill_hand(GState* s, GPlayer* pl) noexcept nogil:
    """Section 4.6: draw up to 4 cards (5 with relic R3)."""
    cdef int c
    while pl.hand_len < hand_limit(pl):
        c = draw_card(s, pl)
        if c < 0:
            break
        pl.hand[pl.hand_len] = <int8_t>c
        pl.hand_len += 1
    sort_hand(pl)


cdef int play_from_hand(GPlayer* pl, int slot) noexcept nogil:
    """Moves the hand card in slot onto the discard pile; returns the card."""
    cdef int c = pl.hand[slot], i
    for i in range(slot, pl.hand_len - 1):
        pl.hand[i] = pl.hand[i + 1]
    pl.hand_len -= 1
    pl.hand[pl.hand_len] = 0
    pl.discard[pl.disc_len] = <int8_t>c
    pl.disc_len += 1
    return c


# ---------------------------------------------------------------- supplies

cdef void take_permit_from_pool(GState* s, GPlayer* pl) noexcept nogil:
    """One random own permit from the nest pool (none left: nothing, section 4.3)."""
    cdef int v
    if pl.permits_pool == 0:
        return
    v = rng_bit(&s.head.rng, pl.permits_pool)
    pl.permits_pool &= ~(1 << v)
    pl.permits_held |= 1 << v


cdef void take_house_pirate(GState* s, GPlayer* pl, int colour) noexcept nogil:
    """One pirate from a nest house, if there is one and the cap allows (section 4.2)."""
    if s.houses[colour] > 0 and pirates_held(pl) < PIRATE_CAP:
        s.houses[colour] -= 1
        pl.pirates[colour] += 1


cdef void draw_island_card(GState* s, int seat) noexcept nogil:
    cdef int c = pop_top(s.island_deck, &s.island_deck_len)
    if c < 0:
        return
    s.p[seat].islands_held |= 1 << c
    s.p[seat].islands_remembered |= 1 << c


# ---------------------------------------------------------------- setup (section 3)

cdef void g_setup(void* vs, const void* rules, int players, const SeatParams* seats,
                  const Rng* rng) noexcept nogil:
    cdef GState* s = <GState*>vs
    cdef GPlayer* pl
    cdef int i, k, c
    cdef int8_t order[N_ISLANDS]
    begin_setup(&ENGINE, s, rules, players, rng)
    s.end_trigger = -1
    s.golden_coin_owner = -1
    s.copy_target = -1
    s.path_dir = 1
    # Island cards: one slides unseen under the board as the Golden Island (with its 3-coin).
    for i in range(N_ISLANDS):
        s.island_deck[i] = <int8_t>i
    rng_shuffle(&s.head.rng, s.island_deck, N_ISLANDS, sizeof(s.island_deck[0]))
    s.golden = s.island_deck[N_ISLANDS - 1]
    s.island_deck[N_ISLANDS - 1] = 0
    s.island_deck_len = N_ISLANDS - 1
    s.bank_gold = TOTAL_COINS - GOLDEN_COIN
    s.relics_free = (1 << N_RELICS) - 1
    for c in range(N_COLOURS):
        s.houses[c] = <int8_t>players     # 2, 3 or 4 per colour by player count
    for i in range(N_ISLANDS):
        order[i] = <int8_t>i
    rng_shuffle(&s.head.rng, order, N_ISLANDS, sizeof(order[0]))
    for i in range(N_ISLANDS):
        s.chest[i] = s.rules.chest_values[order[i]]
        s.chest_owner[i] = CHEST_ON_ISLAND
    for i in range(players):
        pl = &s.p[i]
        pl.captain = <int8_t>s.rules.lighthouse
        pl.ship = NODE_H
        pl.relic = -1
        pl.gold_coins = <int16_t>s.rules.seat_gold[i]   # seat compensation (0 by the book)
        for k in range(s.rules.n_cards[i]):
            pl.deck[k] = <int8_t>k
        pl.deck_len = <int8_t>s.rules.n_cards[i]
        rng_shuffle(&s.head.rng, pl.deck, pl.deck_len, sizeof(pl.deck[0]))
        refill_hand(s, pl)
        pl.seven_at_volcano = 1
        # Permits 1..6 shuffled: one blind to the hand, five to the nest pool.
        k = rng_below(&s.head.rng, TOP_PERMIT - 1)
        pl.permits_held = 1 << k
        pl.permits_pool = ((1 << (TOP_PERMIT - 1)) - 1) & ~(1 << k)
        draw_island_card(s, i)
    s.first_player = rng_below(&s.head.rng, players) if s.rules.first_random else 0
    s.head.current = s.first_player
    start_turn(s)


# ---------------------------------------------------------------- movement (section 4.1)

cdef inline bint captain_may_move(const GState* s, int cap, int ship) noexcept nogil:
    return ship == NODE_H


cdef inline bint ship_may_move(const GState* s, int cap, int ship) noexcept nogil:
    return cap == s.rules.lighthouse


cdef enum:
    N_ENDS = N_WAYS * MAX_NEST * NODE_SLOTS     # end_index values
    END_WORDS = N_ENDS >> 6                     # a shift, not //: a C constant in the checked build too
    N_POINTS = MAX_POINTS + 1                   # point counts a move may spend: 0..MAX_POINTS

ctypedef struct Reach:
    uint64_t ends[N_POINTS][END_WORDS]    # per point count, the ends it reaches (bit end_index)
    int words                             # the words in use (the ways only with every_space)
    uint16_t any_pts                      # every point count some end takes


cdef inline void reach_end(Reach* r, int end, int points) noexcept nogil:
    """Records that `points` can end at `end`."""
    r.ends[points][end >> 6] |= (<uint64_t>1) << (end & 63)


cdef inline int end_index(const GState* s, int dir, int cap, int ship) noexcept nogil:
    """Where a move's end is kept in Reach.ends and in the move ids (the way, then captain *
    NODE_SLOTS + ship): the captain's direction counts only when every space it passes has
    its action (nest_actions = every_space); else every way shares one end."""
    cdef int way = 1 if (dir < 0 and s.rules.nest_every_space) else 0
    return (way * MAX_NEST + cap) * NODE_SLOTS + ship


cdef void walk(const GState* s, int cap, int ship, uint32_t visited, uint64_t used, int dir,
               int left, int spent, Reach* reach) noexcept nogil:
    """Every way to spend up to `left` more points from (captain, ship): sets the bit
    end_index(dir, captain, ship) in reach.ends[points] for each number of points that can
    end there.
    The captain keeps one direction and never revisits a space this turn; the ship uses each
    line at most once; either piece may go on whenever the other is home (switching)."""
    cdef int d, k, nxt
    reach_end(reach, end_index(s, dir, cap, ship), spent)
    if left == 0:
        return
    if captain_may_move(s, cap, ship):
        for d in range(-1, 2, 2):
            if dir != 0 and d != dir:
                continue
            nxt = (cap + d + s.rules.n_nest) % s.rules.n_nest
            if not (visited >> nxt) & 1:
                walk(s, nxt, ship, visited | (1u << nxt), used, d, left - 1, spent + 1, reach)
    if not ship_may_move(s, cap, ship):
        return
    if used == 0 and s.rules.n_nest > MAX_POINTS:
        sail(s, cap, ship, visited, dir, left, spent, reach)
        return
    for k in range(s.rules.degree[ship]):
        if not (used >> s.rules.adj_edge[ship][k]) & 1:
            walk(s, cap, s.rules.adj_node[ship][k], visited,
                 used | ((<uint64_t>1) << s.rules.adj_edge[ship][k]), dir, left - 1,
                 spent + 1, reach)


cdef void sail(const GState* s, int cap, int ship, uint32_t visited, int dir, int left,
               int spent, Reach* reach) noexcept nogil:
    """The ship's whole segment from the precomputed trail ends (the same as walking it line
    by line): a ring longer than any move never lets the captain come back to the lighthouse
    for a second sea segment, so the lines used matter only within this one."""
    cdef int k, v
    cdef uint16_t ends
    for k in range(1, left + 1):
        ends = s.rules.trail_ends[ship][k]
        for v in range(N_NODES):
            if not (ends >> v) & 1:
                continue
            if v == NODE_H:
                # Back in the harbour: the captain may take the remaining points.
                walk(s, cap, NODE_H, visited, ~(<uint64_t>0), dir, left - k, spent + k, reach)
            else:
                reach_end(reach, end_index(s, dir, cap, v), spent + k)


cdef int max_card_points(const GState* s, const GPlayer* pl) noexcept nogil:
    cdef int i, m = 0, v
    for i in range(pl.hand_len):
        v = s.rules.card_move[s.head.current][pl.hand[i]]
        if v != NO_MOVE and v > m:
            m = v
    return m + (1 if pl.relic == R2_EXTRA_STEP else 0)


cdef void reachable(const GState* s, const GPlayer* pl, Reach* r) noexcept nogil:
    """The ends of the seat's pieces with the most points any hand card offers."""
    cdef int p, w
    r.words = (N_WAYS if s.rules.nest_every_space else 1) * MAX_NEST * NODE_SLOTS // 64
    for p in range(N_POINTS):
        memset(r.ends[p], 0, r.words * sizeof(r.ends[p][0]))
    walk(s, pl.captain, pl.ship, 1u << pl.captain, 0, 0, max_card_points(s, pl), 0, r)
    r.any_pts = 0
    for p in range(N_POINTS):
        for w in range(r.words):
            if r.ends[p][w]:
                r.any_pts |= <uint16_t>(1 << p)
                break


cdef uint16_t points_for_card(const GState* s, const GPlayer* pl, int card,
                              const Reach* r) noexcept nogil:
    """The point counts a number card may spend (a bit set): n, or n and n+1 with relic
    R2; when no end uses them exactly, the most points achievable (section 4.1 ASSUMPTION),
    or none if exact_move is set."""
    cdef int n = s.rules.card_move[s.head.current][card], i, best = -1
    cdef uint16_t want = <uint16_t>(1 << n)
    if pl.relic == R2_EXTRA_STEP:
        want |= <uint16_t>(1 << (n + 1))
    if r.any_pts & want:
        return r.any_pts & want
    if s.rules.exact_move:
        return 0
    for i in range(n + 2):
        if (r.any_pts >> i) & 1 and (want >> i) > 1:
            best = i   # below the wanted counts
    return <uint16_t>(1 << best) if best >= 0 else 0


cdef int move_actions(const GState* s, int* out) noexcept nogil:
    """PH_MOVE, ascending (slot-major, then captain and ship, as the ids are laid out)."""
    cdef const GPlayer* pl = &s.p[s.head.current]
    cdef Reach r
    cdef uint16_t pts, q
    cdef uint64_t bits
    cdef int n = 0, slot, card, w, base
    reachable(s, pl, &r)
    for slot in range(pl.hand_len):
        card = pl.hand[slot]
        base = move_id(slot, 0, 0)
        if s.rules.card_move[s.head.current][card] == NO_MOVE:
            # A lighthouse returns the piece that is away (both home: nothing happens).
            if pl.captain != s.rules.lighthouse:
                out[n] = base + s.rules.lighthouse * NODE_SLOTS + pl.ship
            elif pl.ship != NODE_H:
                out[n] = base + pl.captain * NODE_SLOTS + NODE_H
            else:
                out[n] = base + pl.captain * NODE_SLOTS + pl.ship
            n += 1
            continue
        pts = points_for_card(s, pl, card, &r)
        for w in range(r.words):         # ascending ends that one of the counts reaches
            bits = 0
            q = pts
            while q:
                bits |= r.ends[lowest_bit(q)][w]
                q &= q - 1
            while bits:
                out[n] = base + w * 64 + lowest_bit(bits)
                bits &= bits - 1
                n += 1
    if n == 0:
        # Data guard (exact_move with no exact path for any card): play a card, stay put.
        for slot in range(pl.hand_len):
            out[n] = move_id(slot, 0, pl.captain * NODE_SLOTS + pl.ship)
            n += 1
    return n


# ---------------------------------------------------------------- abilities (section 4.5)

cdef inline bint co_located(const GState* s, int seat, int other) noexcept nogil:
    """Thief option 1: the seat's captain or ship shares a space with the other's."""
    cdef const GPlayer* a = &s.p[seat]
    cdef const GPlayer* b = &s.p[other]
    if a.captain == b.captain and (s.rules.steal_at_home != HOME_NONE
                                   or a.captain != s.rules.lighthouse):
        return True
    return a.ship == b.ship and (s.rules.steal_at_home == HOME_BOTH or a.ship != NODE_H)


cdef inline bint may_steal_from(const GState* s, int seat, int other) noexcept nogil:
    """Thief options 1 and 2 (option 2: island deck empty and own captain on an island-card
    space: any opponent)."""
    if other == seat or s.p[other].islands_held == 0:
        return False
    if co_located(s, seat, other):
        return True
    return (s.island_deck_len == 0
            and s.rules.nest_kind[s.p[seat].captain] == NK_ISLAND_CARD)


cdef inline bint combo_available(const int8_t* pool, int combo) noexcept nogil:
    cdef int a = COMBO_A[combo], b = COMBO_B[combo]
    if b < 0:
        return pool[a] >= 1
    if a == b:
        return pool[a] >= 2
    return pool[a] >= 1 and pool[b] >= 1


cdef inline int combo_size(int combo) noexcept nogil:
    return 1 if COMBO_B[combo] < 0 else 2


cdef int ability_actions_for(const GState* s, int ability, int slot, int* out) noexcept nogil:
    """The legal action ids of an ability played from `slot` (COPY_SLOT: copied) by the
    seat to act (section 4.5 preconditions), in order (at most MAX_ABILITY_IDS); whether
    there is one at all: ability_usable."""
    cdef const GPlayer* pl = &s.p[s.head.current]
    cdef int n = 0, t, u, i, c, v, r, combo, isl, node = pl.ship, seat = s.head.current
    cdef bint volcano_card
    if ability == AB_THIEF or ability == AB_MASTER_THIEF:
        for t in range(s.head.players):
            if may_steal_from(s, seat, t):
                n = emit(out, n, steal_id(slot, t, 1))
                if ability == AB_MASTER_THIEF and popcount(s.p[t].islands_held) >= 2:
                    n = emit(out, n, steal_id(slot, t, 2))
                if ability == AB_MASTER_THIEF and s.rules.master_thief_split:
                    for u in range(t + 1, s.head.players):
                        if may_steal_from(s, seat, u):
                            n = emit(out, n, steal_split_id(slot, t, u))
        return n
    if ability == AB_FORTUNE_TELLER:
        for i in range(N_ISLANDS):
            if s.chest_owner[i] == CHEST_ON_ISLAND:
                n = emit(out, n, peek_id(slot, i))
        return n
    if ability == AB_PIRATE or ability == AB_VETERAN:
        if node != NODE_H:
            for combo in range(N_COMBOS if ability == AB_VETERAN else N_COLOURS):
                if (combo_available(s.node_pirates[node], combo)
                        and pirates_held(pl) + combo_size(combo) <= PIRATE_CAP):
                    n = emit(out, n, take_id(slot, combo))
    isl = island_of(node)
    if ability == AB_LANDING and isl >= 0:
        if (s.chest_owner[isl] == CHEST_ON_ISLAND and not has_permit_on(s, isl, seat)
                and pl.permits_held != 0):
            for combo in range(N_COMBOS):
                if not combo_available(pl.pirates, combo):
                    continue
                if (combo_size(combo) == 1 and COMBO_A[combo] != s.rules.island_colour[isl]
                        and pl.relic != R1_ANY_COLOUR):
                    continue
                for v in range(TOP_PERMIT):
                    if (pl.permits_held >> v) & 1:
                        n = emit(out, n, land_id(slot, combo, v + 1))
    volcano_card = ((ability == AB_LANDING and not s.rules.volcano_by_pirates) or
                    ((ability == AB_PIRATE or ability == AB_VETERAN) and s.rules.volcano_by_pirates))
    if volcano_card and (node == NODE_VU or node == NODE_VL):
        for c in range(N_COLOURS):
            if pl.pirates[c] == 0:
                continue
            if node == NODE_VU and pl.seven_at_volcano:
                n = emit(out, n, volcano_id(slot, c, 0))
            elif node == NODE_VL and pl.relic < 0:
                for r in range(N_RELICS):
                    if (s.relics_free >> r) & 1:
                        n = emit(out, n, volcano_id(slot, c, r))
    if ability == AB_IMITATOR:
        for t in range(s.head.players):
            if t != seat and s.p[t].disc_len > 0 and copy_possible(s, t):
                n = emit(out, n, imitate_id(slot, t))
    return n


cdef inline bint ability_usable(const GState* s, int ability) noexcept nogil:
    """Whether ability_actions_for lists any action for the ability (the same preconditions
    asked without listing: to_ability_phase asks it after every movement)."""
    cdef const GPlayer* pl = &s.p[s.head.current]
    cdef int t, i, seat = s.head.current, node = pl.ship, held = pirates_held(pl)
    cdef int isl = island_of(node)
    if ability == AB_THIEF or ability == AB_MASTER_THIEF:
        for t in range(s.head.players):
            if may_steal_from(s, seat, t):
                return True
        return False
    if ability == AB_FORTUNE_TELLER:
        for i in range(N_ISLANDS):
            if s.chest_owner[i] == CHEST_ON_ISLAND:
                return True
        return False
    if ability == AB_IMITATOR:
        for t in range(s.head.players):
            if t != seat and s.p[t].disc_len > 0 and copy_possible(s, t):
                return True
        return False
    if ability == AB_PIRATE or ability == AB_VETERAN:
        # A pair can be taken only where one of its singles can (a veteran's pairs add none).
        if node != NODE_H and held < PIRATE_CAP and  has_pirates(s.node_pirates[node]):
            return True
        if not s.rules.volcano_by_pirates:
            return False
    elif ability == AB_LANDING:
        # Two pirates always make a pair; a single must match the island (or relic R1).
        if (isl >= 0 and s.chest_owner[isl] == CHEST_ON_ISLAND and not has_permit_on(s, isl, seat)
                and pl.permits_held != 0
                and (held >= 2 or pl.pirates[s.rules.island_colour[isl]] >= 1
                     or (held >= 1 and pl.relic == R1_ANY_COLOUR))):
            return True
        if s.rules.volcano_by_pirates:
            return False
    else:
        return False
    # A volcano card: one pirate for the 7 (upper) or a free relic (lower).
    return held >= 1 and ((node == NODE_VU and pl.seven_at_volcano) or
                          (node == NODE_VL and pl.relic < 0
                           and (s.relics_free & ((1 << N_RELICS) - 1)) != 0))


cdef inline int top_discard(const GState* s, int seat) noexcept nogil:
    return s.p[seat].discard[s.p[seat].disc_len - 1]


cdef bint copy_possible(const GState* s, int target) noexcept nogil:
    """The Imitator may copy the target's discard top if that ability could be used now
    (copying an Imitator is allowed and does nothing)."""
    cdef int ab = s.rules.card_ability[target][top_discard(s, target)]
    if ab == AB_IMITATOR:
        return True
    return ability_usable(s, ab)


cdef int ability_actions(const GState* s, int* out) noexcept nogil:
    """PH_ABILITY: pass, or a hand card with one of its legal parameters."""
    cdef const GPlayer* pl = &s.p[s.head.current]
    cdef int n = 0, slot
    out[n] = A_PASS
    n += 1
    for slot in range(pl.hand_len):
        n += ability_actions_for(s, s.rules.card_ability[s.head.current][pl.hand[slot]], slot,
                                 out + n)
    return n


cdef int copy_actions(const GState* s, int* out) noexcept nogil:
    cdef int ab = s.rules.card_ability[s.copy_target][top_discard(s, s.copy_target)]
    if ab == AB_IMITATOR:
        out[0] = A_PASS       # copying an Imitator does nothing
        return 1
    return ability_actions_for(s, ab, COPY_SLOT, out)


cdef void sort_ints(int* a, int n) noexcept nogil:
    cdef int i, j, t
    for i in range(1, n):
        j = i
        while j > 0 and a[j - 1] > a[j]:
            t = a[j]
            a[j] = a[j - 1]
            a[j - 1] = t
            j -= 1


# ---------------------------------------------------------------- legal actions

cdef int g_legal(const void* vs, int* out) noexcept nogil:
    cdef const GState* s = <const GState*>vs
    cdef const GPlayer* pl = &s.p[s.head.current]
    cdef int n = 0, m, c
    if s.head.terminal:
        return 0
    if s.phase == PH_START:
        # Relic R4: keep the hand, or discard 1 or 2 cards (a hand-slot mask).
        for m in range(1 << pl.hand_len):
            if popcount(m) <= 2:
                n = emit(out, n, A_SWAP + m)
        return n
    if s.phase == PH_MOVE:
        return move_actions(s, out)
    if s.phase == PH_GAMBLE:
        for c in range(N_COLOURS):
            if s.houses[c] > 0:
                n = emit(out, n, A_GAMBLE_PIRATE + c)
        return n
    if s.phase == PH_ABILITY:
        n = ability_actions(s, out)
    else:
        n = copy_actions(s, out)
    sort_ints(out, n)
    return n


# ---------------------------------------------------------------- apply

cdef void start_turn(GState* s) noexcept nogil:
    """The memory model, then the R4 choice or the movement."""
    cdef GPlayer* pl = &s.p[s.head.current]
    forget(s, pl)
    s.phase = PH_START if (pl.relic == R4_SWAP_CARDS and pl.hand_len > 0) else PH_MOVE


cdef void forget(GState* s, GPlayer* pl) noexcept nogil:
    """Each remembered fact not in front of the seat (an island card it no longer holds, a
    peeked chest) is forgotten with probability recall_error (per mille) at the start of
    each of its turns; written notes (recall_error 0) keep everything."""
    cdef int i
    cdef double p = s.rules.recall_error / 1000.0
    if s.rules.recall_error == 0:
        return
    for i in range(N_ISLANDS):
        if ((pl.islands_remembered & ~pl.islands_held) >> i) & 1 and rng_uniform(&s.head.rng) < p:
            pl.islands_remembered &= ~(1 << i)
        if (pl.chests_known >> i) & 1 and rng_uniform(&s.head.rng) < p:
            pl.chests_known &= ~(1 << i)


cdef void end_turn(GState* s) noexcept nogil:
    """Refill (section 4.6); the end trigger (section 5.1): every other seat plays once more
    after the turn that placed a sixth permit; then the next seat."""
    cdef int nxt
    refill_hand(s, &s.p[s.head.current])
    s.turns += 1
    nxt = (s.head.current + 1) % s.head.players
    if s.end_trigger >= 0 and nxt == s.end_trigger:
        finish(s, END_SIXTH_PERMIT)
    elif s.turns >= s.rules.max_rounds * s.head.players:
        finish(s, END_ROUND_LIMIT)
    else:
        s.head.current = nxt
        start_turn(s)


cdef void to_ability_phase(GState* s) noexcept nogil:
    """The optional second card (section 4.5), if any ability can be used: the first hand
    card whose ability has a legal use decides (each ability asked once)."""
    cdef const GPlayer* pl = &s.p[s.head.current]
    cdef int slot, ab
    cdef uint32_t asked = 0
    s.phase = PH_ABILITY
    for slot in range(pl.hand_len):
        ab = s.rules.card_ability[s.head.current][pl.hand[slot]]
        if (asked >> ab) & 1:
            continue
        asked |= 1u << ab
        if ability_usable(s, ab):
            return
    end_turn(s)


cdef void nest_path(GState* s) noexcept nogil:
    """nest_actions = every_space: the action of each space the captain entered this turn,
    in the order it passed them; a won gamble's pirate choice (PH_GAMBLE) pauses the walk
    and the choice resumes it."""
    while s.path_left > 0:
        s.path_at = <int8_t>((s.path_at + s.path_dir + s.rules.n_nest) % s.rules.n_nest)
        s.path_left -= 1
        nest_action(s, s.head.current, s.path_at)
        if s.phase == PH_GAMBLE:
            return


cdef void nest_action(GState* s, int seat, int space) noexcept nogil:
    """Section 4.3: the action of a nest space the moving captain reached."""
    cdef GPlayer* pl = &s.p[seat]
    cdef int kind = s.rules.nest_kind[space], c
    if kind == NK_ISLAND_CARD:
        draw_island_card(s, seat)
    elif kind == NK_PERMIT:
        take_permit_from_pool(s, pl)
    elif kind == NK_PIRATES:
        take_house_pirate(s, pl, s.rules.nest_colour[space])
    elif kind == NK_GAMBLE:
        # Section 4.4: flip the deck top onto the discard; a card symbol wins a permit and
        # a pirate of any colour (chosen next, if the cap and the houses allow).
        c = draw_card(s, pl)
        if c < 0:
            return
        pl.discard[pl.disc_len] = <int8_t>c
        pl.disc_len += 1
        if s.rules.card_symbol[seat][c]:
            take_permit_from_pool(s, pl)
            if pirates_held(pl) < PIRATE_CAP and (s.houses[0] + s.houses[1] + s.houses[2]
                                                  + s.houses[3]) > 0:
                s.phase = PH_GAMBLE


cdef void move_pirates(int8_t* src, int8_t* dst, int combo) noexcept nogil:
    src[COMBO_A[combo]] -= 1
    dst[COMBO_A[combo]] += 1
    if COMBO_B[combo] >= 0:
        src[COMBO_B[combo]] -= 1
        dst[COMBO_B[combo]] += 1


cdef void steal(GState* s, int seat, int victim, int cards) noexcept nogil:
    """Random face-down island cards from the victim; both keep knowing them (8.7)."""
    cdef int k, c
    for k in range(cards):
        if s.p[victim].islands_held == 0:
            return
        c = rng_bit(&s.head.rng, s.p[victim].islands_held)
        s.p[victim].islands_held &= ~(1 << c)
        s.p[victim].islands_remembered |= 1 << c
        s.p[seat].islands_held |= 1 << c
        s.p[seat].islands_remembered |= 1 << c


cdef void land(GState* s, int seat, int combo, int value) noexcept nogil:
    """Landing on a treasure island: pirates onto it, a permit on top of its stack."""
    cdef GPlayer* pl = &s.p[seat]
    cdef int isl = island_of(pl.ship), k = s.stack_len[isl]
    move_pirates(pl.pirates, s.node_pirates[pl.ship], combo)
    pl.permits_held &= ~(1 << (value - 1))
    s.stack_owner[isl][k] = <int8_t>seat
    s.stack_value[isl][k] = <int8_t>value
    s.stack_len[isl] += 1
    pl.placed += 1
    pl.dug |= 1 << isl
    if pl.placed >= SIXTH_PERMIT and s.end_trigger < 0:
        s.end_trigger = seat


cdef void use_ability(GState* s, GAction x) noexcept nogil:
    """Applies an ability's effect (the action already legal)."""
    cdef int seat = s.head.current
    cdef GPlayer* pl = &s.p[seat]
    if x.kind == K_STEAL:
        steal(s, seat, x.x, x.y)
    elif x.kind == K_STEAL_SPLIT:
        steal(s, seat, x.x, 1)
        steal(s, seat, x.y, 1)
    elif x.kind == K_PEEK:
        pl.chests_known |= 1 << x.x
    elif x.kind == K_TAKE:
        move_pirates(s.node_pirates[pl.ship], pl.pirates, x.x)
    elif x.kind == K_LAND:
        land(s, seat, x.x, x.y)
    elif x.kind == K_VOLCANO:
        pl.pirates[x.x] -= 1
        s.node_pirates[pl.ship][x.x] += 1
        if pl.ship == NODE_VU:
            pl.seven_at_volcano = 0
            pl.permits_held |= 1 << (TOP_PERMIT - 1)
        else:
            pl.relic = <int8_t>x.y
            s.relics_free &= ~(1 << x.y)


cdef void g_apply(void* vs, int a) noexcept nogil:
    cdef GState* s = <GState*>vs
    cdef GPlayer* pl = &s.p[s.head.current]
    cdef GAction x = decompose(a)
    cdef int k, c
    s.head.moves += 1
    if x.kind == K_SWAP:
        # R4: the marked cards go to the discard pile, as many are drawn.
        for k in range(pl.hand_len - 1, -1, -1):
            if (x.x >> k) & 1:
                play_from_hand(pl, k)
        for k in range(popcount(x.x)):
            c = draw_card(s, pl)
            if c >= 0:
                pl.hand[pl.hand_len] = <int8_t>c
                pl.hand_len += 1
        sort_hand(pl)
        s.phase = PH_MOVE
    elif x.kind == K_MOVE:
        c = play_from_hand(pl, x.slot)
        s.phase = PH_MOVE
        pl.ship = <int8_t>x.y
        if x.x != pl.captain:
            if s.rules.nest_every_space and s.rules.card_move[s.head.current][c] != NO_MOVE:
                # The captain's arc from where it stood, one way round (section 4.3 reading).
                s.path_at = pl.captain
                s.path_dir = -1 if x.way else 1
                s.path_left = <int8_t>(((x.x - pl.captain) * s.path_dir + s.rules.n_nest)
                                       % s.rules.n_nest)
                pl.captain = <int8_t>x.x
                nest_path(s)
            else:
                pl.captain = <int8_t>x.x
                nest_action(s, s.head.current, pl.captain)
        if s.phase != PH_GAMBLE:
            to_ability_phase(s)
    elif x.kind == K_GAMBLE_PIRATE:
        take_house_pirate(s, pl, x.x)
        s.phase = PH_MOVE
        nest_path(s)
        if s.phase != PH_GAMBLE:
            to_ability_phase(s)
    elif x.kind == K_PASS:
        end_turn(s)
    else:
        if x.slot < COPY_SLOT:
            play_from_hand(pl, x.slot)
        if x.kind == K_IMITATE:
            s.copy_target = x.x
            s.phase = PH_COPY
            return
        use_ability(s, x)
        s.copy_target = -1
        end_turn(s)


# ---------------------------------------------------------------- scoring (section 5)

cdef int island_ranking(const GState* s, int isl, int* seats) noexcept nogil:
    """The seats with a permit on the island, best first: higher value, then the earlier
    (lower in the stack) placement.  Returns how many."""
    cdef int n = s.stack_len[isl], i, j, t
    cdef int idx[MAX_STACK]
    for i in range(n):
        idx[i] = i
    for i in range(1, n):
        j = i
        while j > 0 and s.stack_value[isl][idx[j - 1]] < s.stack_value[isl][idx[j]]:
            t = idx[j]
            idx[j] = idx[j - 1]
            idx[j - 1] = t
            j -= 1
    for i in range(n):
        seats[i] = s.stack_owner[isl][idx[i]]
    return n


cdef void finish(void* vs, int reason) noexcept nogil:   # an EndFn (as_if_ended)
    """Section 5.2: chests and payouts per island, the Golden Island's coin, elimination,
    gold totals, the winner (tie: the better permit on the Golden Island)."""
    cdef GState* s = <GState*>vs
    cdef int i, r, n, best = -1, seat
    cdef int ranked[MAX_STACK]
    cdef GPlayer* pl
    cdef int pay
    for i in range(N_ISLANDS):
        n = island_ranking(s, i, ranked)
        if n == 0:
            s.chest_owner[i] = CHEST_BOX
            continue
        s.chest_owner[i] = <int8_t>ranked[0]
        s.p[ranked[0]].gold_chests += s.chest[i]
        for r in range(1, n):
            pay = s.chest[i] - r
            if pay > s.bank_gold:         # the box's bank would run short here
                s.bank_short = 1
                if s.rules.bank_limited:
                    pay = s.bank_gold
            if pay > 0 or (pay < 0 and s.rules.negative_payout_paid):
                s.p[ranked[r]].gold_coins += pay
                s.bank_gold -= pay
    n = island_ranking(s, s.golden, ranked)
    for r in range(n):
        s.p[ranked[r]].golden_rank = r + 1
    if n > 0:
        s.golden_coin_owner = ranked[0]
        s.p[ranked[0]].gold_golden = GOLDEN_COIN
    for seat in range(s.head.players):
        pl = &s.p[seat]
        pl.gold_relic = s.rules.relic_gold[pl.relic] if pl.relic >= 0 else 0
        pl.gold_total = pl.gold_chests + pl.gold_coins + pl.gold_golden + pl.gold_relic
        pl.eliminated = pl.golden_rank == 0
        s.head.share[seat] = 0.0
    for seat in range(s.head.players):
        pl = &s.p[seat]
        if pl.eliminated:
            continue
        if (best < 0 or pl.gold_total > s.p[best].gold_total or
                (pl.gold_total == s.p[best].gold_total and pl.golden_rank < s.p[best].golden_rank)):
            best = seat
    if best >= 0:
        s.head.share[best] = 1.0
    elif s.rules.no_survivor_highest:
        share_highest_gold(s)
    s.phase = PH_MOVE
    end_game(s, reason)


cdef void share_highest_gold(GState* s) noexcept nogil:
    """No survivor and no_survivor_result = highest_gold: most gold wins, ties share."""
    cdef int gold[MAX_PLAYERS]
    cdef int seat
    for seat in range(s.head.players):
        gold[seat] = s.p[seat].gold_total
    share_best(s, gold, 1)


cdef void g_scores(const void* vs, double* out) noexcept nogil:
    """Gold totals once the game is over (eliminated players' gold included: the win
    shares say who won); before the end, the gold as if it ended now."""
    cdef GState tmp
    cdef const GState* s = <const GState*>as_if_ended(&ENGINE, vs, &tmp, finish, END_RUNNING)
    cdef int i
    for i in range(s.head.players):
        out[i] = s.p[i].gold_total



GAME_OUTCOMES = ("rounds", "golden_island", "survivors", "no_winner", "golden_coin_seat",
                 "island_cards_left", "bank_short")
SEAT_OUTCOMES = ("eliminated", "gold_total", "gold_chests", "gold_coins", "gold_golden_coin",
                 "gold_relic", "permits_placed", "golden_rank", "relic", "pirates_held",
                 "permits_held", "island_cards")


cdef void g_outcomes(const void* vs, double* g, double* so) noexcept nogil:
    cdef const GState* s = <const GState*>vs
    cdef const GPlayer* pl
    cdef int i, ns = N_SEAT_OUTCOMES, survivors = 0
    cdef double any_share = 0
    for i in range(s.head.players):
        if s.head.terminal and not s.p[i].eliminated:
            survivors += 1
        any_share += s.head.share[i]
    g[0] = (s.turns + s.head.players - 1) // s.head.players
    g[1] = s.golden + 1
    g[2] = survivors
    g[3] = 1 if (s.head.terminal and any_share == 0) else 0
    g[4] = s.golden_coin_owner
    g[5] = s.island_deck_len
    g[6] = s.bank_short
    for i in range(s.head.players):
        pl = &s.p[i]
        so[i * ns + 0] = pl.eliminated
        so[i * ns + 1] = pl.gold_total
        so[i * ns + 2] = pl.gold_chests
        so[i * ns + 3] = pl.gold_coins
        so[i * ns + 4] = pl.gold_golden
        so[i * ns + 5] = pl.gold_relic
        so[i * ns + 6] = pl.placed
        so[i * ns + 7] = pl.golden_rank
        so[i * ns + 8] = pl.relic + 1
        so[i * ns + 9] = pirates_held(pl)
        so[i * ns + 10] = popcount(pl.permits_held)
        so[i * ns + 11] = popcount(pl.islands_held)


# ---------------------------------------------------------------- heuristic (greedy agent)

cdef double mean_unknown_chest(const GState* s, const GPlayer* pl) noexcept nogil:
    """The mean value of the chests the seat has not peeked (their multiset is public)."""
    cdef int i, total = s.rules.chest_total, n = N_ISLANDS - popcount(pl.chests_known)
    cdef uint32_t known = pl.chests_known
    while known:
        i = lowest_bit(known)
        known &= known - 1
        total -= s.chest[i]
    return total / <double>n if n else 0.0


cdef double expected_island_gold(const GState* s, int isl, int seat, double unknown_chest,
                                 double* p_first) noexcept nogil:
    """The seat's expected gold from an island it has a permit on, from what it may know:
    its own permit value and the order of the stack; rivals' values (face down) are taken
    as uniform on 1..7, an equal value placed earlier ranking higher."""
    cdef const GPlayer* pl = &s.p[seat]
    cdef int k, mine = -1, v = 0
    cdef double beaten = 0.0, chest
    for k in range(s.stack_len[isl]):
        if s.stack_owner[isl][k] == seat:
            mine = k
            v = s.stack_value[isl][k]
    for k in range(s.stack_len[isl]):
        if k != mine:
            beaten += (TOP_PERMIT - v) / <double>TOP_PERMIT
            if k < mine:
                beaten += 1.0 / TOP_PERMIT
    chest = s.chest[isl] if (pl.chests_known >> isl) & 1 else unknown_chest
    p_first[0] = 1.0 - beaten if beaten < 1.0 else 0.0
    return chest - beaten if chest > beaten else 0.0


cdef inline bint has_pirates(const int8_t* counts) noexcept nogil:
    """Whether a place holds a pirate of any colour (the N_COLOURS counts, never negative,
    read as one word)."""
    cdef uint32_t word
    memcpy(&word, counts, N_COLOURS)
    return word != 0


cdef inline uint32_t pirate_nodes(const GState* s) noexcept nogil:
    """The sea nodes (harbour excepted) that hold a pirate, as a bit set."""
    cdef uint32_t nodes = 0
    cdef int v
    for v in range(1, N_NODES):
        if has_pirates(s.node_pirates[v]):
            nodes |= 1u << v
    return nodes


cdef int landing_target_distance(const GState* s, int seat, uint32_t mine) noexcept nogil:
    """Sea steps from the ship to where the seat should sail next: a place it can land on
    now (islands that may be golden first, then the volcanoes' 7 and relics, then any
    island), else, short of pirates, the nearest island with pirates to take back or the
    harbour while the houses still hold some; else the harbour (captain's errands)."""
    cdef const GPlayer* pl = &s.p[seat]
    cdef uint32_t unknown = ALL_ISLANDS & ~known_islands(pl), nodes
    cdef int i, best = 99, best_any = 99, d, single, held = pirates_held(pl)
    cdef bint two = held >= 2
    if pl.permits_held and held > 0:
        for i in range(N_ISLANDS):
            single = pl.pirates[s.rules.island_colour[i]] > 0 or pl.relic == R1_ANY_COLOUR
            if (mine >> i) & 1 or not (two or single):
                continue
            d = s.rules.dist[pl.ship][i + 1]
            if (unknown >> i) & 1:
                best = d if d < best else best
            elif d < best_any:
                best_any = d
    if best == 99 and held > 0:
        if pl.seven_at_volcano:
            best = s.rules.dist[pl.ship][NODE_VU]
        if pl.relic < 0 and s.relics_free:
            d = s.rules.dist[pl.ship][NODE_VL]
            best = d if d < best else best
    if best == 99:
        best = best_any
    if best == 99 and held < 2:
        if s.houses[0] + s.houses[1] + s.houses[2] + s.houses[3] > 0:
            best = s.rules.dist[pl.ship][NODE_H]
        nodes = pirate_nodes(s)
        while nodes:
            d = s.rules.dist[pl.ship][lowest_bit(nodes)]
            nodes &= nodes - 1
            best = d if d < best else best
    if best == 99:
        best = s.rules.dist[pl.ship][NODE_H]
    return best


cdef double heuristic_gold(const GState* s, int seat, uint32_t unknown, uint32_t mine,
                          double* p_survive, double* golden_coin) noexcept nogil:
    """The seat's expected gold (its permits' islands and its relic), the chance that one of
    its permits lies on the Golden Island (uniform over the islands it does not know to be
    ordinary) and its expected share of the Golden Island's coin."""
    cdef const GPlayer* pl = &s.p[seat]
    cdef int i, u = popcount(unknown), mine_unknown = 0
    cdef uint32_t held = mine
    cdef double gold = 0.0, unknown_chest, p_first
    if u == 0:
        u = 1
    unknown_chest = mean_unknown_chest(s, pl) if mine else 0.0
    golden_coin[0] = 0.0
    while held:                      # lowest first, as the sums were always made
        i = lowest_bit(held)
        held &= held - 1
        gold += expected_island_gold(s, i, seat, unknown_chest, &p_first)
        if (unknown >> i) & 1:
            mine_unknown += 1
            golden_coin[0] += GOLDEN_COIN * p_first / u
    if pl.relic >= 0:
        gold += s.rules.relic_gold[pl.relic]
    p_survive[0] = mine_unknown / <double>u
    return gold


cdef double g_heuristic(const void* vs, int seat) noexcept nogil:
    """The seat's prospects from what it may know: the chance that one of its permits lies
    on the Golden Island (uniform over the islands it does not know to be ordinary) times a
    survival value, plus its expected gold; plus the worth of permits, pirates and knowledge
    in hand, and the distance to a useful landing.  Reads no hidden part of the state
    (rivals' permit values, unpeeked chests, the Golden Island, the decks).

    The gold is not scaled by today's survival chance: only survivors compare gold, and a
    seat's chance grows as it learns and digs on, so that scaling made every early permit on
    an island known to be ordinary look worthless.  Yet whoever places the sixth permit first
    wins about 19 games in 20 where both survive (benchmarks/golden_island.py --only search):
    the game is a race for permits, which the search judges by this value's margin."""
    cdef const GState* s = <const GState*>vs
    cdef const GPlayer* pl = &s.p[seat]
    cdef uint32_t known = known_islands(pl), unknown = ALL_ISLANDS & ~known, mine, held
    cdef int v
    cdef double gold, golden_coin, p_survive, value
    if s.head.terminal:
        return W_WIN * s.head.share[seat] + pl.gold_total
    mine = islands_with_permit(s, seat)
    gold = heuristic_gold(s, seat, unknown, mine, &p_survive, &golden_coin)
    value = W_SURVIVE * p_survive + gold + golden_coin
    held = pl.permits_held
    while held:                      # lowest first: the sum in a fixed order
        v = lowest_bit(held)
        held &= held - 1
        value += W_PERMIT + W_PERMIT_VALUE * (v + 1)
    value += W_PIRATE * pirates_held(pl) + W_KNOWN * popcount(known)
    value += W_CHEST_KNOWN * popcount(pl.chests_known)
    if pl.relic >= 0:
        value += W_RELIC_BONUS
    value -= W_DISTANCE * landing_target_distance(s, seat, mine)
    return value


cdef int g_action_values(const void* vs, int seat, const int* acts, int n,
                         double* out) noexcept nogil:
    """heuristic(apply(state, a), seat) exactly, on the true state without determinizing,
    for the decisions whose outcome the seat can foresee: the R4 swap, the gamble pirate,
    and abilities other than thefts and peeks (hand draws and reshuffles do not enter the
    heuristic).  Movement (island-card and permit draws, gambles), the rest of a captain's
    path after a gamble (nest_actions = every_space), thefts and peeks depend on hidden
    cards, and a turn that may end the game reveals the Golden Island: those take the
    generic path (returns 0)."""
    cdef const GState* s = <const GState*>vs
    cdef GState trial
    cdef int i
    cdef GAction x
    if (seat != s.head.current or s.head.terminal or s.end_trigger >= 0 or s.phase == PH_MOVE
            or s.path_left > 0 or s.turns + 1 >= s.rules.max_rounds * s.head.players):
        return 0
    for i in range(n):
        x = decompose(acts[i])
        if (x.kind == K_STEAL or x.kind == K_STEAL_SPLIT or x.kind == K_PEEK
                or x.kind == K_IMITATE):
            return 0
    memcpy(&trial, s, sizeof(GState))
    for i in range(n):
        if i > 0:                    # the rules, which apply never writes, stay as copied
            memcpy(&trial, s, <size_t>(<const char*>&s.rules - <const char*>s))
            memcpy(&trial.rules + 1, &s.rules + 1,
                   sizeof(GState) - <size_t>(<const char*>(&s.rules + 1) - <const char*>s))
        g_apply(&trial, acts[i])
        out[i] = g_heuristic(&trial, seat)
    return 1


# ---------------------------------------------------------------- the search's cut-off judgement
#
# Each seat's chance to win, from features of its prospects (the heuristic's parts and the
# race for permits): a conditional logit, P(seat k wins) = exp(w.f_k) / (exp(w_none) +
# sum_j exp(w.f_j)), w_none standing for "nobody survives".  The weights are data fitted to
# game outcomes (data/leaf_value.json, by benchmarks/leaf_fit.py; docs/lab/
# agent_presets.md); the search uses them with mcts(judge=fitted).

cdef enum:
    LF_SURVIVE = 0      # the chance that one of the seat's permits lies on the Golden Island
    LF_GOLD = 1         # expected gold (permits' islands, relic)
    LF_COIN = 2         # expected share of the Golden Island's coin
    LF_PERMITS = 3      # permits in hand
    LF_PERMIT_VALUES = 4  # their values summed
    LF_PIRATES = 5      # pirates held
    LF_KNOWN = 6        # islands known not to be golden
    LF_CHESTS = 7       # chests peeked
    LF_RELIC = 8        # a relic held
    LF_DISTANCE = 9     # sea steps to where the ship should sail next
    LF_PLACED = 10      # permits placed on islands
    LF_SURVIVE_LATE = 11  # LF_SURVIVE times the leader's share of the six permits
    LF_TO_ACT = 12      # the seat acts now
    N_LEAF = 13

LEAF_FEATURES = ("survive", "gold", "coin", "permits", "permit_values", "pirates", "known",
                 "chests", "relic", "distance", "placed", "survive_late", "to_act")
cdef double LEAF_W[N_LEAF]
cdef double LEAF_NONE = 0.0


cdef void seat_features(const GState* s, int seat, int lead, double* f) noexcept nogil:
    """The seat's features (LF_*), from what it may know; `lead` is the most permits any
    seat has placed."""
    cdef const GPlayer* pl = &s.p[seat]
    cdef uint32_t known = known_islands(pl), mine = islands_with_permit(s, seat)
    cdef uint32_t held = pl.permits_held
    cdef int v
    f[LF_GOLD] = heuristic_gold(s, seat, ALL_ISLANDS & ~known, mine, &f[LF_SURVIVE], &f[LF_COIN])
    f[LF_PERMITS] = popcount(held)
    f[LF_PERMIT_VALUES] = 0.0
    while held:
        v = lowest_bit(held)
        held &= held - 1
        f[LF_PERMIT_VALUES] += v + 1
    f[LF_PIRATES] = pirates_held(pl)
    f[LF_KNOWN] = popcount(known)
    f[LF_CHESTS] = popcount(pl.chests_known)
    f[LF_RELIC] = pl.relic >= 0
    f[LF_DISTANCE] = landing_target_distance(s, seat, mine)
    f[LF_PLACED] = pl.placed
    f[LF_SURVIVE_LATE] = f[LF_SURVIVE] * lead / <double>SIXTH_PERMIT
    f[LF_TO_ACT] = seat == s.head.current


cdef int leading_placed(const GState* s) noexcept nogil:
    cdef int k, lead = 0
    for k in range(s.head.players):
        lead = s.p[k].placed if s.p[k].placed > lead else lead
    return lead


cdef void g_leaf_values(const void* vs, double* out) noexcept nogil:
    """Each seat's chance to win (the conditional logit above) of a running game."""
    cdef const GState* s = <const GState*>vs
    cdef double f[N_LEAF]
    cdef double z[MAX_PLAYERS]
    cdef double top = LEAF_NONE, total
    cdef int k, j, lead = leading_placed(s)
    for k in range(s.head.players):
        seat_features(s, k, lead, f)
        z[k] = 0.0
        for j in range(N_LEAF):
            z[k] += LEAF_W[j] * f[j]
        top = z[k] if z[k] > top else top
    total = exp(LEAF_NONE - top)
    for k in range(s.head.players):
        z[k] = exp(z[k] - top)
        total += z[k]
    for k in range(s.head.players):
        out[k] = z[k] / total


# ---------------------------------------------------------------- the quick policy (rollouts)
#
# A rollout policy about as cheap as a random move that plays close to greedy.  A movement
# is valued from tables made once per decision instead of by playing it on a copy: the nest
# space the captain moves to (an island card, a permit, a pirate, a gamble), the sea node
# the ship ends on (the heuristic's distance to where it should sail next, and what the
# cards left in hand can do there at once: land, climb a volcano, take pirates).  The other
# decisions follow a fixed order of worth: land, volcano, take pirates, steal, peek, copy,
# pass.  It reads only what the acting seat knows (its hand, its deck's cards but not their
# order, the chests it peeked, the islands it knows, and the public board), so it may play
# on the real state as well as on a search's determinization.

cdef enum:
    POLICY_QUICK = 0

# Worth of the abilities outside movement (only their order matters).
cdef enum:
    Q_LAND = 6
    Q_VOLCANO = 5
    Q_TAKE = 4
    Q_STEAL = 3
    Q_PEEK = 2
    Q_IMITATE = 1


# Not rules: the worth of learning an island card (the heuristic's W_KNOWN undervalues it for
# a policy that looks one move ahead: greedy learns about 7.7 of the 12 cards in a game, a
# policy with W_KNOWN only 2.5, then races to its sixth permit without a permit on the Golden
# Island in 40% of its games), and the survival chance below which quick does not place its
# sixth permit (which ends the game).
cdef double Q_ISLAND_CARD = 1.5
cdef double Q_SAFE = 0.75


cdef bint risky_end(const GState* s, const GPlayer* pl, int isl) noexcept nogil:
    """Landing on island isl would place the seat's sixth permit (the end) while the chance
    that one of its permits lies on the Golden Island stays below Q_SAFE."""
    cdef uint32_t unknown = ALL_ISLANDS & ~known_islands(pl)
    if pl.placed != SIXTH_PERMIT - 1 or unknown == 0:
        return False
    return popcount((pl.dug | (1u << isl)) & unknown) < Q_SAFE * popcount(unknown)


cdef bint may_land_on(const GState* s, const GPlayer* pl, int isl, int seat) noexcept nogil:
    """Landing (section 4.5) on treasure island isl is possible with the permits and
    pirates the seat holds (given a landing card)."""
    if has_permit_on(s, isl, seat) or pl.permits_held == 0:
        return False
    return (pirates_held(pl) >= 2 or pl.pirates[s.rules.island_colour[isl]] > 0
            or (pl.relic == R1_ANY_COLOUR and pirates_held(pl) > 0))


ctypedef struct MoveTables:        # quick's movement values, each filled at its first use
    uint32_t landable               # islands (bit i) the seat may land on (given a card)
    uint32_t targets                # sea nodes the ship should sail to
    uint32_t node_done              # nodes whose values below are filled
    uint32_t space_done             # nest spaces whose value is filled
    double ship[N_NODES]            # minus the heuristic's distance term from there
    double land[N_NODES]            # a landing card left could land there now: its worth
    double volcano[N_NODES]         # a volcano card left could take the 7 or a relic
    double pirate[N_NODES]          # a pirate or veteran card left could take pirates
    double space[MAX_NEST]          # the captain's arrival on a nest space
    double symbols                  # the share of the seat's deck that wins a gamble (-1: unknown)


cdef void move_targets(const GState* s, const GPlayer* pl, MoveTables* T) noexcept nogil:
    """Where the ship should sail, in landing_target_distance's order: islands to land on
    that may be golden, then the volcanoes' 7 and relics, then any island to land on, else
    the harbour and (short of pirates) the nodes with pirates."""
    cdef uint32_t unknown = ALL_ISLANDS & ~known_islands(pl), first = 0, later = 0
    cdef int i, v, seat = s.head.current
    T.landable = T.node_done = T.space_done = 0
    T.symbols = -1.0
    for i in range(N_ISLANDS):
        if may_land_on(s, pl, i, seat):
            T.landable |= 1u << i
            if (unknown >> i) & 1:
                first |= 1u << (i + 1)
            else:
                later |= 1u << (i + 1)
    T.targets = first
    if not T.targets and pirates_held(pl) > 0:
        if pl.seven_at_volcano:
            T.targets |= 1u << NODE_VU
        if pl.relic < 0 and s.relics_free:
            T.targets |= 1u << NODE_VL
    if not T.targets:
        T.targets = later
    if not T.targets:
        T.targets = 1u << NODE_H
        if pirates_held(pl) < 2:
            T.targets |= pirate_nodes(s)


cdef void fill_node(const GState* s, const GPlayer* pl, MoveTables* T, int node) noexcept nogil:
    """The ship's values at a sea node: its distance term, and what a card left in hand
    could do there at once (0 where it cannot)."""
    cdef int isl = island_of(node), d, best = 99
    cdef uint32_t left = T.targets, known = known_islands(pl)
    while left:
        d = s.rules.dist[node][lowest_bit(left)]
        left &= left - 1
        best = d if d < best else best
    T.ship[node] = -W_DISTANCE * best
    T.land[node] = T.volcano[node] = T.pirate[node] = 0.0
    if isl >= 0 and (T.landable >> isl) & 1 and not risky_end(s, pl, isl):
        T.land[node] = s.chest[isl] if (pl.chests_known >> isl) & 1 else mean_unknown_chest(s, pl)
        if not (known >> isl) & 1:
            T.land[node] += W_SURVIVE / (N_ISLANDS - popcount(known))
    if pirates_held(pl) > 0 and ((node == NODE_VU and pl.seven_at_volcano) or
                                 (node == NODE_VL and pl.relic < 0 and s.relics_free)):
        T.volcano[node] = W_PERMIT + W_RELIC_BONUS
    if node != NODE_H and pirates_held(pl) < PIRATE_CAP and  has_pirates(s.node_pirates[node]):
        T.pirate[node] = W_PIRATE
    T.node_done |= 1u << node


cdef void fill_space(const GState* s, const GPlayer* pl, MoveTables* T, int space) noexcept nogil:
    """What the captain's arrival on a nest space is worth, in heuristic units."""
    cdef int kind = s.rules.nest_kind[space], i, symbols = 0
    cdef double pirate = W_PIRATE if (pirates_held(pl) < PIRATE_CAP and s.houses[0] + s.houses[1]
                                      + s.houses[2] + s.houses[3] > 0) else 0.0
    cdef double permit = W_PERMIT + W_PERMIT_VALUE * 4 if pl.permits_pool else 0.0
    T.space[space] = 0.0
    if kind == NK_ISLAND_CARD and s.island_deck_len > 0:
        T.space[space] = Q_ISLAND_CARD
    elif kind == NK_PERMIT:
        T.space[space] = permit
    elif kind == NK_PIRATES and s.houses[s.rules.nest_colour[space]] > 0:
        T.space[space] = pirate
    elif kind == NK_GAMBLE:
        if T.symbols < 0.0:          # the deck's cards (not their order) are the seat's to know
            for i in range(pl.deck_len):
                symbols += s.rules.card_symbol[s.head.current][pl.deck[i]] != 0
            T.symbols = symbols / <double>pl.deck_len if pl.deck_len else 0.0
        T.space[space] = (permit + pirate) * T.symbols
    T.space_done |= 1u << space


cdef inline double arrival(const MoveTables* T, int node, uint32_t abilities,
                           int volcano_card) noexcept nogil:
    """The first thing the cards left (their abilities, a bit set) can do at the node."""
    if T.land[node] > 0.0 and (abilities >> AB_LANDING) & 1:
        return T.land[node]
    if T.volcano[node] > 0.0 and (abilities >> volcano_card) & 1:
        return T.volcano[node]
    if T.pirate[node] > 0.0 and (abilities & ((1u << AB_PIRATE) | (1u << AB_VETERAN))):
        return T.pirate[node]
    return 0.0


ctypedef struct Best:              # the best action so far among values offered one by one
    uint64_t salt                   # one random draw per decision orders equal values
    double value
    int action


cdef inline void offer(Best* b, double value, int action) noexcept nogil:
    """Keeps the action if its value is higher, or equal and first in the decision's random
    order (a hash of the action salted by the draw: no draw per tie)."""
    if value > b.value or (value == b.value and
                           rng_tie_key(b.salt, action) > rng_tie_key(b.salt, b.action)):
        b.value = value
        b.action = action


cdef inline void start_best(Best* b, Rng* rng) noexcept nogil:
    b.salt = rng_next(rng)
    b.value = -1e300
    b.action = -1


cdef int quick_move(const GState* s, Rng* rng) noexcept nogil:
    """The movement of the best estimated worth (ties at random): the nest space the
    captain moves to, the ship's end, and what the cards left can do there."""
    cdef const GPlayer* pl = &s.p[s.head.current]
    cdef int acts[MAX_LEGAL]
    cdef Best best
    cdef MoveTables T
    cdef uint32_t left[MAX_HAND]        # the abilities of the hand without each slot
    cdef int n = move_actions(s, acts), i, j
    cdef int volcano_card = AB_PIRATE if s.rules.volcano_by_pirates else AB_LANDING
    cdef GAction x
    move_targets(s, pl, &T)
    for i in range(pl.hand_len):
        left[i] = 0
        for j in range(pl.hand_len):
            if j != i:
                left[i] |= 1u << s.rules.card_ability[s.head.current][pl.hand[j]]
    start_best(&best, rng)
    for i in range(n):
        x = decompose(acts[i])
        if not (T.node_done >> x.y) & 1:
            fill_node(s, pl, &T, x.y)
        if x.x != pl.captain and not (T.space_done >> x.x) & 1:
            fill_space(s, pl, &T, x.x)
        offer(&best, T.ship[x.y] + arrival(&T, x.y, left[x.slot], volcano_card)
              + (T.space[x.x] if x.x != pl.captain else 0.0), acts[i])
    return best.action


cdef int quick_worth(const GState* s, int a) noexcept nogil:
    """The order of worth of an ability action (higher first; see the Q_ constants), with
    the finer choice inside a kind: a land spends the fewest pirates and the lowest permit
    on an empty island (a rival's permit there: the highest), a take the most pirates, a
    theft the most cards, a peek an island the seat holds a permit on."""
    cdef GAction x = decompose(a)
    cdef int isl
    if x.kind == K_LAND:
        isl = island_of(s.p[s.head.current].ship)
        if risky_end(s, &s.p[s.head.current], isl):
            return -1                              # below passing
        return (Q_LAND * 100 - 20 * combo_size(x.x)
                + (x.y if s.stack_len[isl] > 0 else TOP_PERMIT - x.y))
    if x.kind == K_VOLCANO:
        return Q_VOLCANO * 100
    if x.kind == K_TAKE:
        return Q_TAKE * 100 + combo_size(x.x)
    if x.kind == K_STEAL:
        return Q_STEAL * 100 + x.y
    if x.kind == K_STEAL_SPLIT:
        return Q_STEAL * 100 + 2
    if x.kind == K_PEEK:
        return Q_PEEK * 100 + has_permit_on(s, x.x, s.head.current)
    if x.kind == K_IMITATE:
        return Q_IMITATE * 100
    return 0


cdef int quick_policy(const GState* s, Rng* rng) noexcept nogil:
    cdef int acts[MAX_LEGAL]
    cdef Best best
    cdef int n, i
    if s.phase == PH_MOVE:
        return quick_move(s, rng)
    n = g_legal(s, acts)
    if s.phase == PH_START or s.phase == PH_GAMBLE:
        return acts[rng_below(rng, n)] if s.phase == PH_GAMBLE else acts[0]   # keep the hand
    start_best(&best, rng)
    for i in range(n):
        offer(&best, quick_worth(s, acts[i]), acts[i])
    return best.action


cdef int g_policy(const void* vs, int which, const double* params, Rng* rng,
                  void* scratch) noexcept nogil:
    return quick_policy(<const GState*>vs, rng)


# ---------------------------------------------------------------- observe (hidden information)

cdef inline uint32_t card_set(const int8_t* cards, int n) noexcept nogil:
    """The cards of a pile as a bit set (a seat's cards are distinct ids below 32)."""
    cdef uint32_t m = 0
    cdef int i
    for i in range(n):
        m |= 1u << cards[i]
    return m


cdef inline int ascending(int8_t* out, uint32_t cards) noexcept nogil:
    """Writes a bit set's members in ascending order (what sorting the distinct ids gives,
    without an insertion sort's mispredicted branches); returns how many."""
    cdef int n = 0
    while cards:
        out[n] = <int8_t>lowest_bit(cards)
        cards &= cards - 1
        n += 1
    return n


cdef void redeal_island_cards(GState* o, int seat, Rng* rng) noexcept nogil:
    """Every island card the seat does not hold goes back among the places the seat cannot
    see (the deck, rivals' hands, the Golden Island slot), counts per place kept; the Golden
    Island is drawn from the cards the seat does not know to be ordinary.  Rivals keep only
    the knowledge of the cards they now hold (what they remember is not the seat's to see)."""
    cdef int8_t pool[N_ISLANDS]
    cdef int n, i, j, t, counts[MAX_PLAYERS]
    cdef uint32_t known = known_islands(&o.p[seat]), unknown
    n = ascending(pool, ALL_ISLANDS & ~(<uint32_t>o.p[seat].islands_held))
    # The golden card: uniform among pool cards the seat does not know.
    unknown = 0
    for i in range(n):
        if not (known >> pool[i]) & 1:
            unknown |= 1u << i
    draw_to_end(pool, n, unknown, rng)
    o.golden = pool[n - 1]
    n -= 1
    rng_shuffle(rng, pool, n, sizeof(pool[0]))
    j = 0
    for i in range(o.island_deck_len):
        o.island_deck[i] = pool[j]
        j += 1
    for t in range(o.head.players):
        if t == seat:
            continue
        counts[t] = popcount(o.p[t].islands_held)
        o.p[t].islands_held = 0
        for i in range(counts[t]):
            o.p[t].islands_held |= 1 << pool[j]
            j += 1
        o.p[t].islands_remembered = o.p[t].islands_held


cdef void redeal_chests(GState* o, int seat, Rng* rng) noexcept nogil:
    """Chest values the seat has not peeked are shuffled among those islands (from their
    sorted order: which unpeeked island holds which value never reaches the view)."""
    cdef int16_t vals[N_ISLANDS]
    cdef int i, n = 0, j, t
    cdef int16_t x
    for i in range(N_ISLANDS):
        if not (o.p[seat].chests_known >> i) & 1:
            vals[n] = o.chest[i]
            n += 1
    canonical_shuffle(rng, vals, n)
    t = 0
    for i in range(N_ISLANDS):
        if not (o.p[seat].chests_known >> i) & 1:
            o.chest[i] = vals[t]
            t += 1


cdef inline int own_slot(const GState* o, int isl, int seat) noexcept nogil:
    """Where the seat's permit lies in an island's stack (one permit per seat and island)."""
    cdef int k = 0
    while o.stack_owner[isl][k] != seat:
        k += 1
    return k


cdef void redeal_permits(GState* o, int rival, Rng* rng) noexcept nogil:
    """A rival's permits in hand, in the pool and face down on islands: the values are
    shuffled among those places (the 7, once taken from the volcano, is never in the pool).
    The places are listed hand, pool, islands, and the values sorted before the shuffle, so
    that the view depends only on what the seat sees (how many permits lie where)."""
    cdef GPlayer* pl = &o.p[rival]
    cdef int8_t vals[TOP_PERMIT]
    cdef int8_t spots[TOP_PERMIT]     # -1 hand, -2 pool, else island index
    cdef int n = 0, i, isl, m
    cdef uint32_t not_pool, values = pl.permits_held | pl.permits_pool, dug = pl.dug
    for i in range(popcount(pl.permits_held)):
        spots[n] = -1
        n += 1
    for i in range(popcount(pl.permits_pool)):
        spots[n] = -2
        n += 1
    while dug:                        # the islands in ascending order
        isl = lowest_bit(dug)
        dug &= dug - 1
        spots[n] = <int8_t>isl
        n += 1
        values |= 1u << (o.stack_value[isl][own_slot(o, isl, rival)] - 1)
    for i in range(ascending(vals, values)):    # the values (distinct) in ascending order
        vals[i] += 1
    # The 7 (if taken) goes to a random non-pool spot first, then the rest are shuffled.
    m = vals[n - 1] == TOP_PERMIT if n > 0 else 0
    if m:
        not_pool = 0
        for i in range(n):
            if spots[i] != -2:
                not_pool |= 1u << i
        draw_to_end(spots, n, not_pool, rng)
    rng_shuffle(rng, vals, n - m, sizeof(vals[0]))
    pl.permits_held = 0
    pl.permits_pool = 0
    for i in range(n):
        if spots[i] == -1:
            pl.permits_held |= 1 << (vals[i] - 1)
        elif spots[i] == -2:
            pl.permits_pool |= 1 << (vals[i] - 1)
        else:
            o.stack_value[spots[i]][own_slot(o, spots[i], rival)] = vals[i]


cdef void redeal_cards(GState* o, int seat, Rng* rng) noexcept nogil:
    """Deck orders are hidden from everyone; rivals' hands are pooled with their decks.  Every
    redeal shuffles the cards from their ascending order (canonical_shuffle's, the cards being
    distinct), so hidden orders never reach the view."""
    cdef GPlayer* pl
    cdef int t, h
    cdef uint32_t dealt
    for t in range(o.head.players):
        pl = &o.p[t]
        if t != seat:
            h = pl.hand_len
            pl.deck_len = <int8_t>ascending(pl.deck, card_set(pl.deck, pl.deck_len)
                                            | card_set(pl.hand, h))
            rng_shuffle(rng, pl.deck, pl.deck_len, sizeof(pl.deck[0]))
            pl.deck_len -= h
            dealt = card_set(&pl.deck[pl.deck_len], h)
            memset(&pl.deck[pl.deck_len], 0, h)
            memset(pl.hand, 0, MAX_HAND)
            pl.hand_len = <int8_t>ascending(pl.hand, dealt)     # the top h cards, sorted
        else:
            ascending(pl.deck, card_set(pl.deck, pl.deck_len))
            rng_shuffle(rng, pl.deck, pl.deck_len, sizeof(pl.deck[0]))


cdef void g_observe(const void* vs, int seat, void* out, Rng* rng) noexcept nogil:
    """The state as `seat` may see it: the Golden Island, island cards it does not hold,
    chests it has not peeked, rivals' permit values and hands, and all deck orders are
    redrawn consistently with what it knows; the view's own chance stream is fresh."""
    cdef GState* o = <GState*>out
    cdef int t
    memcpy(o, vs, sizeof(GState))
    if o.head.terminal:
        return
    redeal_island_cards(o, seat, rng)
    redeal_chests(o, seat, rng)
    for t in range(o.head.players):
        if t != seat:
            redeal_permits(o, t, rng)
    redeal_cards(o, seat, rng)
    o.head.rng.key = rng_next(rng)
    o.head.rng.ctr = 0




# ================================================================ Python face

NODES = ("H",) + tuple(f"T{i}" for i in range(1, N_ISLANDS + 1)) + ("VL", "VU")
ISLANDS = NODES[1:N_ISLANDS + 1]
COLOURS = ("black", "white", "purple", "natural")
ABILITIES = ("landing", "thief", "master_thief", "fortune_teller", "pirate", "veteran_pirate",
             "imitator")
RELICS = ("R1", "R2", "R3", "R4")
NEST_KINDS = ("lighthouse", "island_card", "permit", "pirates", "gamble")
PHASES = ("start", "move", "gamble", "ability", "copy")
WAYS = ("clockwise", "counter-clockwise")   # the captain's way round the nest ring
END_REASONS = ("running", "sixth_permit", "round_limit")


HOME = __name__.rpartition(".")[0]  # this game's package, where its data lives
DEFAULT_NEST = load_data(HOME, "data/nest.json")["nest_spaces"]
DEFAULT_SEA = load_data(HOME, "data/sea.json")["sea_graph"]
DEFAULT_ISLAND_COLOURS = load_data(HOME, "data/islands.json")["island_colours"]
DEFAULT_DECK = load_data(HOME, "data/cards.json")["deck_table"]
DEFAULT_CHESTS = load_data(HOME, "data/chests.json")["chest_values"]
DEFAULT_RELIC_GOLD = load_data(HOME, "data/relics.json")["relic_gold"]


def _int_in(v, lo, hi, where):
    return integer(v, where, lo, hi)


def parse_nest(spaces):
    """(kinds, colours, lighthouse index) of the nest ring (rule option `nest_spaces`)."""
    where = "rule option 'nest_spaces'"
    if not isinstance(spaces, list) or not 3 <= len(spaces) <= MAX_NEST:
        raise ValueError(f"{where} must be a list of 3..{MAX_NEST} spaces")
    kinds, colours = [], []
    for i, sp in enumerate(spaces):
        w = f"{where}[{i}]"
        if not isinstance(sp, dict) or set(sp) - {"kind", "colour"}:
            raise ValueError(f"{w} must be an object with 'kind' (and 'colour' for pirates)")
        if sp.get("kind") not in NEST_KINDS:
            raise ValueError(f"{w}.kind must be one of {list(NEST_KINDS)}, got {sp.get('kind')!r}")
        kinds.append(NEST_KINDS.index(sp["kind"]))
        if sp["kind"] == "pirates":
            if sp.get("colour") not in COLOURS:
                raise ValueError(f"{w}.colour must be one of {list(COLOURS)}")
            colours.append(COLOURS.index(sp["colour"]))
        elif "colour" in sp:
            raise ValueError(f"{w}: only a pirates space has a colour")
        else:
            colours.append(0)
    if kinds.count(NK_LIGHTHOUSE) != 1:
        raise ValueError(f"{where} must have exactly one lighthouse")
    return kinds, colours, kinds.index(NK_LIGHTHOUSE)


def parse_sea(graph):
    """(edges as node index pairs, distance matrix) of rule option `sea_graph`."""
    where = "rule option 'sea_graph'"
    if not isinstance(graph, dict) or set(graph) != {"edges"} or not isinstance(graph["edges"], list):
        raise ValueError(f"{where} must be an object {{'edges': [[node, node], ...]}}")
    edges, seen = [], set()
    degree = [0] * N_NODES
    for i, e in enumerate(graph["edges"]):
        w = f"{where}.edges[{i}]"
        if (not isinstance(e, list) or len(e) != 2 or any(x not in NODES for x in e)
                or e[0] == e[1]):
            raise ValueError(f"{w} must be two different nodes from {list(NODES)}, got {e!r}")
        a, b = NODES.index(e[0]), NODES.index(e[1])
        if (min(a, b), max(a, b)) in seen:
            raise ValueError(f"{w}: the line {e[0]}-{e[1]} is listed twice")
        seen.add((min(a, b), max(a, b)))
        degree[a] += 1
        degree[b] += 1
        edges.append((a, b))
    if len(edges) > MAX_EDGES or max(degree) > MAX_DEGREE:
        raise ValueError(f"{where}: at most {MAX_EDGES} lines and {MAX_DEGREE} per node")
    dist = [[99] * N_NODES for _ in range(N_NODES)]
    for src in range(N_NODES):
        dist[src][src] = 0
        frontier = [src]
        while frontier:
            nxt = []
            for x in frontier:
                for a, b in edges:
                    for u, v in ((a, b), (b, a)):
                        if u == x and dist[src][v] == 99:
                            dist[src][v] = dist[src][x] + 1
                            nxt.append(v)
            frontier = nxt
    unreachable = [NODES[v] for v in range(N_NODES) if dist[NODE_H][v] == 99]
    if unreachable:
        raise ValueError(f"{where}: {unreachable} cannot be reached from the harbour H")
    return edges, dist, trail_ends(tuple(edges))


@functools.lru_cache(maxsize=64)
def trail_ends(edges):
    """ends[node][k]: bit mask of the nodes where a sea trail of exactly k lines from node
    ends (each line at most once, section 4.1), for k up to MAX_POINTS (edges: a tuple of
    node pairs; cached, since every pack of the rules asks again)."""
    ends = [[0] * (MAX_POINTS + 1) for _ in range(N_NODES)]

    def walk(start, node, used, k):
        ends[start][k] |= 1 << node
        if k == MAX_POINTS:
            return
        for e, (a, b) in enumerate(edges):
            if not (used >> e) & 1 and node in (a, b):
                walk(start, b if node == a else a, used | (1 << e), k + 1)

    for start in range(N_NODES):
        walk(start, start, 0, 0)
    return ends


def parse_island_colours(colours):
    where = "rule option 'island_colours'"
    if not isinstance(colours, dict) or set(colours) != set(ISLANDS):
        raise ValueError(f"{where} must give a colour for each of {list(ISLANDS)}")
    for k, v in colours.items():
        if v not in COLOURS:
            raise ValueError(f"{where}.{k} must be one of {list(COLOURS)}, got {v!r}")
    return [COLOURS.index(colours[name]) for name in ISLANDS]


def parse_deck(cards, where="rule option 'deck_table'"):
    """(ability, move or NO_MOVE, symbol) per card of a deck table (rule option `deck_table`,
    or one of `seat_decks`)."""
    if not isinstance(cards, list) or not 1 <= len(cards) <= MAX_CARDS:
        raise ValueError(f"{where} must be a list of 1..{MAX_CARDS} cards")
    out = []
    for i, c in enumerate(cards):
        w = f"{where}[{i}]"
        if not isinstance(c, dict) or set(c) != {"ability", "move", "symbol"}:
            raise ValueError(f"{w} must be an object with ability, move, symbol")
        if c["ability"] not in ABILITIES:
            raise ValueError(f"{w}.ability must be one of {list(ABILITIES)}, got {c['ability']!r}")
        move = NO_MOVE if c["move"] == "lighthouse" else _int_in(c["move"], 1, MAX_MOVE, f"{w}.move "
                                                                  "(or 'lighthouse')")
        if not isinstance(c["symbol"], bool):
            raise ValueError(f"{w}.symbol must be true or false")
        out.append((ABILITIES.index(c["ability"]), move, int(c["symbol"])))
    return out


def parse_chests(values):
    where = "rule option 'chest_values'"
    if not isinstance(values, list) or len(values) != N_ISLANDS:
        raise ValueError(f"{where} must list {N_ISLANDS} chest values")
    return [_int_in(v, 0, 99, f"{where}[{i}]") for i, v in enumerate(values)]


def parse_relic_gold(values):
    where = "rule option 'relic_gold'"
    if not isinstance(values, list) or len(values) != N_RELICS:
        raise ValueError(f"{where} must list the gold of the {N_RELICS} relics R1..R4")
    return [_int_in(v, 0, 99, f"{where}[{i}]") for i, v in enumerate(values)]


cdef bytes _pack(dict r, int players):
    cdef GRules R
    memset(&R, 0, sizeof(GRules))
    kinds, colours, lighthouse = parse_nest(r["nest_spaces"])
    edges, dist, trails = parse_sea(r["sea_graph"])
    deck = parse_deck(r["deck_table"])
    chests = parse_chests(r["chest_values"])
    R.exact_move = r["exact_move_required"]
    R.steal_at_home = GAME.choice_index(r, "steal_at_home")
    R.volcano_by_pirates = GAME.choice_index(r, "volcano_landing_cards")
    R.max_rounds = r["max_rounds"]
    R.no_survivor_highest = GAME.choice_index(r, "no_survivor_result")
    R.recall_error = 0 if r["written_notes"] else r["recall_error_per_mille"]
    R.written_notes = r["written_notes"]
    R.recall_option = r["recall_error_per_mille"]
    R.first_random = GAME.choice_index(r, "first_player")
    R.bank_limited = r["bank_limited"]
    R.nest_every_space = GAME.choice_index(r, "nest_actions")
    R.master_thief_split = GAME.choice_index(r, "master_thief_victims")
    R.negative_payout_paid = GAME.choice_index(r, "negative_payout")
    R.n_seat_gold = len(r["seat_bonus_gold"])
    for i, v in enumerate(r["seat_bonus_gold"]):
        R.seat_gold[i] = v
    R.n_nest = len(kinds)
    R.lighthouse = lighthouse
    for i, (k, c) in enumerate(zip(kinds, colours)):
        R.nest_kind[i], R.nest_colour[i] = k, c
    R.n_edges = len(edges)
    for i, (a, b) in enumerate(edges):
        R.edge_a[i], R.edge_b[i] = a, b
        R.adj_edge[a][R.degree[a]], R.adj_node[a][R.degree[a]] = i, b
        R.adj_edge[b][R.degree[b]], R.adj_node[b][R.degree[b]] = i, a
        R.degree[a] += 1
        R.degree[b] += 1
    for a in range(N_NODES):
        for b in range(N_NODES):
            R.dist[a][b] = dist[a][b]
        for k in range(MAX_POINTS + 1):
            R.trail_ends[a][k] = trails[a][k]
    for i, c in enumerate(parse_island_colours(r["island_colours"])):
        R.island_colour[i] = c
    if not isinstance(r["seat_decks"], list):
        raise ValueError("rule option 'seat_decks' must be a list of deck tables")
    decks = [parse_deck(t, f"rule option 'seat_decks'[{k}]") for k, t in enumerate(r["seat_decks"])]
    if decks and len(decks) != MAX_PLAYERS:
        raise ValueError(f"rule option 'seat_decks' must list {MAX_PLAYERS} deck tables (seats "
                         f"0..{MAX_PLAYERS - 1}), or none: every seat plays deck_table")
    for seat in range(MAX_PLAYERS):
        cards = decks[seat] if decks else deck
        R.n_cards[seat] = len(cards)
        for i, (ab, mv, sym) in enumerate(cards):
            R.card_ability[seat][i], R.card_move[seat][i], R.card_symbol[seat][i] = ab, mv, sym
    for i, v in enumerate(chests):
        R.chest_values[i] = v
    R.chest_total = sum(chests)
    for i, v in enumerate(parse_relic_gold(r["relic_gold"])):
        R.relic_gold[i] = v
    return (<char*>&R)[:sizeof(GRules)]


cdef inline GState* _st(State s):
    s._check_alive()
    return <GState*>s.buf


def _bits(mask, names):
    return [names[i] for i in range(len(names)) if (mask >> i) & 1]


cdef dict _pirates(const int8_t* counts):
    return {COLOURS[c]: int(counts[c]) for c in range(N_COLOURS)}


def _seat_or_none(v):
    return None if v < 0 else int(v)


# The action ids by name (core_cy/engine/actions.py), from the same constants as the C encoding.
ACTIONS = ActionSpace(
    NUM_ACTIONS,
    Kind("swap", A_SWAP, discard_mask=1 << MAX_HAND),
    Kind("move", A_MOVE, slot=MAX_HAND, way=N_WAYS, captain=MAX_NEST, ship=NODE_SLOTS),
    Kind("gamble_pirate", A_GAMBLE_PIRATE, colour=N_COLOURS),
    Kind("pass", A_PASS),
    Kind("steal", A_STEAL, slot=SLOTS, victim=MAX_PLAYERS, cards=(1, 2)),
    Kind("peek", A_PEEK, slot=SLOTS, island=N_ISLANDS),
    Kind("take", A_TAKE, slot=SLOTS, combo=N_COMBOS),
    Kind("land", A_LAND, slot=SLOTS, combo=N_COMBOS, permit=(1, TOP_PERMIT)),
    Kind("volcano", A_VOLCANO, slot=SLOTS, colour=N_COLOURS, relic=N_RELICS),
    Kind("imitate", A_IMITATE, slot=SLOTS, target=MAX_PLAYERS),
    Kind("steal_split", A_STEAL_SPLIT, slot=SLOTS, victim=MAX_PLAYERS, second=MAX_PLAYERS),
)
# Pirate combos by index (the `combo` parameter): a colour, or a pair of colours.
COMBOS = tuple((COLOURS[COMBO_A[k]],) if COMBO_B[k] < 0 else (COLOURS[COMBO_A[k]], COLOURS[COMBO_B[k]])
               for k in range(N_COMBOS))


class GoldenIslandGame(AgentGame):
    name = "golden_island"
    title = "The Golden Island (Cartagena - Die Goldinsel)"
    min_players = 2
    max_players = MAX_PLAYERS
    # Nobody may survive the Golden Island reveal (section 5.2 step 6): then no seat wins.
    may_end_without_winner = True
    policies = {
        "quick": "a cheap rollout policy close to greedy: values a movement from tables made "
                 "once per decision (the nest space the captain reaches, the ship's distance "
                 "to its next landing, what the cards left in hand can do there) and plays "
                 "abilities in a fixed order of worth (land, volcano, pirates, steal, peek); "
                 "it does not place its sixth permit while it probably has none on the "
                 "Golden Island",
    }
    # The measurements behind these values: docs/lab/search_agent.md.
    search_defaults = {"rollout": "quick", "cutoff": 16, "widen": 0.5, "exploration": 0.4}
    outcome_labels = {"relic": ("none",) + RELICS}
    combos = COMBOS
    options = options_from_data(HOME, "options.toml", DEFAULT_NEST=DEFAULT_NEST,
                                DEFAULT_SEA=DEFAULT_SEA,
                                DEFAULT_ISLAND_COLOURS=DEFAULT_ISLAND_COLOURS,
                                DEFAULT_DECK=DEFAULT_DECK, DEFAULT_CHESTS=DEFAULT_CHESTS,
                                DEFAULT_RELIC_GOLD=DEFAULT_RELIC_GOLD)

    def check_rules(self, rules, players):
        _pack(rules, players)     # every data table parses (ValueError names the field)

    def pack_rules(self, rules, players):
        return _pack(rules, players)

    # ---- state dict ------------------------------------------------------------------
    def to_dict(self, State state):
        return _to_dict(self, state)

    def fill_state(self, State state, data, rules):
        _fill(_st(state), data, rules)
        check_live(state)

    # ---- descriptions ----------------------------------------------------------------
    def describe(self, State state, action):
        return _describe(state, action)

    def score_breakdown(self, State state):
        """Per seat, the scoring lines of section 5.2 (as if the game ended now)."""
        cdef GState tmp
        memcpy(&tmp, _st(state), sizeof(GState))
        if not tmp.head.terminal:
            finish(&tmp, END_RUNNING)
        out = []
        for i in range(tmp.head.players):
            pl = &tmp.p[i]
            out.append({"seat": i, "chests": pl.gold_chests, "coins": pl.gold_coins,
                        "golden_coin": pl.gold_golden, "relic": pl.gold_relic,
                        "total": pl.gold_total, "golden_rank": pl.golden_rank,
                        "eliminated": bool(pl.eliminated), "win_share": tmp.head.share[i]})
        return out

    def view(self, State state, int seat, unsigned long long seed=0):
        """The state as `seat` may see it (Engine.observe with its own RNG stream)."""
        return _view(self, state, seat, seed)


cdef State _view(game, State state, int seat, unsigned long long seed):
    if not 0 <= seat < _st(state).head.players:
        raise ValueError(f"seat {seat} out of range")
    cdef State out = contract.blank_state(game, GoldenIslandGame.handle)
    cdef Rng rng
    rng_seed(&rng, seed, 0, 0, STREAM_SEAT + seat)
    g_observe(_st(state), seat, out.buf, &rng)
    return out


cdef str _card_text(const GRules* R, int seat, int c):
    mv = "lighthouse" if R.card_move[seat][c] == NO_MOVE else str(R.card_move[seat][c])
    return (f"card {c} ({ABILITIES[R.card_ability[seat][c]]}, {mv}"
            f"{', symbol' if R.card_symbol[seat][c] else ''})")


def _combo_text(combo):
    return " and ".join(COMBOS[combo])


def _describe(State state, action):
    cdef GState* s = _st(state)
    cdef GPlayer* pl = &s.p[s.head.current]
    cdef GRules* R = &s.rules
    kind, x = ACTIONS.decode(action)
    texts = [_card_text(R, s.head.current, pl.hand[k]) for k in range(pl.hand_len)]
    slot = x.get("slot", 0)
    card = texts[slot] if slot < len(texts) else f"hand slot {slot}"
    who = "copied ability" if slot == COPY_SLOT else f"play {card}"
    if kind == "swap":
        slots = [k for k in range(MAX_HAND) if (x["discard_mask"] >> k) & 1]
        return ("keep the hand" if not slots else
                "discard " + ", ".join(texts[k] if k < len(texts) else f"hand slot {k}"
                                       for k in slots) + " and draw as many")
    if kind == "move":
        cap = x["captain"]
        space = NEST_KINDS[R.nest_kind[cap]] if cap < R.n_nest else "?"
        if cap < R.n_nest and R.nest_kind[cap] == NK_PIRATES:
            space = f"{COLOURS[R.nest_colour[cap]]} pirates"
        ship = NODES[x["ship"]] if x["ship"] < N_NODES else x["ship"]
        way = ""
        if R.nest_every_space and cap != pl.captain:
            way = ", going counter-clockwise" if x["way"] else ", going clockwise"
        return f"play {card} to move: captain to nest space {cap} ({space}){way}, ship to {ship}"
    if kind == "gamble_pirate":
        return f"take a {COLOURS[x['colour']]} pirate (gamble won)"
    if kind == "pass":
        return "play no ability card"
    if kind == "steal":
        what = f"steal {x['cards']} island card{'s' if x['cards'] > 1 else ''} from seat {x['victim']}"
    elif kind == "steal_split":
        what = f"steal 1 island card from seat {x['victim']} and 1 from seat {x['second']}"
    elif kind == "peek":
        what = f"look at the chest on {ISLANDS[x['island']]}"
    elif kind == "take":
        what = f"take {_combo_text(x['combo'])} pirate(s) from the island"
    elif kind == "land":
        what = f"land {_combo_text(x['combo'])} pirate(s) and permit {x['permit']}"
    elif kind == "volcano":
        what = (f"land a {COLOURS[x['colour']]} pirate on the volcano"
                + (f", taking relic {RELICS[x['relic']]}" if s.p[s.head.current].ship == NODE_VL else ""))
    else:
        what = f"imitate the top discard of seat {x['target']}"
    return f"{who}: {what}"


cdef dict _rules_dict(const GRules* R):
    """The resolved rules a packed rules struct was made from."""
    decks = [[{"ability": ABILITIES[R.card_ability[k][c]],
               "move": "lighthouse" if R.card_move[k][c] == NO_MOVE else int(R.card_move[k][c]),
               "symbol": bool(R.card_symbol[k][c])} for c in range(R.n_cards[k])]
             for k in range(MAX_PLAYERS)]
    nest = []
    for i in range(R.n_nest):
        sp = {"kind": NEST_KINDS[R.nest_kind[i]]}
        if R.nest_kind[i] == NK_PIRATES:
            sp["colour"] = COLOURS[R.nest_colour[i]]
        nest.append(sp)
    return {
        "exact_move_required": bool(R.exact_move),
        "steal_at_home": GAME.choice_at("steal_at_home", R.steal_at_home),
        "volcano_landing_cards": GAME.choice_at("volcano_landing_cards", R.volcano_by_pirates),
        "max_rounds": R.max_rounds,
        "no_survivor_result": GAME.choice_at("no_survivor_result", R.no_survivor_highest),
        "written_notes": bool(R.written_notes),
        "recall_error_per_mille": R.recall_option,
        "first_player": GAME.choice_at("first_player", R.first_random),
        "bank_limited": bool(R.bank_limited),
        "nest_actions": GAME.choice_at("nest_actions", R.nest_every_space),
        "master_thief_victims": GAME.choice_at("master_thief_victims", R.master_thief_split),
        "negative_payout": GAME.choice_at("negative_payout", R.negative_payout_paid),
        "seat_bonus_gold": [int(R.seat_gold[i]) for i in range(R.n_seat_gold)],
        "nest_spaces": nest,
        "sea_graph": {"edges": [[NODES[R.edge_a[i]], NODES[R.edge_b[i]]] for i in range(R.n_edges)]},
        "island_colours": {ISLANDS[i]: COLOURS[R.island_colour[i]] for i in range(N_ISLANDS)},
        "deck_table": decks[0],
        "seat_decks": [] if all(d == decks[0] for d in decks) else decks,
        "chest_values": [int(R.chest_values[i]) for i in range(N_ISLANDS)],
        "relic_gold": [int(R.relic_gold[i]) for i in range(N_RELICS)],
    }


def _to_dict(game, State state):
    cdef GState* s = _st(state)
    cdef GPlayer* pl
    seats = []
    for i in range(s.head.players):
        pl = &s.p[i]
        seats.append({
            "captain": int(pl.captain), "ship": NODES[pl.ship],
            "deck": [int(c) for c in pl.deck[:pl.deck_len]],
            "hand": [int(c) for c in pl.hand[:pl.hand_len]],
            "discard": [int(c) for c in pl.discard[:pl.disc_len]],
            "pirates": _pirates(pl.pirates),
            "permits_held": [v + 1 for v in range(TOP_PERMIT) if (pl.permits_held >> v) & 1],
            "permits_pool": [v + 1 for v in range(TOP_PERMIT) if (pl.permits_pool >> v) & 1],
            "seven_at_volcano": bool(pl.seven_at_volcano),
            "relic": None if pl.relic < 0 else RELICS[pl.relic],
            "island_cards": _bits(pl.islands_held, ISLANDS),
            "remembered_islands": _bits(pl.islands_remembered, ISLANDS),
            "known_chests": _bits(pl.chests_known, ISLANDS),
            "gold": {"chests": pl.gold_chests, "coins": pl.gold_coins,
                     "golden_coin": pl.gold_golden, "relic": pl.gold_relic,
                     "total": pl.gold_total},
            "golden_rank": int(pl.golden_rank), "eliminated": bool(pl.eliminated),
            "win_share": float(s.head.share[i]),
        })
    islands = []
    for i in range(N_ISLANDS):
        owner = s.chest_owner[i]
        islands.append({
            "chest": int(s.chest[i]),
            "chest_owner": None if owner == CHEST_ON_ISLAND else ("box" if owner == CHEST_BOX else int(owner)),
            "permits": [[int(s.stack_owner[i][k]), int(s.stack_value[i][k])]
                        for k in range(s.stack_len[i])],
            "pirates": _pirates(s.node_pirates[i + 1]),
        })
    return {
        "game": game.name, "players": int(s.head.players), "rules": _rules_dict(&s.rules),
        "phase": PHASES[s.phase], "current_player": int(s.head.current),
        "first_player": int(s.first_player), "turns": int(s.turns), "moves": int(s.head.moves),
        "terminal": bool(s.head.terminal), "end_reason": END_REASONS[s.head.end_reason],
        "end_trigger": _seat_or_none(s.end_trigger), "copy_target": _seat_or_none(s.copy_target),
        "nest_path": {"at": int(s.path_at), "way": WAYS[s.path_dir < 0], "left": int(s.path_left)},
        "golden_island": ISLANDS[s.golden],
        "island_deck": [ISLANDS[c] for c in s.island_deck[:s.island_deck_len]],
        "relics_free": _bits(s.relics_free, RELICS),
        "houses": _pirates(s.houses),
        "bank_gold": int(s.bank_gold),
        "bank_short": bool(s.bank_short),
        "golden_coin_owner": _seat_or_none(s.golden_coin_owner),
        "islands": islands,
        "volcanoes": {"VL": _pirates(s.node_pirates[NODE_VL]), "VU": _pirates(s.node_pirates[NODE_VU])},
        "seats": seats,
        "rng": contract.rng_to_dict(state),
    }


def _mask(values, names, path):
    """A bit mask of distinct names (a list in the state dict)."""
    m = 0
    for i, v in enumerate(values):
        k = 1 << _choice(v, names, f"{path}[{i}]")
        if m & k:
            fail(path, f"{v!r} is listed twice")
        m |= k
    return m


def _choice(value, names, path):
    return choice(value, path, names)


def _counts(obj, path):
    """Pirates per colour: {colour: count}."""
    if not isinstance(obj, dict) or set(obj) != set(COLOURS):
        fail(path, f"expected a count for each of {list(COLOURS)}, got {obj!r}")
    return [integer(obj[c], f"{path}.{c}", 0, MAX_PLAYERS) for c in COLOURS]


def _seat_or_null(top, key, players):
    v = top.get(key)
    return -1 if v is None else integer(v, top.at(key), 0, players - 1)


def _permit_mask(values, path):
    m = 0
    for i, v in enumerate(values):
        m |= 1 << (integer(v, f"{path}[{i}]", 1, TOP_PERMIT) - 1)
    if bin(m).count("1") != len(values):
        fail(path, f"a permit value is listed twice: {values!r}")
    return m


cdef _fill(GState* s, top, dict rules):
    """from_dict's Golden Island part (rules, players and rng are in place): every field of
    to_dict() through the codec, with the components checked complete (each card, island
    card, permit, pirate, chest and relic in exactly one place)."""
    cdef int players = s.head.players
    s.phase = top.choice("phase", PHASES)
    s.head.current = top.int("current_player", 0, players - 1)
    s.first_player = top.int("first_player", 0, players - 1)
    s.turns = top.int("turns", 0, INT32_MAX)
    s.head.moves = top.int("moves", 0, INT32_MAX)
    s.head.terminal = top.bool("terminal")
    s.head.end_reason = top.choice("end_reason", END_REASONS)
    if (s.head.end_reason == END_RUNNING) == bool(s.head.terminal):
        fail(top.at("end_reason"), "must be 'running' exactly while the game is not over")
    s.end_trigger = _seat_or_null(top, "end_trigger", players)
    s.copy_target = _seat_or_null(top, "copy_target", players)
    path = top.obj("nest_path")
    s.path_at = path.int("at", 0, s.rules.n_nest - 1)
    s.path_dir = -1 if path.choice("way", WAYS) else 1
    s.path_left = path.int("left", 0, s.rules.n_nest - 1)
    if s.path_left and s.phase != PH_GAMBLE:
        fail(path.at("left"), "spaces are left on the captain's path only in phase gamble")
    if s.phase == PH_COPY and s.copy_target < 0:
        fail(top.at("copy_target"), "must name a seat in phase copy")
    s.bank_gold = top.int("bank_gold", -10000, TOTAL_COINS)
    s.bank_short = top.bool("bank_short")
    s.golden_coin_owner = _seat_or_null(top, "golden_coin_owner", players)
    s.relics_free = _mask(top.list("relics_free", max_len=N_RELICS), RELICS, top.at("relics_free"))
    houses = _counts(top.get("houses"), top.at("houses"))
    for c in range(N_COLOURS):
        s.houses[c] = houses[c]
    pirates = list(houses)
    cards = _fill_island_cards(s, top)
    _fill_islands(s, top, rules, pirates)
    relics = s.relics_free
    for i, seat in enumerate(top.objs("seats", length=players)):
        relics = _fill_seat(s, i, seat, pirates, cards, relics)
    missing = [ISLANDS[i] for i in range(N_ISLANDS) if i not in cards]
    if missing:
        fail("state", f"island cards {missing} are nowhere (golden island, deck or a hand)")
    if pirates != [players] * N_COLOURS:
        fail("state", f"pirates per colour (houses, seats, islands, volcanoes) must total "
                      f"{players} each, got {dict(zip(COLOURS, pirates))}")
    if s.phase == PH_COPY:
        if s.copy_target == s.head.current:
            fail(top.at("copy_target"), "the Imitator copies an opponent, not its own seat")
        if s.p[s.copy_target].disc_len == 0:
            fail(top.at("copy_target"), f"seat {s.copy_target}'s discard pile is empty: "
                                        f"there is no card to copy")
    _check_results(s, top)


cdef _check_results(GState* s, top):
    """The end's results (section 5.2) are the engine's to compute, never taken as given: a
    running state holds none (but the coins a seat starts with); a terminal one holds exactly
    what scoring its position gives."""
    cdef GState t
    cdef int i
    memcpy(&t, s, sizeof(GState))
    t.bank_short = 0
    t.golden_coin_owner = -1
    for i in range(N_ISLANDS):
        t.chest_owner[i] = CHEST_ON_ISLAND
    for i in range(s.head.players):
        t.p[i].gold_chests = t.p[i].gold_golden = 0
        t.p[i].gold_coins = <int16_t>s.rules.seat_gold[i]  # the seat's starting coins
        t.p[i].gold_relic = t.p[i].gold_total = 0
        t.p[i].golden_rank = t.p[i].eliminated = 0
        t.head.share[i] = 0.0
    if s.head.terminal:
        if s.phase != PH_MOVE:
            fail(top.at("phase"), "a finished game is in phase 'move'")
        for i in range(s.head.players):     # the bank before the payouts (a position may
            t.bank_gold += s.p[i].gold_coins - s.rules.seat_gold[i]  # start from any bank;
                                            # seat compensation is paid beside the bank)
        t.head.terminal = 0
        finish(&t, s.head.end_reason)
    seats = top.objs("seats")
    for i in range(s.head.players):
        for key, mine, want in (
                ("gold", (s.p[i].gold_chests, s.p[i].gold_coins, s.p[i].gold_golden,
                          s.p[i].gold_relic, s.p[i].gold_total),
                 (t.p[i].gold_chests, t.p[i].gold_coins, t.p[i].gold_golden,
                  t.p[i].gold_relic, t.p[i].gold_total)),
                ("golden_rank", s.p[i].golden_rank, t.p[i].golden_rank),
                ("eliminated", s.p[i].eliminated, t.p[i].eliminated),
                ("win_share", s.head.share[i], t.head.share[i])):
            if mine != want:
                fail(seats[i].at(key), _results_text(s))
    for i in range(N_ISLANDS):
        if s.chest_owner[i] != t.chest_owner[i]:
            fail(f"{top.at('islands')}[{i}].chest_owner", _results_text(s))
    for key, mine, want in (("bank_short", s.bank_short, t.bank_short),
                            ("golden_coin_owner", s.golden_coin_owner, t.golden_coin_owner)):
        if mine != want:
            fail(top.at(key), _results_text(s))


cdef str _results_text(const GState* s):
    if s.head.terminal:
        return "differs from the scoring of this finished position (section 5.2)"
    return "a running game has no results yet: the end's scoring fills them in"


cdef dict _fill_island_cards(GState* s, top):
    """The Golden Island and the island deck; returns {card: where} for the seats' cards."""
    s.golden = top.choice("golden_island", ISLANDS)
    cards = {s.golden: "golden_island"}
    deck = top.list("island_deck", max_len=N_ISLANDS - 1)
    for i, name in enumerate(deck):
        c = _choice(name, ISLANDS, f"state.island_deck[{i}]")
        if c in cards:
            fail(f"state.island_deck[{i}]", f"{name} is also the {cards[c]}")
        cards[c] = "island_deck"
        s.island_deck[i] = c
    s.island_deck_len = len(deck)
    return cards


cdef _fill_islands(GState* s, top, dict rules, list pirates):
    """Chests, permit stacks and pirates of the treasure islands and the volcanoes."""
    cdef int players = s.head.players
    for i, isl in enumerate(top.objs("islands", length=N_ISLANDS)):
        s.chest[i] = isl.int("chest", 0, 99)
        owner = isl.get("chest_owner")
        s.chest_owner[i] = (CHEST_ON_ISLAND if owner is None else CHEST_BOX if owner == "box"
                            else integer(owner, isl.at("chest_owner"), 0, players - 1))
        stack = isl.list("permits", max_len=MAX_STACK)
        owners = set()
        for k, entry in enumerate(stack):
            where = f"{isl.at('permits')}[{k}]"
            if not isinstance(entry, list) or len(entry) != 2:
                fail(where, f"expected [seat, value], got {entry!r}")
            seat = integer(entry[0], where + "[0]", 0, players - 1)
            if seat in owners:
                fail(where, f"seat {seat} has two permits on one island")
            owners.add(seat)
            s.stack_owner[i][k] = seat
            s.stack_value[i][k] = integer(entry[1], where + "[1]", 1, TOP_PERMIT)
        s.stack_len[i] = len(stack)
        counts = _counts(isl.get("pirates"), isl.at("pirates"))
        for c in range(N_COLOURS):
            s.node_pirates[i + 1][c] = counts[c]
            pirates[c] += counts[c]
    if sorted(int(s.chest[i]) for i in range(N_ISLANDS)) != sorted(rules["chest_values"]):
        fail(top.at("islands"), "the chests must be the rule option chest_values")
    volcanoes = top.obj("volcanoes")
    for node, name in ((NODE_VL, "VL"), (NODE_VU, "VU")):
        counts = _counts(volcanoes.get(name), volcanoes.at(name))
        for c in range(N_COLOURS):
            s.node_pirates[node][c] = counts[c]
            pirates[c] += counts[c]


cdef int _fill_seat(GState* s, int i, seat, list pirates, dict cards, int relics) except -1:
    """One seat: pieces, pirate cards, pirates, permits, relic, island cards, knowledge and
    the final gold lines; returns the relics seen so far."""
    cdef GPlayer* pl = &s.p[i]
    cdef int n_cards = s.rules.n_cards[i]
    pl.captain = seat.int("captain", 0, s.rules.n_nest - 1)
    pl.ship = seat.choice("ship", NODES)
    if pl.ship != NODE_H and pl.captain != s.rules.lighthouse:
        fail(seat.path, "the ship may be away only while the captain is on the lighthouse")
    piles = {key: [integer(c, f"{seat.at(key)}[{k}]", 0, n_cards - 1)
                   for k, c in enumerate(seat.list(key, max_len=cap))]
             for key, cap in (("deck", MAX_CARDS), ("hand", MAX_HAND), ("discard", MAX_CARDS))}
    if sorted(piles["deck"] + piles["hand"] + piles["discard"]) != list(range(n_cards)):
        fail(seat.path, f"deck, hand and discard must hold each of the {n_cards} cards once")
    for k, c in enumerate(piles["deck"]):
        pl.deck[k] = c
    for k, c in enumerate(sorted(piles["hand"])):
        pl.hand[k] = c
    for k, c in enumerate(piles["discard"]):
        pl.discard[k] = c
    pl.deck_len, pl.hand_len, pl.disc_len = len(piles["deck"]), len(piles["hand"]), len(piles["discard"])
    counts = _counts(seat.get("pirates"), seat.at("pirates"))
    if sum(counts) > PIRATE_CAP:
        fail(seat.at("pirates"), f"a player holds at most {PIRATE_CAP} pirates")
    for c in range(N_COLOURS):
        pl.pirates[c] = counts[c]
        pirates[c] += counts[c]
    _fill_permits(s, i, seat)
    relic = seat.get("relic")
    pl.relic = -1 if relic is None else seat.choice("relic", RELICS)
    if pl.relic >= 0:
        if (relics >> pl.relic) & 1:
            fail(seat.at("relic"), f"{relic} is also elsewhere")
        relics |= 1 << pl.relic
    pl.islands_held = _mask(seat.list("island_cards", max_len=N_ISLANDS), ISLANDS,
                            seat.at("island_cards"))
    for c in range(N_ISLANDS):
        if (pl.islands_held >> c) & 1:
            if c in cards:
                fail(seat.at("island_cards"), f"{ISLANDS[c]} is also the {cards[c]}")
            cards[c] = f"seat {i}"
    pl.islands_remembered = pl.islands_held | _mask(
        seat.list("remembered_islands"), ISLANDS, seat.at("remembered_islands"))
    if (pl.islands_remembered >> s.golden) & 1:
        fail(seat.at("remembered_islands"), "nobody has seen the Golden Island's card")
    pl.chests_known = _mask(seat.list("known_chests"), ISLANDS, seat.at("known_chests"))
    gold = seat.obj("gold")
    pl.gold_chests, pl.gold_coins, pl.gold_golden, pl.gold_relic, pl.gold_total = (
        gold.int(k, -10000 if k in ("coins", "total") else 0, 10000)
        for k in ("chests", "coins", "golden_coin", "relic", "total"))
    pl.golden_rank = seat.int("golden_rank", 0, MAX_PLAYERS)
    pl.eliminated = seat.bool("eliminated")
    s.head.share[i] = seat.num("win_share", 0, 1)
    return relics


cdef _fill_permits(GState* s, int i, seat):
    """Permits 1..7 of seat i: hand, pool, islands (read already) and the volcano."""
    cdef GPlayer* pl = &s.p[i]
    pl.permits_held = _permit_mask(seat.list("permits_held", max_len=TOP_PERMIT), seat.at("permits_held"))
    pl.permits_pool = _permit_mask(seat.list("permits_pool", max_len=TOP_PERMIT), seat.at("permits_pool"))
    pl.seven_at_volcano = seat.bool("seven_at_volcano")
    if pl.permits_pool & (1 << (TOP_PERMIT - 1)):
        fail(seat.at("permits_pool"), "the 7 is never in the pool")
    placed = 0
    pl.placed = 0
    pl.dug = 0
    for isl in range(N_ISLANDS):
        for k in range(s.stack_len[isl]):
            if s.stack_owner[isl][k] == i:
                placed |= 1 << (s.stack_value[isl][k] - 1)
                pl.placed += 1
                pl.dug |= 1 << isl
    parts = [pl.permits_held, pl.permits_pool, placed,
             (1 << (TOP_PERMIT - 1)) if pl.seven_at_volcano else 0]
    if (sum(bin(x).count("1") for x in parts) != TOP_PERMIT
            or (parts[0] | parts[1] | parts[2] | parts[3]) != (1 << TOP_PERMIT) - 1):
        fail(seat.path, f"permits in hand, pool, on islands and at the volcano must be "
                        f"1..{TOP_PERMIT} once each")


assert len(SEAT_OUTCOMES) == N_SEAT_OUTCOMES
GoldenIslandGame.handle = engine_handle(&ENGINE, GoldenIslandGame, &_LAYOUT, sizeof(GState),
    &_LAYOUT.rules, sizeof(GRules), g_setup, g_legal, g_apply, g_scores, g_outcomes, g_heuristic,
    g_observe, g_policy, g_action_values, NULL, NULL, NULL, g_leaf_values)
GAME = GoldenIslandGame()


def set_leaf_weights(data, where="data/leaf_value.json"):
    """Puts the cut-off judgement's weights into the engine: `data` as in
    data/leaf_value.json, {"weights": {one per LEAF_FEATURES name}, "no_winner": w};
    ValueError names a missing or unknown feature or a weight that is not a finite number
    (nothing is changed then)."""
    global LEAF_NONE
    values = leaf_weight_values(data, LEAF_FEATURES, ("no_winner",), where)
    for j in range(N_LEAF):
        LEAF_W[j] = float(values[j])
    LEAF_NONE = float(values[N_LEAF])


def leaf_weights():
    """The weights in force, as set_leaf_weights takes them."""
    return {"weights": {name: LEAF_W[j] for j, name in enumerate(LEAF_FEATURES)},
            "no_winner": LEAF_NONE}


set_leaf_weights(load_data(HOME, "data/leaf_value.json"))


def leaf_features(State state):
    """Per seat, the cut-off judgement's features (in LEAF_FEATURES order) of a running game
    (benchmarks/leaf_fit.py fits the weights to them)."""
    cdef double f[N_LEAF]
    cdef GState* s = _st(state)
    cdef int k, lead = leading_placed(s)
    out = []
    for k in range(s.head.players):
        seat_features(s, k, lead, f)
        out.append([f[j] for j in range(N_LEAF)])
    return out


def fast_action_values(State state, int seat):
    """{action: value} from the engine's fast path, or None where it asks for the generic
    path (tests compare it with the generic values and with values on a seat's view)."""
    cdef int acts[MAX_LEGAL]
    cdef double vals[MAX_LEGAL]
    cdef GState* s = _st(state)
    if s.head.terminal:
        return None
    cdef int n = g_legal(s, acts)
    if not g_action_values(s, seat, acts, n, vals):
        return None
    return {acts[i]: vals[i] for i in range(n)}
