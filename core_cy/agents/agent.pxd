# Agents generic over the engine contract: they see only Engine* and void* states.
from core_cy.engine.contract cimport Engine, Rng, POLICY_PARAMS

cdef enum AgentKind:
    AGENT_RANDOM = 0     # uniform over the legal actions
    AGENT_GREEDY = 1     # one ply on the engine's heuristic, ties broken by the RNG
    AGENT_POLICY = 2     # the engine's own policy number `policy` (e.g. a team planner)
    AGENT_MCTS = 3       # information-set Monte Carlo tree search (mcts.pxi)
    AGENT_NONE = 4       # rollouts only: no rollout moves (the heuristic judges the new leaf)

cdef enum:
    MAX_FORBID = 8       # forbidden action kinds per agent (forbid=kind+kind...)
    MAX_KINDS = 16       # action kinds of a game the move prior weighs (one weight pair each)
    PRIOR_NONE = 0       # AgentSpec.prior: no move prior
    PRIOR_ORDER = 1      # the prior orders a node's untried actions
    PRIOR_PUCT = 2       # ... and weighs the selection

# An agent with its parameters (the parsed form of "mcts(iterations=400, rollout=greedy)").
ctypedef struct AgentSpec:
    int kind
    int policy           # AGENT_POLICY: the engine policy number
    # The parameter block handed to the engine policy this agent calls (AGENT_POLICY: its
    # own, from the agent string; AGENT_MCTS: its rollout policy's defaults), copied into the
    # agent: every seat has its own, the game state holds none.
    double params[POLICY_PARAMS]
    # AGENT_MCTS only:
    int iterations       # simulations per decision
    double exploration   # the UCT exploration constant
    int rollout_kind     # AGENT_RANDOM, AGENT_GREEDY, AGENT_POLICY or AGENT_NONE: the rollout policy
    int rollout_policy   # the engine policy number when rollout_kind is AGENT_POLICY
    bint rollout_memory  # that policy keeps memory in its scratch (emptied every rollout)
    int expand           # AGENT_GREEDY: untried actions in the order of their one-ply value
    int cutoff           # rollout moves before the heuristic judges the position (0: to the end)
    double epsilon       # greedy rollouts: the share of moves played at random instead
    int sample           # greedy rollouts: value at most this many legal actions, drawn at random (0: all)
    bint reuse           # keep the subtree of the moves actually played between decisions
    bint top_up          # reuse: the kept subtree's visits count towards `iterations`
    double margin        # weight of the score margin next to the win share in a result's value
    double widen         # progressive widening: at most 1 + widen * sqrt(visits) children (0: off)
    bint turns           # the tree's actions: the engine's search_actions where it has them
    bint stop            # end a decision's iterations once the most visited root child
                         # leads every other by more than stop_lead x the iterations left
    double stop_lead     # stop: the share of the iterations left the lead must exceed (1: exact)
    bint fitted          # a cut-off rollout is judged by the engine's leaf_values (if any)
    # The move prior (prior=fitted; data/move_prior.json of the game): an action's logit is
    # prior_value[k] * (its one-ply value - the best one-ply value) + prior_offset[k], k its
    # action kind (the kinds start at kind_lo, ascending).  It orders a node's untried
    # actions (prior >= PRIOR_ORDER) and weighs the selection (prior == PRIOR_PUCT: exploration
    # x prior x sqrt(avail) / (1 + visits) instead of UCB1's term).
    int prior
    int n_kinds
    int kind_lo[MAX_KINDS]
    double prior_value[MAX_KINDS]
    double prior_offset[MAX_KINDS]
    # A light decision (one where an action id in [light_lo[j], light_hi[j]) is legal: an
    # action kind the agent string names) searches light_iterations instead of iterations.
    int light_iterations
    int n_light
    int light_lo[MAX_FORBID]
    int light_hi[MAX_FORBID]
    # Restricted play (random, greedy, mcts): action ids in [forbid_lo[j], forbid_hi[j]) are
    # not played while any other action is legal (an action kind is one block of ids).
    int n_forbid
    int forbid_lo[MAX_FORBID]
    int forbid_hi[MAX_FORBID]

# Scratch memory for one player of games: allocated once per batch, never per move.
ctypedef struct Workspace:
    int* legal           # MAX_LEGAL ints
    void* view           # a state: the acting seat's determinized view
    void* trial          # a state: the view after one candidate action
    void* scratch        # POLICY_SCRATCH bytes for engine policies
    double* values       # MAX_LEGAL action values

# One node of a search tree: the action sequence from the root (open loop: chance and hidden
# parts are redrawn every iteration, so a node is a history of actions, not a state).
ctypedef struct Node:
    int action           # the action that leads here from the parent
    int parent           # node indices in the pool; -1 for none
    int child            # first child
    int sibling          # next sibling
    int visits           # iterations that passed through this node
    int avail            # iterations in which this node's action was legal (ISMCTS)
    int order            # where the node's next expansion candidates start in Tree.order
    int order_n          # how many are left there (0: value the untried actions again)
    double prior         # the move prior's probability of `action` when it was expanded

# A search tree with every buffer it needs, allocated once per agent (never per move).
ctypedef struct Tree:
    Node* nodes          # the node pool: capacity nodes
    double* value        # per node, MAX_SEATS summed per-seat results
    int* remap           # capacity ints, for compacting a reused subtree
    int capacity
    int size             # nodes in use; 0: no tree yet
    int root
    void* sim            # the state one iteration plays on
    void* trial          # a state for one-ply rollout decisions
    int* legal           # MAX_LEGAL ints
    int* root_legal      # MAX_LEGAL ints: the actions the root may choose (early stop)
    int* slot            # MAX_LEGAL ints: the child node of each legal action (-1: untried)
    int* untried         # MAX_LEGAL ints: the untried legal actions of a node, to rank them
    double* values       # MAX_LEGAL action values (greedy rollouts)
    int* order           # order_capacity ints: batches of expansion candidates, best first
    double* order_prior  # order_capacity doubles: with a move prior, each candidate's probability
    int order_capacity
    int order_size       # ints in use (a bump arena, emptied when the root moves)
    void* scratch        # POLICY_SCRATCH bytes for engine-policy rollouts
    double root_heuristic    # the searching seat's heuristic at the root (scales cut-offs)
    int searcher             # the searching seat (its own forbidden actions stay out of the tree)
    long long moves          # moves simulated (tree and rollouts), for benchmarks

# A seat's agent: its parameters and, for a search agent, its tree.
ctypedef struct Agent:
    AgentSpec spec
    Tree tree
    int forced           # this game's decisions where every legal action was forbidden

cdef int workspace_init(Workspace* w, const Engine* e) noexcept nogil
cdef void workspace_free(Workspace* w) noexcept nogil
cdef int agent_init(Agent* a, const Engine* e) noexcept nogil
cdef void agent_free(Agent* a) noexcept nogil
cdef void agent_new_game(Agent* a) noexcept nogil
cdef void agent_seen(Agent* a, int action) noexcept nogil
cdef int keep_allowed(const AgentSpec* s, int* legal, int n) noexcept nogil
cdef int agent_act(const Engine* e, const void* st, int seat, Agent* a,
                   Rng* rng, Workspace* w) noexcept nogil

cdef class Agents:
    cdef Agent* agents
    cdef int count
