"""Mondo agents and the state dict: the engine's fast action values equal the generic
clone+apply+heuristic path exactly; the heuristic values what a pick will bring, placements
by their score change and jumping out by the chip; greedy beats random; a state dict carries
its whole rules, so a fresh process rebuilds the same state."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from product import PRODUCT, product_env
from hypothesis import given, settings, strategies as st

from core_cy import agents
from core_cy.play import batch
from mondo_pos import GAME, NO_SKILL, PICK, PLACE, JUMP, board_rules, build, tiles

PER_PLACEMENT = dict(NO_SKILL, mode="per_placement")


def play_and_compare(players, rules, seed, mix=("greedy", "random", "greedy_placer")):
    """Plays a game with a mix of agents; at every decision the fast values must equal the
    generic ones for the acting seat.  Returns how many positions were compared."""
    s = GAME.new(players, rules, seed=seed)
    k = 0
    while not s.is_terminal():
        seat = s.current_player
        fast = agents.action_values(s, seat)
        slow = agents.action_values(s, seat, generic=True)
        assert fast == slow, [(GAME.describe(s, a), fast[a], slow[a]) for a in fast if fast[a] != slow[a]][:3]
        s.apply(agents.choose(s, mix[(seed + k) % len(mix)], seed * 1000 + k))
        k += 1
    return k


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(1, 4),
       level=st.sampled_from(["beginner", "advanced", "master"]),
       side=st.sampled_from(["water", "frame"]), hidden=st.booleans(),
       timer=st.sampled_from([40, 90, 150]))
def test_fast_action_values_equal_the_generic_path(seed, players, level, side, hidden, timer):
    rules = {"timer_seconds": timer, "board_side": side, "hidden_timer": hidden,
             "level": level if players > 1 else "beginner"}
    assert play_and_compare(players, rules, seed) > 0


@pytest.mark.parametrize("players", [1, 3])
def test_fast_action_values_per_placement_mode(players):
    rules = {"timer_seconds": 120, "timing": PER_PLACEMENT}
    assert play_and_compare(players, rules, 7) > 0


def test_fast_action_values_when_others_have_jumped_and_the_round_ends():
    # Greedy hands jump out early with chips; the last hand's actions then end the round
    # (the copy paths, including placements rescored on one copy).
    for seed in range(3):
        assert play_and_compare(3, {"timer_seconds": 200, "rounds": 2}, seed, ("greedy",)) > 0


# A board seen in a search (default tiles, 4 x 6): placing tile 95 (face 1: forest across, a
# plains segment each side) turned once on (2,0) makes its two plains segments one open area,
# whose only open edge the walk from the first segment finds; the second walk must not call
# the area closed.
WALK_BOARD = {(0, 0): (93, 0, 0), (0, 1): (14, 0, 2), (0, 2): (34, 0, 2), (0, 3): (29, 1, 3),
              (0, 4): (74, 1, 3), (0, 5): (75, 1, 0), (1, 0): (66, 1, 3), (1, 1): (106, 1, 2),
              (1, 2): (90, 1, 2), (1, 3): (78, 1, 0), (1, 4): (117, 1, 1), (1, 5): (104, 1, 1),
              (2, 1): (12, 1, 2), (2, 2): (30, 1, 0), (2, 3): (32, 1, 1), (2, 4): (120, 1, 1),
              (3, 0): (64, 1, 2), (3, 1): (38, 1, 3), (3, 2): (60, 0, 0), (3, 3): (111, 0, 2)}


def test_a_placement_joining_two_of_its_segments_in_one_open_area_closes_nothing():
    s = build(2, {}, [WALK_BOARD, {}], seats=[{"hand": {"tile": 95, "face": 1}}, {"t_next": 1.0}])
    fast = agents.action_values(s, 0)
    slow = agents.action_values(s, 0, generic=True)
    assert fast[PLACE(12, 1, 1)] == slow[PLACE(12, 1, 1)]
    assert fast == slow


# ---- what the heuristic values -------------------------------------------------------------

FIT = {"edges": "DWWW"}            # fits next to a desert edge, water towards the sea
MISFIT = {"edges": "PPPP"}


def test_a_pick_is_valued_by_the_best_spot_of_the_face_it_shows():
    # Board: tile 0 (desert east edge) at (0,0); pool: tile 1 fits at (0,1) turned, tile 2
    # (all plains) errs on every side.  Greedy reaches for the fitting tile.
    rules = {"board": board_rules(1, 3), "tiles": tiles([{"edges": "WDWW"}, FIT, MISFIT], players=1, rows=1, cols=3),
             "timing": NO_SKILL, "timer_seconds": 300}
    s = build(1, rules, [{(0, 0): (0, 0, 0)}])
    values = agents.action_values(s, 0)
    assert values[PICK(1)] > values[PICK(2)]
    assert agents.choose(s, "greedy", 1) == PICK(1)


def test_a_placement_is_valued_by_the_score_change():
    # Tile 1 in hand: turned so that its desert edge meets tile 0's (0 errors, desert
    # closed: +2) versus unturned (desert against water: errors).
    rules = {"board": board_rules(1, 2), "tiles": tiles([{"edges": "WDWW"}, FIT], players=2, rows=1, cols=2),
             "timing": NO_SKILL, "timer_seconds": 300}
    s = build(2, rules, [{(0, 0): (0, 0, 0)}, {}], seats=[{"hand": {"tile": 1, "face": 0}}, {"t_next": 1.0}])
    values = agents.action_values(s, 0)
    best = max(values, key=values.get)
    assert best == PLACE(1, 0, 3)          # DWWW turned 270 degrees shows D to the west
    assert values[PLACE(1, 0, 3)] - values[PLACE(1, 0, 0)] >= 2 + 2


def test_greedy_jumps_out_for_the_chip_when_the_board_is_full():
    full = {(0, c): (c, 0, 0) for c in range(2)}
    rules = {"board": board_rules(1, 2), "tiles": tiles([{"edges": "WWWW"}] * 2, players=2, rows=1, cols=2),
             "timing": NO_SKILL, "timer_seconds": 300}
    s = build(2, rules, [full, {}])
    assert agents.choose(s, "greedy", 3) == JUMP


def test_greedy_keeps_filling_when_the_chip_is_worth_less_than_the_spaces():
    rules = {"timing": NO_SKILL}
    s = build(2, rules, [{}, {}])
    values = agents.action_values(s, 0)
    assert max(values, key=values.get) != JUMP


def test_greedy_beats_random():
    shares = []
    for seat in range(2):
        seats = ["random", "random"]
        seats[seat] = "greedy"
        b = batch.play(GAME, 2, {"rounds": 1}, seats, seed=seat, count=12)
        shares.append(np.array(b.column("seat_win_share").to_pylist())[:, seat].mean())
    assert np.mean(shares) > 0.9


def test_greedy_fills_the_solo_board():
    b = batch.play(GAME, 1, {"solo_difficulty": "easy"}, "greedy", seed=3, count=8)
    assert np.mean(b.column("seat_empty_spaces").to_pylist()) < 2


# ---- the state dict carries its rules ---------------------------------------------------------

VARIANTS = [
    (3, {}),
    (1, {"solo_difficulty": "hard"}),
    (4, {"level": "master", "board_side": "frame", "handicap": "strong", "advantaged_seats": [1, 2],
         "hidden_timer": True, "timer_seconds": 200, "rounds": 2}),
    (2, {"children": True, "children_volcanoes": True, "timing": PER_PLACEMENT}),
]


@pytest.mark.parametrize("players,rules", VARIANTS)
def test_the_state_rules_are_decoded_from_the_state(players, rules):
    s = GAME.new(players, rules, seed=5)
    assert s.to_dict()["rules"] == GAME.resolve_rules(rules, players)


def test_custom_segments_and_animal_segments_survive_the_round_trip():
    faces = [{"edges": "PPPP", "segments": [{"terrain": "P", "edges": "NE"}, {"terrain": "P", "edges": "SW"}],
              "animal": "zebra", "animal_segment": 1},
             {"edges": "WWWW", "segments": [{"terrain": "W", "edges": "NESW"}, {"terrain": "D", "edges": ""}],
              "animal": "snake", "volcano": "dormant"}]
    rules = {"tiles": tiles(faces, players=2)}
    s = GAME.new(2, rules, seed=1)
    d = s.to_dict()
    assert d["rules"]["tiles"][:2] == GAME.resolve_rules(rules, 2)["tiles"][:2]
    assert GAME.from_dict(d).to_bytes() == s.to_bytes()


def test_names_too_long_for_the_state_are_refused():
    with pytest.raises(ValueError, match="species"):
        GAME.new(2, {"species": {"x" * 16: "P"}})
    with pytest.raises(ValueError, match="bonus_stack"):
        GAME.new(2, {"bonus_stack": {"2": [4, 3], "9": [1]}})


FRESH = """
import json, sys
import core_cy
game = core_cy.load("mondo")
d = json.loads(sys.stdin.read())
s = game.from_dict(d)
print(json.dumps({"dict": s.to_dict(), "bytes": s.to_bytes().hex()}))
"""


@pytest.mark.parametrize("players,rules", VARIANTS)
def test_from_dict_in_a_fresh_process(players, rules):
    s = GAME.new(players, rules, seed=8)
    for k in range(40):                      # a position in the middle of the round
        if s.is_terminal():
            break
        s.apply(agents.choose(s, "greedy_placer", k))
    d = s.to_dict()
    out = subprocess.run([sys.executable, "-c", FRESH], input=json.dumps(d), cwd=PRODUCT,
                         env=product_env(), capture_output=True, text=True, check=True)
    back = json.loads(out.stdout)
    assert back["dict"] == json.loads(json.dumps(d))
    assert back["bytes"] == s.to_bytes().hex()
