"""Position builder and action encoders for the Reef Encounter rule tests.

Tests set up exact positions through `game.from_dict(...)` (the state-dict format of
ReefGame.to_dict).  By default they play on the spec's test board (section 13): 6 x 6 cells,
all playable, no light rock, all coral tiles on side S.  Whatever a test does not place is
left in the bag (polyps), the supply (larva cubes, alga cylinders) or behind the screen
(shrimps), so every built position conserves the components.
"""
from __future__ import annotations

import core_cy
from core_cy.games.reef_encounter.engine import ALGAE, BOARD_CELLS, BOARD_COLS, COLOURS, LETTERS

GAME = core_cy.load("reef_encounter")
TEST_BOARD = ["++++++"] * 6
TEST_RULES = {"boards": {f"test{i}": TEST_BOARD for i in range(4)}, "initial_side": "S"}
BC, COLS = BOARD_CELLS, BOARD_COLS
SCREEN = 4 * BC                     # the "behind the screen" destination of a shrimp move
W, Y, O, P, G = "white", "yellow", "orange", "pink", "grey"
act = GAME.actions.encode


def cell(r, c, b=0):
    return b * BC + r * COLS + c


def LAY(colour, r, c, b=0):
    """Lay a polyp from behind the screen."""
    return act("lay_screen", colour=COLOURS.index(colour), cell=cell(r, c, b))


def LAY_CONSUMED(colour, r, c, b=0):
    return act("lay_consumed", colour=COLOURS.index(colour), cell=cell(r, c, b))


def EAT(r, c, b=0):
    return act("eat", cell=cell(r, c, b))


def INTRO(r, c, b=0):
    return act("intro", cell=cell(r, c, b))


def MOVE(state, src, dst):
    """Move the current player's shrimp on src (r, c[, b]) to dst (r, c[, b]) or None (behind
    the screen).  Action 5 numbers a seat's shrimps on the boards in cell order."""
    d = state.to_dict()
    me = state.current_player
    mine = sorted(cell(r, c, b) for b, board in enumerate(d["boards"])
                  for r, c, who in board["shrimps"] if who == me)
    return act("move", shrimp=mine.index(cell(*src)), dest=SCREEN if dst is None else cell(*dst))


def TO_LARVA(colour):
    return act("to_larva", colour=COLOURS.index(colour))


def TO_POLYP(colour):
    return act("to_polyp", colour=COLOURS.index(colour))


def EMPTY_PLAY(colour):
    return act("empty_play", colour=COLOURS.index(colour))


def ALGA(polyp, alga, tile=0):
    """Trade a consumed polyp for an alga onto the alga space (tile 0) or coral tile 1..10."""
    return act("alga", polyp=COLOURS.index(polyp), alga=ALGAE.index(alga), target=tile)


def COLLECT(colour, state):
    """Collect from the open-sea space of that larva colour."""
    spaces = [s["colour"] for s in state.to_dict()["open_sea"]]
    return act("collect", space=spaces.index(colour))


END_PLAY = act("end_play")
FINAL_PASS = act("final_pass")


def FISH(colour):
    return act("fish", colour=COLOURS.index(colour))


def PICK(colour):
    return act("pick", colour=COLOURS.index(colour))


def of_kind(state, kind):
    """The legal actions of one kind."""
    return GAME.actions.select(state.legal_actions(), kind)


def counts(**kw):
    """A colour -> count map: counts(white=2, yellow=1)."""
    return {c: kw.get(c, 0) for c in COLOURS}


def position(players=2, polyps=None, shrimps=(), seats=None, current=0, rules=None,
             sides="S" * 10, covered=(), alga_space=None, turn=None, open_sea=None,
             phase="turn", bag=None, **extra):
    """A state dict: polyps {(r, c[, b]): 'W'}, shrimps [(r, c[, b], player)], seats a list of
    partial seat dicts (screen/consumed/fish/larva as counts(...), open_sea_shrimp, ...);
    the bag holds every polyp not placed elsewhere unless given."""
    rules = {**TEST_RULES, **(rules or {})}
    d = GAME.new(players, rules=rules, seed=0).to_dict()
    for k, board in enumerate(d["boards"]):
        layout = d["rules"]["boards"][board["layout"]]
        board["cells"] = [(layout[r] if r < len(layout) else "").ljust(COLS, ".")
                          .replace("W", "+").replace("Y", "+").replace("O", "+")
                          .replace("P", "+").replace("G", "+") for r in range(6)]
        board["shrimps"] = []
    for key, letter in (polyps or {}).items():
        r, c, b = (*key, 0) if len(key) == 2 else key
        row = d["boards"][b]["cells"][r]
        d["boards"][b]["cells"][r] = row[:c] + letter + row[c + 1:]
    on_board = [0] * players
    for sh in shrimps:
        r, c, b, who = (sh[0], sh[1], 0, sh[2]) if len(sh) == 3 else sh
        d["boards"][b]["shrimps"].append([r, c, who])
        on_board[who] += 1
    for b in d["boards"]:
        b["shrimps"].sort()
    for i, seat in enumerate(d["seats"]):
        given = (seats or [{}] * players)[i] if seats and i < len(seats) else {}
        seat.update({"screen": counts(), "consumed": counts(), "fish": counts(), "larva": counts(),
                     "fish_shrimps": 0, "open_sea_shrimp": False, "corals_eaten": 0})
        seat.update({k: dict(v) if isinstance(v, dict) else v for k, v in given.items()})
        seat["corals_eaten"] = seat["fish_shrimps"] + int(seat["open_sea_shrimp"])
        seat["shrimps_behind_screen"] = 4 - on_board[i] - seat["corals_eaten"]
    d["phase"] = phase
    d["current_player"] = current
    d["turn"] = {"acted": False, "plays": 0, "play_colour": None, "play_from_screen": 0,
                 "shrimp_introduced": False, "alga_on_tile": False, "shrimp_moves": 0,
                 **(turn or {})}
    d["tiles"] = [{"side": sides[t], "covered": t + 1 in covered} for t in range(10)]
    d["alga_space"] = alga_space
    if open_sea is not None:
        for space in d["open_sea"]:
            space["polyps"] = counts(**open_sea.get(space["colour"], {}))
    d.update(extra)
    fill_supplies(d, bag)
    return d


def fill_supplies(d, bag=None):
    """Bag, larva supply and alga supply as the remainder of the components (40 polyps and 10
    cubes per colour, 5 cylinders per alga colour)."""
    used = {c: 0 for c in COLOURS}
    for b in d["boards"]:
        for row in b["cells"]:
            for ch in row:
                if ch in LETTERS:
                    used[COLOURS[LETTERS.index(ch)]] += 1
    for space in d["open_sea"]:
        for c, n in space["polyps"].items():
            used[c] += n
    for seat in d["seats"]:
        for key in ("screen", "consumed", "fish"):
            for c, n in seat[key].items():
                used[c] += n
    for c, n in d["bonus_row"].items():
        used[c] += n
    d["bag"] = bag if bag is not None else {c: 40 - used[c] for c in COLOURS}
    cubes = {c: sum(s["larva"][c] for s in d["seats"]) +
             sum(1 for sp in d["open_sea"] if sp["cube"] and sp["colour"] == c) for c in COLOURS}
    d["larva_supply"] = {c: 10 - cubes[c] for c in COLOURS}
    tiles = d["rules"]["tiles"]
    cyl = {a: int(d["alga_space"] == a) for a in ALGAE}
    for t, tile in enumerate(d["tiles"]):
        if tile["covered"]:
            front = tiles[t]["front"] if tile["side"] == "S" else tiles[t]["back"]
            cyl[front] += 1
    d["alga_supply"] = {a: 5 - cyl[a] for a in ALGAE}
    return d


def build(**kw):
    return GAME.from_dict(position(**kw))


def board_cells(state, b=0):
    return state.to_dict()["boards"][b]["cells"]


def at(state, r, c, b=0):
    """The letter on a cell ('+' empty, 'L' empty light rock)."""
    return board_cells(state, b)[r][c]


def seat(state, i):
    return state.to_dict()["seats"][i]
