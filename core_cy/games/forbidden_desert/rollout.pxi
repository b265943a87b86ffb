# Policy "rollout", included into forbidden_desert.pyx after the team planners: the rollout
# algorithm (policy improvement by simulation) on top of team_search, in the endgame.
#
# Until the team holds three parts and the fourth lies on a tile (both its clues excavated;
# "rollout_search": until it holds all four) it plays team_search.  From then on every
# decision with a choice (actions, water, equipment, storm phase, peeks) is simulated: each
# legal action is played ROLLOUT_SAMPLES times to the end of the game by the base policy
# ROLLOUT_BASE for the whole team (the rule-based endgame: fast), each time on a fresh view
# of the acting seat
# (`observe`: hidden tiles re-dealt, storm and equipment piles reshuffled, a chance stream of
# its own), the same views for every action (common random numbers).  The action with the
# most team wins is played if it wins at least ROLLOUT_MARGIN more than team_search's action
# (ties between the others go to the longest survival).
# Why the endgame: 4-player Novice, team_search holds all parts in 43% of its games but wins
# only half of those, and the end is near enough there for a simulated win to be a strong
# signal.  benchmarks/planners.py desert --agents rollout,team_search --games 1600 --seed 12:
# 27.4% [25.3, 29.7] wins against team_search's 22.25% on the same seeds (all parts held in
# 687 games alike, won 439 of them against 356; thirst after that 184 against 260, buried 64
# against 71); without the margin 26.8% (429 won; --seed 11, 400 games: 30.0% against
# 21.25%).  Measured and not taken (400 seeds 11, no margin): 32 views 30.5% at two thirds
# of the speed; simulating from the moment all parts are located (the planner, or "search"
# until all are held, playing the simulations) 26.0% and 27.0%: fewer games reach the
# endgame; whole-turn lines (team_search's and deep_search's best) simulated by "search" on 8
# views before the endgame 15% against 20% (100 seeds): at ~20% wins, a few simulated games
# cannot tell one turn's lines apart.
# Session 8, the first 400 games of seed 12 (this policy: 117 wins; paired by seed):
# - Policy "rollout_search" (kept): "search" instead of the rule-based endgame playing out
#   every legal action: 125 wins (12 games won only by it, 4 only by this policy); over the
#   first 1,000 games 301 against 282 (30 against 11, paired +1.9 points [+0.6, +3.2]) at
#   0.5 games per CPU-second, a twentieth of this policy's speed (the README).
# - "search" playing out only team_search's action and the three
#   best others of the rule-based stage again (16 new views): it hardly ever leaves
#   team_search's action (0 of 60 endgame decisions where the rule-based stage left it in
#   10; search and team_search share the evaluation), 117 wins where another action came
#   within one win of team_search's, at a fifth of the speed.
# - Before the endgame: at each fresh team_search plan where the search's thirst risk (a pawn
#   dying before its next turn) is 0.1 or more, team_search's six best lines each played on
#   16 views and the team continued by "search" for two rounds, the line the team survives
#   most often (by 2) taken: 117 wins (thirst before the fourth part 169 games against 202,
#   but the sand ran out in 72 against 40; all parts held in 186 against 166), at a quarter
#   of the speed; with half of plan_eval (in parts held) added to each survival: 98.  Two
#   rounds of survival trade thirst for time, and the sand supply is the clock.
# Session 9 (benchmarks/planners.py endgame: only the games that reach all four parts, the
# same 166 of the first 400 games of seed 12 for every agent; on main 22293a7):
# - "rollout_search" pruned (kept): the rule-based stage values every candidate first, and
#   "search" plays out on the same views only team_search's action and the SEARCH_KEEP best
#   others: 124 endgames won against 125 unpruned (3 won only by it, 4 only by the unpruned),
#   1.90 against 4.81 CPU-seconds per endgame game.  Screened on endgame decisions of other
#   games, each candidate's win chance estimated on 128 views played by "search" (the chosen
#   action's minus team_search's, the mean over decisions): 160 decisions, unpruned +0.019,
#   6 kept +0.018 (0.43 of the cost), 3 kept +0.015 (0.28); "rollout" -0.001 (80 decisions).
# - Measured that way and not taken: "search" for one round of each simulation, then the
#   rule-based endgame (80 decisions: +0.013 against +0.012, no cheaper: the simulations are
#   short); 32 views for the 6 kept (216 decisions: +0.019 against +0.017, the unpruned
#   cost; with margin 2 +0.017); 32 more views for team_search's and the chosen action
#   before leaving team_search's, margin 3 (80 decisions: +0.010 against +0.012).
# Session 10 (seeds 20-21; games paired by seed):
# - Where "rollout_search" dies of thirst after all parts are held (seed 20, games 0-59: 10
#   of its 28 endgames): in 4 every candidate of every decision won under one of its 16
#   views from the first on (pawns with 0-1 water 3-6 steps from the Launch Pad when the
#   last part was picked up), in 2 the views won 16 of 16 and the storm cards then killed
#   (two Sun Beats Down with dry pawns), in 4 they won 4-12 of 16 and fell.  So the
#   simulations start earlier: once three parts are held and the fourth lies on a tile
#   (kept): "rollout" wins 97 of 300 full games against 83 (19 won only so, 5 only the
#   old way: paired +4.67 points [+1.50, +7.83]), thirst losses 164 against 175, at 0.25
#   against 0.095 CPU-seconds a game.  "rollout_search" started that early too won 17 of the
#   first 36 of these endgames of seed 20, as many as before, at 3.1 against 1.4 CPU-seconds
#   an endgame game: it keeps simulating only once all four parts are held.  Not landed
#   (too few games): the rule-based stage alone while three parts are held and "search"
#   once all four are, 62 of those 112 endgames of seed 20 won against 57 (13 only so, 8 only
#   the old way) at 1.55 against 1.40 CPU-seconds an endgame game.
# - Measured with "rollout" and not taken (no gain beyond noise): the losses'
#   tie-break by the team's water left instead of the turns survived (198 endgames: 4 won
#   only so, 3 only the old way); a win worth less for each storm card drawn while a pawn
#   was dry, and where team_search's action wins all 16 views the safest line taken (78
#   endgames: the same 49 won).
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


cdef double play_out(DState* w, int first, int base, Rng* rng, void* scratch) noexcept nogil:
    """Plays `first` and then the base policy for the whole team to the end of the game; 1
    for a team win, else a tie-break below 1 / ROLLOUT_SAMPLES (the share of the turn limit
    survived), so that wins count first."""
    d_apply(w, first)
    plan_cache(scratch).magic = 0       # a search base plans afresh in every simulation
    while not w.head.terminal:
        d_apply(w, d_policy(w, base, rng, scratch))
    if w.head.end_reason == END_WIN:
        return 1.0
    return 0.9 / ROLLOUT_SAMPLES * w.turns / w.rules.max_turns


cdef void play_views(const DState* s, const int* cand, const int* which, int nw, int base,
                     Rng* rng, void* scratch, double* value) noexcept nogil:
    """The candidates cand[which[0..nw-1]] each played out on the same ROLLOUT_SAMPLES views
    (drawn from rng), their values (the sums) in value[which[...]]."""
    cdef DState view, w
    cdef int i, k
    for i in range(nw):
        value[which[i]] = 0.0
    for k in range(ROLLOUT_SAMPLES):
        d_observe(s, s.head.current, &view, rng)
        for i in range(nw):
            memcpy(&w, &view, sizeof(DState))
            value[which[i]] += play_out(&w, cand[which[i]], base, rng, scratch)


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


cdef int simulate(const DState* s, const int* cand, int nc, int which, Rng* rng,
                  void* scratch, double* value) noexcept nogil:
    """The candidate actions' values on ROLLOUT_SAMPLES views (policy "rollout_search": on the
    same views, "search" plays out team_search's action and the SEARCH_KEEP others that the
    rule-based endgame values most; the rest are NOT_SEARCHED); returns the index of the best
    (the first of equals), or 0 (team_search's) unless it is clearly better."""
    cdef int order[MAX_LEGAL]
    cdef int i, n, pick = 0
    cdef Rng views = rng[0]             # the same views again for the search stage
    for i in range(nc):
        order[i] = i
    play_views(s, cand, order, nc, ROLLOUT_BASE, rng, scratch, value)
    if which == POLICY_ROLLOUT_SEARCH:
        n = keep_best(value, order, nc, SEARCH_KEEP)
        for i in range(n, nc):
            value[order[i]] = NOT_SEARCHED
        play_views(s, cand, order, n, POLICY_SEARCH, &views, scratch, value)
    for i in range(1, nc):
        if value[i] > value[pick]:
            pick = i
    if value[pick] < value[0] + ROLLOUT_MARGIN:
        pick = 0                # not clearly better than team_search's action
    return pick


cdef int candidates(const DState* s, Rng* rng, void* scratch, int* cand) noexcept nogil:
    """team_search's action first, then the other legal actions; returns how many."""
    cdef int* legal = <int*>scratch
    cdef int first = d_policy(s, POLICY_TEAM, rng, scratch), n = d_legal(s, legal), i, nc = 1
    cand[0] = first
    for i in range(n):
        if legal[i] != first:
            cand[nc] = legal[i]
            nc += 1
    return nc


cdef inline bint simulated(const DState* s, int which) noexcept nogil:
    """Where policy "rollout" simulates: once the team holds three parts and the fourth lies
    on a tile (both its clues excavated: what the team sees), and from then on; "rollout_search"
    once the team holds all four (its gain from the earlier start is not measured yet)."""
    cdef int i
    if parts_count(s, P_HELD) == N_PARTS:
        return True
    if which == POLICY_ROLLOUT_SEARCH or parts_count(s, P_HELD) < N_PARTS - 1:
        return False
    for i in range(N_PARTS):
        if s.part_state[i] == P_TILE:
            return True
    return False


cdef int rollout_policy(const void* vs, int which, Rng* rng, void* scratch) noexcept nogil:
    """Engine.policy: the planner .pxi's policies, and "rollout" on top of team_search."""
    cdef const DState* s = <const DState*>vs
    cdef int cand[MAX_LEGAL]
    cdef double value[MAX_LEGAL]
    cdef int nc
    if which != POLICY_ROLLOUT and which != POLICY_ROLLOUT_SEARCH:
        return d_policy(vs, which, rng, scratch)
    if not simulated(s, which):
        return d_policy(vs, POLICY_TEAM, rng, scratch)
    nc = candidates(s, rng, scratch, cand)
    if nc == 1:
        return cand[0]
    return cand[simulate(s, cand, nc, which, rng, scratch, value)]


def rollout_values(State state, unsigned long long seed=0, bint search=False):
    """For tests: where policy "rollout" (search: "rollout_search") simulates in `state`
    (else None), its candidate actions (team_search's first) with their simulated values (None
    for those "rollout_search" leaves to the rule-based stage), and the index it plays."""
    cdef const DState* s = _st(state)
    cdef void* scratch
    cdef int cand[MAX_LEGAL]
    cdef double value[MAX_LEGAL]
    cdef Rng rng
    cdef int nc, pick
    cdef int which = POLICY_ROLLOUT_SEARCH if search else POLICY_ROLLOUT
    if not simulated(s, which):
        return None
    scratch = calloc(1, POLICY_SCRATCH)
    if scratch == NULL:
        raise MemoryError()
    try:
        rng_seed(&rng, seed, 0, 0, 0)
        nc = candidates(s, &rng, scratch, cand)
        pick = simulate(s, cand, nc, which, &rng, scratch, value)
        return [(cand[i], None if value[i] == NOT_SEARCHED else value[i])
                for i in range(nc)], pick
    finally:
        free(scratch)
