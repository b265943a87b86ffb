# Agents generic over the engine contract: they see only Engine* and void* states.
from core_cy.contract cimport Engine, Rng

cdef enum AgentKind:
    AGENT_RANDOM = 0     # uniform over the legal actions
    AGENT_GREEDY = 1     # one ply on the engine's heuristic, ties broken by the RNG
    AGENT_POLICY = 2     # the engine's own policy number `policy` (e.g. a team planner)

ctypedef struct AgentSpec:
    int kind
    int policy

# Scratch memory for one player of games: allocated once per batch, never per move.
ctypedef struct Workspace:
    int* legal           # MAX_LEGAL ints
    void* view           # a state: the acting seat's determinized view
    void* trial          # a state: the view after one candidate action
    void* scratch        # POLICY_SCRATCH bytes for engine policies
    double* values       # MAX_LEGAL action values

cdef int workspace_init(Workspace* w, const Engine* e) noexcept nogil
cdef void workspace_free(Workspace* w) noexcept nogil
cdef int agent_act(const Engine* e, const void* st, int seat, const AgentSpec* a,
                   Rng* rng, Workspace* w) noexcept nogil
