"""Polyp placement, growth, attack, merge ban, extra growth and shrimp protection (spec 6),
with the test vectors of section 13 (test board 6 x 6, all tiles on side S)."""
import pytest

from reef_pos import (COLLECT, EAT, END_PLAY, G, INTRO, LAY, LAY_CONSUMED, MOVE, O, P, W, Y, ALGA, at,
                      build, counts, seat)

LIGHT_BOARD = ["++++++", "++++++", "++L+++", "++++++", "++++++", "++++++"]
LIGHT_RULES = {"boards": {f"light{i}": LIGHT_BOARD for i in range(4)}}


def A(**kw):
    """Seat A (0): a seat dict with the given screen/consumed/larva counts."""
    out = {}
    for key in ("screen", "consumed", "larva", "fish"):
        if key in kw:
            out[key] = counts(**kw.pop(key))
    out.update(kw)
    return out


def test_tv1_attack_by_a_coral_of_two_on_a_weaker_polyp():
    s = build(polyps={(2, 1): "W", (2, 2): "W", (2, 3): "Y"},
              seats=[A(screen={W: 1}, larva={W: 1})])
    supply = s.to_dict()["larva_supply"][W]
    assert LAY(W, 2, 3) in s.legal_actions()
    s.apply(LAY(W, 2, 3))
    assert at(s, 2, 3) == "W"
    assert seat(s, 0)["consumed"] == counts(yellow=1)
    assert seat(s, 0)["larva"][W] == 0 and s.to_dict()["larva_supply"][W] == supply + 1


def test_tv2_attacking_coral_needs_two_polyps_before_the_placement():
    s = build(polyps={(2, 2): "W", (2, 3): "Y"}, seats=[A(screen={W: 1}, larva={W: 1})])
    assert LAY(W, 2, 3) not in s.legal_actions()
    assert LAY(W, 2, 1) in s.legal_actions()      # growth on an empty cell is fine


def test_tv3_a_weaker_colour_never_attacks_a_stronger_one():
    s = build(polyps={(2, 1): "Y", (2, 2): "Y", (2, 3): "W"}, seats=[A(screen={Y: 1}, larva={Y: 1})])
    assert LAY(Y, 2, 3) not in s.legal_actions()


def test_tv4_shrimp_protects_its_neighbours_in_the_same_coral():
    s = build(polyps={(2, 3): "Y", (2, 4): "Y", (3, 4): "Y", (2, 1): "W", (2, 2): "W"},
              shrimps=[(2, 4, 1)], seats=[A(screen={W: 1}, larva={W: 1})])
    assert LAY(W, 2, 3) not in s.legal_actions()


def test_protection_reaches_only_orthogonal_neighbours_of_the_shrimp():
    # Y coral (2,3)-(2,4)-(2,5): the shrimp on (2,5) protects (2,4), not (2,3).
    s = build(polyps={(2, 3): "Y", (2, 4): "Y", (2, 5): "Y", (2, 1): "W", (2, 2): "W"},
              shrimps=[(2, 5, 1)], seats=[A(screen={W: 1}, larva={W: 1})])
    assert LAY(W, 2, 3) in s.legal_actions()


def test_tv6_no_protection_across_corals():
    s = build(polyps={(2, 3): "Y", (3, 3): "P", (2, 1): "W", (2, 2): "W"},
              shrimps=[(3, 3, 1)], seats=[A(screen={W: 1}, larva={W: 1})])
    assert LAY(W, 2, 3) in s.legal_actions()


def test_a_polyp_carrying_a_shrimp_cannot_be_attacked():
    s = build(polyps={(2, 3): "Y", (2, 1): "W", (2, 2): "W"}, shrimps=[(2, 3, 1)],
              seats=[A(screen={W: 1}, larva={W: 1})])
    assert LAY(W, 2, 3) not in s.legal_actions()


def test_tv7_merge_ban_and_moving_the_own_shrimp_away_first():
    s = build(polyps={(1, 1): "P", (1, 3): "P"}, shrimps=[(1, 1, 0), (1, 3, 1)],
              seats=[A(screen={P: 1}, larva={P: 1})])
    assert LAY(P, 1, 2) not in s.legal_actions()
    s.apply(MOVE(s, (1, 1), (0, 0)))                  # action 5 onto bare rock
    assert LAY(P, 1, 2) in s.legal_actions()
    s.apply(LAY(P, 1, 2))
    board = s.to_dict()["boards"][0]
    assert board["cells"][1][1:4] == "PPP" and [1, 3, 1] in board["shrimps"]
    # A's shrimp may not join the merged coral (it has B's shrimp) and may not stay on bare
    # rock at the end of the turn.
    legal = s.legal_actions()
    assert MOVE(s, (0, 0), (1, 1)) not in legal and MOVE(s, (0, 0), (1, 2)) not in legal
    assert COLLECT("white", s) not in legal
    s.apply(MOVE(s, (0, 0), None))
    assert COLLECT("white", s) in s.legal_actions()


def test_merging_unguarded_corals_with_one_guarded_coral_is_allowed():
    s = build(polyps={(1, 1): "P", (1, 3): "P", (0, 2): "P"}, shrimps=[(1, 3, 1)],
              seats=[A(screen={P: 1}, larva={P: 1})])
    s.apply(LAY(P, 1, 2))
    assert s.score_breakdown()[1]["guarded_polyps"] == 4


def test_merge_ban_also_holds_for_an_attacking_polyp():
    # Y on (1,2) would attack the orange polyp and connect two guarded yellow corals.
    s = build(polyps={(1, 0): "Y", (1, 1): "Y", (1, 2): "O", (1, 3): "Y", (0, 3): "Y"},
              shrimps=[(1, 0, 0), (0, 3, 1)], seats=[A(screen={Y: 1}, larva={Y: 1})])
    assert LAY(Y, 1, 2) not in s.legal_actions()


def test_tv9_extra_growth_on_the_light_rock_and_its_variant_switch():
    s = build(rules=LIGHT_RULES, seats=[A(screen={Y: 5}, larva={Y: 1})])
    bag_y = s.to_dict()["bag"][Y]
    s.apply(LAY(Y, 1, 2))
    d = s.to_dict()
    assert at(s, 2, 2) == "Y" and at(s, 1, 2) == "Y"
    assert d["bonus_row"][Y] == 1 and d["bag"][Y] == bag_y - 1
    # The spread polyp does not count toward the 4 from behind the screen.
    for cell in ((0, 2), (0, 3), (0, 4)):
        s.apply(LAY(Y, *cell))
    assert seat(s, 0)["screen"][Y] == 1 and LAY(Y, 0, 5) not in s.legal_actions()
    off = build(rules={**LIGHT_RULES, "advanced_no_extra_growth": True},
                seats=[A(screen={Y: 5}, larva={Y: 1})])
    off.apply(LAY(Y, 1, 2))
    assert at(off, 2, 2) == "L"


def test_tv11_no_extra_growth_onto_a_light_rock_with_a_shrimp():
    s = build(rules=LIGHT_RULES, polyps={(4, 4): "W"}, shrimps=[(4, 4, 0)],
              seats=[A(screen={Y: 2}, larva={Y: 1})])
    s.apply(MOVE(s, (4, 4), (2, 2)))
    assert LAY(Y, 2, 2) not in s.legal_actions()
    s.apply(LAY(Y, 1, 2))
    assert at(s, 2, 2) == "L"


def test_extra_growth_is_triggered_by_an_attack_and_respects_the_merge_ban():
    s = build(rules=LIGHT_RULES, polyps={(1, 0): "W", (1, 1): "W", (1, 2): "Y"},
              seats=[A(screen={W: 1}, larva={W: 1})])
    s.apply(LAY(W, 1, 2))                       # attack next to the light rock (A3)
    assert at(s, 2, 2) == "W" and seat(s, 0)["consumed"][Y] == 1
    off = build(rules={**LIGHT_RULES, "attack_extra_growth": False},
                polyps={(1, 0): "W", (1, 1): "W", (1, 2): "Y"},
                seats=[A(screen={W: 2}, larva={W: 1})])
    off.apply(LAY(W, 1, 2))                     # the option: an attack does not spread ...
    assert at(off, 2, 2) == "L" and at(off, 1, 2) == "W"
    off.apply(LAY(W, 3, 2))                     # ... growth on an empty cell still does
    assert at(off, 2, 2) == "W"
    # Two guarded white corals next to the light rock: the spread would join them.
    s = build(rules=LIGHT_RULES, polyps={(2, 1): "W", (2, 3): "W"},
              shrimps=[(2, 1, 0), (2, 3, 1)], seats=[A(screen={W: 1}, larva={W: 1})])
    s.apply(LAY(W, 1, 2))
    assert at(s, 2, 2) == "L"


def test_extra_growth_fails_without_a_polyp_of_the_colour():
    from reef_pos import GAME, position
    d = position(rules=LIGHT_RULES, seats=[A(screen={Y: 1}, larva={Y: 1})])
    d["seats"][1]["screen"][Y] += d["bag"][Y] + d["bonus_row"][Y]
    d["bag"][Y] = d["bonus_row"][Y] = 0
    s = GAME.from_dict(d)
    s.apply(LAY(Y, 1, 2))
    assert at(s, 2, 2) == "L"


def test_a_missing_bonus_polyp_comes_from_the_bag_unless_the_option_says_fail():
    from reef_pos import GAME, position
    for shortage, grows in (("from_bag", True), ("fail", False)):
        d = position(rules={**LIGHT_RULES, "bonus_shortage": shortage},
                     seats=[A(screen={Y: 1}, larva={Y: 1})])
        d["bonus_row"][Y] = 0
        d["bag"][Y] += 1
        s = GAME.from_dict(d)
        s.apply(LAY(Y, 1, 2))
        assert (at(s, 2, 2) == "Y") == grows


def test_tv12_an_attack_splits_the_attacked_coral():
    s = build(polyps={(1, 1): "O", (1, 2): "O", (1, 3): "O", (2, 2): "Y", (3, 2): "Y"},
              seats=[A(screen={Y: 1}, larva={Y: 1})])
    s.apply(LAY(Y, 1, 2))
    assert seat(s, 0)["consumed"] == counts(orange=1)
    s.apply(INTRO(1, 1))
    assert s.score_breakdown()[0]["guarded_polyps"] == 1      # {(1,1)} alone
    s2 = build(polyps={(1, 1): "O", (1, 3): "O", (1, 2): "Y", (2, 2): "Y", (3, 2): "Y"},
               seats=[A(screen={Y: 1}, larva={Y: 1})])
    s2.apply(INTRO(3, 2))
    assert s2.score_breakdown()[0]["guarded_polyps"] == 3


def test_tv19_rulebook_attack_example():
    polyps = {(0, 0): "Y", (0, 1): "Y", (1, 2): "O", (1, 3): "O", (2, 3): "O", (3, 3): "O",
              (5, 0): "O", (4, 2): "O", (3, 1): "P"}
    s = build(polyps=polyps, shrimps=[(3, 3, 1)],
              seats=[A(screen={Y: 3, W: 4}, larva={Y: 1, W: 1}, consumed={W: 1},
                       open_sea_shrimp=True, fish={G: 1})])
    for cell in ((0, 2), (1, 2), (1, 3)):
        assert LAY(Y, *cell) in s.legal_actions(), cell
        s.apply(LAY(Y, *cell))
    assert LAY(Y, 2, 3) not in s.legal_actions()          # protected by B's shrimp
    # Before the purple alga white cannot eat pink; tile 7 flips with it.
    s.apply(ALGA(O, "purple", 4))
    d = s.to_dict()
    assert d["tiles"][3] == {"side": "S", "covered": True}
    assert d["tiles"][6]["side"] == "N"
    assert [t["side"] for i, t in enumerate(d["tiles"]) if i not in (3, 6)] == ["S"] * 8
    for cell in ((4, 0), (4, 1), (5, 0), (4, 2)):
        s.apply(LAY(W, *cell))
    assert LAY(W, 3, 1) not in s.legal_actions()          # 4 from behind the screen used
    s.apply(LAY_CONSUMED(W, 3, 1))
    s.apply(INTRO(4, 0))
    board = s.to_dict()["boards"][0]["cells"]
    assert board[0][:3] == "YYY" and board[1][2:4] == "YY"
    assert board[2][3] == "O" and board[3][3] == "O" and board[3][1] == "W"
    assert board[4][:3] == "WWW" and board[5][0] == "W"
    assert seat(s, 0)["consumed"] == counts(orange=3, pink=1)
    assert s.score_breakdown()[0]["guarded_polyps"] == 5
    s.apply(COLLECT("white", s))
    assert s.current_player == 1


def test_white_cannot_eat_pink_before_the_alga_flips_tile_7():
    s = build(polyps={(4, 0): "W", (4, 1): "W", (3, 1): "P"}, seats=[A(screen={W: 1}, larva={W: 1})])
    assert LAY(W, 3, 1) not in s.legal_actions()


def test_a_polyp_may_grow_any_coral_including_one_guarded_by_another_player():
    s = build(polyps={(0, 0): "W"}, shrimps=[(0, 0, 1)], seats=[A(screen={W: 1}, larva={W: 1})])
    s.apply(LAY(W, 0, 1))
    assert s.score_breakdown()[1]["guarded_polyps"] == 2


def test_only_playable_cells_without_polyp_or_shrimp_take_a_growing_polyp():
    rules = {"boards": {f"b{i}": ["+.+", "+++"] for i in range(4)}}
    s = build(rules=rules, polyps={(1, 1): "G"}, shrimps=[(1, 1, 1)],
              seats=[A(screen={W: 1}, larva={W: 1})])
    legal = s.legal_actions()
    assert LAY(W, 0, 1) not in legal and LAY(W, 1, 1) not in legal
    assert LAY(W, 0, 0) in legal and LAY(W, 0, 3) not in legal


def test_corals_connect_orthogonally_only():
    s = build(polyps={(0, 0): "W", (1, 1): "W", (1, 2): "Y"}, seats=[A(screen={W: 1}, larva={W: 1})])
    assert LAY(W, 1, 2) not in s.legal_actions()           # (0,0) and (1,1) are two singles


def test_a_light_rock_emptied_by_a_meal_spreads_again():
    white = {(2, c): "W" for c in range(5)}                   # the coral covers the light rock
    s = build(rules=LIGHT_RULES, polyps=white, shrimps=[(2, 0, 0)],
              seats=[A(screen={Y: 1}, larva={Y: 1})])
    s.apply(EAT(2, 0))
    assert at(s, 2, 2) == "L"
    s.apply(LAY(Y, 1, 2))
    assert at(s, 2, 2) == "Y"


def test_an_attack_that_splits_a_guarded_coral_leaves_the_shrimp_on_its_fragment():
    s = build(polyps={(1, 0): "O", (1, 1): "O", (1, 2): "O", (1, 3): "O", (2, 2): "Y", (3, 2): "Y"},
              shrimps=[(1, 0, 1)], seats=[A(screen={Y: 1}, larva={Y: 1})])
    s.apply(LAY(Y, 1, 2))                         # (1,2) is not next to the shrimp: unprotected
    assert s.to_dict()["boards"][0]["shrimps"] == [[1, 0, 1]]
    assert s.score_breakdown()[1]["guarded_polyps"] == 2          # {(1,0), (1,1)}
