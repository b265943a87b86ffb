# cython: language_level=3
"""The Python face of the engine contract: engine handles and the generic `State` wrapper.

`State` is the same class for every game; game-specific parts (rules, the state dict codec,
action descriptions, score breakdowns) come from the game object it carries.  This face is
for tests, debugging and the API: it may be slow, the batch runner never uses it.
"""
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from libc.string cimport memcpy, memcmp, memset
from libc.stdint cimport uint64_t, int32_t

from core_cy.engine import codec

cdef extern from *:
    """
    #ifndef MEEPLELAB_CHECKED
    #define MEEPLELAB_CHECKED 0
    #endif
    """
    int MEEPLELAB_CHECKED

# Which build of the engines is loaded: "checked" (bounds checks on, for the test suite:
# MEEPLELAB_DEBUG=1 at build time) or "release" (what `pip install` builds).
BUILD = "checked" if MEEPLELAB_CHECKED else "release"
SEATS_LIMIT = MAX_SEATS   # the largest player count any engine may declare (Python face)


cdef class EngineHandle:
    """Opaque reference to one engine's C function table (created by the game modules)."""

    @property
    def num_actions(self):
        return self.engine.num_actions

    @property
    def state_size(self):
        return self.engine.state_size

    @property
    def rules_size(self):
        return self.engine.rules_size


cdef State new_state(object game, EngineHandle handle):
    """A zero-filled state buffer of the engine's size (zero so that padding compares equal)."""
    cdef State s = State.__new__(State)
    s.handle = handle
    s.game = game
    s.buf = PyMem_Malloc(handle.engine.state_size)
    if s.buf == NULL:
        raise MemoryError()
    memset(s.buf, 0, handle.engine.state_size)
    return s


cdef class State:
    """One game position.  Obtain it from `game.new(...)` or `game.from_dict(...)`."""

    def __dealloc__(self):
        if self.buf != NULL:
            PyMem_Free(self.buf)
            self.buf = NULL

    cdef void _check_alive(self) except *:
        if self.buf == NULL:
            raise ValueError("state is not initialised; use game.new() or game.from_dict()")

    @property
    def current_player(self):
        """The seat that acts next (-1 once the game is over)."""
        self._check_alive()
        if st_terminal(self.handle.engine, self.buf):
            return -1
        return st_current(self.handle.engine, self.buf)

    @property
    def num_players(self):
        self._check_alive()
        return st_players(self.handle.engine, self.buf)

    def is_terminal(self):
        self._check_alive()
        return bool(st_terminal(self.handle.engine, self.buf))

    def legal_actions(self):
        """The legal actions, ascending; empty once the game is over."""
        self._check_alive()
        cdef int buf[MAX_LEGAL]
        cdef int n
        if st_terminal(self.handle.engine, self.buf):
            return []
        n = self.handle.engine.legal_actions(self.buf, buf)
        return [buf[i] for i in range(n)]

    def search_actions(self):
        """The actions a search considers (the engine's search_actions: a subset of the legal
        actions through which every legal turn stays reachable; the legal actions where the
        engine has none), ascending; empty once the game is over."""
        self._check_alive()
        cdef int buf[MAX_LEGAL]
        cdef int n
        cdef const Engine* e = self.handle.engine
        if st_terminal(e, self.buf):
            return []
        n = (e.search_actions if e.search_actions != NULL else e.legal_actions)(self.buf, buf)
        return [buf[i] for i in range(n)]

    def apply(self, action):
        """Apply one legal action; an illegal or malformed action raises ValueError."""
        self._check_alive()
        try:
            a = int(action)
        except (TypeError, ValueError):
            raise ValueError(f"action must be an integer, got {action!r}") from None
        if a != action:
            raise ValueError(f"action must be an integer, got {action!r}")
        if st_terminal(self.handle.engine, self.buf):
            raise ValueError("the game is over: no action is legal")
        if a not in self.legal_actions():
            raise ValueError(f"illegal action {a} ({self._safe_describe(a)}) for player "
                             f"{self.current_player}")
        self.handle.engine.apply(self.buf, a)
        return self

    def _safe_describe(self, a):
        try:
            return self.describe(a)
        except ValueError:
            return "out of range"

    def clone(self):
        """An exact, independent copy (a memcpy of the state struct)."""
        self._check_alive()
        cdef State c = new_state(self.game, self.handle)
        memcpy(c.buf, self.buf, self.handle.engine.state_size)
        return c

    def __copy__(self):
        return self.clone()

    def __eq__(self, other):
        if not isinstance(other, State):
            return NotImplemented
        cdef State o = <State>other
        if o.handle is not self.handle or self.buf == NULL or o.buf == NULL:
            return False
        return memcmp(self.buf, o.buf, self.handle.engine.state_size) == 0

    def __hash__(self):
        return hash(self.to_bytes())

    def to_bytes(self):
        """The raw state struct (for hashing and exact comparisons)."""
        self._check_alive()
        return (<char*>self.buf)[:self.handle.engine.state_size]

    def scores(self):
        """Per-seat scores (final once the game is over; provisional before)."""
        self._check_alive()
        cdef double out[MAX_SEATS]
        self.handle.engine.scores(self.buf, out)
        return [out[i] for i in range(st_players(self.handle.engine, self.buf))]

    def win_shares(self):
        """Per-seat win share: 1/k for a k-way tie at the top (team 0/1 when cooperative)."""
        self._check_alive()
        if not st_terminal(self.handle.engine, self.buf):
            raise ValueError("win shares exist only once the game is over")
        cdef double out[MAX_SEATS]
        self.handle.engine.win_shares(self.buf, out)
        return [out[i] for i in range(st_players(self.handle.engine, self.buf))]

    def winners(self):
        """The winning seats (several on a shared win); [] before the end."""
        if not self.is_terminal():
            return []
        return [i for i, w in enumerate(self.win_shares()) if w > 0]

    def leaf_values(self):
        """Per seat, the engine's chance to win this running game (Engine.leaf_values: the
        search's cut-off judgement with mcts(judge=fitted)); ValueError once the game is over
        or where the engine has none."""
        self._check_alive()
        cdef double out[MAX_SEATS]
        cdef const Engine* e = self.handle.engine
        if e.leaf_values == NULL:
            raise ValueError(f"{self.game.name} has no leaf values")
        if st_terminal(e, self.buf):
            raise ValueError("leaf values exist only while the game runs (then its win shares)")
        e.leaf_values(self.buf, out)
        return [out[i] for i in range(st_players(e, self.buf))]

    def heuristic(self, seat):
        self._check_alive()
        if not 0 <= seat < st_players(self.handle.engine, self.buf):
            raise ValueError(f"seat {seat} out of range")
        return self.handle.engine.heuristic(self.buf, seat)

    @property
    def num_moves(self):
        self._check_alive()
        return st_moves(self.handle.engine, self.buf)

    @property
    def end_reason(self):
        """The end reason's name (None while the game runs)."""
        if not self.is_terminal():
            return None
        return self.game.end_reasons[st_end_reason(self.handle.engine, self.buf)]

    def outcomes(self):
        """Game-specific outcome fields: ({name: value}, [{name: value} per seat])."""
        self._check_alive()
        cdef double g[MAX_GAME_OUTCOMES]
        cdef double s[MAX_SEATS * MAX_SEAT_OUTCOMES]
        cdef int ng = self.handle.engine.num_game_outcomes
        cdef int ns = self.handle.engine.num_seat_outcomes
        self.handle.engine.outcomes(self.buf, g, s)
        names_g, names_s = self.game.game_outcome_names, self.game.seat_outcome_names
        game = {names_g[k]: g[k] for k in range(ng)}
        seats = [{names_s[k]: s[p * ns + k] for k in range(ns)}
                 for p in range(st_players(self.handle.engine, self.buf))]
        return game, seats

    # Game-specific parts, delegated to the game object.
    def describe(self, action):
        """A human-readable description of an action in this position."""
        return self.game.describe(self, action)

    def score_breakdown(self):
        return self.game.score_breakdown(self)

    def to_dict(self):
        """The full state as JSON-able data; game.from_dict() rebuilds it exactly."""
        return self.game.to_dict(self)

    def __repr__(self):
        self._check_alive()
        return (f"<{self.game.name} state: move {self.num_moves}, "
                f"{'over' if self.is_terminal() else 'player %d to act' % self.current_player}>")


cdef EngineHandle engine_handle(Engine* e, object game, const void* layout, size_t state_size,
                                const void* rules, size_t rules_size, SetupFn setup,
                                LegalFn legal_actions, ApplyFn apply, PerSeatFn scores,
                                OutcomesFn outcomes, HeuristicFn heuristic, ObserveFn observe,
                                PolicyFn policy, ActionValuesFn action_values,
                                PerSeatFn win_shares=NULL, RandomActionFn random_action=NULL,
                                LegalFn search_actions=NULL, PerSeatFn leaf_values=NULL):
    e.state_size = state_size
    e.rules_offset = <const char*>rules - <const char*>layout
    e.rules_size = rules_size
    e.setup = setup
    e.legal_actions = legal_actions
    e.apply = apply
    e.scores = scores
    e.win_shares = header_shares if win_shares == NULL else win_shares
    e.outcomes = outcomes
    e.heuristic = heuristic
    e.observe = observe
    e.policy = policy
    e.action_values = action_values
    e.random_action = random_action
    e.search_actions = search_actions
    e.leaf_values = leaf_values
    e.num_actions = len(game.actions)
    e.min_players = game.min_players
    e.max_players = game.max_players
    e.cooperative = game.cooperative
    e.num_game_outcomes = len(game.game_outcome_names)
    e.num_seat_outcomes = len(game.seat_outcome_names)
    e.num_policies = len(game.policies)
    e.num_policy_params = len(game.policy_params.names)
    if not (e.max_players <= MAX_SEATS and e.num_actions <= MAX_LEGAL
            and e.num_game_outcomes <= MAX_GAME_OUTCOMES
            and e.num_seat_outcomes <= MAX_SEAT_OUTCOMES
            and e.num_policy_params <= POLICY_PARAMS
            and e.rules_offset + rules_size <= state_size
            and e.rules_offset >= sizeof(GameHeader)):
        raise ValueError(f"{game.name}: the engine table exceeds a contract limit")
    if (e.policy == NULL) != (e.num_policies == 0):
        raise ValueError(f"{game.name}: policies {list(game.policies)} but "
                         f"{'no' if e.policy == NULL else 'a'} policy function")
    cdef EngineHandle h = EngineHandle.__new__(EngineHandle)
    h.engine = e
    return h


def engine_table(EngineHandle handle):
    """The data part of an engine table as a dict (for the catalogue test and debugging)."""
    cdef const Engine* e = handle.engine
    return {"state_size": e.state_size, "rules_size": e.rules_size,
            "num_actions": e.num_actions, "min_players": e.min_players,
            "max_players": e.max_players, "cooperative": bool(e.cooperative),
            "num_game_outcomes": e.num_game_outcomes, "num_seat_outcomes": e.num_seat_outcomes,
            "num_policies": e.num_policies, "has_policy": e.policy != NULL,
            "num_policy_params": e.num_policy_params,
            "rules_offset": e.rules_offset}


cdef Rng* _rng_of(State state) except NULL:
    state._check_alive()
    return st_rng(state.handle.engine, state.buf)


def rng_to_dict(State state):
    """The state's random stream as {"key": int, "counter": int} (to_dict's "rng")."""
    cdef Rng* r = _rng_of(state)
    return {"key": int(r.key), "counter": int(r.ctr)}


def start_state(game, bytes rules, int players, rng, where="state.rng"):
    """The opening of every from_dict: a zeroed state of game's engine with the packed rules
    and the player count in place and the random stream restored from `rng` (a to_dict
    "rng" value); the game's fill hook sets the rest."""
    cdef EngineHandle handle = game.handle
    cdef const Engine* e = handle.engine
    if len(rules) != e.rules_size:
        raise ValueError(f"packed rules have {len(rules)} bytes, engine expects {e.rules_size}")
    value = codec.Obj(rng, where)
    key = value.int("key", 0, 2**64 - 1)
    counter = value.int("counter", 0, 2**64 - 1)
    cdef State s = new_state(game, handle)
    memcpy(<char*>s.buf + e.rules_offset, <const char*>rules, e.rules_size)
    header(s.buf).players = players
    cdef Rng* r = _rng_of(s)
    r.key = key
    r.ctr = counter
    return s


def blank_state(game, EngineHandle handle):
    """A zero-filled state of the engine's size, for a game's from_dict to fill in."""
    return new_state(game, handle)


def setup_state(game, EngineHandle handle, bytes rules, int players, uint64_t seed,
                speeds=None):
    """A new game: rules packed by the game, chance drawn from stream (seed, 0, 0)."""
    if len(rules) != handle.engine.rules_size:
        raise ValueError(f"packed rules have {len(rules)} bytes, engine expects "
                         f"{handle.engine.rules_size}")
    cdef SeatParams seats[MAX_SEATS]
    cdef Rng rng
    cdef const char* r = rules
    for i in range(MAX_SEATS):
        seats[i].speed = 1.0
    if speeds is not None:
        for i, v in enumerate(speeds):
            seats[i].speed = float(v)
    rng_seed(&rng, seed, 0, 0, STREAM_CHANCE)
    cdef State s = new_state(game, handle)
    handle.engine.setup(s.buf, r, players, seats, &rng)
    return s
