# cython: language_level=3
"""Reef Encounter (Richard Breese, 2004) on the engine contract.

Rules: ../shared/rules/reef_encounter.md (section numbers below refer to it; the Hungarian
rulebook ../shared/seeds/002_5e1176bf99a558f6.txt is the authority).  The state is one flat C
struct (`RState`, rules and component data included) so that clone is a memcpy; every function
of the engine table is nogil and allocation-free.  The Python face (`ReefGame`) at the bottom
validates rules, packs them and converts states to and from dicts.

Boards are 6 x 7 grids; each board's cells are bits of a 64-bit mask (bit r * 7 + c), so
corals (orthogonally connected same-coloured polyps) are found by spreading bit masks.
A global cell id is board * 42 + r * 7 + c.

A turn is a sequence of small decisions (section 4), one action each:
  eat a coral (action 1, only first), lay one polyp from behind the screen or from the
  consumed polyps (actions 2/3: the first lay of a colour reveals its larva cube and opens a
  larva play; lays of that colour continue it; a lay of another colour or any other action
  except a shrimp move closes it; END_PLAY closes it explicitly, so that the second play may
  be of the same colour), introduce a shrimp (4), move a shrimp (5), consumed polyp -> larva
  cube (6), consumed polyp -> alga cylinder placed at once (7), larva cube -> polyp (8), and
  "end the turn collecting from open-sea space k" (10; action 9 is collecting without
  anything before).  Setup decisions: each seat drops one polyp into its parrotfish, then
  picks its larva cubes.  In the final round a seat may only eat or pass.
"""
from libc.string cimport memcpy, memset
from libc.stdint cimport int8_t, uint8_t, int16_t, int32_t, uint32_t, uint64_t
from core_cy.engine.contract cimport (Engine, GameHeader, begin_setup, end_game, share_best,
                               EngineHandle, State, SeatParams, Rng, rng_below,
                               rng_next, rng_seed, rng_tie_key, MAX_LEGAL, engine_handle)
from core_cy.engine import contract
from core_cy.engine.actions import ActionSpace, Kind
from core_cy.engine.codec import INT32_MAX, check_live, choice, fail, integer, load_data
from core_cy.engine.game import options_from_data
from core_cy.agents import AgentGame

ENGINE_VERSION = "1.2"   # 1.1: condition 3 checked when the larva play ends (reef_full_check);
                         # 1.2: end condition 4 follows the seed by default (end4_literal_bag_lt3)

cdef extern from "meeple_bits.h":
    int popcount "meeple_popcount64"(uint64_t x) noexcept nogil
    int lowest "meeple_lowest64"(uint64_t x) noexcept nogil

cdef enum:
    NCOL = 5                # coral colours: grey, orange, pink, white, yellow
    NALG = 4                # alga colours: blue, green, purple, red
    NTILES = 10
    NSPACES = 5             # open-sea larva spaces
    MAX_PLAYERS = 4
    MAX_LAYOUTS = 8         # reef boards a data file may offer
    ROWS = 6
    COLS = 7
    BCELLS = 42             # cells of one board
    NCELLS = 168            # 4 boards
    ALGA_TARGETS = 11       # the alga space, then the 10 coral tiles
    MAX_CORALS = 48         # corals on one board (at most 42 cells)
    MAX_SHRIMPS = 8         # a seat's shrimps on the boards (at most 2 on each of 4 boards)
    MAX_ON_BOARD = 2 * MAX_PLAYERS   # shrimps on one board (at most 2 of each seat)

cdef enum:
    PH_FISH = 0             # setup step 11: each seat drops one polyp into its parrotfish
    PH_PICK = 1             # setup step 12: each seat picks its larva cubes
    PH_TURN = 2
    PH_FINAL = 3            # the final round: eat or pass

cdef enum:
    END_RUNNING = 0
    END_TILES_COVERED = 1   # section 9, condition 1
    END_FOURTH_SHRIMP = 2   # condition 2
    END_REEF_FULL = 3       # condition 3
    END_SUPPLY = 4          # condition 4
    END_TURN_LIMIT = 5      # simulator safety, not a rule

# Action ids: contiguous blocks, in the order legal_actions emits them (ascending).
cdef enum:
    A_FISH = 0                                   # + colour
    A_PICK = A_FISH + NCOL                       # + colour
    A_EAT = A_PICK + NCOL                        # + cell of the eating seat's shrimp
    A_LAY_SCREEN = A_EAT + NCELLS                # + colour * NCELLS + cell
    A_LAY_CONSUMED = A_LAY_SCREEN + NCOL * NCELLS
    A_END_PLAY = A_LAY_CONSUMED + NCOL * NCELLS
    A_EMPTY_PLAY = A_END_PLAY + 1                # + colour (only if larva_play_min_polyps = 0)
    A_INTRO = A_EMPTY_PLAY + NCOL                # + cell
    A_TO_LARVA = A_INTRO + NCELLS                # + colour
    A_ALGA = A_TO_LARVA + NCOL                   # + (polyp colour * 4 + alga) * 11 + target
    A_TO_POLYP = A_ALGA + NCOL * NALG * ALGA_TARGETS  # + colour
    A_COLLECT = A_TO_POLYP + NCOL                # + space
    A_FINAL_PASS = A_COLLECT + NSPACES
    A_MOVE = A_FINAL_PASS + 1                    # + shrimp * (NCELLS + 1) + destination: the
    NUM_ACTIONS = A_MOVE + MAX_SHRIMPS * (NCELLS + 1)  # seat's k-th shrimp on the boards in
                                                 # cell order; destination NCELLS = the screen

cdef enum:
    SCREEN = NCELLS
    NO_ONE = -1

# Heuristic weights (greedy agents), in integer units so that the fast path and the generic
# path sum exactly the same integers whatever the order.  Not rules.
cdef enum:
    W_FISH = 20             # per polyp in the fish, times its colour value
    W_SCREEN = 1            # per polyp behind the screen, times its value, up to
    SCREEN_CAP = 24         # this much (about two larva plays' worth: no hoarding)
    W_CUBE = 2              # per larva cube behind the screen, for the first CUBE_CAP
    CUBE_CAP = 2            # (more cubes than that are worth nothing: no hoarding)
    W_CONSUMED = 4          # per consumed polyp in front of the screen
    W_LICENCE = 30          # the open-sea shrimp (licence to put algae on tiles)
    W_MEAL = 20             # per coral eaten: a step toward the end (feed the fish early)
    W_BARE = 20             # penalty per own shrimp left on bare rock
    W_GROW = 4              # per polyp (up to 4) of a guarded coral, times its value
    W_EDIBLE = 8            # per polyp beyond 4 of a guarded coral, times its value
    W_FREE = 2              # per polyp of an unguarded coral, times its value (board presence)

ctypedef struct RRules:
    int32_t n_layouts
    uint64_t layout_playable[MAX_LAYOUTS]
    int8_t layout_light[MAX_LAYOUTS]            # cell of the light rock, -1 if none
    int8_t layout_start[MAX_LAYOUTS][BCELLS]    # start polyp colour, -1 if none
    int8_t tile_strong[NTILES]                  # side S data (side N is the mirror)
    int8_t tile_weak[NTILES]
    int8_t tile_front[NTILES]
    int8_t tile_back[NTILES]
    int8_t cycle[NSPACES]                       # larva colour of each open-sea space
    int8_t deal[NSPACES]
    int8_t hands[3][MAX_PLAYERS]                # per player count 2..4, in turn order
    int32_t seat_polyps[MAX_PLAYERS]            # seat compensation (an analysis option):
                                                # polyps added to the hand, in turn order
    int32_t polyps_per_colour
    int32_t larva_per_colour
    int32_t algae_per_colour
    int32_t shrimps_per_player
    int32_t larva_picks
    int32_t pick_duplicates                     # A19
    int32_t initial_side                        # -1 random (coin flip), 0 side S, 1 side N
    int32_t start_random                        # A20: 1 uniform random start seat, 0 seat 0
    int32_t extra_growth                        # 0 with advanced_no_extra_growth
    int32_t eat_return                          # 4, or 5 with advanced_eat_return_plus_one
    int32_t eat_min_size                        # 5 (section 5, action 1)
    int32_t end4_literal                        # end4_literal_bag_lt3
    int32_t min_polyps                          # larva_play_min_polyps (A6)
    int32_t bonus_fail                          # 6.4: a missing bonus tile is not taken from the bag
    int32_t max_shrimp_moves                    # simulator bound on action 5 per turn
    int32_t max_turns                           # simulator safety
    int32_t end_stops_turn                      # A8: a game end stops the ender's turn
    int32_t reef_full_each_placement            # 9, condition 3 checked after each placement
    int32_t attack_extra_growth                 # A3: an attacking polyp triggers extra growth

ctypedef struct RPlayer:
    int16_t screen[NCOL]        # polyps behind the screen (hidden)
    int16_t consumed[NCOL]      # in front of the screen (public)
    int16_t fish[NCOL]          # in the parrotfish (hidden)
    int16_t larva[NCOL]         # larva cubes behind the screen (public)
    int16_t shrimps_screen      # shrimps behind the screen
    int16_t fish_shrimps        # 2nd-4th eaten shrimps
    int16_t open_sea_shrimp     # the first eaten shrimp: the licence to put algae on tiles
    int16_t eaten               # corals eaten (= shrimps eaten)
    int16_t score
    # What every seat may know of the hidden zones (the determinized view keeps it): polyps
    # that went behind the screen openly (open-sea piles, action 8) and have not possibly
    # left it since, and the polyps of public meals in the fish (only the setup polyp is
    # secret).  A lay of colour x from the screen may have been a seen x: one less is sure.
    int16_t seen_screen[NCOL]
    int16_t seen_fish[NCOL]

ctypedef struct RState:
    GameHeader head               # rng, players, current, terminal, moves, end reason, shares
    RRules rules
    int32_t phase
    int32_t turns
    int32_t start_player
    int32_t picks                  # setup: larva cubes picked by the current seat
    int32_t first_pick
    int32_t ender                  # the seat that triggered the end (final round), or -1
    int32_t final_left             # final-round turns still to play
    int32_t end_pending            # the end reason once the final round is over
    # The current turn (section 4).
    int32_t acted                  # any action taken this turn (action 1 only first)
    int32_t plays                  # larva plays started this turn (at most 2)
    int32_t play_colour            # the open larva play's colour, -1 if none
    int32_t play_screen            # polyps laid from behind the screen in the open play
    int32_t intro_used             # action 4 taken
    int32_t tile_alga_used         # a cylinder went onto a coral tile this turn
    int32_t shrimp_moves
    # The cells (per board) of the shrimps that moved since the turn's last other action:
    # the search does not move them again (m_search_actions).  Not part of the rules' state.
    uint64_t run_moved[MAX_PLAYERS]
    int32_t bag[NCOL]
    int32_t bonus[NCOL]            # the bonus row beside the open sea (0 or 1 per colour)
    int32_t bonus_poured           # the bonus row went into the bag (once per game)
    int32_t larva_supply[NCOL]
    int32_t alga_supply[NALG]
    int32_t alga_space             # cylinder colour on the alga space, -1 if empty
    int32_t space_cube[NSPACES]    # 1 if the space holds its larva cube
    int32_t space_polyps[NSPACES][NCOL]
    int8_t tile_side[NTILES]       # 0 side S, 1 side N
    int8_t tile_covered[NTILES]
    int32_t n_boards
    int8_t board_layout[MAX_PLAYERS]
    uint64_t playable[MAX_PLAYERS]
    int8_t light[MAX_PLAYERS]
    int8_t cell_colour[NCELLS]     # -1 empty
    int8_t cell_shrimp[NCELLS]     # owner of the shrimp on the cell, -1 none
    uint64_t occ[MAX_PLAYERS][NCOL]
    uint64_t shr[MAX_PLAYERS]      # cells carrying a shrimp
    # Kept up to date with the board (put_shrimp, lift_shrimp, refresh_guards), so that the
    # legal actions need not find them again: each seat's shrimps per board, and the coral
    # under each shrimp of a board (in cell order; 0 on bare rock).
    uint64_t shr_of[MAX_PLAYERS][MAX_PLAYERS]       # [seat][board]
    uint64_t guard[MAX_PLAYERS][MAX_ON_BOARD]       # [board][k-th shrimp on it]
    RPlayer p[MAX_PLAYERS]

cdef Engine ENGINE       # the engine table, filled at the end of the module (engine_handle)
cdef RState _LAYOUT      # one instance, to read where the rules are


# ---------------------------------------------------------------- bit geometry

# Compile-time masks (C constants, so that the compiler folds them into nbr()): every cell
# of a board, its column 0 and its column 6.  Checked against the grid size below.
cdef extern from *:
    """
    #define REEF_FULL ((uint64_t)0x3ffffffffffULL)
    #define REEF_COL0 ((uint64_t)0x810204081ULL)
    #define REEF_COL6 ((uint64_t)0x20408102040ULL)
    """
    const uint64_t FULL "REEF_FULL"
    const uint64_t COL0 "REEF_COL0"
    const uint64_t COL6 "REEF_COL6"
assert FULL == ((<object>1) << BCELLS) - 1
assert COL0 == sum(1 << (_r * COLS) for _r in range(ROWS)) and COL6 == COL0 << (COLS - 1)


cdef inline uint64_t nbr(uint64_t m) noexcept nogil:
    """The orthogonal neighbours of the cells of m (not m itself unless adjacent)."""
    return (((m << 1) & ~COL0) | ((m >> 1) & ~COL6) | (m << COLS) | (m >> COLS)) & FULL


cdef inline uint64_t spread(uint64_t seed, uint64_t m) noexcept nogil:
    """The connected part of m (orthogonal steps) holding the seed cells."""
    cdef uint64_t x = seed & m, y
    while True:
        y = (x | nbr(x)) & m
        if y == x:
            return x
        x = y


cdef inline uint64_t bit(int c) noexcept nogil:
    return (<uint64_t>1) << (c % BCELLS)


cdef inline uint64_t occ_all(const RState* s, int b) noexcept nogil:
    return s.occ[b][0] | s.occ[b][1] | s.occ[b][2] | s.occ[b][3] | s.occ[b][4]


# ---------------------------------------------------------------- coral tiles (section 7)

cdef inline int tile_strong(const RState* s, int t) noexcept nogil:
    return s.rules.tile_strong[t] if s.tile_side[t] == 0 else s.rules.tile_weak[t]


cdef inline int tile_weak(const RState* s, int t) noexcept nogil:
    return s.rules.tile_weak[t] if s.tile_side[t] == 0 else s.rules.tile_strong[t]


cdef inline int tile_front(const RState* s, int t) noexcept nogil:
    return s.rules.tile_front[t] if s.tile_side[t] == 0 else s.rules.tile_back[t]


cdef void colour_values(const RState* s, int* v) noexcept nogil:
    """Section 8: 1 + the tiles on which the colour is the stronger one."""
    cdef int t
    for t in range(NCOL):
        v[t] = 1
    for t in range(NTILES):
        v[tile_strong(s, t)] += 1


cdef void flip_front(RState* s, int alga, int skip) noexcept nogil:
    """Flips every uncovered tile whose front alga is `alga` (except tile `skip`)."""
    cdef int t
    cdef int8_t hit[NTILES]
    for t in range(NTILES):      # decided for all tiles first: the flips are simultaneous
        hit[t] = t != skip and not s.tile_covered[t] and tile_front(s, t) == alga
    for t in range(NTILES):
        if hit[t]:
            s.tile_side[t] = 1 - s.tile_side[t]


cdef inline int covered_tiles(const RState* s) noexcept nogil:
    cdef int t, n = 0
    for t in range(NTILES):
        n += s.tile_covered[t]
    return n


# ---------------------------------------------------------------- counting helpers

cdef inline int total(const int32_t* a, int n) noexcept nogil:
    cdef int i, k = 0
    for i in range(n):
        k += a[i]
    return k


cdef inline int total16(const int16_t* a) noexcept nogil:
    return a[0] + a[1] + a[2] + a[3] + a[4]


cdef int draw_colour(RState* s, Rng* rng) noexcept nogil:
    """Draws one polyp at random from the bag (uniform over tiles); -1 if it is empty."""
    cdef int n = total(s.bag, NCOL), k, x
    if n == 0:
        return -1
    k = rng_below(rng, n)
    for x in range(NCOL):
        if k < s.bag[x]:
            s.bag[x] -= 1
            return x
        k -= s.bag[x]
    return -1


cdef int bag_draw(RState* s) noexcept nogil:
    """A random polyp from the bag; a dry bag first gets the bonus row (once, section 5
    action 10); -1 if nothing is left."""
    if total(s.bag, NCOL) == 0 and not s.bonus_poured:
        pour_bonus(s)
    return draw_colour(s, &s.head.rng)


cdef void pour_bonus(RState* s) noexcept nogil:
    cdef int x
    for x in range(NCOL):
        s.bag[x] += s.bonus[x]
        s.bonus[x] = 0
    s.bonus_poured = 1


cdef bint polyp_available(const RState* s, int x) noexcept nogil:
    """A polyp of colour x for extra growth or action 8 (bonus row, else the bag: 6.4)."""
    return s.bonus[x] > 0 or (s.bag[x] > 0 and (not s.rules.bonus_fail or s.bonus_poured))


cdef void take_polyp(RState* s, int x) noexcept nogil:
    """Takes the bonus polyp x and replaces it from the bag, or takes x from the bag."""
    if s.bonus[x] > 0:
        s.bonus[x] = 0
        if s.bag[x] > 0 and not s.bonus_poured:
            s.bag[x] -= 1
            s.bonus[x] = 1
    else:
        s.bag[x] -= 1


cdef inline int own_shrimps_on(const RState* s, int b, int who) noexcept nogil:
    return popcount(s.shr_of[who][b])


cdef int own_shrimp_cells(const RState* s, int who, int* out) noexcept nogil:
    """The cells of the seat's shrimps on the boards, ascending (action 5 numbers them)."""
    cdef int b, n = 0
    cdef uint64_t m
    for b in range(s.n_boards):
        m = s.shr_of[who][b]
        while m and n < MAX_SHRIMPS:
            out[n] = b * BCELLS + lowest(m)
            m &= m - 1
            n += 1
    return n


cdef int own_shrimp_cell(const RState* s, int who, int k) noexcept nogil:
    """own_shrimp_cells()[k] (the seat has more than k shrimps on the boards)."""
    cdef int b, c
    for b in range(s.n_boards):
        c = popcount(s.shr_of[who][b])
        if k < c:
            return b * BCELLS + nth_bit(s.shr_of[who][b], k)
        k -= c
    return -1


cdef int empty_cells(const RState* s) noexcept nogil:
    """Playable cells without a polyp on every board (section 9, condition 3)."""
    cdef int b, n = 0
    for b in range(s.n_boards):
        n += popcount(s.playable[b] & ~occ_all(s, b))
    return n


# ---------------------------------------------------------------- board state changes

cdef inline void put_polyp(RState* s, int cell, int x) noexcept nogil:
    s.cell_colour[cell] = <int8_t>x
    s.occ[cell // BCELLS][x] |= bit(cell)


cdef inline void lift_polyp(RState* s, int cell) noexcept nogil:
    cdef int x = s.cell_colour[cell]
    s.occ[cell // BCELLS][x] &= ~bit(cell)
    s.cell_colour[cell] = -1


cdef uint64_t coral_of(const RState* s, int cell) noexcept nogil:
    """The cells (board mask) of the coral holding `cell`."""
    cdef int x = s.cell_colour[cell]
    return spread(bit(cell), s.occ[cell // BCELLS][x]) if x >= 0 else 0


cdef inline int shrimp_rank(const RState* s, int cell) noexcept nogil:
    """How many shrimps stand on lower cells of the cell's board (its index in guard[b])."""
    return popcount(s.shr[cell // BCELLS] & (bit(cell) - 1))


cdef void put_shrimp(RState* s, int cell, int who) noexcept nogil:
    cdef int b = cell // BCELLS, k = shrimp_rank(s, cell), j
    for j in range(popcount(s.shr[b]), k, -1):
        s.guard[b][j] = s.guard[b][j - 1]
    s.guard[b][k] = coral_of(s, cell)
    s.cell_shrimp[cell] = <int8_t>who
    s.shr[b] |= bit(cell)
    s.shr_of[who][b] |= bit(cell)


cdef void lift_shrimp(RState* s, int cell) noexcept nogil:
    cdef int b = cell // BCELLS, n = popcount(s.shr[b]), j
    for j in range(shrimp_rank(s, cell), n - 1):
        s.guard[b][j] = s.guard[b][j + 1]
    s.guard[b][n - 1] = 0
    s.shr_of[s.cell_shrimp[cell]][b] &= ~bit(cell)
    s.cell_shrimp[cell] = NO_ONE
    s.shr[b] &= ~bit(cell)


cdef void refresh_guards(RState* s, int b) noexcept nogil:
    """guard[b] after the polyps of board b changed."""
    cdef uint64_t m = s.shr[b]
    cdef int j = 0
    while m:
        s.guard[b][j] = coral_of(s, b * BCELLS + lowest(m))
        m &= m - 1
        j += 1


cdef uint64_t guarded_cells(const RState* s, int b) noexcept nogil:
    """Cells of every coral on board b that carries a shrimp."""
    cdef uint64_t out = 0
    cdef int j
    for j in range(popcount(s.shr[b])):
        out |= s.guard[b][j]
    return out


cdef uint64_t merge_ban(const RState* s, int b, int x) noexcept nogil:
    """Cells where a polyp of colour x would connect two guarded x corals (6.1)."""
    cdef uint64_t m = s.shr[b] & s.occ[b][x], once = 0, twice = 0, a
    cdef int c
    while m:
        c = lowest(m)
        m &= m - 1
        a = nbr(spread((<uint64_t>1) << c, s.occ[b][x]))
        twice |= once & a
        once |= a
    return twice


ctypedef struct Survey:             # each board's shrimps and corals, once per legal call
    uint64_t polyps[MAX_PLAYERS]      # cells holding a polyp
    uint64_t guarded[MAX_PLAYERS]     # cells of the corals carrying a shrimp
    uint64_t prot[MAX_PLAYERS]        # protected polyps (section 6): each shrimp's polyp
                                      # and its neighbours in the same coral (same colour
                                      # and adjacent means same coral)
    int own[MAX_PLAYERS]              # the current seat's shrimps on the board
    uint64_t ban[MAX_PLAYERS][NCOL]   # merge_ban() of each board and colour
    int n_mine                        # the current seat's shrimps on the boards, in the
    int mine[MAX_SHRIMPS]             # order of own_shrimp_cells(), with the cells of
    uint64_t mine_coral[MAX_SHRIMPS]  # their corals (0 on bare rock)


cdef void survey(const RState* s, Survey* S) noexcept nogil:
    """Fills S from the corals under the shrimps (kept in the state: nothing is spread)."""
    cdef int b, c, x, j
    cdef uint64_t m, one, coral, around, mine
    cdef uint64_t once[NCOL]
    S.n_mine = 0
    for b in range(s.n_boards):
        S.polyps[b] = occ_all(s, b)
        S.guarded[b] = 0
        S.prot[b] = 0
        for x in range(NCOL):
            S.ban[b][x] = 0
            once[x] = 0
        mine = s.shr_of[s.head.current][b]
        S.own[b] = popcount(mine)
        m = s.shr[b]
        j = 0
        while m:
            c = lowest(m)
            m &= m - 1
            coral = s.guard[b][j]
            j += 1
            one = (<uint64_t>1) << c
            if coral:
                x = s.cell_colour[b * BCELLS + c]
                S.guarded[b] |= coral
                S.prot[b] |= one | (nbr(one) & coral)
                around = nbr(coral)             # merge ban: next to two guarded x corals
                S.ban[b][x] |= once[x] & around
                once[x] |= around
            if (mine & one) and S.n_mine < MAX_SHRIMPS:
                S.mine[S.n_mine] = b * BCELLS + c
                S.mine_coral[S.n_mine] = coral
                S.n_mine += 1


cdef uint64_t lay_cells(const RState* s, const Survey* S, int b, int x,
                        int beats) noexcept nogil:
    """Cells of board b where a polyp of colour x (stronger than the colours in `beats`) may
    be laid now: empty playable cells without a shrimp (6.1), or attacks (6.2): a weaker,
    unprotected polyp next to an x coral of at least 2 polyps; never where it would merge
    two guarded x corals."""
    cdef uint64_t mine = s.occ[b][x], weak = 0, big
    cdef int y
    for y in range(NCOL):
        if (beats >> y) & 1:
            weak |= s.occ[b][y]
    big = mine & nbr(mine)          # cells of x corals with 2+ polyps
    return (((s.playable[b] & ~S.polyps[b]) | (weak & nbr(big) & ~S.prot[b])) & ~s.shr[b]
            & ~S.ban[b][x])


# ---------------------------------------------------------------- end of the game

cdef void tie_keys(const RState* s, int who, int* key) noexcept nogil:
    """Section 11: score, then consumed polyps, larva cubes, polyps behind the screen and
    polyps in the corals carrying the seat's shrimps."""
    cdef const RPlayer* pl = &s.p[who]
    cdef int b, j, n = 0
    cdef uint64_t m
    key[0] = pl.score
    key[1] = total16(pl.consumed)
    key[2] = total16(pl.larva)
    key[3] = total16(pl.screen)
    for b in range(s.n_boards):
        m = s.shr[b]
        j = 0
        while m:
            if (s.shr_of[who][b] >> lowest(m)) & 1:
                n += popcount(s.guard[b][j])
            m &= m - 1
            j += 1
    key[4] = n


cdef int fish_score(const RState* s, int who, const int* v) noexcept nogil:
    cdef int x, n = 0
    for x in range(NCOL):
        n += s.p[who].fish[x] * v[x]
    return n


cdef void finish(RState* s, int reason) noexcept nogil:
    """Score (section 8) and share the win among the seats equal on every tie-break (11)."""
    cdef int v[NCOL]
    cdef int keys[MAX_PLAYERS][5]
    cdef int i
    colour_values(s, v)
    for i in range(s.head.players):
        s.p[i].score = <int16_t>fish_score(s, i, v)
        tie_keys(s, i, keys[i])
    share_best(s, &keys[0][0], 5)
    end_game(s, reason)
    s.head.current = 0


cdef inline uint64_t bare_shrimps(const RState* s, int who, int b) noexcept nogil:
    """The cells of board b where a shrimp of `who` stands on bare rock."""
    return s.shr_of[who][b] & ~occ_all(s, b)


cdef int first_bare_shrimp(const RState* s, int who) noexcept nogil:
    """The lowest cell where a shrimp of `who` stands on bare rock, or -1."""
    cdef int b
    for b in range(s.n_boards):
        if bare_shrimps(s, who, b):
            return b * BCELLS + lowest(bare_shrimps(s, who, b))
    return -1


cdef bint bare_shrimp(const RState* s, int who) noexcept nogil:
    return first_bare_shrimp(s, who) >= 0


cdef void return_bare_shrimps(RState* s, int who) noexcept nogil:
    """A turn that stops at once leaves no shrimp on bare rock (section 4): back behind
    the screen."""
    cdef int cell = first_bare_shrimp(s, who)
    while cell >= 0:
        lift_shrimp(s, cell)
        s.p[who].shrimps_screen += 1
        cell = first_bare_shrimp(s, who)


cdef void reset_turn(RState* s) noexcept nogil:
    s.acted = 0
    s.plays = 0
    s.play_colour = -1
    s.play_screen = 0
    s.intro_used = 0
    s.tile_alga_used = 0
    s.shrimp_moves = 0
    memset(s.run_moved, 0, sizeof(s.run_moved))


cdef void trigger_end(RState* s, int reason) noexcept nogil:
    """Section 9: a condition is met.  By default the turn stops at once (A8); with
    end_stops_turn off the ender finishes the turn and the first condition met takes
    effect after its action 10 (collect)."""
    if s.phase == PH_FINAL:
        return
    if s.rules.end_stops_turn:
        start_end(s, reason)
    elif s.end_pending == END_RUNNING:
        s.end_pending = reason


cdef void start_end(RState* s, int reason) noexcept nogil:
    """The end takes effect: after conditions 1 and 2 every other seat, clockwise from the
    ender's left, gets one eat-only turn; after 3 and 4 the game is over."""
    return_bare_shrimps(s, s.head.current)
    if reason == END_TILES_COVERED or reason == END_FOURTH_SHRIMP:
        s.ender = s.head.current
        s.end_pending = reason
        s.final_left = s.head.players - 1
        s.phase = PH_FINAL
        s.head.current = (s.head.current + 1) % s.head.players
        reset_turn(s)
        if s.final_left == 0:
            finish(s, reason)
    else:
        finish(s, reason)


# ---------------------------------------------------------------- setup (section 3)

cdef void m_setup(void* vs, const void* rules, int players, const SeatParams* seats,
                  const Rng* rng) noexcept nogil:
    cdef RState* s = <RState*>vs
    cdef RRules* R
    cdef int i, j, b, c, x, k, lay, first, seat
    cdef int order[MAX_LAYOUTS]
    begin_setup(&ENGINE, s, rules, players, rng)
    R = &s.rules
    s.ender = -1
    s.alga_space = -1
    reset_turn(s)
    for c in range(NCELLS):
        s.cell_colour[c] = -1
        s.cell_shrimp[c] = NO_ONE
    for x in range(NCOL):
        s.bag[x] = R.polyps_per_colour
        s.larva_supply[x] = R.larva_per_colour
    for x in range(NALG):
        s.alga_supply[x] = R.algae_per_colour
    # 1-2. Boards at random, with their start polyps.
    for i in range(R.n_layouts):
        order[i] = i
    for i in range(players):
        j = i + rng_below(&s.head.rng, R.n_layouts - i)
        order[i], order[j] = order[j], order[i]
    s.n_boards = players
    for b in range(players):
        lay = order[b]
        s.board_layout[b] = <int8_t>lay
        s.playable[b] = R.layout_playable[lay]
        s.light[b] = R.layout_light[lay]
        for c in range(BCELLS):
            x = R.layout_start[lay][c]
            if x >= 0:
                put_polyp(s, b * BCELLS + c, x)
                s.bag[x] -= 1
    # 3. The bonus row.
    for x in range(NCOL):
        s.bonus[x] = 1
        s.bag[x] -= 1
    # 5. All tiles on one face, by a coin flip unless the rules fix it.
    k = R.initial_side if R.initial_side >= 0 else rng_below(&s.head.rng, 2)
    for i in range(NTILES):
        s.tile_side[i] = <int8_t>k
    # 6-7. Larva cubes on the spaces; the colour of one drawn polyp names the first space.
    for i in range(NSPACES):
        s.space_cube[i] = 1
        s.larva_supply[R.cycle[i]] -= 1
    x = draw_colour(s, &s.head.rng)
    s.bag[x] += 1
    first = 0
    for i in range(NSPACES):
        if R.cycle[i] == x:
            first = i
    for j in range(NSPACES):
        for k in range(R.deal[j]):
            s.space_polyps[(first + j) % NSPACES][draw_colour(s, &s.head.rng)] += 1
    # 8-10. Start player, shrimps, hands in turn order.
    s.start_player = rng_below(&s.head.rng, players) if R.start_random else 0
    for i in range(players):
        seat = (s.start_player + i) % players
        s.p[seat].shrimps_screen = <int16_t>R.shrimps_per_player
        for k in range(R.hands[players - 2][i] + R.seat_polyps[i]):
            s.p[seat].screen[draw_colour(s, &s.head.rng)] += 1
    s.phase = PH_FISH
    s.head.current = s.start_player


# ---------------------------------------------------------------- legal actions

cdef inline int next_seat(const RState* s, int seat) noexcept nogil:
    return (seat + 1) % s.head.players


# The legal actions of a position are found as runs: a run is an action id `base` and a bit
# mask, one action base + i for each set bit i (the cells of a board, colours, targets).
# Listing them (legal_actions) writes every action; the random agent only needs one, which
# random_action finds by counting bits, so that a position with ~300 actions is not listed.
cdef enum:
    MAX_RUNS = 128      # eats 8, lays 2 x 5 x 4, intros 4, algae 5 x 4, moves 8 x 5, singles

ctypedef struct Runs:
    int n
    int base[MAX_RUNS]
    uint64_t mask[MAX_RUNS]


cdef inline void add_run(Runs* R, int base, uint64_t mask) noexcept nogil:
    """Appends a run; runs are added in ascending action order, so the list is ascending."""
    if mask:
        R.base[R.n] = base
        R.mask[R.n] = mask
        R.n += 1


cdef int legal_eats(const RState* s, const Survey* S, Runs* R) noexcept nogil:
    """Action 1: a coral of at least eat_min_size polyps carrying the seat's own shrimp."""
    cdef int k
    for k in range(S.n_mine):
        if popcount(S.mine_coral[k]) >= s.rules.eat_min_size:
            add_run(R, A_EAT + S.mine[k], 1)


cdef inline uint64_t colours_where(const int16_t* counts) noexcept nogil:
    """The colours (bits) with a positive count."""
    cdef int x
    cdef uint64_t m = 0
    for x in range(NCOL):
        if counts[x] > 0:
            m |= (<uint64_t>1) << x
    return m


# The set bits of a byte, ascending (the rest 0): masks are turned into action lists 8
# cells at a time (a vectorized add) instead of one bit at a time.
cdef int8_t BYTE_BITS[256][8]
for _v in range(256):
    _k = 0
    for _j in range(8):
        BYTE_BITS[_v][_j] = 0
        if (_v >> _j) & 1:
            BYTE_BITS[_v][_k] = _j
            _k += 1
# emit_mask writes up to 7 ints past the actions it lists; legal-action buffers hold
# MAX_LEGAL ints and never more than NUM_ACTIONS actions, so this slack is always there.
assert NUM_ACTIONS + 8 <= MAX_LEGAL


cdef inline int emit_mask(int* out, int n, int base, uint64_t m) noexcept nogil:
    """out[n..) = base + each set bit's position in m, ascending; returns the new n."""
    cdef int* dst
    cdef const int8_t* bits
    cdef Py_ssize_t j
    while m:
        dst = out + n
        bits = BYTE_BITS[m & 0xFF]
        for j in range(8):
            dst[j] = base + bits[j]
        n += popcount(m & 0xFF)
        m >>= 8
        base += 8
    return n


cdef inline int nth_bit(uint64_t m, int k) noexcept nogil:
    """The position of the k-th (from 0) set bit of m, which has more than k set bits."""
    cdef int at = 0, c = popcount(m & 0xFF)
    while k >= c:                # whole bytes first
        k -= c
        m >>= 8
        at += 8
        c = popcount(m & 0xFF)
    return at + BYTE_BITS[m & 0xFF][k]


cdef bint may_lay(const RState* s, int x) noexcept nogil:
    """A lay of colour x continues the open play or starts a new one (at most 2 a turn)."""
    if s.play_colour == x:
        return True
    return s.plays < 2 and s.p[s.head.current].larva[x] > 0


cdef uint64_t alga_targets(const RState* s, int alga) noexcept nogil:
    """Action 7 placements of a cylinder of `alga` (bit 0 the alga space, bit t + 1 tile
    t): the alga space always; a tile only with the open-sea shrimp, once a turn, matching
    the front alga, uncovered, and the last tile only with 2+ polyps in the fish (section 5
    action 7)."""
    cdef const RPlayer* pl = &s.p[s.head.current]
    cdef uint64_t m = 1
    cdef int t
    if not pl.open_sea_shrimp or s.tile_alga_used:
        return m
    if covered_tiles(s) == NTILES - 1 and total16(pl.fish) < 2:
        return m
    for t in range(NTILES):
        if not s.tile_covered[t] and tile_front(s, t) == alga:
            m |= (<uint64_t>1) << (t + 1)
    return m


cdef void legal_moves(const RState* s, const Survey* S, Runs* R, bint bare_only) noexcept nogil:
    """Action 5 for every own shrimp on a board: another polyp of its coral, a polyp of a
    coral without shrimp, bare playable rock, or back behind the screen; at most 2 own
    shrimps per board.  After max_shrimp_moves moves in a turn (a simulator bound) only a
    shrimp on bare rock may still move, and not onto bare rock.  The destinations off the
    shrimp's own board are the same for every shrimp.  bare_only: the moves of the shrimps
    on bare rock alone (all the quick policy weighs)."""
    cdef int b, c, src, db, k, base
    cdef uint64_t common[MAX_PLAYERS]
    cdef bint capped = s.shrimp_moves >= s.rules.max_shrimp_moves
    for db in range(s.n_boards):
        common[db] = S.polyps[db] & ~S.guarded[db]
        if not capped:
            common[db] |= s.playable[db] & ~S.polyps[db] & ~s.shr[db]
    for k in range(S.n_mine):
        src = S.mine[k]
        b = src // BCELLS
        c = src % BCELLS
        if (capped or bare_only) and s.cell_colour[src] >= 0:
            continue
        base = A_MOVE + k * (NCELLS + 1)
        for db in range(s.n_boards):
            if db != b:
                if S.own[db] < 2:
                    add_run(R, base + db * BCELLS, common[db])
            else:
                add_run(R, base + db * BCELLS,
                        common[db] | (S.mine_coral[k] & ~((<uint64_t>1) << c)))
        add_run(R, base + SCREEN, 1)


cdef void legal_runs(const RState* s, Runs* R, bint bare_only) noexcept nogil:
    """The legal actions of a running game as runs, ascending (bare_only: of the shrimp
    moves only those of shrimps on bare rock, legal_moves)."""
    cdef const RPlayer* pl = &s.p[s.head.current]
    cdef int x, b, a, t, k
    cdef Survey S
    cdef int beats[NCOL]
    cdef bint from_screen[NCOL]
    cdef bint from_front[NCOL]
    cdef uint64_t lays[NCOL][MAX_PLAYERS]
    cdef uint64_t m
    cdef uint64_t targets[NALG]
    cdef bint full
    R.n = 0
    if s.phase == PH_FISH:
        add_run(R, A_FISH, colours_where(pl.screen))
        return
    if s.phase == PH_PICK:
        m = 0
        for x in range(NCOL):
            if s.larva_supply[x] > 0 and (s.rules.pick_duplicates or s.picks == 0 or
                                          x != s.first_pick):
                m |= (<uint64_t>1) << x
        add_run(R, A_PICK, m)
        return
    survey(s, &S)
    if s.phase == PH_FINAL:
        legal_eats(s, &S, R)
        add_run(R, A_FINAL_PASS, 1)
        return
    if not s.acted:
        legal_eats(s, &S, R)
    full = full_in_play(s)
    # Actions 2/3, one polyp at a time: from behind the screen, then from in front (the
    # cells of each colour are found once for both).
    for x in range(NCOL):
        beats[x] = 0
    for t in range(NTILES):
        beats[tile_strong(s, t)] |= 1 << tile_weak(s, t)
    for x in range(NCOL):
        from_screen[x] = from_front[x] = False
        if not may_lay(s, x) or (full and x != s.play_colour):
            continue
        from_screen[x] = pl.screen[x] > 0 and (s.play_colour != x or s.play_screen < 4)
        from_front[x] = pl.consumed[x] > 0
        if from_screen[x] or from_front[x]:
            for b in range(s.n_boards):
                lays[x][b] = lay_cells(s, &S, b, x, beats[x])
    for k in range(2):
        for x in range(NCOL):
            if from_screen[x] if k == 0 else from_front[x]:
                for b in range(s.n_boards):
                    add_run(R, (A_LAY_SCREEN if k == 0 else A_LAY_CONSUMED) + x * NCELLS
                            + b * BCELLS, lays[x][b])
    if s.play_colour >= 0:
        add_run(R, A_END_PLAY, 1)
    if full:
        legal_moves(s, &S, R, bare_only)
        return
    if s.rules.min_polyps == 0 and s.plays < 2:
        add_run(R, A_EMPTY_PLAY, colours_where(pl.larva))
    # Action 4: onto any polyp of a coral without shrimp, at most 2 own shrimps a board.
    if not s.intro_used and pl.shrimps_screen > 0:
        for b in range(s.n_boards):
            if S.own[b] < 2:
                add_run(R, A_INTRO + b * BCELLS, S.polyps[b] & ~S.guarded[b])
    m = 0
    for x in range(NCOL):
        if pl.consumed[x] > 0 and s.larva_supply[x] > 0:
            m |= (<uint64_t>1) << x
    add_run(R, A_TO_LARVA, m)
    for a in range(NALG):
        targets[a] = alga_targets(s, a) if s.alga_supply[a] > 0 else 0
    for x in range(NCOL):
        if pl.consumed[x] > 0:
            for a in range(NALG):
                add_run(R, A_ALGA + (x * NALG + a) * ALGA_TARGETS, targets[a])
    m = 0
    for x in range(NCOL):
        if pl.larva[x] > 0 and polyp_available(s, x):
            m |= (<uint64_t>1) << x
    add_run(R, A_TO_POLYP, m)
    if not bare_shrimp(s, s.head.current):
        add_run(R, A_COLLECT, ((<uint64_t>1) << NSPACES) - 1)
    legal_moves(s, &S, R, bare_only)


cdef int m_legal(const void* vs, int* out) noexcept nogil:
    cdef const RState* s = <const RState*>vs
    cdef Runs R
    cdef int i, n = 0
    if s.head.terminal:
        return 0
    legal_runs(s, &R, False)
    for i in range(R.n):
        n = emit_mask(out, n, R.base[i], R.mask[i])
    return n


cdef int m_search_actions(const void* vs, int* out) noexcept nogil:
    """The actions a search considers (contract search_actions): the legal ones less the
    moves of a shrimp that moved since the turn's last other action.  Its moves in a row end
    where one move from its first cell ends (a polyp of the coral it reached had no other
    shrimp, nor has the coral it left; bare rock, the screen and the per-board limit are the
    same from there, and one move counts less against the turn's bound), so every legal turn
    stays reachable; without them a search spends most of a game moving shrimps about."""
    cdef const RState* s = <const RState*>vs
    cdef Runs R
    cdef int i, src, dst, n = 0
    if s.head.terminal:
        return 0
    legal_runs(s, &R, False)
    for i in range(R.n):
        if R.base[i] >= A_MOVE:
            src = own_shrimp_cell(s, s.head.current, (R.base[i] - A_MOVE) // (NCELLS + 1))
            if s.run_moved[src // BCELLS] & bit(src):
                continue
        n = emit_mask(out, n, R.base[i], R.mask[i])
    if n > 0:
        return n
    # Only moves of those shrimps are legal (a shrimp on bare rock bars the collect, and
    # nothing else is left): every turn reachable from here was reachable by other moves
    # before, so the search only leads the shrimps on bare rock off it, which ends the turn.
    for i in range(R.n):
        src = own_shrimp_cell(s, s.head.current, (R.base[i] - A_MOVE) // (NCELLS + 1))
        if s.cell_colour[src] < 0:
            dst = (R.base[i] - A_MOVE) % (NCELLS + 1)
            n = emit_mask(out, n, R.base[i], R.mask[i] if dst == SCREEN else
                          R.mask[i] & occ_all(s, dst // BCELLS))
    return n if n > 0 else m_legal(vs, out)


cdef int m_random_action(const void* vs, Rng* rng) noexcept nogil:
    """legal_actions()[rng_below(rng, n)] without listing the n actions (contract)."""
    cdef const RState* s = <const RState*>vs
    cdef Runs R
    cdef int i, k, c, n = 0
    legal_runs(s, &R, False)
    for i in range(R.n):
        n += popcount(R.mask[i])
    k = rng_below(rng, n)
    for i in range(R.n):
        c = popcount(R.mask[i])
        if k < c:
            return R.base[i] + nth_bit(R.mask[i], k)
        k -= c
    return -1


# ---------------------------------------------------------------- apply

cdef void close_play(RState* s) noexcept nogil:
    s.play_colour = -1
    s.play_screen = 0


cdef void extra_growth(RState* s, int b, int cell, int x) noexcept nogil:
    """6.3: a polyp next to an empty light rock spreads onto it (bonus row polyp), unless
    that would merge two guarded corals or no polyp of the colour is left."""
    cdef int L = s.light[b]
    cdef uint64_t lb
    if not s.rules.extra_growth or L < 0:
        return
    lb = (<uint64_t>1) << L
    if not (nbr(bit(cell)) & lb) or (occ_all(s, b) & lb) or (s.shr[b] & lb):
        return
    if (merge_ban(s, b, x) & lb) or not polyp_available(s, x):
        return
    take_polyp(s, x)
    put_polyp(s, b * BCELLS + L, x)


cdef void lay(RState* s, int x, int cell, bint from_screen) noexcept nogil:
    cdef RPlayer* pl = &s.p[s.head.current]
    cdef int y = s.cell_colour[cell]
    if s.play_colour != x:
        close_play(s)
        s.plays += 1
        s.play_colour = x
        pl.larva[x] -= 1
        s.larva_supply[x] += 1
    if from_screen:
        pl.screen[x] -= 1
        s.play_screen += 1
        if pl.seen_screen[x] > 0:
            pl.seen_screen[x] -= 1
    else:
        pl.consumed[x] -= 1
    if y >= 0:                 # attack: the polyp goes in front of the attacker's screen
        lift_polyp(s, cell)
        pl.consumed[y] += 1
    put_polyp(s, cell, x)
    if y < 0 or s.rules.attack_extra_growth:
        extra_growth(s, cell // BCELLS, cell, x)
    refresh_guards(s, cell // BCELLS)
    if s.rules.reef_full_each_placement and empty_cells(s) == 0:
        trigger_end(s, END_REEF_FULL)


cdef inline bint full_in_play(const RState* s) noexcept nogil:
    """Condition 3 met inside a larva play that is checked when the play ends (spec 9,
    reef_full_check = action): the play may go on (attacks only) or end, nothing else."""
    return (s.play_colour >= 0 and not s.rules.reef_full_each_placement
            and empty_cells(s) == 0)


cdef void eat(RState* s, int cell, int extra_return) noexcept nogil:
    """Action 1: the coral leaves the board; 4 polyps (options) go to the bag, the rest to
    the fish; the shrimp goes to the open sea (first meal) or into the fish."""
    cdef RPlayer* pl = &s.p[s.head.current]
    cdef int b = cell // BCELLS, x = s.cell_colour[cell], n, ret, c
    cdef uint64_t m = coral_of(s, cell)
    n = popcount(m)
    ret = s.rules.eat_return + extra_return
    if ret > n:
        ret = n
    s.bag[x] += ret
    pl.fish[x] += n - ret
    pl.seen_fish[x] += n - ret
    while m:
        c = lowest(m)
        m &= m - 1
        lift_polyp(s, b * BCELLS + c)
    lift_shrimp(s, cell)
    refresh_guards(s, b)
    if pl.open_sea_shrimp:
        pl.fish_shrimps += 1
    else:
        pl.open_sea_shrimp = 1
    pl.eaten += 1


cdef void place_alga(RState* s, int x, int alga, int target) noexcept nogil:
    cdef RPlayer* pl = &s.p[s.head.current]
    pl.consumed[x] -= 1
    s.bag[x] += 1
    s.alga_supply[alga] -= 1
    if target == 0:
        if s.alga_space >= 0:
            s.alga_supply[s.alga_space] += 1
        s.alga_space = alga
        flip_front(s, alga, -1)
    else:
        s.tile_covered[target - 1] = 1
        s.tile_alga_used = 1
        flip_front(s, alga, target - 1)
        if covered_tiles(s) == NTILES:
            trigger_end(s, END_TILES_COVERED)


cdef void collect(RState* s, int k) noexcept nogil:
    """Action 10 and the refill; then the next seat's turn (or condition 4)."""
    cdef RPlayer* pl = &s.p[s.head.current]
    cdef int x = s.rules.cycle[k], i, y
    cdef bint short_ = False
    pl.larva[x] += 1
    for y in range(NCOL):
        pl.screen[y] += s.space_polyps[k][y]
        pl.seen_screen[y] += s.space_polyps[k][y]
        s.space_polyps[k][y] = 0
    if s.larva_supply[x] > 0:
        s.larva_supply[x] -= 1
    else:
        s.space_cube[k] = 0
        short_ = True
    for i in range(NSPACES):
        if total(s.space_polyps[i], NCOL) < 3:
            y = bag_draw(s)
            if y < 0:
                short_ = True
                break
            s.space_polyps[i][y] += 1
    if s.rules.end4_literal and total(s.bag, NCOL) < 3:
        short_ = True
    if s.end_pending != END_RUNNING:     # the ender finished its turn (end_stops_turn off)
        s.turns += 1
        start_end(s, s.end_pending)
        return
    if short_:
        finish(s, END_SUPPLY)
        return
    s.turns += 1
    if s.turns >= s.rules.max_turns:
        finish(s, END_TURN_LIMIT)
        return
    s.head.current = next_seat(s, s.head.current)
    reset_turn(s)


cdef void move_shrimp(RState* s, int src, int dst) noexcept nogil:
    lift_shrimp(s, src)
    if dst == SCREEN:
        s.p[s.head.current].shrimps_screen += 1
    else:
        put_shrimp(s, dst, s.head.current)
    s.shrimp_moves += 1


cdef void setup_action(RState* s, int a) noexcept nogil:
    cdef RPlayer* pl = &s.p[s.head.current]
    cdef int x
    if a < A_PICK:
        x = a - A_FISH
        pl.screen[x] -= 1
        pl.fish[x] += 1
        s.head.current = next_seat(s, s.head.current)
        if s.head.current == s.start_player:
            s.phase = PH_PICK
        return
    x = a - A_PICK
    pl.larva[x] += 1
    s.larva_supply[x] -= 1
    s.picks += 1
    s.first_pick = x
    if s.picks >= s.rules.larva_picks:
        s.picks = 0
        s.head.current = next_seat(s, s.head.current)
        if s.head.current == s.start_player:
            s.phase = PH_TURN


cdef void final_action(RState* s, int a) noexcept nogil:
    if a != A_FINAL_PASS:
        eat(s, a - A_EAT, 1)
    s.final_left -= 1
    if s.final_left == 0:
        finish(s, s.end_pending)
    else:
        s.head.current = next_seat(s, s.head.current)


cdef void m_apply(void* vs, int a) noexcept nogil:
    cdef RState* s = <RState*>vs
    cdef RPlayer* pl = &s.p[s.head.current]
    cdef int x, k, src, dst
    s.head.moves += 1
    if s.phase == PH_FISH or s.phase == PH_PICK:
        setup_action(s, a)
        return
    if s.phase == PH_FINAL:
        final_action(s, a)
        return
    if a >= A_MOVE:                      # action 5: may interrupt a larva play
        k = a - A_MOVE
        s.acted = 1
        src = own_shrimp_cell(s, s.head.current, k // (NCELLS + 1))
        dst = k % (NCELLS + 1)
        move_shrimp(s, src, dst)
        s.run_moved[src // BCELLS] &= ~bit(src)
        if dst != SCREEN:
            s.run_moved[dst // BCELLS] |= bit(dst)
        return
    memset(s.run_moved, 0, sizeof(s.run_moved))     # any other action ends a run of moves
    if a >= A_LAY_SCREEN and a < A_END_PLAY:
        k = a - A_LAY_SCREEN
        s.acted = 1
        lay(s, (k % (NCOL * NCELLS)) // NCELLS, k % NCELLS, k < NCOL * NCELLS)
        return
    close_play(s)                        # any other action finishes the open play
    s.acted = 1
    if a < A_LAY_SCREEN:
        eat(s, a - A_EAT, 0)
        if pl.eaten >= s.rules.shrimps_per_player:
            trigger_end(s, END_FOURTH_SHRIMP)
    elif a == A_END_PLAY:
        if not s.rules.reef_full_each_placement and empty_cells(s) == 0:
            trigger_end(s, END_REEF_FULL)
    elif a < A_INTRO:
        x = a - A_EMPTY_PLAY
        s.plays += 1
        pl.larva[x] -= 1
        s.larva_supply[x] += 1
    elif a < A_TO_LARVA:
        pl.shrimps_screen -= 1
        put_shrimp(s, a - A_INTRO, s.head.current)
        s.intro_used = 1
    elif a < A_ALGA:
        x = a - A_TO_LARVA
        pl.consumed[x] -= 1
        s.bag[x] += 1
        pl.larva[x] += 1
        s.larva_supply[x] -= 1
    elif a < A_TO_POLYP:
        k = a - A_ALGA
        place_alga(s, k // (NALG * ALGA_TARGETS), (k // ALGA_TARGETS) % NALG, k % ALGA_TARGETS)
    elif a < A_COLLECT:
        x = a - A_TO_POLYP
        pl.larva[x] -= 1
        s.larva_supply[x] += 1
        take_polyp(s, x)
        pl.screen[x] += 1
        pl.seen_screen[x] += 1
    elif a < A_FINAL_PASS:
        collect(s, a - A_COLLECT)


# ---------------------------------------------------------------- scores and outcomes

cdef void m_scores(const void* vs, double* out) noexcept nogil:
    """Final scores; before the end, what the fish hold at the current colour values."""
    cdef const RState* s = <const RState*>vs
    cdef int v[NCOL]
    cdef int i
    colour_values(s, v)
    for i in range(s.head.players):
        out[i] = s.p[i].score if s.head.terminal else fish_score(s, i, v)



GAME_OUTCOMES = ("turns", "tiles_covered", "bag_left", "polyps_on_reef", "final_round")
SEAT_OUTCOMES = ("corals_eaten", "fish_polyps", "consumed", "larva_cubes", "screen_polyps",
                 "guarded_polyps", "open_sea_shrimp")


cdef void m_outcomes(const void* vs, double* g, double* so) noexcept nogil:
    cdef const RState* s = <const RState*>vs
    cdef int keys[5]
    cdef int i, b, n = 0, ns = 7
    for b in range(s.n_boards):
        n += popcount(occ_all(s, b))
    g[0] = s.turns
    g[1] = covered_tiles(s)
    g[2] = total(s.bag, NCOL)
    g[3] = n
    g[4] = 1 if s.ender >= 0 else 0
    for i in range(s.head.players):
        tie_keys(s, i, keys)
        so[i * ns + 0] = s.p[i].eaten
        so[i * ns + 1] = total16(s.p[i].fish)
        so[i * ns + 2] = keys[1]
        so[i * ns + 3] = keys[2]
        so[i * ns + 4] = keys[3]
        so[i * ns + 5] = keys[4]
        so[i * ns + 6] = s.p[i].open_sea_shrimp


# ---------------------------------------------------------------- heuristic
#
# In integer units: own(seat) - mean over rivals of their public coral potential / 2, as
# (2 (n - 1) own - sum of rivals) / (2 (n - 1)).  Only what the seat may see is used (its
# own screen and fish, and public parts), so the fast path below is exact.

cdef inline int coral_pot(int n, int v) noexcept nogil:
    return v * (W_GROW * (n if n < 4 else 4) + W_EDIBLE * (n - 4 if n > 4 else 0))


cdef int seat_terms(const RState* s, int seat, const int* v) noexcept nogil:
    """The seat's own value apart from its guarded corals and bare shrimps."""
    cdef const RPlayer* pl = &s.p[seat]
    cdef int x, h = 0
    for x in range(NCOL):
        h += W_FISH * pl.fish[x] * v[x] + W_CONSUMED * pl.consumed[x]
    return (h + screen_value(screen_sum(pl, v)) + cube_value(total16(pl.larva))
            + (W_LICENCE if pl.open_sea_shrimp else 0) + W_MEAL * pl.eaten)


cdef inline int screen_sum(const RPlayer* pl, const int* v) noexcept nogil:
    """The polyps behind the seat's screen weighted by their colour values."""
    return (pl.screen[0] * v[0] + pl.screen[1] * v[1] + pl.screen[2] * v[2]
            + pl.screen[3] * v[3] + pl.screen[4] * v[4])


cdef inline int screen_value(int weighted) noexcept nogil:
    return W_SCREEN * (weighted if weighted < SCREEN_CAP else SCREEN_CAP)


cdef inline int screen_delta(const RPlayer* pl, const int* v, int d) noexcept nogil:
    """The value change of d more weighted polyps behind the seat's screen."""
    cdef int n = screen_sum(pl, v)
    return screen_value(n + d) - screen_value(n)


cdef inline int cube_value(int n) noexcept nogil:
    return W_CUBE * (n if n < CUBE_CAP else CUBE_CAP)


cdef inline int cube_delta(const RPlayer* pl, int d) noexcept nogil:
    """The value change of d more larva cubes behind the seat's screen."""
    cdef int n = total16(pl.larva)
    return cube_value(n + d) - cube_value(n)


cdef inline double combine(const RState* s, int own, int rivals) noexcept nogil:
    cdef int k = 2 * (s.head.players - 1)
    return <double>(k * own - rivals) / k


cdef double terminal_value(const RState* s, int seat) noexcept nogil:
    """A finished game as the seat may judge it: its own score against the rivals' scores
    as far as it saw their fish fill (public meals; each setup polyp stays secret), so
    that the value never depends on hidden parts (the fast path below relies on it)."""
    cdef int v[NCOL]
    cdef int i, x, own = s.p[seat].score, seen, best_other = -1
    colour_values(s, v)
    for i in range(s.head.players):
        if i != seat:
            seen = 0
            for x in range(NCOL):
                seen += s.p[i].seen_fish[x] * v[x]
            if seen > best_other:
                best_other = seen
    return own + 0.01 * (own - best_other) + (1.0 if own > best_other else 0.0)


cdef double m_heuristic(const void* vs, int seat) noexcept nogil:
    cdef const RState* s = <const RState*>vs
    cdef int v[NCOL]
    cdef int own, rivals = 0, b, c, j, who, cell, x, size
    cdef uint64_t m
    if s.head.terminal:
        return terminal_value(s, seat)
    colour_values(s, v)
    own = seat_terms(s, seat, v)
    for b in range(s.n_boards):
        m = guarded_cells(s, b)
        for x in range(NCOL):
            own += W_FREE * v[x] * popcount(s.occ[b][x] & ~m)
        m = s.shr[b]
        j = 0
        while m:
            c = lowest(m)
            m &= m - 1
            cell = b * BCELLS + c
            who = s.cell_shrimp[cell]
            size = popcount(s.guard[b][j])
            j += 1
            if s.cell_colour[cell] < 0:
                if who == seat:
                    own -= W_BARE
            elif who == seat:
                own += coral_pot(size, v[s.cell_colour[cell]])
            else:
                rivals += coral_pot(size, v[s.cell_colour[cell]])
    return combine(s, own, rivals)


# ---------------------------------------------------------------- exact fast action values
#
# Every coral of every board is labelled once per decision (id, size, colour, guard); each
# action's value is then the base value plus the change of the few terms it touches.

ctypedef struct Labels:
    int8_t id[NCELLS]             # coral id of the cell's polyp, -1 if none
    int16_t size[MAX_PLAYERS * MAX_CORALS]
    int8_t colour[MAX_PLAYERS * MAX_CORALS]
    int8_t guard[MAX_PLAYERS * MAX_CORALS]     # owner of the coral's shrimp, -1 if none
    int16_t shrimp[MAX_PLAYERS * MAX_CORALS]   # the shrimp's cell
    int n


cdef void label(const RState* s, Labels* L) noexcept nogil:
    cdef int b, x, c, k
    cdef uint64_t left, m, g
    memset(L.id, -1, sizeof(L.id))
    L.n = 0
    for b in range(s.n_boards):
        for x in range(NCOL):
            left = s.occ[b][x]
            while left:
                m = spread(left & (~left + 1), s.occ[b][x])
                left &= ~m
                k = L.n
                L.n += 1
                L.size[k] = <int16_t>popcount(m)
                L.colour[k] = <int8_t>x
                L.guard[k] = NO_ONE
                g = m & s.shr[b]
                if g:
                    L.shrimp[k] = <int16_t>(b * BCELLS + lowest(g))
                    L.guard[k] = s.cell_shrimp[L.shrimp[k]]
                while m:
                    c = lowest(m)
                    m &= m - 1
                    L.id[b * BCELLS + c] = <int8_t>k


cdef inline void coral_term(int who, int x, int size, const int* v, int seat, int sign,
                            int* own, int* rivals) noexcept nogil:
    """Adds sign * the value of a coral of colour x and `size` guarded by `who`: the
    guard's potential (own or a rival's), or board presence if unguarded."""
    if who == NO_ONE:
        own[0] += sign * W_FREE * size * v[x]
    elif who == seat:
        own[0] += sign * coral_pot(size, v[x])
    else:
        rivals[0] += sign * coral_pot(size, v[x])


cdef inline void add_pot(const Labels* L, int k, int size, const int* v, int seat,
                         int sign, int* own, int* rivals) noexcept nogil:
    """coral_term of labelled coral k at `size`."""
    coral_term(L.guard[k], L.colour[k], size, v, seat, sign, own, rivals)


cdef inline int polyp_spent(const RState* s, int seat, const int* v, int x,
                            bint from_screen) noexcept nogil:
    """The value change of the polyp a lay of colour x takes (and of the larva cube a new
    play takes): the part of lay_delta() that does not depend on the cell."""
    return ((cube_delta(&s.p[seat], -1) if s.play_colour != x else 0)
            + (screen_delta(&s.p[seat], v, -v[x]) if from_screen else -W_CONSUMED))


cdef int lay_delta(const RState* s, const Labels* L, int seat, const int* v, int x, int cell,
                   int spent, int* own, int* rivals) noexcept nogil:
    """Value change of laying colour x on cell (as lay() does it), `spent` the part of
    polyp_spent(); returns -1 if the fast path cannot tell (extra growth that would need
    the hidden bag)."""
    cdef int b = cell // BCELLS, y = s.cell_colour[cell], k, merged = 1, guard = NO_ONE, guards = 0
    cdef int ids[8]
    cdef int n0, nid = 0, LC = s.light[b], cy
    cdef uint64_t lb = 0, m
    cdef bint grow = False
    own[0] += spent
    if y >= 0:
        own[0] += W_CONSUMED
        cy = L.id[cell]
        add_pot(L, cy, L.size[cy], v, seat, -1, own, rivals)
        k = 0
        if L.guard[cy] != NO_ONE:       # the part holding the shrimp stays guarded
            k = popcount(spread(bit(L.shrimp[cy]), s.occ[b][y] & ~bit(cell)))
            add_pot(L, cy, k, v, seat, 1, own, rivals)
        coral_term(NO_ONE, y, L.size[cy] - 1 - k, v, seat, 1, own, rivals)
    # The x corals joined: those next to the cell, and those next to the light rock when
    # the polyp spreads onto it (unless that would join two guarded corals).
    nid = collect_ids(s, L, b, nbr(bit(cell)) & s.occ[b][x], ids, 0)
    n0 = nid
    if s.rules.extra_growth and LC >= 0 and (y < 0 or s.rules.attack_extra_growth):
        lb = (<uint64_t>1) << LC
        if (nbr(bit(cell)) & lb) and not ((occ_all(s, b) | s.shr[b]) & lb):
            if s.bonus[x] == 0:
                return -1
            grow = True
            nid = collect_ids(s, L, b, nbr(lb) & s.occ[b][x], ids, nid)
            for k in range(nid):
                guards += L.guard[ids[k]] != NO_ONE
            if guards >= 2:
                grow = False
                nid = n0
    for k in range(nid):
        merged += L.size[ids[k]]
        add_pot(L, ids[k], L.size[ids[k]], v, seat, -1, own, rivals)
        if L.guard[ids[k]] != NO_ONE:
            guard = L.guard[ids[k]]
    if grow:
        merged += 1
    coral_term(guard, x, merged, v, seat, 1, own, rivals)
    return 0


cdef int collect_ids(const RState* s, const Labels* L, int b, uint64_t cells, int* ids,
                     int n) noexcept nogil:
    """Adds the distinct coral ids of the cells to ids[0..n); returns the new count."""
    cdef int c, k, j
    cdef bint dup
    while cells:
        c = lowest(cells)
        cells &= cells - 1
        k = L.id[b * BCELLS + c]
        dup = False
        for j in range(n):
            if ids[j] == k:
                dup = True
        if not dup:
            ids[n] = k
            n += 1
    return n


cdef void values_after_alga(const RState* s, int alga, int target, int* v) noexcept nogil:
    """Colour values after a cylinder of `alga` goes onto target (0 the alga space, else
    tile target - 1), as place_alga() flips the tiles."""
    cdef int t, side
    for t in range(NCOL):
        v[t] = 1
    for t in range(NTILES):
        side = s.tile_side[t]
        if t != target - 1 and not s.tile_covered[t] and tile_front(s, t) == alga:
            side = 1 - side
        v[s.rules.tile_strong[t] if side == 0 else s.rules.tile_weak[t]] += 1


cdef int bare_penalty(const RState* s, int seat) noexcept nogil:
    cdef int b, n = 0
    for b in range(s.n_boards):
        n += W_BARE * popcount(bare_shrimps(s, seat, b))
    return n


cdef bint collect_may_end(const RState* s) noexcept nogil:
    """Whether a collect (action 10) could end the game or start the final round."""
    cdef int k
    if s.end_pending != END_RUNNING or s.turns + 1 >= s.rules.max_turns:
        return True
    for k in range(NSPACES):
        if s.larva_supply[s.rules.cycle[k]] == 0:
            return True
    # A refill draws at most one polyp per space (and end4_literal_bag_lt3 wants 3 left).
    return total(s.bag, NCOL) < NSPACES + 3


cdef double value_after(const RState* s, int a, int seat) noexcept nogil:
    """heuristic(apply(s, a), seat) on a copy of the true state.  Exact for what the fast
    path uses it on (collects that may end the game, final-round meals) without peeking:
    whether they end the game depends on public counts only, the polyps a refill draws go
    to the open sea (which the heuristic does not read), and a finished game's value uses
    only the seat's own and public parts (terminal_value)."""
    cdef RState t
    memcpy(&t, s, sizeof(RState))
    m_apply(&t, a)
    return m_heuristic(&t, seat)


cdef int m_action_values(const void* vs, int seat, const int* acts, int n,
                         double* out) noexcept nogil:
    cdef const RState* s = <const RState*>vs
    cdef const RPlayer* pl = &s.p[seat]
    cdef Labels L
    cdef int v[NCOL]
    cdef int v2[NCOL]
    cdef int base_own, base_rivals = 0, own, rivals, i, a, k, x, cell
    cdef int alga, target, ret, first_move, n_shrimps, w = 2 * (s.head.players - 1)
    cdef bint ending
    cdef int shrimps[MAX_SHRIMPS]
    cdef int num[MAX_LEGAL]         # each value's numerator (combine(): num / w)
    cdef int spent[2][NCOL]         # polyp_spent() of a lay from behind the screen / in front
    # Near a full reef a lay may end the game, or spread a polyp only if the (hidden) bag
    # holds its colour: the generic path decides then.
    if seat != s.head.current or s.head.terminal or (s.phase == PH_TURN and empty_cells(s) <= 2):
        return 0
    ending = (collect_may_end(s) if s.phase == PH_TURN else
              s.phase == PH_FINAL and s.final_left <= 1)
    colour_values(s, v)
    label(s, &L)
    n_shrimps = own_shrimp_cells(s, seat, shrimps)
    base_own = seat_terms(s, seat, v) - bare_penalty(s, seat)
    for k in range(L.n):
        add_pot(&L, k, L.size[k], v, seat, 1, &base_own, &base_rivals)
    for x in range(NCOL):
        spent[0][x] = polyp_spent(s, seat, v, x, True)
        spent[1][x] = polyp_spent(s, seat, v, x, False)
    first_move = first_at_least(acts, n, A_MOVE)    # the shrimp moves close the list:
    for i in range(first_move):                     # they are valued apart, below
        a = acts[i]
        own = base_own
        rivals = base_rivals
        num[i] = 0
        if ending and a >= A_COLLECT and a <= A_FINAL_PASS or (ending and s.phase == PH_FINAL):
            continue                # valued by value_after(), below
        if a < A_PICK:
            x = a - A_FISH
            own += W_FISH * v[x] + screen_delta(pl, v, -v[x])
        elif a < A_EAT:
            own += cube_delta(pl, 1)
        elif a < A_LAY_SCREEN:
            cell = a - A_EAT
            k = L.id[cell]
            x = L.colour[k]
            ret = s.rules.eat_return + (1 if s.phase == PH_FINAL else 0)
            if ret > L.size[k]:
                ret = L.size[k]
            own += W_FISH * (L.size[k] - ret) * v[x] - coral_pot(L.size[k], v[x]) + W_MEAL
            if not pl.open_sea_shrimp:
                own += W_LICENCE
        elif a < A_END_PLAY:
            k = a - A_LAY_SCREEN
            x = (k % (NCOL * NCELLS)) // NCELLS
            if lay_delta(s, &L, seat, v, x, k % NCELLS, spent[k // (NCOL * NCELLS)][x],
                         &own, &rivals) < 0:
                return 0
        elif a == A_END_PLAY:
            pass
        elif a < A_INTRO:
            own += cube_delta(pl, -1)
        elif a < A_TO_LARVA:
            k = L.id[a - A_INTRO]
            add_pot(&L, k, L.size[k], v, seat, -1, &own, &rivals)
            coral_term(seat, L.colour[k], L.size[k], v, seat, 1, &own, &rivals)
        elif a < A_ALGA:
            own += cube_delta(pl, 1) - W_CONSUMED
        elif a < A_TO_POLYP:
            k = a - A_ALGA
            x = k // (NALG * ALGA_TARGETS)
            alga = (k // ALGA_TARGETS) % NALG
            target = k % ALGA_TARGETS
            values_after_alga(s, alga, target, v2)
            own = seat_terms(s, seat, v2) - W_CONSUMED
            if target == 0 or covered_tiles(s) < NTILES - 1 or not s.rules.end_stops_turn:
                own -= bare_penalty(s, seat)  # the last tile ends the turn: shrimps go home
            rivals = 0
            for k in range(L.n):
                add_pot(&L, k, L.size[k], v2, seat, 1, &own, &rivals)
        elif a < A_COLLECT:
            x = a - A_TO_POLYP
            own += screen_delta(pl, v, v[x]) + cube_delta(pl, -1)
        elif a < A_FINAL_PASS:
            k = a - A_COLLECT
            ret = 0
            for x in range(NCOL):
                ret += v[x] * s.space_polyps[k][x]
            own += cube_delta(pl, 1) + screen_delta(pl, v, ret)
        num[i] = w * own - rivals
    move_numerators(s, &L, seat, v, shrimps, n_shrimps, &acts[first_move], n - first_move,
                    w * base_own - base_rivals, w, &num[first_move])
    for i in range(n):              # combine()
        out[i] = <double>num[i] / w
    if ending:
        for i in range(first_move):
            a = acts[i]
            if a >= A_COLLECT and a <= A_FINAL_PASS or s.phase == PH_FINAL:
                out[i] = value_after(s, a, seat)
    return 1


cdef inline int first_at_least(const int* acts, int n, int a) noexcept nogil:
    """The index of the first action >= a in the ascending acts[0..n) (n if none)."""
    cdef int lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) // 2
        if acts[mid] < a:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef void move_numerators(const RState* s, const Labels* L, int seat, const int* v,
                          const int* shrimps, int n_shrimps, const int* acts, int n,
                          int base, int w, int* num) noexcept nogil:
    """The value numerators (see m_action_values) of n shrimp moves (action 5) from the
    base numerator: the change of leaving the shrimp's cell (its coral is unguarded now;
    bare rock: no penalty) plus that of arriving on the destination (the coral is guarded
    now; bare rock: the penalty), none within one coral.  Both parts are tabled once, per
    shrimp and per coral, so that the loop over a shrimp's moves has no branch."""
    cdef int arrive[MAX_PLAYERS * MAX_CORALS + 2]   # [coral + 2]; [1] bare rock, [0] screen
    cdef int8_t dest_id[NCELLS + 1]         # the coral of each destination (-1 bare, -2 screen)
    cdef int i = 0, j, k, hi, leave, leave_id, keep, own, rivals, first
    if n == 0:
        return
    memcpy(dest_id, L.id, NCELLS)
    dest_id[SCREEN] = -2
    arrive[0] = 0
    arrive[1] = -w * W_BARE
    for k in range(L.n):
        own = rivals = 0
        add_pot(L, k, L.size[k], v, seat, -1, &own, &rivals)
        coral_term(seat, L.colour[k], L.size[k], v, seat, 1, &own, &rivals)
        arrive[k + 2] = w * own - rivals
    for j in range(n_shrimps):
        first = A_MOVE + j * (NCELLS + 1)           # the shrimp's move to cell 0
        hi = i
        while hi < n and acts[hi] - first <= SCREEN:
            hi += 1
        if hi == i:
            continue
        own = rivals = 0
        leave_id = L.id[shrimps[j]]
        if leave_id < 0:
            leave_id = -3                   # bare rock: every move leaves it
            own = W_BARE
        else:
            add_pot(L, leave_id, L.size[leave_id], v, seat, -1, &own, &rivals)
            coral_term(NO_ONE, L.colour[leave_id], L.size[leave_id], v, seat, 1, &own, &rivals)
        leave = w * own - rivals
        for i in range(i, hi):
            k = dest_id[acts[i] - first]
            keep = -(k != leave_id)                 # all bits when it changes coral
            num[i] = base + ((leave + arrive[k + 2]) & keep)
        i = hi


# ---------------------------------------------------------------- the quick policy
#
# A rollout policy about as cheap as a random move that plays close to greedy.  From the
# legal runs (which the random agent finds too) it estimates each run's best action by the
# heuristic's terms, from bit masks alone (no coral is labelled): a meal first, then lays
# that grow one of the seat's guarded corals, attack a rival's or take free rock, an
# introduction onto a coral of 2+ polyps, trades, and the collect worth the most polyps;
# shrimp moves only for a shrimp on bare rock, algae never (the colour values they change
# cost a full look).  Within a run the cells of the best kind are equal: one at random.
# It reads only what the acting seat sees (its own zones and the board).

cdef enum:
    POLICY_QUICK = 0
    QUICK_MEAL = 1000000     # an eat outranks every other estimate (greedy eats at once)


ctypedef struct Quick:              # the acting seat's terms, once per decision
    int v[NCOL]                     # colour values
    int w                           # the rivals' weight: value = w * own - rivals
    int seat
    uint64_t grow[MAX_PLAYERS][NCOL]    # cells next to the seat's guarded x corals
    int grow_gain[MAX_PLAYERS][NCOL]    # the potential one more polyp adds there
    uint64_t rival[MAX_PLAYERS][NCOL]   # cells of the rivals' guarded x corals
    uint64_t rival_any[MAX_PLAYERS]     # cells of the rivals' guarded corals
    uint64_t own[MAX_PLAYERS]           # cells of the seat's guarded corals
    uint64_t free[MAX_PLAYERS]          # cells without a polyp
    int spent[2][NCOL]                  # polyp_spent() of a lay from behind the screen / in front
    uint64_t salt                   # one random draw per decision: which cell of a kind,
    int start                       # and which of equal values (see pick and offer)
    int best_value
    int best
    uint32_t best_key


cdef void quick_terms(const RState* s, Quick* q, Rng* rng) noexcept nogil:
    cdef int b, c, j, x, gain
    cdef uint64_t m
    colour_values(s, q.v)
    q.seat = s.head.current
    q.w = 2 * (s.head.players - 1)
    q.best = -1
    q.salt = rng_next(rng)
    q.start = <int>(q.salt % BCELLS)
    for x in range(NCOL):
        q.spent[0][x] = polyp_spent(s, q.seat, q.v, x, True)
        q.spent[1][x] = polyp_spent(s, q.seat, q.v, x, False)
    for b in range(s.n_boards):
        q.own[b] = q.rival_any[b] = 0
        q.free[b] = ~occ_all(s, b)
        for x in range(NCOL):
            q.grow[b][x] = q.rival[b][x] = 0
            q.grow_gain[b][x] = 0
        m = s.shr[b]
        j = 0
        while m:
            c = lowest(m)
            m &= m - 1
            x = s.cell_colour[b * BCELLS + c]
            if x >= 0 and s.cell_shrimp[b * BCELLS + c] == q.seat:
                q.own[b] |= s.guard[b][j]
                q.grow[b][x] |= nbr(s.guard[b][j])
                gain = coral_pot(popcount(s.guard[b][j]) + 1, q.v[x]) - coral_pot(
                    popcount(s.guard[b][j]), q.v[x])
                q.grow_gain[b][x] = gain if gain > q.grow_gain[b][x] else q.grow_gain[b][x]
            elif x >= 0:
                q.rival[b][x] |= s.guard[b][j]
                q.rival_any[b] |= s.guard[b][j]
            j += 1


cdef inline int pick(const Quick* q, uint64_t m) noexcept nogil:
    """One set bit of m (non-zero): the first from the decision's random start cell on, so
    that a rollout draws once per decision, not once per run."""
    cdef uint64_t later = m & (~(<uint64_t>0) << q.start)
    return lowest(later if later else m)


cdef inline void offer(Quick* q, int value, int action) noexcept nogil:
    """A candidate action with its estimated value: the best so far is kept; equal values
    are ordered by a hash of the action salted by the decision's draw (a random order)."""
    cdef uint32_t key = <uint32_t>(rng_tie_key(q.salt, action) >> 32)
    if q.best < 0 or value > q.best_value or (value == q.best_value and key > q.best_key):
        q.best_value = value
        q.best = action
        q.best_key = key


cdef int coral_gain(const RState* s, const Quick* q, int b, uint64_t m, int* cell) noexcept nogil:
    """Of the cells m of board b (polyps without a shrimp), one with the best gain of
    guarding its coral (a coral of 2+ polyps, then the best colour value), and that gain."""
    cdef int x, gain, best = -1
    cdef uint64_t pick, big
    for x in range(NCOL):
        pick = m & s.occ[b][x]
        if not pick:
            continue
        big = pick & nbr(s.occ[b][x])
        gain = (coral_pot(2, q.v[x]) - 2 * W_FREE * q.v[x] if big else
                coral_pot(1, q.v[x]) - W_FREE * q.v[x])
        if gain > best:
            best = gain
            cell[0] = b * BCELLS + lowest(big if big else pick)
    return best


cdef void quick_lay(const RState* s, Quick* q, int base, uint64_t m) noexcept nogil:
    """The lays of one run (a colour, a board, from behind the screen or in front)."""
    cdef int k = base - A_LAY_SCREEN, x, b, y, spent
    cdef uint64_t c
    x = (k % (NCOL * NCELLS)) // NCELLS
    b = (k % NCELLS) // BCELLS
    spent = q.spent[k // (NCOL * NCELLS)][x]
    c = m & q.grow[b][x] & ~q.own[b]
    if c:
        offer(q, q.w * (spent + q.grow_gain[b][x]), base + pick(q, c))
    if m & q.rival_any[b]:
        for y in range(NCOL):
            c = m & q.rival[b][y]
            if c:
                offer(q, q.w * (spent + W_CONSUMED + W_FREE * q.v[x]) + W_GROW * q.v[y],
                      base + pick(q, c))
    c = m & ~q.grow[b][x] & q.free[b]
    if c:
        offer(q, q.w * (spent + W_FREE * q.v[x]), base + pick(q, c))


cdef void quick_move(const RState* s, Quick* q, int base, uint64_t m) noexcept nogil:
    """A shrimp move, only for a shrimp on bare rock (its penalty, and it bars the
    collect): back behind the screen, or onto the best coral."""
    cdef int k = (base - A_MOVE) // (NCELLS + 1), cell, gain
    if s.cell_colour[own_shrimp_cell(s, q.seat, k)] >= 0:
        return
    if base - A_MOVE - k * (NCELLS + 1) == SCREEN:
        offer(q, q.w * W_BARE, base)
        return
    gain = coral_gain(s, q, (base - A_MOVE - k * (NCELLS + 1)) // BCELLS, m, &cell)
    if gain >= 0:
        offer(q, q.w * (W_BARE + gain), A_MOVE + k * (NCELLS + 1) + cell)


cdef void quick_single(const RState* s, Quick* q, int base, uint64_t m) noexcept nogil:
    """The runs of actions one colour or space each (and the eats, one run each)."""
    cdef const RPlayer* pl = &s.p[q.seat]
    cdef int i, x, gain, polyps
    if base < A_PICK:                              # setup: the fish takes a valuable polyp
        for x in range(NCOL):
            if (m >> x) & 1:
                offer(q, q.v[x], base + x)
    elif base < A_EAT:
        offer(q, 0, base + pick(q, m))
    elif base < A_LAY_SCREEN:                     # the largest meal first
        offer(q, QUICK_MEAL + popcount(coral_of(s, base - A_EAT)), base)
    elif base == A_END_PLAY or base == A_FINAL_PASS:
        offer(q, 0, base)
    elif base < A_INTRO:                          # an empty larva play
        offer(q, q.w * cube_delta(pl, -1), base + pick(q, m))
    elif base < A_ALGA:                           # consumed polyp -> larva cube
        offer(q, q.w * (cube_delta(pl, 1) - W_CONSUMED), base + pick(q, m))
    elif base >= A_TO_POLYP and base < A_COLLECT:
        for x in range(NCOL):
            if (m >> x) & 1:
                offer(q, q.w * (screen_delta(pl, q.v, q.v[x]) + cube_delta(pl, -1)),
                      base + x)
    elif base >= A_COLLECT and base < A_FINAL_PASS:
        for i in range(NSPACES):
            polyps = 0
            for x in range(NCOL):
                polyps += q.v[x] * s.space_polyps[i][x]
            offer(q, q.w * (cube_delta(pl, 1) + screen_delta(pl, q.v, polyps)), base + i)


cdef int quick_policy(const RState* s, Rng* rng) noexcept nogil:
    cdef Runs R
    cdef Quick q
    cdef int i, b, cell, gain
    legal_runs(s, &R, True)
    quick_terms(s, &q, rng)
    for i in range(R.n):
        if R.base[i] >= A_LAY_SCREEN and R.base[i] < A_END_PLAY:
            quick_lay(s, &q, R.base[i], R.mask[i])
        elif R.base[i] >= A_INTRO and R.base[i] < A_TO_LARVA:
            b = (R.base[i] - A_INTRO) // BCELLS
            gain = coral_gain(s, &q, b, R.mask[i], &cell)
            if gain >= 0:
                offer(&q, q.w * gain, A_INTRO + cell)
        elif R.base[i] >= A_MOVE:
            quick_move(s, &q, R.base[i], R.mask[i])
        elif R.base[i] < A_ALGA or R.base[i] >= A_TO_POLYP:
            quick_single(s, &q, R.base[i], R.mask[i])
    if q.best >= 0:
        return q.best
    return m_random_action(s, rng)           # only algae (or moves) are left


cdef int m_policy(const void* vs, int which, const double* params, Rng* rng,
                  void* scratch) noexcept nogil:
    return quick_policy(<const RState*>vs, rng)


# ---------------------------------------------------------------- observe

cdef void redeal(int16_t* hand, const int16_t* seen, int32_t* pool, int* pool_n,
                 Rng* rng) noexcept nogil:
    """Replaces the unseen part of a hidden hand by as many polyps drawn at random from the
    pool; the seen part stays."""
    cdef int x, k, n = total16(hand) - total16(seen), r
    for x in range(NCOL):
        hand[x] = seen[x]
    for k in range(n):
        r = rng_below(rng, pool_n[0])
        for x in range(NCOL):
            if r < pool[x]:
                pool[x] -= 1
                hand[x] += 1
                break
            r -= pool[x]
        pool_n[0] -= 1


cdef void m_observe(const void* vs, int seat, void* out, Rng* rng) noexcept nogil:
    """What `seat` may see: the bag and the unseen parts of the other seats' screens and
    fish are pooled and dealt again at random (same sizes); what every seat saw go there
    (seen_screen, seen_fish), its own zones and the public parts stay.  The future chance
    is hidden too: the view draws from a stream of its own."""
    cdef RState* o = <RState*>out
    cdef int32_t pool[NCOL]
    cdef int i, x, n
    memcpy(o, vs, sizeof(RState))
    rng_seed(&o.head.rng, rng_next(rng), 0, 0, 0)
    for x in range(NCOL):
        pool[x] = o.bag[x]
    for i in range(o.head.players):
        if i != seat:
            for x in range(NCOL):
                pool[x] += (o.p[i].screen[x] - o.p[i].seen_screen[x]
                            + o.p[i].fish[x] - o.p[i].seen_fish[x])
    n = total(pool, NCOL)
    for i in range(o.head.players):
        if i != seat:
            redeal(o.p[i].screen, o.p[i].seen_screen, pool, &n, rng)
            redeal(o.p[i].fish, o.p[i].seen_fish, pool, &n, rng)
    for x in range(NCOL):
        o.bag[x] = pool[x]




# ================================================================ Python face

COLOURS = ("grey", "orange", "pink", "white", "yellow")
LETTERS = "GOPWY"
ALGAE = ("blue", "green", "purple", "red")
PHASES = ("fish", "pick", "turn", "final")
END_REASONS = ("running", "all_tiles_covered", "fourth_shrimp", "reef_full", "supply_exhausted",
               "turn_limit")
SIDES = ("S", "N")
BOARD_CELLS = BCELLS     # a board's cells: global cell id = board * BOARD_CELLS + r * BOARD_COLS + c
BOARD_COLS = COLS


HOME = __name__.rpartition(".")[0]  # this game's package, where its data lives
DEFAULT_TILES = load_data(HOME, "data/tiles.json")["tiles"]
DEFAULT_BOARDS = load_data(HOME, "data/boards.json")["boards"]
DEFAULT_CYCLE = load_data(HOME, "data/open_sea.json")["cycle"]
DEFAULT_SETUP = load_data(HOME, "data/setup.json")

# The action ids by name (core_cy/engine/actions.py), from the same constants as the C encoding.
ACTION_SPACE = ActionSpace(
    NUM_ACTIONS,
    Kind("fish", A_FISH, colour=NCOL),
    Kind("pick", A_PICK, colour=NCOL),
    Kind("eat", A_EAT, cell=NCELLS),
    Kind("lay_screen", A_LAY_SCREEN, colour=NCOL, cell=NCELLS),
    Kind("lay_consumed", A_LAY_CONSUMED, colour=NCOL, cell=NCELLS),
    Kind("end_play", A_END_PLAY),
    Kind("empty_play", A_EMPTY_PLAY, colour=NCOL),
    Kind("intro", A_INTRO, cell=NCELLS),
    Kind("to_larva", A_TO_LARVA, colour=NCOL),
    Kind("alga", A_ALGA, polyp=NCOL, alga=NALG, target=ALGA_TARGETS),
    Kind("to_polyp", A_TO_POLYP, colour=NCOL),
    Kind("collect", A_COLLECT, space=NSPACES),
    Kind("final_pass", A_FINAL_PASS),
    Kind("move", A_MOVE, shrimp=MAX_SHRIMPS, dest=NCELLS + 1),
)


def parse_tiles(tiles):
    """The 10 coral tiles as (strong, weak, front, back) index tuples of side S (spec 2.3):
    every pair of coral colours exactly once, two different algae per tile."""
    where = "rule option 'tiles'"
    if not isinstance(tiles, list) or len(tiles) != NTILES:
        raise ValueError(f"{where} must list {NTILES} tiles")
    out, pairs = [], set()
    for i, t in enumerate(tiles):
        w = f"{where}[{i}]"
        if not isinstance(t, dict) or set(t) - {"id", "strong", "weak", "front", "back"}:
            raise ValueError(f"{w} must be an object with id, strong, weak, front, back")
        integer(t.get("id"), w + ".id", 1, NTILES)
        if t["id"] != i + 1:
            raise ValueError(f"{w}.id must be {i + 1} (tiles are listed in id order)")
        strong, weak = choice(t.get("strong"), w + ".strong", COLOURS), choice(t.get("weak"), w + ".weak", COLOURS)
        front, back = (choice(t.get("front"), w + ".front", ALGAE),
                       choice(t.get("back"), w + ".back", ALGAE))
        if strong == weak or front == back:
            raise ValueError(f"{w}: a tile shows two different colours and two different algae")
        pair = frozenset((strong, weak))
        if pair in pairs:
            raise ValueError(f"{w}: the pair {sorted(COLOURS[c] for c in pair)} is on two tiles")
        pairs.add(pair)
        out.append((strong, weak, front, back))
    return out


def parse_board(name, rows):
    """(playable mask, light cell or -1, start colours per cell) of a reef board: at most
    6 rows of at most 7 cells of '.', '+', 'L' or a start colour letter."""
    where = f"rule option 'boards'.{name}"
    if (not isinstance(rows, list) or not 1 <= len(rows) <= ROWS
            or not all(isinstance(r, str) and 1 <= len(r) <= COLS for r in rows)):
        raise ValueError(f"{where} must be 1..{ROWS} row strings of 1..{COLS} cells")
    playable, light, start = 0, -1, [-1] * BCELLS
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            cell = r * COLS + c
            if ch == ".":
                continue
            if ch not in "+L" + LETTERS:
                raise ValueError(f"{where}[{r}][{c}]: unknown cell {ch!r}; use '.', '+', 'L' "
                                 f"or one of {list(LETTERS)}")
            playable |= 1 << cell
            if ch == "L":
                if light >= 0:
                    raise ValueError(f"{where}: a board has at most one light rock")
                light = cell
            elif ch != "+":
                start[cell] = LETTERS.index(ch)
    return playable, light, start


def parse_setup(setup):
    where = "rule option 'setup'"
    keys = {"polyps_per_colour": (1, 100), "larva_per_colour": (1, 50), "algae_per_colour": (1, 50),
            "shrimps_per_player": (1, 8), "larva_picks": (0, 10), "eat_min_size": (1, 42),
            "eat_return": (0, 42)}
    if not isinstance(setup, dict) or set(setup) != set(keys) | {"hands", "open_sea_deal"}:
        raise ValueError(f"{where} must be an object with {sorted(set(keys) | {'hands', 'open_sea_deal'})}")
    out = {k: integer(setup[k], f"{where}.{k}", *keys[k]) for k in keys}
    deal = setup["open_sea_deal"]
    if not isinstance(deal, list) or len(deal) != NSPACES:
        raise ValueError(f"{where}.open_sea_deal must list {NSPACES} pile sizes")
    out["open_sea_deal"] = [integer(v, f"{where}.open_sea_deal[{i}]", 0, 3) for i, v in enumerate(deal)]
    hands = setup["hands"]
    if not isinstance(hands, dict) or set(hands) != {"2", "3", "4"}:
        raise ValueError(f"{where}.hands must give the hand sizes for \"2\", \"3\" and \"4\" players")
    out["hands"] = {}
    for k, v in hands.items():
        if not isinstance(v, list) or len(v) != int(k):
            raise ValueError(f"{where}.hands.{k} must list {k} hand sizes")
        out["hands"][k] = [integer(x, f"{where}.hands.{k}[{i}]", 1, 60) for i, x in enumerate(v)]
    return out


cdef bytes _pack(dict r, int players):
    cdef RRules R
    memset(&R, 0, sizeof(RRules))
    tiles = parse_tiles(r["tiles"])
    setup = parse_setup(r["setup"])
    R.n_layouts = len(r["boards"])
    for i, (name, rows) in enumerate(r["boards"].items()):
        playable, light, start = parse_board(name, rows)
        R.layout_playable[i] = playable
        R.layout_light[i] = light
        for c in range(BCELLS):
            R.layout_start[i][c] = start[c]
    for t, (a, b, f, k) in enumerate(tiles):
        R.tile_strong[t], R.tile_weak[t], R.tile_front[t], R.tile_back[t] = a, b, f, k
    for i, name in enumerate(r["open_sea_cycle"]):
        R.cycle[i] = COLOURS.index(name)
        R.deal[i] = setup["open_sea_deal"][i]
    for p in range(2, MAX_PLAYERS + 1):
        for i, h in enumerate(setup["hands"][str(p)]):
            R.hands[p - 2][i] = h
    for i, v in enumerate(r["seat_bonus_polyps"]):
        R.seat_polyps[i] = v
    R.polyps_per_colour = setup["polyps_per_colour"]
    R.larva_per_colour = setup["larva_per_colour"]
    R.algae_per_colour = setup["algae_per_colour"]
    R.shrimps_per_player = setup["shrimps_per_player"]
    R.larva_picks = setup["larva_picks"]
    R.eat_min_size = setup["eat_min_size"]
    R.eat_return = setup["eat_return"] + (1 if r["advanced_eat_return_plus_one"] else 0)
    R.pick_duplicates = r["larva_pick_duplicates"]
    R.initial_side = GAME.choice_index(r, "initial_side") - 1   # the choices: random, S, N
    R.start_random = GAME.choice_index(r, "start_player")
    R.extra_growth = not r["advanced_no_extra_growth"]
    R.end4_literal = r["end4_literal_bag_lt3"]
    R.min_polyps = r["larva_play_min_polyps"]
    R.bonus_fail = GAME.choice_index(r, "bonus_shortage")
    R.max_shrimp_moves = r["max_shrimp_moves_per_turn"]
    R.max_turns = r["max_turns"]
    R.end_stops_turn = r["end_stops_turn"]
    R.reef_full_each_placement = GAME.choice_index(r, "reef_full_check")
    R.attack_extra_growth = r["attack_extra_growth"]
    return (<char*>&R)[:sizeof(RRules)]


cdef inline RState* _st(State s):
    s._check_alive()
    return <RState*>s.buf


def _cell_name(cell):
    if cell == SCREEN:
        return "behind the screen"
    b, c = divmod(cell, BCELLS)
    return f"board {b} ({c // COLS},{c % COLS})"


def _counts(arr, names=COLOURS):
    return {names[i]: int(arr[i]) for i in range(len(names))}


DESCRIPTIONS = {
    "fish": "drop a {colour} polyp into the parrotfish",
    "pick": "pick a {colour} larva cube",
    "eat": "parrotfish eats the coral guarded at {cell}",
    "lay_screen": "lay a {colour} polyp from behind the screen {target} {cell}",
    "lay_consumed": "lay a {colour} polyp from the consumed polyps {target} {cell}",
    "end_play": "finish the larva play",
    "empty_play": "play a {colour} larva cube without polyps",
    "intro": "introduce a shrimp on {cell}",
    "to_larva": "trade a consumed {colour} polyp for a larva cube",
    "alga": "trade a consumed {polyp} polyp for a {alga} alga onto {where}",
    "to_polyp": "trade a {colour} larva cube for a polyp",
    "collect": "collect the {colour} larva space and end the turn",
    "final_pass": "eat nothing in the final round",
    "move": "move the shrimp on {src} to {dest}",
}


class ReefGame(AgentGame):
    name = "reef_encounter"
    title = "Reef Encounter"
    min_players = 2
    max_players = MAX_PLAYERS
    actions = ACTION_SPACE
    policies = {
        "quick": "a cheap rollout policy close to greedy: values exactly only a few "
                 "candidates (every single action, lays that grow an own guarded coral or "
                 "attack a rival's, one random action of each other kind) and plays the best",
    }
    # The measurements behind these values: docs/lab/search_agent.md (widen and turns:
    # docs/lab/2026-12-02-reef-search.md).
    search_defaults = {"iterations": 100, "rollout": "quick", "cutoff": 16, "widen": 0.5,
                       "turns": True}
    options = options_from_data(HOME, "options.toml", DEFAULT_TILES=DEFAULT_TILES,
                                DEFAULT_BOARDS=DEFAULT_BOARDS, DEFAULT_CYCLE=DEFAULT_CYCLE,
                                DEFAULT_SETUP=DEFAULT_SETUP)

    def __init__(self):
        self._rules_by_bytes = {}

    def check_rules(self, rules, players):
        parse_tiles(rules["tiles"])
        setup = parse_setup(rules["setup"])
        boards = rules["boards"]
        if not isinstance(boards, dict) or not 1 <= len(boards) <= MAX_LAYOUTS:
            raise ValueError(f"rule option 'boards' must name 1..{MAX_LAYOUTS} boards")
        if len(boards) < players:
            raise ValueError(f"rule option 'boards' has {len(boards)} boards; {players} "
                             f"players need {players}")
        starts = [0] * NCOL
        for name, rows in boards.items():
            parse_board(name, rows)
        cycle = rules["open_sea_cycle"]
        if not isinstance(cycle, list) or sorted(cycle) != sorted(COLOURS):
            raise ValueError(f"rule option 'open_sea_cycle' must list each of {list(COLOURS)} once")
        # Enough polyps for the worst case of start spaces, bonus row, open sea and hands.
        worst = max(sum(1 for row in rows for ch in row if ch in LETTERS) for rows in boards.values())
        hands = setup["hands"][str(players)]
        bonus = rules["seat_bonus_polyps"] or [0] * players
        for i, (h, b) in enumerate(zip(hands, bonus)):
            if h + b < 1:
                raise ValueError(f"rule option 'seat_bonus_polyps' leaves turn-order seat {i} "
                                 f"{h + b} polyps (it draws {h} by the setup): at least 1")
        need = players * worst + NCOL + sum(setup["open_sea_deal"]) + sum(hands) + sum(bonus)
        if need > NCOL * setup["polyps_per_colour"] - NCOL * 5:
            raise ValueError(f"rule option 'setup': {NCOL * setup['polyps_per_colour']} polyps "
                             f"are too few for this setup")
        if setup["larva_per_colour"] < 1 + players * setup["larva_picks"]:
            raise ValueError("rule option 'setup': larva_per_colour is too small for the picks")

    def pack_rules(self, rules, players):
        packed = _pack(rules, players)
        self._rules_by_bytes[packed] = rules
        return packed

    def rules_of(self, State state):
        """The resolved rules dict the state was made with."""
        cdef RState* s = _st(state)
        return self._rules_by_bytes[(<char*>&s.rules)[:sizeof(RRules)]]

    # ---- state dict ------------------------------------------------------------------
    def to_dict(self, State state):
        cdef RState* s = _st(state)
        cdef RPlayer* pl
        boards = []
        for b in range(s.n_boards):
            rows = []
            for r in range(ROWS):
                row = ""
                for c in range(COLS):
                    cell = b * BCELLS + r * COLS + c
                    x = s.cell_colour[cell]
                    if x >= 0:
                        row += LETTERS[x]
                    elif (s.playable[b] >> (r * COLS + c)) & 1:
                        row += "L" if s.light[b] == r * COLS + c else "+"
                    else:
                        row += "."
                rows.append(row)
            shrimps = [[(cell % BCELLS) // COLS, cell % COLS, int(s.cell_shrimp[cell])]
                       for cell in range(b * BCELLS, (b + 1) * BCELLS) if s.cell_shrimp[cell] >= 0]
            boards.append({"layout": list(self.rules_of(state)["boards"])[s.board_layout[b]],
                           "cells": rows, "shrimps": shrimps})
        seats = []
        for i in range(s.head.players):
            pl = &s.p[i]
            seats.append({
                "screen": _counts(pl.screen), "consumed": _counts(pl.consumed),
                "fish": _counts(pl.fish), "larva": _counts(pl.larva),
                "seen_screen": _counts(pl.seen_screen), "seen_fish": _counts(pl.seen_fish),
                "shrimps_behind_screen": int(pl.shrimps_screen),
                "fish_shrimps": int(pl.fish_shrimps), "open_sea_shrimp": bool(pl.open_sea_shrimp),
                "corals_eaten": int(pl.eaten), "score": int(pl.score),
                "win_share": float(s.head.share[i]),
            })
        return {
            "game": self.name, "players": int(s.head.players), "rules": self.rules_of(state),
            "phase": PHASES[s.phase], "current_player": int(s.head.current),
            "start_player": int(s.start_player), "setup_picks": int(s.picks),
            "first_pick": COLOURS[s.first_pick],
            "turn": {"acted": bool(s.acted), "plays": int(s.plays),
                     "play_colour": COLOURS[s.play_colour] if s.play_colour >= 0 else None,
                     "play_from_screen": int(s.play_screen), "shrimp_introduced": bool(s.intro_used),
                     "alga_on_tile": bool(s.tile_alga_used), "shrimp_moves": int(s.shrimp_moves),
                     **_moved_shrimps(s)},
            "boards": boards,
            "bag": _counts(s.bag), "bonus_row": _counts(s.bonus),
            "bonus_poured": bool(s.bonus_poured),
            "larva_supply": _counts(s.larva_supply), "alga_supply": _counts(s.alga_supply, ALGAE),
            "alga_space": ALGAE[s.alga_space] if s.alga_space >= 0 else None,
            "open_sea": [{"colour": COLOURS[s.rules.cycle[k]], "cube": bool(s.space_cube[k]),
                          "polyps": _counts(s.space_polyps[k])} for k in range(NSPACES)],
            "tiles": [{"side": SIDES[s.tile_side[t]], "covered": bool(s.tile_covered[t])}
                      for t in range(NTILES)],
            "ender": None if s.ender < 0 else int(s.ender), "final_left": int(s.final_left),
            "end_pending": END_REASONS[s.end_pending],
            "terminal": bool(s.head.terminal), "end_reason": END_REASONS[s.head.end_reason],
            "moves": int(s.head.moves), "turns": int(s.turns),
            "rng": contract.rng_to_dict(state),
            "seats": seats,
        }

    def fill_state(self, State state, data, rules):
        _fill(_st(state), data, rules)
        check_live(state)

    def view(self, State state, int seat, unsigned long long seed=0):
        """The state as `seat` may see it: the determinization look-ahead agents search on
        (the bag and the other seats' screens and fish dealt again from stream `seed`)."""
        cdef RState* s = _st(state)
        if not 0 <= seat < s.head.players:
            raise ValueError(f"seat must be in 0..{s.head.players - 1}, got {seat}")
        cdef State out = contract.blank_state(self, self.handle)
        cdef Rng rng
        rng_seed(&rng, seed, 0, 0, 0)
        m_observe(s, seat, out.buf, &rng)
        return out

    # ---- descriptions ----------------------------------------------------------------
    def describe(self, State state, action):
        cdef RState* s = _st(state)
        cdef int cells[MAX_SHRIMPS]
        kind, x = ACTION_SPACE.decode(action)
        names = {"colour": COLOURS[x["colour"]] if "colour" in x else None}
        if "cell" in x:
            names["cell"] = _cell_name(x["cell"])
            y = s.cell_colour[x["cell"]]
            names["target"] = "on" if y < 0 else f"attacking the {COLOURS[y]} polyp on"
        if kind == "alga":
            names.update(polyp=COLOURS[x["polyp"]], alga=ALGAE[x["alga"]],
                         where="the alga space" if x["target"] == 0 else f"coral tile {x['target']}")
        elif kind == "collect":
            names["colour"] = COLOURS[s.rules.cycle[x["space"]]]
        elif kind == "move":
            n = own_shrimp_cells(s, s.head.current, cells)
            names["src"] = _cell_name(cells[x["shrimp"]]) if x["shrimp"] < n else f"#{x['shrimp']}"
            names["dest"] = _cell_name(x["dest"])
        return DESCRIPTIONS[kind].format(**names)

    def score_breakdown(self, State state):
        """Per seat: the colour values, the fish contents with their points, the total and
        the tie-break counts (spec 8, 11).  Before the end, as if it ended now."""
        cdef RState* s = _st(state)
        cdef int v[NCOL]
        cdef int keys[5]
        colour_values(s, v)
        out = []
        for i in range(s.head.players):
            tie_keys(s, i, keys)
            fish = {COLOURS[x]: int(s.p[i].fish[x]) for x in range(NCOL)}
            points = {COLOURS[x]: int(s.p[i].fish[x] * v[x]) for x in range(NCOL)}
            out.append({"seat": i, "values": {COLOURS[x]: v[x] for x in range(NCOL)},
                        "fish": fish, "points": points, "total": sum(points.values()),
                        "consumed": keys[1], "larva_cubes": keys[2], "screen_polyps": keys[3],
                        "guarded_polyps": keys[4]})
        return out


def _counts_of(obj, key, names=COLOURS, hi=1000):
    """A {name: count} object with a count for each name, as a list."""
    m = obj.obj(key)
    if set(m.data) != set(names):
        fail(m.path, f"expected a count for each of {list(names)}, got {sorted(m.data)}")
    return [m.int(n, 0, hi) for n in names]


def _seen(seat, key, held):
    """The seen part of a hidden zone: at most what is there."""
    seen = _counts_of(seat, key)
    for x in range(NCOL):
        if seen[x] > held[x]:
            fail(seat.at(key), f"{seen[x]} {COLOURS[x]} polyps seen, but {held[x]} there")
    return seen


cdef dict _moved_shrimps(const RState* s):
    """The turn's "moved_shrimps" (only when there are any): [board, row, col] of the
    shrimps that moved since the turn's last other action (what the search moves no more)."""
    moved = [[c // BCELLS, (c % BCELLS) // COLS, c % COLS] for c in range(NCELLS)
             if (s.run_moved[c // BCELLS] >> (c % BCELLS)) & 1]
    return {"moved_shrimps": moved} if moved else {}


cdef _fill(RState* s, object top, dict rules):
    """from_dict's game part: every field but players, rules and rng (set already)."""
    cdef int players = s.head.players
    cdef RPlayer* pl
    s.phase = top.choice("phase", PHASES)
    s.head.current = top.int("current_player", 0, players - 1)
    s.start_player = top.int("start_player", 0, players - 1)
    s.picks = top.int("setup_picks", 0, 10)
    s.first_pick = top.choice("first_pick", COLOURS)
    turn = top.obj("turn")
    s.acted = turn.bool("acted")
    s.plays = turn.int("plays", 0, 2)
    s.play_colour = -1 if turn.get("play_colour") is None else turn.choice("play_colour", COLOURS)
    s.play_screen = turn.int("play_from_screen", 0, 4)
    s.intro_used = turn.bool("shrimp_introduced")
    s.tile_alga_used = turn.bool("alga_on_tile")
    s.shrimp_moves = turn.int("shrimp_moves", 0, INT32_MAX)
    if s.play_colour >= 0 and s.plays == 0:
        fail(turn.path, "an open larva play counts as a play (plays >= 1)")
    names = list(rules["boards"])
    for c in range(NCELLS):
        s.cell_colour[c] = -1
        s.cell_shrimp[c] = NO_ONE
    s.n_boards = players
    polyps = [0] * NCOL
    shrimps_on = [0] * players
    used = set()
    for b, board in enumerate(top.objs("boards", length=players)):
        lay = board.choice("layout", names)
        if lay in used:
            fail(board.at("layout"), f"board {names[lay]!r} is on the table twice")
        used.add(lay)
        playable, light, _ = parse_board(names[lay], rules["boards"][names[lay]])
        s.board_layout[b] = lay
        s.playable[b] = playable
        s.light[b] = light
        rows = board.list("cells", length=ROWS)
        for r in range(ROWS):
            row = rows[r]
            where = f"{board.at('cells')}[{r}]"
            if not isinstance(row, str) or len(row) != COLS:
                fail(where, f"expected a string of {COLS} cells, got {row!r}")
            for c in range(COLS):
                ch, i = row[c], r * COLS + c
                empty = "." if not (playable >> i) & 1 else ("L" if i == light else "+")
                if ch in LETTERS and empty != ".":
                    put_polyp(s, b * BCELLS + i, LETTERS.index(ch))
                    polyps[LETTERS.index(ch)] += 1
                elif ch != empty:
                    fail(f"{where}[{c}]", f"expected {empty!r}"
                         + ("" if empty == "." else f" or one of {list(LETTERS)}") + f", got {ch!r}")
        for j, sh in enumerate(board.list("shrimps", max_len=MAX_PLAYERS * MAX_SHRIMPS)):
            where = f"{board.at('shrimps')}[{j}]"
            if not isinstance(sh, list) or len(sh) != 3:
                fail(where, f"expected [row, col, player], got {sh!r}")
            r, c = integer(sh[0], where + "[0]", 0, ROWS - 1), integer(sh[1], where + "[1]", 0, COLS - 1)
            who = integer(sh[2], where + "[2]", 0, players - 1)
            cell = b * BCELLS + r * COLS + c
            if not (playable >> (r * COLS + c)) & 1:
                fail(where, f"cell ({r}, {c}) is not a playable cell of board "
                            f"{names[lay]!r}: a shrimp stands only on a playable cell")
            if s.cell_shrimp[cell] >= 0:
                fail(where, f"cell ({r}, {c}) already holds a shrimp (of player "
                            f"{s.cell_shrimp[cell]}): a cell holds at most one shrimp")
            if s.cell_colour[cell] < 0 and who != s.head.current:
                fail(where, "only the current player's shrimps may be on bare rock")
            if own_shrimps_on(s, b, who) == 2:
                fail(board.path, f"player {who} has more than 2 shrimps on one board")
            put_shrimp(s, cell, who)
            shrimps_on[who] += 1
        m = s.shr[b] & occ_all(s, b)
        while m:
            i = lowest(m)
            m &= m - 1
            if popcount(coral_of(s, b * BCELLS + i) & s.shr[b]) > 1:
                fail(board.path, "a coral carries at most one shrimp")
    for j, sh in enumerate(turn.list("moved_shrimps", max_len=MAX_SHRIMPS, default=[])):
        where = f"{turn.at('moved_shrimps')}[{j}]"
        if not isinstance(sh, list) or len(sh) != 3:
            fail(where, f"expected [board, row, col], got {sh!r}")
        cell = (integer(sh[0], where + "[0]", 0, players - 1) * BCELLS
                + integer(sh[1], where + "[1]", 0, ROWS - 1) * COLS
                + integer(sh[2], where + "[2]", 0, COLS - 1))
        if s.cell_shrimp[cell] != s.head.current or s.phase != PH_TURN:
            fail(where, "a shrimp moved this turn stands there: one of the current player's")
        s.run_moved[cell // BCELLS] |= bit(cell)
    bag, bonus = _counts_of(top, "bag"), _counts_of(top, "bonus_row", hi=1)
    supply = _counts_of(top, "larva_supply")
    for x in range(NCOL):
        s.bag[x], s.bonus[x], s.larva_supply[x] = bag[x], bonus[x], supply[x]
    s.bonus_poured = top.bool("bonus_poured")
    for x, v in enumerate(_counts_of(top, "alga_supply", ALGAE)):
        s.alga_supply[x] = v
    s.alga_space = -1 if top.get("alga_space") is None else top.choice("alga_space", ALGAE)
    for k, space in enumerate(top.objs("open_sea", length=NSPACES)):
        if space.choice("colour", COLOURS) != s.rules.cycle[k]:
            fail(space.at("colour"), f"expected {COLOURS[s.rules.cycle[k]]!r} (open_sea_cycle)")
        s.space_cube[k] = space.bool("cube")
        for x, v in enumerate(_counts_of(space, "polyps", hi=3)):
            s.space_polyps[k][x] = v
            polyps[x] += v
    for t, tile in enumerate(top.objs("tiles", length=NTILES)):
        s.tile_side[t] = tile.choice("side", SIDES)
        s.tile_covered[t] = tile.bool("covered")
    larva = [0] * NCOL
    for i, seat in enumerate(top.objs("seats", length=players)):
        pl = &s.p[i]
        screen, consumed = _counts_of(seat, "screen"), _counts_of(seat, "consumed")
        fish, cubes = _counts_of(seat, "fish"), _counts_of(seat, "larva")
        for x in range(NCOL):
            pl.screen[x], pl.consumed[x], pl.fish[x], pl.larva[x] = (screen[x], consumed[x],
                                                                     fish[x], cubes[x])
            polyps[x] += screen[x] + consumed[x] + fish[x]
            larva[x] += cubes[x]
        seen_screen, seen_fish = _seen(seat, "seen_screen", screen), _seen(seat, "seen_fish", fish)
        for x in range(NCOL):
            pl.seen_screen[x], pl.seen_fish[x] = seen_screen[x], seen_fish[x]
        pl.shrimps_screen = seat.int("shrimps_behind_screen", 0, MAX_SHRIMPS)
        pl.fish_shrimps = seat.int("fish_shrimps", 0, MAX_SHRIMPS)
        pl.open_sea_shrimp = seat.bool("open_sea_shrimp")
        pl.eaten = seat.int("corals_eaten", 0, MAX_SHRIMPS)
        pl.score = seat.int("score", 0, 10000)
        s.head.share[i] = seat.num("win_share", 0.0, 1.0)
        if pl.eaten != pl.open_sea_shrimp + pl.fish_shrimps:
            fail(seat.at("corals_eaten"), "expected the open-sea shrimp plus the fish shrimps")
        if pl.shrimps_screen + shrimps_on[i] + pl.eaten != s.rules.shrimps_per_player:
            fail(seat.path, f"shrimps behind the screen, on the boards and eaten must add up "
                            f"to {s.rules.shrimps_per_player}")
    for x in range(NCOL):
        polyps[x] += s.bag[x] + s.bonus[x]
        if polyps[x] != s.rules.polyps_per_colour:
            fail(top.path, f"{polyps[x]} {COLOURS[x]} polyps in play; there are "
                           f"{s.rules.polyps_per_colour} (bag, bonus row, open sea, boards, "
                           f"screens, consumed and fish)")
        cubes = larva[x] + s.larva_supply[x] + sum(
            1 for k in range(NSPACES) if s.space_cube[k] and s.rules.cycle[k] == x)
        if cubes != s.rules.larva_per_colour:
            fail(top.path, f"{cubes} {COLOURS[x]} larva cubes; there are {s.rules.larva_per_colour}")
    for a in range(NALG):
        cyl = s.alga_supply[a] + (s.alga_space == a) + sum(
            1 for t in range(NTILES) if s.tile_covered[t] and tile_front(s, t) == a)
        if cyl != s.rules.algae_per_colour:
            fail(top.path, f"{cyl} {ALGAE[a]} alga cylinders; there are {s.rules.algae_per_colour}")
    s.ender = -1 if top.get("ender") is None else top.int("ender", 0, players - 1)
    s.final_left = top.int("final_left", 0, players - 1)
    s.end_pending = top.choice("end_pending", END_REASONS)
    s.head.terminal = top.bool("terminal")
    s.head.end_reason = top.choice("end_reason", END_REASONS)
    if s.head.terminal != (s.head.end_reason != END_RUNNING):
        fail(top.path, "a terminal state needs an end_reason, a running one 'running'")
    s.head.moves = top.int("moves", 0, INT32_MAX)
    s.turns = top.int("turns", 0, INT32_MAX)
    _check_open_sea(s, top)
    _check_end(s, top)


cdef _check_open_sea(RState* s, top):
    """Every open-sea pile holds at most 3 polyps; while the game runs outside the final
    round each space holds its cube and 1..3 polyps (the refill's invariant, section 5)."""
    cdef int k, n
    live = not s.head.terminal and s.phase != PH_FINAL
    for k in range(NSPACES):
        n = total(s.space_polyps[k], NCOL)
        where = f"{top.at('open_sea')}[{k}]"
        if n > 3 or (live and n == 0):
            fail(where + ".polyps", f"{n} polyps: a space holds {'1' if live else '0'}..3 "
                                    f"(every refill tops it up by one)")
        if live and not s.space_cube[k]:
            fail(where + ".cube", "a space lacks its cube only once the game ends (condition 4)")


cdef _check_end(RState* s, top):
    """Section 9's bookkeeping (the final round, an end pending after the ender's turn) and
    the results: none while the game runs, a finished game's exactly its scoring."""
    cdef int players = s.head.players, i
    cdef RState t
    if s.phase == PH_PICK and s.picks >= s.rules.larva_picks:
        fail(top.at("setup_picks"), f"a seat picks {s.rules.larva_picks} larva cubes")
    if s.phase == PH_FINAL:
        if s.ender < 0:
            fail(top.at("ender"), "the final round follows the ender's turn: expected its seat")
        if s.end_pending != END_TILES_COVERED and s.end_pending != END_FOURTH_SHRIMP:
            fail(top.at("end_pending"), "a final round follows end condition 1 or 2 "
                                        "('all_tiles_covered' or 'fourth_shrimp')")
        if s.head.terminal and s.final_left != 0:
            fail(top.at("final_left"), "a finished final round has no turn left")
        if not s.head.terminal:
            if not 1 <= s.final_left <= players - 1:
                fail(top.at("final_left"), f"expected 1..{players - 1} final turns left "
                                           f"while the final round runs")
            if s.head.current != (s.ender + players - s.final_left) % players:
                fail(top.at("current_player"), f"with {s.final_left} final turns left after "
                     f"seat {s.ender}'s end, seat {(s.ender + players - s.final_left) % players} "
                     f"plays")
    else:
        if s.ender >= 0:
            fail(top.at("ender"), "only a final round has an ender (null)")
        if s.final_left:
            fail(top.at("final_left"), "only a final round has turns left (0)")
        if s.end_pending != END_RUNNING and (s.phase != PH_TURN or s.rules.end_stops_turn
                                             or s.end_pending == END_TURN_LIMIT):
            fail(top.at("end_pending"), "an end is pending only in phase turn with "
                                        "end_stops_turn off, and never the turn limit")
    if s.head.terminal:
        if (s.phase == PH_FINAL) != (s.head.end_reason == END_TILES_COVERED
                                     or s.head.end_reason == END_FOURTH_SHRIMP):
            fail(top.at("phase"), "conditions 1 and 2 end in phase final, the others in "
                                  "phase turn")
        if s.end_pending != END_RUNNING and s.end_pending != s.head.end_reason:
            fail(top.at("end_pending"), "expected 'running' or the end_reason")
        if s.head.current != 0:
            fail(top.at("current_player"), "a finished game has current_player 0")
    memcpy(&t, s, sizeof(RState))
    for i in range(players):
        t.p[i].score = 0
        t.head.share[i] = 0.0
    if s.head.terminal:
        t.head.terminal = 0
        finish(&t, s.head.end_reason)
    seats = top.objs("seats")
    for i in range(players):
        for key, mine, want in (("score", s.p[i].score, t.p[i].score),
                                ("win_share", s.head.share[i], t.head.share[i])):
            if mine != want:
                fail(seats[i].at(key), f"expected {want}: " + (
                    "the scoring of this finished position (sections 8, 11)" if s.head.terminal
                    else "a running game has no results yet"))


ReefGame.handle = engine_handle(&ENGINE, ReefGame, &_LAYOUT, sizeof(RState), &_LAYOUT.rules,
    sizeof(RRules), m_setup, m_legal, m_apply, m_scores, m_outcomes, m_heuristic, m_observe, m_policy,
    m_action_values, NULL, m_random_action, m_search_actions)
GAME = ReefGame()
