# cython: language_level=3
"""Agents written once for every game, over the engine contract.

An agent is named by a string: `name` or `name(key=value, ...)`, e.g.
"mcts(iterations=400, rollout=greedy)".  `agent_spec` parses and validates it against the
agent's parameter table (ValueError naming the bad key), `canonical_agent` spells it with every
parameter (what results record per seat), `agent_catalogue` lists the agents with their
parameters as JSON schemas.
"""
import math
import time

from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memcpy, memset
from core_cy.engine.contract cimport (Engine, Rng, EngineHandle, State, MAX_LEGAL, MAX_SEATS,
                               POLICY_SCRATCH, POLICY_PARAMS, rng_seed, rng_next, rng_below,
                               rng_uniform, rng_tie_key,
                               STREAM_SEAT, st_current, st_terminal, st_players, st_rng)

include "mcts.pxi"

# Names of the generic agents; engines add their own policies by name (Game.agents).
GENERIC_AGENTS = {
    "random": "uniform random over the legal actions",
    "greedy": "one ply on the game's heuristic value for the acting seat, ties broken at random",
    "mcts": "information-set Monte Carlo tree search (UCT): hidden parts and future chance are "
            "redrawn from the acting seat's view every iteration; one value per seat is backed "
            "up (the team outcome in cooperative games)",
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


cdef int agent_init(Agent* a, const Engine* e) noexcept nogil:
    """Allocates what the agent needs for its whole life (a search agent: its tree)."""
    memset(&a.tree, 0, sizeof(Tree))
    if a.spec.kind == AGENT_MCTS:
        return tree_init(&a.tree, e, a.spec.iterations)
    return 0


cdef void agent_free(Agent* a) noexcept nogil:
    if a.spec.kind == AGENT_MCTS:
        tree_free(&a.tree)


cdef void agent_new_game(Agent* a) noexcept nogil:
    a.tree.size = 0
    a.forced = 0


cdef void agent_seen(Agent* a, int action) noexcept nogil:
    """Every agent is told every action played (its own and the others'), so that a search
    can keep the subtree of the moves that really happened."""
    if a.spec.kind == AGENT_MCTS:
        if a.spec.reuse:
            tree_advance(&a.tree, action)
        else:
            a.tree.size = 0


cdef inline int act_random(const Engine* e, const void* st, Rng* rng, Workspace* w) noexcept nogil:
    cdef int n
    if e.random_action != NULL:       # the same draw, without listing the actions
        return e.random_action(st, rng)
    n = e.legal_actions(st, w.legal)
    return w.legal[rng_below(rng, n)]


cdef void one_ply_values(const Engine* e, const void* st, int seat, const int* legal, int n,
                         double* values, void* trial) noexcept nogil:
    """values[i] = heuristic for `seat` after legal[i], by clone + apply on `st` itself.  The
    rules (rules_size bytes at rules_offset), which apply never writes, are cloned once."""
    cdef size_t head = e.rules_offset, tail = e.rules_offset + e.rules_size
    cdef int i
    for i in range(n):
        if i == 0:
            memcpy(trial, st, e.state_size)
        else:
            memcpy(trial, st, head)
            memcpy(<char*>trial + tail, <const char*>st + tail, e.state_size - tail)
        e.apply(trial, legal[i])
        values[i] = e.heuristic(trial, seat)


cdef int pick_best(const int* legal, const double* values, int n, Rng* rng) noexcept nogil:
    """The action of the highest value; reservoir sampling keeps each tied best action with
    equal probability."""
    cdef int i, best = legal[0], ties = 0
    cdef double best_v = -1e300
    for i in range(n):
        if values[i] > best_v:
            best_v = values[i]
            best = legal[i]
            ties = 1
        elif values[i] == best_v:
            ties += 1
            if rng_below(rng, ties) == 0:
                best = legal[i]
    return best


cdef inline bint of_kinds(int action, int n, const int* lo, const int* hi) noexcept nogil:
    """Whether the action is of one of n action kinds (the id blocks [lo[j], hi[j]))."""
    cdef int j
    for j in range(n):
        if lo[j] <= action < hi[j]:
            return True
    return False


cdef inline bint forbidden(const AgentSpec* s, int action) noexcept nogil:
    return of_kinds(action, s.n_forbid, s.forbid_lo, s.forbid_hi)


cdef int keep_allowed(const AgentSpec* s, int* legal, int n) noexcept nogil:
    """Restricted play: compacts `legal` to the actions the agent may play (order kept) and
    returns how many; when every one is forbidden, leaves them all (the agent plays one
    anyway; agent_act counts it)."""
    cdef int i, m = 0
    if s.n_forbid == 0:
        return n
    for i in range(n):
        if not forbidden(s, legal[i]):
            legal[m] = legal[i]      # m <= i: a forbidden action is never read again
            m += 1
    return m if m > 0 else n


cdef int act_greedy(const Engine* e, const void* st, int seat, Rng* rng,
                    Workspace* w, const AgentSpec* spec) noexcept nogil:
    cdef int n = keep_allowed(spec, w.legal, e.legal_actions(st, w.legal))
    if n == 1:
        return w.legal[0]
    # The engine's fast path sees only what the seat may see (contract); the generic path
    # looks ahead on a determinized view so that it never peeks at hidden information.
    if e.action_values == NULL or not e.action_values(st, seat, w.legal, n, w.values):
        e.observe(st, seat, w.view, rng)
        one_ply_values(e, w.view, seat, w.legal, n, w.values, w.trial)
    return pick_best(w.legal, w.values, n, rng)


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
            one_ply_values(e, state.buf, seat, w.legal, n, w.values, w.trial)
        return {w.legal[i]: w.values[i] for i in range(n)}
    finally:
        workspace_free(&w)


def random_choice(State state, seed, bint generic=False):
    """The random agent's action in `state`, drawn from a stream seeded with `seed`: through
    the engine's random_action when it has one, or from the listed legal actions (generic);
    tests check that both agree exactly."""
    cdef EngineHandle h = state.handle
    cdef Engine engine = h.engine[0]
    cdef Workspace w
    cdef Rng rng
    if state.is_terminal():
        raise ValueError("the game is over")
    if generic:
        engine.random_action = NULL    # act_random then draws from the listed actions
    rng_seed(&rng, seed, 0, 0, 0)
    if workspace_init(&w, &engine) != 0:
        raise MemoryError()
    try:
        return act_random(&engine, state.buf, &rng, &w)
    finally:
        workspace_free(&w)


cdef int agent_act(const Engine* e, const void* st, int seat, Agent* a,
                   Rng* rng, Workspace* w) noexcept nogil:
    cdef int i, n
    if a.spec.n_forbid > 0:    # restricted play: count the decisions with nothing allowed
        n = e.legal_actions(st, w.legal)
        for i in range(n):
            if not forbidden(&a.spec, w.legal[i]):
                break
        else:
            a.forced += 1
        if a.spec.kind == AGENT_RANDOM:     # uniform over the allowed actions
            n = keep_allowed(&a.spec, w.legal, n)
            return w.legal[rng_below(rng, n)]
    if a.spec.kind == AGENT_GREEDY:
        return act_greedy(e, st, seat, rng, w, &a.spec)
    if a.spec.kind == AGENT_MCTS:
        return mcts_act(e, st, seat, &a.spec, &a.tree, rng)
    if a.spec.kind == AGENT_POLICY and e.policy != NULL:
        return e.policy(st, a.spec.policy, a.spec.params, rng, w.scratch)
    return act_random(e, st, rng, w)


# ---- the agent grammar and parameters (Python side) --------------------------------------

class Param:
    """One agent parameter: its type, default and bounds (a JSON schema for the catalogue)."""

    def __init__(self, name, kind, default, description, minimum=None, maximum=None,
                 choices=()):
        self.name, self.kind, self.default, self.description = name, kind, default, description
        self.minimum, self.maximum, self.choices = minimum, maximum, tuple(choices)

    def json_schema(self):
        schema = {"type": {"int": "integer", "float": "number", "enum": "string",
                           "bool": "boolean", "kinds": "string"}[self.kind],
                  "default": self.default, "description": self.description}
        if self.choices and self.kind == "kinds":
            schema["x-kinds"] = list(self.choices)
        elif self.choices:
            schema["enum"] = list(self.choices)
        if self.minimum is not None:
            schema["minimum"] = self.minimum
        if self.maximum is not None:
            schema["maximum"] = self.maximum
        return schema

    def parse(self, agent, text):
        """The value of `text` (as written in an agent string); ValueError names the key."""
        where = f"parameter '{self.name}' of agent {agent!r}"
        if self.kind == "kinds":    # action kinds joined by '+', spelled in the game's order
            names = [k.strip() for k in text.split("+")]
            bad = [k for k in names if k not in self.choices]
            if bad or len(set(names)) != len(names) or len(names) > MAX_FORBID:
                raise ValueError(f"{where} must name at most {MAX_FORBID} different action "
                                 f"kinds joined by '+', from {list(self.choices)}; got {text!r}")
            return "+".join(k for k in self.choices if k in names)
        if self.kind == "enum":
            if text not in self.choices:
                raise ValueError(f"{where} must be one of {list(self.choices)}, got {text!r}")
            return text
        if self.kind == "bool":
            if text.lower() not in ("true", "false"):
                raise ValueError(f"{where} must be true or false, got {text!r}")
            return text.lower() == "true"
        try:
            value = int(text) if self.kind == "int" else float(text)
        except ValueError:
            raise ValueError(f"{where} must be {'an integer' if self.kind == 'int' else 'a number'}"
                             f", got {text!r}") from None
        if not math.isfinite(value):
            raise ValueError(f"{where} must be finite, got {text!r}")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"{where} must be >= {self.minimum}, got {text}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"{where} must be <= {self.maximum}, got {text}")
        return value

    def spell(self, value):
        if self.kind == "bool":
            return "true" if value else "false"
        if self.kind == "float":
            return repr(float(value))
        return str(value)

    def for_game(self, game, value):
        """This parameter with `game`'s own default (Game.search_defaults), checked as an agent
        string's value would be; the description names both defaults."""
        try:
            default = self.parse("mcts", self.spell(value))
        except ValueError as err:
            raise ValueError(f"{game.name}.search_defaults: {err}") from None
        note = (f" [{game.title}: default {self.spell(default)}; "
                f"the generic default is {self.spell(self.default)}]")
        return Param(self.name, self.kind, default, self.description + note, self.minimum,
                     self.maximum, self.choices)


# The generic rollout policies; `quick` is the game's engine policy of that name where it has
# one (a cheap estimate that plays close to greedy and keeps no memory between its calls, so
# that a rollout need not clear the policy scratch), else the greedy move.
QUICK = "quick"
ROLLOUT_KINDS = ("random", "greedy", "none", QUICK)


def mcts_params(game):
    """The search's parameters with the generic defaults; the rollout policies are the generic
    ones plus the game's.  A game may replace defaults (Game.search_defaults; the table in
    force is game_mcts_params).

    The generic defaults answer a balance question within the budget goal of issue 10 and beat
    greedy clearly in every game (benchmarks/agents.py `budget` and `strength`): 200 iterations
    that count the visits of the subtree kept from the previous decision (top_up; a turn of
    several decisions by one seat costs about one search), greedy rollouts over every legal
    action cut off after 4 moves.  Measured on this 2-core machine: 3-player Maori about 0.10
    CPU s a game (9,000 games in under 8 min on 2 cores), against 0.25 with 400 iterations and
    no top up; sampled greedy rollouts (sample=4) cost Maori strength (0.80 against 0.93-0.97
    vs greedy) and shorter cut-offs cost the Golden Island (cutoff=1: 0.44).  They miss the
    speed goal (simulated moves per CPU second at least half the random agent's): greedy
    rollouts reach 0.12-0.20 of it.  Quick rollouts (the games' cheap `quick` policies) meet
    it and keep the strength in every game with the game's cut-off, and with progressive
    widening (widen) where a node offers many actions (Mondo, the Golden Island): those are
    the four games' own defaults (Game.search_defaults; README, benchmarks/agents.py)."""
    return (
        Param("iterations", "int", 200, "simulations per decision (with top_up, counting the "
              "visits kept from the previous decision); 200 answers a 9,000-game Maori seat "
              "question in under 10 min on 2 cores", 1, 100_000),
        Param("exploration", "float", 0.7, "the UCT exploration constant (values lie in [0, 1])",
              0.0, 100.0),
        Param("rollout", "enum", "greedy", "the policy that plays out a simulation: greedy, "
              "random, none (no rollout moves: the heuristic judges the new leaf), quick (the "
              "game's cheap `quick` policy where it has one, else greedy) or an engine "
              "policy; greedy unless a game sets its own (random rollouts with cutoff=8 win "
              "0.18 of Maori and none of Mondo against greedy; quick rollouts simulate "
              "0.5-0.76 of the random agent's moves per second against greedy's 0.12-0.20 "
              "and, with the game's cut-off and widening, beat greedy 0.83-0.93: the "
              "default of Maori, Mondo, Reef Encounter and the Golden Island)",
              choices=ROLLOUT_KINDS + tuple(p for p in game.policies if p != QUICK)),
        Param("expand", "enum", "greedy", "which untried action a node tries first: the best "
              "by the one-ply heuristic, or one at random", choices=("greedy", "random")),
        Param("cutoff", "int", 4, "rollout moves after which the game's heuristic judges the "
              "position (0: play to the end); 4 is about two turns (shorter loses strength "
              "in the Golden Island, longer costs time)", 0, 100_000),
        Param("epsilon", "float", 0.0, "greedy rollouts: the share of moves played at random "
              "instead (cheaper, and rollouts do not stall where the one-ply choice does)",
              0.0, 1.0),
        Param("sample", "int", 0, "greedy rollouts: value only this many legal actions, "
              "drawn at random, and play the best of them (0: all; cheaper where actions are "
              "many, weaker where the exact greedy move matters, as in Maori)", 0, MAX_LEGAL),
        Param("reuse", "bool", True, "keep the searched subtree of the moves actually played"),
        Param("top_up", "bool", True, "with reuse: the kept subtree's visits count towards "
              "the iterations (a decision runs only the simulations the kept subtree lacks, "
              "at least one)"),
        Param("margin", "float", 0.0, "weight of the relative score margin next to the win "
              "share in a finished simulation's value", 0.0, 1.0),
        Param("widen", "float", 0.0, "progressive widening: a node tries a new action only "
              "while it has fewer than 1 + widen * sqrt(visits) children, the best by the "
              "one-ply order first (0: every legal action is tried once before any twice; "
              "where hundreds are legal, as in Mondo, a budget of 200 then gives each of the "
              "best 200 one rollout and the luckiest wins)", 0.0, 100.0),
        Param("turns", "bool", False, "the tree searches the engine's turn-level choices "
              "where it has them: the legal actions less the steps whose effect another order "
              "of the same turn reaches too (Reef Encounter: a shrimp moved again before "
              "anything else happened), so every legal turn stays reachable"),
        Param("stop", "bool", False, "end a decision's simulations once the most visited "
              "root action leads every other by more than the simulations left (the choice "
              "is the one the whole budget makes; the subtree kept for the next decision is "
              "smaller)"),
        Param("stop_lead", "float", 1.0, "with stop: the lead that ends a decision, as a share "
              "of the simulations left (1: only a lead no simulation left can overturn; less "
              "also stops a choice that the remaining simulations would most likely keep)",
              0.05, 1.0),
        Param("light", "kinds", "", "action kinds whose decisions need little search, joined by "
              "'+': a decision where one of them is legal runs light_iterations simulations "
              "instead of iterations (e.g. Mondo's placements, light=place: the tile is "
              "already chosen)", choices=tuple(k.name for k in game.actions.kinds)),
        Param("light_iterations", "int", 50, "simulations of a light decision (with light; at "
              "most iterations)", 1, 100_000),
        Param("judge", "enum", "margin", "what values a rollout cut off before the end: "
              "margin (a logistic of the seat's heuristic margin over its best rival) or "
              "fitted (the engine's chances to win fitted to game outcomes, where it has "
              "them and a seat has rivals; else margin)", choices=("margin", "fitted")),
        Param("prior", "enum", "none", "a move prior in the tree (the game's conditional "
              "logit over the legal actions on their one-ply values and kinds, fitted to the "
              "search's own choices, data/move_prior.json): none; order (a node tries its "
              "untried actions most probable first); fitted (that order, and selection adds "
              "exploration x prior x sqrt(visits of the parent) / (1 + visits), PUCT, "
              "instead of the UCB1 term)", choices=("none", "order", "fitted")),
    )


def game_mcts_params(game):
    """The search's parameters with `game`'s own defaults (Game.search_defaults) in place of
    the generic ones; ValueError names an unknown parameter or a bad value."""
    table = mcts_params(game)
    unknown = set(game.search_defaults) - {p.name for p in table}
    if unknown:
        raise ValueError(f"{game.name}.search_defaults: unknown mcts parameter(s) "
                         f"{sorted(unknown)}; known: {[p.name for p in table]}")
    return tuple(p.for_game(game, game.search_defaults[p.name])
                 if p.name in game.search_defaults else p for p in table)


# ---- a game's parameters of its own policies ---------------------------------------------

# What a policy parameter may be: each travels to the engine as one double of the block.
POLICY_PARAM_KINDS = ("int", "float", "bool")
POLICY_PARAM_FIELDS = ("name", "kind", "default", "description", "minimum", "maximum",
                       "policies")


class PolicyParams:
    """The parameters of a game's engine policies (planners), declared in the game's folder
    apart from its rule options: one table, in the order of the parameter block the engine
    policy reads (Engine.policy's `params`: one double each, a bool as 0 or 1), and for each
    parameter the policies that take it.  An agent string gives them like mcts's
    (`team_search(team_beam=16)`); the others keep their defaults."""

    def __init__(self, params=(), takes=None):
        self.params = tuple(params)
        self.names = tuple(p.name for p in self.params)
        self.takes = {name: tuple(policies) for name, policies in (takes or {}).items()}
        if len(self.params) > POLICY_PARAMS:
            raise ValueError(f"{len(self.params)} policy parameters; a block holds at most "
                             f"{POLICY_PARAMS} (POLICY_PARAMS)")

    def of(self, policy):
        """The parameter table of `policy` (empty for a policy without parameters)."""
        return tuple(p for p in self.params if policy in self.takes[p.name])

    def defaults(self):
        return {p.name: p.default for p in self.params}

    def block(self, values=None):
        """The block of doubles for Engine.policy: the defaults, updated by `values`, padded
        to the contract's POLICY_PARAMS."""
        given = {**self.defaults(), **(values or {})}
        out = [float(given[name]) for name in self.names]
        return out + [0.0] * (POLICY_PARAMS - len(out))


NO_POLICY_PARAMS = PolicyParams()


def policy_params_from_data(package, name, policies):
    """A game's PolicyParams from the TOML file `name` of its package (parse_policy_params
    reads its [[param]] rows)."""
    from core_cy.engine import codec

    return parse_policy_params(codec.load_data(package, name).get("param", []), policies, name)


def parse_policy_params(rows, policies, where="policy parameters"):
    """PolicyParams from rows (one dict per parameter, in block order) with name, kind (int,
    float or bool), default, description, minimum and maximum (optional) and policies (the
    names, from `policies`, of the policies that take it).  ValueError names the row and
    field at fault."""
    params, takes = [], {}
    for i, row in enumerate(rows):
        at = f"{where}: param[{i}]"
        if not isinstance(row, dict) or not set(row) <= set(POLICY_PARAM_FIELDS) or not {
                "name", "kind", "default", "description", "policies"} <= set(row):
            raise ValueError(f"{at} needs name, kind, default, description and policies, "
                             f"and has only fields from {list(POLICY_PARAM_FIELDS)}: {row!r}")
        if row["kind"] not in POLICY_PARAM_KINDS:
            raise ValueError(f"{at}.kind must be one of {list(POLICY_PARAM_KINDS)}, got "
                             f"{row['kind']!r}")
        named = row["policies"]
        if not isinstance(named, list) or not named or not set(named) <= set(policies):
            raise ValueError(f"{at}.policies must name policies of the game "
                             f"{sorted(policies)}, got {named!r}")
        if row["name"] in takes:
            raise ValueError(f"{at}: parameter {row['name']!r} is declared twice")
        param = Param(row["name"], row["kind"], row["default"], row["description"],
                      row.get("minimum"), row.get("maximum"))
        try:
            param.default = param.parse(named[0], param.spell(row["default"]))
        except ValueError as err:
            raise ValueError(f"{at}.default: {err}") from None
        params.append(param)
        takes[param.name] = named
    return PolicyParams(params, takes)


def forbid_param(game):
    """Restricted play: the action kinds an agent does not play (Jaffe et al. 2012)."""
    kinds = tuple(k.name for k in game.actions.kinds)
    return Param("forbid", "kinds", "", FORBID_HELP, choices=kinds)


FORBID_HELP = ("restricted play: action kinds this agent does not play while another action "
               "is legal, joined by '+' (e.g. forbid=steal+pass); a search keeps them out of "
               "its own decisions in the tree too (its rollouts play by their policy).  A "
               "decision where every legal action is forbidden plays one anyway and is "
               "counted (the seat_forced column)")


def agent_params(game, name):
    """The parameter table of agent `name` (empty for an agent without parameters): the
    search's, a policy's own, and restricted play (forbid) for random, greedy and mcts."""
    if name == "mcts":
        return game_mcts_params(game) + (forbid_param(game),)
    if name in ("random", "greedy"):
        return (forbid_param(game),)
    if name in game.policies:
        return game.policy_params.of(name)
    return ()


def agent_catalogue(game):
    """Agent name -> {"description", "parameters": JSON schema} for `game`."""
    out = {}
    for name, description in game.agents.items():
        params = agent_params(game, name)
        own = [p for p in params if p.name in game.search_defaults] if name == "mcts" else []
        if own:
            description += (f" ({game.title}'s own defaults: "
                            + ", ".join(f"{p.name}={p.spell(p.default)}" for p in own) + ")")
        out[name] = {"description": description,
                     "parameters": {"type": "object", "additionalProperties": False,
                                    "properties": {p.name: p.json_schema() for p in params}}}
    return out


_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME_CHARS = _NAME_START | frozenset("0123456789")


def _split_agent(text):
    """(name, body or None) of `name` or `name(body)` with spaces around either, or None when
    `text` is written otherwise.  One linear scan (a regex with two starred groups around an
    optional one backtracked quadratically on a long run of spaces)."""
    text = text.strip()
    end = 0
    while end < len(text) and text[end] in (_NAME_START if end == 0 else _NAME_CHARS):
        end += 1
    if end == 0:
        return None
    rest = text[end:].lstrip()
    if not rest:
        return text[:end], None
    if rest[0] != "(" or rest[-1] != ")" or len(rest) < 2:
        return None
    return text[:end], rest[1:-1]


def _shown(text, limit=80):
    """`text` as an error message quotes it: its repr, cut to about `limit` characters."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text):,} characters)"


def parse_agent(game, text):
    """(name, {parameter: value}) with every parameter filled in; ValueError names the
    problem (an unknown agent, a malformed string, an unknown or bad parameter)."""
    if not isinstance(text, str):
        raise ValueError(f"an agent must be a string such as 'random' or 'mcts(iterations=400)'"
                         f", got {text!r}")
    parts = _split_agent(text)
    if parts is None:
        raise ValueError(f"agent {_shown(text)} must be written name or name(key=value, ...) "
                         f"with name one of {sorted(game.agents)}")
    name, body = parts
    if name not in game.agents:
        raise ValueError(f"unknown agent {name!r} for {game.name}; choose one of "
                         f"{sorted(game.agents)}")
    table = {p.name: p for p in agent_params(game, name)}
    values = {p.name: p.default for p in table.values()}
    seen = set()
    for item in ([] if body is None or not body.strip() else body.split(",")):
        key, eq, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not eq or not key or not raw:
            raise ValueError(f"agent {_shown(text)}: parameters must be written key=value, got "
                             f"{_shown(item.strip())}")
        if key not in table:
            raise ValueError(f"unknown parameter {key!r} of agent {name!r}"
                             + (f"; known parameters: {sorted(table)}" if table
                                else " (it takes no parameters)"))
        if key in seen:
            raise ValueError(f"parameter {key!r} of agent {name!r} is given twice")
        seen.add(key)
        values[key] = table[key].parse(name, raw)
    if values.get("prior", "none") != "none" and game.move_prior is None:
        raise ValueError(f"parameter 'prior' of agent {name!r}: {game.name} has no fitted "
                         f"move prior (data/move_prior.json)")
    if values.get("light") and values["light_iterations"] > values["iterations"]:
        raise ValueError(f"parameter 'light_iterations' of agent {name!r} must be at most its "
                         f"iterations ({values['iterations']}), got {values['light_iterations']}")
    return name, values


def canonical_agent(game, text):
    """The agent spelled with every parameter, e.g. 'mcts(iterations=400, exploration=0.7,
    rollout=random, cutoff=0, reuse=true, margin=0.0)'; a plain name stays as it is."""
    name, values = parse_agent(game, text)
    unused = set() if values.get("light") else {"light", "light_iterations"}
    if not values.get("forbid"):
        unused.add("forbid")
    if not values.get("stop") or values.get("stop_lead") == 1.0:
        unused.add("stop_lead")
    if values.get("prior") == "none":     # the searches before the prior spell as they did
        unused.add("prior")
    table = [p for p in agent_params(game, name) if p.name not in unused]
    if not table:     # no parameters, or only an unused forbid: the name alone
        return name
    return f"{name}(" + ", ".join(f"{p.name}={p.spell(values[p.name])}" for p in table) + ")"


def agent_spec(game, text):
    """The fields of the C AgentSpec for agent string `text` of this game (a dict)."""
    name, values = parse_agent(game, text)
    policies = list(game.policies)
    kinds = [game.actions[k] for k in values.pop("forbid", "").split("+") if k]
    light = [game.actions[k] for k in values.pop("light", "").split("+") if k]
    spec = {"kind": AGENT_RANDOM, "policy": 0, "params": NO_POLICY_PARAMS.block(),
            "iterations": 1, "exploration": 0.0,
            "rollout_kind": AGENT_RANDOM, "rollout_policy": 0, "rollout_memory": False,
            "expand": AGENT_RANDOM,
            "cutoff": 0, "epsilon": 0.0, "sample": 0, "reuse": False, "top_up": False, "margin": 0.0,
            "widen": 0.0, "turns": False, "stop": False, "stop_lead": 1.0, "fitted": False,
            "prior": PRIOR_NONE, "n_kinds": 0, "kind_lo": [0] * MAX_KINDS,
            "prior_value": [0.0] * MAX_KINDS, "prior_offset": [0.0] * MAX_KINDS,
            "n_forbid": len(kinds),
            "forbid_lo": [k.base for k in kinds] + [0] * (MAX_FORBID - len(kinds)),
            "forbid_hi": [k.base + k.size for k in kinds] + [0] * (MAX_FORBID - len(kinds)),
            "light_iterations": 0, "n_light": len(light),
            "light_lo": [k.base for k in light] + [0] * (MAX_FORBID - len(light)),
            "light_hi": [k.base + k.size for k in light] + [0] * (MAX_FORBID - len(light))}
    if name == "greedy":
        spec["kind"] = AGENT_GREEDY
    elif name in policies:
        spec.update(kind=AGENT_POLICY, policy=policies.index(name),
                    params=game.policy_params.block(values))
    elif name == "mcts":
        rollout = values.pop("rollout")
        spec.update(values, kind=AGENT_MCTS, fitted=values.pop("judge") == "fitted",
                    prior=("none", "order", "fitted").index(values.pop("prior")),
                    expand=AGENT_GREEDY if values["expand"] == "greedy" else AGENT_RANDOM)
        if spec["prior"]:
            every = game.actions.kinds
            weights, pad = game.move_prior, MAX_KINDS - len(every)
            spec.update(n_kinds=len(every), kind_lo=[k.base for k in every] + [0] * pad,
                        prior_value=[weights[k.name][0] for k in every] + [0.0] * pad,
                        prior_offset=[weights[k.name][1] for k in every] + [0.0] * pad)
        if rollout == "greedy":
            spec["rollout_kind"] = AGENT_GREEDY
        elif rollout == "none":
            spec["rollout_kind"] = AGENT_NONE
        elif rollout in policies:     # a game's quick policy keeps no memory (QUICK)
            spec.update(rollout_kind=AGENT_POLICY, rollout_policy=policies.index(rollout),
                        rollout_memory=rollout != QUICK, params=game.policy_params.block())
        elif rollout == QUICK:     # a game without a quick policy plays greedy moves
            spec["rollout_kind"] = AGENT_GREEDY
    return spec


cdef void fill_spec(AgentSpec* s, dict d) except *:
    s[0] = d   # Cython fills the struct field by field (a key missing: ValueError)


cdef class Agents:
    """Agents for the seats of a batch (Python-owned, so their memory is freed even when a
    batch is interrupted): each with its own tree, allocated once."""

    def __cinit__(self, EngineHandle handle, list specs):
        self.count = 0
        self.agents = <Agent*>calloc(max(len(specs), 1), sizeof(Agent))
        if self.agents == NULL:
            raise MemoryError()
        for d in specs:
            fill_spec(&self.agents[self.count].spec, d)
            if agent_init(&self.agents[self.count], handle.engine) != 0:
                raise MemoryError()
            self.count += 1

    def __dealloc__(self):
        cdef int i
        if self.agents != NULL:
            for i in range(self.count):
                agent_free(&self.agents[i])
            free(self.agents)
            self.agents = NULL

    def memory_bytes(self, EngineHandle handle):
        """Bytes held by each agent's search buffers (0 for agents without a tree)."""
        return [tree_bytes(&self.agents[i].tree, handle.engine)
                if self.agents[i].spec.kind == AGENT_MCTS else 0 for i in range(self.count)]


def memory_bytes(game, text):
    """The fixed memory one agent of this kind holds for searching (bytes; 0 without a tree)."""
    cdef Agents a = Agents(game.handle, [agent_spec(game, text)])
    return a.memory_bytes(game.handle)[0]


def choose(State state, name, unsigned long long seed=0):
    """The action agent `name` (an agent string) takes in `state` (Python face, for tests and
    debugging); a search starts from an empty tree."""
    if state.is_terminal():
        raise ValueError("the game is over: no action to choose")
    cdef EngineHandle h = state.handle
    cdef Agents agents = Agents(h, [agent_spec(state.game, name)])
    cdef Workspace w
    cdef Rng rng
    cdef int seat = state.current_player
    rng_seed(&rng, seed, 0, 0, STREAM_SEAT + seat)
    if workspace_init(&w, h.engine) != 0:
        raise MemoryError()
    try:
        return agent_act(h.engine, state.buf, seat, &agents.agents[0], &rng, &w)
    finally:
        workspace_free(&w)


def search_stats(State state, name, unsigned long long seed=0, bint generic=False,
                 bint timed=False):
    """({action: visits} at the root, moves simulated) after agent `name` (an mcts agent
    string) searched `state` from an empty tree with the seed `choose` uses (for tests,
    debugging and benchmarks); generic=True hides the engine's random_action fast path, so
    that tests can check that it changes nothing.  timed=True appends the CPU seconds of the
    search alone (tree and rollouts; not the parsing, the allocation or the result dict), so
    that benchmarks/agents.py speed times only what it counts."""
    spec = agent_spec(state.game, name)
    if spec["kind"] != AGENT_MCTS:
        raise ValueError(f"agent {name!r} does not search")
    if state.is_terminal():
        raise ValueError("the game is over: nothing to search")
    cdef EngineHandle h = state.handle
    cdef Agents agents = Agents(h, [spec])
    cdef Tree* t = &agents.agents[0].tree
    cdef Rng rng
    cdef int seat = state.current_player, c
    cdef Engine engine = h.engine[0]
    if generic:
        engine.random_action = NULL
    rng_seed(&rng, seed, 0, 0, STREAM_SEAT + seat)
    start = time.process_time()
    with nogil:
        mcts_act(&engine, state.buf, seat, &agents.agents[0].spec, t, &rng)
    cpu = time.process_time() - start
    visits = {}
    c = t.nodes[t.root].child if t.size > 0 else -1
    while c >= 0:
        visits[t.nodes[c].action] = t.nodes[c].visits
        c = t.nodes[c].sibling
    return (visits, t.moves, cpu) if timed else (visits, t.moves)


def decision_iterations(State state, name, int plies, unsigned long long seed=0):
    """Plays `plies` decisions from `state` (left as it is) with one search agent `name`
    choosing for every seat and told every move, as in a batch; returns, per decision, the
    root visits kept from the previous decision and the root visits after the search (None
    where only one action was legal)."""
    spec = agent_spec(state.game, name)
    if spec["kind"] != AGENT_MCTS:
        raise ValueError(f"agent {name!r} does not search")
    cdef EngineHandle h = state.handle
    cdef const Engine* e = h.engine
    cdef Agents agents = Agents(h, [spec])
    cdef Agent* a = &agents.agents[0]
    cdef State sim = state.clone()
    cdef Workspace w
    cdef Rng rng
    cdef int action, kept
    rng_seed(&rng, seed, 0, 0, STREAM_SEAT)
    if workspace_init(&w, e) != 0:
        raise MemoryError()
    out = []
    try:
        for _ in range(plies):
            if sim.is_terminal():
                break
            kept = a.tree.nodes[a.tree.root].visits if a.tree.size > 0 else 0
            searched = len(sim.legal_actions()) > 1    # else the agent plays it unsearched
            action = agent_act(e, sim.buf, st_current(e, sim.buf), a, &rng, &w)
            out.append((kept, a.tree.nodes[a.tree.root].visits) if searched else None)
            e.apply(sim.buf, action)
            agent_seen(a, action)
    finally:
        workspace_free(&w)
    return out


def search_priors(State state, name, unsigned long long seed=0):
    """{action: the move prior's probability stored in its root child} after agent `name`
    (an mcts string with prior=fitted) searched `state` as search_stats does (for tests)."""
    spec = agent_spec(state.game, name)
    if spec["kind"] != AGENT_MCTS or spec["prior"] == PRIOR_NONE:
        raise ValueError(f"agent {name!r} does not search with a move prior")
    if state.is_terminal():
        raise ValueError("the game is over: nothing to search")
    cdef EngineHandle h = state.handle
    cdef Agents agents = Agents(h, [spec])
    cdef Tree* t = &agents.agents[0].tree
    cdef Rng rng
    cdef int seat = state.current_player, c
    rng_seed(&rng, seed, 0, 0, STREAM_SEAT + seat)
    with nogil:
        mcts_act(h.engine, state.buf, seat, &agents.agents[0].spec, t, &rng)
    out = {}
    c = t.nodes[t.root].child if t.size > 0 else -1
    while c >= 0:
        out[t.nodes[c].action] = t.nodes[c].prior
        c = t.nodes[c].sibling
    return out


def search_visits(State state, name, unsigned long long seed=0):
    """{action: visits} at the root (search_stats)."""
    return search_stats(state, name, seed)[0]
