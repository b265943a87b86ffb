# Mondo solo planning agent (included by engine.pyx; engine policy `solo_planner`).
#
# Section 5.5: the solo board scores only penalties (empty spaces, error edges, volcanoes), so
# the planner looks for a whole board: an assignment of the face-up pool tiles to the empty
# spaces (any rotation) whose penalty stays under the difficulty's threshold, within the time
# left on the simulation clock.  It reads only what the player may know: the visible faces of
# the pool tiles and both faces of the tile in its hand; a pool tile's down face is never read,
# so nothing hidden needs redrawing.  The plan is found again at every decision (a depth-first
# search over spaces, most constrained space first, with iterative deepening on the penalty it
# allows); the same inputs give the same plan, so the tile picked for a space is placed there.
# Faces with equal edges up to rotation are one class: tiles of a class are interchangeable.
# Without a plan that wins it flips face-up pool tiles of one terrain over (0.4 s each, while
# the time left still fills the board) to see more faces; it remembers which tiles it flipped
# (its policy memory), so none is flipped twice.  When that does not help either it plays the
# greedy placer; other player counts play it too.

cdef enum:
    POLICY_SOLO_PLANNER = 1     # Engine.policy `which` (the order of MondoGame.policies)
    SP_CLASSES = 72             # edge patterns up to rotation: (256 + 16 + 2 * 4) / 4 = 70
    SP_UNSET = -1               # a space the plan has not filled yet
    SP_EMPTY = -2               # a space the plan leaves empty (one penalty point)
    # Its parameters (agent_params.toml: solo_planner(nodes=..., extra_penalty=...)), by
    # their place in the policy parameter block:
    SP_PARAM_NODES = 0          # search nodes per penalty level (about a millisecond each)
    SP_PARAM_EXTRA_PENALTY = 1  # penalty levels tried beyond what still wins


ctypedef struct SoloPlan:
    int ncells
    int nclass
    int canon[SP_CLASSES]           # canonical (smallest rotated) code of each class
    int nrot[SP_CLASSES]            # distinct rotated codes of the class
    uint8_t rcode[SP_CLASSES][ROTATIONS]
    int count[SP_CLASSES]           # face-up tiles of the class free to plan with
    int dual[SP_CLASSES]            # known two-faced tiles with a face of the class, free
    int class_of[256]               # canonical code -> class, -1 none
    int ndual                       # tiles whose both faces the hand knows (it flipped them)
    int dual_tile[MAX_TILES]
    int dual_cls[MAX_TILES][2]      # the classes of their two faces (the same twice if one
    uint8_t dual_used[MAX_TILES]    # face has a volcano)
    int code[MAX_CELLS]             # code shown at a space: placed or planned; SP_UNSET/SP_EMPTY
    int cls[MAX_CELLS]              # planned class of a space, -1 if none (placed or unset)
    int used[MAX_CELLS]             # the two-faced tile planned there (its index), -1 face-up
    uint8_t fixed[MAX_CELLS]        # the space holds a tile on the board
    int nb[MAX_CELLS][DIRECTIONS]   # the neighbour across each edge, -1 off the board
    int rim[MAX_CELLS][DIRECTIONS]  # terrain outside a rim edge, -1 inside
    double t_tile                   # seconds per further tile: pick (with scanning) and place
    int nodes
    int max_nodes                   # the search's nodes per penalty level (parameter nodes)


ctypedef struct SoloMemory:
    double speed                    # the hand's speed and the pre-placed tiles tell one game
    int marks[4]                    # from the next (the memory is the agent's, across games)
    uint8_t flipped[MAX_TILES]      # tiles this hand flipped over in the pool


cdef inline int rotate_code(int c, int rot) noexcept nogil:
    """A face code after `rot` more quarter turns (face_code's rule, on a code)."""
    if rot == 0:
        return c
    return ((c << (2 * rot)) | (c >> (8 - 2 * rot))) & 0xFF


cdef inline int code_class(SoloPlan* P, int code) noexcept nogil:
    """The class of a face code, created on first sight."""
    cdef int r, c, canon = code, k
    for r in range(1, ROTATIONS):
        c = rotate_code(code, r)
        if c < canon:
            canon = c
    k = P.class_of[canon]
    if k >= 0:
        return k
    k = P.nclass
    P.nclass += 1
    P.class_of[canon] = k
    P.canon[k] = canon
    P.count[k] = 0
    P.dual[k] = 0
    P.nrot[k] = 0
    for r in range(ROTATIONS):
        c = rotate_code(canon, r)
        if not any_code(P.rcode[k], P.nrot[k], c):
            P.rcode[k][P.nrot[k]] = <uint8_t>c
            P.nrot[k] += 1
    return k


cdef inline bint any_code(const uint8_t* codes, int n, int c) noexcept nogil:
    cdef int i
    for i in range(n):
        if codes[i] == c:
            return True
    return False


cdef inline int volcano_cost(const MRules* R, const MFace* f) noexcept nogil:
    """Section 5.5: every volcano on the solo board costs a point (if volcanoes score)."""
    return 1 if (f.volcano != V_NONE and R.volcano_scoring) else 0


cdef inline bint plannable(const MRules* R, const MFace* f) noexcept nogil:
    """A face worth planning with: a volcano costs what an empty space costs, and more time."""
    return volcano_cost(R, f) == 0


cdef void plan_init(const MState* s, int p, SoloPlan* P, const SoloMemory* m) noexcept nogil:
    """The board of hand p, the classes of the visible pool faces and of both faces of the
    pool tiles the hand flipped."""
    cdef const MRules* R = &s.rules
    cdef const MPlayer* pl = &s.p[p]
    cdef int c, d, t, f, k
    P.ncells = n_cells(R)
    P.nclass = 0
    P.nodes = 0
    for c in range(256):
        P.class_of[c] = -1
    for c in range(P.ncells):
        P.fixed[c] = pl.cell_tile[c] != NO_TILE
        P.code[c] = face_code(cell_face(s, pl, c), pl.cell_rot[c]) if P.fixed[c] else SP_UNSET
        P.cls[c] = -1
        P.used[c] = -1
        for d in range(DIRECTIONS):
            P.nb[c][d] = neighbour(R, c, d)
            P.rim[c][d] = R.rim[c * DIRECTIONS + d] if P.nb[c][d] < 0 else -1
    P.ndual = 0
    for t in range(R.n_tiles):
        if s.loc[t] != LOC_POOL:
            continue
        if not m.flipped[t]:
            if plannable(R, &R.faces[t][s.up[t]]):
                P.count[code_class(P, R.faces[t][s.up[t]].code)] += 1
            continue
        k = P.ndual
        P.dual_cls[k][0] = -1
        for f in range(FACES):
            if plannable(R, &R.faces[t][f]):
                P.dual_cls[k][1] = code_class(P, R.faces[t][f].code)
                if P.dual_cls[k][0] < 0:
                    P.dual_cls[k][0] = P.dual_cls[k][1]
        if P.dual_cls[k][0] >= 0:
            P.dual_tile[k] = t
            P.dual_used[k] = 0
            P.dual[P.dual_cls[k][0]] += 1
            if P.dual_cls[k][1] != P.dual_cls[k][0]:
                P.dual[P.dual_cls[k][1]] += 1
            P.ndual += 1
    P.t_tile = (R.t_pick + R.t_scan * R.scan_tiles + R.t_place + 0.5 * R.t_rotate) / pl.speed


cdef inline void demand(const SoloPlan* P, int c, int* mask, int* val) noexcept nogil:
    """What space c must show to match: the rim and the codes placed or planned around it."""
    cdef int d, nb, want
    mask[0] = 0
    val[0] = 0
    for d in range(DIRECTIONS):
        nb = P.nb[c][d]
        if nb < 0:
            want = P.rim[c][d]
        elif P.code[nb] >= 0:
            want = (P.code[nb] >> (2 * opposite(d))) & 3
        else:
            continue
        mask[0] |= 3 << (2 * d)
        val[0] |= want << (2 * d)


cdef inline int mismatches(int code, int mask, int val) noexcept nogil:
    """Error edges of a code against a demand."""
    cdef int x = (code ^ val) & mask
    x = (x | (x >> 1)) & 0x55
    return (x & 1) + ((x >> 2) & 1) + ((x >> 4) & 1) + ((x >> 6) & 1)


cdef inline int available(const SoloPlan* P, int k) noexcept nogil:
    return P.count[k] + P.dual[k]


cdef inline void take(SoloPlan* P, int c, int k, int code) noexcept nogil:
    """Plans class k at space c: a face-up tile if one is free, else the known two-faced tile
    whose other face is the most plentiful."""
    cdef int i, best = -1, other, best_other = -1
    P.code[c] = code
    P.cls[c] = k
    P.used[c] = -1
    if P.count[k] > 0:
        P.count[k] -= 1
        return
    for i in range(P.ndual):
        if P.dual_used[i] or (P.dual_cls[i][0] != k and P.dual_cls[i][1] != k):
            continue
        other = P.dual_cls[i][1] if P.dual_cls[i][0] == k else P.dual_cls[i][0]
        if best < 0 or available(P, other) > best_other:
            best = i
            best_other = available(P, other)
    P.used[c] = best
    P.dual_used[best] = 1
    P.dual[P.dual_cls[best][0]] -= 1
    if P.dual_cls[best][1] != P.dual_cls[best][0]:
        P.dual[P.dual_cls[best][1]] -= 1


cdef inline void put_back(SoloPlan* P, int c) noexcept nogil:
    """Undoes take() at space c."""
    cdef int i = P.used[c]
    if i < 0:
        P.count[P.cls[c]] += 1
    else:
        P.dual_used[i] = 0
        P.dual[P.dual_cls[i][0]] += 1
        if P.dual_cls[i][1] != P.dual_cls[i][0]:
            P.dual[P.dual_cls[i][1]] += 1
    P.cls[c] = -1
    P.used[c] = -1
    P.code[c] = SP_UNSET


cdef bint reachable(const SoloPlan* P) noexcept nogil:
    """Every planned tile can be laid: it joins the placed tiles through planned ones."""
    cdef int stack[MAX_CELLS]
    cdef uint8_t seen[MAX_CELLS]
    cdef int n = 0, c, d, nb
    for c in range(P.ncells):
        seen[c] = P.fixed[c]
        if P.fixed[c]:
            stack[n] = c
            n += 1
    if n == 0:
        return True                         # the first tile goes anywhere
    while n > 0:
        n -= 1
        c = stack[n]
        for d in range(DIRECTIONS):
            nb = P.nb[c][d]
            if nb >= 0 and not seen[nb] and P.code[nb] >= 0:
                seen[nb] = 1
                stack[n] = nb
                n += 1
    for c in range(P.ncells):
        if P.code[c] >= 0 and not seen[c]:
            return False
    return True


cdef int plan_search(SoloPlan* P, int budget, double t_left) noexcept nogil:
    """Fills the unset spaces with penalty <= budget: 1 found, 0 none, -1 out of nodes."""
    cdef int c, k, j, n, cost, r, mask, val, best = -1, best_n = 1 << 30, bmask = 0, bval = 0
    cdef bint time_for_tile = t_left >= P.t_tile
    P.nodes += 1
    if P.nodes > P.max_nodes:
        return -1
    for c in range(P.ncells):               # the most constrained space first
        if P.code[c] != SP_UNSET:
            continue
        demand(P, c, &mask, &val)
        n = 0
        if time_for_tile:
            for k in range(P.nclass):
                if available(P, k) > 0:
                    for j in range(P.nrot[k]):
                        if (P.rcode[k][j] & mask) == val:
                            n += 1
        if n == 0 and budget == 0:
            return 0
        if n < best_n:
            best_n = n
            best = c
            bmask = mask
            bval = val
    if best < 0:
        return 1 if reachable(P) else 0
    c = best
    for cost in range(budget + 1):
        if cost == 1:                       # leave the space empty
            P.code[c] = SP_EMPTY
            r = plan_search(P, budget - 1, t_left)
            if r != 0:
                return r
            P.code[c] = SP_UNSET
        if not time_for_tile:
            continue
        for k in range(P.nclass):
            if available(P, k) == 0:
                continue
            for j in range(P.nrot[k]):
                if mismatches(P.rcode[k][j], bmask, bval) != cost:
                    continue
                take(P, c, k, P.rcode[k][j])
                r = plan_search(P, budget - cost, t_left - P.t_tile)
                if r != 0:
                    return r
                put_back(P, c)
    return 0


cdef int plan_board(SoloPlan* P, const MState* s, int p, int max_budget,
                    double t_left) noexcept nogil:
    """The least penalty (<= max_budget) of a plan for the unset spaces, the plan left in P;
    -1 if none was found."""
    cdef int b
    for b in range(max_budget + 1):
        P.nodes = 0
        if plan_search(P, b, t_left) == 1:
            return b
        plan_reset(P, s, p)
    return -1


cdef inline int hand_placing(const MFace* f, int face, int code) noexcept nogil:
    """The placing (face, rotation) showing `code`, the fewest quarter turns; -1 if none."""
    cdef int r
    for r in range(ROTATIONS):
        if face_code(f, r) == code:
            return face * ROTATIONS + r
    return -1


cdef int board_penalty(const MState* s, int p) noexcept nogil:
    """Section 5.5 penalty of the tiles already on the board (their error edges, volcanoes):
    it stays whatever the plan does (the pre-placed solo tiles may already clash)."""
    cdef const MPlayer* pl = &s.p[p]
    cdef const MRules* R = &s.rules
    cdef int c, d, nb, pen = 0
    for c in range(n_cells(R)):
        if pl.cell_tile[c] == NO_TILE:
            continue
        pen += volcano_cost(R, cell_face(s, pl, c))
        for d in range(DIRECTIONS):
            nb = neighbour(R, c, d)
            if nb < 0:
                pen += edge_at(cell_face(s, pl, c), pl.cell_rot[c], d) != R.rim[c * DIRECTIONS + d]
            elif first_side(d) and pl.cell_tile[nb] != NO_TILE:
                pen += (edge_at(cell_face(s, pl, c), pl.cell_rot[c], d)
                        != edge_at(cell_face(s, pl, nb), pl.cell_rot[nb], opposite(d)))
    return pen


cdef int solo_pick(const MState* s, int p, SoloPlan* P, const SoloMemory* m,
                   int max_budget) noexcept nogil:
    """The pick for the plan's scarcest class on a space that may be laid now; -1 no plan."""
    cdef const MPlayer* pl = &s.p[p]
    cdef int c, t, k, best = -1
    if plan_board(P, s, p, max_budget, remaining(s, pl)) < 0:
        return -1
    for c in range(P.ncells):
        if P.cls[c] >= 0 and can_place(s, pl, c) and (
                best < 0 or available(P, P.cls[c]) < available(P, P.cls[best])):
            best = c
    if best < 0:
        return -1
    if P.used[best] >= 0:
        return A_PICK + P.dual_tile[P.used[best]]
    k = P.cls[best]
    for t in range(s.rules.n_tiles):
        if (s.loc[t] == LOC_POOL and not m.flipped[t]
                and plannable(&s.rules, &s.rules.faces[t][s.up[t]])
                and code_class(P, s.rules.faces[t][s.up[t]].code) == k):
            return A_PICK + t
    return -1


cdef int solo_place(const MState* s, int p, SoloPlan* P, int max_budget) noexcept nogil:
    """The placing of the tile in hand that leaves the least penalty in a plan of the rest
    (the face it was picked with first, fewest turns first); -1 if none within max_budget."""
    cdef const MPlayer* pl = &s.p[p]
    cdef const MFace* f
    cdef int b, c, k, face, a, local, mask, val
    cdef double t_left = remaining(s, pl) - (s.rules.t_place + s.rules.t_look + s.rules.t_rotate) / pl.speed
    for b in range(max_budget + 1):
        for c in range(P.ncells):
            if not can_place(s, pl, c):
                continue
            demand(P, c, &mask, &val)
            for a in range(FACES):
                face = pl.hand_face if a == 0 else 1 - pl.hand_face
                f = &s.rules.faces[pl.hand][face]
                local = volcano_cost(&s.rules, f)
                for k in range(ROTATIONS):
                    if local + mismatches(face_code(f, k), mask, val) > b:
                        continue
                    P.code[c] = face_code(f, k)
                    P.nodes = 0
                    if plan_search(P, b - local - mismatches(face_code(f, k), mask, val), t_left) == 1:
                        return encode_place(c, face * ROTATIONS + k)
                    plan_reset(P, s, p)
    return -1


cdef void plan_reset(SoloPlan* P, const MState* s, int p) noexcept nogil:
    """Back to the board as it stands (after a failed trial), class counts restored."""
    cdef const MPlayer* pl = &s.p[p]
    cdef int c
    for c in range(P.ncells):
        if P.cls[c] >= 0:
            put_back(P, c)
        if not P.fixed[c]:
            P.code[c] = SP_UNSET


cdef SoloMemory* solo_memory(const MState* s, void* scratch) noexcept nogil:
    """The policy memory of this game, emptied when a new game starts."""
    cdef SoloMemory* m = <SoloMemory*>scratch
    cdef const MPlayer* pl = &s.p[0]
    cdef int k
    cdef bint same = m.speed == pl.speed
    for k in range(s.rules.n_marked):
        same = same and m.marks[k] == pl.cell_tile[s.rules.marked[k]]
    if not same:
        memset(m, 0, sizeof(SoloMemory))
        m.speed = pl.speed
        for k in range(s.rules.n_marked):
            m.marks[k] = pl.cell_tile[s.rules.marked[k]]
    return m


cdef int solo_flip(const MState* s, int p, SoloMemory* m) noexcept nogil:
    """A flip that shows a face the plan may lack: first a one-terrain face up (the tile's
    other face then has more terrains), of the terrain showing most such faces, then any tile
    not flipped yet; -1 when none is left or the time left would no longer fill the board."""
    cdef const MRules* R = &s.rules
    cdef const MPlayer* pl = &s.p[p]
    cdef int t, code, terr, best = -1
    cdef int n[4]
    cdef double need = (n_cells(R) - pl.placed) * (R.t_pick + R.t_scan * R.scan_tiles + R.t_place
                                                   + 0.5 * R.t_rotate) / pl.speed
    if remaining(s, pl) - R.t_flip / pl.speed < need:
        return -1
    memset(n, 0, sizeof(n))
    for t in range(R.n_tiles):
        code = R.faces[t][s.up[t]].code
        if s.loc[t] == LOC_POOL and not m.flipped[t] and code == (code & 3) * 0x55:
            n[code & 3] += 1
    for terr in range(4):
        if n[terr] > 0 and (best < 0 or n[terr] > n[best]):
            best = terr
    for t in range(R.n_tiles):
        if (s.loc[t] == LOC_POOL and not m.flipped[t]
                and (best < 0 or R.faces[t][s.up[t]].code == best * 0x55)):
            m.flipped[t] = 1
            return A_FLIP + t
    return -1


cdef int solo_planner(const void* vs, const double* params, Rng* rng,
                      void* scratch) noexcept nogil:
    """Engine policy `solo_planner`: plan the whole board, pick and lay tiles by the plan."""
    cdef const MState* s = <const MState*>vs
    cdef int p = s.head.current, a, max_budget
    cdef const MPlayer* pl = &s.p[p]
    cdef SoloPlan P
    cdef SoloMemory* m
    if not s.rules.solo:
        return greedy_placer(vs, rng)
    max_budget = (s.rules.solo_threshold - 1 + <int>params[SP_PARAM_EXTRA_PENALTY]
                  - board_penalty(s, p))
    if max_budget < 0:
        max_budget = 0
    m = solo_memory(s, scratch)
    plan_init(s, p, &P, m)
    P.max_nodes = <int>params[SP_PARAM_NODES]
    if pl.hand != NO_TILE:
        a = solo_place(s, p, &P, max_budget)
    elif pl.placed == n_cells(&s.rules):
        a = A_JUMP
    else:
        a = solo_pick(s, p, &P, m, max_budget)
        if a < 0:
            a = solo_flip(s, p, m)
    return a if a >= 0 else greedy_placer(vs, rng)
