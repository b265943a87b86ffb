# cython: language_level=3
"""Mondo (Michael Schacht, Pegasus Spiele / Z-Man 2011) on the engine contract.

Rules: ../shared/rules/mondo.md (section numbers below refer to it).  The state is one flat C
struct (`MState`, rules and tile data included) so that clone is a memcpy; every function of
the engine table is nogil and allocation-free.  The Python face (`MondoGame`) at the bottom
validates rules, packs them into the struct and converts states to and from dicts.

Real time (section 4.3) is a discrete-event simulation.  Every hand (player) has the time of
its next decision, `t_next`; the current player is the unfinished hand with the smallest
t_next (ties: lowest seat).  A decision starts an operation whose duration comes from the
timing data divided by the hand's speed (SeatParams.speed times a LogNormal skill draw); its
effect lands when it completes, which is when that hand decides again:
  PICK(tile)        the tile enters the hand at completion if it is still in the pool (two
                    hands racing for a tile: the first to complete gets it, the other loses
                    the time); its duration includes scanning `scan_tiles` pool tiles
  FLIP(tile)        turns a pool tile's visible face at completion (if still in the pool)
  PLACE(c, f, r)    puts the hand's tile on the board (face f, r quarter turns clockwise);
                    a placement that would complete after the timer is cancelled and the
                    tile goes back to the pool at the round end
  RETURN            the hand's tile goes back to the pool at completion
  TASK(card)        Master level: takes a face-up extra task card at completion
  JUMP              jump out: at completion takes the top bonus chip and finishes the round;
                    a jump started before the timer completes even after it
The round ends when the earliest next decision is at or after the timer, or when every hand
has finished; pending jumps complete, tiles in hands return, and the round is scored.
"""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.string cimport memcpy, memset
from libc.stdint cimport int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, uint64_t
from libc.math cimport sqrt, log, cos, exp, M_PI
from core_cy.engine.contract cimport (Engine, GameHeader, begin_setup, end_game, share_best, EngineHandle, State, SeatParams, Rng, rng_below,
                               rng_shuffle, rng_uniform, engine_handle, MAX_SEATS, MAX_LEGAL)
from core_cy.engine import contract
from core_cy.engine.actions import ActionSpace, Kind
cdef extern from "meeple_bits.h":
    int lowest_bit "meeple_lowest64"(uint64_t x) noexcept nogil
    int popcount32 "meeple_popcount32"(uint32_t x) noexcept nogil

from core_cy.engine.codec import (INT32_MAX, Obj, UniqueIds, array, check_exact, check_live, choice, fail,
                           integer, items, leaf_weight_values, load_data, number)
from core_cy.engine.game import options_from_data
from core_cy.agents import AgentGame, policy_params_from_data

ENGINE_VERSION = "1.0"

cdef enum:
    MAX_PLAYERS = 4
    MAX_DIM = 6             # at most 6 rows and 6 columns
    MAX_CELLS = 36
    MAX_TILES = 200         # tile ids fit a uint8; NO_TILE marks "none"
    NO_TILE = 255
    DIRECTIONS = 4          # N, E, S, W: the edges of a tile, clockwise (D_* below)
    ROTATIONS = 4           # quarter turns of a tile
    FACES = 2               # every tile is double-sided
    MAX_SEGS = 6            # segments per face (4 edge groups plus internal patches)
    MAX_NODES = MAX_CELLS * MAX_SEGS
    N_SPECIES = 16
    N_MODIFIERS = 5
    MAX_TASKS = 12
    MAX_ROUNDS = 5
    MAX_BONUS = 4
    NAME_LEN = 16           # species names and task ids: at most 15 bytes (UTF-8)

cdef enum:
    D_NORTH = 0
    D_EAST = 1
    D_SOUTH = 2
    D_WEST = 3

# Terrains (section 2.3).
cdef enum:
    T_WATER = 0
    T_PLAINS = 1
    T_FOREST = 2
    T_DESERT = 3

# Volcano on a face.
cdef enum:
    V_NONE = 0
    V_ACTIVE = 1
    V_DORMANT = 2

cdef enum:
    LEVEL_BEGINNER = 0
    LEVEL_ADVANCED = 1
    LEVEL_MASTER = 2

cdef enum:
    HANDICAP_OFF = 0
    HANDICAP_ON = 1
    HANDICAP_STRONG = 2

# Scoring modifiers (section 2.6), in the order of MODIFIERS below.
cdef enum:
    MOD_MOST_AREAS = 0
    MOD_MOST_LAKES = 1
    MOD_MOST_WATER_ANIMALS = 2
    MOD_LARGEST_LAKE = 3
    MOD_LARGEST_FOREST = 4

# Task kinds (section 2.7).
cdef enum:
    TK_SPECIES3 = 0
    TK_ALL4 = 1
    TK_PERFECT = 2
    TK_IN_TIME = 3
    TK_FIRST = 4

# Where a tile is: the pool, a hand, or a board (plus the seat).
cdef enum:
    LOC_POOL = 0
    LOC_HAND = 1            # + seat
    LOC_BOARD = 8           # + seat

# Operation a hand has started and that completes at its t_next.
cdef enum:
    OP_NONE = 0
    OP_PICK = 1
    OP_FLIP = 2
    OP_RETURN = 3
    OP_TASK = 4
    OP_JUMP = 5

cdef enum:
    END_RUNNING = 0
    END_ROUNDS = 1          # every round was played
    END_SAFETY = 2          # a round hit the decision limit (simulator safety)

# Action ids: contiguous blocks, ascending in the order legal_actions emits them; inside a
# block the parameters are mixed-radix digits (ACTIONS below names them for Python,
# decompose() reads them in C, encode_place() writes a placement).
cdef enum:
    PLACINGS = FACES * ROTATIONS                # (face, rotation) choices on one space
    A_PICK = 0                                  # + tile
    A_FLIP = A_PICK + MAX_TILES                 # + tile
    A_TASK = A_FLIP + MAX_TILES                 # + task card
    A_JUMP = A_TASK + MAX_TASKS
    A_PLACE = A_JUMP + 1                        # + (cell, face, rotation)
    A_RETURN = A_PLACE + MAX_CELLS * PLACINGS
    NUM_ACTIONS = A_RETURN + 1

# Action kinds, in id order.
cdef enum:
    K_PICK = 0
    K_FLIP = 1
    K_TASK = 2
    K_JUMP = 3
    K_PLACE = 4
    K_RETURN = 5

ctypedef struct MAction:
    int kind                    # K_*
    int arg                     # pick/flip: the tile; task: the task card
    int cell                    # place
    int face                    # place
    int rot                     # place
    int placing                 # place: face * ROTATIONS + rot, 0..PLACINGS-1


cdef inline MAction decompose(int a) noexcept nogil:
    """The kind and parameters of action id a (Pgx's _decompose_action), blocks from the
    last down: apply, the fast paths and the policy read actions only through it."""
    cdef MAction x
    memset(&x, 0, sizeof(MAction))
    if a >= A_RETURN:
        x.kind = K_RETURN
    elif a >= A_PLACE:
        x.kind = K_PLACE
        x.cell = (a - A_PLACE) // PLACINGS
        x.placing = (a - A_PLACE) % PLACINGS
        x.face = x.placing // ROTATIONS
        x.rot = x.placing % ROTATIONS
    elif a == A_JUMP:
        x.kind = K_JUMP
    elif a >= A_TASK:
        x.kind = K_TASK
        x.arg = a - A_TASK
    elif a >= A_FLIP:
        x.kind = K_FLIP
        x.arg = a - A_FLIP
    else:
        x.kind = K_PICK
        x.arg = a - A_PICK
    return x


cdef inline int encode_place(int cell, int placing) noexcept nogil:
    """A placement of the tile in hand: placing = face * ROTATIONS + rotation."""
    return A_PLACE + cell * PLACINGS + placing


# Printed scoring constants (section 5.3, 2.6): not assumptions.
cdef enum:
    AREA_POINTS = 2
    MODIFIER_POINTS = 4

# Per-seat statistics summed over rounds (the seat outcome columns read them).
cdef enum:
    ST_EMPTY = 0
    ST_ERRORS = 1
    ST_BONUS_POINTS = 2
    ST_CHIPS = 3
    ST_ANIMALS = 4
    ST_AREAS = 5
    ST_VOLCANO = 6
    ST_MODIFIER = 7
    ST_TASKS = 8
    ST_PLACED = 9
    ST_JUMPED = 10
    ST_CHIP_ROUNDS = 11
    N_STATS = 12

ctypedef struct MFace:
    uint8_t edge[4]             # terrain of N, E, S, W at rotation 0
    uint8_t seg_of_edge[4]      # segment index of each edge
    uint8_t nseg
    uint8_t seg_terrain[MAX_SEGS]
    int8_t animal               # species, -1 for none
    uint8_t animal_seg
    uint8_t volcano
    uint8_t code                # edge terrains N, E, S, W at rotation 0, 2 bits each

ctypedef struct MRules:
    int32_t level
    int32_t rows
    int32_t cols
    int32_t frame               # 1: landscape-frame side (rim terrains from data)
    int32_t n_tiles
    int32_t rounds
    int32_t solo                # one player: the solo game (section 5.5)
    int32_t solo_threshold      # win if penalty < this
    int32_t n_marked
    int32_t marked[4]
    int32_t handicap
    int32_t advantaged          # bit mask of advantaged seats (handicap variant)
    int32_t n_seat_points       # seat compensation (an analysis option): values listed
    int32_t seat_points[MAX_PLAYERS]  # points seat k's final total gains
    int32_t volcano_scoring     # 0 in the children variant (ASSUMPTION)
    int32_t modifiers_on
    int32_t tasks_on
    int32_t n_tasks
    int32_t hidden_timer
    int32_t per_placement       # timing mode "per_placement"
    int32_t scan_tiles
    int32_t max_round_decisions
    int32_t bonus_n
    int32_t bonus[MAX_BONUS]    # the stack for this player count, top first
    int32_t task_kind[MAX_TASKS]
    int32_t task_arg[MAX_TASKS]
    int32_t task_points[MAX_TASKS]
    double timer                # seconds
    double hidden_sigma
    double skill_sigma
    double t_scan, t_pick, t_look, t_rotate, t_place, t_return, t_flip, t_task, t_jump
    double pp_mean, pp_sd, pp_min
    uint8_t rim[MAX_CELLS * DIRECTIONS]  # terrain outside each cell edge on the rim, NO_TILE inside
    uint8_t species_terrain[N_SPECIES]
    MFace faces[MAX_TILES][2]
    # Only for the rules dict (to_dict): the options as given, so that a state carries its
    # whole rules and any process can rebuild it (_rules_of).
    int32_t solo_difficulty     # index in SOLO
    int32_t timer_option        # timer_seconds (0: the level's timer)
    int32_t rounds_option       # rounds (0: the rulebook's)
    int32_t children
    int32_t children_minutes
    int32_t children_volcanoes
    int32_t n_species
    int32_t bonus_keys          # bit k: bonus_stack has a stack for k players
    int32_t bonus_len[MAX_PLAYERS + 1]
    int32_t bonus_all[MAX_PLAYERS + 1][MAX_BONUS]
    uint8_t frame_edge[4][MAX_DIM]  # board.frame top, right, bottom, left (terrains)
    char species_name[N_SPECIES][NAME_LEN]
    char task_id[MAX_TASKS][NAME_LEN]

ctypedef struct MPlayer:
    uint8_t cell_tile[MAX_CELLS]
    uint8_t cell_face[MAX_CELLS]
    uint8_t cell_rot[MAX_CELLS]
    uint8_t hand                # tile in hand or NO_TILE
    uint8_t hand_face           # the face that was up when it was picked
    uint8_t finished
    uint8_t pend                # OP_* started, completing at t_next
    uint8_t pend_arg
    uint8_t chip                # bonus chip value taken this round
    uint8_t jump_order          # 1 = first to jump out this round, 0 = not jumped
    uint8_t volcano_chip        # holds the volcano chip this round
    uint16_t tasks              # task cards held (bit mask)
    int16_t placed
    int32_t quarters            # board_quarters of the board, kept by put_on_board
    double t_next
    double speed                # seat speed times skill
    double noise                # hidden timer: this hand's error on the remaining time
    int32_t round_score[MAX_ROUNDS]
    int32_t stat[N_STATS]

ctypedef struct MState:
    GameHeader head               # rng, players, current, terminal, moves, end reason, shares
    MRules rules
    int32_t round
    int32_t round_moves
    int32_t safety_cuts
    int32_t timeouts            # rounds ended by the timer
    int32_t bonus_top           # chips taken from the stack this round
    int32_t jumps               # hands jumped out this round
    int32_t solo_penalty
    int32_t solo_win
    uint32_t task_up            # face-up task cards (bit mask)
    int32_t mod_deck[N_MODIFIERS]
    double clock
    uint8_t loc[MAX_TILES]
    uint8_t up[MAX_TILES]       # visible face of a pool tile (0 elsewhere)
    MPlayer p[MAX_PLAYERS]

cdef Engine ENGINE       # the engine table, filled at the end of the module (engine_handle)
cdef MState _LAYOUT      # one instance, to read where the rules are

ctypedef struct BoardInfo:
    int placed
    int empty
    int errors
    int matched                 # matching shared edges (heuristic)
    int animals
    int water_animals
    int active
    int dormant
    int closed_land             # enclosed error-free non-water areas (+2 each)
    int closed_by_terrain[4]
    int lakes
    int largest_lake
    int largest_forest
    uint32_t species3           # bit k: an enclosed area holds >= 3 of species k
    uint32_t all4               # bit t: an enclosed area of terrain t holds all its species

ctypedef struct RoundLines:
    BoardInfo b
    int chip
    int volcano
    int modifier_value
    int modifier
    int tasks
    int total


# ---------------------------------------------------------------- geometry

cdef inline int n_cells(const MRules* R) noexcept nogil:
    return R.rows * R.cols


cdef inline int neighbour(const MRules* R, int cell, int d) noexcept nogil:
    """The cell across direction d (D_*) of `cell`, or -1 off the board."""
    cdef int r = cell // R.cols, c = cell % R.cols
    if d == D_NORTH:
        r -= 1
    elif d == D_EAST:
        c += 1
    elif d == D_SOUTH:
        r += 1
    else:
        c -= 1
    if r < 0 or c < 0 or r >= R.rows or c >= R.cols:
        return -1
    return r * R.cols + c


cdef inline void neighbours(const MRules* R, int cell, int* nb) noexcept nogil:
    """nb[d] = neighbour(R, cell, d) for every direction, with one division (the agents'
    scans call this per cell and direction)."""
    cdef int r = cell // R.cols
    cdef int c = cell - r * R.cols
    nb[D_NORTH] = cell - R.cols if r > 0 else -1
    nb[D_EAST] = cell + 1 if c < R.cols - 1 else -1
    nb[D_SOUTH] = cell + R.cols if r < R.rows - 1 else -1
    nb[D_WEST] = cell - 1 if c > 0 else -1


cdef inline const MFace* cell_face(const MState* s, const MPlayer* pl, int c) noexcept nogil:
    return &s.rules.faces[pl.cell_tile[c]][pl.cell_face[c]]


# Directions are taken modulo DIRECTIONS by masking with DIRECTIONS - 1 (a power of two).
cdef inline int opposite(int d) noexcept nogil:
    return (d + DIRECTIONS // 2) & (DIRECTIONS - 1)


cdef inline int edge_at(const MFace* f, int rot, int d) noexcept nogil:
    """Terrain a face turned `rot` quarter turns clockwise shows in direction d."""
    return f.edge[(d - rot) & (DIRECTIONS - 1)]


cdef inline int seg_at(const MFace* f, int rot, int d) noexcept nogil:
    return f.seg_of_edge[(d - rot) & (DIRECTIONS - 1)]


cdef inline bint adjacent_to_tile(const MState* s, const MPlayer* pl, int c) noexcept nogil:
    cdef int d, nb
    for d in range(DIRECTIONS):
        nb = neighbour(&s.rules, c, d)
        if nb >= 0 and pl.cell_tile[nb] != NO_TILE:
            return True
    return False


cdef inline bint can_place(const MState* s, const MPlayer* pl, int c) noexcept nogil:
    """Section 4.1: an empty cell; after the first tile, sharing an edge with a tile."""
    if pl.cell_tile[c] != NO_TILE:
        return False
    return pl.placed == 0 or adjacent_to_tile(s, pl, c)


# ---------------------------------------------------------------- board analysis (section 5.1)

cdef inline int uf_find(int* parent, int x) noexcept nogil:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


cdef inline void uf_join(int* parent, int a, int b) noexcept nogil:
    a = uf_find(parent, a)
    b = uf_find(parent, b)
    if a != b:
        parent[a] = b


# How one edge of a placed tile meets what lies across it (section 5.1).
cdef enum:
    MEET_SEA = 0            # the rim of the water side, water: fine, but the area is the sea
    MEET_FRAME = 1          # the rim of the frame side, the same terrain: closes the area
    MEET_RIM_ERROR = 2      # the rim, another terrain: an error edge (B1)
    MEET_EMPTY = 3          # an empty space: the area is open, no error
    MEET_MATCH = 4          # a tile showing the same terrain: the two areas join
    MEET_ERROR = 5          # a tile showing another terrain: an error edge


cdef inline int meet(const MState* s, const MPlayer* pl, int c, int d, int nb, int t,
                     int* across) noexcept nogil:
    """How terrain t on edge d of cell c meets its surroundings (MEET_*), nb being the cell
    across that edge (neighbours(): the callers scan a cell's four edges with one division);
    for MATCH and ERROR, across = the segment node of the facing edge."""
    cdef const MRules* R = &s.rules
    cdef const MFace* g
    if nb < 0:
        if t != R.rim[c * DIRECTIONS + d]:
            return MEET_RIM_ERROR
        return MEET_FRAME if R.frame else MEET_SEA
    if pl.cell_tile[nb] == NO_TILE:
        return MEET_EMPTY
    g = cell_face(s, pl, nb)
    across[0] = nb * MAX_SEGS + seg_at(g, pl.cell_rot[nb], opposite(d))
    return MEET_MATCH if edge_at(g, pl.cell_rot[nb], opposite(d)) == t else MEET_ERROR


cdef inline bint first_side(int d) noexcept nogil:
    """Each shared edge is counted once, from its west or north tile (looking E or S)."""
    return d == D_EAST or d == D_SOUTH


cdef inline void count_face(const MRules* R, const MFace* f, BoardInfo* bi) noexcept nogil:
    """A placed face's animal and volcano."""
    bi.placed += 1
    if f.animal >= 0:
        bi.animals += 1
        if R.species_terrain[f.animal] == T_WATER:
            bi.water_animals += 1
    if f.volcano == V_ACTIVE:
        bi.active += 1
    elif f.volcano == V_DORMANT:
        bi.dormant += 1


cdef int link_areas(const MState* s, const MPlayer* pl, BoardInfo* bi, int* parent,
                    uint8_t* bad, uint8_t* rim, int16_t* open, int16_t* nodes) noexcept nogil:
    """What analyse() and build_areas() share: the board's counts (empty, placed, animals,
    volcanoes, errors, matched edges) and its segment nodes (cell * MAX_SEGS + segment)
    joined into areas (union-find `parent`), with per node (not yet per area): bad = an
    error edge or the sea, rim = touches the rim, open = edges facing an empty space.
    nodes[0 .. count - 1]: the segment nodes of the placed tiles in cell order (the count is
    returned), so that the callers walk them without finding the tiles again."""
    cdef const MRules* R = &s.rules
    cdef int c, d, k, n, m = 0, how, count = 0
    cdef int around[DIRECTIONS]
    cdef const MFace* f
    memset(bi, 0, sizeof(BoardInfo))
    for c in range(n_cells(R)):
        if pl.cell_tile[c] == NO_TILE:
            bi.empty += 1
            continue
        f = cell_face(s, pl, c)
        count_face(R, f, bi)
        for k in range(f.nseg):
            n = c * MAX_SEGS + k
            nodes[count] = <int16_t>n
            count += 1
            parent[n] = n
            bad[n] = 0
            rim[n] = 0
            open[n] = 0
    for c in range(n_cells(R)):
        if pl.cell_tile[c] == NO_TILE:
            continue
        f = cell_face(s, pl, c)
        neighbours(R, c, around)
        for d in range(DIRECTIONS):
            n = c * MAX_SEGS + seg_at(f, pl.cell_rot[c], d)
            how = meet(s, pl, c, d, around[d], edge_at(f, pl.cell_rot[c], d), &m)
            if how <= MEET_RIM_ERROR:
                rim[n] = 1
            if how == MEET_EMPTY:
                open[n] += 1                # open towards an empty space, not an error
            elif how != MEET_FRAME and how != MEET_MATCH:
                bad[n] = 1                  # an error edge, or water at the sea rim
            if how == MEET_RIM_ERROR or (how == MEET_ERROR and first_side(d)):
                bi.errors += 1              # section 5.1: rim mismatch (B1); shared edges once
            elif how == MEET_MATCH and first_side(d):
                bi.matched += 1
                uf_join(parent, n, m)
    return count


cdef inline int node_terrain(const MState* s, const MPlayer* pl, int n) noexcept nogil:
    """The terrain of segment node n (cell * MAX_SEGS + segment) of a placed tile."""
    return cell_face(s, pl, n // MAX_SEGS).seg_terrain[n % MAX_SEGS]


cdef void analyse(const MState* s, const MPlayer* pl, BoardInfo* bi, bint species) noexcept nogil:
    """Errors, empties, animals, volcanoes and the areas of one board.  An area is closed
    (enclosed and error-free) when every segment edge meets an equal terrain across a shared
    edge or, on the frame side, an equal rim terrain; a water area touching the rim is sea."""
    cdef const MRules* R = &s.rules
    cdef int nc = n_cells(R)
    cdef int parent[MAX_NODES]
    cdef uint8_t bad[MAX_NODES]
    cdef uint8_t rim[MAX_NODES]
    cdef int16_t open[MAX_NODES]
    cdef int size[MAX_NODES]
    cdef int last[MAX_NODES]
    cdef uint8_t cnt[MAX_NODES][N_SPECIES]
    cdef int16_t nodes[MAX_NODES]
    cdef int c, i, n, r, sp, terr, count
    cdef const MFace* f
    cdef uint32_t mask
    count = link_areas(s, pl, bi, parent, bad, rim, open, nodes)
    # Fold the flags onto the roots (open counts as bad: the area is not closed); size =
    # distinct tiles of the area (B12): a tile's segments are visited one after the other.
    memset(size, 0, nc * MAX_SEGS * sizeof(int))
    memset(last, 0xff, nc * MAX_SEGS * sizeof(int))      # -1: no tile yet
    for i in range(count):
        n = nodes[i]
        r = uf_find(parent, n)
        bad[r] |= bad[n] | (open[n] > 0)
        rim[r] |= rim[n]
        c = n // MAX_SEGS
        if last[r] != c:
            last[r] = c
            size[r] += 1
    if species:
        for i in range(count):
            n = nodes[i]
            if uf_find(parent, n) == n:
                memset(cnt[n], 0, N_SPECIES)
        for c in range(nc):
            if pl.cell_tile[c] == NO_TILE:
                continue
            f = cell_face(s, pl, c)
            if f.animal >= 0:
                r = uf_find(parent, c * MAX_SEGS + f.animal_seg)
                cnt[r][f.animal] += 1
    for i in range(count):
        n = nodes[i]
        if parent[n] != n or bad[n]:
            continue
        terr = node_terrain(s, pl, n)
        if terr == T_WATER:
            if not rim[n]:              # section 5.2: a lake never touches the rim
                bi.lakes += 1
                if size[n] > bi.largest_lake:
                    bi.largest_lake = size[n]
        else:
            bi.closed_land += 1
            bi.closed_by_terrain[terr] += 1
            if terr == T_FOREST and size[n] > bi.largest_forest:
                bi.largest_forest = size[n]
        if species:
            mask = 0
            for sp in range(N_SPECIES):
                if cnt[n][sp] >= 3:
                    bi.species3 |= (1u << sp)
                if cnt[n][sp] > 0:
                    mask |= (1u << sp)
            if all_species_of(R, terr, mask):
                bi.all4 |= (1u << terr)


cdef inline bint all_species_of(const MRules* R, int terr, uint32_t mask) noexcept nogil:
    cdef int sp, n = 0
    for sp in range(N_SPECIES):
        if R.species_terrain[sp] == terr:
            n += 1
            if not (mask & (1u << sp)):
                return False
    return n > 0


# ---------------------------------------------------------------- round scoring (section 5)

cdef int modifier_value(const BoardInfo* b, int mod) noexcept nogil:
    if mod == MOD_MOST_AREAS:
        return b.closed_land
    if mod == MOD_MOST_LAKES:
        return b.lakes
    if mod == MOD_MOST_WATER_ANIMALS:
        return b.water_animals
    if mod == MOD_LARGEST_LAKE:
        return b.largest_lake
    return b.largest_forest


cdef bint task_done(const MState* s, const MPlayer* pl, const BoardInfo* b, int k) noexcept nogil:
    cdef int kind = s.rules.task_kind[k]
    if kind == TK_SPECIES3:
        return (b.species3 >> s.rules.task_arg[k]) & 1
    if kind == TK_ALL4:
        return (b.all4 >> s.rules.task_arg[k]) & 1
    if kind == TK_PERFECT:
        return b.empty == 0 and b.errors == 0          # B8: rim errors count too
    if kind == TK_IN_TIME:
        return b.empty == 0
    return pl.jump_order == 1 and s.rules.bonus_n > 0  # B7: took the top (4) chip


cdef inline int current_modifier(const MState* s) noexcept nogil:
    return s.mod_deck[s.round % N_MODIFIERS]


cdef void score_round(const MState* s, RoundLines* L) noexcept nogil:
    """Every seat's lines for the current round as the boards stand (section 5.3; solo 5.5)."""
    cdef int i
    for i in range(s.head.players):
        memset(&L[i], 0, sizeof(RoundLines))
        analyse(s, &s.p[i], &L[i].b, s.rules.tasks_on)
    score_lines(s, L)


cdef void score_lines(const MState* s, RoundLines* L) noexcept nogil:
    """The round lines from each seat's board analysis L[i].b (the rest of L zeroed)."""
    cdef const MRules* R = &s.rules
    cdef int i, k, vmax = 0, lo = 1 << 30, hi = -1, mod
    cdef int counted[MAX_PLAYERS]
    cdef const MPlayer* pl
    for i in range(s.head.players):
        pl = &s.p[i]
        L[i].chip = pl.chip
        counted[i] = L[i].b.active + (L[i].b.dormant if pl.volcano_chip else 0)
        if counted[i] > vmax:
            vmax = counted[i]
    if R.solo:
        L[0].volcano = -(L[0].b.active + L[0].b.dormant)     # every volcano counts
        L[0].total = -L[0].b.empty - L[0].b.errors + L[0].volcano
        return
    for i in range(s.head.players):
        if not R.volcano_scoring:
            L[i].volcano = 0
        elif R.handicap != HANDICAP_OFF:
            if (R.advantaged >> i) & 1:
                L[i].volcano = 0
            else:
                L[i].volcano = -(L[i].b.active +
                                 (L[i].b.dormant if R.handicap == HANDICAP_STRONG else 0))
        elif vmax > 0 and counted[i] == vmax:                   # ties all pay (B10)
            L[i].volcano = -counted[i]
    if R.modifiers_on:
        mod = current_modifier(s)
        for i in range(s.head.players):
            L[i].modifier_value = modifier_value(&L[i].b, mod)
            if L[i].modifier_value < lo:
                lo = L[i].modifier_value
            if L[i].modifier_value > hi:
                hi = L[i].modifier_value
        if hi != lo:
            for i in range(s.head.players):
                if L[i].modifier_value == hi:
                    L[i].modifier = MODIFIER_POINTS
                elif L[i].modifier_value == lo:
                    L[i].modifier = -MODIFIER_POINTS
    if R.tasks_on:
        for i in range(s.head.players):
            for k in range(R.n_tasks):
                if (s.p[i].tasks >> k) & 1:
                    L[i].tasks += (R.task_points[k] if task_done(s, &s.p[i], &L[i].b, k)
                                   else -R.task_points[k])
    for i in range(s.head.players):
        L[i].total = (L[i].b.animals + AREA_POINTS * L[i].b.closed_land + L[i].chip
                      + L[i].volcano - L[i].b.empty - L[i].b.errors + L[i].modifier
                      + L[i].tasks)


# ---------------------------------------------------------------- chance helpers

cdef inline double normal(Rng* rng) noexcept nogil:
    """A standard normal draw (Box-Muller, one value per two uniforms)."""
    cdef double u1 = 1.0 - rng_uniform(rng), u2 = rng_uniform(rng)
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2)


cdef inline int face_terrains(const MFace* f) noexcept nogil:
    cdef int k, m = 0
    for k in range(f.nseg):
        m |= 1 << f.seg_terrain[k]
    return (m & 1) + ((m >> 1) & 1) + ((m >> 2) & 1) + ((m >> 3) & 1)


# ---------------------------------------------------------------- rounds

cdef void put_on_board(MState* s, int p, int tile, int face, int cell, int rot) noexcept nogil:
    cdef MPlayer* pl = &s.p[p]
    pl.cell_tile[cell] = <uint8_t>tile
    pl.cell_face[cell] = <uint8_t>face
    pl.cell_rot[cell] = <uint8_t>rot
    pl.placed += 1
    pl.quarters += placed_quarters(s, pl, cell)
    s.loc[tile] = <uint8_t>(LOC_BOARD + p)
    s.up[tile] = 0


cdef void solo_preplace(MState* s) noexcept nogil:
    """Section 3, solo: a random tile on each marked space, a face with >= 2 terrains up,
    redrawn while it shows a volcano; orientation random (ASSUMPTION)."""
    cdef int m, t, f, tries
    cdef bint ok0, ok1
    for m in range(s.rules.n_marked):
        for tries in range(100000):
            t = rng_below(&s.head.rng, s.rules.n_tiles)
            if s.loc[t] != LOC_POOL:
                continue
            ok0 = face_terrains(&s.rules.faces[t][0]) >= 2
            ok1 = face_terrains(&s.rules.faces[t][1]) >= 2
            if not ok0 and not ok1:
                continue
            f = (rng_below(&s.head.rng, 2)) if (ok0 and ok1) else (0 if ok0 else 1)
            if s.rules.faces[t][f].volcano != V_NONE:
                continue
            put_on_board(s, 0, t, f, s.rules.marked[m], rng_below(&s.head.rng, 4))
            break


cdef void start_round(MState* s) noexcept nogil:
    """Section 3/4: all tiles back in the pool (random face up), empty boards, full bonus
    stack, task cards dealt (Master), the clock at 0."""
    cdef int t, i, c
    cdef int32_t order[MAX_TASKS]
    cdef MPlayer* pl
    for t in range(MAX_TILES):
        s.loc[t] = LOC_POOL
        s.up[t] = 0
    for t in range(s.rules.n_tiles):
        s.up[t] = <uint8_t>rng_below(&s.head.rng, 2)
    for i in range(MAX_PLAYERS):
        pl = &s.p[i]
        for c in range(MAX_CELLS):
            pl.cell_tile[c] = NO_TILE
            pl.cell_face[c] = 0
            pl.cell_rot[c] = 0
        pl.hand = NO_TILE
        pl.hand_face = 0
        pl.finished = 0
        pl.pend = OP_NONE
        pl.pend_arg = 0
        pl.chip = 0
        pl.jump_order = 0
        pl.tasks = 0
        pl.placed = 0
        pl.quarters = 0
        pl.t_next = 0.0
        pl.noise = 0.0
        if i < s.head.players and s.rules.hidden_timer:
            pl.noise = normal(&s.head.rng) * s.rules.hidden_sigma
    s.bonus_top = 0
    s.jumps = 0
    s.clock = 0.0
    s.round_moves = 0
    s.task_up = 0
    if s.rules.tasks_on:
        for i in range(s.rules.n_tasks):
            order[i] = i
        rng_shuffle(&s.head.rng, order, s.rules.n_tasks, sizeof(order[0]))
        for i in range(min(2 * s.head.players, s.rules.n_tasks)):
            s.task_up |= 1u << order[i]
    if s.rules.solo:
        solo_preplace(s)


cdef void resolve(MState* s, int p) noexcept nogil:
    """The operation hand p started completes now."""
    cdef MPlayer* pl = &s.p[p]
    cdef int t = pl.pend_arg
    if pl.pend == OP_PICK:
        if s.loc[t] == LOC_POOL:            # else another hand got it first: time lost
            s.loc[t] = <uint8_t>(LOC_HAND + p)
            pl.hand = <uint8_t>t
            pl.hand_face = s.up[t]
            s.up[t] = 0
    elif pl.pend == OP_FLIP:
        if s.loc[t] == LOC_POOL:
            s.up[t] ^= 1
    elif pl.pend == OP_RETURN:
        s.loc[pl.hand] = LOC_POOL
        s.up[pl.hand] = pl.hand_face
        pl.hand = NO_TILE
        pl.hand_face = 0
    elif pl.pend == OP_TASK:
        if (s.task_up >> t) & 1:
            s.task_up &= ~(1u << t)
            pl.tasks |= <uint16_t>(1 << t)
    elif pl.pend == OP_JUMP:
        if s.bonus_top < s.rules.bonus_n:
            pl.chip = <uint8_t>s.rules.bonus[s.bonus_top]
            s.bonus_top += 1
        s.jumps += 1
        pl.jump_order = <uint8_t>s.jumps
        pl.finished = 1
    pl.pend = OP_NONE
    pl.pend_arg = 0


cdef void finish_game(MState* s, int reason) noexcept nogil:
    cdef int i, r
    cdef int tot[MAX_PLAYERS]
    for i in range(s.head.players):
        tot[i] = s.rules.seat_points[i]    # seat compensation (0 by the book)
        for r in range(s.rules.rounds):
            tot[i] += s.p[i].round_score[r]
    if s.rules.solo:
        s.head.share[0] = 1.0 if s.solo_win else 0.0
    else:
        share_best(s, tot, 1)
    end_game(s, reason)


cdef void complete_jumps(MState* s) noexcept nogil:
    """Section 4.2: jumps started before the timer complete, in completion order."""
    cdef int i, p
    while True:
        p = -1
        for i in range(s.head.players):
            if not s.p[i].finished and s.p[i].pend == OP_JUMP and (
                    p < 0 or s.p[i].t_next < s.p[p].t_next):
                p = i
        if p < 0:
            return
        resolve(s, p)


cdef void end_round(MState* s) noexcept nogil:
    """Section 4.2 and 5: jumps started before the timer complete (in completion order),
    tiles in hands go back, then the round is scored and the volcano chip moves."""
    cdef RoundLines L[MAX_PLAYERS]
    cdef int i, best = -(1 << 30)
    cdef MPlayer* pl
    complete_jumps(s)
    for i in range(s.head.players):
        pl = &s.p[i]
        pl.pend = OP_NONE
        pl.pend_arg = 0
        if pl.hand != NO_TILE:
            s.loc[pl.hand] = LOC_POOL
            s.up[pl.hand] = pl.hand_face
            pl.hand = NO_TILE
            pl.hand_face = 0
    score_round(s, L)
    for i in range(s.head.players):
        pl = &s.p[i]
        pl.round_score[s.round] = L[i].total
        pl.stat[ST_EMPTY] += L[i].b.empty
        pl.stat[ST_ERRORS] += L[i].b.errors
        pl.stat[ST_BONUS_POINTS] += L[i].chip
        pl.stat[ST_CHIPS] += 1 if L[i].chip > 0 else 0
        pl.stat[ST_ANIMALS] += L[i].b.animals
        pl.stat[ST_AREAS] += L[i].b.closed_land
        pl.stat[ST_VOLCANO] += L[i].volcano
        pl.stat[ST_MODIFIER] += L[i].modifier
        pl.stat[ST_TASKS] += L[i].tasks
        pl.stat[ST_PLACED] += L[i].b.placed
        pl.stat[ST_JUMPED] += 1 if pl.jump_order > 0 else 0
        pl.stat[ST_CHIP_ROUNDS] += pl.volcano_chip
        if L[i].total > best:
            best = L[i].total
    if s.rules.solo:
        s.solo_penalty = -L[0].total
        s.solo_win = 1 if s.solo_penalty < s.rules.solo_threshold else 0
    # The volcano chip goes to the round's top scorer(s) (B11); not used with the handicap.
    for i in range(s.head.players):
        s.p[i].volcano_chip = 1 if (not s.rules.solo and s.rules.handicap == HANDICAP_OFF
                                    and L[i].total == best) else 0
    s.round += 1
    if s.round >= s.rules.rounds:
        finish_game(s, END_SAFETY if s.safety_cuts else END_ROUNDS)
    else:
        start_round(s)


cdef int next_hand(const MState* s) noexcept nogil:
    cdef int i, p = -1
    for i in range(s.head.players):
        if not s.p[i].finished and (p < 0 or s.p[i].t_next < s.p[p].t_next):
            p = i
    return p


cdef void advance(MState* s) noexcept nogil:
    """Runs the clock to the next decision: completes operations, ends rounds."""
    cdef int p
    while not s.head.terminal:
        p = next_hand(s)
        if p < 0:
            end_round(s)                    # every hand jumped out
            continue
        if s.p[p].t_next >= s.rules.timer:
            s.timeouts += 1
            end_round(s)
            continue
        if s.round_moves >= s.rules.max_round_decisions:
            s.safety_cuts += 1              # simulator safety: never reached in practice
            end_round(s)
            continue
        resolve(s, p)
        if s.p[p].finished:
            continue
        s.head.current = p
        s.clock = s.p[p].t_next
        return


# ---------------------------------------------------------------- setup

cdef void m_setup(void* vs, const void* rules, int players, const SeatParams* seats,
                  const Rng* rng) noexcept nogil:
    cdef MState* s = <MState*>vs
    cdef int i
    cdef double sp
    begin_setup(&ENGINE, s, rules, players, rng)
    for i in range(players):
        sp = seats[i].speed
        if not (sp >= 0.01):                 # guards a zero, negative or NaN speed
            sp = 0.01
        if sp > 100.0:
            sp = 100.0
        s.p[i].speed = sp * exp(s.rules.skill_sigma * normal(&s.head.rng))
    for i in range(N_MODIFIERS):
        s.mod_deck[i] = i
    rng_shuffle(&s.head.rng, s.mod_deck, N_MODIFIERS, sizeof(s.mod_deck[0]))
    start_round(s)
    advance(s)


# ---------------------------------------------------------------- legal actions and apply

cdef int m_legal(const void* vs, int* out) noexcept nogil:
    cdef const MState* s = <const MState*>vs
    cdef const MPlayer* pl = &s.p[s.head.current]
    cdef int n = 0, t, c, k, nt = s.rules.n_tiles
    if s.head.terminal:
        return 0
    if pl.hand == NO_TILE:
        for t in range(nt):
            if s.loc[t] == LOC_POOL:
                out[n] = A_PICK + t
                n += 1
        for t in range(nt):
            if s.loc[t] == LOC_POOL:
                out[n] = A_FLIP + t
                n += 1
        if s.rules.tasks_on and pl.placed >= 3 and task_count(pl) < 2:
            for k in range(s.rules.n_tasks):
                if (s.task_up >> k) & 1:
                    out[n] = A_TASK + k
                    n += 1
        out[n] = A_JUMP
        return n + 1
    for c in range(n_cells(&s.rules)):
        if can_place(s, pl, c):
            for k in range(PLACINGS):
                out[n] = encode_place(c, k)
                n += 1
    out[n] = A_RETURN
    return n + 1


cdef inline int task_count(const MPlayer* pl) noexcept nogil:
    cdef int k, n = 0
    for k in range(MAX_TASKS):
        n += (pl.tasks >> k) & 1
    return n


cdef inline double place_seconds(const MState* s, const MPlayer* pl, int face, int rot,
                                 Rng* rng) noexcept nogil:
    """Seconds to place a tile at the player's speed 1 (per_placement mode draws them from
    rng: the game's stream in apply, a look-ahead's own in the action values)."""
    cdef double d
    if s.rules.per_placement:
        d = s.rules.pp_mean + s.rules.pp_sd * normal(rng)
        return d if d > s.rules.pp_min else s.rules.pp_min
    d = s.rules.t_place
    if face != pl.hand_face:
        d += s.rules.t_look
    if rot != 0:
        d += s.rules.t_rotate
    return d


cdef void m_apply(void* vs, int a) noexcept nogil:
    cdef MState* s = <MState*>vs
    cdef int p = s.head.current
    cdef MPlayer* pl = &s.p[p]
    cdef MAction x = decompose(a)
    cdef double t = s.clock, end
    s.head.moves += 1
    s.round_moves += 1
    if x.kind == K_PICK:
        pl.pend = OP_PICK
        pl.pend_arg = <uint8_t>x.arg
        if s.rules.per_placement:
            # The simpler model: the tile leaves the pool at decision time, no pick time.
            resolve(s, p)
        else:
            pl.t_next = t + (s.rules.t_pick + s.rules.t_scan * s.rules.scan_tiles) / pl.speed
    elif x.kind == K_FLIP:
        pl.pend = OP_FLIP
        pl.pend_arg = <uint8_t>x.arg
        pl.t_next = t + s.rules.t_flip / pl.speed
    elif x.kind == K_TASK:
        pl.pend = OP_TASK
        pl.pend_arg = <uint8_t>x.arg
        pl.t_next = t + s.rules.t_task / pl.speed
    elif x.kind == K_JUMP:
        pl.pend = OP_JUMP
        pl.t_next = t + s.rules.t_jump / pl.speed
    elif x.kind == K_PLACE:
        end = t + place_seconds(s, pl, x.face, x.rot, &s.head.rng) / pl.speed
        if end <= s.rules.timer:
            put_on_board(s, p, pl.hand, x.face, x.cell, x.rot)
            pl.hand = NO_TILE
            pl.hand_face = 0
        # else: cancelled by the timer; the tile goes back at the round end (section 4.3)
        pl.t_next = end
    else:
        pl.pend = OP_RETURN
        pl.t_next = t + s.rules.t_return / pl.speed
    advance(s)


# ---------------------------------------------------------------- rest of the contract

cdef void m_scores(const void* vs, double* out) noexcept nogil:
    """Sum of round scores; before the end the current round counts as it stands."""
    cdef const MState* s = <const MState*>vs
    cdef RoundLines L[MAX_PLAYERS]
    cdef int i, r
    if not s.head.terminal:
        score_round(s, L)
    for i in range(s.head.players):
        out[i] = s.rules.seat_points[i]    # seat compensation (0 by the book)
        for r in range(s.round if not s.head.terminal else s.rules.rounds):
            out[i] += s.p[i].round_score[r]
        if not s.head.terminal:
            out[i] += L[i].total



# Outcome fields: the names (the engine table counts them) and their indices in C.  A seat's
# fields are the scores of the rulebook's ROUND_COLUMNS rounds, then its stats (ST_* order).
GAME_OUTCOMES = ("solo_win", "solo_penalty", "rounds_timed_out", "safety_cuts")
SEAT_OUTCOMES = ("round1_score", "round2_score", "round3_score", "empty_spaces",
                 "error_edges", "bonus_points", "bonus_chips", "animals", "areas",
                 "volcano_points", "modifier_points", "task_points", "tiles_placed",
                 "jumped_out", "volcano_chip_rounds")
cdef enum:
    GO_SOLO_WIN = 0
    GO_SOLO_PENALTY = 1
    GO_TIMEOUTS = 2
    GO_SAFETY_CUTS = 3
cdef enum:
    ROUND_COLUMNS = 3
    SO_ROUND_SCORES = 0
    SO_STATS = SO_ROUND_SCORES + ROUND_COLUMNS


cdef void m_outcomes(const void* vs, double* g, double* so) noexcept nogil:
    cdef const MState* s = <const MState*>vs
    cdef double* o
    cdef int i, r
    g[GO_SOLO_WIN] = s.solo_win if s.rules.solo else 0.0
    g[GO_SOLO_PENALTY] = s.solo_penalty if s.rules.solo else 0.0
    g[GO_TIMEOUTS] = s.timeouts
    g[GO_SAFETY_CUTS] = s.safety_cuts
    for i in range(s.head.players):
        o = so + i * ENGINE.num_seat_outcomes
        for r in range(ROUND_COLUMNS):
            o[SO_ROUND_SCORES + r] = s.p[i].round_score[r]
        for r in range(N_STATS):
            o[SO_STATS + r] = s.p[i].stat[r]


# ---------------------------------------------------------------- heuristic and policy
#
# The heuristic values a seat's position as: past rounds + the board as it stands (exact
# score lines, volcanoes weighted by how likely they are to cost) + its chip + the tile on
# its way (in hand or being picked: the best spot for the face it saw) - every empty space,
# + (1 + FUTURE_GAIN) for each empty space the remaining time can still fill.  All board
# weights are dyadic so that sums are exact in any order: action_values (incremental) and
# the heuristic on the applied state (from scratch) then agree to the last bit.

cdef enum:
    NO_VALUE_CELL = -1

# Expected net points of a future placement besides the empty space it avoids (animals and
# closed areas minus errors of an average greedy placement; tuned with benchmarks/mondo_agents.py).
cdef double FUTURE_GAIN = 0.5
cdef double EDGE_MATCH = 0.75       # pick estimate: an edge matching a placed neighbour
cdef double EDGE_RIM = 0.25         # pick estimate: frame side, an edge matching the rim
cdef double NO_SPOT = -0.5          # a tile that has no space to go to (the board is full)


cdef inline double tile_seconds(const MState* s, const MPlayer* pl) noexcept nogil:
    """Expected seconds a hand needs per placed tile (pick with scanning, then place)."""
    if s.rules.per_placement:
        return s.rules.pp_mean / pl.speed
    return (s.rules.t_pick + s.rules.t_scan * s.rules.scan_tiles + s.rules.t_place
            + 0.5 * s.rules.t_look + 0.75 * s.rules.t_rotate) / pl.speed


cdef inline double remaining_at(const MState* s, const MPlayer* pl, double t_next) noexcept nogil:
    """Seconds left after t_next as this hand believes (hidden timer: with its own error)."""
    cdef double r = s.rules.timer - t_next
    if s.rules.hidden_timer:
        r += pl.noise
    return r if r > 0 else 0.0


cdef inline double remaining(const MState* s, const MPlayer* pl) noexcept nogil:
    return remaining_at(s, pl, pl.t_next)


cdef inline double volcano_weight(const MState* s, int v) noexcept nogil:
    if v == V_NONE or not s.rules.volcano_scoring:
        return 0.0
    if s.rules.solo:
        return 1.0                          # section 5.5: every volcano costs a point
    return 0.5 if v == V_ACTIVE else 0.25   # costs only with the majority (or the chip)


cdef inline double face_term(const MState* s, const MFace* f) noexcept nogil:
    """The position-free part of a face's worth: its animal and its volcano."""
    cdef double v = 0.0
    if f.animal >= 0 and not s.rules.solo:
        v = 1.0
    return v - volcano_weight(s, f.volcano)


# A board's worth in quarter points (integers: a placement's worth then sums from per-edge
# tables, see CellTable): per count of BoardInfo, solo (Q_SOLO_*) or not.
cdef enum:
    Q_ANIMAL = 4
    Q_CLOSED = 4 * AREA_POINTS
    Q_ERROR = -4
    Q_MATCH = 1                 # a matching shared edge (on the way to a closed area)
    Q_ACTIVE = -2
    Q_DORMANT = -1
    Q_SOLO_VOLCANO = -4         # solo: every volcano costs a point; animals and areas nothing


cdef inline int board_quarters(const MState* s, const BoardInfo* b) noexcept nogil:
    """A board's worth from its counts, without empties, chips and majorities, in quarters."""
    if s.rules.solo:
        return Q_ERROR * b.errors + Q_MATCH * b.matched + Q_SOLO_VOLCANO * (b.active + b.dormant)
    return (Q_ANIMAL * b.animals + Q_CLOSED * b.closed_land + Q_ERROR * b.errors
            + Q_MATCH * b.matched + Q_ACTIVE * b.active + Q_DORMANT * b.dormant)


cdef int closed_through(const MState* s, const MPlayer* pl, int cell) noexcept nogil:
    """How many closed land areas (as analyse() counts closed_land) run through the tile on
    `cell`: a walk over matching edges from each of its land segments, given up at the first
    edge that is neither a match nor the frame.  A tile joins no area closed before it (that
    area had no edge facing the empty cell), so these are the areas the tile closes."""
    cdef const MRules* R = &s.rules
    cdef const MFace* f = cell_face(s, pl, cell)
    cdef const MFace* g
    cdef uint8_t seen[MAX_NODES]
    cdef int16_t stack[MAX_NODES]
    cdef int around[DIRECTIONS]
    cdef int k, d, n, c, seg, rot, top, how, m = 0, count = 0
    cdef bint closed
    memset(seen, 0, sizeof(seen))
    for k in range(f.nseg):
        n = cell * MAX_SEGS + k
        if seen[n] or f.seg_terrain[k] == T_WATER:
            continue
        seen[n] = <uint8_t>(k + 1)
        stack[0] = <int16_t>n
        top = 1
        closed = True
        while top > 0 and closed:
            top -= 1
            n = stack[top]
            c = n // MAX_SEGS
            seg = n - c * MAX_SEGS
            g = cell_face(s, pl, c)
            rot = pl.cell_rot[c]
            neighbours(R, c, around)
            for d in range(DIRECTIONS):
                if seg_at(g, rot, d) != seg:
                    continue
                how = meet(s, pl, c, d, around[d], edge_at(g, rot, d), &m)
                if how == MEET_MATCH and not seen[m]:
                    seen[m] = <uint8_t>(k + 1)
                    stack[top] = <int16_t>m
                    top += 1
                elif how != MEET_FRAME and (how != MEET_MATCH or seen[m] != k + 1):
                    # open, an error, the sea, or an area an earlier walk found open
                    closed = False
                    break
        count += closed
    return count


cdef int placed_quarters(const MState* s, const MPlayer* pl, int cell) noexcept nogil:
    """What the tile just put on `cell` adds to board_quarters: its animal and volcano, its
    edges' errors and matches (a shared edge counts when its second tile comes), the closed
    land areas it completes."""
    cdef const MRules* R = &s.rules
    cdef const MFace* f = cell_face(s, pl, cell)
    cdef BoardInfo b
    cdef int around[DIRECTIONS]
    cdef int d, how, m = 0
    memset(&b, 0, sizeof(BoardInfo))
    count_face(R, f, &b)
    neighbours(R, cell, around)
    for d in range(DIRECTIONS):
        how = meet(s, pl, cell, d, around[d], edge_at(f, pl.cell_rot[cell], d), &m)
        if how == MEET_RIM_ERROR or how == MEET_ERROR:
            b.errors += 1
        elif how == MEET_MATCH:
            b.matched += 1
    if not R.solo:
        b.closed_land = closed_through(s, pl, cell)
    return board_quarters(s, &b)


cdef inline double board_value_b(const MState* s, const BoardInfo* b) noexcept nogil:
    """A board's worth from its counts, without empties, chips and majorities."""
    return 0.25 * board_quarters(s, b)




# ---- the open spaces of a board as bit masks (bit c: cell c), for the agents' scans

ctypedef struct CellMasks:
    uint64_t tiles              # cells holding a tile
    uint64_t empty              # cells without one
    uint64_t west               # the first column (no neighbour to the west)
    uint64_t east               # the last column
    uint64_t north              # the first row
    uint64_t south              # the last row


cdef inline void cell_masks(const MState* s, const MPlayer* pl, CellMasks* m) noexcept nogil:
    """The board's tiles and edges as masks: one pass over the cells, no division."""
    cdef const MRules* R = &s.rules
    cdef int c, r, n = n_cells(R)
    cdef uint64_t full = (<uint64_t>1 << n) - 1
    m.tiles = 0
    for c in range(n):                      # branch-free: tiles lie in no predictable order
        m.tiles |= <uint64_t>(pl.cell_tile[c] != NO_TILE) << c
    m.empty = full & ~m.tiles
    m.west = 0
    for r in range(R.rows):
        m.west |= <uint64_t>1 << (r * R.cols)
    m.east = m.west << (R.cols - 1)
    m.north = (<uint64_t>1 << R.cols) - 1
    m.south = m.north << (n - R.cols)


cdef inline uint64_t open_cells(const MPlayer* pl, const CellMasks* m, int cols) noexcept nogil:
    """can_place for every cell (section 4.1): the empty cells, after the first tile only
    those sharing an edge with a tile."""
    cdef uint64_t t = m.tiles
    if pl.placed == 0:
        return m.empty
    return m.empty & ((t << cols) | (t >> cols) | ((t << 1) & ~m.west) | ((t >> 1) & ~m.east))


cdef inline uint64_t open_spots(const MState* s, const MPlayer* pl) noexcept nogil:
    """open_cells of the seat's board, for a scan that needs no other mask."""
    cdef CellMasks cm
    cell_masks(s, pl, &cm)
    return open_cells(pl, &cm, s.rules.cols)


cdef inline int closed_sides(const CellMasks* m, int c, int cols) noexcept nogil:
    """How many sides of cell c face a tile or the rim (the quick policy's pick looks for
    the most hemmed-in open space)."""
    cdef uint64_t t = m.tiles
    return <int>((((m.north | (t << cols)) >> c) & 1) + (((m.south | (t >> cols)) >> c) & 1)
                 + (((m.west | (t << 1)) >> c) & 1) + (((m.east | (t >> 1)) >> c) & 1))


# ---- the worth of a face for a pick: best spot by its edges (section 5.1 proxies)

cdef inline int edge_values(const MState* s, const MPlayer* pl, int c, double* ev) noexcept nogil:
    """ev[d * 4 + t]: worth of showing terrain t towards direction d at empty cell c; returns
    a signature of the cell's surroundings (equal signatures give equal values)."""
    cdef const MRules* R = &s.rules
    cdef int d, t, nb, want, kind, sig = 0
    cdef int around[DIRECTIONS]
    cdef double hit, miss
    neighbours(R, c, around)
    for d in range(DIRECTIONS):
        nb = around[d]
        if nb < 0:
            want = R.rim[c * DIRECTIONS + d]
            hit = EDGE_RIM if R.frame else 0.0
            miss = -1.0
            kind = 4 + want
        elif pl.cell_tile[nb] == NO_TILE:
            want = -1
            hit = 0.0
            miss = 0.0
            kind = 8
        else:
            want = edge_at(cell_face(s, pl, nb), pl.cell_rot[nb], opposite(d))
            hit = EDGE_MATCH
            miss = -1.0
            kind = want
        for t in range(4):
            ev[d * 4 + t] = hit if t == want else miss
        sig |= kind << (4 * d)
    return sig


cdef inline int face_code(const MFace* f, int rot) noexcept nogil:
    """The face's terrains N, E, S, W on the board after `rot` quarter turns, 2 bits each:
    a turn moves every terrain one direction on, i.e. rotates the code by 2 bits."""
    cdef int c = f.code
    if rot == 0:
        return c
    return ((c << (2 * rot)) | (c >> (8 - 2 * rot))) & 0xFF


cdef inline double edge_sum(const double* ev, int code) noexcept nogil:
    """The edge worths (edge_values) of a face showing `code` (face_code) on that cell."""
    return ev[code & 3] + ev[4 + ((code >> 2) & 3)] + ev[8 + ((code >> 4) & 3)] + ev[12 + (code >> 6)]


cdef bint pick_table(const MState* s, const MPlayer* pl, float* T) noexcept nogil:
    """T[code] = best edge worth of a face showing `code` over every space it may go to;
    False when no space is open.  Spaces with equal surroundings are done once.  Floats are
    exact here (small dyadic sums) and let the compiler vectorise the 256-entry maxima."""
    cdef double ev[16]
    cdef float v16[16]
    cdef float v64[64]
    cdef int sigs[MAX_CELLS]
    cdef int nsig = 0, c, k, x, dd, sig, off
    cdef float e3, w
    cdef bint seen
    cdef uint64_t spots
    for k in range(256):
        T[k] = -1e30
    spots = open_spots(s, pl)
    while spots:
        c = lowest_bit(spots)
        spots &= spots - 1
        sig = edge_values(s, pl, c, ev)
        seen = False
        for k in range(nsig):
            if sigs[k] == sig:
                seen = True
                break
        if seen:
            continue
        sigs[nsig] = sig
        nsig += 1
        for x in range(16):
            v16[x] = <float>(ev[x & 3] + ev[4 + (x >> 2)])
        for dd in range(4):                 # 16 at a time: the loops vectorise
            e3 = <float>ev[8 + dd]
            off = dd << 4
            for x in range(16):
                v64[off + x] = v16[x] + e3
        for dd in range(4):
            e3 = <float>ev[12 + dd]
            off = dd << 6
            for x in range(64):
                w = v64[x] + e3
                T[off + x] = w if w > T[off + x] else T[off + x]
    return nsig > 0


cdef inline double table_pick(const MState* s, const float* T, bint any_spot,
                              const MFace* f) noexcept nogil:
    cdef int r
    cdef double v, best = -1e300
    if not any_spot:
        return NO_SPOT
    for r in range(ROTATIONS):
        v = T[face_code(f, r)]
        if v > best:
            best = v
    return best + face_term(s, f)


cdef double pick_value(const MState* s, const MPlayer* pl, const MFace* f) noexcept nogil:
    """The same worth as table_pick, straight from the board (one face)."""
    cdef double ev[16]
    cdef int c, r
    cdef double v, best = -1e300
    cdef bint any_spot = False
    cdef uint64_t spots
    spots = open_spots(s, pl)
    while spots:
        c = lowest_bit(spots)
        spots &= spots - 1
        any_spot = True
        edge_values(s, pl, c, ev)
        for r in range(ROTATIONS):
            v = edge_sum(ev, face_code(f, r))
            if v > best:
                best = v
    if not any_spot:
        return NO_SPOT
    return best + face_term(s, f)


cdef inline double fixed_part(const MState* s, int seat, double boardv, int chip,
                              bint jumping, int bonus_top) noexcept nogil:
    """Past rounds + the board + the chip (+ the chip being jumped for): dyadic numbers, so
    the sum is exact in any order."""
    cdef const MPlayer* pl = &s.p[seat]
    cdef double v = 0
    cdef int r
    for r in range(s.round):
        v += pl.round_score[r]
    v += boardv + chip
    if jumping and bonus_top < s.rules.bonus_n:
        v += s.rules.bonus[bonus_top]
    return v


cdef inline double fill_part(const MState* s, int seat, int empty, double t_next, bint done,
                             bint jumping) noexcept nogil:
    """(1 + FUTURE_GAIN) for each empty space the remaining time can still fill."""
    cdef const MPlayer* pl = &s.p[seat]
    cdef double fill
    if done or jumping:
        return 0.0
    fill = remaining_at(s, pl, t_next) / tile_seconds(s, pl)
    if fill > empty:
        fill = empty
    if s.rules.solo:
        return fill                         # solo: a placement brings no plus points
    return (1.0 + FUTURE_GAIN) * fill


cdef double compose(const MState* s, int seat, double boardv, int placed, int chip,
                    bint incoming, double inval, double t_next, bint done, bint jumping,
                    int bonus_top) noexcept nogil:
    """The heuristic from its parts, in the one order of operations that m_action_values
    repeats: fixed part, + the incoming tile, - the empty spaces, + the fillable ones."""
    cdef int empty = n_cells(&s.rules) - placed
    cdef double v = fixed_part(s, seat, boardv, chip, jumping, bonus_top)
    if incoming:
        v += inval
        if empty > 0:
            empty -= 1
    v -= empty
    return v + fill_part(s, seat, empty, t_next, done, jumping)


cdef inline const MFace* incoming_face(const MState* s, const MPlayer* pl) noexcept nogil:
    """The face of the tile on its way to the board: in hand (unless being returned) or
    being picked and still in the pool (the face the hand saw when it reached for it)."""
    cdef int t
    if pl.hand != NO_TILE:
        if pl.pend == OP_RETURN:
            return NULL
        return &s.rules.faces[pl.hand][pl.hand_face]
    if pl.pend == OP_PICK:
        t = pl.pend_arg
        if s.loc[t] == LOC_POOL:
            return &s.rules.faces[t][s.up[t]]
    return NULL


cdef double m_heuristic(const void* vs, int seat) noexcept nogil:
    cdef const MState* s = <const MState*>vs
    cdef const MPlayer* pl = &s.p[seat]
    cdef double best_other, inval = 0
    cdef double out[MAX_PLAYERS]
    cdef const MFace* f
    cdef int i
    if s.head.terminal:
        m_scores(vs, out)
        if s.head.players == 1:
            return out[seat]                # solo: no rival, no lead term
        best_other = -1e300
        for i in range(s.head.players):
            if i != seat and out[i] > best_other:
                best_other = out[i]
        return out[seat] + 0.01 * (out[seat] - best_other)
    f = incoming_face(s, pl)
    if f != NULL:
        inval = pick_value(s, pl, f)
    return compose(s, seat, 0.25 * pl.quarters, pl.placed, pl.chip, f != NULL, inval,
                   pl.t_next, pl.finished, pl.pend == OP_JUMP, s.bonus_top)


# ---------------------------------------------------------------- the search's cut-off judgement
#
# Each seat's chance to win, from the heuristic's parts (the heuristic is their sum with the
# weights the fitter finds) plus the round's other lines and the heuristic late in the game: a
# conditional logit over the seats, P(seat k wins) = exp(w.f_k) / sum_j exp(w.f_j) (ties
# share: there is no "nobody wins").  The weights are data fitted to game outcomes
# (data/leaf_value.json, by benchmarks/leaf_fit.py; docs/lab/2026-12-03-mondo-search.md); the
# search uses them with mcts(judge=fitted).

cdef enum:
    LF_BANKED = 0       # the seat's points of past rounds (and its seat compensation)
    LF_BOARD = 1        # the board's worth as the heuristic counts it (MPlayer.quarters)
    LF_CHIP = 2         # the bonus chip taken this round
    LF_JUMP_BONUS = 3   # the chip being jumped for
    LF_INCOMING = 4     # the worth of the tile on its way to the board
    LF_EMPTY = 5        # empty spaces (less the incoming tile's)
    LF_FILL = 6         # empty spaces the remaining time can still fill
    LF_ROUND_LINES = 7  # the round's volcano, modifier and task lines as the boards stand
    LF_LATE = 8         # the heuristic times the share of the game played
    N_LEAF = 9

LEAF_FEATURES = ("banked", "board", "chip", "jump_bonus", "incoming", "empty", "fill",
                 "round_lines", "late")
cdef double LEAF_W[N_LEAF]


cdef void seat_features(const MState* s, int seat, const RoundLines* L, double played,
                        double* f) noexcept nogil:
    """The seat's features (LF_*) with its round lines L; `played` is the share of the
    game's time gone."""
    cdef const MPlayer* pl = &s.p[seat]
    cdef const MFace* face = incoming_face(s, pl)
    cdef bint jumping = pl.pend == OP_JUMP
    cdef int r, empty = n_cells(&s.rules) - pl.placed
    f[LF_BANKED] = s.rules.seat_points[seat]
    for r in range(s.round):
        f[LF_BANKED] += pl.round_score[r]
    f[LF_BOARD] = 0.25 * pl.quarters
    f[LF_CHIP] = pl.chip
    f[LF_JUMP_BONUS] = s.rules.bonus[s.bonus_top] if jumping and s.bonus_top < s.rules.bonus_n \
        else 0.0
    f[LF_INCOMING] = 0.0
    if face != NULL:
        f[LF_INCOMING] = pick_value(s, pl, face)
        if empty > 0:
            empty -= 1
    f[LF_EMPTY] = empty
    f[LF_FILL] = 0.0
    if not pl.finished and not jumping:
        f[LF_FILL] = remaining_at(s, pl, pl.t_next) / tile_seconds(s, pl)
        if f[LF_FILL] > empty:
            f[LF_FILL] = empty
    f[LF_ROUND_LINES] = L.volcano + L.modifier + L.tasks
    f[LF_LATE] = played * compose(s, seat, f[LF_BOARD], pl.placed, pl.chip, face != NULL,
                                  f[LF_INCOMING], pl.t_next, pl.finished, jumping, s.bonus_top)


cdef void all_seat_features(const MState* s, double* f) noexcept nogil:
    """Every seat's features, N_LEAF a seat (a running game).  The round lines need each
    board's areas only for modifiers and tasks; the volcano line reads the placed faces."""
    cdef RoundLines L[MAX_PLAYERS]
    cdef const MPlayer* pl
    cdef double played
    cdef int i, c
    for i in range(s.head.players):
        pl = &s.p[i]
        memset(&L[i], 0, sizeof(RoundLines))
        if s.rules.modifiers_on or s.rules.tasks_on:
            analyse(s, pl, &L[i].b, s.rules.tasks_on)
        else:
            for c in range(n_cells(&s.rules)):
                if pl.cell_tile[c] != NO_TILE:
                    count_face(&s.rules, cell_face(s, pl, c), &L[i].b)
    score_lines(s, L)
    played = s.clock / s.rules.timer if s.rules.timer > 0 else 0.0
    played = (s.round + (played if played < 1.0 else 1.0)) / s.rules.rounds
    for i in range(s.head.players):
        seat_features(s, i, &L[i], played, f + i * N_LEAF)


cdef void m_leaf_values(const void* vs, double* out) noexcept nogil:
    """Each seat's chance to win (the conditional logit above) of a running game."""
    cdef const MState* s = <const MState*>vs
    cdef double f[MAX_PLAYERS * N_LEAF]
    cdef double top = -1e300, total = 0.0
    cdef int k, j
    all_seat_features(s, f)
    for k in range(s.head.players):
        out[k] = 0.0
        for j in range(N_LEAF):
            out[k] += LEAF_W[j] * f[k * N_LEAF + j]
        top = out[k] if out[k] > top else top
    for k in range(s.head.players):
        out[k] = exp(out[k] - top)
        total += out[k]
    for k in range(s.head.players):
        out[k] /= total


# ---- incremental placement values (exact score counts after one placement)

ctypedef struct Areas:
    BoardInfo b                 # the board's counts (analyse)
    int16_t root[MAX_NODES]     # area (root segment node) of each segment node
    int16_t open[MAX_NODES]     # per root: segment edges facing an empty space
    uint8_t bad[MAX_NODES]      # per root: an error edge or (water side) the sea
    uint8_t rim[MAX_NODES]      # per root: touches the rim
    int quarters                # board_quarters of b


cdef void build_areas(const MState* s, const MPlayer* pl, Areas* A) noexcept nogil:
    """The areas of a board with what section 5.1 needs to tell, after one more tile,
    whether an area becomes closed (open edges are counted instead of flagged), and the
    counts the heuristic reads (as analyse() finds them: the action_values tests compare)."""
    cdef BoardInfo* bi = &A.b
    cdef int parent[MAX_NODES]
    cdef int16_t nodes[MAX_NODES]
    cdef int i, n, t, r, count
    count = link_areas(s, pl, bi, parent, A.bad, A.rim, A.open, nodes)
    for i in range(count):
        n = nodes[i]
        r = uf_find(parent, n)
        A.root[n] = <int16_t>r
        if r != n:
            A.open[r] += A.open[n]
            A.bad[r] |= A.bad[n]
            A.rim[r] |= A.rim[n]
    for i in range(count):
        n = nodes[i]
        if A.root[n] != n or A.bad[n] or A.open[n] > 0:
            continue
        t = node_terrain(s, pl, n)
        if t == T_WATER:
            if not A.rim[n]:
                bi.lakes += 1
        else:
            bi.closed_land += 1
            bi.closed_by_terrain[t] += 1
    A.quarters = board_quarters(s, bi)


# What a tile on an empty cell adds to the board's worth, per edge (section 5.1, as meet()
# reads it): the same for every face and rotation tried there, so it is found once per cell.
ctypedef struct CellTable:
    int8_t q[DIRECTIONS * 4]        # [d * 4 + t]: quarter points of showing terrain t towards d
    uint8_t spoil[DIRECTIONS * 4]   # 1: the segment showing it is no closed area of its own
                                    # (it faces an empty space, an error, the sea or joins a
                                    # neighbouring area)
    uint8_t dirty[DIRECTIONS * 4]   # 1: ... nor part of one (all of that but the joining)
    int8_t area[DIRECTIONS]         # the neighbouring area across d (0 .. areas-1), -1: none
    int areas
    uint32_t good                   # bit j: area j may close (not bad, every open edge faces
                                    # the cell)
    uint32_t land                   # bit j: area j is land


cdef void cell_sides(const MState* s, const MPlayer* pl, const Areas* A, int c,
                     CellTable* ct) noexcept nogil:
    """What each edge of a tile on empty cell c adds, and the neighbouring areas (CellTable)."""
    cdef const MRules* R = &s.rules
    cdef const MFace* g
    cdef int around[DIRECTIONS]
    cdef int want[DIRECTIONS]
    cdef int root[DIRECTIONS]
    cdef int d, j, t, nb, od, facing, kind
    neighbours(R, c, around)
    ct.areas = 0
    ct.good = 0
    ct.land = 0
    for d in range(DIRECTIONS):
        nb = around[d]
        ct.area[d] = -1
        want[d] = -1                            # an empty space
        if nb < 0:
            want[d] = R.rim[c * DIRECTIONS + d]
        elif pl.cell_tile[nb] != NO_TILE:
            g = cell_face(s, pl, nb)
            od = opposite(d)
            want[d] = edge_at(g, pl.cell_rot[nb], od)
            root[ct.areas] = A.root[nb * MAX_SEGS + seg_at(g, pl.cell_rot[nb], od)]
            j = 0
            while root[j] != root[ct.areas]:
                j += 1
            ct.area[d] = <int8_t>j
            if j == ct.areas:
                ct.areas += 1
                if want[d] != T_WATER:
                    ct.land |= 1u << j
        for t in range(4):
            if want[d] < 0:                     # an empty space: open
                ct.q[d * 4 + t] = 0
                ct.dirty[d * 4 + t] = 1
            elif t != want[d]:                  # B1: a rim mismatch, or an error edge
                ct.q[d * 4 + t] = Q_ERROR
                ct.dirty[d * 4 + t] = 1
            elif nb < 0:                        # the matching rim: the sea on the water side
                ct.q[d * 4 + t] = 0
                ct.dirty[d * 4 + t] = not R.frame
            else:                               # a neighbour's matching edge: the areas join
                ct.q[d * 4 + t] = Q_MATCH
                ct.dirty[d * 4 + t] = 0
            ct.spoil[d * 4 + t] = ct.dirty[d * 4 + t] or ct.area[d] >= 0
    for j in range(ct.areas):
        facing = 0
        for d in range(DIRECTIONS):
            facing += ct.area[d] == j
        if not A.bad[root[j]] and A.open[root[j]] == facing:
            ct.good |= 1u << j


cdef inline int face_quarters(const MState* s, const MFace* f) noexcept nogil:
    """board_quarters' part of one more face: its animal and volcano."""
    if s.rules.solo:
        return Q_SOLO_VOLCANO * (f.volcano != V_NONE)
    return (Q_ANIMAL * (f.animal >= 0) + Q_ACTIVE * (f.volcano == V_ACTIVE)
            + Q_DORMANT * (f.volcano == V_DORMANT))


cdef inline int closing_areas(const CellTable* ct, const uint32_t* joined, uint32_t dead,
                              uint32_t dirty) noexcept nogil:
    """How many groups of neighbouring areas (joined[j]: the tile's segments that join area
    j) with the tile's segments they join become closed: no dead area, no dirty segment, land."""
    cdef int j, i, n = 0
    cdef uint32_t seen = 0, areas, segs
    cdef bint grown
    for j in range(ct.areas):
        if (seen >> j) & 1:
            continue
        areas = 1u << j
        segs = joined[j]
        grown = True
        while grown:                            # areas sharing a segment are one group
            grown = False
            for i in range(ct.areas):
                if not (areas >> i) & 1 and joined[i] & segs:
                    areas |= 1u << i
                    segs |= joined[i]
                    grown = True
        seen |= areas
        if not (areas & dead) and not (segs & dirty) and (ct.land >> j) & 1:
            n += 1
    return n


cdef double place_value(const MState* s, const Areas* A, const CellTable* ct, const MFace* f,
                        int rot) noexcept nogil:
    """board_value_b after putting face f turned `rot` on the empty cell of `ct`
    (cell_sides): the tile's segments join the neighbouring areas they match; those areas
    faced the cell, so they were open and every closed group is a new one."""
    cdef int d, j, k, q, code
    cdef uint32_t spoiled = 0, dirty = 0, land = 0, dead = ~ct.good
    cdef uint32_t joined[DIRECTIONS]
    code = face_code(f, rot)
    q = A.quarters + face_quarters(s, f)
    for d in range(DIRECTIONS):
        joined[d] = 0
    for d in range(DIRECTIONS):
        j = d * 4 + ((code >> (2 * d)) & 3)
        k = seg_at(f, rot, d)
        q += ct.q[j]
        spoiled |= <uint32_t>ct.spoil[j] << k
        dirty |= <uint32_t>ct.dirty[j] << k
        if ct.area[d] >= 0:
            if ct.dirty[j]:
                dead |= 1u << ct.area[d]        # an error edge: the area is bad
            else:
                joined[ct.area[d]] |= 1u << k
    if s.rules.solo:
        return 0.25 * q                         # closed areas score nothing in solo
    for d in range(f.nseg):
        land |= <uint32_t>(f.seg_terrain[d] != T_WATER) << d
    q += Q_CLOSED * popcount32(land & ~spoiled)  # the tile's own closed areas (inner patches)
    if ct.good & ~dead:
        q += Q_CLOSED * closing_areas(ct, joined, dead, dirty)
    return 0.25 * q


cdef void rotation_duplicates(const MFace* f, int* dup) noexcept nogil:
    """dup[r] = an earlier rotation showing the same terrains and segments, or -1."""
    cdef int r, q, d
    cdef int sig[ROTATIONS]
    for r in range(ROTATIONS):
        sig[r] = face_code(f, r)
        for d in range(DIRECTIONS):
            sig[r] |= seg_at(f, r, d) << (8 + 3 * d)
        dup[r] = -1
        for q in range(r):
            if sig[q] == sig[r]:
                dup[r] = q
                break


ctypedef struct Mine:
    int hand                    # the seat's hand tile after the clock ran on
    int hand_face
    int pend                    # its pending operation (OP_*)
    int chip
    bint finished
    int bonus_top
    int stopper                 # the hand that decides next (the seat itself or a rival)


cdef bint run_clock(const MState* s, int me, double t_me, Mine* m) noexcept nogil:
    """What advance() does after the seat's action, as far as the seat's heuristic sees it:
    hands' operations complete in clock order until one that has not finished must decide
    (the stopper: only its operation, if a rival's pick or flip, can touch the tile the seat
    reaches for; the caller checks that).  False when the round would end first: the caller
    then plays the action on a copy."""
    cdef double t[MAX_PLAYERS]
    cdef int pend[MAX_PLAYERS]
    cdef bint fin[MAX_PLAYERS]
    cdef int i, p
    if s.round_moves + 1 >= s.rules.max_round_decisions:
        return False
    for i in range(s.head.players):
        t[i] = s.p[i].t_next
        pend[i] = s.p[i].pend
        fin[i] = s.p[i].finished
    t[me] = t_me
    pend[me] = m.pend
    m.bonus_top = s.bonus_top
    while True:
        p = -1
        for i in range(s.head.players):
            if not fin[i] and (p < 0 or t[i] < t[p]):
                p = i
        if p < 0 or t[p] >= s.rules.timer:
            return False
        if pend[p] == OP_JUMP:
            if p == me and m.bonus_top < s.rules.bonus_n:
                m.chip = s.rules.bonus[m.bonus_top]
            if m.bonus_top < s.rules.bonus_n:
                m.bonus_top += 1
            fin[p] = 1
            if p == me:
                m.finished = 1
                m.pend = OP_NONE
            continue
        if p == me:
            if pend[p] == OP_RETURN:
                m.hand = NO_TILE
            m.pend = OP_NONE                # a pick completing here is the caller's part
        m.stopper = p
        return True


cdef enum:
    PLACE_DURATIONS = 4         # placement durations: (the other face?, turned?)


cdef double copy_value(const MState* s, int seat, int a) noexcept nogil:
    """heuristic(apply(s, a), seat) on a copy: the slow path for actions that end a round."""
    cdef MState tmp
    memcpy(&tmp, s, sizeof(MState))
    m_apply(&tmp, a)
    return m_heuristic(&tmp, seat)


cdef void round_end_places(const MState* s, int seat, const int* acts, const int* idx,
                           int cnt, double* out) noexcept nogil:
    """heuristic(apply(s, a), seat) for placements after which the round ends: the first is
    played on a copy; the others differ from it only in the round's scores, so each is the
    seat's board re-analysed, the round lines recomputed (volcano majorities and modifiers
    compare seats) and written into that copy's score sheet."""
    cdef MState post
    cdef MState pre
    cdef RoundLines L[MAX_PLAYERS]
    cdef BoardInfo keep
    cdef MPlayer* pl
    cdef int i, j, tile = s.p[seat].hand
    cdef MAction x
    memcpy(&post, s, sizeof(MState))
    m_apply(&post, acts[idx[0]])
    # The state the round is scored in, but for the seat's last tile: the jumps under way
    # complete (m_apply's clock and end_round do exactly that before scoring).
    memcpy(&pre, s, sizeof(MState))
    pl = &pre.p[seat]
    pl.hand = NO_TILE
    pl.hand_face = 0
    pl.placed += 1
    complete_jumps(&pre)
    for i in range(s.head.players):
        memset(&L[i], 0, sizeof(RoundLines))
        if i != seat:
            analyse(&pre, &pre.p[i], &L[i].b, s.rules.tasks_on)
    for j in range(cnt):
        x = decompose(acts[idx[j]])
        pl.cell_tile[x.cell] = <uint8_t>tile
        pl.cell_face[x.cell] = <uint8_t>x.face
        pl.cell_rot[x.cell] = <uint8_t>x.rot
        for i in range(s.head.players):
            memcpy(&keep, &L[i].b, sizeof(BoardInfo))
            memset(&L[i], 0, sizeof(RoundLines))
            memcpy(&L[i].b, &keep, sizeof(BoardInfo))
        analyse(&pre, pl, &L[seat].b, s.rules.tasks_on)
        score_lines(&pre, L)
        for i in range(s.head.players):
            post.p[i].round_score[s.round] = L[i].total
        out[idx[j]] = m_heuristic(&post, seat)
        pl.cell_tile[x.cell] = NO_TILE
        pl.cell_face[x.cell] = 0
        pl.cell_rot[x.cell] = 0


cdef inline double same_board_copy(const MState* s, int seat, int a, double* cache,
                                   bint* have) noexcept nogil:
    """copy_value for an action after which the round ends with the seat's board, hand
    and chip as they are (a pick, flip, task or return that does not complete, a cancelled
    placement): the round then ends the same way for all of them, so one copy serves."""
    if not have[0]:
        cache[0] = copy_value(s, seat, a)
        have[0] = True
    return cache[0]


cdef inline void mine_init(const MPlayer* pl, Mine* m, int pend) noexcept nogil:
    m.hand = pl.hand
    m.hand_face = pl.hand_face
    m.pend = pend
    m.chip = pl.chip
    m.finished = pl.finished
    m.bonus_top = 0
    m.stopper = -1


cdef inline double mine_value(const MState* s, int seat, const Mine* m, double boardv,
                              double t_me) noexcept nogil:
    """The heuristic after an action that changes neither the board nor what is incoming
    (flip, task, jump, return)."""
    return compose(s, seat, boardv, s.p[seat].placed, m.chip, False, 0.0, t_me, m.finished,
                   m.pend == OP_JUMP, m.bonus_top)


cdef int m_action_values(const void* vs, int seat, const int* acts, int n,
                         double* out) noexcept nogil:
    """heuristic(apply(state, a), seat) for every action without copying the state: the
    board is analysed once (its areas kept for placements), the pick worth of every face
    comes from one table, and the clock is run once per kind of action on the few fields the
    heuristic reads.  An action after which the round would end is played on a copy (once
    per kind when the board does not change)."""
    cdef const MState* s = <const MState*>vs
    cdef const MPlayer* pl = &s.p[seat]
    cdef Areas A
    cdef Mine m
    cdef Mine pm                        # picks: the clock run once for all of them
    cdef Mine km[PLACE_DURATIONS]       # placements: once per duration (other face?, turned?)
    cdef bint kok[PLACE_DURATIONS]
    cdef double kt[PLACE_DURATIONS]
    cdef bint kdone[PLACE_DURATIONS]
    cdef Rng rng
    cdef float T[256]
    cdef double boardv, t0 = s.clock, t_me, t_pick = 0, fixed_pick = 0, f_in = 0, f_out = 0
    cdef double v, slow_same = 0
    cdef double v_op[2]                 # flip, task: one value each (see below)
    cdef bint have_op[2]
    cdef bint have_pick = False, pick_ok = False
    cdef bint have_same = False
    cdef bint any_spot = False, hit, in_hand
    cdef double kfill[PLACE_DURATIONS]
    cdef double bv[PLACINGS]
    cdef int dup[PLACINGS]
    cdef MAction x
    cdef int i, a, k, key, up, empty, sop = OP_NONE, sarg = -1
    cdef int bv_cell = -1, bv_have = 0, nlate = 0
    cdef int late[MAX_CELLS * PLACINGS]
    cdef CellTable ct
    cdef double past = 0
    if seat != s.head.current or s.head.terminal:
        return 0
    for key in range(PLACE_DURATIONS):
        kdone[key] = False
    have_op[0] = have_op[1] = False
    for i in range(s.round):
        past += pl.round_score[i]
    if pl.hand != NO_TILE:
        build_areas(s, pl, &A)
        boardv = board_value_b(s, &A.b)
        for k in range(FACES):
            rotation_duplicates(&s.rules.faces[pl.hand][k], dup + k * ROTATIONS)
        for k in range(ROTATIONS, PLACINGS):
            if dup[k] >= 0:
                dup[k] += (k // ROTATIONS) * ROTATIONS
    else:
        boardv = 0.25 * pl.quarters
        any_spot = pick_table(s, pl, T)
    for i in range(n):
        a = acts[i]
        x = decompose(a)
        if x.kind == K_PICK:
            if not have_pick:
                have_pick = True
                # per_placement: the tile is in hand at once and no time passes (m_apply).
                mine_init(pl, &pm, OP_NONE if s.rules.per_placement else OP_PICK)
                t_pick = pl.t_next if s.rules.per_placement else (
                    t0 + (s.rules.t_pick + s.rules.t_scan * s.rules.scan_tiles) / pl.speed)
                pick_ok = run_clock(s, seat, t_pick, &pm)
                if pick_ok:
                    if pm.stopper != seat:
                        sop = s.p[pm.stopper].pend
                        sarg = s.p[pm.stopper].pend_arg
                    empty = n_cells(&s.rules) - pl.placed
                    fixed_pick = fixed_part(s, seat, boardv, pm.chip, False, pm.bonus_top)
                    f_out = fill_part(s, seat, empty, t_pick, pm.finished, False)
                    f_in = fill_part(s, seat, empty - 1 if empty > 0 else 0, t_pick,
                                     pm.finished, False)
            if not pick_ok:
                out[i] = same_board_copy(s, seat, a, &slow_same, &have_same)
                continue
            up = s.up[x.arg]
            in_hand = s.rules.per_placement or pm.stopper == seat
            if not in_hand and sop == OP_PICK and sarg == x.arg:
                # A rival's pick of the same tile completes first: nothing comes.
                empty = n_cells(&s.rules) - pl.placed
                out[i] = fixed_pick - empty + f_out
                continue
            if not in_hand and sop == OP_FLIP and sarg == x.arg:
                up ^= 1
            empty = n_cells(&s.rules) - pl.placed
            v = fixed_pick + table_pick(s, T, any_spot, &s.rules.faces[x.arg][up])
            if empty > 0:
                empty -= 1
            out[i] = v - empty + f_in
        elif x.kind == K_FLIP or x.kind == K_TASK:
            # Every flip (every task) takes the same time and leaves board and hand alone.
            k = x.kind == K_TASK
            if not have_op[k]:
                have_op[k] = True
                mine_init(pl, &m, OP_TASK if k else OP_FLIP)
                t_me = t0 + (s.rules.t_task if k else s.rules.t_flip) / pl.speed
                v_op[k] = mine_value(s, seat, &m, boardv, t_me) if run_clock(s, seat, t_me, &m) \
                    else same_board_copy(s, seat, a, &slow_same, &have_same)
            out[i] = v_op[k]
        elif x.kind == K_JUMP:
            mine_init(pl, &m, OP_JUMP)
            t_me = t0 + s.rules.t_jump / pl.speed
            out[i] = mine_value(s, seat, &m, boardv, t_me) if run_clock(s, seat, t_me, &m) \
                else copy_value(s, seat, a)
        elif x.kind == K_PLACE:
            key = 0 if s.rules.per_placement else ((x.face != pl.hand_face) * 2 + (x.rot != 0))
            if not kdone[key]:
                kdone[key] = True
                rng = s.head.rng
                kt[key] = t0 + place_seconds(s, pl, x.face, x.rot, &rng) / pl.speed
                mine_init(pl, &km[key], OP_NONE)
                if kt[key] <= s.rules.timer:
                    km[key].hand = NO_TILE
                kok[key] = run_clock(s, seat, kt[key], &km[key])
                kfill[key] = fill_part(s, seat, n_cells(&s.rules) - pl.placed - 1, kt[key],
                                       km[key].finished, False)
            if not kok[key] and kt[key] <= s.rules.timer:
                late[nlate] = i             # the round ends after it: see below
                nlate += 1
            elif not kok[key]:
                # Cancelled by the timer and the round ends: the tile goes back, the board
                # stays as it is.
                out[i] = same_board_copy(s, seat, a, &slow_same, &have_same)
            elif kt[key] <= s.rules.timer:
                k = x.placing
                if x.cell != bv_cell:
                    bv_cell = x.cell
                    bv_have = 0
                    cell_sides(s, pl, &A, x.cell, &ct)
                if dup[k] >= 0 and (bv_have >> dup[k]) & 1:
                    bv[k] = bv[dup[k]]      # the same edges and segments: the same counts
                else:
                    bv[k] = place_value(s, &A, &ct, &s.rules.faces[pl.hand][x.face], x.rot)
                bv_have |= 1 << k
                # compose() for a placement, its parts that do not depend on the cell
                # computed once: the same operations in the same order.
                v = past + (bv[k] + km[key].chip)
                out[i] = (v - (n_cells(&s.rules) - pl.placed - 1)) + kfill[key]
            else:
                # Cancelled by the timer: the tile stays in hand until the round ends.
                out[i] = compose(s, seat, boardv, pl.placed, km[key].chip, True,
                                 pick_value(s, pl, &s.rules.faces[pl.hand][pl.hand_face]),
                                 kt[key], km[key].finished, False, km[key].bonus_top)
        else:
            mine_init(pl, &m, OP_RETURN)
            t_me = t0 + s.rules.t_return / pl.speed
            out[i] = mine_value(s, seat, &m, boardv, t_me) if run_clock(s, seat, t_me, &m) \
                else same_board_copy(s, seat, a, &slow_same, &have_same)
    if nlate > 0:
        round_end_places(s, seat, acts, late, nlate, out)
    return 1


cdef int place_choice(const MState* s, int p, double* value) noexcept nogil:
    """Best (cell, face, rotation) for the tile in hand by the change of board_value
    (incremental: one analysis of the board, then each candidate as a delta)."""
    cdef const MPlayer* pl = &s.p[p]
    cdef Areas A
    cdef CellTable ct
    cdef int c, k, best = -1
    cdef double base, v, best_v = -1e9
    cdef uint64_t spots
    build_areas(s, pl, &A)
    base = board_value_b(s, &A.b)
    spots = open_spots(s, pl)
    while spots:
        c = lowest_bit(spots)
        spots &= spots - 1
        cell_sides(s, pl, &A, c, &ct)
        for k in range(PLACINGS):
            v = place_value(s, &A, &ct, &s.rules.faces[pl.hand][k // ROTATIONS],
                            k % ROTATIONS) - base
            if k // ROTATIONS != pl.hand_face:
                v -= 0.01                   # the look at the other face costs a little time
            if v > best_v:
                best_v = v
                best = encode_place(c, k)
    value[0] = best_v
    return best


cdef enum:
    QUICK_SCAN = 12             # pool tiles the quick policy looks at per pick


cdef int quick_place(const MState* s, int p, double* value) noexcept nogil:
    """Best (cell, face, rotation) for the tile in hand by its edges alone (the pick
    estimate's edge worths: no area analysis), for the quick policy."""
    cdef const MPlayer* pl = &s.p[p]
    cdef const MFace* f
    cdef double ev[16]
    cdef double term[PLACINGS]
    cdef int codes[PLACINGS]
    cdef int c, k, best = -1
    cdef double v, best_v = -1e9
    cdef uint64_t spots
    for k in range(PLACINGS):
        f = &s.rules.faces[pl.hand][k // ROTATIONS]
        codes[k] = face_code(f, k % ROTATIONS)
        term[k] = face_term(s, f)
        if k // ROTATIONS != pl.hand_face:
            term[k] -= 0.01                 # the look at the other face costs a little time
    spots = open_spots(s, pl)
    while spots:
        c = lowest_bit(spots)
        spots &= spots - 1
        edge_values(s, pl, c, ev)
        for k in range(PLACINGS):
            v = edge_sum(ev, codes[k]) + term[k]
            if v > best_v:
                best_v = v
                best = encode_place(c, k)
    value[0] = best_v
    return best


cdef int quick_pick(const MState* s, const MPlayer* pl, uint8_t* pool, int n,
                    Rng* rng) noexcept nogil:
    """The quick policy's pick: of QUICK_SCAN random pool tiles (visible faces), the one
    whose edges best fit the most hemmed-in open space (most placed neighbours: where a
    good fit is rarest), by the pick estimate's edge worths for that one space."""
    cdef double ev[16]
    cdef double ne[16]
    cdef double sw[16]
    cdef int c, hemmed, most = -1, ties = 0, cell = -1, i, j, r, x, code, best = pool[0]
    cdef uint8_t tmp
    cdef double v, e, best_v = -1e300
    cdef const MFace* f
    cdef CellMasks cm
    cdef uint64_t spots
    cell_masks(s, pl, &cm)
    spots = open_cells(pl, &cm, s.rules.cols)
    while spots:
        c = lowest_bit(spots)
        spots &= spots - 1
        hemmed = closed_sides(&cm, c, s.rules.cols)
        if hemmed > most:
            most = hemmed
            cell = c
            ties = 1
        elif hemmed == most:
            ties += 1
            if rng_below(rng, ties) == 0:
                cell = c
    if cell < 0:
        return pool[rng_below(rng, n)]
    edge_values(s, pl, cell, ev)
    for x in range(16):         # the worths of the N+E and the S+W terrains (exact sums)
        ne[x] = ev[x & 3] + ev[4 + (x >> 2)]
        sw[x] = ev[8 + (x & 3)] + ev[12 + (x >> 2)]
    for i in range(QUICK_SCAN if QUICK_SCAN < n else n):
        j = i + rng_below(rng, n - i)
        tmp = pool[i]
        pool[i] = pool[j]
        pool[j] = tmp
        f = &s.rules.faces[pool[i]][s.up[pool[i]]]
        e = -1e300
        for r in range(ROTATIONS):
            code = face_code(f, r)
            e = max(e, ne[code & 15] + sw[code >> 4])
        v = e + face_term(s, f)             # the best rotation's: all worths are dyadic
        if v > best_v:
            best_v = v
            best = pool[i]
    return best


cdef int satisfied_task(const MState* s, const MPlayer* pl) noexcept nogil:
    """A face-up task this board fulfils if the hand jumps out now, or -1."""
    cdef BoardInfo b
    cdef MPlayer tmp
    cdef int k
    if not s.rules.tasks_on or pl.placed < 3 or task_count(pl) >= 2 or s.task_up == 0:
        return -1
    memcpy(&tmp, pl, sizeof(MPlayer))
    tmp.jump_order = <uint8_t>(s.jumps + 1)    # FIRST: nobody has jumped out yet
    analyse(s, pl, &b, True)
    for k in range(s.rules.n_tasks):
        if (s.task_up >> k) & 1 and task_done(s, &tmp, &b, k):
            return k
    return -1


cdef int greedy_placer(const void* vs, Rng* rng) noexcept nogil:
    return placer(vs, rng, False)


cdef int placer(const void* vs, Rng* rng, bint quick) noexcept nogil:
    """Scans `scan_tiles` pool tiles (visible faces only), picks the one that fits best,
    places it where it scores best (either face, any rotation; quick: by its edges alone),
    returns a hopeless tile, and jumps out for a bonus chip when the chip beats what the
    remaining time can fill."""
    cdef const MState* s = <const MState*>vs
    cdef int p = s.head.current, n = 0, i, j, t, k, best = -1, empty, can
    cdef const MPlayer* pl = &s.p[p]
    cdef uint8_t pool[MAX_TILES]
    cdef uint8_t tmp
    cdef float T[256]
    cdef double v, best_v = -1e300, rem = remaining(s, pl), tau = tile_seconds(s, pl)
    cdef double chip_now = 0, go_on
    cdef bint jump = False, any_spot
    if pl.hand != NO_TILE:
        k = quick_place(s, p, &v) if quick else place_choice(s, p, &v)
        if k < 0 or (v < -1.5 and rem > 3 * tau):
            return A_RETURN
        return k
    empty = n_cells(&s.rules) - pl.placed
    if s.bonus_top < s.rules.bonus_n:
        chip_now = s.rules.bonus[s.bonus_top]
    can = <int>(rem / tau)
    if empty == 0 or rem < tau:
        jump = True
    elif not s.rules.solo and chip_now > 0 and can < empty:
        # Jump now for the chip, or fill what time allows (no chip left by then)?  A
        # placed tile is worth about 1.5 (an empty space avoided, half an animal).
        go_on = 1.5 * can
        jump = chip_now > go_on
    for t in range(s.rules.n_tiles):        # branch-free: which tiles are in the pool is
        pool[n] = <uint8_t>t                # random, and a mispredicted branch per tile cost
        n += s.loc[t] == LOC_POOL           # a fifth of the quick policy's time
    if n == 0:
        jump = True
    if jump:
        k = satisfied_task(s, pl)
        return A_TASK + k if k >= 0 else A_JUMP
    k = s.rules.scan_tiles if s.rules.scan_tiles < n else n
    if k < 1:
        k = 1
    if quick:
        return A_PICK + quick_pick(s, pl, pool, n, rng)
    any_spot = pick_table(s, pl, T)
    for i in range(k):
        j = i + rng_below(rng, n - i)
        tmp = pool[i]
        pool[i] = pool[j]
        pool[j] = tmp
        t = pool[i]
        v = table_pick(s, T, any_spot, &s.rules.faces[t][s.up[t]])
        if v > best_v:
            best_v = v
            best = t
    return A_PICK + best


include "solo_planner.pxi"


cdef enum:
    POLICY_QUICK = 2            # Engine.policy `which` (the order of MondoGame.policies)


cdef int m_policy(const void* vs, int which, const double* params, Rng* rng,
                  void* scratch) noexcept nogil:
    if which == POLICY_SOLO_PLANNER:
        return solo_planner(vs, params, rng, scratch)
    return placer(vs, rng, which == POLICY_QUICK)


cdef void m_observe(const void* vs, int seat, void* out, Rng* rng) noexcept nogil:
    """Nothing is hidden in the simulation state but the down faces of pool tiles, which
    the policies never read; the hidden timer lives in the seat's own `noise`."""
    memcpy(out, vs, sizeof(MState))




# ================================================================ Python face

TERRAINS = "WPFD"
TERRAIN_NAMES = {"W": "water", "P": "plains", "F": "forest", "D": "desert"}
EDGE_LETTERS = "NESW"
LEVELS = ("beginner", "advanced", "master")
MODIFIERS = ("MOST_AREAS", "MOST_LAKES", "MOST_WATER_ANIMALS", "LARGEST_LAKE", "LARGEST_FOREST")
TASK_KINDS = ("species3", "all4", "perfect", "in_time", "first")
VOLCANOES = (None, "active", "dormant")
OPS = (None, "pick", "flip", "return", "task", "jump")
END_REASONS = ("running", "rounds_complete", "safety_limit")
LEVEL_TIMER = {"beginner": 420, "advanced": 360, "master": 300}           # section 3
SOLO = {"easy": (600, 3), "medium": (360, 2), "hard": (300, 1)}          # seconds, threshold
TIMING_KEYS = ("scan", "pick", "look", "rotate", "place", "return", "flip", "task", "jump")


HOME = __name__.rpartition(".")[0]  # this game's package, where its data lives
_TILE_DATA = load_data(HOME, "data/tiles.json")
DEFAULT_TILES = _TILE_DATA["tiles"]
DEFAULT_SPECIES = _TILE_DATA["species"]
DEFAULT_BOARD = load_data(HOME, "data/board.json")
DEFAULT_TIMING = load_data(HOME, "data/timing.json")
DEFAULT_TASKS = load_data(HOME, "data/tasks.json")["tasks"]
DEFAULT_BONUS = {"1": [], "2": [4, 3], "3": [4, 3, 2], "4": [4, 3, 2, 1]}


def _terrain_string(v, where, n):
    if not isinstance(v, str) or len(v) != n or any(ch not in TERRAINS for ch in v):
        raise ValueError(f"{where} must be {n} terrain letters from {TERRAINS}, got {v!r}")
    return v


def parse_species(species):
    if not isinstance(species, dict) or not 1 <= len(species) <= N_SPECIES:
        raise ValueError(f"rule option 'species' must map up to {N_SPECIES} animal names to a "
                         f"terrain letter from {TERRAINS}")
    for name, terrain in species.items():
        _check_name(name, "rule option 'species': an animal name")
        if not isinstance(terrain, str) or len(terrain) != 1 or terrain not in TERRAINS:
            raise ValueError(f"rule option 'species'[{name!r}] must be a terrain letter from "
                             f"{TERRAINS}, got {terrain!r}")
    return list(species), [TERRAINS.index(t) for t in species.values()]


def default_segments(edges):
    """Section 2.3: same-terrain edges form one segment, except the alternating pattern
    (N=S=a, E=W=b) where a crosses the tile and b is split in two (ASSUMPTION)."""
    if edges[0] == edges[2] and edges[1] == edges[3] and edges[0] != edges[1]:
        return [(edges[0], "NS"), (edges[1], "E"), (edges[1], "W")]
    segs = []
    for i, t in enumerate(edges):
        for j, (tt, es) in enumerate(segs):
            if tt == t:
                segs[j] = (tt, es + EDGE_LETTERS[i])
                break
        else:
            segs.append((t, EDGE_LETTERS[i]))
    return segs


def parse_face(f, names, where):
    """(edges, seg_of_edge, segment terrains, animal, animal segment, volcano) of a face."""
    if not isinstance(f, dict) or set(f) - {"edges", "segments", "animal", "animal_segment", "volcano"}:
        raise ValueError(f"{where} must be an object with edges and optional segments, "
                         f"animal, animal_segment, volcano")
    edges = _terrain_string(f.get("edges"), where + ".edges", 4)
    if "segments" in f:
        segs = f["segments"]
        if not isinstance(segs, list) or not 1 <= len(segs) <= MAX_SEGS:
            raise ValueError(f"{where}.segments must list 1..{MAX_SEGS} segments")
        parsed = []
        for i, sg in enumerate(segs):
            w = f"{where}.segments[{i}]"
            if not isinstance(sg, dict) or set(sg) != {"terrain", "edges"}:
                raise ValueError(f"{w} must be {{'terrain': letter, 'edges': letters}}")
            t = _terrain_string(sg["terrain"], w + ".terrain", 1)
            es = sg["edges"]
            if not isinstance(es, str) or any(ch not in EDGE_LETTERS for ch in es):
                raise ValueError(f"{w}.edges must be letters from NESW (empty: internal)")
            for ch in es:
                if edges[EDGE_LETTERS.index(ch)] != t:
                    raise ValueError(f"{w}: edge {ch} shows {edges[EDGE_LETTERS.index(ch)]}, not {t}")
            parsed.append((t, es))
        covered = "".join(es for _, es in parsed)
        if sorted(covered) != sorted(EDGE_LETTERS):
            raise ValueError(f"{where}.segments must cover each edge N, E, S, W exactly once")
    else:
        parsed = default_segments(edges)
    seg_of_edge = [0] * 4
    for k, (_, es) in enumerate(parsed):
        for ch in es:
            seg_of_edge[EDGE_LETTERS.index(ch)] = k
    if f.get("volcano") not in VOLCANOES:
        raise ValueError(f"{where}.volcano must be 'active', 'dormant' or absent")
    animal, animal_seg = -1, -1    # the segment is found by terrain in parse_tiles
    if f.get("animal") is not None:
        if f["animal"] not in names:
            raise ValueError(f"{where}.animal must be one of {names}, got {f['animal']!r}")
        animal = names.index(f["animal"])
        if "animal_segment" in f:
            animal_seg = integer(f["animal_segment"], where + ".animal_segment", 0, len(parsed) - 1)
    return edges, seg_of_edge, parsed, animal, animal_seg, VOLCANOES.index(f.get("volcano"))


def parse_tiles(tiles, species):
    names, terrains = parse_species(species)
    if not isinstance(tiles, list) or not 1 <= len(tiles) <= MAX_TILES - 1:
        raise ValueError(f"rule option 'tiles' must list 1..{MAX_TILES - 1} tiles")
    out = []
    for i, tile in enumerate(tiles):
        where = f"rule option 'tiles'[{i}]"
        if not isinstance(tile, dict) or set(tile) != {"faces"} or not isinstance(
                tile["faces"], list) or len(tile["faces"]) != 2:
            raise ValueError(f"{where} must be {{'faces': [face, face]}}")
        faces = []
        for k, f in enumerate(tile["faces"]):
            w = f"{where}.faces[{k}]"
            edges, soe, segs, animal, aseg, volc = parse_face(f, names, w)
            if animal >= 0:
                want = TERRAINS[terrains[animal]]
                if aseg < 0:
                    aseg = next((j for j, (t, _) in enumerate(segs) if t == want), -1)
                if aseg < 0 or segs[aseg][0] != want:
                    raise ValueError(f"{w}: the {names[animal]} lives in {want}, and the face "
                                     f"has no such segment for it")
            faces.append((edges, soe, segs, animal, aseg, volc))
        out.append(faces)
    return out


def parse_board(board, side):
    where = "rule option 'board'"
    if not isinstance(board, dict) or set(board) - {"rows", "cols", "frame", "solo_marked_cells"}:
        raise ValueError(f"{where} must be an object with rows, cols, frame, solo_marked_cells")
    rows = integer(board.get("rows"), where + ".rows", 1, MAX_DIM)
    cols = integer(board.get("cols"), where + ".cols", 1, MAX_DIM)
    frame = board.get("frame")
    lens = {"top": cols, "right": rows, "bottom": cols, "left": rows}
    if not isinstance(frame, dict) or set(frame) != set(lens):
        raise ValueError(f"{where}.frame must have top, right, bottom and left")
    for k, n in lens.items():
        _terrain_string(frame[k], f"{where}.frame.{k}", n)
    marked = board.get("solo_marked_cells", [])
    if not isinstance(marked, list) or len(marked) > 4 or any(
            not isinstance(m, list) or len(m) != 2 or not all(isinstance(x, int) for x in m)
            or not (0 <= m[0] < rows and 0 <= m[1] < cols) for m in marked):
        raise ValueError(f"{where}.solo_marked_cells must list up to 4 [row, col] cells")
    if len({tuple(m) for m in marked}) != len(marked):
        raise ValueError(f"{where}.solo_marked_cells must be distinct")
    rim = [NO_TILE] * (MAX_CELLS * 4)
    for r in range(rows):
        for c in range(cols):
            cell = r * cols + c
            if r == 0:
                rim[cell * 4 + 0] = frame["top"][c]
            if c == cols - 1:
                rim[cell * 4 + 1] = frame["right"][r]
            if r == rows - 1:
                rim[cell * 4 + 2] = frame["bottom"][cols - 1 - c]    # right to left
            if c == 0:
                rim[cell * 4 + 3] = frame["left"][rows - 1 - r]      # bottom to top
    rim = [x if x == NO_TILE else (TERRAINS.index(x) if side == "frame" else T_WATER) for x in rim]
    return rows, cols, rim, [m[0] * cols + m[1] for m in marked]


def parse_timing(t):
    where = "rule option 'timing'"
    keys = set(TIMING_KEYS) | {"mode", "scan_tiles", "skill_sigma", "per_placement"}
    if not isinstance(t, dict) or set(t) != keys:
        raise ValueError(f"{where} must have exactly the keys {sorted(keys)}")
    if t["mode"] not in ("events", "per_placement"):
        raise ValueError(f"{where}.mode must be 'events' or 'per_placement'")
    out = {k: number(t[k], f"{where}.{k}", 0.01, 600) for k in TIMING_KEYS}
    out["scan"] = number(t["scan"], f"{where}.scan", 0, 600)
    out["scan_tiles"] = integer(t["scan_tiles"], f"{where}.scan_tiles", 1, MAX_TILES)
    out["skill_sigma"] = number(t["skill_sigma"], f"{where}.skill_sigma", 0, 2)
    pp = t["per_placement"]
    if not isinstance(pp, dict) or set(pp) != {"mean", "sd", "min"}:
        raise ValueError(f"{where}.per_placement must have mean, sd, min")
    out["pp"] = (number(pp["mean"], f"{where}.per_placement.mean", 0.01, 600),
                 number(pp["sd"], f"{where}.per_placement.sd", 0, 600),
                 number(pp["min"], f"{where}.per_placement.min", 0.01, 600))
    return out


def parse_tasks(tasks, species):
    names, _ = parse_species(species)
    where = "rule option 'tasks'"
    out = []
    for w, t in items(tasks, where, 1, MAX_TASKS):
        if not isinstance(t, dict) or t.get("kind") not in TASK_KINDS or not isinstance(t.get("id"), str):
            raise ValueError(f"{w} must have an id and a kind from {list(TASK_KINDS)}")
        pts = integer(t.get("points"), w + ".points", 0, 50)
        _check_name(t["id"], w + ".id")
        arg = 0
        if t["kind"] == "species3":
            if t.get("species") not in names:
                raise ValueError(f"{w}.species must be one of {names}")
            arg = names.index(t["species"])
        elif t["kind"] == "all4":
            arg = TERRAINS.index(_terrain_string(t.get("terrain"), w + ".terrain", 1))
        out.append((t["id"], TASK_KINDS.index(t["kind"]), arg, pts))
    if len({x[0] for x in out}) != len(out):
        raise ValueError(f"{where}: task ids must be distinct")
    return out


def parse_bonus(bonus, players):
    where = "rule option 'bonus_stack'"
    if not isinstance(bonus, dict) or str(players) not in bonus:
        raise ValueError(f"{where} must give a stack for {players} players")
    stack = bonus[str(players)]
    if (not isinstance(stack, list) or len(stack) > MAX_BONUS or
            any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 50 for v in stack)):
        raise ValueError(f"{where}.{players} must list up to {MAX_BONUS} chip values (top first)")
    return stack


def timer_of(r, players):
    """Seconds on the timer (section 3, section 6 variants)."""
    if r["timer_seconds"]:
        return r["timer_seconds"]
    if players == 1:
        return SOLO[r["solo_difficulty"]][0]
    if r["children"]:
        return 60 * r["children_minutes"]
    return LEVEL_TIMER[r["level"]]


cdef void _put_name(char* dst, str name):
    cdef bytes b = name.encode()
    memcpy(dst, <const char*>b, len(b))
    dst[len(b)] = 0


def _check_name(v, where):
    if not isinstance(v, str) or not v or len(v.encode()) >= NAME_LEN:
        raise ValueError(f"{where} must be a name of 1..{NAME_LEN - 1} bytes, got {v!r}")
    return v


cdef dict _rules_of(const MRules* R):
    """The resolved rules dict a packed rules struct was made from: every option is in the
    struct, so this works in any process (to_dict; tests compare with resolve_rules)."""
    cdef const MFace* F
    names = [(<bytes>R.species_name[i]).decode() for i in range(R.n_species)]
    tiles = []
    for i in range(R.n_tiles):
        faces = []
        for k in range(2):
            F = &R.faces[i][k]
            edges = "".join(TERRAINS[F.edge[d]] for d in range(4))
            segs = [(TERRAINS[F.seg_terrain[j]],
                     "".join(EDGE_LETTERS[d] for d in range(4) if F.seg_of_edge[d] == j))
                    for j in range(F.nseg)]
            face = {"edges": edges}
            if segs != default_segments(edges):
                face["segments"] = [{"terrain": t, "edges": e} for t, e in segs]
            if F.animal >= 0:
                face["animal"] = names[F.animal]
                want = TERRAINS[R.species_terrain[F.animal]]
                if F.animal_seg != next(j for j, (t, _) in enumerate(segs) if t == want):
                    face["animal_segment"] = int(F.animal_seg)
            if F.volcano != V_NONE:
                face["volcano"] = VOLCANOES[F.volcano]
            faces.append(face)
        tiles.append({"faces": faces})
    tasks = []
    for i in range(R.n_tasks):
        t = {"id": (<bytes>R.task_id[i]).decode(), "kind": TASK_KINDS[R.task_kind[i]]}
        if R.task_kind[i] == TK_SPECIES3:
            t["species"] = names[R.task_arg[i]]
        elif R.task_kind[i] == TK_ALL4:
            t["terrain"] = TERRAINS[R.task_arg[i]]
        t["points"] = int(R.task_points[i])
        tasks.append(t)
    lens = (R.cols, R.rows, R.cols, R.rows)
    frame = {side: "".join(TERRAINS[R.frame_edge[i][j]] for j in range(lens[i]))
             for i, side in enumerate(("top", "right", "bottom", "left"))}
    timing = {"mode": "per_placement" if R.per_placement else "events"}
    timing.update(zip(TIMING_KEYS, (R.t_scan, R.t_pick, R.t_look, R.t_rotate, R.t_place,
                                    R.t_return, R.t_flip, R.t_task, R.t_jump)))
    timing.update(scan_tiles=int(R.scan_tiles), skill_sigma=R.skill_sigma,
                  per_placement={"mean": R.pp_mean, "sd": R.pp_sd, "min": R.pp_min})
    return {
        "level": LEVELS[R.level], "solo_difficulty": list(SOLO)[R.solo_difficulty],
        "board_side": GAME.choice_at("board_side", R.frame),
        "handicap": GAME.choice_at("handicap", R.handicap),
        "advantaged_seats": [i for i in range(MAX_PLAYERS) if (R.advantaged >> i) & 1],
        "seat_bonus_points": [int(R.seat_points[i]) for i in range(R.n_seat_points)],
        "hidden_timer": bool(R.hidden_timer), "hidden_timer_sigma": int(R.hidden_sigma),
        "timer_seconds": int(R.timer_option), "children": bool(R.children),
        "children_minutes": int(R.children_minutes),
        "children_volcanoes": bool(R.children_volcanoes), "rounds": int(R.rounds_option),
        "max_round_decisions": int(R.max_round_decisions),
        "bonus_stack": {str(k): [int(R.bonus_all[k][i]) for i in range(R.bonus_len[k])]
                        for k in range(MAX_PLAYERS + 1) if (R.bonus_keys >> k) & 1},
        "board": {"rows": int(R.rows), "cols": int(R.cols), "frame": frame,
                  "solo_marked_cells": [[int(R.marked[i] // R.cols), int(R.marked[i] % R.cols)]
                                        for i in range(R.n_marked)]},
        "tiles": tiles,
        "species": {names[i]: TERRAINS[R.species_terrain[i]] for i in range(R.n_species)},
        "tasks": tasks,
        "timing": timing,
    }


cdef bytes _pack(dict r, int players):
    cdef MRules R
    cdef MFace* F
    memset(&R, 0, sizeof(MRules))
    names, terrains = parse_species(r["species"])
    tiles = parse_tiles(r["tiles"], r["species"])
    rows, cols, rim, marked = parse_board(r["board"], r["board_side"])
    tm = parse_timing(r["timing"])
    tasks = parse_tasks(r["tasks"], r["species"])
    stack = [] if players == 1 else parse_bonus(r["bonus_stack"], players)
    solo = players == 1
    R.level = LEVELS.index(r["level"])
    R.rows, R.cols = rows, cols
    R.frame = GAME.choice_index(r, "board_side")
    R.n_tiles = len(tiles)
    R.rounds = r["rounds"] or (1 if solo else 3)
    R.solo = solo
    R.solo_threshold = SOLO[r["solo_difficulty"]][1]
    R.n_marked = len(marked)           # pre-placed only in the solo game (start_round)
    for i, c in enumerate(marked):
        R.marked[i] = c
    R.handicap = GAME.choice_index(r, "handicap")
    R.advantaged = sum(1 << s for s in set(r["advantaged_seats"]))
    R.n_seat_points = len(r["seat_bonus_points"])
    for i, v in enumerate(r["seat_bonus_points"]):
        R.seat_points[i] = v
    R.volcano_scoring = not (r["children"] and not r["children_volcanoes"])
    R.modifiers_on = not solo and r["level"] != "beginner"
    R.tasks_on = not solo and r["level"] == "master"
    R.n_tasks = len(tasks)
    R.hidden_timer = r["hidden_timer"]
    R.per_placement = r["timing"]["mode"] == "per_placement"
    R.scan_tiles = tm["scan_tiles"]
    R.max_round_decisions = r["max_round_decisions"]
    R.bonus_n = len(stack)
    for i, v in enumerate(stack):
        R.bonus[i] = v
    for i, (_, kind, arg, pts) in enumerate(tasks):
        R.task_kind[i], R.task_arg[i], R.task_points[i] = kind, arg, pts
    R.timer = timer_of(r, players)
    R.solo_difficulty = list(SOLO).index(r["solo_difficulty"])
    R.timer_option = r["timer_seconds"]
    R.rounds_option = r["rounds"]
    R.children = r["children"]
    R.children_minutes = r["children_minutes"]
    R.children_volcanoes = r["children_volcanoes"]
    R.n_species = len(names)
    for i, name in enumerate(names):
        _put_name(R.species_name[i], name)
    for i, (tid, _, _, _) in enumerate(tasks):
        _put_name(R.task_id[i], tid)
    for key, st in r["bonus_stack"].items():
        k = int(key)
        R.bonus_keys |= 1 << k
        R.bonus_len[k] = len(st)
        for i, v in enumerate(st):
            R.bonus_all[k][i] = v
    for i, side in enumerate(("top", "right", "bottom", "left")):
        for j, ch in enumerate(r["board"]["frame"][side]):
            R.frame_edge[i][j] = TERRAINS.index(ch)
    R.hidden_sigma = r["hidden_timer_sigma"]
    R.skill_sigma = tm["skill_sigma"]
    (R.t_scan, R.t_pick, R.t_look, R.t_rotate, R.t_place, R.t_return, R.t_flip, R.t_task,
     R.t_jump) = [tm[k] for k in TIMING_KEYS]
    R.pp_mean, R.pp_sd, R.pp_min = tm["pp"]
    for i, v in enumerate(rim):
        R.rim[i] = v
    for i, t in enumerate(terrains):
        R.species_terrain[i] = t
    for i, faces in enumerate(tiles):
        for k, (edges, soe, segs, animal, aseg, volc) in enumerate(faces):
            F = &R.faces[i][k]
            for d in range(4):
                F.edge[d] = TERRAINS.index(edges[d])
                F.seg_of_edge[d] = soe[d]
            F.nseg = len(segs)
            for j, (t, _) in enumerate(segs):
                F.seg_terrain[j] = TERRAINS.index(t)
            F.animal = animal
            F.animal_seg = aseg if animal >= 0 else 0
            F.volcano = volc
            F.code = sum(TERRAINS.index(edges[d]) << (2 * d) for d in range(4))
    return (<char*>&R)[:sizeof(MRules)]


cdef inline MState* _st(State s):
    s._check_alive()
    return <MState*>s.buf


def _face_text(State state, tile, face):
    """A face as text: edges N,E,S,W, then the animal and volcano if any."""
    cdef MRules* R = &_st(state).rules
    cdef MFace* F = &R.faces[tile][face]
    bits = ["".join(TERRAINS[F.edge[d]] for d in range(4))]
    if F.animal >= 0:
        bits.append((<bytes>R.species_name[F.animal]).decode())
    if F.volcano != V_NONE:
        bits.append(VOLCANOES[F.volcano] + " volcano")
    return " ".join(bits)


cdef list _task_ids(const MRules* R):
    return [(<bytes>R.task_id[k]).decode() for k in range(R.n_tasks)]


# The action ids by name (core_cy/engine/actions.py), from the same constants as the C encoding.
ACTIONS = ActionSpace(
    NUM_ACTIONS,
    Kind("pick", A_PICK, tile=MAX_TILES),
    Kind("flip", A_FLIP, tile=MAX_TILES),
    Kind("task", A_TASK, card=MAX_TASKS),
    Kind("jump", A_JUMP),
    Kind("place", A_PLACE, cell=MAX_CELLS, face=FACES, rotation=ROTATIONS),
    Kind("return", A_RETURN),
)


class MondoGame(AgentGame):
    name = "mondo"
    title = "Mondo"
    min_players = 1
    max_players = MAX_PLAYERS
    policies = {
        "greedy_placer": "scans scan_tiles pool tiles (visible faces), takes the best fit, "
                         "places it on the best face/rotation/space, returns a hopeless "
                         "tile, and jumps out when the bonus chip beats what time can fill",
        "solo_planner": "solo game: plans the whole board from the face-up pool tiles (and "
                        "the tile in hand) to stay under the penalty threshold in the time "
                        "left, then picks and lays tiles by the plan; greedy_placer when no "
                        "plan wins, and in games of 2-4 players",
        "quick": "greedy_placer placing by the tile's edges alone (a match with a "
                 "neighbour or the rim, an error edge), without the area analysis: a cheap "
                 "rollout policy for the search",
    }
    # The measurements behind these values: docs/lab/search_agent.md.
    search_defaults = {"rollout": "quick", "cutoff": 24, "widen": 1.0}
    policy_params = policy_params_from_data(HOME, "agent_params.toml", policies)
    options = options_from_data(HOME, "options.toml", LEVELS=LEVELS, SOLO=SOLO,
                                MAX_ROUNDS=MAX_ROUNDS, DEFAULT_BONUS=DEFAULT_BONUS,
                                DEFAULT_BOARD=DEFAULT_BOARD, DEFAULT_TILES=DEFAULT_TILES,
                                DEFAULT_SPECIES=DEFAULT_SPECIES, DEFAULT_TASKS=DEFAULT_TASKS,
                                DEFAULT_TIMING=DEFAULT_TIMING)

    def check_rules(self, rules, players):
        parse_tiles(rules["tiles"], rules["species"])
        parse_board(rules["board"], rules["board_side"])
        parse_timing(rules["timing"])
        parse_tasks(rules["tasks"], rules["species"])
        if players > 1:
            parse_bonus(rules["bonus_stack"], players)
        for key in rules["bonus_stack"]:      # every stack is packed (the state's rules dict)
            if key not in [str(k) for k in range(1, MAX_PLAYERS + 1)]:
                raise ValueError(f"rule option 'bonus_stack': keys are player counts "
                                 f"'1'..'{MAX_PLAYERS}', got {key!r}")
            parse_bonus(rules["bonus_stack"], int(key))
        seats = rules["advantaged_seats"]
        if not isinstance(seats, list) or any(
                isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < MAX_PLAYERS for x in seats):
            raise ValueError(f"rule option 'advantaged_seats' must list seats 0..{MAX_PLAYERS - 1}")
        if players == 1 and rules["level"] != "beginner":
            raise ValueError("rule option 'level': the solo game plays the beginner rules")
        if rules["children"] and rules["level"] != "beginner":
            raise ValueError("rule option 'children' uses the beginner level")
        rows = rules["board"]["rows"]
        cols = rules["board"]["cols"]
        if players * rows * cols > len(rules["tiles"]) - 1:
            raise ValueError(f"rule option 'tiles': {len(rules['tiles'])} tiles cannot fill "
                             f"{players} boards of {rows * cols} spaces")

    def pack_rules(self, rules, players):
        return _pack(rules, players)

    def new(self, players, rules=None, seed=0, speeds=None):
        if speeds is not None:
            if not isinstance(speeds, (list, tuple)) or len(speeds) != players:
                raise ValueError(f"speeds must give one value per seat ({players})")
            for i, v in enumerate(speeds):
                number(v, f"speeds[{i}]", 0.01, 100.0)
        return super().new(players, rules, seed, speeds)

    def rules_of(self, State state):
        """The state's full rules dict, decoded from the state itself."""
        return _rules_of(&_st(state).rules)

    # ---- state dict ------------------------------------------------------------------
    def to_dict(self, State state):
        cdef MState* s = _st(state)
        cdef MPlayer* pl
        cdef MRules* R = &s.rules
        task_ids = _task_ids(R)
        seats = []
        for i in range(s.head.players):
            pl = &s.p[i]
            board = [[None if pl.cell_tile[r * R.cols + c] == NO_TILE else
                      {"tile": int(pl.cell_tile[r * R.cols + c]),
                       "face": int(pl.cell_face[r * R.cols + c]),
                       "rotation": int(pl.cell_rot[r * R.cols + c])}
                      for c in range(R.cols)] for r in range(R.rows)]
            pend = None
            if pl.pend != OP_NONE:
                pend = {"op": OPS[pl.pend]}
                if pl.pend in (OP_PICK, OP_FLIP):
                    pend["tile"] = int(pl.pend_arg)
                elif pl.pend == OP_TASK:
                    pend["task"] = task_ids[pl.pend_arg]
            seats.append({
                "speed": float(pl.speed), "t_next": float(pl.t_next), "noise": float(pl.noise),
                "hand": None if pl.hand == NO_TILE else {"tile": int(pl.hand), "face": int(pl.hand_face)},
                "pending": pend, "finished": bool(pl.finished), "chip": int(pl.chip),
                "jump_order": int(pl.jump_order), "volcano_chip": bool(pl.volcano_chip),
                "tasks": [task_ids[k] for k in range(R.n_tasks) if (pl.tasks >> k) & 1],
                "board": board,
                "round_scores": [int(pl.round_score[r]) for r in range(s.round if not s.head.terminal else R.rounds)],
                "stats": {SEAT_OUTCOMES[SO_STATS + k]: int(pl.stat[k]) for k in range(N_STATS)},
                "win_share": float(s.head.share[i]),
            })
        return {
            "game": self.name, "players": int(s.head.players), "rules": _rules_of(R),
            "round": int(s.round), "clock": float(s.clock), "current_player": int(s.head.current),
            "moves": int(s.head.moves), "round_moves": int(s.round_moves),
            "safety_cuts": int(s.safety_cuts), "timeouts": int(s.timeouts),
            "bonus_taken": int(s.bonus_top), "jumps": int(s.jumps),
            "modifier_deck": [MODIFIERS[s.mod_deck[k]] for k in range(N_MODIFIERS)],
            "tasks_face_up": [task_ids[k] for k in range(R.n_tasks) if (s.task_up >> k) & 1],
            "pool": [[t, int(s.up[t])] for t in range(R.n_tiles) if s.loc[t] == LOC_POOL],
            "solo_penalty": int(s.solo_penalty), "solo_win": bool(s.solo_win),
            "terminal": bool(s.head.terminal), "end_reason": END_REASONS[s.head.end_reason],
            "rng": contract.rng_to_dict(state),
            "seats": seats,
        }

    def fill_state(self, State state, data, rules):
        """from_dict's Mondo part; then the clock runs to the next decision (from_dict then
        refuses a position that was not at one; run_clock keeps it)."""
        _fill(_st(state), data, [t["id"] for t in rules["tasks"]])
        check_live(state)

    def check_read_back(self, data, State state):
        """A state dict stands at a decision (or at the end), as to_dict writes it: a
        position between two decisions, whose clock would run on, is refused by name."""
        back = self.to_dict(state)
        ran = [k for k in ("round", "clock", "current_player", "terminal")
               if isinstance(data, dict) and k in data and data[k] != back[k]]
        if ran:
            fail(f"state.{ran[0]}", f"{data[ran[0]]!r}, but at this position the clock runs "
                 f"on to {ran[0]} {back[ran[0]]!r} (the next decision): a state dict stands "
                 "at a decision, as to_dict writes it; run_clock(d) gives the state where "
                 "the clock of a position between decisions stops")
        check_exact(data, back)

    def run_clock(self, data):
        """The state of the position `data` after its clock has run to the next decision (a
        position between two decisions: every hand finished, a hand due at the timer, an
        operation still to complete): every field read and checked as from_dict reads it,
        without from_dict's last check that the state writes back exactly `data`."""
        return self.read_state(data)

    # ---- descriptions ----------------------------------------------------------------
    def describe(self, State state, action):
        cdef MState* s = _st(state)
        cdef MPlayer* pl = &s.p[s.head.current]
        kind, x = ACTIONS.decode(action)
        if kind in ("pick", "flip"):
            t = x["tile"]
            if t >= s.rules.n_tiles:
                raise ValueError(f"action {action}: no tile {t}")
            where = "tile" if kind == "pick" else "pool tile"
            return f"{kind} {where} #{t} (showing {_face_text(state, t, s.up[t])})"
        if kind == "task":
            tasks = _task_ids(&s.rules)
            if x["card"] >= len(tasks):
                raise ValueError(f"action {action}: no task card {x['card']}")
            return f"take task card {tasks[x['card']]}"
        if kind == "jump":
            chip = s.rules.bonus[s.bonus_top] if s.bonus_top < s.rules.bonus_n else 0
            return "jump out" + (f" (top bonus chip {chip})" if chip else " (no bonus chip left)")
        if kind == "place":
            cell, face, rot = x["cell"], x["face"], x["rotation"]
            if cell >= s.rules.rows * s.rules.cols:
                raise ValueError(f"action {action}: no space {cell}")
            what = (f"tile #{pl.hand} face {face} ({_face_text(state, pl.hand, face)})"
                    if pl.hand != NO_TILE else f"face {face}")
            return (f"place {what} on ({cell // s.rules.cols},{cell % s.rules.cols})"
                    + (f" turned {90 * rot} degrees" if rot else ""))
        return "return the tile in hand to the pool"

    def score_breakdown(self, State state):
        """Per seat, the lines of the current round as the boards stand (section 5.3, solo
        5.5) and the scores of the rounds already played; after the end, only the rounds."""
        cdef MState* s = _st(state)
        cdef RoundLines L[MAX_PLAYERS]
        score_round(s, L)
        out = []
        for i in range(s.head.players):
            x = L[i]
            past = [int(s.p[i].round_score[r]) for r in range(s.round if not s.head.terminal else s.rules.rounds)]
            row = {"seat": i, "past_rounds": past}
            if not s.head.terminal:
                row.update({
                    "animals": x.b.animals, "areas": x.b.closed_land,
                    "area_points": AREA_POINTS * x.b.closed_land,
                    "areas_by_terrain": {TERRAIN_NAMES[TERRAINS[t]]: x.b.closed_by_terrain[t] for t in range(1, 4)},
                    "lakes": x.b.lakes, "largest_lake": x.b.largest_lake,
                    "largest_forest": x.b.largest_forest, "water_animals": x.b.water_animals,
                    "bonus_chip": x.chip, "active_volcanoes": x.b.active,
                    "dormant_volcanoes": x.b.dormant, "volcano_chip": bool(s.p[i].volcano_chip),
                    "volcano_points": x.volcano, "empty_spaces": x.b.empty,
                    "error_edges": x.b.errors,
                    "modifier": MODIFIERS[current_modifier(s)] if s.rules.modifiers_on else None,
                    "modifier_value": x.modifier_value, "modifier_points": x.modifier,
                    "task_points": x.tasks, "round_total": x.total,
                })
            row["total"] = sum(past) + (0 if s.head.terminal else x.total)
            out.append(row)
        return out


cdef _fill(MState* s, top, list task_ids):
    """from_dict's Mondo part (rules, players and rng are in place): reads every field of
    to_dict() through the codec, so that a bad value is named by its path."""
    cdef MRules* R = &s.rules
    cdef int players = s.head.players
    ids = UniqueIds(R.n_tiles, "tile")
    s.round = top.int("round", 0, R.rounds)
    s.head.terminal = top.bool("terminal")
    if (s.round == R.rounds) != bool(s.head.terminal):
        raise ValueError(f"state.round is {R.rounds} exactly when the game is over (terminal)")
    s.clock = top.num("clock", -1e9, 1e9)
    s.head.moves = top.int("moves", 0, INT32_MAX)
    s.round_moves = top.int("round_moves", 0, INT32_MAX)
    s.safety_cuts = top.int("safety_cuts", 0, INT32_MAX)
    s.timeouts = top.int("timeouts", 0, INT32_MAX)
    s.bonus_top = top.int("bonus_taken", 0, R.bonus_n)
    s.jumps = top.int("jumps", 0, players)
    deck = top.list("modifier_deck", length=N_MODIFIERS)
    if sorted(deck) != sorted(MODIFIERS):
        raise ValueError(f"state.modifier_deck: expected an order of {list(MODIFIERS)}, got {deck!r}")
    for k, m in enumerate(deck):
        s.mod_deck[k] = MODIFIERS.index(m)
    for k, v in enumerate(top.list("tasks_face_up", max_len=R.n_tasks)):
        s.task_up |= 1u << choice(v, f"state.tasks_face_up[{k}]", task_ids)
    # Once the game is over, current_player is history: only a running game needs a seat.
    s.head.current = (top.int("current_player", -INT32_MAX - 1, INT32_MAX) if s.head.terminal
                 else top.int("current_player", 0, players - 1))
    for t in range(MAX_TILES):
        s.loc[t] = LOC_POOL
    for i, entry in enumerate(top.list("pool", max_len=R.n_tiles)):
        where = f"state.pool[{i}]"
        array(entry, where, length=2)
        s.up[ids.take(entry[0], where + "[0]")] = integer(entry[1], where + "[1]", 0, FACES - 1)
    for i in range(MAX_PLAYERS):
        for c in range(MAX_CELLS):
            s.p[i].cell_tile[c] = NO_TILE
        s.p[i].quarters = 0             # put_on_board rebuilds it below
        s.p[i].hand = NO_TILE
    for i, seat in enumerate(top.objs("seats", length=players)):
        _fill_seat(s, i, seat, ids, task_ids)
    ids.check_all("the pool, a hand or on a board")
    s.solo_penalty = top.int("solo_penalty", -1000, 1000)
    s.solo_win = top.bool("solo_win")
    s.head.end_reason = top.choice("end_reason", END_REASONS)
    if s.head.terminal and s.head.end_reason == END_RUNNING:
        raise ValueError("state: a terminal state needs an end_reason")
    if not s.head.terminal and s.head.end_reason != END_RUNNING:
        raise ValueError("state.end_reason: expected 'running' while the game is not over")
    _check_results(s, top)
    if not s.head.terminal:
        advance(s)


cdef _check_results(MState* s, top):
    """Win shares are the engine's to compute, never taken as given: none while the game
    runs, a finished game's from its round scores (solo: the solo result)."""
    cdef MState* t = <MState*>PyMem_Malloc(sizeof(MState))
    cdef int i
    if t == NULL:
        raise MemoryError()
    try:
        memcpy(t, s, sizeof(MState))
        for i in range(s.head.players):
            t.head.share[i] = 0.0
        if s.head.terminal:
            t.head.terminal = 0
            finish_game(t, s.head.end_reason)
        for i, seat in enumerate(top.objs("seats")):
            if s.head.share[i] != t.head.share[i]:
                raise ValueError(f"{seat.at('win_share')}: expected {t.head.share[i]}: " + (
                    "the result of this finished game's round scores" if s.head.terminal
                    else "a running game has no results yet"))
    finally:
        PyMem_Free(t)


cdef _fill_seat(MState* s, int i, seat, ids, list task_ids):
    """One hand: its clock, tile in hand, pending operation, chips, tasks, board, scores."""
    cdef MRules* R = &s.rules
    cdef MPlayer* pl = &s.p[i]
    pl.speed = seat.num("speed", 1e-4, 1e4)
    pl.t_next = seat.num("t_next", 0.0, 1e6)
    pl.noise = seat.num("noise", -1e6, 1e6)
    hand = seat.obj("hand", nullable=True)
    if hand is not None:
        pl.hand = ids.take(hand.get("tile"), hand.at("tile"))
        pl.hand_face = hand.int("face", 0, FACES - 1)
        s.loc[pl.hand] = LOC_HAND + i
    pend = seat.obj("pending", nullable=True)
    if pend is not None:
        pl.pend = pend.choice("op", OPS[1:]) + 1
        if pl.pend in (OP_PICK, OP_FLIP):
            pl.pend_arg = pend.int("tile", 0, R.n_tiles - 1)
        elif pl.pend == OP_TASK:
            pl.pend_arg = pend.choice("task", task_ids)
        if pl.pend == OP_RETURN and pl.hand == NO_TILE:
            raise ValueError(f"{pend.path}: a return needs a tile in hand")
        if pl.pend != OP_RETURN and pl.hand != NO_TILE:
            raise ValueError(f"{pend.path}: a hand holding a tile can only be returning it")
    pl.finished = seat.bool("finished")
    if pl.finished and (pl.pend != OP_NONE or pl.hand != NO_TILE):
        raise ValueError(f"{seat.path}: a finished hand holds nothing and does nothing")
    pl.chip = seat.int("chip", 0, 50)
    pl.jump_order = seat.int("jump_order", 0, s.head.players)
    pl.volcano_chip = seat.bool("volcano_chip")
    for k, v in enumerate(seat.list("tasks", max_len=2)):
        pl.tasks |= 1 << choice(v, f"{seat.at('tasks')}[{k}]", task_ids)
    board = seat.grid("board", R.rows, R.cols)
    for r in range(R.rows):
        for c in range(R.cols):
            if board[r][c] is not None:
                cell = Obj(board[r][c], f"{seat.at('board')}[{r}][{c}]")
                put_on_board(s, i, ids.take(cell.get("tile"), cell.at("tile")),
                             cell.int("face", 0, FACES - 1), r * R.cols + c,
                             cell.int("rotation", 0, ROTATIONS - 1))
    played = s.round if not s.head.terminal else R.rounds
    for r, v in enumerate(seat.list("round_scores", length=played)):
        pl.round_score[r] = integer(v, f"{seat.at('round_scores')}[{r}]", -10000, 10000)
    stats = seat.obj("stats")
    unknown = set(stats.data) - set(SEAT_OUTCOMES[SO_STATS:])
    if unknown:
        raise ValueError(f"{stats.path}: unknown field(s) {sorted(unknown)}; "
                         f"known: {list(SEAT_OUTCOMES[SO_STATS:])}")
    for k in range(N_STATS):
        pl.stat[k] = stats.int(SEAT_OUTCOMES[SO_STATS + k], -100000, 100000)
    s.head.share[i] = seat.num("win_share", 0.0, 1.0)


MondoGame.handle = engine_handle(&ENGINE, MondoGame, &_LAYOUT, sizeof(MState), &_LAYOUT.rules,
    sizeof(MRules), m_setup, m_legal, m_apply, m_scores, m_outcomes, m_heuristic, m_observe,
    m_policy, m_action_values, NULL, NULL, NULL, m_leaf_values)
GAME = MondoGame()


def set_leaf_weights(data, where="data/leaf_value.json"):
    """Puts the cut-off judgement's weights into the engine: `data` as in
    data/leaf_value.json, {"weights": {one per LEAF_FEATURES name}}; ValueError names a
    missing or unknown feature or a weight that is not a finite number (nothing changed)."""
    values = leaf_weight_values(data, LEAF_FEATURES, (), where)
    for j in range(N_LEAF):
        LEAF_W[j] = values[j]


def leaf_weights():
    """The weights in force, as set_leaf_weights takes them."""
    return {"weights": {name: LEAF_W[j] for j, name in enumerate(LEAF_FEATURES)}}


set_leaf_weights(load_data(HOME, "data/leaf_value.json"))


def leaf_features(State state):
    """Per seat, the cut-off judgement's features (in LEAF_FEATURES order) of a running game
    (benchmarks/leaf_fit.py fits the weights to them)."""
    cdef double f[MAX_PLAYERS * N_LEAF]
    cdef MState* s = _st(state)
    all_seat_features(s, f)
    return [[f[k * N_LEAF + j] for j in range(N_LEAF)] for k in range(s.head.players)]
