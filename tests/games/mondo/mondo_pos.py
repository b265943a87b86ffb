"""Position builder and action encoders for the Mondo rule tests.

Tests set up exact positions through `game.from_dict(...)` (the state-dict format of
MondoGame.to_dict) with a custom tile list: every face a test names becomes face 0 of a new
tile (face 1 plain water unless given), in the order added; filler tiles (plain water both
sides) pad the list so that the boards can be filled and lie in the pool.
Boards are given as {(row, col): (tile index, face, rotation)}.
"""
from __future__ import annotations

import copy

import core_cy
from core_cy.games.mondo.engine import MODIFIERS

GAME = core_cy.load("mondo")
ACTIONS = GAME.actions   # the engine's action kinds by name (core_cy/engine/actions.py)
JUMP = ACTIONS.encode("jump")
RETURN = ACTIONS.encode("return")
WATER_FACE = {"edges": "WWWW"}
NO_SKILL = dict(GAME.options[[o.name for o in GAME.options].index("timing")].default,
                skill_sigma=0.0)


# ---- action encoders, one per kind --------------------------------------------------------
def PICK(t):
    return ACTIONS.encode("pick", tile=t)


def FLIP(t):
    return ACTIONS.encode("flip", tile=t)


def TASK(k):
    return ACTIONS.encode("task", card=k)


def PLACE(cell, face=0, rot=0):
    return ACTIONS.encode("place", cell=cell, face=face, rotation=rot)


def params(a):
    return ACTIONS.decode(a)[1]


def board_rules(rows, cols, frame=None, marked=()):
    """A `board` rule value of rows x cols; frame sides default to water."""
    frame = frame or {}
    return {"rows": rows, "cols": cols,
            "frame": {"top": frame.get("top", "W" * cols), "right": frame.get("right", "W" * rows),
                      "bottom": frame.get("bottom", "W" * cols), "left": frame.get("left", "W" * rows)},
            "solo_marked_cells": [list(m) for m in marked]}


def tiles(faces, total=None, players=4, rows=4, cols=6):
    """Tile list: one tile per given face (face 0; a (face0, face1) pair gives both faces),
    padded with plain water tiles."""
    out = []
    for f in faces:
        pair = f if isinstance(f, tuple) else (f, WATER_FACE)
        out.append({"faces": [copy.deepcopy(pair[0]), copy.deepcopy(pair[1])]})
    need = total or max(len(out) + 1, players * rows * cols + 1)
    while len(out) < need:
        out.append({"faces": [dict(WATER_FACE), dict(WATER_FACE)]})
    return out


def build_dict(players, rules, boards, seats=None, **top):
    """A state dict: boards[i] = {(r, c): (tile, face, rot)}; the rest of the tiles in the
    pool (face 0); seats[i] overrides seat fields; top overrides state fields."""
    base = GAME.new(players, rules, seed=0).to_dict()   # every field as to_dict writes it
    rules = base["rules"]
    rows, cols = rules["board"]["rows"], rules["board"]["cols"]
    task_ids = [t["id"] for t in rules["tasks"]]
    used = set()
    seat_list = []
    for i in range(players):
        grid = [[None] * cols for _ in range(rows)]
        for (r, c), (t, face, rot) in boards[i].items():
            grid[r][c] = {"tile": t, "face": face, "rotation": rot}
            used.add(t)
        seat = {**base["seats"][i], "speed": 1.0, "t_next": 0.0, "noise": 0.0, "hand": None,
                "pending": None, "finished": False, "chip": 0, "jump_order": 0,
                "volcano_chip": False, "tasks": [], "board": grid, "round_scores": []}
        seat.update((seats or [{}] * players)[i])
        seat["tasks"] = sorted(seat["tasks"], key=task_ids.index)   # to_dict's order
        if seat["hand"] is not None:
            used.add(seat["hand"]["tile"])
        seat_list.append(seat)
    state = {**base, "round": 0, "clock": 0.0, "current_player": 0, "moves": 0, "round_moves": 0,
             "modifier_deck": list(MODIFIERS), "tasks_face_up": [],
             "pool": [[t, 0] for t in range(len(rules["tiles"])) if t not in used],
             "terminal": False, "end_reason": "running", "rng": {"key": 1, "counter": 0},
             "seats": seat_list}
    state.update(top)
    return state


def build(players, rules, boards, seats=None, **top):
    """The engine state of build_dict(...), its clock run to the next decision (a position
    between decisions, every hand finished or one due at the timer, plays on to the next
    one, as the engine's clock does); its dict is then exactly what from_dict takes."""
    state = GAME.run_clock(build_dict(players, rules, boards, seats, **top))
    return GAME.from_dict(state.to_dict())


def breakdown(state, seat=0):
    return state.score_breakdown()[seat]
