"""Position builder and action encoders for the Maori rule tests.

Tests set up exact positions through `game.from_dict(...)` (the state-dict format of
MaoriGame.to_dict) with a custom tile list (rules={"tiles": [...]}): every tile a test names
gets an id in the order it is added, and filler tiles (plain water) pad the list to the 16
non-volcano tiles a tile list needs; fillers lie in the box, out of the game.

Board cells are (row, col); the standard side is 4 x 5 with printed land at (0,3), (0,4),
(3,0), (3,1) (spec section 2.4) and 2 printed boats.
"""
from __future__ import annotations

import copy

import core_cy

GAME = core_cy.load("maori")
COLS = 5

ACTIONS = GAME.actions   # the engine's action kinds by name (core_cy/engine/actions.py)
TRACK = 16
PASS = ACTIONS.encode("pass")


# ---- action encoders, one per kind (test coordinates: k counts from 1, cells are (r, c)) ----
def SHIP_START(p):
    return ACTIONS.encode("ship_start", position=p)


def MOVE(d):
    """Move the explorer ship d >= 1 steps clockwise."""
    return ACTIONS.encode("move", distance=d)


def cell(r, c):
    return r * COLS + c


def TAKE(k, r, c, rot=0):
    """Take the k-th tile (1 = next to the ship) of the faced line and place it on (r, c)."""
    return ACTIONS.encode("take", k=k - 1, cell=cell(r, c), rotation=rot)


def STORE(k):
    return ACTIONS.encode("store", k=k - 1)


def FROM_STORE(r, c, rot=0):
    return ACTIONS.encode("from_store", cell=cell(r, c), rotation=rot)


def REMOVE(r, c):
    return ACTIONS.encode("remove", cell=cell(r, c))


def SMALL_SHIP(r, c):
    """Advanced mode, step 3: move the small ship to (r, c) (its own cell = stay)."""
    return ACTIONS.encode("small_ship", cell=cell(r, c))


# ---- action decoders over a list of legal actions ----------------------------------------
def params(a):
    return ACTIONS.decode(a)[1]


def takes(actions):
    return ACTIONS.select(actions, "take")


def take_k(a):
    return params(a)["k"] + 1


def take_cell(a):
    return divmod(params(a)["cell"], COLS)


def take_rot(a):
    return params(a)["rotation"]


def moves(actions):
    return sorted(params(a)["distance"] for a in ACTIONS.select(actions, "move"))


def stores(actions):
    return sorted(params(a)["k"] + 1 for a in ACTIONS.select(actions, "store"))


def from_stores(actions):
    return ACTIONS.select(actions, "from_store")


def removes(actions):
    return sorted(divmod(params(a)["cell"], COLS) for a in ACTIONS.select(actions, "remove"))


def small_ships(actions):
    return sorted(divmod(params(a)["cell"], COLS) for a in ACTIONS.select(actions, "small_ship"))


# ---- tiles (spec section 2.2); keyword symbols default to none -------------------------
def T(shape, open="", palms=0, hut=0, boats=0, shells=0, lei=""):
    return {"shape": shape, "open": open, "palms": palms, "hut": hut, "boats": boats,
            "shells": shells, "lei": lei}


def SINGLE(palms=1, **kw):
    return T("SINGLE", "", palms, **kw)


def END(open, palms=1, **kw):
    return T("END", open, palms, **kw)


def MID(axis, palms=1, **kw):
    return T("MIDDLE", axis, palms, **kw)


def WATER(**kw):
    return T("WATER", **kw)


def VOLCANO():
    return T("VOLCANO")


FILLER = WATER()


class Pos:
    """A position under construction.  Call build() for the engine state."""

    def __init__(self, players=2, rules=None, *, phase="move", current=0, ship=0,
                 shells=None, bank=None):
        self.players = players
        self.rules = dict(rules or {})
        self.tiles = []
        self.display = [[None] * 4 for _ in range(4)]
        self.boards = [dict() for _ in range(players)]
        self.storage = [None] * players
        self.small_ship = [None] * players
        self.pile = []          # bottom first; the last entry is drawn next
        self.box = []
        self.shells = list(shells) if shells is not None else [5] * players
        self.bank = bank
        self.phase, self.current, self.ship = phase, current, ship
        self.end_trigger = None
        self.extra = {}

    def add(self, spec) -> int:
        self.tiles.append(dict(spec))
        return len(self.tiles) - 1

    def disp(self, r, c, spec):
        self.display[r][c] = self.add(spec)
        return self.display[r][c]

    def line(self, slots, spec_list):
        """Put specs (None = empty slot) on display slots [(r, c), ...]."""
        return [None if s is None else self.disp(r, c, s) for (r, c), s in zip(slots, spec_list)]

    def put(self, seat, r, c, spec, rot=0):
        t = self.add(spec)
        self.boards[seat][(r, c)] = (t, rot)
        return t

    def store(self, seat, spec):
        self.storage[seat] = self.add(spec)
        return self.storage[seat]

    def pile_push(self, spec):
        """Add a tile on top of the draw pile (drawn before the ones added earlier)."""
        t = self.add(spec)
        self.pile.append(t)
        return t

    def build_dict(self) -> dict:
        tiles = list(self.tiles)
        box = list(self.box)
        while sum(t["shape"] != "VOLCANO" for t in tiles) < 16:
            tiles.append(dict(FILLER))
            box.append(len(tiles) - 1)
        rules = {**self.rules, "tiles": tiles}
        base = GAME.new(self.players, rules=rules, seed=0).to_dict()
        r_rows = len(base["seats"][0]["board"])
        r_cols = len(base["seats"][0]["board"][0])
        total = base["rules"]["total_shells"]
        seats = []
        for i in range(self.players):
            board = [[None] * r_cols for _ in range(r_rows)]
            for (r, c), (t, rot) in self.boards[i].items():
                board[r][c] = {"tile": t, "rotation": rot}
            seats.append({**base["seats"][i], "shells": self.shells[i],
                          "storage": self.storage[i],
                          "small_ship": None if self.small_ship[i] is None else list(self.small_ship[i]),
                          "board": board})
        # Every field as to_dict writes it (from_dict takes nothing less): the new game's
        # counters and rules, the position's own fields, the random stream at key 0.
        d = {
            **base, "phase": self.phase, "current_player": self.current,
            "ship_position": self.ship,
            "bank": total - sum(self.shells) if self.bank is None else self.bank,
            "display": copy.deepcopy(self.display), "pile": list(self.pile), "box": box,
            "end_trigger": self.end_trigger, "terminal": False, "end_reason": "running",
            "rng": {"key": 0, "counter": 0}, "seats": seats,
        }
        d.update(self.extra)
        return d

    def build(self):
        return GAME.from_dict(self.build_dict())


def d(state):
    return state.to_dict()


def play_turn(state, distance=1, discover=PASS):
    """One basic-game turn: move the ship, then discover."""
    state.apply(MOVE(distance))
    state.apply(discover)
    return state


def finish(state):
    """End the game now, as the rules would: declare the seat before the current one the
    end trigger and let every other seat take its last turn (move 1, do nothing).  The
    current seat must be in phase 'move' and nobody may be able to lose shells by moving 1."""
    dd = state.to_dict()
    dd["end_trigger"] = (dd["current_player"] - 1) % dd["players"]
    s = GAME.from_dict(dd)
    while not s.is_terminal():
        phase = s.to_dict()["phase"]
        if phase == "move":
            s.apply(MOVE(1))
        elif phase == "discover":
            s.apply(PASS)
        else:  # small ship: stay
            s.apply(s.legal_actions()[0])
    return s
