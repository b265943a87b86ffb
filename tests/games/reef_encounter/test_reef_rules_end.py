"""End of the game (spec 9), the final round, scoring (8, TV-SCORE) and tie-breaks (11)."""
import pytest

from reef_pos import (ALGA, COLLECT, EAT, END_PLAY, FINAL_PASS, LAY_CONSUMED, of_kind, GAME, LAY, MOVE, G, O, P, W, Y, build,
                      counts, position, seat)
from test_reef_rules_placement import A

TINY = {"boards": {f"t{i}": ["++"] for i in range(4)}}


def fill_all_but_one(players):
    """Polyps on every cell of the tiny boards except board 0 (0,1)."""
    polyps = {(0, 0, 0): "G"}
    for b in range(1, players):
        polyps[(0, 0, b)] = "O"
        polyps[(0, 1, b)] = "O"
    return polyps


def ended_by_full_reef(players, seats, shrimps=(), sides="S" * 10):
    """Seat 0 lays the last free cell and ends its larva play: the game ends (condition 3)."""
    seats = [dict(seats[0], screen=counts(**{W: 1}), larva=counts(**{W: 1}))] + list(seats[1:])
    s = build(players=players, rules=TINY, polyps=fill_all_but_one(players), seats=seats,
              shrimps=shrimps, sides=sides)
    s.apply(LAY(W, 0, 1))
    s.apply(END_PLAY)
    assert s.is_terminal() and s.end_reason == "reef_full"
    return s


def test_tv_score_rulebook_example_18_23_20_20():
    fish = [counts(grey=2, white=3, yellow=1), counts(pink=1, yellow=4),
            counts(orange=4, white=4), counts(grey=3, pink=3, yellow=1)]
    s = ended_by_full_reef(4, [{"fish": f} for f in fish], sides="NSSSNSSNNN")
    values = s.score_breakdown()[0]["values"]
    assert values == {"grey": 2, "pink": 3, "orange": 2, "white": 3, "yellow": 5}
    assert sum(values.values()) == 15
    assert s.scores() == [18, 23, 20, 20]
    assert s.winners() == [1] and s.win_shares() == [0, 1, 0, 0]
    assert [b["total"] for b in s.score_breakdown()] == [18, 23, 20, 20]


def test_provisional_scores_follow_the_current_tile_values():
    s = build(seats=[A(fish={Y: 2})], sides="NSSSNSSNNN")
    assert s.scores() == [10, 0]


@pytest.mark.parametrize("level", ["consumed", "larva", "screen", "guarded", "shared"])
def test_tie_breaks_in_order(level):
    base = {"fish": counts(grey=1)}
    seats = [dict(base), dict(base), dict(base)]
    shrimps = []
    # Seat 0 ends the game having used one screen polyp and one cube; the others match that.
    if level == "consumed":
        seats[2]["consumed"] = counts(pink=1)
    elif level == "larva":
        seats[2]["larva"] = counts(pink=1)
    elif level == "screen":
        seats[2]["screen"] = counts(pink=1)
    elif level == "guarded":
        shrimps = [(0, 0, 1, 2)]
    s = ended_by_full_reef(3, seats, shrimps=shrimps)
    assert s.scores() == [3, 3, 3]          # grey is worth 3 with all tiles on side S
    if level == "shared":
        assert s.win_shares() == pytest.approx([1 / 3] * 3)
    else:
        assert s.winners() == [2]
    # A higher earlier tie-break beats every later one.
    if level == "larva":
        seats[1]["consumed"] = counts(pink=1)
        s = ended_by_full_reef(3, seats, shrimps=shrimps)
        assert s.winners() == [1]


def test_condition_3_reef_full_has_no_final_round():
    s = ended_by_full_reef(2, [{}, {}])
    assert s.current_player == -1 and s.legal_actions() == []
    assert s.to_dict()["ender"] is None


def test_condition_1_last_tile_then_a_final_eat_only_round_returning_five():
    six = {(0, c, 1): "P" for c in range(6)}
    s = build(players=3, covered=range(1, 10), polyps={**six, (3, 3): "W"},
              shrimps=[(0, 0, 1, 1), (3, 3, 0)],
              seats=[A(consumed={G: 1}, open_sea_shrimp=True, fish={W: 2})])
    s.apply(MOVE(s, (3, 3), (4, 4)))                       # a shrimp on bare rock ...
    s.apply(ALGA(G, "blue", 10))
    d = s.to_dict()
    assert d["phase"] == "final" and s.current_player == 1 and d["ender"] == 0
    assert seat(s, 0)["shrimps_behind_screen"] == 3    # ... goes back behind the screen
    assert s.legal_actions() == [EAT(0, 0, 1), FINAL_PASS]
    s.apply(EAT(0, 0, 1))
    assert seat(s, 1)["fish"][P] == 1                  # 6 polyps: 5 back to the bag
    assert s.current_player == 2 and s.legal_actions() == [FINAL_PASS]
    s.apply(FINAL_PASS)
    assert s.is_terminal() and s.end_reason == "all_tiles_covered"


def test_final_round_meal_returns_six_in_the_advanced_game():
    seven = {(0, c, 1): "P" for c in range(6)} | {(1, 0, 1): "P"}
    s = build(players=2, covered=range(1, 10), polyps=seven, shrimps=[(0, 0, 1, 1)],
              rules={"advanced_eat_return_plus_one": True},
              seats=[A(consumed={G: 1}, open_sea_shrimp=True, fish={W: 2})])
    s.apply(ALGA(G, "blue", 10))
    s.apply(EAT(0, 0, 1))
    assert seat(s, 1)["fish"][P] == 1 and s.is_terminal()


def test_condition_2_fourth_shrimp_ends_the_game_after_a_final_round():
    five = {(0, c): "Y" for c in range(5)}
    s = build(players=3, polyps=five, shrimps=[(0, 0, 0)],
              seats=[A(open_sea_shrimp=True, fish_shrimps=2, fish={G: 1})])
    s.apply(EAT(0, 0))
    d = s.to_dict()
    assert d["phase"] == "final" and s.current_player == 1
    assert seat(s, 0)["corals_eaten"] == 4 and seat(s, 0)["fish_shrimps"] == 3
    s.apply(FINAL_PASS)
    s.apply(FINAL_PASS)
    assert s.is_terminal() and s.end_reason == "fourth_shrimp"
    assert s.scores()[0] == 1 * 3 + 1 * 3


def test_condition_4_no_larva_cube_to_replace():
    d = position()
    d["seats"][1]["larva"][Y] = d["larva_supply"][Y]
    d["larva_supply"][Y] = 0
    s = GAME.from_dict(d)
    s.apply(COLLECT("yellow", s))
    assert s.is_terminal() and s.end_reason == "supply_exhausted"
    assert seat(s, 0)["larva"][Y] == 1 and s.to_dict()["open_sea"][1]["cube"] is False


def squeeze_bag(d, keep):
    """Moves all but `keep` bag polyps behind seat 1's screen."""
    for c in d["bag"]:
        take = min(d["bag"][c], max(0, sum(d["bag"].values()) - keep))
        d["bag"][c] -= take
        d["seats"][1]["screen"][c] += take
    return d


def test_a_dry_bag_gets_the_bonus_row_once():
    d = squeeze_bag(position(open_sea={c: {"grey": 3} for c in ("white", "yellow", "orange", "pink")}
                             | {"grey": {"pink": 2}}), 0)
    s = GAME.from_dict(d)
    s.apply(COLLECT("white", s))                     # two spaces to refill: 2 bonus polyps
    d = s.to_dict()
    assert not s.is_terminal() and d["bonus_poured"] and d["bonus_row"] == counts()
    assert sum(d["bag"].values()) == 3


def test_condition_4_bag_dry_after_the_bonus_row():
    d = squeeze_bag(position(), 0)
    d["bonus_poured"] = True
    d["seats"][1]["screen"] = {c: d["seats"][1]["screen"][c] + d["bonus_row"][c] for c in d["bag"]}
    d["bonus_row"] = counts()
    s = GAME.from_dict(d)
    s.apply(COLLECT("white", s))
    assert s.is_terminal() and s.end_reason == "supply_exhausted"


def test_condition_4_literal_fewer_than_three_in_the_bag_only_with_its_switch():
    for literal in (False, True):
        d = squeeze_bag(position(rules={"end4_literal_bag_lt3": literal},
                                 open_sea={c: {"grey": 3} for c in ("yellow", "orange", "pink", "grey")}
                                 | {"white": {"pink": 3}}), 3)
        s = GAME.from_dict(d)
        s.apply(COLLECT("white", s))                 # one polyp drawn: 2 left
        assert s.is_terminal() == literal
        assert sum(s.to_dict()["bag"].values()) == 2


def test_turn_limit_is_a_simulator_safety():
    s = build(rules={"max_turns": 10}, turns=9)
    s.apply(COLLECT("white", s))
    assert s.is_terminal() and s.end_reason == "turn_limit"


# ---- the readings of section 9 that are rule options (A8, condition 3 timing)

ROW4 = {"boards": {f"r{i}": ["++++"] for i in range(4)}}


def full_after_one_lay(rules, players=2):
    """Board 0 holds W W . Y and every other cell is taken: seat 0 (2 white polyps behind the
    screen, a white cube) fills the reef with W on (0,2); the white coral of 3 could then
    still attack the yellow polyp on (0,3)."""
    polyps = {(0, 0): "W", (0, 1): "W", (0, 3): "Y"}
    polyps |= {(0, c, b): "O" for b in range(1, players) for c in range(4)}
    return build(players=players, rules={**ROW4, **rules}, polyps=polyps,
                 seats=[A(screen={W: 2}, larva={W: 1})])


def test_condition_3_is_checked_when_the_larva_play_that_filled_the_reef_ends():
    s = full_after_one_lay({})
    s.apply(LAY(W, 0, 2))
    assert not s.is_terminal()
    # The play may go on by attack, or end; nothing else (no collect, no other action).
    assert of_kind(s, "lay_screen") == [LAY(W, 0, 3)]
    assert of_kind(s, "collect") == [] and END_PLAY in s.legal_actions()
    s.apply(LAY(W, 0, 3))
    assert seat(s, 0)["consumed"] == counts(yellow=1) and not s.is_terminal()
    s.apply(END_PLAY)
    assert s.is_terminal() and s.end_reason == "reef_full"


def test_condition_3_checked_after_each_placement_with_its_option():
    s = full_after_one_lay({"reef_full_check": "placement"})
    s.apply(LAY(W, 0, 2))
    assert s.is_terminal() and s.end_reason == "reef_full"
    assert seat(s, 0)["screen"][W] == 1


def test_a8_off_the_reef_filler_finishes_its_turn_and_collects():
    s = full_after_one_lay({"reef_full_check": "placement", "end_stops_turn": False})
    s.apply(LAY(W, 0, 2))
    assert not s.is_terminal() and s.current_player == 0
    s.apply(LAY(W, 0, 3))                              # the rest of the turn is played
    bag = sum(s.to_dict()["bag"].values())
    s.apply(COLLECT("white", s))
    d = s.to_dict()
    assert s.is_terminal() and s.end_reason == "reef_full" and d["ender"] is None
    assert seat(s, 0)["larva"][W] == 1 and sum(d["bag"].values()) < bag   # with its refill


def test_a8_off_the_last_tile_lets_the_ender_finish_before_the_final_round():
    six = {(0, c, 1): "P" for c in range(6)}
    s = build(players=3, covered=range(1, 10), polyps={**six, (3, 3): "W"},
              shrimps=[(0, 0, 1, 1), (3, 3, 0)], rules={"end_stops_turn": False},
              seats=[A(consumed={G: 2}, open_sea_shrimp=True, fish={W: 2})])
    s.apply(MOVE(s, (3, 3), (4, 4)))
    s.apply(ALGA(G, "blue", 10))
    d = s.to_dict()
    assert d["phase"] == "turn" and s.current_player == 0 and d["end_pending"] == "all_tiles_covered"
    assert [4, 4, 0] in d["boards"][0]["shrimps"]        # still on bare rock: no collect yet
    assert of_kind(s, "collect") == []
    s.apply(ALGA(G, "red", 0))                           # the alga space is still open
    s.apply(MOVE(s, (4, 4), None))
    s.apply(COLLECT("white", s))
    d = s.to_dict()
    assert d["phase"] == "final" and s.current_player == 1 and d["ender"] == 0
    s.apply(EAT(0, 0, 1))
    s.apply(FINAL_PASS)
    assert s.is_terminal() and s.end_reason == "all_tiles_covered"


def test_a8_off_the_fourth_meal_lets_the_eater_play_on():
    five = {(0, c): "Y" for c in range(5)}
    s = build(players=2, polyps=five, shrimps=[(0, 0, 0)], rules={"end_stops_turn": False},
              seats=[A(open_sea_shrimp=True, fish_shrimps=2, fish={G: 1}, screen={O: 1},
                       larva={O: 1})])
    s.apply(EAT(0, 0))
    assert s.current_player == 0 and s.to_dict()["phase"] == "turn"
    s.apply(LAY(O, 3, 3))
    s.apply(COLLECT("grey", s))
    assert s.to_dict()["phase"] == "final" and s.current_player == 1
    s.apply(FINAL_PASS)
    assert s.is_terminal() and s.end_reason == "fourth_shrimp"
