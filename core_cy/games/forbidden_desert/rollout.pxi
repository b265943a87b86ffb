# Policies "rollout" and "rollout_search", included into the engine after the team planners:
# the rollout algorithm (policy improvement by simulation) on top of team_search, in the
# endgame.
#
# Until the endgame it plays team_search: for "rollout" the endgame begins once the team
# holds three parts and the fourth lies on a tile (both its clues excavated), for
# "rollout_search" once the team holds all four.  From then on every decision with a choice
# (actions, water, equipment, storm phase, peeks) is simulated: each legal action is played
# ROLLOUT_SAMPLES times to the end of the game by the base policy ROLLOUT_BASE for the whole
# team (the rule-based planner: fast), each time on a fresh view of the acting seat
# (`observe`: hidden tiles re-dealt, storm and equipment piles reshuffled, a chance stream of
# its own), the same views for every action (common random numbers).  "rollout_search" then
# plays team_search's action and the SEARCH_KEEP others the rule-based stage values most
# again on the same views, by policy "search" (with the agent's parameters).  The action with
# the most team wins is played if it wins at least ROLLOUT_MARGIN more than team_search's
# action; a loss counts the share of the turn limit survived, below one win.  "rollout" stops
# playing a candidate once no result of its views left could make that rule pick it (the same
# pick, fewer simulations).
# Measurements of these choices: docs/lab/forbidden_desert.md.
#
# It never peeks: every simulation starts from a view.
from libc.stdlib cimport calloc, free

cdef enum:
    POLICY_ROLLOUT = 4         # Engine.policy `which` (after the planner .pxi's four)
    POLICY_ROLLOUT_SEARCH = 5  # the same with "search" playing the simulations
    ROLLOUT_BASE = POLICY_PLANNER  # the team's policy in the simulations of "rollout"
    ROLLOUT_SAMPLES = 16       # views per action
    ROLLOUT_MARGIN = 1         # another action than team_search's must win this many more
    SEARCH_KEEP = 6            # "rollout_search": other candidates played out by "search"

cdef double NOT_SEARCHED = -1.0    # "rollout_search": the value of a candidate left out
ROLLOUT_SEARCH_KEEP = SEARCH_KEEP  # for tests
ROLLOUT_VIEWS = ROLLOUT_SAMPLES     # for tests and benchmarks: the most a value can win


cdef inline PlanCache* plan_cache(void* scratch) noexcept nogil:
    """Where planned_action keeps its plan in the policy scratch (after the legal list)."""
    return <PlanCache*>(<char*>scratch + MAX_LEGAL * sizeof(int))


cdef double play_out(DState* w, const double* params, int first, int base, Rng* rng,
                     void* scratch) noexcept nogil:
    """Plays `first` and then the base policy for the whole team to the end of the game; 1
    for a team win, else a tie-break below 1 / ROLLOUT_SAMPLES (the share of the turn limit
    survived), so that wins count first."""
    d_apply(w, first)
    plan_cache(scratch).magic = 0       # a search base plans afresh in every simulation
    while not w.head.terminal:
        d_apply(w, d_policy(w, base, params, rng, scratch))
    if w.head.end_reason == END_WIN:
        return 1.0
    return 0.9 / ROLLOUT_SAMPLES * w.turns / w.rules.max_turns


cdef void play_views(const DState* s, const double* params, const int* cand, const int* which,
                     int nw, int base, bint prune, Rng* rng, void* scratch,
                     double* value) noexcept nogil:
    """The candidates cand[which[0..nw-1]] each played out on the same ROLLOUT_SAMPLES views
    (drawn from rng first; a play-out draws nothing from rng), their values (the sums) in
    value[which[...]].  With `prune` (which[i] == i, 0 team_search's action, played first)
    a candidate stops once a win on every view left could not make the choice rule pick it:
    it would stay below value[0] + ROLLOUT_MARGIN, or not above the value of a candidate
    before it; the pick is the same, a pruned value is a partial sum."""
    cdef DState views[ROLLOUT_SAMPLES]
    cdef DState w
    cdef int i, k
    cdef double bar = -1.0        # the best complete value of the candidates 1..i-1
    for k in range(ROLLOUT_SAMPLES):
        d_observe(s, s.head.current, &views[k], rng)
    for i in range(nw):
        value[which[i]] = 0.0
        for k in range(ROLLOUT_SAMPLES):
            memcpy(&w, &views[k], sizeof(DState))
            value[which[i]] += play_out(&w, params, cand[which[i]], base, rng, scratch)
            if prune and i > 0 and (value[i] + (ROLLOUT_SAMPLES - 1 - k)
                                    < value[0] + ROLLOUT_MARGIN
                                    or value[i] + (ROLLOUT_SAMPLES - 1 - k) <= bar):
                break
        else:
            if i > 0 and value[which[i]] > bar:
                bar = value[which[i]]


cdef int keep_best(const double* value, int* order, int nc, int keep) noexcept nogil:
    """order: 0 (team_search's action), then the others by value, highest first (the first
    of equals first); returns how many of them are kept: team_search's and `keep` others."""
    cdef int i, j, t
    for i in range(nc):
        order[i] = i
    for i in range(2, nc):      # a stable insertion sort of order[1..]
        t = order[i]
        j = i
        while j > 1 and value[order[j - 1]] < value[t]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = t
    return min(nc, keep + 1)


cdef int simulate(const DState* s, const double* params, const int* cand, int nc, int which,
                  bint prune, Rng* rng, void* scratch, double* value) noexcept nogil:
    """The candidate actions' values on ROLLOUT_SAMPLES views (policy "rollout_search": on the
    same views, "search" plays out team_search's action and the SEARCH_KEEP others that the
    rule-based endgame values most; the rest are NOT_SEARCHED); returns the index of the best
    (the first of equals), or 0 (team_search's) unless it is clearly better."""
    cdef int order[MAX_LEGAL]
    cdef int i, n, pick = 0
    cdef Rng views = rng[0]             # the same views again for the search stage
    for i in range(nc):
        order[i] = i
    play_views(s, params, cand, order, nc, ROLLOUT_BASE,
               prune and which == POLICY_ROLLOUT, rng, scratch, value)
    if which == POLICY_ROLLOUT_SEARCH:
        n = keep_best(value, order, nc, SEARCH_KEEP)
        for i in range(n, nc):
            value[order[i]] = NOT_SEARCHED
        play_views(s, params, cand, order, n, POLICY_SEARCH, False, &views, scratch, value)
    for i in range(1, nc):
        if value[i] > value[pick]:
            pick = i
    if value[pick] < value[0] + ROLLOUT_MARGIN:
        pick = 0                # not clearly better than team_search's action
    return pick


cdef int candidates(const DState* s, const double* params, Rng* rng, void* scratch,
                    int* cand) noexcept nogil:
    """team_search's action first, then the other legal actions; returns how many."""
    cdef int* legal = <int*>scratch
    cdef int first = d_policy(s, POLICY_TEAM, params, rng, scratch), n = d_legal(s, legal)
    cdef int i, nc = 1
    cand[0] = first
    for i in range(n):
        if legal[i] != first:
            cand[nc] = legal[i]
            nc += 1
    return nc


cdef inline bint simulated(const DState* s, int which) noexcept nogil:
    """Where policy "rollout" simulates: once the team holds three parts and the fourth lies
    on a tile (both its clues excavated: what the team sees), and from then on; "rollout_search"
    once the team holds all four."""
    cdef int i
    if parts_count(s, P_HELD) == N_PARTS:
        return True
    if which == POLICY_ROLLOUT_SEARCH or parts_count(s, P_HELD) < N_PARTS - 1:
        return False
    for i in range(N_PARTS):
        if s.part_state[i] == P_TILE:
            return True
    return False


cdef int rollout_policy(const void* vs, int which, const double* params, Rng* rng,
                        void* scratch) noexcept nogil:
    """Engine.policy: the planner .pxi's policies, and "rollout" on top of team_search (its
    simulations' "search" with the same parameters)."""
    cdef const DState* s = <const DState*>vs
    cdef int cand[MAX_LEGAL]
    cdef double value[MAX_LEGAL]
    cdef int nc
    if which != POLICY_ROLLOUT and which != POLICY_ROLLOUT_SEARCH:
        return d_policy(vs, which, params, rng, scratch)
    if not simulated(s, which):
        return d_policy(vs, POLICY_TEAM, params, rng, scratch)
    nc = candidates(s, params, rng, scratch, cand)
    if nc == 1:
        return cand[0]
    return cand[simulate(s, params, cand, nc, which, True, rng, scratch, value)]


def rollout_values(State state, unsigned long long seed=0, bint search=False, bint prune=False):
    """For tests: where policy "rollout" (search: "rollout_search") simulates in `state`
    (else None), its candidate actions (team_search's first) with their simulated values (None
    for those "rollout_search" leaves to the rule-based stage), and the index it plays (with
    the default parameters).  The values are complete unless `prune` (as "rollout" plays):
    then a candidate the rule can no longer pick holds the partial sum where it stopped."""
    cdef const DState* s = _st(state)
    cdef void* scratch
    cdef int cand[MAX_LEGAL]
    cdef double value[MAX_LEGAL]
    cdef Rng rng
    cdef int nc, pick
    cdef int which = POLICY_ROLLOUT_SEARCH if search else POLICY_ROLLOUT
    cdef double params[POLICY_PARAMS]
    policy_block(state, "rollout_search" if search else "rollout", params)
    if not simulated(s, which):
        return None
    scratch = calloc(1, POLICY_SCRATCH)
    if scratch == NULL:
        raise MemoryError()
    try:
        rng_seed(&rng, seed, 0, 0, 0)
        nc = candidates(s, params, &rng, scratch, cand)
        pick = simulate(s, params, cand, nc, which, prune, &rng, scratch, value)
        return [(cand[i], None if value[i] == NOT_SEARCHED else value[i])
                for i in range(nc)], pick
    finally:
        free(scratch)
