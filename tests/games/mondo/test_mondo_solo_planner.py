"""Mondo solo planning agent (`solo_planner`, issue 10): it plans the whole board from the
face-up pool tiles, lays the tiles that fit, counts the penalty the pre-placed tiles already
carry, never reads a pool tile's down face, and wins solo games far more often than the
greedy placer (small seeded runs, wide margins; benchmarks/planners.py measures the rates)."""
import numpy as np

from core_cy import agents
from core_cy.play import batch
from mondo_pos import GAME, NO_SKILL, WATER_FACE, board_rules, build, tiles

CENTRE = {"edges": "WDWF"}          # N E S W: desert to the east, forest to the west
WEST_FIT = {"edges": "WWWF"}        # one forest edge: fits (0,0) turned 90 degrees
EAST_FIT = {"edges": "DWWW"}        # one desert edge: fits (0,2) turned 270 degrees
DECOY = {"edges": "PPWW"}           # two land edges: fits nowhere without an error


def one_row(hidden_face=WATER_FACE, west_fit=WEST_FIT):
    """A 1x3 hard solo board with a tile in the middle; the fits lie in the pool, face up,
    beside a decoy and a tile whose down face (hidden_face) is not to be read."""
    faces = [CENTRE, DECOY, west_fit, EAST_FIT, ({"edges": "PPPP"}, hidden_face)]
    rules = {"solo_difficulty": "hard", "board": board_rules(1, 3, marked=[(0, 1)]),
             "timing": NO_SKILL, "tiles": tiles(faces, total=len(faces))}
    return build(1, rules, [{(0, 1): (0, 0, 0)}])


def play_out(state, agent="solo_planner"):
    """The moves of the rest of the game (agents.choose: a policy memory empty at each move,
    which these positions do not need)."""
    moves = []
    while not state.is_terminal():
        a = agents.choose(state, agent, seed=len(moves))
        moves.append(state.describe(a))
        state.apply(a)
    return moves


def test_the_planner_lays_the_two_tiles_that_fit_and_wins_the_hard_game():
    s = one_row()
    moves = play_out(s)
    assert s.to_dict()["solo_win"] and s.to_dict()["solo_penalty"] == 0
    assert [m.split()[0] for m in moves] == ["pick", "place", "pick", "place", "jump"]
    assert all("#1 " not in m for m in moves)               # the decoy is never taken


def test_the_planner_never_reads_a_down_face():
    """The same position with another down face under a face-up tile: the same game."""
    assert play_out(one_row(hidden_face={"edges": "FFFF"})) == play_out(one_row(hidden_face=WEST_FIT))


def test_without_a_face_up_fit_it_flips_tiles_over_and_finds_the_hidden_one():
    """No face-up tile fits the west space: the planner flips pool tiles (the same first
    moves whatever lies face down) and lays the fit it uncovers."""
    hidden_fit = one_row(hidden_face=WEST_FIT, west_fit=DECOY)
    no_fit = one_row(hidden_face=DECOY, west_fit=DECOY)
    first = play_out(hidden_fit)
    assert first[0].startswith("flip") and first[0] == play_out(no_fit)[0]
    assert "place tile #4 face 1" in " ".join(first)
    assert hidden_fit.to_dict()["solo_win"] and not no_fit.to_dict()["solo_win"]


def test_the_pre_placed_clash_counts_against_the_penalty_left():
    """Medium (penalty < 2) with one error edge already on the board: a decoy placement's
    error would lose, so the planner takes the exact fits only."""
    rules = {"solo_difficulty": "medium", "board": board_rules(1, 4, marked=[(0, 1), (0, 2)]),
             "timing": NO_SKILL,
             "tiles": tiles([CENTRE, {"edges": "WPWW"}, DECOY, WEST_FIT, {"edges": "PWWW"}],
                            players=1, rows=1, cols=4)}
    s = build(1, rules, [{(0, 1): (0, 0, 0), (0, 2): (1, 0, 0)}])   # D against P: one error
    assert s.score_breakdown()[0]["error_edges"] == 1
    play_out(s)
    assert s.to_dict()["solo_win"] and s.to_dict()["solo_penalty"] == 1


def test_with_more_players_it_plays_the_greedy_placer():
    s = GAME.new(2, seed=5)
    for k in range(30):
        assert agents.choose(s, "solo_planner", k) == agents.choose(s, "greedy_placer", k)
        s.apply(agents.choose(s, "greedy_placer", k))


def test_the_planner_wins_most_easy_and_some_medium_games():
    """Measured (benchmarks/planners.py mondo-solo): easy about 99%, medium about 37% (about
    half the medium setups start with 2 error edges and cannot be won); greedy_placer wins
    about 2% and 0%."""
    easy = batch.play(GAME, 1, {"solo_difficulty": "easy"}, "solo_planner", seed=2, count=12)
    assert np.sum(easy.column("solo_win").to_pylist()) >= 8
    medium = batch.play(GAME, 1, {"solo_difficulty": "medium"}, "solo_planner", seed=2, count=24)
    assert np.sum(medium.column("solo_win").to_pylist()) >= 3


def test_the_planners_parameters_reach_it():
    """solo_planner(nodes=..., extra_penalty=...) are agent parameters: the defaults spelled
    out play the same game; a search of one node finds no plan (the planner then plays as
    without one) and loses the hard game the default wins."""
    assert play_out(one_row(), "solo_planner(nodes=4000, extra_penalty=0)") == play_out(one_row())
    s = one_row()
    starved = play_out(s, "solo_planner(nodes=1)")
    assert starved != play_out(one_row()) and not s.to_dict()["solo_win"]
