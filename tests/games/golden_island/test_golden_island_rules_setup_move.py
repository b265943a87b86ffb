"""The Golden Island: setup (spec 3), movement (4.1) and nest actions (4.3, 4.4)."""
import pytest

from golden_island_pos import (GAME, MOVE, move_ends, GAMBLE_PIRATE, PASS, ABILITY, LAND, base, build,
                               clone, give_pirates, set_hand, set_deck_top, set_permits,
                               empty_island_deck, LANDING_1, LANDING_2, LANDING_2S, LANDING_3,
                               LANDING_4S, THIEF_LH, MASTER_5, FORTUNE_4, PIRATE_4, VETERAN_5S,
                               IMITATOR, FORTUNE_2S)


# ---------------------------------------------------------------- setup

@pytest.mark.parametrize("players", [2, 3, 4])
def test_setup_per_player_count(players):
    d = base(players, seed=7)
    assert d["houses"] == {c: players for c in ("black", "white", "purple", "natural")}
    assert len(d["seats"]) == players
    assert d["relics_free"] == ["R1", "R2", "R3", "R4"]
    assert d["bank_gold"] == 47 - 3          # the 3-coin lies on the Golden Island
    assert sorted(i["chest"] for i in d["islands"]) == [4, 4, 5, 5, 5, 6, 6, 6, 7, 7, 8, 8]
    cards = [d["golden_island"]] + d["island_deck"]
    for s in d["seats"]:
        assert s["captain"] == 0 and s["ship"] == "H"
        assert len(s["hand"]) == 4 and len(s["deck"]) == 12 and s["discard"] == []
        assert len(s["permits_held"]) == 1 and 1 <= s["permits_held"][0] <= 6
        assert sorted(s["permits_held"] + s["permits_pool"]) == [1, 2, 3, 4, 5, 6]
        assert s["seven_at_volcano"] and s["relic"] is None
        assert len(s["island_cards"]) == 1 and s["remembered_islands"] == s["island_cards"]
        cards += s["island_cards"]
    assert sorted(cards) == sorted(f"T{i}" for i in range(1, 13))
    assert len(d["island_deck"]) == 11 - players
    assert d["current_player"] == 0 and d["phase"] == "move"


def test_first_player_may_be_random():
    firsts = {GAME.new(4, rules={"first_player": "random"}, seed=s).current_player
              for s in range(40)}
    assert firsts == {0, 1, 2, 3}


def test_golden_island_differs_between_deals():
    assert len({base(2, seed=s)["golden_island"] for s in range(30)}) > 5


# ---------------------------------------------------------------- movement

def start(hand, captain=0, ship="H", players=4, rules=None):
    d = base(players, seed=3, rules=rules)
    set_hand(d, 0, hand)
    d["seats"][0]["captain"] = captain
    d["seats"][0]["ship"] = ship
    return d


def test_G6_captain_to_lighthouse_then_ship_with_the_rest():
    # Captain on the black house (index 2), ship at the pier, plays a 5.
    d = start([MASTER_5], captain=2)
    state = build(d)
    legal = state.legal_actions()
    assert MOVE(0, 0, "T7") in legal            # 2 steps home, then H->T1->T4->T7
    state.apply(MOVE(0, 0, "T7"))
    after = state.to_dict()["seats"][0]
    assert after["captain"] == 0 and after["ship"] == "T7"
    assert after["pirates"] == d["seats"][0]["pirates"]          # no nest action
    assert after["permits_held"] == d["seats"][0]["permits_held"]


def test_G7_ship_away_captain_may_not_move():
    d = start([LANDING_3, THIEF_LH], ship="T5")
    legal = build(d).legal_actions()
    ends = move_ends(legal, slot=0)
    # With the 3 the ship moves; the captain can only go on once the ship is back in the
    # harbour (T5->T2->H, then one step): never three captain steps.
    assert {cap for cap, ship in ends} == {0, 1, 11}
    assert all(ship == "H" for cap, ship in ends if cap != 0)
    assert MOVE(0, 0, "T2") in legal and MOVE(0, 0, "T8") in legal
    assert MOVE(0, 3, "T5") not in legal
    # The lighthouse card returns the ship to its pier.
    assert MOVE(1, 0, "H") in legal


def test_lighthouse_card_returns_the_captain_or_does_nothing_at_home():
    d = start([THIEF_LH], captain=5)
    assert build(d).legal_actions() == [MOVE(0, 0, "H")]
    d = start([THIEF_LH])
    state = build(d)
    assert state.legal_actions() == [MOVE(0, 0, "H")]
    state.apply(MOVE(0, 0, "H"))
    assert state.to_dict()["seats"][0]["discard"] == [THIEF_LH]


def test_G9_ship_round_trip_ends_in_harbour_and_cannot_land_there():
    d = start([LANDING_3, LANDING_2])
    give_pirates(d, 0, "black", "white")
    state = build(d)
    assert MOVE(1, 0, "H") in state.legal_actions()     # the 3: H->T1->T2->H
    state.apply(MOVE(1, 0, "H"))
    # No landing in the harbour: no ability applies, so the turn passes on.
    assert state.to_dict()["seats"][0]["ship"] == "H" and state.current_player == 1
    # Ending at T1 instead, the landing card can be used.
    state = build(d)
    state.apply(MOVE(1, 0, "T1"))
    assert state.current_player == 0 and state.to_dict()["phase"] == "ability"


def test_each_line_at_most_once():
    # 2 points cannot go out and back on one line: H->T1->H is not a move.
    d = start([LANDING_2])
    legal = build(d).legal_actions()
    assert MOVE(0, 0, "H") not in legal
    assert MOVE(0, 0, "T2") in legal    # H->T1->T2 (or H->T3->T2)
    assert MOVE(0, 0, "VL") in legal


def test_captain_keeps_one_direction_and_never_revisits():
    d = start([LANDING_2])
    captains = {cap for cap, _ in move_ends(build(d).legal_actions())}
    # From the lighthouse, 2 steps clockwise (2) or counter-clockwise (10); never back to 0
    # after one step out (1 or 11), which would revisit.
    assert captains == {0, 2, 10}
    d = start([LANDING_3])
    state = build(d)
    captains = {cap for cap, _ in move_ends(state.legal_actions())}
    assert captains == {0, 3, 9}


def test_ship_entering_the_harbour_hands_over_to_the_captain():
    d = start([LANDING_3], ship="T1")
    legal = build(d).legal_actions()
    assert MOVE(0, 2, "H") in legal and MOVE(0, 10, "H") in legal   # T1->H, then 2 steps
    d = start([LANDING_3], captain=1)
    legal = build(d).legal_actions()
    assert MOVE(0, 0, "T1") in legal       # 1 step home, then 2 sea points H->T2->T1
    assert MOVE(0, 4, "H") in legal        # or 3 steps on


STAR_SEA = {"edges": [["H", n] for n in
                      [f"T{i}" for i in range(1, 13)] + ["VL", "VU"]]}
TINY_NEST = [{"kind": "lighthouse"}, {"kind": "island_card"}, {"kind": "permit"}]


def test_move_spends_the_most_points_when_all_cannot_be_used():
    # A star-shaped sea (each line leads back over itself) and a 3-space ring: at most
    # 2 points can ever be spent from home, so a 3 spends 2 (spec 4.1 ASSUMPTION).
    rules = {"sea_graph": STAR_SEA, "nest_spaces": TINY_NEST}
    d = start([LANDING_3], rules=rules)
    legal = build(d).legal_actions()
    assert sorted(move_ends(legal)) == [(1, "H"), (2, "H")] and len(legal) == 2


def test_exact_move_required_makes_such_a_card_unplayable():
    rules = {"sea_graph": STAR_SEA, "nest_spaces": TINY_NEST, "exact_move_required": True}
    d = start([LANDING_1, LANDING_3], rules=rules)
    legal = build(d).legal_actions()
    assert legal and move_ends(legal) == move_ends(legal, slot=0)     # only the 1
    assert len(move_ends(legal)) == len(legal)
    # With no playable card at all, a card is played without moving (data guard).
    d = start([LANDING_3], rules=rules)
    assert build(d).legal_actions() == [MOVE(0, 0, "H")]


def test_relic_R2_allows_one_extra_step():
    d = start([LANDING_2])
    d["relics_free"].remove("R2")
    d["seats"][0]["relic"] = "R2"
    captains = {cap for cap, _ in move_ends(build(d).legal_actions())}
    assert captains == {0, 2, 3, 9, 10}


# ---------------------------------------------------------------- nest actions

def test_island_card_space_draws_the_top_card():
    d = start([LANDING_1])
    top = d["island_deck"][-1]
    state = build(d)
    state.apply(MOVE(0, 1, "H"))
    seat = state.to_dict()["seats"][0]
    assert top in seat["island_cards"] and top in seat["remembered_islands"]
    assert top not in state.to_dict()["island_deck"]


def test_island_card_space_with_empty_deck_does_nothing():
    d = start([LANDING_1])
    empty_island_deck(d, 2)
    state = build(d)
    state.apply(MOVE(0, 1, "H"))
    assert state.to_dict()["seats"][0]["island_cards"] == d["seats"][0]["island_cards"]


def test_only_the_final_space_acts():
    # Two steps clockwise pass the island-card space and end on the black house.
    d = start([LANDING_2])
    state = build(d)
    state.apply(MOVE(0, 2, "H"))
    seat = state.to_dict()["seats"][0]
    assert seat["pirates"]["black"] == 1
    assert seat["island_cards"] == d["seats"][0]["island_cards"]


EVERY = {"nest_actions": "every_space"}


def test_every_space_option_acts_on_each_space_passed():
    # The same two clockwise steps: the island-card space passed draws too.
    d = start([LANDING_2], rules=EVERY)
    state = build(d)
    state.apply(MOVE(0, 2, "H"))
    seat = state.to_dict()["seats"][0]
    assert seat["pirates"]["black"] == 1
    assert len(seat["island_cards"]) == len(d["seats"][0]["island_cards"]) + 1


def test_every_space_option_lets_the_captain_choose_its_way():
    # Two steps counter-clockwise pass island cards (11) and end on the natural house (10):
    # the way is part of the move only when the spaces passed act.
    d = start([LANDING_2])
    assert MOVE(0, 10, "H") in build(d).legal_actions()
    d = start([LANDING_2], rules=EVERY)
    legal = build(d).legal_actions()
    assert MOVE(0, 10, "H", way=1) in legal and MOVE(0, 10, "H") not in legal
    assert MOVE(0, 2, "H") in legal and MOVE(0, 2, "H", way=1) not in legal
    state = build(d)
    state.apply(MOVE(0, 10, "H", way=1))
    seat = state.to_dict()["seats"][0]
    assert seat["pirates"]["natural"] == 1 and seat["pirates"]["black"] == 0
    assert len(seat["island_cards"]) == len(d["seats"][0]["island_cards"]) + 1
    # Six points reach the opposite space both ways round: two different moves.
    d = start([MASTER_5], rules=EVERY)
    d["relics_free"].remove("R2")
    d["seats"][0]["relic"] = "R2"
    legal = build(d).legal_actions()
    assert MOVE(0, 6, "H") in legal and MOVE(0, 6, "H", way=1) in legal


def test_every_space_option_a_won_gamble_pauses_the_walk_in_order():
    # Five clockwise steps: island cards, black house, permits, gamble (won), white house.
    d = start([MASTER_5], rules=EVERY)
    set_permits(d, 0, held=[1])
    give_pirates(d, 0, "natural")
    set_deck_top(d, 0, FORTUNE_2S)
    state = build(d)
    state.apply(MOVE(0, 5, "H"))
    d = state.to_dict()
    assert d["phase"] == "gamble" and d["nest_path"] == {"at": 4, "way": "clockwise", "left": 1}
    seat = d["seats"][0]
    assert seat["pirates"] == {"black": 1, "white": 0, "purple": 0, "natural": 1}
    assert len(seat["permits_held"]) == 3          # the permit space and the won gamble
    state = build(d)                               # the pause survives a state dict
    state.apply(GAMBLE_PIRATE("purple"))
    # The third pirate came from the gamble: the white house, reached last, gives none.
    seat = state.to_dict()["seats"][0]
    assert seat["pirates"] == {"black": 1, "white": 0, "purple": 1, "natural": 1}
    assert state.to_dict()["nest_path"]["left"] == 0


def test_permit_space_takes_one_own_permit_from_the_pool():
    d = start([LANDING_3])
    set_permits(d, 0, held=[1, 2, 3, 5, 6], pool=[4])
    state = build(d)
    state.apply(MOVE(0, 3, "H"))
    seat = state.to_dict()["seats"][0]
    assert seat["permits_held"] == [1, 2, 3, 4, 5, 6] and seat["permits_pool"] == []


def test_G11_permit_space_with_empty_pool_does_nothing():
    d = start([LANDING_3])
    set_permits(d, 0, held=[1, 2, 3, 4, 5, 6], pool=[])
    state = build(d)
    state.apply(MOVE(0, 3, "H"))
    assert state.to_dict()["seats"][0]["permits_held"] == [1, 2, 3, 4, 5, 6]


def test_pirate_house_gives_one_pirate_up_to_three():
    d = start([LANDING_2])
    state = build(d)
    state.apply(MOVE(0, 2, "H"))
    assert state.to_dict()["houses"]["black"] == 3
    d = start([LANDING_2])
    give_pirates(d, 0, "white", "white", "purple")
    state = build(d)
    state.apply(MOVE(0, 2, "H"))
    assert state.to_dict()["seats"][0]["pirates"]["black"] == 0   # cap of three
    d = start([LANDING_2], players=2)
    d["houses"]["black"] = 0
    d["seats"][1]["pirates"]["black"] = 2
    state = build(d)
    state.apply(MOVE(0, 2, "H"))
    assert state.to_dict()["seats"][0]["pirates"]["black"] == 0   # empty house


def gamble(flip, pirates=(), empty_pool=False):
    d = start([LANDING_4S])
    if empty_pool:
        set_permits(d, 0, held=[1, 2, 3, 4, 5, 6], pool=[])
    else:
        set_permits(d, 0, held=[1])
    give_pirates(d, 0, *pirates)
    set_deck_top(d, 0, flip)
    state = build(d)
    state.apply(MOVE(0, 4, "H"))
    return state


def test_gamble_with_a_card_symbol_wins_a_permit_and_a_chosen_pirate():
    state = gamble(FORTUNE_2S)
    d = state.to_dict()
    assert d["seats"][0]["discard"] == [LANDING_4S, FORTUNE_2S]
    assert len(d["seats"][0]["permits_held"]) == 2 and len(d["seats"][0]["permits_pool"]) == 4
    assert d["phase"] == "gamble"
    assert state.legal_actions() == [GAMBLE_PIRATE(c) for c in ("black", "white", "purple", "natural")]
    state.apply(GAMBLE_PIRATE("purple"))
    assert state.to_dict()["seats"][0]["pirates"]["purple"] == 1


def test_gamble_without_symbol_gives_nothing():
    d = gamble(FORTUNE_4).to_dict()
    assert d["seats"][0]["permits_held"] == [1]
    assert d["seats"][0]["discard"] == [LANDING_4S, FORTUNE_4]
    assert sum(d["seats"][0]["pirates"].values()) == 0


def test_G10_gamble_won_with_three_pirates_gives_only_the_permit():
    state = gamble(FORTUNE_2S, pirates=("black", "black", "white"))
    d = state.to_dict()
    assert len(d["seats"][0]["permits_held"]) == 2
    assert d["phase"] != "gamble"
    assert sum(d["seats"][0]["pirates"].values()) == 3


def test_gamble_with_empty_pool_still_gives_the_pirate():
    state = gamble(FORTUNE_2S, empty_pool=True)
    assert state.to_dict()["seats"][0]["permits_held"] == [1, 2, 3, 4, 5, 6]
    assert state.to_dict()["phase"] == "gamble"


def test_gamble_reshuffles_the_discard_when_the_deck_is_empty():
    d = start([LANDING_4S])
    s = d["seats"][0]
    s["discard"], s["deck"] = s["deck"], []
    state = build(d)
    state.apply(MOVE(0, 4, "H"))
    seat = state.to_dict()["seats"][0]
    assert len(seat["discard"]) == 1 and len(seat["deck"]) + len(seat["hand"]) == 15
