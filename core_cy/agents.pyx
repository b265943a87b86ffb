# cython: language_level=3
"""Agents written once for every game, over the engine contract."""
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memcpy
from core_cy.contract cimport (Engine, Rng, EngineHandle, State, MAX_LEGAL, POLICY_SCRATCH,
                               rng_seed, rng_below, STREAM_SEAT)

# Names of the generic agents; engines add their own policies by name (Game.agents).
GENERIC_AGENTS = {
    "random": "uniform random over the legal actions",
    "greedy": "one ply on the game's heuristic value for the acting seat, ties broken at random",
}


cdef int workspace_init(Workspace* w, const Engine* e) noexcept nogil:
    w.legal = <int*>malloc(MAX_LEGAL * sizeof(int))
    w.view = malloc(e.state_size)
    w.trial = malloc(e.state_size)
    w.scratch = calloc(1, POLICY_SCRATCH)   # zeroed: a policy's memory starts empty
    w.values = <double*>malloc(MAX_LEGAL * sizeof(double))
    if (w.legal == NULL or w.view == NULL or w.trial == NULL or w.scratch == NULL
            or w.values == NULL):
        workspace_free(w)
        return -1
    return 0


cdef void workspace_free(Workspace* w) noexcept nogil:
    free(w.legal)
    free(w.view)
    free(w.trial)
    free(w.scratch)
    free(w.values)
    w.values = NULL
    w.legal = NULL
    w.view = NULL
    w.trial = NULL
    w.scratch = NULL


cdef inline int act_random(const Engine* e, const void* st, Rng* rng, Workspace* w) noexcept nogil:
    cdef int n = e.legal_actions(st, w.legal)
    return w.legal[rng_below(rng, n)]


cdef int act_greedy(const Engine* e, const void* st, int seat, Rng* rng,
                    Workspace* w) noexcept nogil:
    cdef int n = e.legal_actions(st, w.legal)
    cdef int i, best = w.legal[0], ties = 0
    cdef double v, best_v = -1e300
    if n == 1:
        return best
    # The engine's fast path sees only what the seat may see (contract); the generic path
    # looks ahead on a determinized view so that it never peeks at hidden information.
    if e.action_values == NULL or not e.action_values(st, seat, w.legal, n, w.values):
        e.observe(st, seat, w.view, rng)
        for i in range(n):
            memcpy(w.trial, w.view, e.state_size)
            e.apply(w.trial, w.legal[i])
            w.values[i] = e.heuristic(w.trial, seat)
    for i in range(n):
        v = w.values[i]
        if v > best_v:
            best_v = v
            best = w.legal[i]
            ties = 1
        elif v == best_v:
            # Reservoir sampling keeps each of the tied best actions with equal probability.
            ties += 1
            if rng_below(rng, ties) == 0:
                best = w.legal[i]
    return best


def action_values(State state, int seat, bint generic=False):
    """{action: heuristic value after it} for the seat to act, by the engine's fast path
    (or the generic clone+apply path); tests check that both agree exactly."""
    cdef EngineHandle h = state.handle
    cdef const Engine* e = h.engine
    cdef Workspace w
    if state.is_terminal():
        raise ValueError("the game is over")
    if workspace_init(&w, e) != 0:
        raise MemoryError()
    try:
        n = e.legal_actions(state.buf, w.legal)
        if generic or e.action_values == NULL or not e.action_values(state.buf, seat, w.legal, n, w.values):
            for i in range(n):
                memcpy(w.trial, state.buf, e.state_size)
                e.apply(w.trial, w.legal[i])
                w.values[i] = e.heuristic(w.trial, seat)
        return {w.legal[i]: w.values[i] for i in range(n)}
    finally:
        workspace_free(&w)


cdef int agent_act(const Engine* e, const void* st, int seat, const AgentSpec* a,
                   Rng* rng, Workspace* w) noexcept nogil:
    if a.kind == AGENT_GREEDY:
        return act_greedy(e, st, seat, rng, w)
    if a.kind == AGENT_POLICY and e.policy != NULL:
        return e.policy(st, a.policy, rng, w.scratch)
    return act_random(e, st, rng, w)


def agent_spec(game, name):
    """(kind, policy) for an agent name of this game; ValueError names the choices."""
    if name == "random":
        return AGENT_RANDOM, 0
    if name == "greedy":
        return AGENT_GREEDY, 0
    policies = list(game.policies)
    if name in policies:
        return AGENT_POLICY, policies.index(name)
    raise ValueError(f"unknown agent {name!r} for {game.name}; choose one of "
                     f"{sorted(game.agents)}")


def choose(State state, name, unsigned long long seed=0):
    """The action agent `name` takes in `state` (Python face, for tests and debugging)."""
    if state.is_terminal():
        raise ValueError("the game is over: no action to choose")
    kind, policy = agent_spec(state.game, name)
    cdef AgentSpec spec
    spec.kind = kind
    spec.policy = policy
    cdef EngineHandle h = state.handle
    cdef Workspace w
    cdef Rng rng
    cdef int seat = state.current_player
    rng_seed(&rng, seed, 0, 0, STREAM_SEAT + seat)
    if workspace_init(&w, h.engine) != 0:
        raise MemoryError()
    try:
        return agent_act(h.engine, state.buf, seat, &spec, &rng, &w)
    finally:
        workspace_free(&w)
