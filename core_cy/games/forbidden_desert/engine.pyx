# cython: language_level=3
"""Forbidden Desert (Matt Leacock, Gamewright 2013) on the engine contract.

Rules: ../shared/rules/forbidden_desert.md (section numbers below refer to it).  The state is
one flat C struct (`DState`, rules and data included) so that clone is a memcpy; every function
of the engine table is nogil and allocation-free.  The Python face (`ForbiddenDesertGame`) at
the bottom validates rules, packs them into the struct and converts states to and from dicts.

The game is cooperative: one team outcome (win 1 / loss 0) for every seat.  Decisions:
  PH_ACTIONS  the current player's action phase: the four actions, the adventurers' powers,
              and the team's free operations (share water, pass and play equipment).  The
              team speaks through the current player: a free operation of any pawn is an
              action of the current seat (open-information cooperative play).
              A_END_ACTIONS starts the storm phase.
  PH_STORM    the storm phase: free operations between storm cards, A_DRAW draws and
              resolves the next card (spec 4.7, 4.10: never in response to a revealed card).
  PH_PEEK     after a Meteorologist peek or a Storm Tracker: move one of the seen top cards
              to the bottom, or keep the order.
Pawns stand on tiles (not cells), so a pawn, its sand and its parts ride with its tile.
"""
from libc.string cimport memcpy, memset, memcmp
from libc.stdlib cimport abs
from libc.math cimport exp, erfc, sqrt
from libc.stdint cimport int8_t, uint8_t, int32_t, uint32_t, uint64_t
from core_cy.engine.contract cimport (Engine, GameHeader, begin_setup, end_game, State, SeatParams, Rng, rng_below, rng_next, rng_seed, rng_shuffle,
                               engine_handle, pop_top, canonical_shuffle,
                               MAX_LEGAL, POLICY_SCRATCH, POLICY_PARAMS)
from core_cy.engine import codec, contract
from core_cy.engine.actions import ActionSpace, Kind
from core_cy.engine.codec import INT32_MAX, UniqueIds, check_live, fail, integer, items, load_data
from core_cy.engine.game import options_from_data
from core_cy.agents import AgentGame, agent_spec, parse_agent, policy_params_from_data

cdef extern from "meeple_bits.h":
    int lowest_bit "meeple_lowest64"(uint64_t x) noexcept nogil

import math

ENGINE_VERSION = "1.0"

cdef enum:
    MAX_PLAYERS = 5
    N_CELLS = 25
    SIDE = 5
    N_TILES = 24
    N_ADV = 6
    N_PARTS = 4
    MAX_METER = 24
    MAX_STORM = 48
    MAX_EQ = 16
    NO_TILE = -1
    STORM_CELL = -1          # cell_tile value of the storm cell

# Tile kinds (spec 2.2).
cdef enum:
    K_CRASH = 0
    K_PAD = 1
    K_TUNNEL = 2
    K_WELL = 3
    K_MIRAGE = 4
    K_CLUE = 5
    K_GEAR = 6
    N_KINDS = 7

# Adventurers (spec 2.6), in data-file order.
cdef enum:
    ARCHEOLOGIST = 0
    CLIMBER = 1
    EXPLORER = 2
    METEOROLOGIST = 3
    NAVIGATOR = 4
    WATER_CARRIER = 5

# Equipment card types (spec 2.5).
cdef enum:
    EQ_BLASTER = 0
    EQ_JETPACK = 1
    EQ_SHIELD = 2
    EQ_SCOPE = 3
    EQ_RESERVE = 4
    EQ_THROTTLE = 5
    EQ_TRACKER = 6
    N_EQ_TYPES = 7

# Storm cards (spec 2.4).
cdef enum:
    SC_WIND = 0
    SC_PICKS_UP = 1
    SC_SUN = 2

# Part states.
cdef enum:
    P_HIDDEN = 0     # second clue not excavated yet
    P_TILE = 1       # lies on tile part_tile
    P_STORM = 2      # waits in the storm cell for the next tile that slides in (spec 4.6)
    P_HELD = 3       # picked up

cdef enum:
    PH_ACTIONS = 0
    PH_STORM = 1
    PH_PEEK = 2

cdef enum:
    END_RUNNING = 0
    END_WIN = 1
    END_THIRST = 2
    END_BURIED = 3
    END_SWEPT_AWAY = 4
    END_TURN_LIMIT = 5

cdef enum:
    ACTIONS_PER_TURN = 4       # printed rule (spec 4)
    WELL_WATER = 2             # printed rule (spec 4.4, 4.8, 2.5)
    THROTTLE_ACTIONS = 2
    NAV_STEPS = 3
    NO_PASSENGER = MAX_PLAYERS # the passenger (or companion) field of a move: nobody
    PASSENGER_SLOTS = MAX_PLAYERS + 1   # values of that field: a seat or NO_PASSENGER

# Action ids: contiguous blocks, ascending in the order legal_actions emits them; the
# encoders and decompose() below are the only arithmetic on them.
cdef enum:
    A_END_ACTIONS = 0
    A_DRAW = 1
    A_EXCAVATE = 2
    A_PICKUP = 3
    A_METEO_SKIP = 4           # Meteorologist: spend 1 action, draw 1 storm card fewer
    A_METEO_PEEK = 5           # Meteorologist: look at the top cards (spec 4.8)
    A_WC_DRAW = 6              # Water Carrier: +2 water from an excavated well
    A_TAKEOFF = 7              # only with takeoff_costs_action
    A_PEEK_KEEP = 8
    A_PEEK_BOTTOM = 9                                   # + i (i-th card from the top)
    A_MOVE = A_PEEK_BOTTOM + MAX_METER                  # pawn_move: who 0 (the mover)
    A_DIG = A_MOVE + N_CELLS * PASSENGER_SLOTS          # + cell
    A_NAV = A_DIG + N_CELLS                             # pawn_move: who = the pawn moved
    A_GIVE = A_NAV + MAX_PLAYERS * N_CELLS * PASSENGER_SLOTS    # seat_to_seat
    A_PASS = A_GIVE + MAX_PLAYERS * MAX_PLAYERS         # seat_to_seat, one block per type
    A_BLAST = A_PASS + N_EQ_TYPES * MAX_PLAYERS * MAX_PLAYERS   # seat_at_cell
    A_JET = A_BLAST + MAX_PLAYERS * N_CELLS             # pawn_move: who = the holder
    A_SHIELD = A_JET + MAX_PLAYERS * N_CELLS * PASSENGER_SLOTS  # + holder
    A_SCOPE = A_SHIELD + MAX_PLAYERS                    # seat_at_cell
    A_RESERVE = A_SCOPE + MAX_PLAYERS * N_CELLS         # + holder
    A_THROTTLE = A_RESERVE + MAX_PLAYERS                # + holder
    A_TRACKER = A_THROTTLE + MAX_PLAYERS                # + holder
    NUM_ACTIONS = A_TRACKER + MAX_PLAYERS


# The encoders of the kinds with parameters (decompose below reads them back).
cdef inline int pawn_move(int block, int who, int cell, int passenger) noexcept nogil:
    """A pawn move: block A_MOVE, A_NAV or A_JET, who the pawn moved (0 in A_MOVE: the
    mover), cell the destination, passenger a seat carried along or NO_PASSENGER."""
    return block + (who * N_CELLS + cell) * PASSENGER_SLOTS + passenger


cdef inline int seat_to_seat(int block, int giver, int receiver) noexcept nogil:
    """A_GIVE, or A_PASS + type * MAX_PLAYERS * MAX_PLAYERS."""
    return block + giver * MAX_PLAYERS + receiver


cdef inline int seat_at_cell(int block, int holder, int cell) noexcept nogil:
    """A_BLAST or A_SCOPE."""
    return block + holder * N_CELLS + cell


ctypedef struct DAction:
    int32_t block          # the kind: the first id of its block (A_*)
    int32_t who            # the pawn moved (A_NAV, A_JET), the giver, the card's holder
    int32_t cell           # destination or target cell
    int32_t other          # passenger or companion, receiver, the peeked card's depth
    int32_t typ            # the equipment type passed (A_PASS)


cdef inline DAction decompose(int a) noexcept nogil:
    """The kind and parameters of action id a (Pgx's _decompose_action): apply and the
    search's apply read actions only through it."""
    cdef DAction x
    cdef int r
    x.block = a
    x.who = x.cell = x.other = x.typ = 0
    if a < A_PEEK_BOTTOM:
        return x                            # one id per kind
    if a < A_MOVE:
        x.block = A_PEEK_BOTTOM
        x.other = a - A_PEEK_BOTTOM
        return x
    x.block = (A_MOVE if a < A_DIG else A_DIG if a < A_NAV else A_NAV if a < A_GIVE
               else A_GIVE if a < A_PASS else A_PASS if a < A_BLAST else A_BLAST if a < A_JET
               else A_JET if a < A_SHIELD else A_SHIELD if a < A_SCOPE
               else A_SCOPE if a < A_RESERVE else A_RESERVE if a < A_THROTTLE
               else A_THROTTLE if a < A_TRACKER else A_TRACKER)
    r = a - x.block
    if x.block == A_MOVE or x.block == A_NAV or x.block == A_JET:
        x.who = r // (N_CELLS * PASSENGER_SLOTS)
        x.cell = (r // PASSENGER_SLOTS) % N_CELLS
        x.other = r % PASSENGER_SLOTS
    elif x.block == A_DIG:
        x.cell = r
    elif x.block == A_GIVE or x.block == A_PASS:
        x.typ = r // (MAX_PLAYERS * MAX_PLAYERS)
        x.who = (r // MAX_PLAYERS) % MAX_PLAYERS
        x.other = r % MAX_PLAYERS
    elif x.block == A_BLAST or x.block == A_SCOPE:
        x.who = r // N_CELLS
        x.cell = r % N_CELLS
    else:
        x.who = r                           # a holder's card
    return x


ctypedef struct StormCard:
    uint8_t kind
    uint8_t dir                # 0 N, 1 E, 2 S, 3 W: the direction the tiles slide
    uint8_t strength

# The parameters of the search policies (planner.pxi), by name: the layout of the policy
# parameter block Engine.policy receives (agent parameters, declared with their defaults in
# agent_params.toml in this order; checked at import).  Every field is a double.
ctypedef struct SearchWeights:
    double part_held           # per part picked up
    double part_located        # per part lying on a tile
    double part_in_storm       # per part waiting in the storm cell
    double clue_excavated      # per excavated clue tile
    double other_excavated     # per other excavated tile
    double unseen_dug          # a hidden non-water tile excavated in the search (unseen face)
    double meteo_held          # per storm card the Meteorologist holds back
    double carrier_water       # per unit of the Water Carrier's water (he shares it)
    double shade_when_dry      # a pawn at 1 water or less in shade
    double buried              # per buried pawn (subtracted)
    double dist_work           # per step from a pawn to the nearest work (subtracted)
    double dist_pad            # the same to the Launch Pad once all parts are held
    double thirst_dist_water   # a thirsty pawn's distance to water, per missing unit
    double sand                # per sand marker on the board (subtracted)
    double blocked             # per blocked tile (subtracted)
    double water_scale         # a pawn's water, on the WATER_VALUE curve
    double drop_tile_dug       # a hidden water-drop tile excavated in the search
    double carrier_well_extra  # water the Water Carrier counts more on an excavated well (int)
    double thirst_risk         # chance of a thirst loss before the acting pawn acts again
    double sand_risk           # chance that the round's sand exhausts the supply
    double meter_risk          # chance that the meter reaches the skull
    double blaster_held        # per Dune Blaster held
    double jetpack_held        # per Jet Pack held
    double action_left         # beam order: per action still left (cards cost none)
    double endgame_scale       # all parts held: a sure takeoff's worth in actions (endgame_eval)
    double team_round          # team_search: a line's score counts its round's end this much
    double line_sharing        # search lines share water as the team does after each action (0: off)
    # team_search's widths (whole numbers, bounded by SEARCH_WIDTH_LIMITS):
    double team_beam           # the acting pawn's beam
    double team_lines          # its best lines each played out for the rest of the round
    double team_reply_beam     # the beam of each teammate's searched turn in that round

# Yes/no readings of rules the spec leaves open (ASSUMPTIONS): each field is the bool rule
# option of the same name, so pack and _rules_of copy them by name (Cython converts the
# struct to and from a dict of its fields).
ctypedef struct DSwitches:
    bint jetpack_when_buried
    bint navigator_can_move_buried
    bint takeoff_costs_action
    bint tunnel_shade_requires_unblocked
    bint climber_hops_blocked_tunnels

ctypedef struct DRules:
    int32_t meter_len          # ticks before the skull for this player count
    int32_t start_index        # difficulty
    int32_t n_storm
    int32_t n_eq
    int32_t sand_total
    int32_t storm_start        # cell
    int32_t discard_end_of_phase   # spec 4.7 storm_discard_timing (its choice index: 1)
    int32_t shield_anchor_tile # spec 4.10 solar_shield_anchor
    DSwitches switches         # yes/no readings of the spec (ASSUMPTIONS), by option name
    int32_t tiebreak_lowest_seat   # spec 3.6 first player among the thirstiest (choice index 1)
    int32_t roles_fixed
    int32_t max_turns          # simulator safety
    int32_t max_free_ops       # simulator safety: free operations per turn
    int32_t known_kinds        # bit k: kind k is recognisable from the desert side
    int32_t water_drop         # wells and the mirage show a water drop on the desert side
    int8_t roles[MAX_PLAYERS]
    uint8_t meter[MAX_METER]
    uint8_t adv_water[N_ADV]
    uint8_t start_sand[N_CELLS]
    uint8_t tile_kind[N_TILES]
    uint8_t tile_gear[N_TILES]
    int8_t tile_clue[N_TILES]  # part*2 + axis (0 row, 1 column), or -1
    StormCard storm[MAX_STORM]
    uint8_t eq_type[MAX_EQ]

ctypedef struct DState:
    GameHeader head               # rng, players, current, terminal, moves, end reason, shares
    DRules rules
    int32_t phase
    int32_t return_phase       # the phase a peek returns to
    int32_t storm              # the storm's cell
    int32_t supply             # sand markers off the board
    int32_t meter_index
    int32_t actions_left
    int32_t meteo_reduction
    int32_t storm_left         # cards still to draw in this storm phase
    int32_t free_ops
    int32_t draw_len           # storm draw pile; the top is draw[draw_len - 1]
    int32_t discard_len
    int32_t limbo_len          # cards drawn this storm phase, not yet discarded
    int32_t deck_known         # top cards of the draw pile the team has seen
    int32_t peek_n             # cards seen by the pending peek
    int32_t eq_len             # equipment draw pile; top is eq_deck[eq_len - 1]
    int32_t turns
    int8_t cell_tile[N_CELLS]
    int8_t tile_cell[N_TILES]
    uint8_t kind[N_TILES]      # per tile id (hidden while unexcavated: observe re-deals it)
    uint8_t gear[N_TILES]
    int8_t clue[N_TILES]
    uint8_t sand[N_TILES]
    uint8_t excavated[N_TILES]
    uint8_t known[N_TILES]     # underside seen with a Terrascope
    int8_t role[MAX_PLAYERS]
    int8_t water[MAX_PLAYERS]
    int8_t pawn_tile[MAX_PLAYERS]
    uint8_t shield[MAX_PLAYERS]      # a Solar Shield played by this seat is active
    int8_t shield_tile[MAX_PLAYERS]  # with anchor=tile: the tile it protects
    uint8_t part_state[N_PARTS]
    int8_t part_tile[N_PARTS]
    int8_t part_holder[N_PARTS]
    uint8_t draw[MAX_STORM]
    uint8_t discard[MAX_STORM]
    uint8_t limbo[MAX_STORM]
    uint8_t eq_deck[MAX_EQ]
    int8_t eq_owner[MAX_EQ]    # -1 in the deck, -2 used (out of the game), else a seat

cdef Engine ENGINE       # the engine table, filled at the end of the module (engine_handle)
cdef DState _LAYOUT      # one instance, to read where the rules are

cdef enum:
    EQ_IN_DECK = -1
    EQ_USED = -2



# ---------------------------------------------------------------- geometry

cdef int DR[8]
cdef int DC[8]
# N, E, S, W, then the diagonals NE, SE, SW, NW.
DR[:] = [-1, 0, 1, 0, -1, 1, 1, -1]
DC[:] = [0, 1, 0, -1, 1, 1, -1, -1]


cdef inline int step_cell(int cell, int d) noexcept nogil:
    """The cell one step in direction d (0..7) from cell, or -1 off the board."""
    cdef int r = cell // SIDE + DR[d], c = cell % SIDE + DC[d]
    if r < 0 or r >= SIDE or c < 0 or c >= SIDE:
        return -1
    return r * SIDE + c


cdef inline bint adjacent(int a, int b, bint diag) noexcept nogil:
    cdef int dr = a // SIDE - b // SIDE, dc = a % SIDE - b % SIDE
    if dr < 0:
        dr = -dr
    if dc < 0:
        dc = -dc
    if diag:
        return (dr | dc) != 0 and dr <= 1 and dc <= 1
    return dr + dc == 1


# ---------------------------------------------------------------- predicates (spec 4.1)

cdef inline bint blocked(const DState* s, int t) noexcept nogil:
    return s.sand[t] >= 2


cdef inline bint climber_on(const DState* s, int t) noexcept nogil:
    cdef int p
    for p in range(s.head.players):
        if s.role[p] == CLIMBER and s.pawn_tile[p] == t:
            return True
    return False


cdef inline bint buried(const DState* s, int p) noexcept nogil:
    """On a blocked tile without the Climber there (the Climber is never buried)."""
    cdef int t = s.pawn_tile[p]
    return s.role[p] != CLIMBER and blocked(s, t) and not climber_on(s, t)


cdef inline bint can_enter(const DState* s, int p, int t) noexcept nogil:
    return t >= 0 and (s.role[p] == CLIMBER or not blocked(s, t))


cdef inline bint tunnel_open(const DState* s, int p, int t) noexcept nogil:
    """An excavated tunnel usable for a hop by pawn p: unblocked (seed, spec 4.2), or blocked
    for the Climber with rule option climber_hops_blocked_tunnels."""
    return s.kind[t] == K_TUNNEL and s.excavated[t] and (
        not blocked(s, t)
        or (s.role[p] == CLIMBER and s.rules.switches.climber_hops_blocked_tunnels))


cdef uint32_t step_mask(const DState* s, int p, int from_cell) noexcept nogil:
    """Cells pawn p may step to from from_cell in one move (bit c: cell c): adjacent
    (Explorer: diagonal too) enterable tiles and tunnel hops (spec 4.2)."""
    cdef uint32_t seen = 0
    cdef int d, c, t, nd = 8 if s.role[p] == EXPLORER else 4
    cdef int from_t = s.cell_tile[from_cell]
    for d in range(nd):
        c = step_cell(from_cell, d)
        if c >= 0 and can_enter(s, p, s.cell_tile[c]):
            seen |= 1u << c
    if from_t >= 0 and tunnel_open(s, p, from_t):
        for t in range(N_TILES):
            if t != from_t and tunnel_open(s, p, t):
                seen |= 1u << s.tile_cell[t]
    return seen


cdef int step_targets(const DState* s, int p, int from_cell, int* out) noexcept nogil:
    """step_mask's cells, ascending."""
    cdef uint32_t seen = step_mask(s, p, from_cell)
    cdef int n = 0
    while seen:
        out[n] = lowest_bit(seen)
        seen &= seen - 1
        n += 1
    return n


cdef int nav_targets(const DState* s, int p, bint* reach) noexcept nogil:
    """Cells the Navigator can move pawn p to: 1..3 legal steps for that pawn (spec 4.8)."""
    cdef int frontier[N_CELLS]
    cdef int nxt[N_CELLS]
    cdef int steps[N_CELLS]
    cdef int nf = 1, nn, i, j, k, c, start = s.tile_cell[s.pawn_tile[p]], count = 0
    cdef bint seen[N_CELLS]
    memset(seen, 0, sizeof(seen))
    memset(reach, 0, N_CELLS * sizeof(bint))
    frontier[0] = start
    seen[start] = True
    for i in range(NAV_STEPS):
        nn = 0
        for j in range(nf):
            k = step_targets(s, p, frontier[j], steps)
            for c in range(k):
                if not seen[steps[c]]:
                    seen[steps[c]] = True
                    reach[steps[c]] = True
                    nxt[nn] = steps[c]
                    nn += 1
                    count += 1
        for j in range(nn):
            frontier[j] = nxt[j]
        nf = nn
    return count


cdef inline int held_card(const DState* s, int seat, int typ) noexcept nogil:
    """The lowest-numbered equipment card of type typ held by seat, or -1."""
    cdef int i
    for i in range(s.rules.n_eq):
        if s.eq_owner[i] == seat and s.rules.eq_type[i] == typ:
            return i
    return -1


cdef inline void held_types(const DState* s, int* held) noexcept nogil:
    """held[seat]: bit typ set when the seat holds an equipment card of type typ (exactly
    held_card(s, seat, typ) >= 0), found in one pass over the cards: the free-operation
    listing asks this about every seat and type on every legal call."""
    cdef int i, owner
    memset(held, 0, MAX_PLAYERS * sizeof(held[0]))
    for i in range(s.rules.n_eq):
        owner = s.eq_owner[i]
        if owner >= 0:
            held[owner] |= 1 << s.rules.eq_type[i]


cdef inline bint holds(const int* held, int seat, int typ) noexcept nogil:
    """Whether held_types says that seat holds a card of type typ."""
    return (held[seat] >> typ) & 1


cdef inline bint water_drop_shown(const DState* s, int t) noexcept nogil:
    """Seed: "3 desert tiles carry a water drop": the team sees where the 3 water tiles
    are before excavating, not which of them is the mirage (rule option water_drop_desert_side)."""
    return s.rules.water_drop and (s.kind[t] == K_WELL or s.kind[t] == K_MIRAGE)


cdef inline int draw_value(const DState* s) noexcept nogil:
    if s.meter_index >= s.rules.meter_len:
        return 0
    return s.rules.meter[s.meter_index]


cdef inline int pad_tile(const DState* s) noexcept nogil:
    cdef int t
    for t in range(N_TILES):
        if s.kind[t] == K_PAD:
            return t
    return -1


cdef bint win_condition(const DState* s) noexcept nogil:
    """Spec 5: all parts picked up, the Launch Pad excavated and unblocked, every pawn on it."""
    cdef int i, t = pad_tile(s)
    if t < 0 or not s.excavated[t] or blocked(s, t):
        return False
    for i in range(N_PARTS):
        if s.part_state[i] != P_HELD:
            return False
    for i in range(s.head.players):
        if s.pawn_tile[i] != t:
            return False
    return True


cdef inline bint shaded(const DState* s, int p) noexcept nogil:
    """Spec 4.7 Sun Beats Down: an excavated tunnel or an active Solar Shield protects."""
    cdef int t = s.pawn_tile[p], q
    if s.kind[t] == K_TUNNEL and s.excavated[t] and not (
            s.rules.switches.tunnel_shade_requires_unblocked and blocked(s, t)):
        return True
    for q in range(s.head.players):
        if s.shield[q]:
            if s.rules.shield_anchor_tile:
                if s.shield_tile[q] == t:
                    return True
            elif s.pawn_tile[q] == t:
                return True
    return False


# ---------------------------------------------------------------- setup (spec 3)

cdef void d_setup(void* vs, const void* rules, int players, const SeatParams* seats,
                  const Rng* rng) noexcept nogil:
    cdef DState* s = <DState*>vs
    cdef uint8_t perm[N_TILES]
    cdef uint8_t roles[N_ADV]
    cdef int i, c, k = 0, t, crash = 0, low = 99, ties = 0
    begin_setup(&ENGINE, s, rules, players, rng)
    for t in range(N_TILES):
        s.kind[t] = s.rules.tile_kind[t]
        s.gear[t] = s.rules.tile_gear[t]
        s.clue[t] = s.rules.tile_clue[t]
        perm[t] = <uint8_t>t
        if s.kind[t] == K_CRASH:
            crash = t
    # 1. The storm in the centre, the tiles shuffled into the other cells.
    rng_shuffle(&s.head.rng, perm, N_TILES, sizeof(perm[0]))
    s.storm = s.rules.storm_start
    for c in range(N_CELLS):
        if c == s.storm:
            s.cell_tile[c] = STORM_CELL
        else:
            s.cell_tile[c] = <int8_t>perm[k]
            s.tile_cell[perm[k]] = <int8_t>c
            k += 1
    # 2. The starting sand diamond.
    s.supply = s.rules.sand_total
    for c in range(N_CELLS):
        if s.rules.start_sand[c] and s.cell_tile[c] >= 0:
            s.sand[s.cell_tile[c]] += 1
            s.supply -= 1
    # 3. Parts off the board; the meter at the difficulty's tick.
    for i in range(N_PARTS):
        s.part_tile[i] = NO_TILE
        s.part_holder[i] = -1
    s.meter_index = s.rules.start_index
    # 4. Both decks shuffled.
    for i in range(s.rules.n_storm):
        s.draw[i] = <uint8_t>i
    s.draw_len = s.rules.n_storm
    rng_shuffle(&s.head.rng, s.draw, s.draw_len, sizeof(s.draw[0]))
    for i in range(s.rules.n_eq):
        s.eq_deck[i] = <uint8_t>i
        s.eq_owner[i] = EQ_IN_DECK
    s.eq_len = s.rules.n_eq
    rng_shuffle(&s.head.rng, s.eq_deck, s.eq_len, sizeof(s.eq_deck[0]))
    # 5. Adventurers dealt at random (or fixed), full water, on the crash site.
    for i in range(N_ADV):
        roles[i] = <uint8_t>i
    if not s.rules.roles_fixed:
        rng_shuffle(&s.head.rng, roles, N_ADV, sizeof(roles[0]))
    for i in range(MAX_PLAYERS):
        s.shield_tile[i] = NO_TILE
        s.role[i] = -1
        s.pawn_tile[i] = NO_TILE
    for i in range(players):
        s.role[i] = s.rules.roles[i] if s.rules.roles_fixed else <int8_t>roles[i]
        s.water[i] = <int8_t>s.rules.adv_water[s.role[i]]
        s.pawn_tile[i] = <int8_t>crash
    # 6. The thirstiest player starts (ties: at random, or the lowest seat).
    for i in range(players):
        if s.water[i] < low:
            low = s.water[i]
    for i in range(players):
        if s.water[i] == low:
            ties += 1
    k = rng_below(&s.head.rng, ties) if (not s.rules.tiebreak_lowest_seat and ties > 1) else 0
    for i in range(players):
        if s.water[i] == low:
            if k == 0:
                s.head.current = i
                break
            k -= 1
    s.phase = PH_ACTIONS
    s.actions_left = ACTIONS_PER_TURN


# ---------------------------------------------------------------- legal actions

cdef inline bint can_act(const DState* s) noexcept nogil:
    return s.phase == PH_ACTIONS and s.actions_left > 0


cdef inline bint free_ok(const DState* s) noexcept nogil:
    return s.phase != PH_PEEK and s.free_ops < s.rules.max_free_ops


cdef inline bint can_give_water(const DState* s, int g, int r) noexcept nogil:
    """Whether g may give r one water (a free operation, spec 4.9 and 4.8): from the same tile,
    or as the Water Carrier to an orthogonally adjacent one, while g has water and r has room
    (legal_free and the search lines' sharing both ask this)."""
    return (g != r and s.water[g] > 0 and s.water[r] < s.rules.adv_water[s.role[r]] and (
        s.pawn_tile[g] == s.pawn_tile[r] or (s.role[g] == WATER_CARRIER and adjacent(
            s.tile_cell[s.pawn_tile[g]], s.tile_cell[s.pawn_tile[r]], False))))


# One condition per action kind, asked by the legal list and by the per-action checks alike.
cdef inline bint sand_in_reach(const DState* s, int c, int tc, bint bur, bint diag) noexcept nogil:
    """Remove Sand / Dune Blaster at cell c from a pawn on cell tc: its own tile, or (not
    buried) an adjacent one (diag: the Explorer's diagonals too), with sand on it."""
    cdef int t = s.cell_tile[c]
    return t >= 0 and s.sand[t] > 0 and (c == tc or (not bur and adjacent(c, tc, diag)))


cdef inline bint jet_target(const DState* s, int h, int t) noexcept nogil:
    """Whether seat h's Jet Pack may fly to tile t (any unblocked tile but its own)."""
    return t >= 0 and not blocked(s, t) and t != s.pawn_tile[h]


cdef inline bint jet_may_fly(const DState* s, int h) noexcept nogil:
    return not buried(s, h) or s.rules.switches.jetpack_when_buried


cdef inline bint scope_target(const DState* s, int t) noexcept nogil:
    """Whether the Solar Scope may look at tile t (unexcavated, its kind not yet known)."""
    return (t >= 0 and not s.excavated[t] and not s.known[t]
            and not (s.rules.known_kinds >> s.kind[t]) & 1)


cdef inline bint may_excavate(const DState* s, int t) noexcept nogil:
    return not s.excavated[t] and s.sand[t] == 0


cdef inline bint may_pick_up(const DState* s, int t) noexcept nogil:
    """Whether a part lies on tile t, excavated and unblocked."""
    cdef int i
    if not s.excavated[t] or blocked(s, t):
        return False
    for i in range(N_PARTS):
        if s.part_state[i] == P_TILE and s.part_tile[i] == t:
            return True
    return False


cdef inline bint carrier_may_draw(const DState* s, int p, int t) noexcept nogil:
    """The Water Carrier's draw at an excavated, unblocked well, below its full water."""
    return (s.role[p] == WATER_CARRIER and s.kind[t] == K_WELL and s.excavated[t]
            and not blocked(s, t) and s.water[p] < s.rules.adv_water[WATER_CARRIER])


cdef inline bint may_take_off(const DState* s) noexcept nogil:
    return s.rules.switches.takeoff_costs_action and win_condition(s)


cdef inline bint navigator_may_move(const DState* s, int p, int q) noexcept nogil:
    """Whether the Navigator p may move seat q's pawn (another pawn, not buried unless the
    rules allow it)."""
    return q != p and (not buried(s, q) or s.rules.switches.navigator_can_move_buried)


cdef int legal_free(const DState* s, int* out, int n) noexcept nogil:
    """Free operations (spec 4.9, 4.10, 4.8 Water Carrier), ascending by action id."""
    cdef int g, r, typ, h, c, tc, t, k, comp, d
    cdef int held[MAX_PLAYERS]
    cdef bint diag
    held_types(s, held)
    for g in range(s.head.players):
        for r in range(s.head.players):
            if can_give_water(s, g, r):
                out[n] = seat_to_seat(A_GIVE, g, r)
                n += 1
    # Pass equipment to a pawn on the same tile.
    for typ in range(N_EQ_TYPES):
        for g in range(s.head.players):
            if not holds(held, g, typ):
                continue
            for r in range(s.head.players):
                if r != g and s.pawn_tile[g] == s.pawn_tile[r]:
                    out[n] = seat_to_seat(A_PASS + typ * MAX_PLAYERS * MAX_PLAYERS, g, r)
                    n += 1
    # Dune Blaster: own tile or a neighbour with sand (Explorer: diagonal too).
    for h in range(s.head.players):
        if not holds(held, h, EQ_BLASTER):
            continue
        tc = s.tile_cell[s.pawn_tile[h]]
        diag = s.role[h] == EXPLORER
        for c in range(N_CELLS):
            if sand_in_reach(s, c, tc, False, diag):
                out[n] = seat_at_cell(A_BLAST, h, c)
                n += 1
    # Jet Pack: to any unblocked tile, maybe with one pawn from the start tile.
    for h in range(s.head.players):
        if not holds(held, h, EQ_JETPACK):
            continue
        if not jet_may_fly(s, h):
            continue
        for c in range(N_CELLS):
            if not jet_target(s, h, s.cell_tile[c]):
                continue
            for comp in range(s.head.players):
                if comp != h and s.pawn_tile[comp] == s.pawn_tile[h]:
                    out[n] = pawn_move(A_JET, h, c, comp)
                    n += 1
            out[n] = pawn_move(A_JET, h, c, NO_PASSENGER)
            n += 1
    for h in range(s.head.players):
        if holds(held, h, EQ_SHIELD):
            out[n] = A_SHIELD + h
            n += 1
    for h in range(s.head.players):
        if not holds(held, h, EQ_SCOPE):
            continue
        for c in range(N_CELLS):
            if scope_target(s, s.cell_tile[c]):
                out[n] = seat_at_cell(A_SCOPE, h, c)
                n += 1
    for h in range(s.head.players):
        if holds(held, h, EQ_RESERVE):
            out[n] = A_RESERVE + h
            n += 1
    # Time Throttle: only on the holder's own turn, in the action phase (spec 4.10).
    if s.phase == PH_ACTIONS and holds(held, s.head.current, EQ_THROTTLE):
        out[n] = A_THROTTLE + s.head.current
        n += 1
    for h in range(s.head.players):
        if holds(held, h, EQ_TRACKER) and s.draw_len > 0:
            out[n] = A_TRACKER + h
            n += 1
    return n


cdef bint free_legal(const DState* s, const int* held, int a) noexcept nogil:
    """Whether free operation a (an id from A_GIVE on) is legal in s: legal_free's
    conditions asked of one id (the planners ask a few ids at every move); held:
    held_types(s).  Exactly a's membership in d_legal(s) (tests)."""
    cdef DAction x = decompose(a)
    cdef int h = x.who, players = s.head.players, t, tc
    if s.head.terminal or not free_ok(s) or a < A_GIVE or a >= NUM_ACTIONS or h >= players:
        return False
    if x.block == A_GIVE:
        return x.other < players and can_give_water(s, h, x.other)
    if x.block == A_PASS:
        return (x.other < players and x.other != h and s.pawn_tile[h] == s.pawn_tile[x.other]
                and holds(held, h, x.typ))
    if x.block == A_BLAST:
        return holds(held, h, EQ_BLASTER) and sand_in_reach(
            s, x.cell, s.tile_cell[s.pawn_tile[h]], False, s.role[h] == EXPLORER)
    if x.block == A_JET:
        if (not holds(held, h, EQ_JETPACK) or not jet_target(s, h, s.cell_tile[x.cell])
                or not jet_may_fly(s, h)):
            return False
        return x.other == NO_PASSENGER or (x.other < players and x.other != h
                                           and s.pawn_tile[x.other] == s.pawn_tile[h])
    if x.block == A_SHIELD:
        return holds(held, h, EQ_SHIELD)
    if x.block == A_SCOPE:
        return holds(held, h, EQ_SCOPE) and scope_target(s, s.cell_tile[x.cell])
    if x.block == A_RESERVE:
        return holds(held, h, EQ_RESERVE)
    if x.block == A_THROTTLE:
        return (s.phase == PH_ACTIONS and h == s.head.current
                and holds(held, h, EQ_THROTTLE))
    return holds(held, h, EQ_TRACKER) and s.draw_len > 0     # A_TRACKER


cdef inline bint may_carry(const DState* s, int mover, int q) noexcept nogil:
    """Whether a move of `mover` may take seat q along (legal_acts' passenger rule): nobody,
    or (the mover a Climber) another pawn on the mover's tile."""
    return q == NO_PASSENGER or (q < s.head.players and s.role[mover] == CLIMBER and q != mover
                                 and s.pawn_tile[q] == s.pawn_tile[mover])


cdef bint act_legal(const DState* s, uint32_t steps, int a) noexcept nogil:
    """Whether action a (an id below A_GIVE) is legal in s: legal_acts' conditions asked of
    one id (the planners ask a few at every move); steps: step_mask of the acting pawn from
    its cell.  Exactly a's membership in d_legal(s) (tests)."""
    cdef DAction x
    cdef int p = s.head.current, t, tc, q, i
    cdef bint bur
    cdef bint reach[N_CELLS]
    if s.head.terminal or a < 0 or a >= A_GIVE:
        return False
    if s.phase == PH_PEEK:
        return a == A_PEEK_KEEP or A_PEEK_BOTTOM <= a < A_PEEK_BOTTOM + s.peek_n
    if s.phase == PH_STORM:
        return a == A_DRAW
    if a == A_END_ACTIONS:
        return True
    if not can_act(s):
        return False
    t = s.pawn_tile[p]
    tc = s.tile_cell[t]
    bur = buried(s, p)
    x = decompose(a)
    if x.block == A_DIG:
        return sand_in_reach(s, x.cell, tc, bur, s.role[p] == EXPLORER)
    if bur:
        return False
    if a == A_EXCAVATE:
        return may_excavate(s, t)
    if a == A_PICKUP:
        return may_pick_up(s, t)
    if a == A_METEO_SKIP:
        return s.role[p] == METEOROLOGIST and s.meteo_reduction < draw_value(s)
    if a == A_METEO_PEEK:
        return s.role[p] == METEOROLOGIST and s.draw_len > 0
    if a == A_WC_DRAW:
        return carrier_may_draw(s, p, t)
    if a == A_TAKEOFF:
        return may_take_off(s)
    if x.block == A_MOVE:
        return (steps >> x.cell) & 1 and may_carry(s, p, x.other)
    if x.block == A_NAV:
        q = x.who
        if (s.role[p] != NAVIGATOR or q >= s.head.players or not navigator_may_move(s, p, q)
                or not may_carry(s, q, x.other)):
            return False
        return nav_targets(s, q, reach) > 0 and reach[x.cell]
    return False                # A_DRAW, the peeks: not in the action phase


cdef int legal_acts(const DState* s, int* out) noexcept nogil:
    """The legal actions but the free operations (d_legal lists those after them),
    ascending by action id."""
    cdef int n = 0, p = s.head.current, t, c, i, q, k, tc, nd, d
    cdef int steps[N_CELLS]
    cdef bint reach[N_CELLS]
    cdef bint bur, act
    if s.head.terminal:
        return 0
    if s.phase == PH_PEEK:
        out[0] = A_PEEK_KEEP
        for i in range(s.peek_n):
            out[1 + i] = A_PEEK_BOTTOM + i
        return 1 + s.peek_n
    if s.phase == PH_STORM:
        out[0] = A_DRAW
        return 1
    t = s.pawn_tile[p]
    tc = s.tile_cell[t]
    bur = buried(s, p)
    act = can_act(s)
    out[n] = A_END_ACTIONS
    n += 1
    if act and not bur:
        if may_excavate(s, t):
            out[n] = A_EXCAVATE
            n += 1
        if may_pick_up(s, t):
            out[n] = A_PICKUP
            n += 1
        if s.role[p] == METEOROLOGIST:
            if s.meteo_reduction < draw_value(s):
                out[n] = A_METEO_SKIP
                n += 1
            if s.draw_len > 0:
                out[n] = A_METEO_PEEK
                n += 1
        if carrier_may_draw(s, p, t):
            out[n] = A_WC_DRAW
            n += 1
        if may_take_off(s):
            out[n] = A_TAKEOFF
            n += 1
        k = step_targets(s, p, tc, steps)
        for i in range(k):
            for q in range(PASSENGER_SLOTS):
                if may_carry(s, p, q):
                    out[n] = pawn_move(A_MOVE, 0, steps[i], q)
                    n += 1
    if act:
        # Remove Sand: own tile, or (not buried) an adjacent tile (Explorer: diagonal).
        for c in range(N_CELLS):
            if sand_in_reach(s, c, tc, bur, s.role[p] == EXPLORER):
                out[n] = A_DIG + c
                n += 1
    if act and not bur and s.role[p] == NAVIGATOR:
        for q in range(s.head.players):
            if not navigator_may_move(s, p, q) or nav_targets(s, q, reach) == 0:
                continue
            for c in range(N_CELLS):
                if not reach[c]:
                    continue
                for i in range(PASSENGER_SLOTS):
                    if may_carry(s, q, i):
                        out[n] = pawn_move(A_NAV, q, c, i)
                        n += 1
    return n


cdef int d_legal(const void* vs, int* out) noexcept nogil:
    cdef const DState* s = <const DState*>vs
    cdef int n = legal_acts(s, out)
    if not s.head.terminal and free_ok(s):
        n = legal_free(s, out, n)
    return n


# ---------------------------------------------------------------- effects

cdef inline void gain_water(DState* s, int p, int amount) noexcept nogil:
    cdef int w = s.water[p] + amount, cap = s.rules.adv_water[s.role[p]]
    s.water[p] = <int8_t>(cap if w > cap else w)


cdef void draw_equipment(DState* s, int seat) noexcept nogil:
    """Spec 4.4: the acting player draws the top equipment card (nothing if none left)."""
    cdef int card = pop_top(s.eq_deck, &s.eq_len)
    if card >= 0:
        s.eq_owner[card] = <int8_t>seat


cdef void place_part(DState* s, int part) noexcept nogil:
    """Spec 4.6: once both clues of a part are excavated, the part appears where the ROW
    clue's row meets the COLUMN clue's column (positions taken now, A5)."""
    cdef int t, row = -1, col = -1, cell
    for t in range(N_TILES):
        if s.kind[t] == K_CLUE and s.clue[t] // 2 == part:
            if not s.excavated[t]:
                return
            if s.clue[t] % 2 == 0:
                row = s.tile_cell[t] // SIDE
            else:
                col = s.tile_cell[t] % SIDE
    if row < 0 or col < 0:
        return
    cell = row * SIDE + col
    if s.cell_tile[cell] == STORM_CELL:
        s.part_state[part] = P_STORM
    else:
        s.part_state[part] = P_TILE
        s.part_tile[part] = s.cell_tile[cell]


cdef void excavate(DState* s, int p) noexcept nogil:
    cdef int t = s.pawn_tile[p], q
    s.excavated[t] = 1
    s.known[t] = 0          # no longer hidden: the Terrascope mark is moot
    if s.kind[t] == K_WELL:
        for q in range(s.head.players):
            if s.pawn_tile[q] == t:
                gain_water(s, q, WELL_WATER)
    elif s.kind[t] == K_CLUE:
        place_part(s, s.clue[t] // 2)
    if s.gear[t]:
        draw_equipment(s, p)


cdef inline void remove_sand(DState* s, int t, int amount) noexcept nogil:
    if amount > s.sand[t]:
        amount = s.sand[t]
    s.sand[t] -= amount
    s.supply += amount


cdef inline void move_pawn(DState* s, int p, int cell, int passenger) noexcept nogil:
    cdef int t = s.cell_tile[cell]
    if passenger != NO_PASSENGER:
        s.pawn_tile[passenger] = <int8_t>t
    s.pawn_tile[p] = <int8_t>t


cdef inline void use_card(DState* s, int seat, int typ) noexcept nogil:
    s.eq_owner[held_card(s, seat, typ)] = EQ_USED


cdef void start_peek(DState* s) noexcept nogil:
    """Meteorologist or Storm Tracker: see the top draw_value cards (fewer if the pile is
    short; no reshuffle for a peek, spec 4.8 ASSUMPTION)."""
    cdef int n = draw_value(s)
    if n > s.draw_len:
        n = s.draw_len
    if n == 0:
        return
    s.peek_n = n
    if s.deck_known < n:
        s.deck_known = n
    s.return_phase = s.phase
    s.phase = PH_PEEK


cdef void peek_to_bottom(DState* s, int i) noexcept nogil:
    """Moves the i-th card from the top of the draw pile to the bottom."""
    cdef int pos = s.draw_len - 1 - i, j
    cdef uint8_t card = s.draw[pos]
    for j in range(pos, 0, -1):
        s.draw[j] = s.draw[j - 1]
    s.draw[0] = card
    # The other seen cards are still known on top; this one is forgotten at the bottom.
    s.deck_known -= 1


cdef void discard_limbo(DState* s) noexcept nogil:
    cdef int i
    for i in range(s.limbo_len):
        s.discard[s.discard_len] = s.limbo[i]
        s.discard_len += 1
        s.limbo[i] = 0
    s.limbo_len = 0


cdef void begin_turn(DState* s) noexcept nogil:
    s.phase = PH_ACTIONS
    s.actions_left = ACTIONS_PER_TURN
    s.meteo_reduction = 0
    s.free_ops = 0
    # A Solar Shield lasts until the start of its user's next turn (spec 2.5).
    s.shield[s.head.current] = 0
    s.shield_tile[s.head.current] = NO_TILE


cdef void end_storm_phase(DState* s) noexcept nogil:
    discard_limbo(s)
    s.storm_left = 0
    s.turns += 1
    if s.turns >= s.rules.max_turns:
        end_game(s, END_TURN_LIMIT)
        return
    s.head.current = (s.head.current + 1) % s.head.players
    begin_turn(s)


cdef void start_storm_phase(DState* s) noexcept nogil:
    """Spec 4.7: the count is fixed now, minus the Meteorologist's reduction (floor 0)."""
    cdef int k = draw_value(s) - s.meteo_reduction
    s.actions_left = 0
    s.storm_left = k if k > 0 else 0
    s.phase = PH_STORM
    s.free_ops = 0
    if s.storm_left == 0:
        end_storm_phase(s)


cdef void wind(DState* s, int d, int strength) noexcept nogil:
    """Spec 4.7 Wind Blows: tiles slide in direction d into the storm, each +1 sand."""
    cdef int i, src, t, j, back = (d + 2) % 4
    for i in range(strength):
        src = step_cell(s.storm, back)
        if src < 0:
            return              # respite for the rest of this card
        t = s.cell_tile[src]
        s.cell_tile[s.storm] = <int8_t>t
        s.tile_cell[t] = <int8_t>s.storm
        for j in range(N_PARTS):
            if s.part_state[j] == P_STORM:
                s.part_state[j] = P_TILE
                s.part_tile[j] = <int8_t>t
        s.cell_tile[src] = STORM_CELL
        s.storm = src
        if s.supply == 0:
            end_game(s, END_BURIED)
            return
        s.supply -= 1
        s.sand[t] += 1


cdef void sun(DState* s) noexcept nogil:
    cdef int p
    cdef bint dead = False
    for p in range(s.head.players):
        if not shaded(s, p):
            s.water[p] -= 1
            if s.water[p] < 0:
                dead = True
    if dead:
        end_game(s, END_THIRST)


cdef void draw_storm_card(DState* s) noexcept nogil:
    cdef int card, i
    cdef const StormCard* sc
    if s.draw_len == 0:
        # Reshuffle the discard pile (cards of this phase stay out with end_of_phase).
        for i in range(s.discard_len):
            s.draw[i] = s.discard[i]
            s.discard[i] = 0
        s.draw_len = s.discard_len
        s.discard_len = 0
        s.deck_known = 0
        rng_shuffle(&s.head.rng, s.draw, s.draw_len, sizeof(s.draw[0]))
        if s.draw_len == 0:
            s.storm_left = 0     # nothing left to draw (only with custom decks)
            return
    s.draw_len -= 1
    card = s.draw[s.draw_len]
    s.draw[s.draw_len] = 0
    if s.deck_known > 0:
        s.deck_known -= 1
    if not s.rules.discard_end_of_phase:
        s.discard[s.discard_len] = <uint8_t>card
        s.discard_len += 1
    else:
        s.limbo[s.limbo_len] = <uint8_t>card
        s.limbo_len += 1
    s.storm_left -= 1
    sc = &s.rules.storm[card]
    if sc.kind == SC_WIND:
        wind(s, sc.dir, sc.strength)
    elif sc.kind == SC_PICKS_UP:
        s.meter_index += 1
        if s.meter_index >= s.rules.meter_len:
            end_game(s, END_SWEPT_AWAY)
    else:
        sun(s)


cdef void apply_free(DState* s, int a) noexcept nogil:
    """A free operation: water, passing equipment, playing an equipment card."""
    cdef DAction x = decompose(a)
    cdef int q, h = x.who
    s.free_ops += 1
    if x.block == A_GIVE:
        s.water[x.who] -= 1
        s.water[x.other] += 1
    elif x.block == A_PASS:
        s.eq_owner[held_card(s, x.who, x.typ)] = <int8_t>x.other
    elif x.block == A_BLAST:
        use_card(s, h, EQ_BLASTER)
        remove_sand(s, s.cell_tile[x.cell], 255)
    elif x.block == A_JET:
        use_card(s, h, EQ_JETPACK)
        move_pawn(s, h, x.cell, x.other)
    elif x.block == A_SHIELD:
        use_card(s, h, EQ_SHIELD)
        s.shield[h] = 1
        s.shield_tile[h] = s.pawn_tile[h] if s.rules.shield_anchor_tile else NO_TILE
    elif x.block == A_SCOPE:
        use_card(s, h, EQ_SCOPE)
        s.known[s.cell_tile[x.cell]] = 1
    elif x.block == A_RESERVE:
        use_card(s, h, EQ_RESERVE)
        for q in range(s.head.players):
            if s.pawn_tile[q] == s.pawn_tile[h]:
                gain_water(s, q, WELL_WATER)
    elif x.block == A_THROTTLE:
        use_card(s, h, EQ_THROTTLE)
        s.actions_left += THROTTLE_ACTIONS
    else:
        use_card(s, h, EQ_TRACKER)
        start_peek(s)


cdef void pawn_action(DState* s, DAction x, int p) noexcept nogil:
    """The effects of the actions that apply and the search's apply share (not excavating,
    which the search keeps hidden, nor peeking or taking off)."""
    cdef int i, t = s.pawn_tile[p]
    if x.block == A_PICKUP:
        for i in range(N_PARTS):
            if s.part_state[i] == P_TILE and s.part_tile[i] == t:
                s.part_state[i] = P_HELD
                s.part_tile[i] = NO_TILE
                s.part_holder[i] = <int8_t>p
                break
    elif x.block == A_METEO_SKIP:
        s.meteo_reduction += 1
    elif x.block == A_WC_DRAW:
        gain_water(s, p, WELL_WATER)
    elif x.block == A_MOVE:
        move_pawn(s, p, x.cell, x.other)
    elif x.block == A_DIG:
        remove_sand(s, s.cell_tile[x.cell], 2 if s.role[p] == ARCHEOLOGIST else 1)
    elif x.block == A_NAV:
        move_pawn(s, x.who, x.cell, x.other)


cdef void after_decision(DState* s, int p) noexcept nogil:
    # Spec 5: the win is checked after every action and free operation.
    if not s.rules.switches.takeoff_costs_action and win_condition(s):
        end_game(s, END_WIN)
        return
    # The action phase ends by itself once no action and no Time Throttle is left.
    if (s.phase == PH_ACTIONS and s.actions_left == 0
            and held_card(s, p, EQ_THROTTLE) < 0):
        start_storm_phase(s)


cdef void d_apply(void* vs, int a) noexcept nogil:
    cdef DState* s = <DState*>vs
    cdef DAction x = decompose(a)
    cdef int p = s.head.current
    s.head.moves += 1
    if x.block == A_DRAW:
        draw_storm_card(s)
        if not s.head.terminal and s.storm_left == 0:
            end_storm_phase(s)
        return
    if x.block == A_END_ACTIONS:
        start_storm_phase(s)
        return
    if x.block == A_PEEK_KEEP or x.block == A_PEEK_BOTTOM:
        if x.block == A_PEEK_BOTTOM:
            peek_to_bottom(s, x.other)
        s.phase = s.return_phase
        s.peek_n = 0
        s.return_phase = 0
        after_decision(s, p)
        return
    if a >= A_GIVE:
        apply_free(s, a)
    else:
        s.actions_left -= 1
        if x.block == A_EXCAVATE:
            excavate(s, p)
        elif x.block == A_METEO_PEEK:
            start_peek(s)
        elif x.block == A_TAKEOFF:
            end_game(s, END_WIN)
            return
        else:
            pawn_action(s, x, p)
    after_decision(s, p)


# ---------------------------------------------------------------- rest of the contract

cdef void d_scores(const void* vs, double* out) noexcept nogil:
    """The team outcome for every seat: 1 for a win, else 0 (progress is in outcomes)."""
    cdef const DState* s = <const DState*>vs
    cdef int i
    for i in range(s.head.players):
        out[i] = 1.0 if (s.head.terminal and s.head.end_reason == END_WIN) else 0.0


GAME_OUTCOMES = ("win", "turns", "parts_found", "parts_collected", "water_left",
                 "storm_level", "sand_supply", "tiles_excavated", "team")
SEAT_OUTCOMES = ("adventurer", "water_left", "equipment_held")


cdef int parts_count(const DState* s, int at_least) noexcept nogil:
    cdef int i, n = 0
    for i in range(N_PARTS):
        if s.part_state[i] >= at_least:
            n += 1
    return n


cdef void d_outcomes(const void* vs, double* g, double* so) noexcept nogil:
    cdef const DState* s = <const DState*>vs
    cdef int i, w = 0, ex = 0, team = 0, held, k
    for i in range(s.head.players):
        w += s.water[i] if s.water[i] > 0 else 0
        team |= 1 << s.role[i]
    for i in range(N_TILES):
        ex += s.excavated[i]
    g[0] = 1.0 if s.head.end_reason == END_WIN else 0.0
    g[1] = s.turns
    g[2] = parts_count(s, P_TILE)
    g[3] = parts_count(s, P_HELD)
    g[4] = w
    g[5] = s.meter_index
    g[6] = s.supply
    g[7] = ex
    g[8] = team                 # bitmask of the adventurers in play (bit = adventurer index)
    for i in range(s.head.players):
        held = 0
        for k in range(s.rules.n_eq):
            if s.eq_owner[k] == i:
                held += 1
        so[i * 3 + 0] = s.role[i]
        so[i * 3 + 1] = s.water[i]
        so[i * 3 + 2] = held


cdef double d_heuristic(const void* vs, int seat) noexcept nogil:
    """Team progress: parts, clues, excavations, water, minus sand and buried pawns."""
    cdef const DState* s = <const DState*>vs
    cdef int i
    cdef double v = 0.0
    if s.head.terminal:
        return 1000.0 if s.head.end_reason == END_WIN else -1000.0
    v += 50.0 * parts_count(s, P_HELD) + 20.0 * parts_count(s, P_TILE)
    for i in range(N_TILES):
        if s.excavated[i]:
            v += 8.0 if s.kind[i] == K_CLUE else 4.0
        v -= 0.5 * s.sand[i]
    for i in range(s.head.players):
        v += 3.0 * (s.water[i] if s.water[i] < 3 else 3) + 0.5 * s.water[i]
        if buried(s, i):
            v -= 5.0
    return v


cdef void redeal(DState* o, bint drops, Rng* rng) noexcept nogil:
    """Deals the faces of the hidden tiles that show (drops) or do not show a water drop
    among themselves again (a water-drop tile stays a well or the mirage), from the faces
    sorted first: the deal depends only on which faces are hidden, not on where they lie."""
    cdef uint8_t ids[N_TILES]
    cdef int32_t faces[N_TILES]        # kind, gear and clue of a hidden face in one sort key
    cdef int t, n = 0, i
    for t in range(N_TILES):
        if (not o.excavated[t] and not o.known[t] and not (o.rules.known_kinds >> o.kind[t]) & 1
                and water_drop_shown(o, t) == drops):
            ids[n] = <uint8_t>t
            faces[n] = (o.kind[t] << 16) | (o.gear[t] << 8) | (o.clue[t] + 128)
            n += 1
    canonical_shuffle(rng, faces, n)
    for i in range(n):
        o.kind[ids[i]] = <uint8_t>(faces[i] >> 16)
        o.gear[ids[i]] = <uint8_t>((faces[i] >> 8) & 0xFF)
        o.clue[ids[i]] = <int8_t>((faces[i] & 0xFF) - 128)


cdef void d_observe(const void* vs, int seat, void* out, Rng* rng) noexcept nogil:
    """Hidden from everyone: the undersides of unexcavated tiles (except kinds recognisable
    from the desert side, the water drop of the wells and the mirage, and Terrascoped tiles),
    the storm pile below the seen top cards, and the equipment pile.  Re-deal the hidden tile
    faces and reshuffle the piles, each from a sorted order, and give the view a chance stream
    of its own (the state's is future chance), so that two states the team cannot tell apart
    give the same view for the same rng."""
    cdef DState* o = <DState*>out
    memcpy(o, vs, sizeof(DState))
    rng_seed(&o.head.rng, rng_next(rng), 0, 0, 0)
    redeal(o, False, rng)
    redeal(o, True, rng)
    canonical_shuffle(rng, o.draw, o.draw_len - o.deck_known)
    canonical_shuffle(rng, o.eq_deck, o.eq_len)


include "planner.pxi"
include "rollout.pxi"




# ================================================================ Python face

KINDS = ("crash_site", "launch_pad", "tunnel", "well", "mirage", "clue", "gear")
PARTS = ("propeller", "engine", "solar_crystal", "navigation_deck")
AXES = ("row", "column")
ADVENTURERS = ("archeologist", "climber", "explorer", "meteorologist", "navigator",
               "water_carrier")
EQUIPMENT = ("dune_blaster", "jet_pack", "solar_shield", "terrascope", "secret_water_reserve",
             "time_throttle", "storm_tracker")
DIRECTIONS = ("N", "E", "S", "W")
STORM_KINDS = ("wind", "storm_picks_up", "sun_beats_down")
DIFFICULTIES = ("novice", "normal", "elite", "legendary")
PHASES = ("actions", "storm", "peek")
PART_STATES = ("hidden", "on_tile", "in_storm", "held")
END_REASONS = ("running", "win", "thirst", "buried", "swept_away", "turn_limit")


HOME = __name__.rpartition(".")[0]  # this game's package, where its data lives
_TILES_FILE = load_data(HOME, "data/tiles.json")
_STORM_FILE = load_data(HOME, "data/storm.json")
DEFAULT_TILES = _TILES_FILE["tiles"]
DEFAULT_START_SAND = _TILES_FILE["start_sand"]
DEFAULT_STORM_START = _TILES_FILE["storm_start"]
DEFAULT_SAND_MARKERS = _TILES_FILE["sand_markers"]
DEFAULT_METER = _STORM_FILE["storm_meter"]
DEFAULT_DIFFICULTY_START = _STORM_FILE["difficulty_start_index"]
DEFAULT_STORM_DECK = _STORM_FILE["storm_deck"]
DEFAULT_EQUIPMENT = load_data(HOME, "data/equipment.json")["equipment"]
DEFAULT_ADVENTURERS = load_data(HOME, "data/adventurers.json")["adventurers"]


cdef SearchWeights _NAMES_OF_WEIGHTS
memset(&_NAMES_OF_WEIGHTS, 0, sizeof(SearchWeights))
# The parameters' names, in struct order, read from the struct itself.
SEARCH_WEIGHT_NAMES = tuple(dict(_NAMES_OF_WEIGHTS))
# The search widths among them, with their bounds (what the policy scratch holds).
SEARCH_WIDTH_LIMITS = {"team_beam": MAX_TEAM_BEAM, "team_lines": MAX_TEAM_LINES,
                       "team_reply_beam": MAX_TEAM_BEAM}


def _check_policy_params(table):
    """agent_params.toml declares SearchWeights field by field, the widths within their
    bounds (ImportError otherwise)."""
    if (table.names != SEARCH_WEIGHT_NAMES
            or sizeof(SearchWeights) != len(SEARCH_WEIGHT_NAMES) * sizeof(double)):
        raise ImportError(f"agent_params.toml must declare the fields of SearchWeights in "
                          f"their order: {list(SEARCH_WEIGHT_NAMES)}")
    for p in table.params:
        if p.name in SEARCH_WIDTH_LIMITS and (p.kind, p.maximum) != ("int", SEARCH_WIDTH_LIMITS[p.name]):
            raise ImportError(f"agent_params.toml: {p.name} must be an int of at most "
                              f"{SEARCH_WIDTH_LIMITS[p.name]}")


def _cell(v, where):
    if (not isinstance(v, (list, tuple)) or len(v) != 2
            or any(isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < SIDE for x in v)):
        raise ValueError(f"{where} must be [row, column] with both in 0..{SIDE - 1}, got {v!r}")
    return v[0] * SIDE + v[1]


def parse_tiles(entries):
    """The tile list (rule option `tiles`) as 24 (kind, gear, clue) tuples; ValueError."""
    out = []
    for where, e in items(entries, "rule option 'tiles'"):
        if not isinstance(e, dict):
            raise ValueError(f"{where} must be an object")
        extra = set(e) - {"kind", "gear", "part", "axis", "count"}
        if extra:
            raise ValueError(f"{where}: unknown field(s) {sorted(extra)}")
        if e.get("kind") not in KINDS:
            raise ValueError(f"{where}.kind must be one of {list(KINDS)}, got {e.get('kind')!r}")
        gear = e.get("gear", False)
        if not isinstance(gear, bool):
            raise ValueError(f"{where}.gear must be true or false")
        clue = -1
        if e["kind"] == "clue":
            if e.get("part") not in PARTS or e.get("axis") not in AXES:
                raise ValueError(f"{where}: a clue needs part in {list(PARTS)} and axis in "
                                 f"{list(AXES)}")
            clue = PARTS.index(e["part"]) * 2 + AXES.index(e["axis"])
        elif "part" in e or "axis" in e:
            raise ValueError(f"{where}: only clue tiles have a part and an axis")
        count = integer(e.get("count", 1), where + ".count", 1, N_TILES)
        out += [(KINDS.index(e["kind"]), int(gear), clue)] * count
    if len(out) != N_TILES:
        raise ValueError(f"rule option 'tiles' must describe {N_TILES} tiles, got {len(out)}")
    for k in ("crash_site", "launch_pad"):
        if sum(1 for t in out if t[0] == KINDS.index(k)) != 1:
            raise ValueError(f"rule option 'tiles' needs exactly one {k}")
    clues = sorted(t[2] for t in out if t[2] >= 0)
    if clues != list(range(2 * N_PARTS)):
        raise ValueError("rule option 'tiles' needs exactly one row and one column clue per part")
    return out


def parse_storm_deck(entries):
    out = []
    for where, e in items(entries, "rule option 'storm_deck'"):
        if not isinstance(e, dict) or e.get("kind") not in STORM_KINDS:
            raise ValueError(f"{where} must be an object with kind in {list(STORM_KINDS)}")
        extra = set(e) - {"kind", "direction", "strength", "count"}
        if extra:
            raise ValueError(f"{where}: unknown field(s) {sorted(extra)}")
        count = integer(e.get("count", 1), where + ".count", 1, MAX_STORM)
        if e["kind"] == "wind":
            if e.get("direction") not in DIRECTIONS:
                raise ValueError(f"{where}.direction must be one of {list(DIRECTIONS)}")
            card = (SC_WIND, DIRECTIONS.index(e["direction"]),
                    integer(e.get("strength"), where + ".strength", 1, 4))
        else:
            if "direction" in e or "strength" in e:
                raise ValueError(f"{where}: only wind cards have a direction and strength")
            card = (STORM_KINDS.index(e["kind"]), 0, 0)
        out += [card] * count
    if not 1 <= len(out) <= MAX_STORM:
        raise ValueError(f"rule option 'storm_deck' must hold 1..{MAX_STORM} cards")
    return out


def parse_equipment(counts, tracker):
    if not isinstance(counts, dict) or set(counts) - set(EQUIPMENT[:-1]):
        raise ValueError(f"rule option 'equipment' must map names from {list(EQUIPMENT[:-1])} "
                         f"to counts (the Storm Tracker is include_storm_tracker)")
    out = []
    for k, name in enumerate(EQUIPMENT[:-1]):
        out += [k] * integer(counts.get(name, 0), f"rule option 'equipment'.{name}", 0, MAX_EQ)
    if tracker:
        out.append(EQ_TRACKER)
    if len(out) > MAX_EQ:
        raise ValueError(f"rule option 'equipment' holds more than {MAX_EQ} cards")
    return out


# The action ids by name (core_cy/engine/actions.py), from the same constants as the C encoding: a
# cell is (row, col); a passenger or companion is a seat or NOBODY.
NOBODY = NO_PASSENGER
ACTIONS = ActionSpace(
    NUM_ACTIONS,
    Kind("end_actions", A_END_ACTIONS),
    Kind("draw", A_DRAW),
    Kind("excavate", A_EXCAVATE),
    Kind("pickup", A_PICKUP),
    Kind("meteo_skip", A_METEO_SKIP),
    Kind("meteo_peek", A_METEO_PEEK),
    Kind("wc_draw", A_WC_DRAW),
    Kind("takeoff", A_TAKEOFF),
    Kind("peek_keep", A_PEEK_KEEP),
    Kind("peek_bottom", A_PEEK_BOTTOM, position=MAX_METER),
    Kind("move", A_MOVE, row=SIDE, col=SIDE, passenger=PASSENGER_SLOTS),
    Kind("dig", A_DIG, row=SIDE, col=SIDE),
    Kind("navigate", A_NAV, pawn=MAX_PLAYERS, row=SIDE, col=SIDE, passenger=PASSENGER_SLOTS),
    Kind("give", A_GIVE, giver=MAX_PLAYERS, receiver=MAX_PLAYERS),
    Kind("pass_equipment", A_PASS, equipment=N_EQ_TYPES, giver=MAX_PLAYERS, receiver=MAX_PLAYERS),
    Kind("blast", A_BLAST, holder=MAX_PLAYERS, row=SIDE, col=SIDE),
    Kind("jet", A_JET, holder=MAX_PLAYERS, row=SIDE, col=SIDE, companion=PASSENGER_SLOTS),
    Kind("shield", A_SHIELD, holder=MAX_PLAYERS),
    Kind("scope", A_SCOPE, holder=MAX_PLAYERS, row=SIDE, col=SIDE),
    Kind("reserve", A_RESERVE, holder=MAX_PLAYERS),
    Kind("throttle", A_THROTTLE, holder=MAX_PLAYERS),
    Kind("tracker", A_TRACKER, holder=MAX_PLAYERS),
)


class ForbiddenDesertGame(AgentGame):
    name = "forbidden_desert"
    title = "Forbidden Desert"
    cooperative = True
    min_players = 2
    max_players = MAX_PLAYERS
    outcome_labels = {"adventurer": ADVENTURERS}
    # In Engine.policy order: POLICY_PLANNER, POLICY_SEARCH, POLICY_DEEP, POLICY_TEAM (planner
    # .pxi), POLICY_ROLLOUT, POLICY_ROLLOUT_SEARCH (rollout .pxi).
    policies = {"planner": "rule-based team planner: water first, dig toward clues and wells, "
                "gather on the Launch Pad with all parts (fast, weak)",
                "search": "the team planner of experiments: for each adventurer's turn a beam "
                "search (width 4) over its actions and equipment, scored by a team evaluation "
                "with the weights given as its parameters (with all parts held: the "
                "chance to take off); hidden tiles stay hidden",
                "deep_search": "the same search with a wider beam (12): stronger, about half "
                "as fast",
                "team_search": "deep_search's best lines for the acting adventurer, each "
                "followed by the teammates' searched turns of the round, the line with the best "
                "round taken: a joint team plan, slower (its widths are parameters)",
                "rollout": "team_search, and once the team holds three parts and the fourth "
                "lies on a tile every choice "
                "simulated: each legal action played to the game's end by the rule-based "
                "endgame on 16 redrawn views of the hidden parts (the same views for every "
                "action), the one with the most team wins taken; about 4 4-player games per "
                "CPU-second",
                "rollout_search": "rollout with the simulations of team_search's action and of "
                "the six others the rule-based endgame values most played again on the same "
                "views by search (the beam search scored by the chance to take off), once all "
                "four parts are held: the strongest, about 1.2 4-player games per CPU-second"}
    adventurers = ADVENTURERS
    options = options_from_data(HOME, "options.toml", DIFFICULTIES=DIFFICULTIES,
                                DEFAULT_SAND_MARKERS=DEFAULT_SAND_MARKERS,
                                DEFAULT_TILES=DEFAULT_TILES,
                                DEFAULT_START_SAND=DEFAULT_START_SAND,
                                DEFAULT_STORM_START=DEFAULT_STORM_START,
                                DEFAULT_METER=DEFAULT_METER,
                                DEFAULT_DIFFICULTY_START=DEFAULT_DIFFICULTY_START,
                                DEFAULT_STORM_DECK=DEFAULT_STORM_DECK,
                                DEFAULT_EQUIPMENT=DEFAULT_EQUIPMENT,
                                DEFAULT_ADVENTURERS=DEFAULT_ADVENTURERS)
    policy_params = policy_params_from_data(HOME, "agent_params.toml", policies)

    def check_rules(self, rules, players):
        _pack(rules, players)

    def pack_rules(self, rules, players):
        return _pack(rules, players)

    # ---- state dict ------------------------------------------------------------------
    def to_dict(self, State state):
        return _to_dict(self, state)

    def fill_state(self, State state, data, rules):
        _fill(_st(state), data)
        check_live(state)

    # ---- descriptions ----------------------------------------------------------------
    def describe(self, State state, action):
        kind, x = ACTIONS.decode(action)     # ValueError for an id out of range
        return _describe(_st(state), kind, x)

    def score_breakdown(self, State state):
        """The team's progress and each adventurer's water and equipment."""
        cdef DState* s = _st(state)
        game, seats = state.outcomes()
        team = {k: game[k] for k in GAME_OUTCOMES if k != "team"}
        team["end_reason"] = END_REASONS[s.head.end_reason]
        team["adventurers"] = [ADVENTURERS[s.role[i]] for i in range(s.head.players)]
        return [dict(team, seat=i, adventurer=ADVENTURERS[s.role[i]],
                     water=int(s.water[i]), max_water=int(s.rules.adv_water[s.role[i]]),
                     equipment=[EQUIPMENT[s.rules.eq_type[k]] for k in range(s.rules.n_eq)
                                if s.eq_owner[k] == i])
                for i in range(s.head.players)]


cdef inline DState* _st(State s):
    s._check_alive()
    return <DState*>s.buf


cdef bytes _pack(dict r, int players):
    cdef DRules R
    memset(&R, 0, sizeof(DRules))
    tiles = parse_tiles(r["tiles"])
    storm = parse_storm_deck(r["storm_deck"])
    eq = parse_equipment(r["equipment"], r["include_storm_tracker"])
    adv = r["adventurers"]
    if not isinstance(adv, dict) or set(adv) != set(ADVENTURERS):
        raise ValueError(f"rule option 'adventurers' must give the water of each of {list(ADVENTURERS)}")
    meter_all = r["storm_meter"]
    if not isinstance(meter_all, dict) or str(players) not in meter_all:
        raise ValueError(f"rule option 'storm_meter' has no column for {players} players")
    meter = meter_all[str(players)]
    if not isinstance(meter, list) or not 1 <= len(meter) <= MAX_METER:
        raise ValueError(f"rule option 'storm_meter'.{players} must list 1..{MAX_METER} ticks")
    for i, v in enumerate(meter):
        integer(v, f"rule option 'storm_meter'.{players}[{i}]", 0, MAX_STORM)
    starts = r["difficulty_start_index"]
    if not isinstance(starts, dict) or set(starts) != set(DIFFICULTIES):
        raise ValueError(f"rule option 'difficulty_start_index' must map {list(DIFFICULTIES)}")
    start = integer(starts[r["difficulty"]],
                    f"rule option 'difficulty_start_index'.{r['difficulty']}", 0, len(meter) - 1)
    roles = r["roles"]
    if not isinstance(roles, list) or (roles and (
            len(roles) != players or any(x not in ADVENTURERS for x in roles)
            or len(set(roles)) != len(roles))):
        raise ValueError(f"rule option 'roles' must be empty (random) or {players} different "
                         f"names from {list(ADVENTURERS)}, got {roles!r}")
    known = r["known_desert_sides"]
    if not isinstance(known, list) or any(k not in KINDS for k in known):
        raise ValueError(f"rule option 'known_desert_sides' must list kinds from {list(KINDS)}")
    storm_cell = _cell(r["storm_start"], "rule option 'storm_start'")
    sand_cells = r["start_sand"]
    if not isinstance(sand_cells, list):
        raise ValueError("rule option 'start_sand' must be a list of [row, column] cells")
    for i, c in enumerate(sand_cells):
        c = _cell(c, f"rule option 'start_sand'[{i}]")
        if R.start_sand[c]:
            raise ValueError(f"rule option 'start_sand'[{i}] repeats a cell")
        R.start_sand[c] = 1
    if sum(1 for c in range(N_CELLS) if R.start_sand[c] and c != storm_cell) > r["sand_markers"]:
        raise ValueError("rule option 'sand_markers' is less than the starting sand")
    R.meter_len = len(meter)
    for i, v in enumerate(meter):
        R.meter[i] = v
    R.start_index = start
    R.n_storm = len(storm)
    for i, (k, d, st) in enumerate(storm):
        R.storm[i].kind, R.storm[i].dir, R.storm[i].strength = k, d, st
    R.n_eq = len(eq)
    for i, k in enumerate(eq):
        R.eq_type[i] = k
    R.sand_total = r["sand_markers"]
    R.storm_start = storm_cell
    R.discard_end_of_phase = GAME.choice_index(r, "storm_discard_timing")
    R.shield_anchor_tile = GAME.choice_index(r, "solar_shield_anchor")
    R.switches = {name: r[name] for name in R.switches}     # the struct's field names
    R.tiebreak_lowest_seat = GAME.choice_index(r, "first_player_tiebreak")
    R.roles_fixed = bool(roles)
    for i, x in enumerate(roles):
        R.roles[i] = ADVENTURERS.index(x)
    R.max_turns = r["max_turns"]
    R.max_free_ops = r["max_free_ops_per_phase"]
    R.known_kinds = sum(1 << KINDS.index(k) for k in set(known))
    R.water_drop = bool(r["water_drop_desert_side"])
    for i, name in enumerate(ADVENTURERS):
        R.adv_water[i] = integer(adv[name], f"rule option 'adventurers'.{name}", 0, 100)
    for t, (k, g, c) in enumerate(tiles):
        R.tile_kind[t], R.tile_gear[t], R.tile_clue[t] = k, g, c
    return (<char*>&R)[:sizeof(DRules)]


cdef dict _rules_of(const DRules* R, int players):
    """A resolved rules dict that packs to exactly this struct (data one entry per item)."""
    meter = {k: list(v) for k, v in DEFAULT_METER.items()}
    meter[str(players)] = [int(R.meter[i]) for i in range(R.meter_len)]
    starts = dict(DEFAULT_DIFFICULTY_START)
    difficulty = next((d for d in DIFFICULTIES if starts[d] == R.start_index), None)
    if difficulty is None:
        difficulty = "novice"
        starts["novice"] = R.start_index
    tiles = []
    for t in range(N_TILES):
        e = {"kind": KINDS[R.tile_kind[t]]}
        if R.tile_gear[t]:
            e["gear"] = True
        if R.tile_clue[t] >= 0:
            e["part"], e["axis"] = PARTS[R.tile_clue[t] // 2], AXES[R.tile_clue[t] % 2]
        tiles.append(e)
    deck = []
    for i in range(R.n_storm):
        if R.storm[i].kind == SC_WIND:
            deck.append({"kind": "wind", "direction": DIRECTIONS[R.storm[i].dir],
                         "strength": int(R.storm[i].strength)})
        else:
            deck.append({"kind": STORM_KINDS[R.storm[i].kind]})
    types = [R.eq_type[i] for i in range(R.n_eq)]
    tracker = EQ_TRACKER in types
    return {
        "difficulty": difficulty,
        "roles": [ADVENTURERS[R.roles[i]] for i in range(players)] if R.roles_fixed else [],
        "include_storm_tracker": tracker,
        "storm_discard_timing": GAME.choice_at("storm_discard_timing", R.discard_end_of_phase),
        "solar_shield_anchor": GAME.choice_at("solar_shield_anchor", R.shield_anchor_tile),
        **R.switches,
        "first_player_tiebreak": GAME.choice_at("first_player_tiebreak", R.tiebreak_lowest_seat),
        "known_desert_sides": [k for i, k in enumerate(KINDS) if (R.known_kinds >> i) & 1],
        "water_drop_desert_side": bool(R.water_drop),
        "max_turns": R.max_turns, "max_free_ops_per_phase": R.max_free_ops,
        "sand_markers": R.sand_total, "tiles": tiles,
        "start_sand": [[c // SIDE, c % SIDE] for c in range(N_CELLS) if R.start_sand[c]],
        "storm_start": [R.storm_start // SIDE, R.storm_start % SIDE],
        "storm_meter": meter, "difficulty_start_index": starts, "storm_deck": deck,
        "equipment": {name: types.count(k) for k, name in enumerate(EQUIPMENT[:-1])},
        "adventurers": {name: int(R.adv_water[i]) for i, name in enumerate(ADVENTURERS)},
    }


cdef str _storm_card_text(const DRules* R, int card):
    k = R.storm[card].kind
    if k == SC_WIND:
        return f"wind {DIRECTIONS[R.storm[card].dir]} {R.storm[card].strength}"
    return STORM_KINDS[k]


cdef dict _to_dict(game, State state):
    cdef DState* s = _st(state)
    cdef int t
    board = []
    for r in range(SIDE):
        row = []
        for c in range(SIDE):
            t = s.cell_tile[r * SIDE + c]
            if t < 0:
                row.append(None)
                continue
            e = {"tile": t, "kind": KINDS[s.kind[t]], "gear": bool(s.gear[t]),
                 "sand": int(s.sand[t]), "excavated": bool(s.excavated[t]),
                 "known": bool(s.known[t])}
            if s.clue[t] >= 0:
                e["part"], e["axis"] = PARTS[s.clue[t] // 2], AXES[s.clue[t] % 2]
            row.append(e)
        board.append(row)
    pawns = [{"adventurer": ADVENTURERS[s.role[i]], "water": int(s.water[i]),
              "tile": int(s.pawn_tile[i]), "shield": bool(s.shield[i]),
              "shield_tile": None if s.shield_tile[i] < 0 else int(s.shield_tile[i])}
             for i in range(s.head.players)]
    parts = [{"part": PARTS[i], "state": PART_STATES[s.part_state[i]],
              "tile": None if s.part_tile[i] < 0 else int(s.part_tile[i]),
              "holder": None if s.part_holder[i] < 0 else int(s.part_holder[i])}
             for i in range(N_PARTS)]
    owners = {-1: "deck", -2: "used"}
    return {
        "game": game.name, "players": int(s.head.players),
        "rules": _rules_of(&s.rules, s.head.players),
        "phase": PHASES[s.phase], "return_phase": PHASES[s.return_phase],
        "current_player": int(s.head.current),
        "storm": [s.storm // SIDE, s.storm % SIDE], "sand_supply": int(s.supply),
        "storm_meter_index": int(s.meter_index), "actions_left": int(s.actions_left),
        "meteorologist_reduction": int(s.meteo_reduction),
        "storm_cards_left": int(s.storm_left), "free_ops": int(s.free_ops),
        "board": board, "pawns": pawns, "parts": parts,
        "storm_draw_pile": [int(x) for x in s.draw[:s.draw_len]],
        "storm_discard_pile": [int(x) for x in s.discard[:s.discard_len]],
        "storm_drawn_this_phase": [int(x) for x in s.limbo[:s.limbo_len]],
        "storm_known_on_top": int(s.deck_known), "peek": int(s.peek_n),
        "equipment_pile": [int(x) for x in s.eq_deck[:s.eq_len]],
        "equipment_owner": [owners.get(int(s.eq_owner[i]), int(s.eq_owner[i]))
                            for i in range(s.rules.n_eq)],
        "terminal": bool(s.head.terminal), "end_reason": END_REASONS[s.head.end_reason],
        "moves": int(s.head.moves), "turns": int(s.turns),
        "rng": contract.rng_to_dict(state),
    }


cdef _fill(DState* s, top):
    """from_dict's desert part (rules, players and rng are in place): reads every field of
    to_dict() through the codec (core_cy/engine/codec.py), so that a bad value is named by its path."""
    cdef DRules* R = &s.rules
    cdef int players = s.head.players
    s.phase = top.choice("phase", PHASES)
    s.return_phase = top.choice("return_phase", PHASES)
    s.head.current = top.int("current_player", 0, players - 1)
    sand = _fill_board(s, top)
    s.supply = top.int("sand_supply", 0, 255)
    if s.supply + sand != R.sand_total:
        fail("state", f"sand on the board ({sand}) plus sand_supply ({s.supply}) must equal "
                      f"sand_markers ({R.sand_total})")
    s.meter_index = top.int("storm_meter_index", 0, R.meter_len)
    s.actions_left = top.int("actions_left", 0, 1000)
    s.meteo_reduction = top.int("meteorologist_reduction", 0, 1000)
    s.storm_left = top.int("storm_cards_left", 0, 1000)
    s.free_ops = top.int("free_ops", 0, 1_000_000)
    _fill_pawns(s, top)
    _fill_parts(s, top)
    _fill_storm_piles(s, top)
    _fill_equipment(s, top)
    s.head.terminal = top.bool("terminal")
    s.head.end_reason = top.choice("end_reason", END_REASONS)
    if bool(s.head.terminal) != (s.head.end_reason != END_RUNNING):
        fail("state", "terminal exactly when end_reason is not 'running'")
    s.head.moves = top.int("moves", 0, INT32_MAX)
    s.turns = top.int("turns", 0, INT32_MAX)


cdef int _fill_board(DState* s, top) except -1:
    """The 5 x 5 board: every cell a tile object or null (the storm), each tile id once and
    the tiles those of rule option 'tiles'; returns the sand on the board."""
    cdef DRules* R = &s.rules
    ids = UniqueIds(N_TILES, "tile")
    board = top.grid("board", SIDE, SIDE)
    storms = []
    sand = 0
    for cell in range(N_CELLS):
        r, c = divmod(cell, SIDE)
        where = f"state.board[{r}][{c}]"
        if board[r][c] is None:
            s.cell_tile[cell] = STORM_CELL
            storms.append(cell)
            continue
        e = codec.Obj(board[r][c], where)
        t = ids.take(e.get("tile"), e.at("tile"))
        s.cell_tile[cell] = t
        s.tile_cell[t] = cell
        s.kind[t] = e.choice("kind", KINDS)
        s.gear[t] = e.bool("gear")
        s.sand[t] = e.int("sand", 0, 255)
        sand += s.sand[t]
        s.excavated[t] = e.bool("excavated")
        s.known[t] = e.bool("known")
        s.clue[t] = -1
        if s.kind[t] == K_CLUE:
            s.clue[t] = e.choice("part", PARTS) * 2 + e.choice("axis", AXES)
    if len(storms) != 1:
        fail("state.board", f"expected exactly one storm cell (null), got {len(storms)}")
    s.storm = storms[0]
    if sorted((s.kind[t], s.gear[t], s.clue[t]) for t in range(N_TILES)) != sorted(
            (R.tile_kind[t], R.tile_gear[t], R.tile_clue[t]) for t in range(N_TILES)):
        fail("state.board", "the tiles do not match rule option 'tiles'")
    return sand


cdef _fill_pawns(DState* s, top):
    cdef DRules* R = &s.rules
    for i in range(MAX_PLAYERS):
        s.role[i] = -1
        s.pawn_tile[i] = NO_TILE
        s.shield_tile[i] = NO_TILE
    roles_seen = set()
    for i, pw in enumerate(top.objs("pawns", length=s.head.players)):
        s.role[i] = pw.choice("adventurer", ADVENTURERS)
        if s.role[i] in roles_seen:
            fail(pw.at("adventurer"), f"{ADVENTURERS[s.role[i]]} is already in play")
        roles_seen.add(s.role[i])
        s.water[i] = pw.int("water", -1, R.adv_water[s.role[i]])
        s.pawn_tile[i] = pw.int("tile", 0, N_TILES - 1)
        s.shield[i] = pw.bool("shield")
        st = pw.get("shield_tile")
        if st is not None:
            s.shield_tile[i] = integer(st, pw.at("shield_tile"), 0, N_TILES - 1)


cdef _fill_parts(DState* s, top):
    for i, pt in enumerate(top.objs("parts", length=N_PARTS)):
        s.part_state[i] = pt.choice("state", PART_STATES)
        tile = pt.get("tile")
        holder = pt.get("holder")
        s.part_tile[i] = NO_TILE if tile is None else integer(tile, pt.at("tile"), 0, N_TILES - 1)
        s.part_holder[i] = -1 if holder is None else integer(holder, pt.at("holder"), 0,
                                                             s.head.players - 1)
        if (s.part_state[i] == P_TILE) != (s.part_tile[i] >= 0):
            fail(pt.path, "a tile is given exactly when the part is on_tile")


cdef int _fill_ids(uint8_t* out, top, str key, ids, int most) except -1:
    """The list `key` of ids (each taken in `ids`: one place per id) into out; its length."""
    items = top.list(key, max_len=most)
    for i, v in enumerate(items):
        out[i] = ids.take(v, f"{top.at(key)}[{i}]")
    return len(items)


cdef _fill_storm_piles(DState* s, top):
    """The draw pile, the discard pile and the cards drawn this phase: every storm card in
    exactly one of them."""
    cdef int n = s.rules.n_storm
    ids = UniqueIds(n, "storm card")
    s.draw_len = _fill_ids(s.draw, top, "storm_draw_pile", ids, n)
    s.discard_len = _fill_ids(s.discard, top, "storm_discard_pile", ids, n)
    s.limbo_len = _fill_ids(s.limbo, top, "storm_drawn_this_phase", ids, n)
    ids.check_all("the draw pile, the discard pile or the cards drawn this phase")
    s.deck_known = top.int("storm_known_on_top", 0, s.draw_len)
    s.peek_n = top.int("peek", 0, s.draw_len)


cdef _fill_equipment(DState* s, top):
    """Each equipment card's owner ("deck", "used" or a seat); the pile lists the deck's."""
    cdef int n = s.rules.n_eq
    for i, o in enumerate(top.list("equipment_owner", length=n)):
        if o == "deck":
            s.eq_owner[i] = EQ_IN_DECK
        elif o == "used":
            s.eq_owner[i] = EQ_USED
        else:
            s.eq_owner[i] = integer(o, f"{top.at('equipment_owner')}[{i}]", 0, s.head.players - 1)
    s.eq_len = _fill_ids(s.eq_deck, top, "equipment_pile", UniqueIds(n, "equipment card"), n)
    for i in range(s.eq_len):
        if s.eq_owner[s.eq_deck[i]] != EQ_IN_DECK:
            fail(f"{top.at('equipment_pile')}[{i}]", f"card {s.eq_deck[i]} is not owned by "
                                                     f"the deck")
    in_deck = [i for i in range(n) if s.eq_owner[i] == EQ_IN_DECK]
    if s.eq_len != len(in_deck):
        fail(top.at("equipment_pile"), f"expected the cards owned by the deck, {in_deck}")


def _cell_text(c):
    return f"({c // SIDE},{c % SIDE})"


# describe(): one sentence per action kind, filled with the words of its parameters.
_TEXTS = {
    "end_actions": "{who} ends the action phase",
    "draw": "draw a storm card",
    "excavate": "{who} excavates the tile at {here}",
    "pickup": "{who} picks up a part",
    "meteo_skip": "{who} holds the storm back (one card fewer)",
    "meteo_peek": "{who} looks at the top storm cards",
    "wc_draw": "{who} draws 2 water from the well",
    "takeoff": "take off",
    "peek_keep": "keep the storm cards in order",
    "peek_bottom": "put storm card {nth} from the top{seen} on the bottom",
    "move": "{who} moves to {cell}{passenger}",
    "dig": "{who} removes sand at {cell}",
    "navigate": "{who} moves the {pawn} to {cell}{passenger}",
    "give": "the {giver} gives 1 water to the {receiver}",
    "pass_equipment": "the {giver} passes a {equipment} to the {receiver}",
    "blast": "the {holder} fires a dune blaster at {cell}",
    "jet": "the {holder} flies a jet pack to {cell}{companion}",
    "shield": "the {holder} raises a solar shield",
    "scope": "the {holder} looks under {cell} with a terrascope",
    "reserve": "the {holder} opens the secret water reserve",
    "throttle": "the {holder} uses the time throttle (+2 actions)",
    "tracker": "the {holder} uses the storm tracker",
}
_SEAT_PARAMS = ("pawn", "giver", "receiver", "holder")
_CARRIED_PARAMS = ("passenger", "companion")


cdef str _describe(const DState* s, str kind, dict x):
    """An action (decoded by ACTIONS) in words, naming pawns by adventurer."""
    names = [ADVENTURERS[s.role[q]] for q in range(s.head.players)]

    def pawn(q):
        return names[q] if q < len(names) else f"seat {q}"

    words = {"who": pawn(s.head.current)}
    if kind == "excavate":
        words["here"] = _cell_text(s.tile_cell[s.pawn_tile[s.head.current]])
    for key, v in x.items():
        if key in _SEAT_PARAMS:
            words[key] = pawn(v)
        elif key in _CARRIED_PARAMS:
            words[key] = "" if v == NO_PASSENGER else f" with the {pawn(v)}"
        elif key == "equipment":
            words[key] = EQUIPMENT[v]
    if "row" in x:
        words["cell"] = f"({x['row']},{x['col']})"
    if kind == "peek_bottom":
        i = x["position"]
        words["nth"] = i + 1
        words["seen"] = (" (" + _storm_card_text(&s.rules, s.draw[s.draw_len - 1 - i]) + ")"
                         if i < s.draw_len else "")
    return _TEXTS[kind].format(**words)


def observe_dict(State state, int seat, unsigned long long seed=0):
    """The state as `seat` may see it (Engine.observe with its own RNG), as a dict."""
    cdef State out = contract.blank_state(state.game, state.handle)
    cdef Rng rng
    rng_seed(&rng, seed, 0, 0, 1 + seat)
    d_observe(_st(state), seat, out.buf, &rng)
    return _to_dict(state.game, out)


_check_policy_params(ForbiddenDesertGame.policy_params)
ForbiddenDesertGame.handle = engine_handle(&ENGINE, ForbiddenDesertGame, &_LAYOUT, sizeof(DState),
    &_LAYOUT.rules, sizeof(DRules), d_setup, d_legal, d_apply, d_scores, d_outcomes, d_heuristic,
    d_observe, rollout_policy, NULL, d_scores)
GAME = ForbiddenDesertGame()
