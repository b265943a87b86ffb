# Information-set Monte Carlo tree search over the engine contract (included by agent.pyx).
#
# UCT on a tree of action histories (open loop): every iteration draws a fresh determinization
# of the root from the acting seat's view (Engine.observe redraws the hidden parts, and the
# state's own chance stream is re-keyed, so future draws are unknown too), walks the tree with
# UCB1 for whichever seat acts at each node, expands one untried legal action (by default the
# best by the one-ply heuristic first), plays a rollout and backs up one value per seat.
# Actions that are illegal in one determinization are skipped, and UCB counts only the
# iterations in which a child was available (single-observer ISMCTS, Cowling et al. 2012).
# The node pool is allocated once per agent; a subtree kept for the next decision is
# compacted to the front of the pool.
from libc.math cimport sqrt, log, exp, fabs
from libc.stdint cimport uint32_t, uint64_t

# The slope of the cut-off's logistic on the scaled margin (benchmarks/agents.py: 4 beats
# greedy clearly in Maori and Mondo at 100 iterations; leader-takes-all lost in Mondo).
cdef double JUDGE_SLOPE = 4.0

cdef enum:
    ROLLOUT_CAP = 100000     # moves: a safety for rollouts of a game without a move limit
    # Greedy expansion values a node's untried actions once per batch of this many
    # expansions (the best ORDER_BATCH, kept in Tree.order), not once per expansion: a root
    # of 300 actions searched 200 times valued 40,000 actions, now about 4,000.
    ORDER_BATCH = 16
    ORDER_PER_NODE = 8       # Tree.order holds this many ints per pool node (shared)


cdef inline void redraw_chance(const Engine* e, void* st, Rng* rng) noexcept nogil:
    """The game's future chance is hidden too: a determinization's own stream is re-keyed from
    the searcher's rng (a search that kept it would foresee every draw)."""
    cdef Rng* own = st_rng(e, st)
    own.key = rng_next(rng)
    own.ctr = 0


cdef int tree_init(Tree* t, const Engine* e, int iterations) noexcept nogil:
    """Allocates every buffer of a search; the pool holds two searches' worth of nodes, so
    that a reused subtree (at most one full search, compacted) leaves room for the next."""
    t.capacity = 2 * iterations + 2
    t.size = 0
    t.root = 0
    t.nodes = <Node*>malloc(t.capacity * sizeof(Node))
    t.value = <double*>malloc(t.capacity * MAX_SEATS * sizeof(double))
    t.remap = <int*>malloc(t.capacity * sizeof(int))
    t.sim = malloc(e.state_size)
    t.trial = malloc(e.state_size)
    t.legal = <int*>malloc(MAX_LEGAL * sizeof(int))
    t.root_legal = <int*>malloc(MAX_LEGAL * sizeof(int))
    t.slot = <int*>malloc(MAX_LEGAL * sizeof(int))
    t.untried = <int*>malloc(MAX_LEGAL * sizeof(int))
    t.values = <double*>malloc(MAX_LEGAL * sizeof(double))
    t.scratch = calloc(1, POLICY_SCRATCH)
    t.order_capacity = t.capacity * ORDER_PER_NODE
    t.order_size = 0
    t.order = <int*>malloc(t.order_capacity * sizeof(int))
    t.order_prior = <double*>malloc(t.order_capacity * sizeof(double))
    if (t.nodes == NULL or t.value == NULL or t.remap == NULL or t.sim == NULL
            or t.trial == NULL or t.legal == NULL or t.root_legal == NULL or t.slot == NULL or t.untried == NULL
            or t.values == NULL or t.scratch == NULL or t.order == NULL
            or t.order_prior == NULL):
        tree_free(t)
        return -1
    return 0


cdef void tree_free(Tree* t) noexcept nogil:
    free(t.nodes)
    free(t.value)
    free(t.remap)
    free(t.sim)
    free(t.trial)
    free(t.legal)
    free(t.root_legal)
    free(t.slot)
    free(t.untried)
    free(t.values)
    free(t.scratch)
    free(t.order)
    free(t.order_prior)
    memset(t, 0, sizeof(Tree))


cdef size_t tree_bytes(const Tree* t, const Engine* e) noexcept nogil:
    """The memory one search agent holds (the pool and its buffers), fixed for its life."""
    return (t.capacity * (sizeof(Node) + MAX_SEATS * sizeof(double) + sizeof(int)
                          + ORDER_PER_NODE * (sizeof(int) + sizeof(double)))
            + 2 * e.state_size + MAX_LEGAL * (4 * sizeof(int) + sizeof(double)) + POLICY_SCRATCH)


cdef int new_node(Tree* t, int parent, int action) noexcept nogil:
    """A fresh node (first child of `parent`), or -1 when the pool is full."""
    cdef int i = t.size
    cdef Node* n
    if i >= t.capacity:
        return -1
    t.size += 1
    n = &t.nodes[i]
    n.action = action
    n.parent = parent
    n.child = -1
    n.sibling = -1
    n.visits = 0
    n.avail = 0
    n.order_n = 0
    n.prior = 1.0
    memset(&t.value[i * MAX_SEATS], 0, MAX_SEATS * sizeof(double))
    if parent >= 0:
        n.sibling = t.nodes[parent].child
        t.nodes[parent].child = i
    return i


cdef void tree_advance(Tree* t, int action) noexcept nogil:
    """Keeps the subtree below `action` as the new root (moved to the front of the pool), or
    drops the tree when the search never tried that action.  Children always come after their
    parent in the pool, so one ascending pass finds the subtree and moves every kept node to an
    index no larger than its own."""
    cdef int c, i, j, kept = 0
    t.order_size = 0       # the kept nodes value their untried actions afresh
    if t.size == 0:
        return
    c = t.nodes[t.root].child
    while c >= 0 and t.nodes[c].action != action:
        c = t.nodes[c].sibling
    if c < 0:
        t.size = 0
        return
    for i in range(c, t.size):
        j = t.nodes[i].parent
        if i == c or (j >= c and t.remap[j] >= 0):
            t.remap[i] = kept
            if kept != i:
                t.nodes[kept] = t.nodes[i]
                memcpy(&t.value[kept * MAX_SEATS], &t.value[i * MAX_SEATS],
                       MAX_SEATS * sizeof(double))
            kept += 1
        else:
            t.remap[i] = -1
    for i in range(kept):
        t.nodes[i].order_n = 0
        if i == 0:
            t.nodes[i].parent = -1
            t.nodes[i].sibling = -1
        else:
            t.nodes[i].parent = t.remap[t.nodes[i].parent]
            if t.nodes[i].sibling >= 0:
                t.nodes[i].sibling = t.remap[t.nodes[i].sibling]
        if t.nodes[i].child >= 0:
            t.nodes[i].child = t.remap[t.nodes[i].child]
    t.root = 0
    t.size = kept


cdef inline int find_action(const int* legal, int n, int action) noexcept nogil:
    """Index of `action` in the ascending legal list, or -1."""
    cdef int lo = 0, hi = n - 1, mid
    while lo <= hi:
        mid = (lo + hi) >> 1
        if legal[mid] == action:
            return mid
        if legal[mid] < action:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


cdef inline int draw_subset(int* items, int n, int k, Rng* rng) noexcept nogil:
    """Moves a uniform random k of the n items to the front (a partial Fisher-Yates shuffle)
    and returns k."""
    cdef int i, j, tmp
    for i in range(k):
        j = i + <int>rng_below(rng, n - i)
        tmp = items[i]
        items[i] = items[j]
        items[j] = tmp
    return k


cdef inline bint ranks_above(double v, uint32_t key, double w, uint32_t other) noexcept nogil:
    return v > w or (v == w and key > other)


cdef int best_first(const double* values, const int* actions, int m, int k, int* out,
                    double* out_values, Rng* rng) noexcept nogil:
    """Writes the k best of the m actions into out (their values into out_values unless it
    is NULL), best first, and returns how many (at most k).  Ties go in a random order: each
    action's tie key is a hash of it with one random salt per call (one pass with a sorted
    buffer of k, no draw per comparison)."""
    cdef double top_v[ORDER_BATCH]
    cdef uint32_t top_key[ORDER_BATCH]
    cdef uint64_t salt = rng_next(rng)
    cdef uint32_t key
    cdef int i, j, size = 0
    for i in range(m):
        key = <uint32_t>(rng_tie_key(salt, <uint64_t>actions[i]) >> 32)
        if size == k and not ranks_above(values[i], key, top_v[k - 1], top_key[k - 1]):
            continue
        j = size if size < k else k - 1
        while j > 0 and ranks_above(values[i], key, top_v[j - 1], top_key[j - 1]):
            top_v[j] = top_v[j - 1]
            top_key[j] = top_key[j - 1]
            out[j] = out[j - 1]
            j -= 1
        top_v[j] = values[i]
        top_key[j] = key
        out[j] = actions[i]
        if size < k:
            size += 1
    if out_values != NULL:
        for j in range(size):
            out_values[j] = top_v[j]
    return size


cdef inline int kind_index(const AgentSpec* a, int action) noexcept nogil:
    """The move prior's index of the action's kind (the last kind starting at or below it)."""
    cdef int k = a.n_kinds - 1
    while k > 0 and action < a.kind_lo[k]:
        k -= 1
    return k


cdef void prior_probabilities(const AgentSpec* a, const int* actions, double* values,
                              int m) noexcept nogil:
    """Replaces the m actions' one-ply values by the move prior's probabilities over them: a
    softmax of prior_value[kind] x (value - the best value) + prior_offset[kind] (the
    conditional logit of benchmarks/prior_fit.py)."""
    cdef double best = -1e300, top = -1e300, total = 0.0
    cdef int i, k
    for i in range(m):
        if values[i] > best:
            best = values[i]
    for i in range(m):
        k = kind_index(a, actions[i])
        values[i] = a.prior_value[k] * (values[i] - best) + a.prior_offset[k]
        if values[i] > top:
            top = values[i]
    for i in range(m):
        values[i] = exp(values[i] - top)
        total += values[i]
    for i in range(m):
        values[i] /= total


cdef int untried_pick(const Engine* e, Tree* t, int node, int n, int untried, int actor,
                      const AgentSpec* a, Rng* rng, double* prior) noexcept nogil:
    """The index (in t.legal) of the untried action to expand: the best one-ply value for the
    actor first (a.expand == AGENT_GREEDY; ties at random), the most probable by the move
    prior first (a.prior, whatever a.expand; its probability among every action of the
    node in this determinization goes to prior[0], else 1 / n), or one at random.  The untried actions are valued
    once for a batch of ORDER_BATCH expansions of the node (kept in t.order, best first); a
    kept candidate that is illegal or tried in this determinization is skipped, and an empty
    batch values the untried actions of the determinization at hand again."""
    cdef Node* nd = &t.nodes[node]
    cdef int i, m = 0, k, pick
    prior[0] = 1.0 / n
    if (a.expand == AGENT_GREEDY and untried > 1) or a.prior:
        while nd.order_n > 0:
            nd.order_n -= 1
            nd.order += 1
            i = find_action(t.legal, n, t.order[nd.order - 1])
            if i >= 0 and t.slot[i] < 0:
                prior[0] = t.order_prior[nd.order - 1]
                return i
        if a.prior:     # the probabilities over every action here, kept for the untried
            if e.action_values == NULL or not e.action_values(t.sim, actor, t.legal, n, t.values):
                one_ply_values(e, t.sim, actor, t.legal, n, t.values, t.trial)
            prior_probabilities(a, t.legal, t.values, n)
            for i in range(n):
                if t.slot[i] < 0:
                    t.untried[m] = t.legal[i]
                    t.values[m] = t.values[i]     # m <= i: read before written
                    m += 1
        else:
            for i in range(n):
                if t.slot[i] < 0:
                    t.untried[m] = t.legal[i]
                    m += 1
            if e.action_values == NULL or not e.action_values(t.sim, actor, t.untried, m,
                                                              t.values):
                one_ply_values(e, t.sim, actor, t.untried, m, t.values, t.trial)
        if t.order_size + ORDER_BATCH > t.order_capacity:     # full: this expansion only
            best_first(t.values, t.untried, m, 1, &pick, prior if a.prior else NULL, rng)
            return find_action(t.legal, n, pick)
        k = best_first(t.values, t.untried, m, ORDER_BATCH, &t.order[t.order_size],
                       &t.order_prior[t.order_size] if a.prior else NULL, rng)
        nd.order = t.order_size + 1
        nd.order_n = k - 1
        t.order_size += k
        if a.prior:
            prior[0] = t.order_prior[nd.order - 1]
        return find_action(t.legal, n, t.order[nd.order - 1])
    pick = <int>rng_below(rng, untried)
    for i in range(n):
        if t.slot[i] < 0:
            if pick == 0:
                return i
            pick -= 1
    return -1


cdef inline bint widened(const Tree* t, int node, int tried, const AgentSpec* a) noexcept nogil:
    """Progressive widening (a.widen > 0): the node has as many children legal here as its
    visits allow, 1 + widen * sqrt(visits), so the next iteration selects among them instead
    of trying another action.  Where hundreds of actions are legal, trying each once spends
    the whole budget on single noisy rollouts and the decision goes to the luckiest; widening
    keeps the iterations on the best of the expansion order."""
    return a.widen > 0.0 and tried >= 1.0 + a.widen * sqrt(<double>t.nodes[node].visits)


cdef inline int tree_actions(const Engine* e, const AgentSpec* a, const void* st,
                             int* out) noexcept nogil:
    """The actions the tree considers: the legal ones, or with a.turns the engine's search
    actions (a subset through which every legal turn stays reachable) where it has them."""
    if a.turns and e.search_actions != NULL:
        return e.search_actions(st, out)
    return e.legal_actions(st, out)


cdef int descend(const Engine* e, Tree* t, int node, const AgentSpec* a, Rng* rng,
                 bint* expanded) noexcept nogil:
    """The child to follow from `node` in the current determinization (t.sim): a new child
    for a random untried legal action while the pool has room, else the UCB1 best of the
    children legal here; -1 when there is none."""
    cdef int n = tree_actions(e, a, t.sim, t.legal)
    cdef int actor = st_current(e, t.sim)
    cdef int i, c, untried = 0, best = -1
    cdef double score, prior, best_score = -1e300
    if actor == t.searcher:     # restricted play: the searcher's own decisions (sorted kept)
        n = keep_allowed(a, t.legal, n)
    for i in range(n):
        t.slot[i] = -1
    c = t.nodes[node].child
    while c >= 0:
        i = find_action(t.legal, n, t.nodes[c].action)
        if i >= 0:
            t.slot[i] = c
            t.nodes[c].avail += 1
        c = t.nodes[c].sibling
    for i in range(n):
        if t.slot[i] < 0:
            untried += 1
    expanded[0] = False
    if untried > 0 and t.size < t.capacity and not widened(t, node, n - untried, a):
        c = new_node(t, node, t.legal[untried_pick(e, t, node, n, untried, actor, a, rng,
                                                   &prior)])
        t.nodes[c].avail = 1
        t.nodes[c].prior = prior
        expanded[0] = True
        return c
    for i in range(n):
        c = t.slot[i]
        if c >= 0:
            if a.prior == PRIOR_PUCT:     # the exploration bonus in proportion to the prior
                score = (t.value[c * MAX_SEATS + actor] / t.nodes[c].visits
                         + a.exploration * t.nodes[c].prior * sqrt(<double>t.nodes[c].avail)
                         / (1.0 + t.nodes[c].visits))
            else:
                score = (t.value[c * MAX_SEATS + actor] / t.nodes[c].visits
                         + a.exploration * sqrt(log(<double>t.nodes[c].avail) / t.nodes[c].visits))
            if score > best_score:
                best_score = score
                best = c
    return best


cdef int rollout_action(const Engine* e, Tree* t, const AgentSpec* a, Rng* rng) noexcept nogil:
    """One rollout move on the determinization itself (it is already a sample, so one-ply
    look-ahead needs no further redraw).  A greedy move with a.sample > 0 values only a random
    sample of that many legal actions (the engine's action values cost about one evaluation per
    action valued, so this bounds a rollout move's cost whatever the branching)."""
    cdef int n, actor
    if a.rollout_kind == AGENT_POLICY and e.policy != NULL:
        return e.policy(t.sim, a.rollout_policy, a.params, rng, t.scratch)
    if a.rollout_kind != AGENT_GREEDY and e.random_action != NULL:
        return e.random_action(t.sim, rng)     # the same draw as below, without listing
    n = e.legal_actions(t.sim, t.legal)
    if (a.rollout_kind != AGENT_GREEDY or n == 1
            or (a.epsilon > 0.0 and rng_uniform(rng) < a.epsilon)):
        return t.legal[rng_below(rng, n)]
    if a.sample > 0 and n > a.sample:
        n = draw_subset(t.legal, n, a.sample, rng)
    actor = st_current(e, t.sim)
    if e.action_values == NULL or not e.action_values(t.sim, actor, t.legal, n, t.values):
        one_ply_values(e, t.sim, actor, t.legal, n, t.values, t.trial)
    return pick_best(t.legal, t.values, n, rng)


cdef inline double best_rival(const double* values, int players, int seat) noexcept nogil:
    cdef double best = -1e300
    cdef int j
    for j in range(players):
        if j != seat and values[j] > best:
            best = values[j]
    return best


cdef inline double squash(double x) noexcept nogil:
    return 1.0 / (1.0 + exp(-JUDGE_SLOPE * x))


cdef void result_values(const Engine* e, Tree* t, const AgentSpec* a, int players,
                        double* out) noexcept nogil:
    """Per-seat value of where the iteration stopped, each in [0, 1].  At the end: the win
    shares (the team outcome in cooperative games), blended with the relative score margin
    when a.margin > 0.  At a rollout cut-off, a logistic of the heuristic scaled by the size
    of the searching seat's heuristic at the root (so that one slope serves every game): in a
    competitive game of the seat's margin over its best rival, for a team (cooperative or
    solo) of the gain over the root; with a.fitted, the engine's chances to win where it has
    them (among rivals: a solo or team game keeps the gain).  (Leader-takes-all at the
    cut-off was much weaker: most actions leave the leader as it is.)"""
    cdef double values[MAX_SEATS]
    cdef double rival, scale = 1.0 + fabs(t.root_heuristic)
    cdef int k
    if st_terminal(e, t.sim):
        e.win_shares(t.sim, out)
        if a.margin > 0.0 and players > 1 and not e.cooperative:
            e.scores(t.sim, values)
            for k in range(players):
                rival = best_rival(values, players, k)
                out[k] = ((1.0 - a.margin) * out[k] + a.margin * 0.5
                          * (1.0 + (values[k] - rival) / (fabs(values[k]) + fabs(rival) + 1.0)))
        return
    if a.fitted and e.leaf_values != NULL and players > 1 and not e.cooperative:
        e.leaf_values(t.sim, out)
        return
    if e.cooperative or players == 1:
        for k in range(players):
            out[k] = squash((e.heuristic(t.sim, 0) - t.root_heuristic) / scale)
        return
    for k in range(players):
        values[k] = e.heuristic(t.sim, k)
    for k in range(players):
        out[k] = squash((values[k] - best_rival(values, players, k)) / scale)


cdef void iterate(const Engine* e, const void* st, int seat, const AgentSpec* a, Tree* t,
                  int players, Rng* rng) noexcept nogil:
    """One simulation: determinize, select/expand, roll out, back up."""
    cdef int node = t.root, nxt, k, moves = 0
    cdef bint expanded = False
    cdef double out[MAX_SEATS]
    e.observe(st, seat, t.sim, rng)
    redraw_chance(e, t.sim, rng)
    while not st_terminal(e, t.sim):
        nxt = descend(e, t, node, a, rng, &expanded)
        if nxt < 0:
            break
        e.apply(t.sim, t.nodes[nxt].action)
        t.moves += 1
        node = nxt
        if expanded:
            break
    if a.rollout_kind == AGENT_POLICY and a.rollout_memory:
        # A policy's memory starts empty in every rollout (a quick policy keeps none, and
        # clearing the scratch, 64 KiB then, cost about ten random moves an iteration).
        memset(t.scratch, 0, POLICY_SCRATCH)
    while a.rollout_kind != AGENT_NONE and not st_terminal(e, t.sim) \
            and (a.cutoff == 0 or moves < a.cutoff) and moves < ROLLOUT_CAP:
        e.apply(t.sim, rollout_action(e, t, a, rng))
        moves += 1
    t.moves += moves
    result_values(e, t, a, players, out)
    while True:
        t.nodes[node].visits += 1
        for k in range(players):
            t.value[node * MAX_SEATS + k] += out[k]
        if node == t.root:
            break
        node = t.nodes[node].parent


cdef bint settled(const Tree* t, int n, double left) noexcept nogil:
    """Whether the most visited root child legal at the root (t.root_legal, n actions) leads
    every other root child by more than `left` visits: no child can reach it in as many more
    iterations, so the choice is already the one the whole budget makes (with a.stop_lead < 1
    the caller passes that share of the iterations left: a lead the rest would most likely
    keep)."""
    cdef int c = t.nodes[t.root].child, v, first = 0, second = 0
    while c >= 0:
        v = t.nodes[c].visits
        if v > first and find_action(t.root_legal, n, t.nodes[c].action) >= 0:
            second = max(second, first)
            first = v
        elif v > second:
            second = v
        c = t.nodes[c].sibling
    return first - second > left


cdef bint light(const AgentSpec* a, const int* actions, int n) noexcept nogil:
    """Whether one of the n actions is of a kind the agent searches lightly (a.light_lo/hi)."""
    cdef int i
    for i in range(n):
        if of_kinds(actions[i], a.n_light, a.light_lo, a.light_hi):
            return True
    return False


cdef int mcts_act(const Engine* e, const void* st, int seat, const AgentSpec* a, Tree* t,
                  Rng* rng) noexcept nogil:
    """The search's decision: the most visited root child that is legal in `st` (ties: the
    better mean value for `seat`, then the lower action)."""
    cdef int n = keep_allowed(a, t.legal, tree_actions(e, a, st, t.legal))
    cdef int players = st_players(e, st)
    cdef int i, c, done, budget, best = -1
    cdef double mean, best_mean = -1e300
    if n == 1:
        return t.legal[0]
    if not a.reuse or t.size == 0:
        t.size = 0
        t.order_size = 0
        t.root = new_node(t, -1, -1)
    t.root_heuristic = e.heuristic(st, seat)
    t.searcher = seat
    # With a.top_up the kept subtree's visits count towards the budget (they were searched
    # from the same position, one decision earlier): a turn of several decisions by one seat
    # then costs about one search instead of one per decision.  At least one iteration runs,
    # so that a legal root child exists.
    n = keep_allowed(a, t.root_legal, tree_actions(e, a, st, t.root_legal))
    budget = a.light_iterations if light(a, t.root_legal, n) else a.iterations
    done = min(t.nodes[t.root].visits, budget - 1) if a.top_up else 0
    for i in range(done, budget):
        iterate(e, st, seat, a, t, players, rng)
        if a.stop and settled(t, n, a.stop_lead * (budget - 1 - i)):
            break
    n = keep_allowed(a, t.legal, tree_actions(e, a, st, t.legal))
    c = t.nodes[t.root].child
    while c >= 0:
        if find_action(t.legal, n, t.nodes[c].action) >= 0:
            mean = t.value[c * MAX_SEATS + seat] / t.nodes[c].visits
            if (best < 0 or t.nodes[c].visits > t.nodes[best].visits
                    or (t.nodes[c].visits == t.nodes[best].visits
                        and (mean > best_mean or (mean == best_mean
                                                  and t.nodes[c].action < t.nodes[best].action)))):
                best = c
                best_mean = mean
        c = t.nodes[c].sibling
    if best < 0:     # no legal child was ever tried (cannot happen with iterations >= 1)
        return t.legal[rng_below(rng, n)]
    return t.nodes[best].action
