"""The turn (spec 4-5, 7): action order, larva plays, shrimps, the parrotfish, algae and the
open-sea refill, with the test vectors of section 13."""
import pytest

from reef_pos import (ALGA, COLLECT, EAT, END_PLAY, FINAL_PASS, GAME, INTRO, LAY, LAY_CONSUMED,
                      MOVE, TO_LARVA, TO_POLYP, EMPTY_PLAY, G, O, P, W, Y, at, build, counts, of_kind,
                      position, seat)
from test_reef_rules_placement import A


def test_tv20_parrotfish_eats_an_own_guarded_coral_of_five_or_more():
    polyps = {(0, c): "W" for c in range(6)}
    polyps[(1, 0)] = "W"
    s = build(polyps=polyps, shrimps=[(0, 0, 0)])
    bag = s.to_dict()["bag"][W]
    assert EAT(0, 0) in s.legal_actions()
    s.apply(EAT(0, 0))
    d = s.to_dict()
    assert d["bag"][W] == bag + 4 and seat(s, 0)["fish"][W] == 3
    assert seat(s, 0)["seen_fish"] == counts(white=3)             # a public meal
    assert seat(s, 0)["open_sea_shrimp"] and seat(s, 0)["corals_eaten"] == 1
    assert d["boards"][0]["cells"][0] == "++++++." and d["boards"][0]["shrimps"] == []
    assert EAT(0, 0) not in s.legal_actions()      # once, and only first


def test_a_second_meal_puts_the_shrimp_into_the_fish():
    polyps = {(0, c): "G" for c in range(5)}
    s = build(polyps=polyps, shrimps=[(0, 0, 0)], seats=[A(open_sea_shrimp=True)])
    s.apply(EAT(0, 0))
    assert seat(s, 0)["fish_shrimps"] == 1 and seat(s, 0)["corals_eaten"] == 2
    assert seat(s, 0)["fish"][G] == 1


def test_tv20_meals_that_are_illegal():
    four = {(0, c): "W" for c in range(4)}
    assert EAT(0, 0) not in build(polyps=four, shrimps=[(0, 0, 0)]).legal_actions()
    seven = {(0, c): "W" for c in range(6)} | {(1, 0): "W"}
    assert EAT(0, 0) not in build(polyps=seven, shrimps=[(0, 0, 1)]).legal_actions()
    s = build(polyps=seven | {(3, 3): "P"}, shrimps=[(0, 0, 0), (3, 3, 0)])
    s.apply(MOVE(s, (3, 3), None))
    assert of_kind(s, "eat") == []


def test_advanced_meal_returns_five_polyps():
    seven = {(0, c): "W" for c in range(6)} | {(1, 0): "W"}
    s = build(polyps=seven, shrimps=[(0, 0, 0)], rules={"advanced_eat_return_plus_one": True})
    s.apply(EAT(0, 0))
    assert seat(s, 0)["fish"][W] == 2


def test_tv22_at_most_four_from_behind_the_screen_plus_all_consumed():
    s = build(seats=[A(screen={Y: 6}, consumed={Y: 3}, larva={Y: 1})])
    for c in range(4):
        assert LAY(Y, 0, c) in s.legal_actions()
        s.apply(LAY(Y, 0, c))
    assert not any(a == LAY(Y, 1, c) for a in s.legal_actions() for c in range(6))
    for c in range(3):
        s.apply(LAY_CONSUMED(Y, 1, c))
    assert seat(s, 0)["screen"][Y] == 2 and seat(s, 0)["consumed"][Y] == 0
    assert of_kind(s, "lay_screen") == of_kind(s, "lay_consumed") == []


def test_tv23_larva_plays_never_interleave_and_eating_comes_first():
    s = build(polyps={(5, 5): "W"}, shrimps=[(5, 5, 0)],
              seats=[A(screen={Y: 3, G: 2}, larva={Y: 2, G: 1})])
    s.apply(LAY(Y, 0, 0))
    s.apply(MOVE(s, (5, 5), (5, 4)))                 # a shrimp move inside action 2
    assert LAY(Y, 0, 1) in s.legal_actions()
    s.apply(LAY(Y, 0, 1))
    s.apply(LAY(G, 3, 0))                         # action 3 starts: action 2 is over
    legal = s.legal_actions()
    assert LAY(Y, 0, 2) not in legal and LAY(G, 3, 1) in legal
    d = s.to_dict()
    assert d["turn"]["plays"] == 2 and seat(s, 0)["larva"] == counts(yellow=1)


def test_a_second_play_may_use_the_same_colour_after_the_first_ends():
    s = build(seats=[A(screen={Y: 6}, larva={Y: 2})])
    s.apply(LAY(Y, 0, 0))
    s.apply(END_PLAY)
    s.apply(LAY(Y, 2, 0))                          # the second cube: four more allowed
    for c in range(1, 4):
        s.apply(LAY(Y, 2, c))
    assert seat(s, 0)["screen"][Y] == 1 and seat(s, 0)["larva"][Y] == 0
    assert LAY(Y, 3, 0) not in s.legal_actions()
    s.apply(END_PLAY)
    assert of_kind(s, "lay_screen") == of_kind(s, "lay_consumed") == []


def test_any_other_action_closes_the_open_larva_play():
    s = build(seats=[A(screen={Y: 3}, consumed={O: 1}, larva={Y: 2})])
    s.apply(LAY(Y, 0, 0))
    s.apply(TO_LARVA(O))
    assert s.to_dict()["turn"]["play_colour"] is None
    s.apply(LAY(Y, 0, 1))
    assert s.to_dict()["turn"]["plays"] == 2


def test_an_empty_larva_play_only_with_min_polyps_zero():
    s = build(seats=[A(larva={Y: 1})])
    assert EMPTY_PLAY(Y) not in s.legal_actions()
    s = build(seats=[A(larva={Y: 1})], rules={"larva_play_min_polyps": 0})
    s.apply(EMPTY_PLAY(Y))
    assert seat(s, 0)["larva"][Y] == 0 and s.to_dict()["turn"]["plays"] == 1


def test_introduce_one_shrimp_a_turn_onto_a_coral_without_shrimp():
    s = build(polyps={(0, 0): "W", (0, 1): "W", (3, 3): "P", (5, 5): "G"}, shrimps=[(5, 5, 1)])
    legal = s.legal_actions()
    assert INTRO(0, 0) in legal and INTRO(0, 1) in legal and INTRO(3, 3) in legal
    assert INTRO(5, 5) not in legal and INTRO(2, 2) not in legal   # guarded; bare rock
    s.apply(INTRO(0, 1))
    assert seat(s, 0)["shrimps_behind_screen"] == 3
    assert INTRO(3, 3) not in s.legal_actions()


def test_shrimp_moves_to_its_coral_other_corals_bare_rock_or_behind_the_screen():
    s = build(polyps={(0, 0): "W", (0, 1): "W", (3, 3): "P", (5, 5): "G"},
              shrimps=[(0, 0, 0), (5, 5, 1)])
    legal = s.legal_actions()
    assert MOVE(s, (0, 0), (0, 1)) in legal and MOVE(s, (0, 0), (3, 3)) in legal
    assert MOVE(s, (0, 0), (2, 2)) in legal and MOVE(s, (0, 0), None) in legal
    assert MOVE(s, (0, 0), (5, 5)) not in legal                # a guarded coral
    # Only own shrimps move: seat 0 has one on the boards, so every move is of shrimp 0.
    assert {GAME.actions.decode(a)[1]["shrimp"] for a in GAME.actions.select(legal, "move")} == {0}
    s.apply(MOVE(s, (0, 0), (2, 2)))
    assert MOVE(s, (2, 2), (1, 1)) in s.legal_actions()     # bare rock: may move again
    assert of_kind(s, "collect") == []


def test_tv24_at_most_two_own_shrimps_on_one_board():
    polyps = {(0, 0): "W", (2, 2): "P", (4, 4): "G", (0, 0, 1): "Y"}
    s = build(players=2, polyps=polyps, shrimps=[(0, 0, 0), (2, 2, 0), (0, 0, 1, 0)])
    legal = s.legal_actions()
    assert INTRO(4, 4) not in legal
    assert MOVE(s, (0, 0, 1), (4, 4)) not in legal and MOVE(s, (0, 0, 1), (3, 3)) not in legal
    assert MOVE(s, (0, 0), (4, 4)) in legal             # same board: still two


def test_action_6_trades_a_consumed_polyp_for_a_larva_cube():
    s = build(seats=[A(consumed={P: 1})])
    bag = s.to_dict()["bag"][P]
    s.apply(TO_LARVA(P))
    assert seat(s, 0)["larva"][P] == 1 and s.to_dict()["bag"][P] == bag + 1
    assert seat(s, 0)["consumed"][P] == 0
    d = position(seats=[A(consumed={P: 1})])
    d["larva_supply"]["pink"] = 0
    d["seats"][1]["larva"]["pink"] = 9
    assert TO_LARVA(P) not in GAME.from_dict(d).legal_actions()


def test_action_8_trades_a_cube_for_the_bonus_polyp_which_is_replaced_from_the_bag():
    s = build(seats=[A(larva={O: 1})])
    bag = s.to_dict()["bag"][O]
    s.apply(TO_POLYP(O))
    d = s.to_dict()
    assert seat(s, 0)["screen"][O] == 1 and d["bonus_row"][O] == 1 and d["bag"][O] == bag - 1
    assert seat(s, 0)["seen_screen"] == counts(orange=1)        # the cube's colour is public
    assert seat(s, 0)["larva"][O] == 0
    d = position(seats=[A(larva={O: 1})], rules={"bonus_shortage": "fail"})
    d["seats"][1]["screen"][O] += d["bag"][O] + 1
    d["bag"][O], d["bonus_row"][O] = 0, 0
    assert TO_POLYP(O) not in GAME.from_dict(d).legal_actions()


def test_a7_cube_from_action_6_and_polyp_from_action_8_are_usable_the_same_turn():
    s = build(seats=[A(consumed={P: 2}, larva={O: 2})])
    s.apply(TO_POLYP(O))
    s.apply(TO_LARVA(P))
    assert LAY(O, 0, 0) in s.legal_actions()
    s.apply(LAY(O, 0, 0))
    assert LAY_CONSUMED(P, 1, 0) in s.legal_actions()
    s.apply(LAY_CONSUMED(P, 1, 0))
    assert seat(s, 0)["larva"] == counts() and s.to_dict()["turn"]["plays"] == 2


def test_tv13_alga_on_the_alga_space_flips_every_tile_with_that_front():
    s = build(alga_space="red", seats=[A(consumed={G: 1})])
    bag = s.to_dict()["bag"][G]
    s.apply(ALGA(G, "blue", 0))
    d = s.to_dict()
    flipped = [i + 1 for i, t in enumerate(d["tiles"]) if t["side"] == "N"]
    assert flipped == [3, 6, 10] and d["alga_space"] == "blue"
    assert d["alga_supply"] == {"blue": 4, "green": 5, "purple": 5, "red": 5}
    assert s.score_breakdown()[0]["values"] == {c: 3 for c in ("grey", "orange", "pink", "white", "yellow")}
    assert d["bag"][G] == bag + 1 and seat(s, 0)["consumed"][G] == 0


def test_the_alga_space_is_unlimited_and_flips_back_with_the_other_front():
    s = build(seats=[A(consumed={G: 2})])
    s.apply(ALGA(G, "blue", 0))
    s.apply(ALGA(G, "red", 0))
    d = s.to_dict()
    # Blue flipped 3, 6, 10 to fronts red, green, red; red then flips 2, 9 and 3, 10 back.
    assert [i + 1 for i, t in enumerate(d["tiles"]) if t["side"] == "N"] == [2, 6, 9]
    assert d["alga_supply"]["blue"] == 5 and d["alga_space"] == "red"


def test_tv15_tv16_tv17_alga_onto_a_coral_tile():
    assert ALGA(G, "purple", 4) not in build(seats=[A(consumed={G: 1})]).legal_actions()
    s = build(seats=[A(consumed={G: 2}, open_sea_shrimp=True)])
    legal = s.legal_actions()
    assert ALGA(G, "red", 1) not in legal and ALGA(G, "green", 1) in legal
    s.apply(ALGA(G, "green", 1))
    d = s.to_dict()
    assert d["tiles"][0] == {"side": "S", "covered": True}
    assert [i + 1 for i, t in enumerate(d["tiles"]) if t["side"] == "N"] == [5, 8]
    legal = s.legal_actions()
    assert ALGA(G, "blue", 3) not in legal and ALGA(G, "blue", 0) in legal
    # A covered tile never flips again.
    s.apply(ALGA(G, "blue", 0))
    assert s.to_dict()["tiles"][0]["side"] == "S"


def test_tv18_last_tile_needs_two_polyps_in_the_fish():
    covered = range(1, 10)
    one = build(covered=covered, seats=[A(consumed={G: 1}, open_sea_shrimp=True, fish={W: 1})])
    assert ALGA(G, "blue", 10) not in one.legal_actions()
    two = build(covered=covered, seats=[A(consumed={G: 1}, open_sea_shrimp=True, fish={W: 2})])
    assert ALGA(G, "blue", 10) in two.legal_actions()


def test_tv25_collect_and_refill():
    s = build(open_sea={"white": {"pink": 1}, "yellow": {"grey": 2, "white": 1},
                        "orange": {"orange": 3}, "pink": {"pink": 3}, "grey": {"yellow": 2}})
    bag = sum(s.to_dict()["bag"].values())
    supply = s.to_dict()["larva_supply"][Y]
    s.apply(COLLECT("yellow", s))
    d = s.to_dict()
    assert d["seats"][0]["screen"] == counts(grey=2, white=1)
    assert d["seats"][0]["seen_screen"] == counts(grey=2, white=1)    # the piles are public
    assert d["seats"][0]["larva"] == counts(yellow=1)
    assert [sum(sp["polyps"].values()) for sp in d["open_sea"]] == [2, 1, 3, 3, 3]
    assert all(sp["cube"] for sp in d["open_sea"]) and d["larva_supply"][Y] == supply - 1
    assert sum(d["bag"].values()) == bag - 3
    assert s.current_player == 1 and d["turn"]["acted"] is False


def test_collect_is_always_legal_and_ends_the_turn():
    s = build()
    legal = s.legal_actions()
    assert of_kind(s, "collect") == [GAME.actions.encode("collect", space=k) for k in range(5)]
    s.apply(COLLECT("grey", s))
    assert s.current_player == 1


# ---- rules found without a test in the spec audit

def test_an_alga_colour_without_a_cylinder_in_the_supply_cannot_be_taken():
    # All 5 blue cylinders are out: on tiles 1 (side N: front blue), 3, 6, 10 and the alga space.
    s = build(sides="NSSSSSSSSS", covered=(1, 3, 6, 10), alga_space="blue",
              seats=[A(consumed={G: 1})])
    assert s.to_dict()["alga_supply"]["blue"] == 0
    legal = s.legal_actions()
    assert ALGA(G, "blue", 0) not in legal and ALGA(G, "red", 0) in legal


def test_after_the_bonus_row_went_into_the_bag_action_8_takes_from_the_bag_whatever_the_option():
    d = position(seats=[A(larva={O: 1})], rules={"bonus_shortage": "fail"})
    d["bonus_poured"] = True
    d["bag"] = {c: d["bag"][c] + d["bonus_row"][c] for c in d["bag"]}
    d["bonus_row"] = counts()
    s = GAME.from_dict(d)
    bag = s.to_dict()["bag"][O]
    s.apply(TO_POLYP(O))
    assert seat(s, 0)["screen"][O] == 1 and s.to_dict()["bag"][O] == bag - 1


def test_one_larva_play_may_lay_on_several_boards():
    s = build(seats=[A(screen={Y: 2}, larva={Y: 1})])
    s.apply(LAY(Y, 0, 0, 0))
    assert LAY(Y, 0, 0, 1) in s.legal_actions()
    s.apply(LAY(Y, 0, 0, 1))
    assert s.to_dict()["turn"]["plays"] == 1 and at(s, 0, 0, 1) == "Y"


def test_the_shrimp_move_bound_still_lets_a_shrimp_leave_bare_rock():
    s = build(polyps={(0, 0): "W", (3, 3): "P"}, shrimps=[(0, 0, 0), (5, 5, 0)],
              turn={"shrimp_moves": 12})
    moves = of_kind(s, "move")
    assert MOVE(s, (5, 5), (3, 3)) in moves and MOVE(s, (5, 5), None) in moves
    assert MOVE(s, (5, 5), (4, 4)) not in moves                     # not onto bare rock
    assert not any(GAME.actions.decode(a)[1]["shrimp"] == 0 for a in moves)  # (0,0) stays


def test_a_lay_from_the_screen_leaves_one_seen_polyp_less_for_sure():
    d = position(seats=[A(screen={Y: 3}, larva={Y: 1})])
    d["seats"][0]["seen_screen"] = counts(yellow=2)
    s = GAME.from_dict(d)
    s.apply(LAY(Y, 0, 0))
    assert seat(s, 0)["seen_screen"] == counts(yellow=1) and seat(s, 0)["screen"][Y] == 2
    d["seats"][0]["seen_screen"] = counts(yellow=4)
    with pytest.raises(ValueError, match="seen_screen"):
        GAME.from_dict(d)
