# cython: language_level=3
"""Maori (Günter Burkhardt, Hans im Glück 2009) on the engine contract.

Rules: ../shared/rules/maori.md (section numbers below refer to it).  The state is one flat C
struct (`MState`, rules and tile data included) so that clone is a memcpy; every function of
the engine table is nogil and allocation-free.  The Python face (`MaoriGame`) at the bottom
validates rules, packs them into the struct and converts states to and from dicts.

A turn is split into decisions, each one action:
  PH_SHIP_START  the last seat places the explorer ship (setup, section 3 step 7)
  PH_MOVE        move the explorer ship d steps clockwise (section 4.1)
  PH_DISCOVER    one of the five discover options (section 4.2); in advanced/pro mode the
                 paid small-ship steps before a placement are folded into the placement
                 action at their minimum cost (a longer paid path is never better, because
                 the ship's final spot is chosen afterwards anyway, section 7)
  PH_SMALL_SHIP  advanced mode, step 3: move the small ship onto any own tile (or keep it)
"""
from libc.string cimport memcpy, memset
from libc.stdint cimport int8_t, uint8_t, int16_t, int32_t
from core_cy.engine.contract cimport (Engine, GameHeader, begin_setup, end_game, share_best, as_if_ended, EngineHandle, State, SeatParams, Rng, rng_below, rng_bit,
                               rng_shuffle, canonical_shuffle, engine_handle, MAX_SEATS, MAX_LEGAL)
from core_cy.engine import contract
from core_cy.engine.actions import ActionSpace, Kind
from core_cy.engine.codec import INT32_MAX, UniqueIds, check_live, integer, load_data, number
from core_cy.engine.game import options_from_data
from core_cy.agents import AgentGame

ENGINE_VERSION = "1.0"

cdef enum:
    MAX_PLAYERS = 5
    MAX_CELLS = 25          # a board has at most 5 x 5 cells
    MAX_TILES = 127         # tile ids fit an int8; -1 means "no tile"
    DISPLAY_SIDE = 4        # the display is 4 x 4 face-up tiles
    DISPLAY = DISPLAY_SIDE * DISPLAY_SIDE
    LINE = DISPLAY_SIDE     # tiles in the line the explorer ship faces
    TRACK = 16              # explorer-ship positions round the display
    ROTATIONS = 4           # quarter turns of a tile
    NO_TILE = -1

# Tile shapes (section 2.2).
cdef enum:
    SH_SINGLE = 0
    SH_END = 1
    SH_MIDDLE = 2
    SH_WATER = 3
    SH_VOLCANO = 4

# Edge bits, clockwise.
cdef enum:
    EDGE_N = 1
    EDGE_E = 2
    EDGE_S = 4
    EDGE_W = 8

# Cell kinds of a board layout.
cdef enum:
    CELL_PRINTED = 0        # printed land: inert
    CELL_PLAYABLE = 1

cdef enum:
    MODE_BASIC = 0
    MODE_ADVANCED = 1
    MODE_PRO = 2

cdef enum:
    PH_SHIP_START = 0
    PH_MOVE = 1
    PH_DISCOVER = 2
    PH_SMALL_SHIP = 3

cdef enum:
    END_RUNNING = 0
    END_BOARD_FULL = 1
    END_STALL = 2
    END_TURN_LIMIT = 3

# Action ids (section 4): contiguous blocks, ascending in the order legal_actions emits them;
# inside a block the parameters are mixed-radix digits (ACTIONS below names them for Python,
# decompose() reads them in C, the encode_* functions write them).
cdef enum:
    A_SHIP_START = 0                                  # + track position
    A_MOVE = A_SHIP_START + TRACK                     # + (distance - 1), distance 1..TRACK
    A_TAKE = A_MOVE + TRACK                           # + (k, cell, rotation)
    A_STORE = A_TAKE + LINE * MAX_CELLS * ROTATIONS   # + k
    A_FROM_STORE = A_STORE + LINE                     # + (cell, rotation)
    A_REMOVE = A_FROM_STORE + MAX_CELLS * ROTATIONS   # + cell
    A_PASS = A_REMOVE + MAX_CELLS
    A_SMALL_SHIP = A_PASS + 1                         # + cell
    NUM_ACTIONS = A_SMALL_SHIP + MAX_CELLS

# Action kinds, in id order.
cdef enum:
    K_SHIP_START = 0
    K_MOVE = 1
    K_TAKE = 2
    K_STORE = 3
    K_FROM_STORE = 4
    K_REMOVE = 5
    K_PASS = 6
    K_SMALL_SHIP = 7

ctypedef struct MAction:
    int kind                # K_*
    int arg                 # ship_start: track position; move: distance; take/store: line index k
    int cell                # take, from_store, remove, small_ship
    int rot                 # take, from_store


cdef inline MAction decompose(int a) noexcept nogil:
    """The kind and parameters of action id a (Pgx's _decompose_action): apply and
    action_values read actions only through it."""
    cdef MAction x
    memset(&x, 0, sizeof(MAction))
    if a < A_MOVE:
        x.kind = K_SHIP_START
        x.arg = a - A_SHIP_START
    elif a < A_TAKE:
        x.kind = K_MOVE
        x.arg = a - A_MOVE + 1
    elif a < A_STORE:
        x.kind = K_TAKE
        x.arg = (a - A_TAKE) // (MAX_CELLS * ROTATIONS)
        x.cell = ((a - A_TAKE) // ROTATIONS) % MAX_CELLS
        x.rot = (a - A_TAKE) % ROTATIONS
    elif a < A_FROM_STORE:
        x.kind = K_STORE
        x.arg = a - A_STORE
    elif a < A_REMOVE:
        x.kind = K_FROM_STORE
        x.cell = (a - A_FROM_STORE) // ROTATIONS
        x.rot = (a - A_FROM_STORE) % ROTATIONS
    elif a < A_PASS:
        x.kind = K_REMOVE
        x.cell = a - A_REMOVE
    elif a == A_PASS:
        x.kind = K_PASS
    else:
        x.kind = K_SMALL_SHIP
        x.cell = a - A_SMALL_SHIP
    return x


cdef inline int encode_take(int k, int cell, int rot) noexcept nogil:
    return A_TAKE + (k * MAX_CELLS + cell) * ROTATIONS + rot


cdef inline int encode_from_store(int cell, int rot) noexcept nogil:
    return A_FROM_STORE + cell * ROTATIONS + rot


# Heuristic only (greedy agents), not a rule: see own_value().
cdef enum:
    STUCK_PENALTY = 5
# Value of any tile on the board (filling the board ends the game; without it a one-ply
# agent that cannot complete an island right away waits for ever in pro mode).
cdef double FILL_VALUE = 0.6

# Scoring constants printed in the rulebook (section 5.2); not assumptions.
cdef enum:
    LEI_POINTS = 10
    HUT_MULTIPLIER = 2
    REEF_MULTIPLIER = 2

ctypedef struct MTile:
    uint8_t shape
    uint8_t open_mask       # edges where the island continues, as printed (rotation 0)
    uint8_t lei_mask        # edge carrying a lei half, as printed
    uint8_t palms
    uint8_t hut
    uint8_t boats
    uint8_t shells

ctypedef struct MRules:
    int32_t mode
    int32_t rotate_palmless       # section 8.2
    int32_t lei_whole_on_tile     # section 8.4: 0 = edge halves must meet, 1 = whole on tile
    int32_t skip_per_position     # section 8.3: 0 = pay per skipped tile, 1 = per position
    int32_t shortfall_none        # section 4.2: 0 = partial gain, 1 = all or nothing
    int32_t ship_start_random     # section 3.7: 0 = the last seat chooses, 1 = at random
    int32_t reef_boat_uncovered   # section 2.4: printed reef boat counts while uncovered
    int32_t stall_rounds          # section 6 safety
    int32_t max_turns             # simulator safety: end the game after this many turns
    int32_t start_shells
    int32_t total_shells
    int32_t n_seat_shells         # seat compensation (an analysis option): values listed
    int32_t seat_shells[MAX_PLAYERS]  # extra shells seat k starts with, from the bank
    int32_t rows
    int32_t cols
    int32_t fixed_boats           # printed boats that always count
    int32_t n_tiles
    uint8_t cell_kind[MAX_CELLS]
    uint8_t cell_reef[MAX_CELLS]
    uint8_t cell_boat[MAX_CELLS]  # a printed boat on a playable cell
    MTile tiles[MAX_TILES]

ctypedef struct MPlayer:
    int8_t cell_tile[MAX_CELLS]   # tile id on the cell, or NO_TILE
    uint8_t cell_rot[MAX_CELLS]   # clockwise quarter turns of that tile
    int8_t storage                # the storage space (section 3.5)
    int8_t ship_cell              # small ship (advanced/pro), -1 while beside the board
    int16_t shells
    int16_t score                 # final score, set at the end
    int16_t removed_at_end        # tiles of incomplete islands removed before scoring

ctypedef struct MState:
    GameHeader head               # rng, players, current, terminal, moves, end reason, shares
    MRules rules
    int32_t phase
    int32_t ship_pos              # explorer ship position 0..15, -1 before setup ends
    int32_t bank
    int32_t pile_len
    int32_t box_len
    int32_t end_trigger           # the seat whose full board ended the game, or -1
    int32_t turns
    int32_t stall_turns
    int8_t display[DISPLAY]       # row-major 4 x 4, NO_TILE for an empty slot
    int8_t pile[MAX_TILES]        # face-down draw pile; the top is pile[pile_len - 1]
    int8_t box[MAX_TILES]         # tiles out of the game (removed, or incomplete at the end)
    MPlayer p[MAX_PLAYERS]

cdef Engine ENGINE       # the engine table, filled at the end of the module (engine_handle)
cdef MState _LAYOUT      # one instance, to read where the rules are

# Per-player scoring lines (section 5.2) for the breakdown, outcomes and heuristic.
ctypedef struct MScore:
    int palms_plain               # palms on complete islands without a hut
    int palms_hut                 # palms on complete islands with a hut
    int palm_points               # their points, reef doubling included
    int leis
    int boats
    int shells
    int empty
    int boat_points
    int shell_points
    int incomplete_tiles
    double open_palm_value        # heuristic only: palm points of completable open islands
    int stuck_empty               # heuristic only: empty cells a pro-mode seat can never reach
    int tiles                     # heuristic only: tiles on the board, complete or not
    int total


# ---------------------------------------------------------------- geometry helpers

cdef inline uint8_t rotate_mask(uint8_t mask, int r) noexcept nogil:
    """Edge mask turned r quarter turns clockwise (N->E->S->W)."""
    r = r & 3
    return <uint8_t>(((mask << r) | (mask >> (4 - r))) & 15)


cdef inline bint king_adjacent(const MRules* R, int a, int b) noexcept nogil:
    cdef int dr = a // R.cols - b // R.cols, dc = a % R.cols - b % R.cols
    return a != b and -1 <= dr <= 1 and -1 <= dc <= 1


cdef inline int line_slot(int pos, int k) noexcept nogil:
    """Display slot of the k-th tile (0 = nearest) in the line faced from ship position pos
    (section 2.5: positions 0-3 top, 4-7 right, 8-11 bottom, 12-15 left, clockwise)."""
    cdef int side = pos // DISPLAY_SIDE, i = pos % DISPLAY_SIDE, last = DISPLAY_SIDE - 1
    if side == 0:
        return k * DISPLAY_SIDE + i
    if side == 1:
        return i * DISPLAY_SIDE + (last - k)
    if side == 2:
        return (last - k) * DISPLAY_SIDE + (last - i)
    return (last - i) * DISPLAY_SIDE + k


cdef inline bint is_land(const MTile* t) noexcept nogil:
    return t.shape == SH_SINGLE or t.shape == SH_END or t.shape == SH_MIDDLE


cdef inline int n_cells(const MRules* R) noexcept nogil:
    return R.rows * R.cols


# ---------------------------------------------------------------- counting helpers

cdef int board_boats(const MState* s, const MPlayer* pl) noexcept nogil:
    """Boats that count (section 4.1): printed ones plus boats on tiles on the board."""
    cdef int c, b = s.rules.fixed_boats
    for c in range(n_cells(&s.rules)):
        if pl.cell_tile[c] != NO_TILE:
            b += s.rules.tiles[pl.cell_tile[c]].boats
        elif s.rules.cell_boat[c] and s.rules.reef_boat_uncovered:
            b += 1
    return b


cdef int empty_cells(const MState* s, const MPlayer* pl) noexcept nogil:
    cdef int c, n = 0
    for c in range(n_cells(&s.rules)):
        if s.rules.cell_kind[c] == CELL_PLAYABLE and pl.cell_tile[c] == NO_TILE:
            n += 1
    return n


cdef int tiles_on_board(const MState* s, const MPlayer* pl) noexcept nogil:
    cdef int c, n = 0
    for c in range(n_cells(&s.rules)):
        if pl.cell_tile[c] != NO_TILE:
            n += 1
    return n


cdef int skip_cost(const MState* s, int k) noexcept nogil:
    """Shells to reach the k-th slot of the faced line (section 4.2 A, section 8.3), or -1
    if it holds no takable tile (empty slot, volcano, or behind a volcano)."""
    cdef int i, cost = 0, t
    for i in range(k + 1):
        t = s.display[line_slot(s.ship_pos, i)]
        if t != NO_TILE and s.rules.tiles[t].shape == SH_VOLCANO:
            return -1
        if i < k and (t != NO_TILE or s.rules.skip_per_position):
            cost += 1
    if s.display[line_slot(s.ship_pos, k)] == NO_TILE:
        return -1
    return cost


cdef void ship_distances(const MState* s, const MPlayer* pl, int* dist) noexcept nogil:
    """Fewest king steps over tiles from the small ship to each tile (99: unreachable)."""
    cdef int nc = n_cells(&s.rules)
    cdef int queue[MAX_CELLS]
    cdef int head = 0, tail = 0, c, a
    for c in range(nc):
        dist[c] = 99
    dist[pl.ship_cell] = 0
    queue[tail] = pl.ship_cell
    tail += 1
    while head < tail:
        a = queue[head]
        head += 1
        for c in range(nc):
            if dist[c] == 99 and pl.cell_tile[c] != NO_TILE and king_adjacent(&s.rules, a, c):
                dist[c] = dist[a] + 1
                queue[tail] = c
                tail += 1


cdef void step_costs(const MState* s, const MPlayer* pl, int* cost) noexcept nogil:
    """Shells of small-ship steps needed before placing on each cell (sections 7.1-7.2):
    0 in basic mode or before the first tile, else the fewest king steps over tiles from the
    ship to a tile next to the cell (99 if none)."""
    cdef int nc = n_cells(&s.rules)
    cdef int dist[MAX_CELLS]
    cdef int c, d, best
    for c in range(nc):
        cost[c] = 0
    if s.rules.mode == MODE_BASIC or pl.ship_cell < 0:
        return
    ship_distances(s, pl, dist)
    for c in range(nc):
        best = 99
        for d in range(nc):
            if dist[d] < best and king_adjacent(&s.rules, c, d):
                best = dist[d]
        cost[c] = best


cdef int step_target(const MState* s, const MPlayer* pl, int cell, int steps) noexcept nogil:
    """The tile the small ship ends on after `steps` paid steps toward `cell`: the lowest
    numbered tile next to the cell at that distance (any choice is equivalent, section 7)."""
    cdef int dist[MAX_CELLS]
    cdef int c
    ship_distances(s, pl, dist)
    for c in range(n_cells(&s.rules)):
        if dist[c] == steps and king_adjacent(&s.rules, c, cell):
            return c
    return pl.ship_cell


cdef int rotations(const MState* s, int tile, int* out) noexcept nogil:
    """Legal rotations of a tile: only 0 for a tile with palms (palms upright, section 4.2),
    else each distinct turn if rotate_palmless (section 8.2)."""
    cdef const MTile* t = &s.rules.tiles[tile]
    cdef int r, q, n = 0
    cdef bint seen
    out[0] = 0
    n = 1
    if t.palms > 0 or not s.rules.rotate_palmless:
        return 1
    for r in range(1, ROTATIONS):
        seen = False
        for q in range(r):
            if (rotate_mask(t.open_mask, r) == rotate_mask(t.open_mask, q) and
                    rotate_mask(t.lei_mask, r) == rotate_mask(t.lei_mask, q)):
                seen = True
        if not seen:
            out[n] = r
            n += 1
    return n


# ---------------------------------------------------------------- scoring (section 5)
#
# A board is at most 5 x 5 = 25 cells, so scoring works on 32-bit cell masks (bit = cell
# index row * cols + col): island joins, flood fills and symbol counts are a handful of
# shifts and popcounts.  That keeps the heuristic cheap enough for one-ply agents.

cdef extern from "meeple_bits.h":
    int popcount "meeple_popcount32"(unsigned int x) noexcept nogil

ctypedef unsigned int Mask

ctypedef struct Board:
    Mask cells            # every cell of the layout
    Mask playable
    Mask first_col
    Mask last_col
    Mask occupied         # cells holding a tile
    Mask land
    Mask open_e           # land cells whose tile continues east (after rotation), etc.
    Mask open_w
    Mask open_n
    Mask open_s
    Mask lei_e
    Mask lei_w
    Mask lei_n
    Mask lei_s
    Mask hut
    Mask palm_bit[4]      # bit planes of the palm count per cell
    Mask boat_bit[4]      # bit planes of the boat count per cell
    Mask reef             # reef cells of the layout (coral-reef side)
    Mask printed_boat     # playable cells with a printed boat
    Mask incomplete       # cells of incomplete islands (filled by score_masks)


cdef inline int plane_sum(const Mask* planes, Mask sel) noexcept nogil:
    return (popcount(planes[0] & sel) + 2 * popcount(planes[1] & sel) +
            4 * popcount(planes[2] & sel) + 8 * popcount(planes[3] & sel))


cdef void read_board(const MState* s, const MPlayer* pl, Board* b) noexcept nogil:
    """The board's cell masks."""
    cdef const MRules* R = &s.rules
    cdef int c, nc = n_cells(R)
    cdef Mask bit
    memset(b, 0, sizeof(Board))
    for c in range(nc):
        bit = (<Mask>1) << c
        b.cells |= bit
        if R.cell_kind[c] == CELL_PLAYABLE:
            b.playable |= bit
        if R.cell_reef[c]:
            b.reef |= bit
        if R.cell_boat[c]:
            b.printed_boat |= bit
        if c % R.cols == 0:
            b.first_col |= bit
        if c % R.cols == R.cols - 1:
            b.last_col |= bit
        if pl.cell_tile[c] != NO_TILE:
            add_tile(R, b, c, pl.cell_tile[c], pl.cell_rot[c])


cdef inline void add_edges(uint8_t edges, Mask bit, Mask* e, Mask* w, Mask* n,
                           Mask* s) noexcept nogil:
    """Sets `bit` in the mask of each side (EDGE_E, EDGE_W, EDGE_N, EDGE_S) in `edges`."""
    if edges & EDGE_E:
        e[0] |= bit
    if edges & EDGE_W:
        w[0] |= bit
    if edges & EDGE_N:
        n[0] |= bit
    if edges & EDGE_S:
        s[0] |= bit


cdef void add_tile(const MRules* R, Board* b, int c, int tile, int rot) noexcept nogil:
    """Sets the masks of a tile lying on cell c."""
    cdef const MTile* t = &R.tiles[tile]
    cdef Mask bit = (<Mask>1) << c
    cdef int i
    b.occupied |= bit
    add_edges(rotate_mask(t.lei_mask, rot), bit, &b.lei_e, &b.lei_w, &b.lei_n, &b.lei_s)
    for i in range(4):
        if (t.boats >> i) & 1:
            b.boat_bit[i] |= bit
    if not is_land(t):
        return
    b.land |= bit
    add_edges(rotate_mask(t.open_mask, rot), bit, &b.open_e, &b.open_w, &b.open_n, &b.open_s)
    if t.hut:
        b.hut |= bit
    for i in range(4):
        if (t.palms >> i) & 1:
            b.palm_bit[i] |= bit


cdef void clear_cell(Board* b, int c) noexcept nogil:
    """Clears the masks of whatever tile lies on cell c."""
    cdef Mask keep = ~((<Mask>1) << c)
    cdef int i
    b.occupied &= keep
    b.land &= keep
    b.open_e &= keep
    b.open_w &= keep
    b.open_n &= keep
    b.open_s &= keep
    b.lei_e &= keep
    b.lei_w &= keep
    b.lei_n &= keep
    b.lei_s &= keep
    b.hut &= keep
    for i in range(4):
        b.palm_bit[i] &= keep
        b.boat_bit[i] &= keep


cdef void analyse(const MState* s, const MPlayer* pl, Board* b, MScore* out) noexcept nogil:
    """The seat's own scoring lines on its board as it stands (see score_masks)."""
    read_board(s, pl, b)
    score_masks(&s.rules, b, pl.shells, out)


cdef inline Mask spread(Mask x, Mask join_e, Mask join_s, int cols) noexcept nogil:
    """The cells of every island that holds a cell of x."""
    cdef Mask prev = 0
    while prev != x:
        prev = x
        x |= (((x & join_e) << 1) | ((x >> 1) & join_e) |
              ((x & join_s) << cols) | ((x >> cols) & join_s))
    return x


cdef inline int palm_value(const Board* b, Mask sel, Mask hut_isl, Mask out_reef) noexcept nogil:
    """Palm points of the cells in sel: x2 on an island with a hut, x2 on an island lying
    entirely inside the reef (section 5.2, 5.2.3)."""
    return (plane_sum(b.palm_bit, sel & ~hut_isl & out_reef)
            + HUT_MULTIPLIER * plane_sum(b.palm_bit, sel & hut_isl & out_reef)
            + REEF_MULTIPLIER * plane_sum(b.palm_bit, sel & ~hut_isl & ~out_reef)
            + HUT_MULTIPLIER * REEF_MULTIPLIER * plane_sum(b.palm_bit, sel & hut_isl & ~out_reef))


cdef void score_masks(const MRules* R, Board* b, int shells, MScore* out,
                      bint full=True) noexcept nogil:
    """A seat's own scoring lines (section 5.2) from its board masks, majority points
    not included.  Islands are components of joined land tiles (section 5.1); an island with
    an open edge that does not meet a facing open edge is incomplete: it scores nothing,
    its cells count as empty water and its boats and leis do not count.  full=False skips
    the lines the heuristic does not use (palms split by hut)."""
    cdef int cols = R.cols
    cdef Mask join_e, join_s, bad, unfixable, empty_after, complete, hut_isl, out_reef, keep
    memset(out, 0, sizeof(MScore))
    b.incomplete = 0
    # A cell joins its east (south) neighbour when both open edges face each other.
    join_e = b.open_e & ~b.last_col & (b.open_w >> 1)
    join_s = b.open_s & (b.open_n >> cols)
    # Cells with an open edge that meets nothing (empty cell, board edge, other tile).
    bad = ((b.open_e & ~join_e) | (b.open_s & ~join_s) |
           (b.open_w & ~(join_e << 1)) | (b.open_n & ~(join_s << cols)))
    # Heuristic: an unmatched edge that faces an empty playable cell could still be closed.
    empty_after = b.playable & ~b.occupied
    unfixable = ((b.open_e & ~join_e & (b.last_col | ~(empty_after >> 1))) |
                 (b.open_w & ~(join_e << 1) & (b.first_col | ~(empty_after << 1))) |
                 (b.open_s & ~join_s & ~(empty_after >> cols)) |
                 (b.open_n & ~(join_s << cols) & ~(empty_after << cols)))
    # Whole islands are found by spreading cell sets along the joins: an island is
    # incomplete if it has a bad cell, doubled (hut) if it has a hut cell, and so on.
    b.incomplete = spread(bad, join_e, join_s, cols) if bad else 0
    complete = b.land & ~b.incomplete
    hut_isl = spread(b.hut, join_e, join_s, cols) if b.hut else 0
    out_reef = spread(b.land & ~b.reef, join_e, join_s, cols) if b.reef else b.land
    if full:
        out.palms_hut = plane_sum(b.palm_bit, complete & hut_isl)
        out.palms_plain = plane_sum(b.palm_bit, complete & ~hut_isl)
    out.palm_points = palm_value(b, complete, hut_isl, out_reef)
    if b.incomplete:
        out.open_palm_value = palm_value(
            b, b.incomplete & ~spread(unfixable, join_e, join_s, cols), hut_isl, out_reef)
    keep = b.occupied & ~b.incomplete
    out.incomplete_tiles = popcount(b.incomplete)
    if R.lei_whole_on_tile:
        out.leis = popcount(keep & (b.lei_e | b.lei_w | b.lei_n | b.lei_s))
    else:
        out.leis = (popcount(b.lei_e & keep & ~b.last_col & ((b.lei_w & keep) >> 1)) +
                    popcount(b.lei_s & keep & ((b.lei_n & keep) >> cols)))
    out.boats = R.fixed_boats + plane_sum(b.boat_bit, keep)
    if R.reef_boat_uncovered:
        out.boats += popcount(b.printed_boat & ~keep)
    out.empty = popcount(b.playable & ~keep)
    out.tiles = popcount(b.occupied)
    out.shells = shells


cdef void majorities(const MState* s, MScore* sc) noexcept nogil:
    """Boat and shell majorities: every tied leader scores its count (section 5.2)."""
    cdef int i, best_boats = -1, best_shells = -1
    for i in range(s.head.players):
        if sc[i].boats > best_boats:
            best_boats = sc[i].boats
        if sc[i].shells > best_shells:
            best_shells = sc[i].shells
    for i in range(s.head.players):
        sc[i].boat_points = sc[i].boats if sc[i].boats == best_boats else 0
        sc[i].shell_points = sc[i].shells if sc[i].shells == best_shells else 0
        sc[i].total = (sc[i].palm_points + LEI_POINTS * sc[i].leis + sc[i].boat_points +
                       sc[i].shell_points - sc[i].empty)


cdef void score_all(const MState* s, MScore* sc) noexcept nogil:
    """Every seat's scoring lines with the majorities."""
    cdef Board b
    cdef int i
    for i in range(s.head.players):
        analyse(s, &s.p[i], &b, &sc[i])
    majorities(s, sc)


cdef void finish(void* vs, int reason) noexcept nogil:   # an EndFn (as_if_ended)
    """Game end (section 5.2): remove incomplete islands, score, share the win."""
    cdef MState* s = <MState*>vs
    cdef MScore sc[MAX_PLAYERS]
    cdef Board b
    cdef int keys[MAX_PLAYERS][2]
    cdef int i, c
    cdef MPlayer* pl
    for i in range(s.head.players):
        pl = &s.p[i]
        analyse(s, pl, &b, &sc[i])
        pl.removed_at_end = 0
        for c in range(n_cells(&s.rules)):
            if (b.incomplete >> c) & 1:
                s.box[s.box_len] = pl.cell_tile[c]
                s.box_len += 1
                pl.cell_tile[c] = NO_TILE
                pl.cell_rot[c] = 0
                pl.removed_at_end += 1
        if pl.ship_cell >= 0 and pl.cell_tile[pl.ship_cell] == NO_TILE:
            pl.ship_cell = -1     # its tile left with an incomplete island
    majorities(s, sc)
    for i in range(s.head.players):
        s.p[i].score = <int16_t>sc[i].total
        keys[i][0] = sc[i].total
        keys[i][1] = s.p[i].shells    # tie-break: more shells; still tied, a shared win (section 6)
    share_best(s, &keys[0][0], 2)
    end_game(s, reason)


# ---------------------------------------------------------------- setup (section 3)

cdef inline int8_t pop_pile(MState* s) noexcept nogil:
    """Draws the top tile; the freed slot is zeroed so that equal positions are equal bytes."""
    s.pile_len -= 1
    cdef int8_t t = s.pile[s.pile_len]
    s.pile[s.pile_len] = 0
    return t


cdef void m_setup(void* vs, const void* rules, int players, const SeatParams* seats,
                  const Rng* rng) noexcept nogil:
    cdef MState* s = <MState*>vs
    cdef int i, c, t, aside_n = 0
    cdef int8_t aside[MAX_TILES]
    begin_setup(&ENGINE, s, rules, players, rng)
    s.end_trigger = -1
    s.ship_pos = -1
    for i in range(s.rules.n_tiles):
        s.pile[i] = <int8_t>i
    s.pile_len = s.rules.n_tiles
    rng_shuffle(&s.head.rng, s.pile, s.pile_len, sizeof(s.pile[0]))
    # Deal the display; volcanoes drawn now are set aside and shuffled back afterwards.
    for c in range(DISPLAY):
        s.display[c] = NO_TILE
        while s.pile_len > 0:
            t = pop_pile(s)
            if s.rules.tiles[t].shape == SH_VOLCANO:
                aside[aside_n] = <int8_t>t
                aside_n += 1
            else:
                s.display[c] = <int8_t>t
                break
    for i in range(aside_n):
        s.pile[s.pile_len] = aside[i]
        s.pile_len += 1
    rng_shuffle(&s.head.rng, s.pile, s.pile_len, sizeof(s.pile[0]))
    s.bank = s.rules.total_shells - players * s.rules.start_shells
    for i in range(MAX_PLAYERS):
        for c in range(MAX_CELLS):
            s.p[i].cell_tile[c] = NO_TILE
        s.p[i].storage = NO_TILE
        s.p[i].ship_cell = -1
        if i < players:
            s.p[i].shells = <int16_t>(s.rules.start_shells + s.rules.seat_shells[i])
            s.bank -= s.rules.seat_shells[i]    # seat compensation (0 by the book)
    # The oldest player (the last seat, right of the starting seat 0) places the ship.
    if s.rules.ship_start_random:
        s.ship_pos = rng_below(&s.head.rng, TRACK)
        s.phase = PH_MOVE
        s.head.current = 0
    else:
        s.phase = PH_SHIP_START
        s.head.current = players - 1


# ---------------------------------------------------------------- legal actions

cdef int m_legal(const void* vs, int* out) noexcept nogil:
    cdef const MState* s = <const MState*>vs
    cdef const MPlayer* pl = &s.p[s.head.current]
    cdef int n = 0, i, k, c, j, nr, nc = n_cells(&s.rules), tile, maxd, boats
    cdef int kcost[LINE]
    cdef int scost[MAX_CELLS]
    cdef int rots[ROTATIONS]
    if s.head.terminal:
        return 0
    if s.phase == PH_SHIP_START:
        for i in range(TRACK):
            out[n] = A_SHIP_START + i
            n += 1
        return n
    if s.phase == PH_MOVE:
        boats = board_boats(s, pl)
        maxd = boats + pl.shells
        if maxd > TRACK:
            maxd = TRACK
        if maxd < 1:
            maxd = 1      # a board without printed boats still moves one step (data guard)
        for i in range(maxd):
            out[n] = A_MOVE + i
            n += 1
        return n
    if s.phase == PH_SMALL_SHIP:
        for c in range(nc):
            if pl.cell_tile[c] != NO_TILE:
                out[n] = A_SMALL_SHIP + c
                n += 1
        return n
    # PH_DISCOVER
    for k in range(LINE):
        kcost[k] = skip_cost(s, k)
        if kcost[k] > pl.shells:
            kcost[k] = -1
    step_costs(s, pl, scost)
    for k in range(LINE):
        if kcost[k] < 0:
            continue
        tile = s.display[line_slot(s.ship_pos, k)]
        nr = rotations(s, tile, rots)
        for c in range(nc):
            if (s.rules.cell_kind[c] == CELL_PLAYABLE and pl.cell_tile[c] == NO_TILE and
                    kcost[k] + scost[c] <= pl.shells):
                for j in range(nr):
                    out[n] = encode_take(k, c, rots[j])
                    n += 1
    if pl.storage == NO_TILE:
        for k in range(LINE):
            if kcost[k] >= 0:
                out[n] = A_STORE + k
                n += 1
    else:
        nr = rotations(s, pl.storage, rots)
        for c in range(nc):
            if (s.rules.cell_kind[c] == CELL_PLAYABLE and pl.cell_tile[c] == NO_TILE and
                    scost[c] <= pl.shells):
                for j in range(nr):
                    out[n] = encode_from_store(c, rots[j])
                    n += 1
    for c in range(nc):
        if pl.cell_tile[c] != NO_TILE and not (s.rules.mode != MODE_BASIC and c == pl.ship_cell):
            out[n] = A_REMOVE + c
            n += 1
    out[n] = A_PASS
    n += 1
    return n


# ---------------------------------------------------------------- apply

cdef inline void pay(MState* s, MPlayer* pl, int shells) noexcept nogil:
    pl.shells -= shells
    s.bank += shells


cdef void refill(MState* s, int slot) noexcept nogil:
    """A taken display tile is replaced from the pile (a volcano drawn now stays)."""
    if s.pile_len > 0:
        s.display[slot] = pop_pile(s)
    else:
        s.display[slot] = NO_TILE


cdef void place(MState* s, MPlayer* pl, int tile, int cell, int rot) noexcept nogil:
    """Put a tile on the board, pay the small-ship steps, gain its printed shells, and move
    the small ship (advanced: onto the first tile; pro: onto every placed tile)."""
    cdef int scost[MAX_CELLS]
    cdef int gain = s.rules.tiles[tile].shells
    step_costs(s, pl, scost)
    if scost[cell] > 0:
        pay(s, pl, scost[cell])
        pl.ship_cell = <int8_t>step_target(s, pl, cell, scost[cell])
    pl.cell_tile[cell] = <int8_t>tile
    pl.cell_rot[cell] = <uint8_t>rot
    if gain > s.bank:
        gain = 0 if s.rules.shortfall_none else s.bank
    pl.shells += gain
    s.bank -= gain
    if s.rules.mode != MODE_BASIC and (pl.ship_cell < 0 or s.rules.mode == MODE_PRO):
        pl.ship_cell = <int8_t>cell


cdef bint display_has_takable(const MState* s) noexcept nogil:
    """Some ship position faces a tile with no volcano before it (section 4.4): a tile
    walled in by volcanoes on every line is not takable."""
    cdef int pos, k, t
    for pos in range(TRACK):
        for k in range(4):
            t = s.display[line_slot(pos, k)]
            if t == NO_TILE:
                continue
            if s.rules.tiles[t].shape == SH_VOLCANO:
                break
            return True
    return False


cdef void end_turn(MState* s) noexcept nogil:
    """Section 6: a full board at the end of a turn triggers the end; every other seat then
    plays once more.  Section 6 safety: a long stall ends the game too."""
    cdef int i
    cdef bint stuck
    s.turns += 1
    if s.end_trigger < 0 and empty_cells(s, &s.p[s.head.current]) == 0:
        s.end_trigger = s.head.current
    stuck = not display_has_takable(s)
    for i in range(s.head.players):
        if s.p[i].storage != NO_TILE:
            stuck = False
    s.stall_turns = s.stall_turns + 1 if stuck else 0
    s.head.current = (s.head.current + 1) % s.head.players
    s.phase = PH_MOVE
    if s.end_trigger >= 0 and s.head.current == s.end_trigger:
        finish(s, END_BOARD_FULL)
    elif s.stall_turns >= s.rules.stall_rounds * s.head.players:
        finish(s, END_STALL)
    elif s.turns >= s.rules.max_turns:
        finish(s, END_TURN_LIMIT)


cdef void end_discover(MState* s, MPlayer* pl) noexcept nogil:
    """Advanced mode offers step 3 (move the small ship) when there is a choice."""
    if s.rules.mode == MODE_ADVANCED and pl.ship_cell >= 0 and tiles_on_board(s, pl) > 1:
        s.phase = PH_SMALL_SHIP
    else:
        end_turn(s)


cdef void m_apply(void* vs, int a) noexcept nogil:
    cdef MState* s = <MState*>vs
    cdef MPlayer* pl = &s.p[s.head.current]
    cdef MAction x = decompose(a)
    cdef int slot, tile, boats
    s.head.moves += 1
    if x.kind == K_SHIP_START:
        s.ship_pos = x.arg
        s.phase = PH_MOVE
        s.head.current = 0
    elif x.kind == K_MOVE:
        boats = board_boats(s, pl)
        if x.arg > boats:
            pay(s, pl, x.arg - boats)
        s.ship_pos = (s.ship_pos + x.arg) % TRACK
        s.phase = PH_DISCOVER
    elif x.kind == K_TAKE:
        slot = line_slot(s.ship_pos, x.arg)
        tile = s.display[slot]
        pay(s, pl, skip_cost(s, x.arg))
        refill(s, slot)
        place(s, pl, tile, x.cell, x.rot)
        end_discover(s, pl)
    elif x.kind == K_STORE:
        slot = line_slot(s.ship_pos, x.arg)
        pay(s, pl, skip_cost(s, x.arg))
        pl.storage = s.display[slot]
        refill(s, slot)
        end_discover(s, pl)
    elif x.kind == K_FROM_STORE:
        tile = pl.storage
        pl.storage = NO_TILE
        place(s, pl, tile, x.cell, x.rot)
        end_discover(s, pl)
    elif x.kind == K_REMOVE:
        s.box[s.box_len] = pl.cell_tile[x.cell]
        s.box_len += 1
        pl.cell_tile[x.cell] = NO_TILE
        pl.cell_rot[x.cell] = 0
        end_discover(s, pl)
    elif x.kind == K_PASS:
        end_discover(s, pl)
    else:
        pl.ship_cell = <int8_t>x.cell
        end_turn(s)


# ---------------------------------------------------------------- rest of the contract

cdef void m_scores(const void* vs, double* out) noexcept nogil:
    """Final scores; before the end, the score each seat would get if the game ended now."""
    cdef MState tmp
    cdef const MState* s = <const MState*>as_if_ended(&ENGINE, vs, &tmp, finish, END_RUNNING)
    cdef int i
    for i in range(s.head.players):
        out[i] = s.p[i].score



# Outcome fields: the names (the engine table counts them) and their indices in C.
GAME_OUTCOMES = ("turns", "tiles_left_in_pile")
SEAT_OUTCOMES = ("palm_points", "leis", "boats", "shells", "empty_cells", "removed_at_end",
                 "boat_majority", "shell_majority")
cdef enum:
    GO_TURNS = 0
    GO_TILES_LEFT = 1
cdef enum:
    SO_PALM_POINTS = 0
    SO_LEIS = 1
    SO_BOATS = 2
    SO_SHELLS = 3
    SO_EMPTY = 4
    SO_REMOVED = 5
    SO_BOAT_MAJORITY = 6
    SO_SHELL_MAJORITY = 7


cdef void m_outcomes(const void* vs, double* g, double* so) noexcept nogil:
    cdef const MState* s = <const MState*>vs
    cdef MScore sc[MAX_PLAYERS]
    cdef double* o
    cdef int i
    score_all(s, sc)
    g[GO_TURNS] = s.turns
    g[GO_TILES_LEFT] = s.pile_len
    for i in range(s.head.players):
        o = so + i * ENGINE.num_seat_outcomes
        o[SO_PALM_POINTS] = sc[i].palm_points
        o[SO_LEIS] = sc[i].leis
        o[SO_BOATS] = sc[i].boats
        o[SO_SHELLS] = sc[i].shells
        o[SO_EMPTY] = sc[i].empty
        o[SO_REMOVED] = s.p[i].removed_at_end
        o[SO_BOAT_MAJORITY] = 1 if sc[i].boat_points > 0 else 0
        o[SO_SHELL_MAJORITY] = 1 if sc[i].shell_points > 0 else 0


cdef inline Mask king_dilate(const Board* b, Mask m, int cols) noexcept nogil:
    """The cells of m and their eight neighbours."""
    cdef Mask h = m | ((m >> 1) & ~b.last_col) | ((m << 1) & ~b.first_col)
    return (h | (h >> cols) | (h << cols)) & b.cells


cdef int stuck_empty(const MRules* R, const Board* b, int ship, int shells) noexcept nogil:
    """Pro mode only (in advanced mode step 3 moves the ship freely): the number of empty
    cells if none of them can be reached by the small ship's free or paid steps, else 0."""
    cdef Mask empty = b.playable & ~b.occupied
    cdef Mask reach, grown
    cdef int k
    if R.mode != MODE_PRO or ship < 0 or empty == 0:
        return 0
    reach = (<Mask>1) << ship
    for k in range(shells if shells < MAX_CELLS else MAX_CELLS):
        grown = reach | (king_dilate(b, reach, R.cols) & b.occupied)
        if grown == reach:
            break
        reach = grown
    return 0 if king_dilate(b, reach, R.cols) & empty else popcount(empty)


cdef inline double own_value(const MScore* me, int rival_boats, int rival_shells) noexcept nogil:
    """The heuristic from a seat's own lines: score if the game ended now, plus half the palm
    value of islands that can still be completed, a little per shell and boat (mobility), and
    the majorities the seat would win against its rivals' current counts."""
    cdef double v = (me.palm_points + LEI_POINTS * me.leis - me.empty + 0.5 * me.open_palm_value
                     + 0.2 * me.shells + 0.3 * me.boats + FILL_VALUE * me.tiles)
    if me.stuck_empty:
        # Pro mode: no empty cell is next to the ship or within paid steps, so the seat can
        # never place again unless it removes a tile; without this term a one-ply agent
        # passes forever (the game then only ends at max_turns).
        v -= STUCK_PENALTY + 2 * me.stuck_empty
    if me.boats >= rival_boats:
        v += me.boats
    if me.shells >= rival_shells:
        v += me.shells
    return v


cdef void rivals(const MState* s, int seat, int* boats, int* shells) noexcept nogil:
    """The best rival's boats (every tile on the board, cheap) and shells."""
    cdef int i, v
    boats[0] = 0
    shells[0] = 0
    for i in range(s.head.players):
        if i != seat:
            v = board_boats(s, &s.p[i])
            if v > boats[0]:
                boats[0] = v
            if s.p[i].shells > shells[0]:
                shells[0] = s.p[i].shells


cdef double m_heuristic(const void* vs, int seat) noexcept nogil:
    """own_value() while the game runs; at the end, the final score plus a hundredth of the
    margin over the best rival."""
    cdef const MState* s = <const MState*>vs
    cdef MScore me
    cdef Board b
    cdef int i, rb, rs
    cdef double best_other = -1e9
    if s.head.terminal:
        for i in range(s.head.players):
            if i != seat and s.p[i].score > best_other:
                best_other = s.p[i].score
        return s.p[seat].score + 0.01 * (s.p[seat].score - best_other)
    analyse(s, &s.p[seat], &b, &me)
    me.stuck_empty = stuck_empty(&s.rules, &b, s.p[seat].ship_cell, s.p[seat].shells)
    rivals(s, seat, &rb, &rs)
    return own_value(&me, rb, rs)


cdef inline int gain_after(const MState* s, int tile, int paid) noexcept nogil:
    """Shells gained by placing `tile` after paying `paid` into the bank (as place())."""
    cdef int gain = s.rules.tiles[tile].shells
    cdef int bank = s.bank + paid
    if gain > bank:
        gain = 0 if s.rules.shortfall_none else bank
    return gain


cdef int m_action_values(const void* vs, int seat, const int* acts, int n,
                         double* out) noexcept nogil:
    """heuristic(apply(state, a), seat) for every action, without copying the state: only
    the seat's own board and shells change, so each value is its board masks plus one tile
    (or minus one) and its new shell count.  Turns that could end the game take the
    generic path (returns 0), since the value of a finished game is computed differently."""
    cdef const MState* s = <const MState*>vs
    cdef const MPlayer* pl = &s.p[seat]
    cdef Board base, b
    cdef MScore me, base_me
    cdef MAction x
    cdef bint board_changes, places
    cdef int kcost[LINE]
    cdef int scost[MAX_CELLS]
    cdef int i, k, tile, paid, shells, rb, rs, boats, ship
    if (seat != s.head.current or s.head.terminal or s.end_trigger >= 0 or s.turns + 1 >= s.rules.max_turns
            or s.stall_turns + 1 >= s.rules.stall_rounds * s.head.players):
        return 0
    rivals(s, seat, &rb, &rs)
    read_board(s, pl, &base)
    score_masks(&s.rules, &base, pl.shells, &base_me, False)
    step_costs(s, pl, scost)
    for k in range(LINE):
        kcost[k] = skip_cost(s, k) if s.ship_pos >= 0 else 0
    boats = board_boats(s, pl)
    for i in range(n):
        x = decompose(acts[i])
        shells = pl.shells
        places = x.kind == K_TAKE or x.kind == K_FROM_STORE
        board_changes = places or x.kind == K_REMOVE
        if board_changes:
            memcpy(&b, &base, sizeof(Board))
        if x.kind == K_MOVE:
            if x.arg > boats:
                shells -= x.arg - boats
        elif x.kind == K_TAKE:
            tile = s.display[line_slot(s.ship_pos, x.arg)]
            paid = kcost[x.arg] + scost[x.cell]
            shells += gain_after(s, tile, paid) - paid
            add_tile(&s.rules, &b, x.cell, tile, x.rot)
        elif x.kind == K_STORE:
            shells -= kcost[x.arg]
        elif x.kind == K_FROM_STORE:
            shells += gain_after(s, pl.storage, scost[x.cell]) - scost[x.cell]
            add_tile(&s.rules, &b, x.cell, pl.storage, x.rot)
        elif x.kind == K_REMOVE:
            clear_cell(&b, x.cell)
        # placing the explorer ship, passing and the small ship change no seat's own lines
        if board_changes:
            score_masks(&s.rules, &b, shells, &me, False)
        else:
            # Same board: the lines are the base lines with the new shell count.
            memcpy(&me, &base_me, sizeof(MScore))
            me.shells = shells
        ship = pl.ship_cell
        if s.rules.mode == MODE_PRO and places:
            ship = x.cell          # pro: the ship moves onto the placed tile
        me.stuck_empty = stuck_empty(&s.rules, &b if board_changes else &base, ship, shells)
        out[i] = own_value(&me, rb, rs)
    return 1


cdef void m_observe(const void* vs, int seat, void* out, Rng* rng) noexcept nogil:
    """The order of the face-down pile is hidden from everyone: re-shuffle it, starting from
    the sorted pile so that the view depends only on what the seat knows (which tiles are
    left)."""
    cdef MState* o = <MState*>out
    memcpy(o, vs, sizeof(MState))
    canonical_shuffle(rng, o.pile, o.pile_len)




# ---------------------------------------------------------------- the quick policy (agents)
#
# A rollout policy for the search that costs about a random move yet plays like the greedy
# agent: it never lists or values the legal actions.  Its fit test works on the board's cell
# masks, so one tile in one rotation is tried on every cell at once.  Heuristic, not a rule.

cdef enum:
    POLICY_QUICK = 0
    FIT_ANY = 1             # no fit: an open edge is blocked (or a neighbour's is)
    FIT_OPEN = 2            # the tile's open edges face empty cells only (no join yet)
    FIT_JOINS = 3           # at least one open edge meets a facing open edge
    FIT_CLOSES = 4          # every open edge meets a facing open edge


ctypedef struct Demand:
    Mask empty             # empty playable cells
    Mask target            # those the seat can afford to place on (set_budget)
    bint paid              # advanced/pro with the small ship on the board: steps cost shells
    int scost[MAX_CELLS]   # the shells of those steps per cell
    Mask need[4]           # per edge (N, E, S, W): cells whose neighbour there faces them open
    Mask ok[4]             # per edge: cells where an open edge there may stay (empty or joins)


cdef void read_demand(const MState* s, const MPlayer* pl, Demand* d) noexcept nogil:
    """What the seat's board asks of a tile on each cell (section 5.1: an island is complete
    when every open edge meets a facing open edge)."""
    cdef Board b
    cdef int cols = s.rules.cols
    cdef Mask empty
    read_board(s, pl, &b)
    empty = b.playable & ~b.occupied
    d.empty = empty
    d.target = empty
    d.paid = s.rules.mode != MODE_BASIC and pl.ship_cell >= 0
    if d.paid:
        step_costs(s, pl, d.scost)
    d.need[0] = (b.open_s << cols) & b.cells
    d.need[1] = (b.open_w >> 1) & ~b.last_col
    d.need[2] = b.open_n >> cols
    d.need[3] = (b.open_e << 1) & ~b.first_col & b.cells
    d.ok[0] = ((empty << cols) & b.cells) | d.need[0]
    d.ok[1] = ((empty >> 1) & ~b.last_col) | d.need[1]
    d.ok[2] = (empty >> cols) | d.need[2]
    d.ok[3] = ((empty << 1) & ~b.first_col & b.cells) | d.need[3]


cdef void set_budget(const MState* s, Demand* d, int budget) noexcept nogil:
    """The target cells: the empty ones whose small-ship steps cost at most `budget`."""
    cdef int c
    if not d.paid:
        return
    d.target = 0
    for c in range(n_cells(&s.rules)):
        if (d.empty >> c) & 1 and d.scost[c] <= budget:
            d.target |= (<Mask>1) << c


cdef int best_cell(const MTile* t, int rot, const Demand* d, Rng* rng, int* cell) noexcept nogil:
    """The best fit (FIT_*, 0 when no cell is open to it) of a tile turned `rot` over the
    target cells, and a cell of that fit drawn at random."""
    cdef uint8_t o = rotate_mask(t.open_mask, rot) if is_land(t) else 0
    cdef Mask fit = d.target, joins = 0, closes = d.target
    cdef int k
    for k in range(4):
        if (o >> k) & 1:
            fit &= d.ok[k]
            joins |= d.need[k]
            closes &= d.need[k]
        else:
            fit &= ~d.need[k]
    if not fit:
        if not d.target:
            return 0
        cell[0] = rng_bit(rng, d.target)    # it breaks an island, but fills the board
        return FIT_ANY
    if o and fit & closes:
        cell[0] = rng_bit(rng, fit & closes)
        return FIT_CLOSES
    if fit & joins:
        cell[0] = rng_bit(rng, fit & joins)
        return FIT_JOINS
    cell[0] = rng_bit(rng, fit)
    return FIT_OPEN


cdef inline double tile_worth(const MTile* t, int fit) noexcept nogil:
    """A placement's worth for the quick policy: the fit first, then what the tile scores
    once its island is complete (palms, doubled by a hut), its boats and shells."""
    return 4.0 * fit + (t.palms * (2 if t.hut else 1) if fit == FIT_CLOSES else 0) \
        + 0.5 * t.boats + 0.2 * t.shells


cdef int quick_discover(const MState* s, Rng* rng) noexcept nogil:
    """Places the line tile (or the stored tile) whose best fit is worth most after the
    shells it costs; stores a line tile rather than break an island, passes when no cell is
    left to it."""
    cdef const MPlayer* pl = &s.p[s.head.current]
    cdef Demand d
    cdef int rots[ROTATIONS]
    cdef int k, j, nr, tile, cost, fit, cell, best = A_PASS, ties = 0, store = -1
    cdef double v, best_v = 0.0
    read_demand(s, pl, &d)
    for k in range(-1, LINE):
        if k < 0:
            tile = pl.storage
            cost = 0
        else:
            cost = skip_cost(s, k)
            if cost < 0 or cost > pl.shells:
                continue
            tile = s.display[line_slot(s.ship_pos, k)]
            if store < 0 or rng_below(rng, 2) == 0:
                store = k
        if tile == NO_TILE:
            continue
        set_budget(s, &d, pl.shells - cost)
        nr = rotations(s, tile, rots)
        for j in range(nr):
            fit = best_cell(&s.rules.tiles[tile], rots[j], &d, rng, &cell)
            if fit == 0:
                continue
            v = tile_worth(&s.rules.tiles[tile], fit) - 0.5 * cost
            if v > best_v or (v == best_v and rng_below(rng, ties + 1) == 0):
                ties = 1 if v > best_v else ties + 1
                best_v = v
                best = (encode_from_store(cell, rots[j]) if k < 0
                        else encode_take(k, cell, rots[j]))
    if best_v < 4.0 * FIT_OPEN and pl.storage == NO_TILE and store >= 0:
        return A_STORE + store     # keep a tile for a better board rather than break one
    return best


cdef int m_policy(const void* vs, int which, const double* params, Rng* rng,
                  void* scratch) noexcept nogil:
    """The quick policy: a random free move of the explorer ship (the greedy agent is
    indifferent among them), quick_discover, and a random choice in the rare phases."""
    cdef const MState* s = <const MState*>vs
    cdef int* legal = <int*>scratch
    cdef int free_steps
    if s.phase == PH_MOVE:
        free_steps = board_boats(s, &s.p[s.head.current])
        if free_steps > TRACK:
            free_steps = TRACK
        return A_MOVE + (<int>rng_below(rng, free_steps) if free_steps > 0 else 0)
    if s.phase == PH_DISCOVER:
        return quick_discover(s, rng)
    return legal[rng_below(rng, m_legal(vs, legal))]



# ================================================================ Python face

SHAPES = ("SINGLE", "END", "MIDDLE", "WATER", "VOLCANO")
EDGES = {"N": EDGE_N, "E": EDGE_E, "S": EDGE_S, "W": EDGE_W}
MODES = ("basic", "advanced", "pro")
PHASES = ("ship_start", "move", "discover", "small_ship")
END_REASONS = ("running", "board_full", "stall", "turn_limit")
CELL_CODES = {".": (CELL_PLAYABLE, 0, 0), "R": (CELL_PLAYABLE, 1, 0), "B": (CELL_PLAYABLE, 1, 1),
              "b": (CELL_PLAYABLE, 0, 1), "P": (CELL_PRINTED, 0, 0)}


HOME = __name__.rpartition(".")[0]  # this game's package, where its data lives
DEFAULT_TILES = load_data(HOME, "data/tiles.json")["tiles"]
DEFAULT_BOARDS = load_data(HOME, "data/boards.json")


def _edge_mask(text, where):
    if not isinstance(text, str) or any(ch not in EDGES for ch in text) or len(set(text)) != len(text):
        raise ValueError(f"{where}: edges must be letters from N, E, S, W, got {text!r}")
    mask = 0
    for ch in text:
        mask |= EDGES[ch]
    return mask


def _mask_text(mask):
    return "".join(ch for ch in "NESW" if mask & EDGES[ch])


def parse_tiles(entries):
    """The tile list (data option `tiles`) expanded to one (shape, open, lei, palms, hut,
    boats, shells) tuple per tile; ValueError names the bad entry."""
    if not isinstance(entries, list) or not entries:
        raise ValueError("rule option 'tiles' must be a non-empty list of tile entries")
    out = []
    fields = {"shape", "open", "palms", "hut", "boats", "shells", "lei", "count"}
    for i, e in enumerate(entries):
        where = f"rule option 'tiles'[{i}]"
        if not isinstance(e, dict):
            raise ValueError(f"{where} must be an object")
        extra = set(e) - fields
        if extra:
            raise ValueError(f"{where}: unknown field(s) {sorted(extra)}")
        shape = e.get("shape")
        if shape not in SHAPES:
            raise ValueError(f"{where}: shape must be one of {list(SHAPES)}, got {shape!r}")
        nums = {}
        for f, hi in (("palms", 9), ("hut", 1), ("boats", 9), ("shells", 9), ("count", MAX_TILES)):
            v = e.get(f, 1 if f == "count" else 0)
            if isinstance(v, bool) or not isinstance(v, int) or not (0 if f != "count" else 1) <= v <= hi:
                raise ValueError(f"{where}: {f} must be an integer in 0..{hi}, got {v!r}")
            nums[f] = v
        open_mask = _edge_mask(e.get("open", ""), where + ".open")
        lei_mask = _edge_mask(e.get("lei", ""), where + ".lei")
        need = {"SINGLE": (0,), "END": (1, 2, 4, 8), "MIDDLE": (5, 10), "WATER": (0,), "VOLCANO": (0,)}
        if open_mask not in need[shape]:
            raise ValueError(f"{where}: a {shape} tile cannot have open edges {e.get('open')!r}")
        if bin(lei_mask).count("1") > 1:
            raise ValueError(f"{where}: a tile carries at most one lei half")
        if shape in ("WATER", "VOLCANO") and (nums["palms"] or nums["hut"]):
            raise ValueError(f"{where}: {shape} tiles carry no palms or huts")
        if shape == "VOLCANO" and (nums["boats"] or nums["shells"] or lei_mask):
            raise ValueError(f"{where}: volcano tiles carry no symbols")
        out += [(SHAPES.index(shape), open_mask, lei_mask, nums["palms"], nums["hut"],
                 nums["boats"], nums["shells"])] * nums["count"]
    if len(out) > MAX_TILES:
        raise ValueError(f"rule option 'tiles' lists {len(out)} tiles; at most {MAX_TILES}")
    if sum(1 for t in out if t[0] != SH_VOLCANO) < DISPLAY:
        raise ValueError(f"rule option 'tiles' needs at least {DISPLAY} non-volcano tiles")
    return out


def parse_board(side, layout):
    """(rows, cols, cell codes, fixed boats, max players) of a board layout; ValueError."""
    where = f"rule option 'boards'.{side}"
    if not isinstance(layout, dict) or set(layout) - {"cells", "fixed_boats", "max_players"}:
        raise ValueError(f"{where} must be an object with cells, fixed_boats, max_players")
    cells = layout.get("cells")
    if (not isinstance(cells, list) or not cells or not all(isinstance(r, str) for r in cells)
            or len({len(r) for r in cells}) != 1):
        raise ValueError(f"{where}.cells must be a list of equally long strings")
    rows, cols = len(cells), len(cells[0])
    if rows * cols > MAX_CELLS or rows > 5 or cols > 5:
        raise ValueError(f"{where}.cells: at most 5 x 5 cells, got {rows} x {cols}")
    bad = {ch for r in cells for ch in r} - set(CELL_CODES)
    if bad:
        raise ValueError(f"{where}.cells: unknown cell code(s) {sorted(bad)}; use {sorted(CELL_CODES)}")
    if not any(ch != "P" for r in cells for ch in r):
        raise ValueError(f"{where}.cells: a board needs a playable cell")
    fixed = layout.get("fixed_boats", 0)
    maxp = layout.get("max_players", MAX_PLAYERS)
    if isinstance(fixed, bool) or not isinstance(fixed, int) or not 0 <= fixed <= 9:
        raise ValueError(f"{where}.fixed_boats must be an integer in 0..9")
    if isinstance(maxp, bool) or not isinstance(maxp, int) or not 2 <= maxp <= MAX_PLAYERS:
        raise ValueError(f"{where}.max_players must be an integer in 2..{MAX_PLAYERS}")
    if fixed == 0 and not any(ch in "Bb" for r in cells for ch in r):
        raise ValueError(f"{where}: a board needs at least one printed boat to move the ship")
    return rows, cols, "".join(cells), fixed, maxp


cdef bytes _pack(dict r, int players):
    cdef MRules R
    memset(&R, 0, sizeof(MRules))
    tiles = parse_tiles(r["tiles"])
    rows, cols, cells, fixed, _ = parse_board(r["board_side"], r["boards"][r["board_side"]])
    R.mode = MODES.index(r["mode"])
    R.rotate_palmless = r["rotate_palmless"]
    R.lei_whole_on_tile = GAME.choice_index(r, "lei_model")
    R.skip_per_position = GAME.choice_index(r, "skip_cost")
    R.shortfall_none = GAME.choice_index(r, "shell_shortfall")
    R.ship_start_random = GAME.choice_index(r, "ship_start")
    R.reef_boat_uncovered = r["reef_boat_counts_while_uncovered"]
    R.stall_rounds = r["stall_rounds"]
    R.max_turns = r["max_turns"]
    R.start_shells = r["start_shells"]
    R.total_shells = r["total_shells"]
    R.n_seat_shells = len(r["seat_bonus_shells"])
    for i, v in enumerate(r["seat_bonus_shells"]):
        R.seat_shells[i] = v
    R.rows = rows
    R.cols = cols
    R.fixed_boats = fixed
    for c, ch in enumerate(cells):
        R.cell_kind[c], R.cell_reef[c], R.cell_boat[c] = CELL_CODES[ch]
    R.n_tiles = len(tiles)
    for i, t in enumerate(tiles):
        (R.tiles[i].shape, R.tiles[i].open_mask, R.tiles[i].lei_mask, R.tiles[i].palms,
         R.tiles[i].hut, R.tiles[i].boats, R.tiles[i].shells) = t
    return (<char*>&R)[:sizeof(MRules)]


cdef dict _rules_of(const MRules* R, str side):
    """The resolved rules dict a packed rules struct was made from (tiles one per entry)."""
    cells = ""
    codes = {v: k for k, v in CELL_CODES.items()}
    for c in range(R.rows * R.cols):
        cells += codes[(R.cell_kind[c], R.cell_reef[c], R.cell_boat[c])]
    cdef const MTile* t
    tiles = []
    for i in range(R.n_tiles):
        t = &R.tiles[i]
        tiles.append({"shape": SHAPES[t.shape], "open": _mask_text(t.open_mask),
                      "palms": t.palms, "hut": t.hut, "boats": t.boats, "shells": t.shells,
                      "lei": _mask_text(t.lei_mask)})
    return {
        "mode": MODES[R.mode], "board_side": side,
        "rotate_palmless": bool(R.rotate_palmless),
        "lei_model": GAME.choice_at("lei_model", R.lei_whole_on_tile),
        "skip_cost": GAME.choice_at("skip_cost", R.skip_per_position),
        "shell_shortfall": GAME.choice_at("shell_shortfall", R.shortfall_none),
        "ship_start": GAME.choice_at("ship_start", R.ship_start_random),
        "reef_boat_counts_while_uncovered": bool(R.reef_boat_uncovered),
        "stall_rounds": R.stall_rounds, "max_turns": R.max_turns,
        "start_shells": R.start_shells, "total_shells": R.total_shells,
        "seat_bonus_shells": [int(R.seat_shells[i]) for i in range(R.n_seat_shells)],
        "tiles": tiles,
        "boards": {side: {"cells": [cells[i * R.cols:(i + 1) * R.cols] for i in range(R.rows)],
                          "fixed_boats": R.fixed_boats, "max_players": MAX_PLAYERS}},
    }


cdef inline MState* _st(State s):
    s._check_alive()
    return <MState*>s.buf


cdef str _tile_text(const MRules* R, int t):
    cdef const MTile* x = &R.tiles[t]
    bits = [SHAPES[x.shape]]
    if x.open_mask:
        bits.append("open " + _mask_text(x.open_mask))
    for name, v in (("palms", x.palms), ("hut", x.hut), ("boats", x.boats), ("shells", x.shells)):
        if v:
            bits.append(f"{name}={v}")
    if x.lei_mask:
        bits.append("lei " + _mask_text(x.lei_mask))
    return f"#{t} " + " ".join(bits)


def _id_or_none(v):
    return None if v == NO_TILE else int(v)


# The action ids by name (core_cy/engine/actions.py), from the same constants as the C encoding.
ACTIONS = ActionSpace(
    NUM_ACTIONS,
    Kind("ship_start", A_SHIP_START, position=TRACK),
    Kind("move", A_MOVE, distance=(1, TRACK)),
    Kind("take", A_TAKE, k=LINE, cell=MAX_CELLS, rotation=ROTATIONS),
    Kind("store", A_STORE, k=LINE),
    Kind("from_store", A_FROM_STORE, cell=MAX_CELLS, rotation=ROTATIONS),
    Kind("remove", A_REMOVE, cell=MAX_CELLS),
    Kind("pass", A_PASS),
    Kind("small_ship", A_SMALL_SHIP, cell=MAX_CELLS),
)


class MaoriGame(AgentGame):
    name = "maori"
    title = "Maori"
    min_players = 2
    max_players = MAX_PLAYERS
    policies = {
        "quick": "a cheap rollout policy for the search: a free explorer-ship move, then the "
                 "line or stored tile whose best fit (every open edge met, one met, or none "
                 "blocked, tried on every cell at once by the board's masks) scores most "
                 "after its skip cost; stores or passes when nothing fits",
    }
    # The measurements behind these values: docs/lab/search_agent.md.
    search_defaults = {"rollout": "quick", "cutoff": 8}
    options = options_from_data(HOME, "options.toml", MODES=MODES,
                                DEFAULT_BOARDS=DEFAULT_BOARDS, DEFAULT_TILES=DEFAULT_TILES)

    def check_rules(self, rules, players):
        if not isinstance(rules["boards"], dict) or rules["board_side"] not in rules["boards"]:
            raise ValueError(f"rule option 'boards' has no layout for board_side "
                             f"{rules['board_side']!r}")
        *_, maxp = parse_board(rules["board_side"], rules["boards"][rules["board_side"]])
        if players > maxp:
            raise ValueError(f"board_side {rules['board_side']!r} allows at most {maxp} "
                             f"players, got {players}")
        parse_tiles(rules["tiles"])
        if rules["total_shells"] < players * rules["start_shells"]:
            raise ValueError(f"rule option 'total_shells' ({rules['total_shells']}) is less "
                             f"than {players} players x start_shells ({rules['start_shells']})")
        extra = sum(rules["seat_bonus_shells"])
        if rules["total_shells"] < players * rules["start_shells"] + extra:
            raise ValueError(f"rule option 'seat_bonus_shells' ({rules['seat_bonus_shells']}) "
                             f"takes {extra} shells from a bank of "
                             f"{rules['total_shells'] - players * rules['start_shells']}")

    def pack_rules(self, rules, players):
        return _pack(rules, players)

    # ---- state dict ------------------------------------------------------------------
    def to_dict(self, State state):
        cdef MState* s = _st(state)
        cdef MPlayer* pl
        cdef MRules* R = &s.rules
        side = self._side_of(state)
        seats = []
        for i in range(s.head.players):
            pl = &s.p[i]
            board = [[None if pl.cell_tile[r * R.cols + c] == NO_TILE else
                      {"tile": int(pl.cell_tile[r * R.cols + c]),
                       "rotation": int(pl.cell_rot[r * R.cols + c])}
                      for c in range(R.cols)] for r in range(R.rows)]
            seats.append({
                "shells": int(pl.shells), "storage": _id_or_none(pl.storage),
                "small_ship": None if pl.ship_cell < 0 else [pl.ship_cell // R.cols, pl.ship_cell % R.cols],
                "board": board, "score": int(pl.score), "removed_at_end": int(pl.removed_at_end),
                "win_share": float(s.head.share[i]),
            })
        return {
            "game": self.name, "players": int(s.head.players), "rules": _rules_of(R, side),
            "phase": PHASES[s.phase], "current_player": int(s.head.current),
            "ship_position": None if s.ship_pos < 0 else int(s.ship_pos),
            "bank": int(s.bank),
            "display": [[_id_or_none(s.display[r * 4 + c]) for c in range(4)] for r in range(4)],
            "pile": [int(t) for t in s.pile[:s.pile_len]],
            "box": [int(t) for t in s.box[:s.box_len]],
            "end_trigger": None if s.end_trigger < 0 else int(s.end_trigger),
            "terminal": bool(s.head.terminal), "end_reason": END_REASONS[s.head.end_reason],
            "moves": int(s.head.moves), "turns": int(s.turns), "stall_turns": int(s.stall_turns),
            "rng": contract.rng_to_dict(state),
            "seats": seats,
        }

    def _side_of(self, State state):
        # The struct keeps the chosen layout, not its name: match it against the known sides.
        cdef MState* s = _st(state)
        for side, layout in DEFAULT_BOARDS.items():
            rows, cols, cells, fixed, _ = parse_board(side, layout)
            if (rows, cols, fixed) == (s.rules.rows, s.rules.cols, s.rules.fixed_boats) and all(
                    CELL_CODES[ch] == (s.rules.cell_kind[c], s.rules.cell_reef[c], s.rules.cell_boat[c])
                    for c, ch in enumerate(cells)):
                return side
        return "custom"

    def fill_state(self, State state, data, rules):
        _fill(_st(state), data)
        check_live(state)

    # ---- descriptions ----------------------------------------------------------------
    def describe(self, State state, action):
        cdef MState* s = _st(state)
        cdef MPlayer* pl = &s.p[s.head.current]
        cdef MRules* R = &s.rules
        kind, x = ACTIONS.decode(action)
        cell = lambda c: f"({c // R.cols},{c % R.cols})"
        turned = f" turned {90 * x['rotation']} degrees" if x.get("rotation") else ""
        if kind == "ship_start":
            return f"place the explorer ship at position {x['position']}"
        if kind == "move":
            d = x["distance"]
            pay = max(0, d - board_boats(s, pl))
            return (f"move the explorer ship {d} step{'s' if d > 1 else ''}"
                    + (f", paying {pay} shell{'s' if pay > 1 else ''}" if pay else ""))
        if kind == "take":
            t = s.display[line_slot(s.ship_pos, x["k"])] if s.ship_pos >= 0 else NO_TILE
            what = _tile_text(R, t) if t != NO_TILE else "nothing"
            return f"take tile {x['k'] + 1} of the line ({what}) and place it on {cell(x['cell'])}{turned}"
        if kind == "store":
            return f"take tile {x['k'] + 1} of the line into storage"
        if kind == "from_store":
            return f"place the stored tile on {cell(x['cell'])}{turned}"
        if kind == "remove":
            return f"remove the tile on {cell(x['cell'])} from the board"
        if kind == "pass":
            return "do nothing"
        return f"move the small ship to {cell(x['cell'])}"

    def score_breakdown(self, State state):
        """Per seat, each scoring line of section 5.2 (as if the game ended now, before the
        end: incomplete islands are then left out)."""
        cdef MState tmp
        cdef MScore sc[MAX_PLAYERS]
        memcpy(&tmp, _st(state), sizeof(MState))
        if not tmp.head.terminal:
            finish(&tmp, END_RUNNING)
        score_all(&tmp, sc)
        out = []
        for i in range(tmp.head.players):
            x = sc[i]
            out.append({
                "seat": i, "palms_without_hut": x.palms_plain, "palms_with_hut": x.palms_hut,
                "palm_points": x.palm_points, "leis": x.leis, "lei_points": LEI_POINTS * x.leis,
                "boats": x.boats, "boat_points": x.boat_points, "shells": x.shells,
                "shell_points": x.shell_points, "empty_cells": x.empty,
                "empty_points": -x.empty, "removed_at_end": int(tmp.p[i].removed_at_end),
                "total": x.total,
            })
        return out


cdef _fill(MState* s, top):
    """from_dict's Maori part (rules, players and rng are in place): reads every field of
    to_dict() through the codec, so that a bad value is named by its path."""
    cdef MRules* R = &s.rules
    cdef MPlayer* pl
    cdef int players = s.head.players
    ids = UniqueIds(R.n_tiles, "tile")
    s.phase = top.choice("phase", PHASES)
    s.head.current = top.int("current_player", 0, players - 1)
    ship = top.get("ship_position")
    if ship is None and s.phase != PH_SHIP_START:
        raise ValueError("state.ship_position may be null only in phase ship_start")
    s.ship_pos = -1 if ship is None else integer(ship, "state.ship_position", 0, TRACK - 1)
    display = top.grid("display", DISPLAY_SIDE, DISPLAY_SIDE)
    for r in range(DISPLAY_SIDE):
        for c in range(DISPLAY_SIDE):
            s.display[r * DISPLAY_SIDE + c] = _id_or_no_tile(
                ids.take(display[r][c], f"state.display[{r}][{c}]", nullable=True))
    pile = top.list("pile", max_len=MAX_TILES)
    for i, v in enumerate(pile):
        s.pile[i] = ids.take(v, f"state.pile[{i}]")
    s.pile_len = len(pile)
    box = top.list("box", max_len=MAX_TILES)
    for i, v in enumerate(box):
        s.box[i] = ids.take(v, f"state.box[{i}]")
    s.box_len = len(box)
    for i in range(MAX_PLAYERS):
        for c in range(MAX_CELLS):
            s.p[i].cell_tile[c] = NO_TILE
        s.p[i].storage = NO_TILE
        s.p[i].ship_cell = -1
    total_shells = 0
    for i, seat in enumerate(top.objs("seats", length=players)):
        pl = &s.p[i]
        pl.shells = seat.int("shells", 0, R.total_shells)
        total_shells += pl.shells
        pl.storage = _id_or_no_tile(ids.take(seat.get("storage"), seat.at("storage"),
                                             nullable=True))
        _fill_board(s, pl, seat, ids)
        _fill_small_ship(s, pl, seat, top.get("terminal", False))
        pl.score = seat.int("score", -10000, 10000)
        pl.removed_at_end = seat.int("removed_at_end", 0, MAX_CELLS)
        s.head.share[i] = seat.num("win_share", 0, 1)
    ids.check_all("the display, pile, box, a storage or on a board")
    s.bank = top.int("bank", 0, R.total_shells)
    if s.bank + total_shells != R.total_shells:
        raise ValueError(f"state: bank ({s.bank}) plus the seats' shells ({total_shells}) "
                         f"must equal total_shells ({R.total_shells})")
    trig = top.get("end_trigger")
    s.end_trigger = -1 if trig is None else integer(trig, "state.end_trigger", 0, players - 1)
    s.head.terminal = top.bool("terminal")
    s.head.end_reason = top.choice("end_reason", END_REASONS)
    s.head.moves = top.int("moves", 0, INT32_MAX)
    s.turns = top.int("turns", 0, INT32_MAX)
    s.stall_turns = top.int("stall_turns", 0, INT32_MAX)
    if s.head.terminal and s.head.end_reason == END_RUNNING:
        raise ValueError("state: a terminal state needs an end_reason")
    if not s.head.terminal and s.head.end_reason != END_RUNNING:
        raise ValueError("state.end_reason: expected 'running' while the game is not over")
    _check_results(s, top)


cdef _check_results(MState* s, top):
    """The end's results are the engine's to compute, never taken as given: a running game
    holds none, a finished one exactly the scoring of its position (section 5.2)."""
    cdef MState t
    cdef int i
    memcpy(&t, s, sizeof(MState))
    for i in range(s.head.players):
        t.p[i].score = 0
        t.head.share[i] = 0.0
    if s.head.terminal:
        t.head.terminal = 0
        finish(&t, s.head.end_reason)
    why = ("the scoring of this finished position" if s.head.terminal
           else "a running game has no results yet")
    for i, seat in enumerate(top.objs("seats")):
        if s.p[i].score != t.p[i].score:
            raise ValueError(f"{seat.at('score')}: expected {t.p[i].score}: {why}")
        if s.head.share[i] != t.head.share[i]:
            raise ValueError(f"{seat.at('win_share')}: expected {t.head.share[i]}: {why}")
        if not s.head.terminal and s.p[i].removed_at_end:
            raise ValueError(f"{seat.at('removed_at_end')}: expected 0: {why}")


cdef _fill_board(MState* s, MPlayer* pl, seat, ids):
    """One seat's board: rows x cols of null or {"tile": id, "rotation": 0..3}."""
    cdef MRules* R = &s.rules
    board = seat.grid("board", R.rows, R.cols)
    for r in range(R.rows):
        for c in range(R.cols):
            if board[r][c] is None:
                continue
            w = f"{seat.at('board')}[{r}][{c}]"
            if not isinstance(board[r][c], dict):
                raise ValueError(f"{w}: expected null or {{'tile': id, 'rotation': 0..3}}, "
                                 f"got {board[r][c]!r}")
            if R.cell_kind[r * R.cols + c] != CELL_PLAYABLE:
                raise ValueError(f"{w} is printed land: no tile can lie there")
            t = ids.take(board[r][c].get("tile"), w + ".tile")
            if R.tiles[t].shape == SH_VOLCANO:
                raise ValueError(f"{w}: a volcano cannot be on a board")
            rot = integer(board[r][c].get("rotation", 0), w + ".rotation", 0, ROTATIONS - 1)
            if rot and (R.tiles[t].palms or not R.rotate_palmless):
                raise ValueError(f"{w}: this tile cannot be turned (palms stay upright)")
            pl.cell_tile[r * R.cols + c] = t
            pl.cell_rot[r * R.cols + c] = rot


cdef _fill_small_ship(MState* s, MPlayer* pl, seat, terminal):
    """The seat's small ship: [row, col] on one of its tiles, or null before its first tile."""
    cdef MRules* R = &s.rules
    ship = seat.get("small_ship")
    if ship is None:
        if R.mode != MODE_BASIC and tiles_on_board(s, pl) > 0 and not terminal:
            raise ValueError(f"{seat.at('small_ship')}: a player with tiles has placed the ship")
        return
    if (not isinstance(ship, list) or len(ship) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in ship)
            or not (0 <= ship[0] < R.rows and 0 <= ship[1] < R.cols)):
        raise ValueError(f"{seat.at('small_ship')}: expected [row, col] on the "
                         f"{R.rows} x {R.cols} board or null, got {ship!r}")
    if R.mode == MODE_BASIC:
        raise ValueError(f"{seat.at('small_ship')}: the basic game has no small ships")
    pl.ship_cell = ship[0] * R.cols + ship[1]
    if pl.cell_tile[pl.ship_cell] == NO_TILE:
        raise ValueError(f"{seat.at('small_ship')} must stand on a tile")


def _id_or_no_tile(v):
    return NO_TILE if v is None else v


MaoriGame.handle = engine_handle(&ENGINE, MaoriGame, &_LAYOUT, sizeof(MState), &_LAYOUT.rules,
    sizeof(MRules), m_setup, m_legal, m_apply, m_scores, m_outcomes, m_heuristic, m_observe, m_policy,
    m_action_values)
GAME = MaoriGame()
