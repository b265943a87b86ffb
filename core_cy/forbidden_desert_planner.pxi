# The team planner (Engine.policy 0), included into forbidden_desert.pyx.
#
# A rule-based team plan evaluated for the current seat at every decision.  It reads only
# what the team may see: unexcavated tiles are "unknown" (their kind is never looked at unless
# recognisable from the desert side or Terrascoped), and it never looks at the deck orders.
# Priorities (first that applies):
#   water first (free): share within a tile, Water Carrier to neighbours, Secret Water
#   Reserve, Solar Shield before a storm draw when someone exposed is nearly dry;
#   dig out when buried; with all four parts: go to the Launch Pad, clear and excavate it,
#   bring the others (Navigator, Climber passenger, Jet Pack); pick up parts; the Water Carrier
#   refills at excavated wells and walks to the thirstiest pawn; a thirsty pawn walks to him;
#   otherwise explore: walk (digging blocked steps) to the cheapest unexcavated tile or
#   located part, dig it clear and excavate it.  The Meteorologist spends his last actions
#   holding the storm back.

cdef enum:
    PLAN_FAR = 1000
    METEO_WORK_ACTIONS = 2     # the Meteorologist's productive actions before he skips
    THIRSTY = 2                # water at or below this: go for water now
    TEAM_SPREAD = 2            # one cost unit per this many cells away from the Water Carrier
    PARCHED = 0                # at or below this without help: take shade in a tunnel


cdef inline bint plan_legal(const int* legal, int n, int a) noexcept nogil:
    cdef int lo = 0, hi = n - 1, mid
    while lo <= hi:
        mid = (lo + hi) >> 1
        if legal[mid] == a:
            return True
        if legal[mid] < a:
            lo = mid + 1
        else:
            hi = mid - 1
    return False


cdef inline int visible_kind(const DState* s, int t) noexcept nogil:
    """The tile's kind if the team can see it, else -1."""
    if s.excavated[t] or s.known[t] or (s.rules.known_kinds >> s.kind[t]) & 1:
        return s.kind[t]
    return -1


cdef void path_costs(const DState* s, int p, int* dist, int* first) noexcept nogil:
    """Dijkstra from pawn p's cell: entering a tile costs 1 plus the digs needed to bring
    it down to 1 sand (none for the Climber); tunnel hops between open tunnels cost 1.
    first[c] is the first cell of a cheapest path to c (-1 for the start or unreachable)."""
    cdef bint done[N_CELLS]
    cdef int start = s.tile_cell[s.pawn_tile[p]], i, c, u, best, d, v, t, w, nd
    cdef bint hop
    nd = 8 if s.role[p] == EXPLORER else 4
    for c in range(N_CELLS):
        dist[c] = PLAN_FAR
        first[c] = -1
        done[c] = False
    dist[start] = 0
    for i in range(N_CELLS):
        u = -1
        best = PLAN_FAR
        for c in range(N_CELLS):
            if not done[c] and dist[c] < best:
                best = dist[c]
                u = c
        if u < 0:
            break
        done[u] = True
        t = s.cell_tile[u]
        hop = t >= 0 and s.kind[t] == K_TUNNEL and s.excavated[t] and (
            s.role[p] == CLIMBER or not blocked(s, t))
        for c in range(N_CELLS):
            v = s.cell_tile[c]
            if v < 0 or done[c] or c == u:
                continue
            if adjacent(u, c, nd == 8):
                w = 1
            elif hop and s.kind[v] == K_TUNNEL and s.excavated[v] and (
                    s.role[p] == CLIMBER or not blocked(s, v)):
                w = 1
            else:
                continue
            if s.role[p] != CLIMBER and s.sand[v] >= 2:
                w += s.sand[v] - 1
            if dist[u] + w < dist[c]:
                dist[c] = dist[u] + w
                first[c] = c if u == start else first[u]


cdef int step_toward(const DState* s, int p, int target, const int* first,
                     const int* legal, int n, int passenger) noexcept nogil:
    """The action that makes progress along the cheapest path to target, or -1."""
    cdef int nxt = first[target], a
    if nxt < 0:
        return -1
    a = A_MOVE + nxt * 6 + passenger
    if plan_legal(legal, n, a):
        return a
    a = A_MOVE + nxt * 6 + NO_PASSENGER
    if plan_legal(legal, n, a):
        return a
    a = A_DIG + nxt
    if plan_legal(legal, n, a):
        return a
    return -1


cdef int water_op(const DState* s, const int* legal, int n) noexcept nogil:
    """A free water operation that keeps everyone alive, or -1."""
    cdef int g, r, h, q, missing, dry, a
    # Secret Water Reserve when it fills at least 3 canteens' worth or saves a dry pawn.
    for h in range(s.players):
        if plan_legal(legal, n, A_RESERVE + h):
            missing = 0
            dry = 0
            for q in range(s.players):
                if s.pawn_tile[q] == s.pawn_tile[h]:
                    missing += s.rules.adv_water[s.role[q]] - s.water[q]
                    if s.water[q] <= 0:
                        dry = 1
            if missing >= 3 or (dry and missing >= 2):
                return A_RESERVE + h
    # Give one unit to the driest pawn from someone with at least two more.
    for r in range(s.players):
        for g in range(s.players):
            a = A_GIVE + g * MAX_PLAYERS + r
            if s.water[g] >= s.water[r] + 2 and (s.water[r] <= 2 or s.role[g] == WATER_CARRIER) \
                    and plan_legal(legal, n, a):
                return a
    return -1


cdef int shield_op(const DState* s, const int* legal, int n) noexcept nogil:
    """Play a Solar Shield before the storm if a nearly dry, exposed pawn shares its tile."""
    cdef int h, q
    for h in range(s.players):
        if not plan_legal(legal, n, A_SHIELD + h) or s.shield[h]:
            continue
        for q in range(s.players):
            if s.pawn_tile[q] == s.pawn_tile[h] and s.water[q] <= 1 and not shaded(s, q):
                return A_SHIELD + h
    return -1


cdef int plan_peek(const DState* s) noexcept nogil:
    """Send the first Sun Beats Down (else Storm Picks Up) among the seen cards down."""
    cdef int i, k
    for k in range(2):
        for i in range(s.peek_n):
            if s.rules.storm[s.draw[s.draw_len - 1 - i]].kind == (SC_SUN if k == 0 else SC_PICKS_UP):
                return A_PEEK_BOTTOM + i
    return A_PEEK_KEEP


cdef int endgame(const DState* s, int p, const int* legal, int n, const int* dist,
                 const int* first) noexcept nogil:
    """All parts held: gather on the Launch Pad, clear and excavate it."""
    cdef int pad = pad_tile(s), pc = s.tile_cell[pad], q, a, c, h
    cdef int qdist[N_CELLS]
    cdef int qfirst[N_CELLS]
    cdef bint reach[N_CELLS]
    if s.pawn_tile[p] == pad:
        if s.sand[pad] > 0 and plan_legal(legal, n, A_DIG + pc):
            return A_DIG + pc
        if plan_legal(legal, n, A_EXCAVATE):
            return A_EXCAVATE
        # Bring the others: Navigator moves, or dig the next blocked step of their path.
        for q in range(s.players):
            if s.pawn_tile[q] == pad:
                continue
            a = A_NAV + q * N_CELLS * 6 + pc * 6 + NO_PASSENGER
            if plan_legal(legal, n, a):
                return a
            path_costs(s, q, qdist, qfirst)
            if qdist[pc] < PLAN_FAR:
                c = qfirst[pc]
                if c >= 0 and s.sand[s.cell_tile[c]] >= 2 and plan_legal(legal, n, A_DIG + c):
                    return A_DIG + c
        if s.role[p] == NAVIGATOR:
            # Move someone closer when the pad is out of their three steps.
            for q in range(s.players):
                if s.pawn_tile[q] == pad or nav_targets(s, q, reach) == 0:
                    continue
                path_costs(s, q, qdist, qfirst)
                if qdist[pc] < PLAN_FAR and qfirst[pc] >= 0:
                    a = A_NAV + q * N_CELLS * 6 + qfirst[pc] * 6 + NO_PASSENGER
                    if plan_legal(legal, n, a):
                        return a
        if plan_legal(legal, n, A_METEO_SKIP):
            return A_METEO_SKIP
        return A_END_ACTIONS
    # Fly there with a Jet Pack (taking a companion along).
    if not blocked(s, pad):
        for h in range(s.players + 1):
            q = NO_PASSENGER if h == s.players else h
            a = A_JET + p * N_CELLS * 6 + pc * 6 + q
            if plan_legal(legal, n, a):
                return a
    q = NO_PASSENGER
    if s.role[p] == CLIMBER:
        for h in range(s.players):
            if h != p and s.pawn_tile[h] == s.pawn_tile[p]:
                q = h
    a = step_toward(s, p, pc, first, legal, n, q)
    if a >= 0:
        return a
    if plan_legal(legal, n, A_METEO_SKIP):
        return A_METEO_SKIP
    return A_END_ACTIONS


cdef int explore(const DState* s, int p, const int* legal, int n, const int* dist,
                 const int* first) noexcept nogil:
    """Walk to the cheapest unexcavated tile or located part; dig it clear; excavate."""
    cdef int t = s.pawn_tile[p], c, v, k, q, best = -1, cost, best_cost = PLAN_FAR, i
    cdef bint all_parts = parts_count(s, P_HELD) == N_PARTS
    if plan_legal(legal, n, A_PICKUP):
        return A_PICKUP
    if plan_legal(legal, n, A_EXCAVATE) and (visible_kind(s, t) != K_PAD or all_parts):
        return A_EXCAVATE
    cdef int wc = -1, spread
    for q in range(s.players):
        if s.role[q] == WATER_CARRIER and q != p:
            wc = s.tile_cell[s.pawn_tile[q]]
    for c in range(N_CELLS):
        v = s.cell_tile[c]
        if v < 0 or dist[c] >= PLAN_FAR:
            continue
        # Stay near the Water Carrier: water can only be shared close by.
        spread = 0
        if wc >= 0:
            spread = (abs(c // SIDE - wc // SIDE) + abs(c % SIDE - wc % SIDE)) // TEAM_SPREAD
        cost = PLAN_FAR
        for i in range(N_PARTS):
            if s.part_state[i] == P_TILE and s.part_tile[i] == v:
                cost = dist[c] + s.sand[v] + (0 if s.excavated[v] else 1) - 3
        if cost == PLAN_FAR and not s.excavated[v]:
            k = visible_kind(s, v)
            cost = dist[c] + s.sand[v] + 1
            if k == K_PAD:
                cost += 4       # excavate the pad late: it only matters at the end
            for q in range(s.players):
                if q != p and s.pawn_tile[q] == v:
                    cost += 2   # someone is already there
        if cost < PLAN_FAR:
            cost += spread
        if cost < best_cost:
            best_cost = cost
            best = c
    if best < 0:
        return -1
    if s.cell_tile[best] == t:
        if s.sand[t] > 0 and plan_legal(legal, n, A_DIG + best):
            return A_DIG + best
        return -1
    # A sanded target next to us: dig it from here (as cheap as walking there first).
    v = s.cell_tile[best]
    if s.sand[v] > 0 and plan_legal(legal, n, A_DIG + best):
        return A_DIG + best
    return step_toward(s, p, best, first, legal, n, NO_PASSENGER)


cdef int water_carrier(const DState* s, int p, const int* legal, int n, const int* dist,
                       const int* first) noexcept nogil:
    """Refill at an excavated well; walk to the thirstiest teammate when he can help."""
    cdef int q, worst = -1, c, best = -1, best_d = PLAN_FAR, t
    if plan_legal(legal, n, A_WC_DRAW):
        return A_WC_DRAW
    for q in range(s.players):
        if q != p and s.water[q] <= THIRSTY and (worst < 0 or s.water[q] < s.water[worst]):
            worst = q
    if worst >= 0 and s.water[p] >= 2:
        c = s.tile_cell[s.pawn_tile[worst]]
        if not adjacent(c, s.tile_cell[s.pawn_tile[p]], False) and s.pawn_tile[worst] != s.pawn_tile[p]:
            q = step_toward(s, p, c, first, legal, n, NO_PASSENGER)
            if q >= 0:
                return q
        return -1
    if s.water[p] <= s.rules.adv_water[WATER_CARRIER] - 2:
        for t in range(N_TILES):
            if s.kind[t] == K_WELL and s.excavated[t]:
                c = s.tile_cell[t]
                if dist[c] < best_d:
                    best_d = dist[c]
                    best = c
        if best >= 0 and best != s.tile_cell[s.pawn_tile[p]]:
            return step_toward(s, p, best, first, legal, n, NO_PASSENGER)
    return -1


cdef int thirsty(const DState* s, int p, const int* legal, int n, const int* first) noexcept nogil:
    """A nearly dry pawn walks to a Water Carrier who has water to give."""
    cdef int q, c
    for q in range(s.players):
        if s.role[q] == WATER_CARRIER and q != p and s.water[q] >= 3:
            c = s.tile_cell[s.pawn_tile[q]]
            if adjacent(c, s.tile_cell[s.pawn_tile[p]], False) or s.pawn_tile[q] == s.pawn_tile[p]:
                return -1
            return step_toward(s, p, c, first, legal, n, NO_PASSENGER)
    return -1


cdef int take_shade(const DState* s, int p, const int* legal, int n, const int* dist,
                    const int* first) noexcept nogil:
    """A parched pawn ends its turn on an excavated tunnel (shade from the sun) if it can
    reach one this turn; on one already, it only digs or excavates around it."""
    cdef int t = s.pawn_tile[p], c, best = -1, best_d = PLAN_FAR, u
    if s.kind[t] == K_TUNNEL and s.excavated[t]:
        if plan_legal(legal, n, A_PICKUP):
            return A_PICKUP
        for c in range(N_CELLS):
            u = s.cell_tile[c]
            if u >= 0 and s.sand[u] > 0 and plan_legal(legal, n, A_DIG + c):
                return A_DIG + c
        if plan_legal(legal, n, A_METEO_SKIP):
            return A_METEO_SKIP
        return A_END_ACTIONS
    for u in range(N_TILES):
        if s.kind[u] == K_TUNNEL and s.excavated[u]:
            c = s.tile_cell[u]
            if dist[c] < best_d:
                best_d = dist[c]
                best = c
    if best >= 0 and best_d <= s.actions_left:
        return step_toward(s, p, best, first, legal, n, NO_PASSENGER)
    return -1


cdef int plan_actions(const DState* s, const int* legal, int n) noexcept nogil:
    cdef int p = s.current, a, c
    cdef int dist[N_CELLS]
    cdef int first[N_CELLS]
    a = water_op(s, legal, n)
    if a >= 0:
        return a
    if s.actions_left == 0:
        if plan_legal(legal, n, A_THROTTLE + p):
            return A_THROTTLE + p
        return A_END_ACTIONS
    if buried(s, p):
        c = s.tile_cell[s.pawn_tile[p]]
        if s.sand[s.pawn_tile[p]] >= 3 and plan_legal(legal, n, A_BLAST + p * N_CELLS + c):
            return A_BLAST + p * N_CELLS + c
        if plan_legal(legal, n, A_DIG + c):
            return A_DIG + c
        return A_END_ACTIONS
    path_costs(s, p, dist, first)
    if parts_count(s, P_HELD) == N_PARTS:
        return endgame(s, p, legal, n, dist, first)
    if (s.role[p] == METEOROLOGIST and s.actions_left <= ACTIONS_PER_TURN - METEO_WORK_ACTIONS
            and plan_legal(legal, n, A_METEO_SKIP)):
        return A_METEO_SKIP
    if s.role[p] == WATER_CARRIER:
        a = water_carrier(s, p, legal, n, dist, first)
        if a >= 0:
            return a
    elif s.water[p] <= THIRSTY:
        a = thirsty(s, p, legal, n, first)
        if a >= 0:
            return a
        if s.water[p] <= PARCHED:
            a = take_shade(s, p, legal, n, dist, first)
            if a >= 0:
                return a
    a = explore(s, p, legal, n, dist, first)
    if a >= 0:
        return a
    if plan_legal(legal, n, A_METEO_SKIP):
        return A_METEO_SKIP
    return A_END_ACTIONS


cdef int d_policy(const void* vs, int which, Rng* rng, void* scratch) noexcept nogil:
    cdef const DState* s = <const DState*>vs
    cdef int* legal = <int*>scratch
    cdef int n = d_legal(s, legal), a
    if s.phase == PH_PEEK:
        return plan_peek(s)
    if s.phase == PH_STORM:
        a = water_op(s, legal, n)
        if a < 0:
            a = shield_op(s, legal, n)
        if a < 0 and s.storm_left > 0:
            # A Storm Tracker helps most when a Sun Beats Down threatens a dry pawn.
            for a in range(s.players):
                if plan_legal(legal, n, A_TRACKER + a):
                    return A_TRACKER + a
            a = -1
        return a if a >= 0 else A_DRAW
    a = plan_actions(s, legal, n)
    return a if plan_legal(legal, n, a) else legal[0]
