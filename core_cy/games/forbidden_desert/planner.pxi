# The team planners, included into engine.pyx: Engine.policy 0 "planner" (the
# rule-based plan below), 1 "search" (the turn search at the bottom, beam BEAM: the team
# planner of experiments), 2 "deep_search" (the same search, beam BEAM_DEEP) and 3
# "team_search" (deep_search's best lines, each followed by the teammates' searched turns).
#
# A rule-based team plan evaluated for the current seat at every decision.  It reads only
# what the team may see: unexcavated tiles are "unknown" (their kind is never looked at unless
# recognisable from the desert side or Terrascoped), and it never looks at the deck orders.
# Priorities (first that applies):
#   water first (free): share within a tile, Water Carrier to neighbours, Secret Water
#   Reserve, Solar Shield before a storm draw when someone exposed is nearly dry;
#   dig out when buried; with all four parts (the search policies search the endgame too,
#   scored by endgame_eval, and fall back on this): go to the Launch Pad, clear and excavate it,
#   bring the others (Navigator, Climber passenger, Jet Pack); pick up parts; the Water Carrier
#   refills at excavated wells and walks to the thirstiest pawn; a thirsty pawn walks to him;
#   otherwise explore: walk (digging blocked steps) to the cheapest unexcavated tile or
#   located part, dig it clear and excavate it.  The Meteorologist spends his last actions
#   holding the storm back.

cdef enum:
    POLICY_PLANNER = 0         # Engine.policy `which`: the rule-based planner
    POLICY_SEARCH = 1          # the planner with a beam search over the acting pawn's actions
    POLICY_DEEP = 2            # the same search with a wider beam: stronger, about half as fast
    POLICY_TEAM = 3            # deep_search's best lines, each scored after the teammates' turns
    PLAN_FAR = 1000
    THIRSTY = 1                # water at or below this: go for water now
    CLAIM_PENALTY = 2          # a target nearer to a teammate costs this much more
    PART_BONUS = 3             # a located part is worth this many actions of detour
    PAD_DELAY = 2              # the Launch Pad only matters at the end
    WATER_URGENCY = 3          # water-drop tiles: one action cheaper per this team deficit
    ENDGAME_SAND_RESERVE = 12  # with all parts held, dig spare actions away below this supply


ctypedef struct PlanLegal:
    # What the planners' legality questions need, found once per decision (plan_legal_init):
    # they ask a few action ids at every move, so the legal actions are never listed.
    uint32_t steps         # step_mask of the acting pawn from its cell
    int held[MAX_PLAYERS]  # held_types(s): the seats' cards


cdef inline void plan_legal_init(const DState* s, PlanLegal* legal) noexcept nogil:
    cdef int p = s.head.current
    legal.steps = step_mask(s, p, s.tile_cell[s.pawn_tile[p]]) if s.phase == PH_ACTIONS else 0
    held_types(s, legal.held)


cdef inline bint plan_legal(const DState* s, const PlanLegal* legal, int a) noexcept nogil:
    """Whether action a is legal in s (exactly d_legal's list: tests)."""
    if a >= A_GIVE:
        return free_legal(s, legal.held, a)
    return act_legal(s, legal.steps, a)


cdef inline int visible_kind(const DState* s, int t) noexcept nogil:
    """The tile's kind if the team can see it, else -1."""
    if s.excavated[t] or s.known[t] or (s.rules.known_kinds >> s.kind[t]) & 1:
        return s.kind[t]
    return -1


cdef uint32_t NEIGHBOURS[2][N_CELLS]   # the cells next to a cell: [0] orthogonal, [1] with diagonals


cdef void fill_neighbours() noexcept nogil:
    cdef int u, c
    for u in range(N_CELLS):
        NEIGHBOURS[0][u] = NEIGHBOURS[1][u] = 0
        for c in range(N_CELLS):
            if adjacent(u, c, False):
                NEIGHBOURS[0][u] |= 1u << c
            if adjacent(u, c, True):
                NEIGHBOURS[1][u] |= 1u << c


fill_neighbours()


cdef void path_costs(const DState* s, int p, int* dist, int* first,
                     int target=-1) noexcept nogil:
    """Dijkstra from pawn p's cell: entering a tile costs 1 plus the digs needed to bring
    it down to 1 sand (none for the Climber); tunnel hops between open tunnels (tunnel_open)
    cost 1.
    first[c] is the first cell of a cheapest path to c (-1 for the start or unreachable).
    Cells are settled lowest distance first, the lowest cell first among equals (the ties
    decide `first`); the sets of cells are bit masks.  With a target cell it stops once the
    target is settled: then only dist[target] and first[target] are final."""
    cdef int start = s.tile_cell[s.pawn_tile[p]], c, u, best, v, nd
    cdef int enter[N_CELLS]
    cdef uint32_t tiles = 0, tunnels = 0, reached, todo, near
    cdef const uint32_t* neighbours = NEIGHBOURS[1 if s.role[p] == EXPLORER else 0]
    for c in range(N_CELLS):
        dist[c] = PLAN_FAR
        first[c] = -1
        v = s.cell_tile[c]
        if v < 0:
            continue
        tiles |= 1u << c
        enter[c] = 1
        if s.role[p] != CLIMBER and s.sand[v] >= 2:
            enter[c] += s.sand[v] - 1
        if tunnel_open(s, p, v):
            tunnels |= 1u << c
    dist[start] = 0
    reached = 1u << start          # a finite distance, not yet settled
    while reached:
        u = -1
        best = PLAN_FAR
        todo = reached
        while todo:
            c = lowest_bit(todo)
            todo &= todo - 1
            if dist[c] < best:
                best = dist[c]
                u = c
        if u == target:
            return
        reached &= ~(1u << u)
        tiles &= ~(1u << u)        # settled (or the empty cell): never relaxed again
        near = neighbours[u]
        if s.cell_tile[u] >= 0 and (tunnels >> u) & 1:
            near |= tunnels
        near &= tiles
        while near:
            c = lowest_bit(near)
            near &= near - 1
            nd = dist[u] + enter[c]
            if nd < dist[c]:
                dist[c] = nd
                first[c] = c if u == start else first[u]
                reached |= 1u << c


cdef int step_toward(const DState* s, int p, int target, const int* first,
                     const PlanLegal* legal, int passenger) noexcept nogil:
    """The action that makes progress along the cheapest path to target, or -1."""
    cdef int nxt = first[target], a
    if nxt < 0:
        return -1
    a = pawn_move(A_MOVE, 0, nxt, passenger)
    if plan_legal(s, legal, a):
        return a
    a = pawn_move(A_MOVE, 0, nxt, NO_PASSENGER)
    if plan_legal(s, legal, a):
        return a
    a = A_DIG + nxt
    if plan_legal(s, legal, a):
        return a
    return -1


cdef int water_op(const DState* s, const PlanLegal* legal) noexcept nogil:
    """A free water operation that keeps everyone alive, or -1."""
    cdef int g, r, h, q, missing, dry, a
    # Secret Water Reserve when it fills at least 3 canteens' worth or saves a dry pawn.
    for h in range(s.head.players):
        if plan_legal(s, legal, A_RESERVE + h):
            missing = 0
            dry = 0
            for q in range(s.head.players):
                if s.pawn_tile[q] == s.pawn_tile[h]:
                    missing += s.rules.adv_water[s.role[q]] - s.water[q]
                    if s.water[q] <= 0:
                        dry = 1
            if missing >= 3 or (dry and missing >= 2):
                return A_RESERVE + h
    # Give one unit to the driest pawn from someone with at least two more.
    for r in range(s.head.players):
        for g in range(s.head.players):
            a = seat_to_seat(A_GIVE, g, r)
            if give_wanted(s, g, r) and plan_legal(s, legal, a):
                return a
    return -1


cdef inline bint give_wanted(const DState* s, int g, int r) noexcept nogil:
    """The team's sharing rule (water_op): one unit from g to r when g holds at least two more
    and r is nearly dry or g is the Water Carrier (whose water is there to be given)."""
    return s.water[g] >= s.water[r] + 2 and (s.water[r] <= 2 or s.role[g] == WATER_CARRIER)


cdef void share_as_team(DState* s) noexcept nogil:
    """The search's model of water_op: the gifts it makes (same tile, or the Water Carrier to
    an orthogonal neighbour: the free operations of spec 4.8, 4.9), in its order, until it
    makes none.  So a searched line sees the Water Carrier's draws at a well pass on to the
    pawns around him as they will in play (a pump: each draw is two more units)."""
    cdef int g, r, guard
    cdef bint gave = True
    for guard in range(8 * MAX_PLAYERS):
        if not gave:
            return
        gave = False
        for r in range(s.head.players):
            for g in range(s.head.players):
                if give_wanted(s, g, r) and can_give_water(s, g, r):
                    s.water[g] -= 1
                    s.water[r] += 1
                    gave = True
                    break
            if gave:
                break


cdef int shield_op(const DState* s, const PlanLegal* legal) noexcept nogil:
    """Play a Solar Shield before the storm if a nearly dry, exposed pawn shares its tile."""
    cdef int h, q
    for h in range(s.head.players):
        if not plan_legal(s, legal, A_SHIELD + h) or s.shield[h]:
            continue
        for q in range(s.head.players):
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


cdef int navigate_to_pad(const DState* s, int p, int pc, const PlanLegal* legal) noexcept nogil:
    """The Navigator (from anywhere) moves the teammate who gains most toward the pad: onto it
    when in three steps, else to the reachable cell nearest to it."""
    cdef int q, c, a, best_a = -1, gain, best_gain = 0, here
    cdef bint reach[N_CELLS]
    if s.role[p] != NAVIGATOR:
        return -1
    for q in range(s.head.players):
        if q == p or s.tile_cell[s.pawn_tile[q]] == pc or nav_targets(s, q, reach) == 0:
            continue
        here = manhattan(s.tile_cell[s.pawn_tile[q]], pc)
        for c in range(N_CELLS):
            if not reach[c]:
                continue
            a = pawn_move(A_NAV, q, c, NO_PASSENGER)
            gain = here - manhattan(c, pc) + (10 if c == pc else 0)
            if gain > best_gain and plan_legal(s, legal, a):
                best_gain = gain
                best_a = a
    return best_a


cdef int endgame(const DState* s, int p, const PlanLegal* legal, const int* first) noexcept nogil:
    """All parts held: gather on the Launch Pad, clear and excavate it.  The Navigator pulls
    the others in first; spare actions hold the storm back or dig sand (the supply).  first:
    path_costs from p's cell with the pad's cell as target (only first[pad cell] is read)."""
    cdef int pad = pad_tile(s), pc = s.tile_cell[pad], q, a, c, h
    cdef int qdist[N_CELLS]
    cdef int qfirst[N_CELLS]
    if s.pawn_tile[p] == pad:
        if s.sand[pad] > 0 and plan_legal(s, legal, A_DIG + pc):
            return A_DIG + pc
        if plan_legal(s, legal, A_EXCAVATE):
            return A_EXCAVATE
    a = navigate_to_pad(s, p, pc, legal)
    if a >= 0:
        return a
    if s.pawn_tile[p] == pad:
        # Clear the next blocked step of a teammate's way here.
        for q in range(s.head.players):
            if s.pawn_tile[q] == pad:
                continue
            path_costs(s, q, qdist, qfirst, pc)
            if qdist[pc] < PLAN_FAR:
                c = qfirst[pc]
                if c >= 0 and s.sand[s.cell_tile[c]] >= 2 and plan_legal(s, legal, A_DIG + c):
                    return A_DIG + c
    else:
        # Fly there with a Jet Pack (taking a companion along), else walk.
        if not blocked(s, pad):
            for h in range(s.head.players + 1):
                q = NO_PASSENGER if h == s.head.players else h
                a = pawn_move(A_JET, p, pc, q)
                if plan_legal(s, legal, a):
                    return a
        q = NO_PASSENGER
        if s.role[p] == CLIMBER:
            for h in range(s.head.players):
                if h != p and s.pawn_tile[h] == s.pawn_tile[p]:
                    q = h
        a = step_toward(s, p, pc, first, legal, q)
        if a >= 0:
            return a
    if plan_legal(s, legal, A_METEO_SKIP):
        return A_METEO_SKIP
    a = fallback_dig(s, p, legal)
    if a >= 0 and s.pawn_tile[p] == pad:
        return a
    if a >= 0 and s.supply <= ENDGAME_SAND_RESERVE:
        return a
    return A_END_ACTIONS


cdef inline int dig_or_blast(const DState* s, int c, const PlanLegal* legal) noexcept nogil:
    """Clear sand on cell c: a Dune Blaster (any holder in range) on 2+ sand, else dig."""
    cdef int h
    if s.sand[s.cell_tile[c]] >= 2:
        for h in range(s.head.players):
            if plan_legal(s, legal, seat_at_cell(A_BLAST, h, c)):
                return seat_at_cell(A_BLAST, h, c)
    if plan_legal(s, legal, A_DIG + c):
        return A_DIG + c
    return -1


cdef inline int manhattan(int a, int b) noexcept nogil:
    return abs(a // SIDE - b // SIDE) + abs(a % SIDE - b % SIDE)


cdef inline int reach_cost(const DState* s, int p, int c, const int* dist) noexcept nogil:
    """Actions to stand on cell c with its tile cleared to 0 sand (dist already pays the
    digs that bring a blocked tile down to 1 for everyone but the Climber)."""
    cdef int v = s.cell_tile[c], sd = s.sand[v]
    if s.role[p] != CLIMBER and sd >= 2:
        return dist[c] + 1
    return dist[c] + sd


cdef int team_deficit(const DState* s) noexcept nogil:
    cdef int q, w = 0
    for q in range(s.head.players):
        w += s.rules.adv_water[s.role[q]] - s.water[q]
    return w


cdef int act_toward(const DState* s, int p, int best, const PlanLegal* legal,
                    const int* first) noexcept nogil:
    """Progress toward standing on a cleared cell best: dig it from here when in reach,
    else step (digging blocked steps, blasting big drifts)."""
    cdef int t = s.pawn_tile[p], v = s.cell_tile[best], a, tc = s.tile_cell[t]
    if v == t:
        if s.sand[t] > 0:
            return dig_or_blast(s, best, legal)
        return -1
    if s.sand[v] > 0 and adjacent(best, tc, s.role[p] == EXPLORER):
        a = dig_or_blast(s, best, legal)
        if a >= 0:
            return a
    if first[best] >= 0 and s.sand[s.cell_tile[first[best]]] >= 2 and s.role[p] != CLIMBER:
        a = dig_or_blast(s, first[best], legal)
        if a >= 0:
            return a
    return step_toward(s, p, best, first, legal, NO_PASSENGER)


cdef int pick_target(const DState* s, int p, const int* dist, int* out_cost) noexcept nogil:
    """The cheapest useful cell: a located part, else an unexcavated tile (water drops
    first when the team is thirsty; the Launch Pad late; tiles a teammate stands on last)."""
    cdef int c, v, k, q, i, best = -1, cost, best_cost = PLAN_FAR, deficit
    deficit = team_deficit(s)
    for c in range(N_CELLS):
        v = s.cell_tile[c]
        if v < 0 or dist[c] >= PLAN_FAR:
            continue
        cost = PLAN_FAR
        for i in range(N_PARTS):
            if s.part_state[i] == P_TILE and s.part_tile[i] == v:
                cost = reach_cost(s, p, c, dist) + (0 if s.excavated[v] else 1) - PART_BONUS
        if cost == PLAN_FAR and not s.excavated[v]:
            cost = reach_cost(s, p, c, dist) + 1
            k = visible_kind(s, v)
            if k == K_PAD:
                cost += PAD_DELAY
            elif water_drop_shown(s, v) and not s.known[v]:
                cost -= deficit // WATER_URGENCY
            elif k == K_MIRAGE:
                cost += PAD_DELAY
            for q in range(s.head.players):
                if q != p and s.pawn_tile[q] == v:
                    cost += 2   # someone is already there
        if cost < PLAN_FAR and CLAIM_PENALTY > 0:
            # A teammate nearer to it will likely take it on his turn: spread the work.
            for q in range(s.head.players):
                if q != p and manhattan(c, s.tile_cell[s.pawn_tile[q]]) < manhattan(
                        c, s.tile_cell[s.pawn_tile[p]]):
                    cost += CLAIM_PENALTY
                    break
        if cost < best_cost:
            best_cost = cost
            best = c
    out_cost[0] = best_cost
    return best


cdef int fallback_dig(const DState* s, int p, const PlanLegal* legal) noexcept nogil:
    """Nothing better: clear the most sand within reach (the supply is finite)."""
    cdef int c, v, best = -1, most = 0, tc = s.tile_cell[s.pawn_tile[p]]
    for c in range(N_CELLS):
        v = s.cell_tile[c]
        if v >= 0 and s.sand[v] > most and plan_legal(s, legal, A_DIG + c):
            most = s.sand[v]
            best = c
    if best >= 0:
        return A_DIG + best
    return -1


cdef int explore(const DState* s, int p, const PlanLegal* legal, const int* dist,
                 const int* first) noexcept nogil:
    """Walk to the best target (pick_target), clear it and excavate it or pick up its part."""
    cdef int best, cost
    if plan_legal(s, legal, A_PICKUP):
        return A_PICKUP
    if plan_legal(s, legal, A_EXCAVATE):
        return A_EXCAVATE
    best = pick_target(s, p, dist, &cost)
    if best < 0:
        return -1
    if s.role[p] == METEOROLOGIST and cost > s.actions_left and plan_legal(s, legal, A_METEO_SKIP):
        # Each held-back card saves ~1.2 sand and a seventh of a Sun Beats Down: worth more
        # than walking toward work he cannot finish this turn.
        return A_METEO_SKIP
    return act_toward(s, p, best, legal, first)


cdef int water_carrier(const DState* s, int p, const PlanLegal* legal, const int* dist,
                       const int* first) noexcept nogil:
    """Refill at an excavated well; walk to the thirstiest teammate when he can help."""
    cdef int q, worst = -1, c, best = -1, best_d = PLAN_FAR, t
    if plan_legal(s, legal, A_WC_DRAW):
        return A_WC_DRAW
    for q in range(s.head.players):
        if q != p and s.water[q] <= THIRSTY and (worst < 0 or s.water[q] < s.water[worst]):
            worst = q
    if worst >= 0 and s.water[p] >= 2:
        c = s.tile_cell[s.pawn_tile[worst]]
        if not adjacent(c, s.tile_cell[s.pawn_tile[p]], False) and s.pawn_tile[worst] != s.pawn_tile[p]:
            q = step_toward(s, p, c, first, legal, NO_PASSENGER)
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
            return step_toward(s, p, best, first, legal, NO_PASSENGER)
    return -1


cdef int seek_water(const DState* s, int p, const PlanLegal* legal, const int* dist,
                    const int* first) noexcept nogil:
    """A dry pawn goes for the cheapest water: a Water Carrier or a richer teammate to share
    with, an unexcavated water-drop tile, or shade on an excavated tunnel (then stays)."""
    cdef int q, c, v, t = s.pawn_tile[p], best = -1, cost, best_cost = PLAN_FAR, a
    if s.kind[t] == K_TUNNEL and s.excavated[t]:
        best_cost = 0           # shaded here already
    for q in range(s.head.players):
        if q == p:
            continue
        c = s.tile_cell[s.pawn_tile[q]]
        if s.role[q] == WATER_CARRIER and s.water[q] >= 3:
            if adjacent(c, s.tile_cell[t], False) or s.pawn_tile[q] == t:
                return -1       # water_op shares
            cost = dist[c] - 1
        elif s.water[q] >= s.water[p] + 3:
            if s.pawn_tile[q] == t:
                return -1
            cost = dist[c]
        else:
            continue
        if cost < best_cost:
            best_cost = cost
            best = c
    for c in range(N_CELLS):
        v = s.cell_tile[c]
        if v < 0 or dist[c] >= PLAN_FAR:
            continue
        if water_drop_shown(s, v) and not s.excavated[v] and not (s.known[v] and s.kind[v] == K_MIRAGE):
            cost = reach_cost(s, p, c, dist) + 1
        elif s.kind[v] == K_TUNNEL and s.excavated[v] and s.sand[v] < 2:
            cost = dist[c]
        else:
            continue
        if cost < best_cost:
            best_cost = cost
            best = c
    if best_cost > s.actions_left + 4:
        return -1
    if best < 0:
        # On a tunnel: work around it, then stay in the shade.
        a = explore_here(s, p, legal)
        if a >= 0:
            return a
        if plan_legal(s, legal, A_METEO_SKIP):
            return A_METEO_SKIP
        return A_END_ACTIONS
    if s.cell_tile[best] == t and plan_legal(s, legal, A_EXCAVATE):
        return A_EXCAVATE
    return act_toward(s, p, best, legal, first)


cdef int explore_here(const DState* s, int p, const PlanLegal* legal) noexcept nogil:
    """Work that needs no step: pick up, excavate, dig an adjacent unexcavated tile."""
    cdef int c, v, tc = s.tile_cell[s.pawn_tile[p]]
    if plan_legal(s, legal, A_PICKUP):
        return A_PICKUP
    if plan_legal(s, legal, A_EXCAVATE):
        return A_EXCAVATE
    for c in range(N_CELLS):
        v = s.cell_tile[c]
        if v >= 0 and s.sand[v] > 0 and (not s.excavated[v] or s.sand[v] >= 2) \
                and plan_legal(s, legal, A_DIG + c):
            return A_DIG + c
    return -1


cdef int plan_actions(const DState* s, const SearchWeights* sw, const PlanLegal* legal,
                      int which, void* scratch) noexcept nogil:
    cdef int p = s.head.current, a, c
    cdef int dist[N_CELLS]
    cdef int first[N_CELLS]
    a = water_op(s, legal)
    if a >= 0:
        return a
    if plan_legal(s, legal, A_THROTTLE + p):
        return A_THROTTLE + p
    if s.actions_left == 0:
        return A_END_ACTIONS
    if buried(s, p):
        c = s.tile_cell[s.pawn_tile[p]]
        a = dig_or_blast(s, c, legal)
        return a if a >= 0 else A_END_ACTIONS
    if which != POLICY_PLANNER:
        a = planned_action(s, sw, scratch, legal, which)
        if a >= 0:
            return a
    if parts_count(s, P_HELD) == N_PARTS:
        path_costs(s, p, dist, first, s.tile_cell[pad_tile(s)])   # endgame reads only the pad's
        return endgame(s, p, legal, first)
    path_costs(s, p, dist, first)
    if (s.role[p] == METEOROLOGIST and plan_legal(s, legal, A_METEO_SKIP)
            and s.actions_left <= draw_value(s) - s.meteo_reduction):
        # Hold back every card he can: each saves ~0.9 sand, half a water and a chance of
        # Storm Picks Up - more than one action of work.
        a = explore_here(s, p, legal)
        if a == A_PICKUP or a == A_EXCAVATE:
            return a
        return A_METEO_SKIP
    if s.role[p] == WATER_CARRIER:
        a = water_carrier(s, p, legal, dist, first)
        if a >= 0:
            return a
    elif s.water[p] <= THIRSTY:
        a = seek_water(s, p, legal, dist, first)
        if a >= 0:
            return a
    a = explore(s, p, legal, dist, first)
    if a >= 0:
        return a
    if plan_legal(s, legal, A_METEO_SKIP):
        return A_METEO_SKIP
    a = fallback_dig(s, p, legal)
    if a >= 0:
        return a
    return A_END_ACTIONS


cdef int d_policy(const void* vs, int which, const double* params, Rng* rng,
                  void* scratch) noexcept nogil:
    """Engine.policy of the planner policies; `params`: the search's parameters (a
    SearchWeights block; the rule-based planner reads none)."""
    cdef const DState* s = <const DState*>vs
    cdef const SearchWeights* sw = <const SearchWeights*>params
    cdef PlanLegal legal
    cdef int a
    plan_legal_init(s, &legal)
    if s.phase == PH_PEEK:
        return plan_peek(s)
    if s.phase == PH_STORM:
        a = water_op(s, &legal)
        if a < 0:
            a = shield_op(s, &legal)
        if a < 0 and s.storm_left > 0:
            # A Storm Tracker helps most when a Sun Beats Down threatens a dry pawn.
            for a in range(s.head.players):
                if plan_legal(s, &legal, A_TRACKER + a):
                    return A_TRACKER + a
            a = -1
        return a if a >= 0 else A_DRAW
    a = plan_actions(s, sw, &legal, which, scratch)
    return a if plan_legal(s, &legal, a) else A_END_ACTIONS   # always legal here


# ---------------------------------------------------------------- turn search (policy "search")
#
# One adventurer's turn is searched, the others only through the evaluation, so there is no
# joint plan (gathering on a well before digging it).
# The acting adventurer's remaining actions and equipment (Dune Blaster, Jet Pack) are chosen
# by a beam search over clones of the state (the action phase has no chance).  Hidden
# information stays hidden: excavating a tile whose kind the team cannot see is not applied
# in the search (it would reveal the kind); it only marks the tile in a bitmask that the
# evaluation values at its expected worth.  The
# chosen sequence is cached in the policy scratch together with the state it expects next, so
# the search runs once per turn (and again after each excavation, which reveals a tile).

cdef enum:
    PLACE_SHARE = 6        # a beam keeps max(1, beam / PLACE_SHARE) nodes per pawn placement
    BEAM = 4               # policy "search": about 1,000 4-player games per CPU-second
    BEAM_DEEP = 12         # policy "deep_search"
    # Policy "team_search"'s widths are its parameters (team_beam, team_lines,
    # team_reply_beam) up to these bounds (what the policy scratch holds).
    MAX_TEAM_BEAM = 32     # the acting pawn's beam and the teammates' reply beams
    MAX_TEAM_LINES = 16    # the acting pawn's lines played out in a round
    MAX_CAND = 64
    MAX_FREE = 2           # equipment cards one search line may play
    MAX_PLAN = 8           # actions and cards in one line
    JET_MIN = 3            # a Jet Pack only for a flight this many steps long
    PLAN_MAGIC = 0x44455331

ctypedef struct SNode:
    DState s
    int32_t dug            # bit t: tile t excavated in the search (effects unknown)
    int32_t n              # actions of the sequence
    int32_t free           # equipment cards played in it
    uint64_t key           # node_key: transpositions share it
    double rank            # score + the worth of the actions still left (beam order)
    int32_t acts[MAX_PLAN]
    double score

ctypedef struct PlanCache:
    int32_t magic
    int32_t n              # actions left in the plan
    int32_t acts[MAX_PLAN]
    DState expect          # the state the next call must see for the plan to stand


cdef inline void plan_do(DState* s, const SearchWeights* sw, int a, int32_t* dug,
                         const DState* root) noexcept nogil:
    """The search's apply: d_apply's action effects without the phase machinery, and an
    unseen tile's excavation kept hidden."""
    cdef int p = s.head.current, t = s.pawn_tile[p], pile
    if a >= A_BLAST:
        apply_free(s, a)        # Dune Blaster, Jet Pack: the engine's own effects, no action
    else:
        s.actions_left -= 1
        if a == A_EXCAVATE:
            if visible_kind(root, t) >= 0:
                # A gear tile's card is the equipment pile's hidden top: the search draws none.
                pile = s.eq_len
                s.eq_len = 0
                excavate(s, p)
                s.eq_len = pile
            else:
                dug[0] |= 1 << t
        else:
            pawn_action(s, decompose(a), p)
    if sw.line_sharing > 0.0:
        share_as_team(s)


cdef int plan_candidates(const DState* s, int32_t dug, int free, int* out) noexcept nogil:
    """The acting pawn's useful actions and cards (no peeks, no water: water_op shares)."""
    cdef int p = s.head.current, t = s.pawn_tile[p], tc = s.tile_cell[t], n = 0, k, i, c, q, v
    cdef int steps[N_CELLS]
    cdef bint reach[N_CELLS]
    cdef bint bur = buried(s, p)
    cdef int pad = pad_tile(s)
    if s.actions_left <= 0 or win_condition(s):
        return 0                # a won line ends: the game is over
    if not bur:
        if not s.excavated[t] and s.sand[t] == 0 and not (dug >> t) & 1:
            out[n] = A_EXCAVATE
            n += 1
        if may_pick_up(s, t):
            out[n] = A_PICKUP
            n += 1
        if s.role[p] == METEOROLOGIST and s.meteo_reduction < draw_value(s):
            out[n] = A_METEO_SKIP
            n += 1
        if (s.role[p] == WATER_CARRIER and s.kind[t] == K_WELL and s.excavated[t]
                and s.water[p] < s.rules.adv_water[WATER_CARRIER]):
            out[n] = A_WC_DRAW
            n += 1
        k = step_targets(s, p, tc, steps)
        for i in range(k):
            q = NO_PASSENGER
            if s.role[p] == CLIMBER:
                for v in range(s.head.players):
                    if v != p and s.pawn_tile[v] == t:
                        q = v
                out[n] = pawn_move(A_MOVE, 0, steps[i], NO_PASSENGER)
                n += 1
                if q == NO_PASSENGER:
                    continue
            out[n] = pawn_move(A_MOVE, 0, steps[i], q)
            n += 1
    for c in range(N_CELLS):
        v = s.cell_tile[c]
        if v >= 0 and s.sand[v] > 0 and (c == tc or (not bur and adjacent(c, tc, s.role[p] == EXPLORER))):
            out[n] = A_DIG + c
            n += 1
    # Equipment (free, at most MAX_FREE per search line): a Dune Blaster on a drift in
    # reach; a Jet Pack to work out of walking range (unexcavated tiles, located parts, a
    # well for the Water Carrier).
    if free < MAX_FREE and held_card(s, p, EQ_BLASTER) >= 0:
        for c in range(N_CELLS):
            v = s.cell_tile[c]
            if v >= 0 and s.sand[v] >= 2 and (c == tc or adjacent(c, tc, s.role[p] == EXPLORER)):
                out[n] = seat_at_cell(A_BLAST, p, c)
                n += 1
    if (free < MAX_FREE and s.actions_left >= 2 and held_card(s, p, EQ_JETPACK) >= 0
            and (not bur or s.rules.switches.jetpack_when_buried) and n < MAX_CAND - N_CELLS):
        for c in range(N_CELLS):
            v = s.cell_tile[c]
            if v < 0 or blocked(s, v) or manhattan(c, tc) < JET_MIN:
                continue
            if n >= MAX_CAND - N_CELLS:
                break
            if not s.excavated[v] or (s.kind[v] == K_WELL and s.role[p] == WATER_CARRIER):
                out[n] = pawn_move(A_JET, p, c, NO_PASSENGER)
                n += 1
            elif v == pad and parts_count(s, P_HELD) == N_PARTS:
                # The endgame's flight: with every teammate from this tile as companion.
                out[n] = pawn_move(A_JET, p, c, NO_PASSENGER)
                n += 1
                for q in range(s.head.players):
                    if q != p and s.pawn_tile[q] == t:
                        out[n] = pawn_move(A_JET, p, c, q)
                        n += 1
            else:
                for i in range(N_PARTS):
                    if s.part_state[i] == P_TILE and s.part_tile[i] == v:
                        out[n] = pawn_move(A_JET, p, c, NO_PASSENGER)
                        n += 1
                        break
    if not bur and s.role[p] == NAVIGATOR:
        for q in range(s.head.players):
            if q == p or buried(s, q) or n >= MAX_CAND - N_CELLS:
                continue
            if nav_targets(s, q, reach) == 0:
                continue
            for c in range(N_CELLS):
                # Only toward the Navigator (gathering) or onto unexcavated tiles (work).
                if reach[c] and (c == tc or not s.excavated[s.cell_tile[c]]
                                 or s.cell_tile[c] == pad):
                    out[n] = pawn_move(A_NAV, q, c, NO_PASSENGER)
                    n += 1
    return n


# The mean sand one wind card brings: tiles moved per card, measured by simulating the
# storm's walk over the default deck (edges cut strong winds short): ~1.28.
cdef double WIND_SAND = 1.28

cdef double WATER_VALUE[7]
WATER_VALUE[:] = [0.0, 10.0, 17.0, 21.0, 24.0, 26.0, 27.0]


cdef inline int cell_dist(int a, int b) noexcept nogil:
    return abs(CELL_ROW[a] - CELL_ROW[b]) + abs(CELL_COL[a] - CELL_COL[b])


cdef int CELL_ROW[N_CELLS]
cdef int CELL_COL[N_CELLS]
for _c in range(N_CELLS):
    CELL_ROW[_c] = _c // SIDE
    CELL_COL[_c] = _c % SIDE


cdef void pool_water(const DState* s, const SearchWeights* sw, int wc, int* eff) noexcept nogil:
    """The water the Water Carrier will share (free) with the pawns in his reach (his tile and
    the orthogonal neighbours), driest first, down to 1 for himself; on an excavated well he
    refills, so he counts the weight carrier_well_extra more."""
    cdef int pool = eff[wc], q, r, low, c = s.tile_cell[s.pawn_tile[wc]], t = s.pawn_tile[wc]
    cdef int near[MAX_PLAYERS]
    cdef int nn = 0
    for q in range(s.head.players):
        if (q != wc and eff[q] < 3 and eff[q] < s.rules.adv_water[s.role[q]]
                and (s.pawn_tile[q] == t or adjacent(c, s.tile_cell[s.pawn_tile[q]], False))):
            near[nn] = q
            nn += 1
    if nn == 0:
        return
    if s.kind[t] == K_WELL and s.excavated[t] and not blocked(s, t):
        pool += <int>sw.carrier_well_extra
    while pool > 1:
        low = -1
        for r in range(nn):
            q = near[r]
            if eff[q] < 3 and eff[q] < s.rules.adv_water[s.role[q]] and (
                    low < 0 or eff[q] < eff[low]):
                low = q
        if low < 0:
            break
        eff[low] += 1
        pool -= 1
    eff[wc] = pool if pool < eff[wc] else eff[wc]


cdef inline double poisson_above(double lam, double exp_neg, int w) noexcept nogil:
    """P(X > w) for X ~ Poisson(lam); exp_neg = exp(-lam)."""
    cdef double term, acc
    cdef int k
    if lam <= 0.0 or w < 0:
        return 0.0 if w >= 0 else 1.0
    if w >= 30:
        return 0.0                  # beyond any canteen
    term = exp_neg
    acc = term
    for k in range(1, w + 1):
        term *= lam / k
        acc += term
    return 1.0 - acc if acc < 1.0 else 0.0


cdef enum:
    PRINTED_MAX_DRAW = 6   # the most cards one storm phase draws on the printed meter (spec 2.3)
    # Storm cards before a pawn acts again, at most (a custom meter's longer runs are clamped).
    MAX_EXPOSURE = PRINTED_MAX_DRAW * MAX_PLAYERS + 1

ctypedef struct Rates:
    double sun             # chance that the next storm card is a Sun Beats Down
    double picks           # ... a Storm Picks Up
    double sand            # expected sand markers it brings
    double no_sun[MAX_EXPOSURE]   # exp(-sun * cards): Poisson chance of no sun in that many
    bint endgame           # all parts held at the search's root: endgame_eval scores
    int pile               # cards drawn at the rates above before a reshuffle (0: at once)
    double deck_sun        # the whole deck's rates: the cards after the reshuffle
    double deck_picks
    double deck_sand


cdef void storm_rates(const DState* s, Rates* r) noexcept nogil:
    """Per-card chances of the next storm cards as the team knows them: the draw pile's
    composition (the discard pile is public, so this is no peeking at the order), or the
    whole deck's when the pile is nearly empty and a reshuffle is close; and the whole deck's
    for the cards after the reshuffle (endgame_eval's horizon spans it)."""
    cdef int k[3]
    cdef int n = s.draw_len if s.draw_len >= 3 else s.rules.n_storm, i
    k[SC_WIND] = k[SC_PICKS_UP] = k[SC_SUN] = 0
    r.endgame = parts_count(s, P_HELD) == N_PARTS
    r.pile = s.draw_len if s.draw_len >= 3 else 0
    for i in range(s.rules.n_storm):
        k[s.rules.storm[i].kind] += 1
    i = s.rules.n_storm if s.rules.n_storm > 0 else 1
    r.deck_sun = <double>k[SC_SUN] / i
    r.deck_picks = <double>k[SC_PICKS_UP] / i
    r.deck_sand = WIND_SAND * k[SC_WIND] / i
    k[SC_WIND] = k[SC_PICKS_UP] = k[SC_SUN] = 0
    for i in range(n):
        k[s.rules.storm[s.draw[i] if s.draw_len >= 3 else i].kind] += 1
    if n <= 0:
        r.sun = r.picks = r.sand = 0.0
        return
    r.sun = <double>k[SC_SUN] / n
    r.picks = <double>k[SC_PICKS_UP] / n
    r.sand = WIND_SAND * k[SC_WIND] / n
    for i in range(MAX_EXPOSURE):
        r.no_sun[i] = exp(-r.sun * i)


cdef inline double storm_mean(const Rates* r, int cards, double now, double later) noexcept nogil:
    """The expected count over the next `cards` cards of a kind drawn at rate `now` from the
    pile and at the whole deck's rate `later` after the reshuffle."""
    if cards <= r.pile:
        return cards * now
    return r.pile * now + (cards - r.pile) * later


cdef inline int this_storm(const DState* s) noexcept nogil:
    """Cards the storm phase after the acting pawn's actions will draw."""
    cdef int k = draw_value(s) - s.meteo_reduction
    return k if k > 0 else 0


cdef inline int cards_before_turn(const DState* s, int k, int first, int dv) noexcept nogil:
    """Storm cards drawn before the pawn k turns after the acting one acts again: this
    turn's storm (first cards) and one full draw per turn in between."""
    return first + (k - 1 if k > 0 else s.head.players - 1) * dv


cdef inline bint in_tunnel_shade(const DState* s, int t) noexcept nogil:
    """Spec 4.7: an excavated tunnel shades from Sun Beats Down (rule option
    tunnel_shade_requires_unblocked: only while unblocked)."""
    return s.kind[t] == K_TUNNEL and s.excavated[t] and not (
        s.rules.switches.tunnel_shade_requires_unblocked and blocked(s, t))


cdef double risk_cost_thirst(const DState* s, const int* eff, const Rates* r) noexcept nogil:
    """The sum over the pawns of each one's chance to die of thirst before its own next
    turn: its water (after the Water Carrier's sharing) against the Sun Beats Down cards
    expected until then; none under a tunnel's shade, none while a Solar Shield on its tile
    lasts."""
    cdef double cost = 0.0
    cdef int p = s.head.current, q, k, k2, h, cards, shade, t, dv = draw_value(s)
    cdef int first = this_storm(s)
    for k in range(s.head.players):
        q = (p + k) % s.head.players
        t = s.pawn_tile[q]
        if in_tunnel_shade(s, t):
            continue
        cards = cards_before_turn(s, k, first, dv)
        shade = 0
        for h in range(s.head.players):
            k2 = (h - p + s.head.players) % s.head.players
            if s.shield[h] and (s.shield_tile[h] == t if s.rules.shield_anchor_tile
                                else s.pawn_tile[h] == t):
                shade = cards_before_turn(s, k2, first, dv)
        if shade >= cards:
            continue
        cards -= shade
        if cards >= MAX_EXPOSURE:
            cards = MAX_EXPOSURE - 1
        cost += poisson_above(cards * r.sun, r.no_sun[cards], eff[q])
    return cost


cdef double risk_cost(const DState* s, const SearchWeights* sw, const int* eff,
                      const Rates* r) noexcept nogil:
    """Expected loss before the acting pawn acts again: thirst (above), the sand a round
    brings against the supply, and the meter reaching the skull."""
    cdef double cost = sw.thirst_risk * risk_cost_thirst(s, eff, r), mu
    cdef int cards = cards_before_turn(s, 0, this_storm(s), draw_value(s))
    cdef int k = s.rules.meter_len - s.meter_index
    mu = cards * r.sand
    if mu > 0.0 and sw.sand_risk > 0.0:
        # Normal tail of the round's sand against what is left in the supply.
        cost += sw.sand_risk * 0.5 * erfc((s.supply + 0.5 - mu) / sqrt(2.0 * 1.6 * mu))
    if sw.meter_risk > 0.0:
        cost += sw.meter_risk * poisson_above(cards * r.picks, exp(-cards * r.picks), k - 1)
    return cost


cdef void share_on_tiles(const DState* s, int* eff) noexcept nogil:
    """Pawns on one tile share their water (free, spec 4.9, as water_op does): a unit at a
    time from the fullest to the driest pawn of a tile while they differ by two or more,
    within each canteen's size."""
    cdef int q, r, low, high, guard
    for guard in range(4 * MAX_PLAYERS):
        low = -1
        high = -1
        for q in range(s.head.players):
            for r in range(s.head.players):
                if (r != q and s.pawn_tile[r] == s.pawn_tile[q] and eff[r] >= eff[q] + 2
                        and eff[q] < s.rules.adv_water[s.role[q]]
                        and (low < 0 or eff[r] - eff[q] > eff[high] - eff[low])):
                    low = q
                    high = r
        if low < 0:
            return
        eff[low] += 1
        eff[high] -= 1


cdef double endgame_eval(const DState* s, const SearchWeights* sw, const Rates* r) noexcept nogil:
    """All parts held at the search's root: the weight endgame_scale (a sure takeoff's worth
    in actions: at 1000 an action is traded for a 0.1% better chance) times the chance that
    the team takes off if from here on it only walks to the Launch Pad (digging its way,
    clearing and excavating the pad), minus the actions that still takes.  Over the storm cards drawn until
    the last of those actions, no pawn may die of thirst (its water after the Water Carrier's
    sharing in reach and the sharing within each tile), the sand supply must last and the
    meter must not reach the skull.  The turns until then: the actions needed four a turn,
    but at least until the last pawn arrives in its own turns.  This is the multi-turn water
    plan of the endgame: a line that fills the canteens first (the Water Carrier at a well, pawns
    gathering on one tile) scores by the deaths it prevents against the actions it costs."""
    cdef int pad = pad_tile(s), pc, q, k, d, arrive, need = 0, turns = 0, cards, dv = draw_value(s)
    cdef int wc = -1, p = s.head.current, n = s.head.players
    cdef int dist[N_CELLS]
    cdef int first[N_CELLS]
    cdef int eff[MAX_PLAYERS]
    cdef double ok = 1.0, mu, lam
    if pad < 0:
        return 0.0
    if win_condition(s):
        return 2.0 * sw.endgame_scale
    pc = s.tile_cell[pad]
    for k in range(n):
        q = (p + k) % n
        eff[q] = s.water[q] if s.water[q] > 0 else 0
        if s.role[q] == WATER_CARRIER:
            wc = q
        if s.pawn_tile[q] == pad:
            continue
        path_costs(s, q, dist, first, pc)
        d = dist[pc]
        if buried(s, q):
            d += s.sand[s.pawn_tile[q]] - 1
        need += d
        # The turn (from now, this one 0) in which q arrives walking on its own.
        if k == 0:
            d -= s.actions_left
            arrive = 0 if d <= 0 else n * ((d + ACTIONS_PER_TURN - 1) // ACTIONS_PER_TURN)
        else:
            arrive = k + n * ((d + ACTIONS_PER_TURN - 1) // ACTIONS_PER_TURN - 1)
        if arrive > turns:
            turns = arrive
    if wc >= 0:
        pool_water(s, sw, wc, eff)
    share_on_tiles(s, eff)
    if not s.excavated[pad]:
        need += s.sand[pad] + 1
    elif s.sand[pad] >= 2:
        need += s.sand[pad] - 1
    # The team's actions, four a turn from the acting pawn's remaining ones on, bound it too.
    d = need - s.actions_left
    arrive = 0 if d <= 0 else (d + ACTIONS_PER_TURN - 1) // ACTIONS_PER_TURN
    if arrive > turns:
        turns = arrive
    cards = this_storm(s) + (turns - 1) * dv if turns > 0 else 0
    if cards > 0:
        lam = storm_mean(r, cards, r.sun, r.deck_sun)
        for q in range(s.head.players):
            ok *= 1.0 - poisson_above(lam, exp(-lam), eff[q])
        mu = storm_mean(r, cards, r.sand, r.deck_sand)
        if mu > 0.0:
            ok *= 1.0 - 0.5 * erfc((s.supply + 0.5 - mu) / sqrt(2.0 * 1.6 * mu))
        lam = storm_mean(r, cards, r.picks, r.deck_picks)
        ok *= 1.0 - poisson_above(lam, exp(-lam), s.rules.meter_len - s.meter_index - 1)
    return sw.endgame_scale * ok - need


cdef double well_water_value(const DState* s, int q) noexcept nogil:
    """What a well's excavation gives pawn q standing on it: 2 water up to its canteen's
    size (every pawn on the tile drinks: seed, spec 4.4), on the WATER_VALUE curve."""
    cdef int had = s.water[q] if s.water[q] > 0 else 0, w = had + 2
    if w > s.rules.adv_water[s.role[q]]:
        w = s.rules.adv_water[s.role[q]]
    return WATER_VALUE[w] - WATER_VALUE[had]


cdef double plan_eval(const DState* s, const SearchWeights* sw, int32_t dug,
                      const Rates* rates) noexcept nogil:
    """Team value of the state at the end of the acting pawn's actions (before the storm),
    weighted by the search's parameters `sw`."""
    cdef double v = 0.0, ev_well
    cdef int t, q, c, i, held = 0, d, best, drops = 0, wells = 0, w, wc = -1, nwork = 0, nwater = 0
    cdef int work_cell[N_TILES + N_PARTS]
    cdef int work_cost[N_TILES + N_PARTS]
    cdef int water_cell[N_TILES]
    cdef int water_cost[N_TILES]
    cdef int eff[MAX_PLAYERS]
    cdef bint drop
    if rates.endgame:
        return endgame_eval(s, sw, rates)
    for i in range(N_PARTS):
        if s.part_state[i] == P_HELD:
            v += sw.part_held
            held += 1
        elif s.part_state[i] == P_TILE:
            v += sw.part_located
            work_cell[nwork] = s.tile_cell[s.part_tile[i]]
            work_cost[nwork] = 0
            nwork += 1
        elif s.part_state[i] == P_STORM:
            v += sw.part_in_storm
    # One pass over the tiles: sand, excavations, the targets of work and of water.
    for t in range(N_TILES):
        drop = water_drop_shown(s, t)
        if s.excavated[t]:
            if s.kind[t] == K_WELL:
                wells += 1
            elif s.kind[t] == K_TUNNEL:
                water_cell[nwater] = s.tile_cell[t]
                water_cost[nwater] = s.sand[t]
                nwater += 1
        elif drop:
            drops += 1
            water_cell[nwater] = s.tile_cell[t]
            water_cost[nwater] = s.sand[t]
            nwater += 1
        if held == N_PARTS:
            if s.kind[t] == K_PAD:
                work_cell[nwork] = s.tile_cell[t]
                work_cost[nwork] = s.sand[t]
                nwork += 1
        elif not s.excavated[t] and not (dug >> t) & 1:
            work_cell[nwork] = s.tile_cell[t]
            work_cost[nwork] = s.sand[t]
            nwork += 1
    ev_well = (2.0 - wells) / drops if drops > 0 else 0.0
    for t in range(N_TILES):
        v -= sw.sand * s.sand[t]
        if s.sand[t] >= 2:
            v -= sw.blocked
        if s.excavated[t]:
            v += sw.clue_excavated if s.kind[t] == K_CLUE else sw.other_excavated
        elif (dug >> t) & 1:
            if not water_drop_shown(s, t):
                v += sw.unseen_dug
            else:
                # A well or the mirage: worth the water it may give the pawns standing there.
                v += sw.drop_tile_dug
                for q in range(s.head.players):
                    if s.pawn_tile[q] == t:
                        v += ev_well * well_water_value(s, q)
    v += sw.meteo_held * s.meteo_reduction
    for q in range(s.head.players):
        if s.role[q] == WATER_CARRIER:
            wc = q
        eff[q] = s.water[q] if s.water[q] > 0 else 0
    if wc >= 0:
        pool_water(s, sw, wc, eff)
    for q in range(s.head.players):
        w = eff[q]
        c = s.tile_cell[s.pawn_tile[q]]
        if q == wc:
            v += sw.carrier_water * w        # his water is the team's: he shares it
        else:
            v += sw.water_scale * WATER_VALUE[w]
        if w <= 2:
            # A thirsty pawn wants a source near: the Water Carrier, a water-drop tile, shade.
            best = 8
            if wc >= 0 and wc != q and s.water[wc] >= 2:
                best = cell_dist(c, s.tile_cell[s.pawn_tile[wc]]) - 1
            for i in range(nwater):
                d = cell_dist(c, water_cell[i]) + water_cost[i]
                if d < best:
                    best = d
            if best < 0:
                best = 0
            v -= (3.0 - w) * sw.thirst_dist_water * best
        if w <= 1 and shaded(s, q):
            v += sw.shade_when_dry
        if buried(s, q):
            v -= sw.buried
        # Distance to the nearest work: a located part, an unexcavated tile, the pad at the end.
        best = 12
        for i in range(nwork):
            d = cell_dist(c, work_cell[i]) + work_cost[i]
            if d < best:
                best = d
        v -= (sw.dist_pad if held == N_PARTS else sw.dist_work) * best
    v -= risk_cost(s, sw, eff, rates)
    for i in range(s.rules.n_eq):
        if s.eq_owner[i] >= 0:
            if s.rules.eq_type[i] == EQ_BLASTER:
                v += sw.blaster_held
            elif s.rules.eq_type[i] == EQ_JETPACK:
                v += sw.jetpack_held
    return v


cdef inline uint64_t node_key(const SNode* a) noexcept nogil:
    """A hash of what the search's actions change: the same position reached by another
    order of the same actions (dig A then B) gets the same key."""
    cdef uint64_t h = 1469598103934665603ULL, w
    cdef int i
    for i in range(0, N_TILES, 8):      # 24 tiles: three words each
        memcpy(&w, &a.s.sand[i], 8)
        h = (h ^ w) * 1099511628211ULL
        memcpy(&w, &a.s.excavated[i], 8)
        h = (h ^ w) * 1099511628211ULL
    for i in range(MAX_PLAYERS):
        h = (h ^ <uint64_t>(<uint8_t>a.s.pawn_tile[i] | (<uint8_t>a.s.water[i] << 8))) * 1099511628211ULL
    memcpy(&w, a.s.part_state, 4)
    h = (h ^ (w & 0xffffffffULL)) * 1099511628211ULL
    h = (h ^ <uint64_t><uint32_t>a.dug) * 1099511628211ULL
    h = (h ^ <uint64_t>(a.s.meteo_reduction | (a.free << 8))) * 1099511628211ULL
    return h


cdef inline void copy_node(SNode* dst, const SNode* src) noexcept nogil:
    """Every node of one search shares the root's rules: copy the header and what follows
    the rules (the header comes first, the rules second: DState)."""
    cdef size_t after_rules = <const char*>(&src.s.rules + 1) - <const char*>src
    memcpy(&dst.s.head, &src.s.head, sizeof(GameHeader))
    memcpy(<char*>dst + after_rules, <const char*>src + after_rules, sizeof(SNode) - after_rules)


cdef void keep_top(SNode* top, int* ntop, int kmax, const SNode* child) noexcept nogil:
    """Keeps the kmax best-scored lines seen (transpositions once) in top."""
    cdef int k, worst = 0
    for k in range(ntop[0]):
        if top[k].key == child.key:
            if child.score > top[k].score:
                copy_node(&top[k], child)
            return
    if ntop[0] < kmax:
        copy_node(&top[ntop[0]], child)
        ntop[0] += 1
        return
    for k in range(1, kmax):
        if top[k].score < top[worst].score:
            worst = k
    if child.score > top[worst].score:
        copy_node(&top[worst], child)


cdef int search_actions(const DState* s, const SearchWeights* sw, void* mem, PlanCache* pc,
                        int beam) noexcept nogil:
    """Beam search over the acting pawn's remaining actions; returns the first action of the
    best sequence found (caching the rest in pc), or -1."""
    cdef Rates rates
    cdef SNode* best
    storm_rates(s, &rates)      # the action phase draws no storm card: fixed for the search
    best = beam_lines(s, sw, 0, mem, beam, &rates, NULL, NULL, 0)
    if best.n == 0:
        return -1
    return cache_line(s, pc, best)


cdef int cache_line(const DState* s, PlanCache* pc, const SNode* line) noexcept nogil:
    pc.magic = PLAN_MAGIC
    pc.n = line.n
    memcpy(pc.acts, line.acts, sizeof(pc.acts))
    return plan_next(s, pc)


cdef SNode* beam_lines(const DState* s, const SearchWeights* sw, int32_t dug0, void* mem,
                       int beam, const Rates* rates, SNode* top, int* ntop,
                       int kmax) noexcept nogil:
    """The beam search itself, from s with the tiles dug0 already excavated in the search;
    returns the best line's node (in mem), and with top the kmax best lines."""
    cdef SNode* cur = <SNode*>mem
    cdef SNode* nxt = cur + beam
    cdef SNode* best = nxt + beam
    cdef SNode* child = best + 1
    cdef SNode* tmp
    cdef int ncur = 1, nnxt, depth, i, j, k, nc, worst
    cdef int cand[MAX_CAND]
    cdef bint dup
    cdef int same, per_place = beam // PLACE_SHARE if beam >= PLACE_SHARE else 1
    for i in range(2 * beam + 2):
        memcpy(&cur[i].s, s, sizeof(DState))
    cur[0].dug = dug0
    cur[0].n = 0
    cur[0].free = 0
    cur[0].score = plan_eval(s, sw, dug0, rates)
    copy_node(best, &cur[0])
    for depth in range(min(s.actions_left + MAX_FREE, MAX_PLAN)):
        nnxt = 0
        for i in range(ncur):
            nc = plan_candidates(&cur[i].s, cur[i].dug, cur[i].free, cand)
            for j in range(nc):
                copy_node(child, &cur[i])
                plan_do(&child.s, sw, cand[j], &child.dug, s)
                child.free = cur[i].free + (1 if cand[j] >= A_BLAST else 0)
                child.acts[depth] = cand[j]
                child.n = depth + 1
                child.key = node_key(child)
                # One pass over the next beam: a transposition is dropped unscored; for
                # diversity, count (and find the worst of) the nodes with the pawns placed
                # as here.
                dup = False
                same = 0
                worst = -1
                for k in range(nnxt):
                    if nxt[k].key == child.key:
                        dup = True
                        break
                    if memcmp(nxt[k].s.pawn_tile, child.s.pawn_tile, MAX_PLAYERS) == 0:
                        same += 1
                        if worst < 0 or nxt[k].rank < nxt[worst].rank:
                            worst = k
                if dup:
                    continue
                child.score = plan_eval(&child.s, sw, child.dug, rates)
                if top != NULL and (child.s.actions_left == 0 or win_condition(&child.s)):
                    keep_top(top, ntop, kmax, child)
                # A card played costs no action: in the beam, lines that kept an action
                # rank higher by what it is worth, so a Jet Pack flight is not pruned
                # before the work it reaches.
                child.rank = child.score + sw.action_left * child.s.actions_left
                if child.score > best.score:
                    copy_node(best, child)
                # Diversity: at most per_place nodes with the pawns where this one has them,
                # so that lines which walk away are not crowded out by digging in place.
                if same < per_place and nnxt < beam:
                    copy_node(&nxt[nnxt], child)
                    nnxt += 1
                    continue
                if same < per_place:
                    worst = 0
                    for k in range(1, beam):
                        if nxt[k].rank < nxt[worst].rank:
                            worst = k
                if child.rank > nxt[worst].rank:
                    copy_node(&nxt[worst], child)
        if nnxt == 0:
            break
        tmp = cur
        cur = nxt
        nxt = tmp
        ncur = nnxt
    return best



cdef int team_search(const DState* s, const SearchWeights* sw, void* mem,
                     PlanCache* pc) noexcept nogil:
    """Policy "team_search": the team_lines best lines of the acting pawn's beam search (width
    team_beam), each followed by the teammates' own searched turns (width team_reply_beam) for
    the rest of the round (in seat order, the storm left out: its expected harm is in the
    evaluation), scored at the round's end; returns the first action of the line whose round
    scores best (caching the rest).  The round's end counts with the weight team_round: mostly
    a tie-break, as many lines of one turn score the same."""
    cdef int beam = <int>sw.team_beam, lines = <int>sw.team_lines
    cdef int reply_beam = <int>sw.team_reply_beam
    cdef SNode* work = <SNode*>mem                  # beams of the searches
    cdef SNode* top = work + 2 * max(beam, reply_beam) + 2     # the acting pawn's best lines
    cdef SNode* x = top + lines                     # one round played out
    cdef SNode* reply
    cdef Rates rates
    cdef int ntop = 0, i, j, q, p = s.head.current, pick = -1
    cdef double held, score, best_score = 0.0
    storm_rates(s, &rates)
    memcpy(&x.s, s, sizeof(DState))                # the rules: copy_node leaves them out
    reply = beam_lines(s, sw, 0, work, beam, &rates, top, &ntop, lines)
    if ntop == 0:               # no line uses every action: deep_search's answer
        return cache_line(s, pc, reply) if reply.n > 0 else -1
    for i in range(ntop):
        copy_node(x, &top[i])
        held = 0.0              # storm cards the Meteorologist holds back in the round
        for j in range(1, s.head.players):
            q = (p + j) % s.head.players
            held += x.s.meteo_reduction
            x.s.head.current = q
            begin_turn(&x.s)
            reply = beam_lines(&x.s, sw, x.dug, work, reply_beam, &rates, NULL, NULL, 0)
            if reply.n > 0:
                copy_node(x, reply)
        # Scored as if the acting pawn had just ended its turn: the risk model then counts
        # the storm cards of a whole round for every pawn (the round's storms were left out).
        held += x.s.meteo_reduction
        x.s.head.current = p
        x.s.meteo_reduction = 0
        if rates.endgame:
            # The endgame's evaluation is the chance to take off: the round's end counts fully.
            score = top[i].score + plan_eval(&x.s, sw, x.dug, &rates)
        else:
            score = top[i].score + sw.team_round * (plan_eval(&x.s, sw, x.dug, &rates)
                                                    + sw.meteo_held * held)
        if pick < 0 or score > best_score:
            best_score = score
            pick = i
    return cache_line(s, pc, &top[pick])


cdef int plan_next(const DState* s, PlanCache* pc) noexcept nogil:
    """Pops the plan's next action and records the state it leads to."""
    cdef int a = pc.acts[0], i, k
    for i in range(pc.n - 1):
        pc.acts[i] = pc.acts[i + 1]
    pc.n -= 1
    k = s.kind[s.pawn_tile[s.head.current]]
    if a == A_EXCAVATE and (k == K_CLUE or k == K_WELL or k == K_TUNNEL):
        # The face shows at the next call: plan again with what it changes (the search
        # ignores equipment, so a plain gear tile changes nothing it knows).
        pc.n = 0
    memcpy(&pc.expect, s, sizeof(DState))
    d_apply(&pc.expect, a)
    return a


cdef int planned_action(const DState* s, const SearchWeights* sw, void* scratch,
                        const PlanLegal* legal, int which) noexcept nogil:
    """The cached plan's next action if the state is the one it expects, else a new search."""
    cdef PlanCache* pc = <PlanCache*>(<char*>scratch + MAX_LEGAL * sizeof(int))
    cdef void* mem = <char*>pc + sizeof(PlanCache)
    cdef int a
    if (pc.magic == PLAN_MAGIC and pc.n > 0
            and memcmp(&pc.expect, s, sizeof(DState)) == 0
            and plan_legal(s, legal, pc.acts[0])):
        return plan_next(s, pc)
    pc.magic = 0
    if which == POLICY_TEAM:
        a = team_search(s, sw, mem, pc)
    else:
        a = search_actions(s, sw, mem, pc, BEAM_DEEP if which == POLICY_DEEP else BEAM)
    if a >= 0 and plan_legal(s, legal, a):
        return a
    pc.magic = 0
    return -1


# The policy's memory: the legal list, the cached plan, the beams, the best and the child,
# and team_search's best lines and the round it plays out (at its widest).
if (MAX_LEGAL * sizeof(int) + sizeof(PlanCache)
        + (2 * max(BEAM_DEEP, MAX_TEAM_BEAM) + 3 + MAX_TEAM_LINES) * sizeof(SNode) > POLICY_SCRATCH):
    raise ImportError("forbidden_desert: the search beam does not fit the policy scratch")


def thirst_risk(State state, int seat):
    """The search's model, for tests: the chance that `seat` dies of thirst before its own
    next turn if the acting pawn ended its actions now (Water Carrier sharing ignored)."""
    cdef const DState* s = <const DState*>state.buf
    cdef Rates r
    cdef int eff[MAX_PLAYERS]
    cdef int q
    storm_rates(s, &r)
    for q in range(MAX_PLAYERS):
        eff[q] = 1000               # nobody else can die: isolate `seat`
    eff[seat] = s.water[seat] if s.water[seat] > 0 else 0
    return risk_cost_thirst(s, eff, &r)



def planner_legal(State state):
    """For tests: the action ids the planners' plan_legal calls legal in `state`, ascending
    (d_legal's list exactly)."""
    cdef const DState* s = <const DState*>state.buf
    cdef PlanLegal legal
    plan_legal_init(s, &legal)
    return [a for a in range(NUM_ACTIONS) if plan_legal(s, &legal, a)]

cdef void policy_block(State state, agent, double* out) except *:
    """The parameter block of agent string `agent` (a policy of this game), checked as in a
    spec, for the Python helpers (rollout_values)."""
    if parse_agent(state.game, agent)[0] not in state.game.policies:
        raise ValueError(f"agent {agent!r} is no policy of {state.game.name}")
    for i, v in enumerate(agent_spec(state.game, agent)["params"]):
        out[i] = v
