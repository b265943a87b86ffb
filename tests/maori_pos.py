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

# Action ids (the engine's public encoding: contiguous blocks, see the maori module docstring).
TRACK = 16
_MOVE, _TAKE = 16, 32
_STORE = _TAKE + 4 * 25 * 4
_FROM_STORE = _STORE + 4
_REMOVE = _FROM_STORE + 25 * 4
PASS = _REMOVE + 25
_SMALL = PASS + 1


def SHIP_AT(p):
    return p


def MOVE(d):
    """Move the explorer ship d >= 1 steps clockwise."""
    return _MOVE + d - 1


def cell(r, c):
    return r * COLS + c


def TAKE(k, r, c, rot=0):
    """Take the k-th tile (1 = next to the ship) of the faced line and place it on (r, c)."""
    return _TAKE + (k - 1) * 100 + cell(r, c) * 4 + rot


def STORE(k):
    return _STORE + k - 1


def FROM_STORE(r, c, rot=0):
    return _FROM_STORE + cell(r, c) * 4 + rot


def REMOVE(r, c):
    return _REMOVE + cell(r, c)


def SMALL(r, c):
    """Advanced mode, step 3: move the small ship to (r, c) (its own cell = stay)."""
    return _SMALL + cell(r, c)


def takes(actions):
    return [a for a in actions if _TAKE <= a < _STORE]


def take_k(a):
    return (a - _TAKE) // 100 + 1


def take_cell(a):
    return divmod(((a - _TAKE) // 4) % 25, COLS)


def take_rot(a):
    return (a - _TAKE) % 4


def moves(actions):
    return sorted(a - _MOVE + 1 for a in actions if _MOVE <= a < _TAKE)


def stores(actions):
    return sorted(a - _STORE + 1 for a in actions if _STORE <= a < _FROM_STORE)


def from_stores(actions):
    return [a for a in actions if _FROM_STORE <= a < _REMOVE]


def removes(actions):
    return sorted(divmod(a - _REMOVE, COLS) for a in actions if _REMOVE <= a < PASS)


def smalls(actions):
    return sorted(divmod(a - _SMALL, COLS) for a in actions if _SMALL <= a < _SMALL + 25)


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
            seats.append({"shells": self.shells[i], "storage": self.storage[i],
                          "small_ship": None if self.small_ship[i] is None else list(self.small_ship[i]),
                          "board": board})
        d = {
            "game": "maori", "players": self.players, "rules": rules,
            "phase": self.phase, "current_player": self.current,
            "ship_position": self.ship,
            "bank": total - sum(self.shells) if self.bank is None else self.bank,
            "display": copy.deepcopy(self.display), "pile": list(self.pile), "box": box,
            "end_trigger": self.end_trigger, "terminal": False, "end_reason": "running",
            "seats": seats,
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
