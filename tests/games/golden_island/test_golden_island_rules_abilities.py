"""The Golden Island: card abilities (spec 4.5), relics (2.7) and the hand refill (4.6)."""
from golden_island_pos import (GAME, MOVE, PASS, ABILITY, COPY_SLOT, SWAP, STEAL, STEAL_SPLIT, PEEK, TAKE,
                               LAND, VOLCANO, IMITATE, base, build, give_pirates, put_pirates,
                               set_hand, set_discard, set_permits, give_island_cards,
                               empty_island_deck, island, LANDING_1, LANDING_2, LANDING_3,
                               THIEF_3, THIEF_LH, MASTER_5, FORTUNE_2S, FORTUNE_4, PIRATE_1S,
                               PIRATE_4, VETERAN_3, VETERAN_5S, IMITATOR)


def at_ability(hand, ship="H", captain=0, players=4, rules=None, setup=None):
    """Seat 0 in its ability phase: it moved with a lighthouse card (a no-op at home) kept
    out of `hand`; `setup(d)` edits the position first."""
    d = base(players, seed=5, rules=rules)
    set_hand(d, 0, hand)
    d["seats"][0]["captain"] = captain
    d["seats"][0]["ship"] = ship
    d["phase"] = "ability"
    if setup:
        setup(d)
    return d


def abilities(d):
    return [a for a in build(d).legal_actions() if a != PASS]


def after(d, action):
    state = build(d)
    state.apply(action)
    return state


# ---------------------------------------------------------------- thieves

def test_thief_option_1_captains_or_ships_together():
    def setup(d):
        d["seats"][0]["captain"] = d["seats"][2]["captain"] = 5
        d["seats"][1]["captain"] = 3
        d["seats"][3]["ship"] = "T4"
    d = at_ability([THIEF_3], captain=5, setup=setup, rules={"steal_at_home": "none"})
    assert abilities(d) == [ABILITY(0, STEAL(2))]
    d = at_ability([THIEF_3], ship="T4", setup=setup, rules={"steal_at_home": "none"})
    d["seats"][0]["captain"] = 0
    assert ABILITY(0, STEAL(3)) in abilities(d) and ABILITY(0, STEAL(1)) not in abilities(d)


def test_thief_takes_a_random_card_both_keep_knowing_it():
    def setup(d):
        d["seats"][0]["captain"] = d["seats"][2]["captain"] = 5
    d = at_ability([THIEF_3], captain=5, setup=setup)
    card = d["seats"][2]["island_cards"][0]
    state = after(d, ABILITY(0, STEAL(2)))
    seats = state.to_dict()["seats"]
    assert card in seats[0]["island_cards"] and card in seats[0]["remembered_islands"]
    assert seats[2]["island_cards"] == [] and card in seats[2]["remembered_islands"]


def test_thief_needs_a_victim_with_cards_and_company():
    def setup(d):
        d["seats"][0]["captain"] = d["seats"][2]["captain"] = 5
        give_island_cards(d, 1, *d["seats"][2]["island_cards"])
    assert abilities(at_ability([THIEF_3], captain=5, setup=setup, rules={"steal_at_home": "none"})) == []
    assert abilities(at_ability([THIEF_3], captain=3, rules={"steal_at_home": "none"})) == []


def ships_home_captains_apart(d):
    """Every ship in the harbour; seat 0's captain on space 5, the others' on space 3."""
    for seat in d["seats"][1:]:
        seat["captain"] = 3


def home_thefts(value, setup=None):
    rules = None if value is None else {"steal_at_home": value}
    return abilities(at_ability([THIEF_3], captain=5 if setup else 0, setup=setup, rules=rules))


ALL_THREE = [ABILITY(0, STEAL(1)), ABILITY(0, STEAL(2)), ABILITY(0, STEAL(3))]


def test_steal_at_home_captains_by_default_the_lighthouse_is_one_space_the_piers_are_not():
    assert GAME.info()["rules"]["properties"]["steal_at_home"]["default"] == "captains"
    # Everybody starts on the lighthouse and in the harbour: the captains share a space.
    assert home_thefts(None) == home_thefts("captains") == ALL_THREE
    # Ships each at their own pier in the harbour share none.
    assert home_thefts(None, ships_home_captains_apart) == []
    assert home_thefts("captains", ships_home_captains_apart) == []


def test_steal_at_home_both_ships_in_the_harbour_are_together_too():
    assert home_thefts("both") == ALL_THREE
    assert home_thefts("both", ships_home_captains_apart) == ALL_THREE


def test_steal_at_home_none_no_theft_at_home():
    assert home_thefts("none") == []
    assert home_thefts("none", ships_home_captains_apart) == []
    # Away from home the pieces still meet (captains on space 5).
    def away(d):
        d["seats"][2]["captain"] = 5
    assert abilities(at_ability([THIEF_3], captain=5, setup=away,
                                rules={"steal_at_home": "none"})) == [ABILITY(0, STEAL(2))]


def test_G17_thief_option_2_empty_deck_on_an_island_card_space():
    def setup(d):
        empty_island_deck(d, 3)
        d["seats"][1]["captain"] = 4
        d["seats"][2]["captain"] = 4
        d["seats"][3]["captain"] = 8
        for s in d["seats"][1:]:
            s["ship"] = "H"
    d = at_ability([THIEF_3], captain=6, setup=setup, rules={"steal_at_home": "none"})
    assert abilities(d) == [ABILITY(0, STEAL(1)), ABILITY(0, STEAL(2)), ABILITY(0, STEAL(3))]
    # Not on an island-card space: no option 2.
    d = at_ability([THIEF_3], captain=5, setup=setup, rules={"steal_at_home": "none"})
    assert abilities(d) == []
    # Deck not empty: no option 2 either.
    d = at_ability([THIEF_3], captain=6, rules={"steal_at_home": "none"})
    d["seats"][1]["captain"] = d["seats"][2]["captain"] = d["seats"][3]["captain"] = 4
    assert abilities(d) == []


def test_master_thief_takes_one_or_two_from_one_opponent():
    def setup(d):
        d["seats"][0]["captain"] = d["seats"][2]["captain"] = 5
        give_island_cards(d, 2, d["island_deck"][0])
    d = at_ability([MASTER_5], captain=5, setup=setup, rules={"steal_at_home": "none"})
    assert abilities(d) == [ABILITY(0, STEAL(2, 1)), ABILITY(0, STEAL(2, 2))]
    state = after(d, ABILITY(0, STEAL(2, 2)))
    seats = state.to_dict()["seats"]
    assert len(seats[0]["island_cards"]) == 3 and seats[2]["island_cards"] == []


def test_master_thief_victims_option_two_opponents():
    def setup(d):
        for k in (0, 2, 3):
            d["seats"][k]["captain"] = 5
    d = at_ability([MASTER_5], captain=5, setup=setup, rules={"steal_at_home": "none"})
    assert not GAME.actions.select(abilities(d), "steal_split")
    d = at_ability([MASTER_5], captain=5, setup=setup,
                   rules={"steal_at_home": "none", "master_thief_victims": "two"})
    assert GAME.actions.select(abilities(d), "steal_split") == [ABILITY(0, STEAL_SPLIT(2, 3))]
    taken = d["seats"][2]["island_cards"] + d["seats"][3]["island_cards"]
    seats = after(d, ABILITY(0, STEAL_SPLIT(2, 3))).to_dict()["seats"]
    assert seats[2]["island_cards"] == [] and seats[3]["island_cards"] == []
    assert set(taken) <= set(seats[0]["island_cards"])
    # The Imitator copying a Master thief offers the same split.
    def copied(d):
        setup(d)
        set_discard(d, 1, [MASTER_5])
    d = at_ability([IMITATOR], captain=5, setup=copied,
                   rules={"steal_at_home": "none", "master_thief_victims": "two"})
    state = after(d, ABILITY(0, IMITATE(1)))
    assert ABILITY(COPY_SLOT, STEAL_SPLIT(2, 3)) in state.legal_actions()


# ---------------------------------------------------------------- fortune teller, pirates

def test_fortune_teller_looks_at_any_chest():
    d = at_ability([FORTUNE_4])
    assert abilities(d) == [ABILITY(0, PEEK(f"T{i}")) for i in range(1, 13)]
    state = after(d, ABILITY(0, PEEK("T7")))
    assert state.to_dict()["seats"][0]["known_chests"] == ["T7"]


def test_pirate_takes_one_back_from_the_ships_island_up_to_three():
    def setup(d):
        put_pirates(d, "T5", "black", "white")
    d = at_ability([PIRATE_4], ship="T5", setup=setup)
    assert abilities(d) == [ABILITY(0, TAKE("black")), ABILITY(0, TAKE("white"))]
    state = after(d, ABILITY(0, TAKE("white")))
    assert state.to_dict()["seats"][0]["pirates"]["white"] == 1
    assert island(state.to_dict(), "T5")["pirates"]["white"] == 0

    def full(d):
        setup(d)
        give_pirates(d, 0, "purple", "purple", "natural")
    assert abilities(at_ability([PIRATE_4], ship="T5", setup=full)) == []
    assert abilities(at_ability([PIRATE_4], ship="T6", setup=setup)) == []


def test_veteran_takes_one_or_two():
    def setup(d):
        put_pirates(d, "T5", "black", "black", "white")
        give_pirates(d, 0, "purple")
    d = at_ability([VETERAN_3], ship="T5", setup=setup)
    assert abilities(d) == [ABILITY(0, TAKE(*c)) for c in
                            (["black"], ["white"], ["black", "black"], ["black", "white"])]
    state = after(d, ABILITY(0, TAKE("black", "white")))
    assert sum(state.to_dict()["seats"][0]["pirates"].values()) == 3

    def two_held(d):
        setup(d)
        give_pirates(d, 0, "purple")
    assert abilities(at_ability([VETERAN_3], ship="T5", setup=two_held)) == [
        ABILITY(0, TAKE("black")), ABILITY(0, TAKE("white"))]


def test_pirate_and_veteran_take_pirates_back_from_a_volcano():
    # Pirates landed on a volcano are neutral like any island's: a ship there recovers them.
    for node in ("VL", "VU"):
        def setup(d):
            put_pirates(d, node, "black", "white")
        d = at_ability([PIRATE_4], ship=node, setup=setup)
        assert abilities(d) == [ABILITY(0, TAKE("black")), ABILITY(0, TAKE("white"))], node
        after_take = after(d, ABILITY(0, TAKE("black"))).to_dict()
        assert after_take["seats"][0]["pirates"]["black"] == 1
        assert after_take["volcanoes"][node] == {"black": 0, "white": 1, "purple": 0,
                                                 "natural": 0}
        d = at_ability([VETERAN_3], ship=node, setup=setup)
        assert ABILITY(0, TAKE("black", "white")) in abilities(d), node
        after_take = after(d, ABILITY(0, TAKE("black", "white"))).to_dict()
        assert after_take["seats"][0]["pirates"]["black"] == 1
        assert after_take["seats"][0]["pirates"]["white"] == 1
        assert sum(after_take["volcanoes"][node].values()) == 0


# ---------------------------------------------------------------- landing

def landing(pirates, held=(3,), ship="T5", relic=None, placed=()):
    def setup(d):
        give_pirates(d, 0, *pirates)
        set_permits(d, 0, held=list(held), placed=list(placed))
        if relic:
            d["relics_free"].remove(relic)
            d["seats"][0]["relic"] = relic
    return at_ability([LANDING_2], ship=ship, setup=setup)


def test_G12_landing_needs_the_island_colour_or_two_pirates():
    # T5 is black; {white, purple}: only the pair lands.
    assert abilities(landing(["white", "purple"])) == [ABILITY(0, LAND(3, "white", "purple"))]
    assert abilities(landing(["white"])) == []
    assert abilities(landing(["white"], relic="R1")) == [ABILITY(0, LAND(3, "white"))]
    assert abilities(landing(["black"])) == [ABILITY(0, LAND(3, "black"))]


def test_landing_places_pirates_and_a_chosen_permit_on_top():
    d = landing(["black", "white"], held=(2, 5))
    set_permits(d, 1, held=[], placed=[("T5", 4)])
    legal = abilities(d)
    assert ABILITY(0, LAND(2, "black")) in legal and ABILITY(0, LAND(5, "black", "white")) in legal
    state = after(d, ABILITY(0, LAND(5, "black", "white")))
    t5 = island(state.to_dict(), "T5")
    assert t5["permits"] == [[1, 4], [0, 5]]
    assert t5["pirates"] == {"black": 1, "white": 1, "purple": 0, "natural": 0}
    assert state.to_dict()["seats"][0]["permits_held"] == [2]


def test_G13_one_permit_per_island_per_player():
    assert abilities(landing(["black"], held=(3,), placed=[("T5", 4)])) == []


def test_landing_needs_a_permit_and_a_treasure_island():
    assert abilities(landing(["black", "white"], held=())) == []
    assert abilities(landing(["black", "white"], ship="H")) == []


def test_volcano_upper_takes_the_seven():
    d = landing(["purple"], ship="VU")
    assert abilities(d) == [ABILITY(0, VOLCANO("purple"))]
    state = after(d, ABILITY(0, VOLCANO("purple")))
    d2 = state.to_dict()
    assert d2["seats"][0]["permits_held"] == [3, 7] and not d2["seats"][0]["seven_at_volcano"]
    assert d2["volcanoes"]["VU"]["purple"] == 1
    # Once taken, no second landing for it.
    assert abilities(landing(["purple"], held=(3, 7), ship="VU")) == []


def test_volcano_lower_gives_a_chosen_relic_once():
    d = landing(["purple"], ship="VL")
    assert abilities(d) == [ABILITY(0, VOLCANO("purple", r)) for r in ("R1", "R2", "R3", "R4")]
    state = after(d, ABILITY(0, VOLCANO("purple", "R3")))
    d2 = state.to_dict()
    assert d2["seats"][0]["relic"] == "R3" and "R3" not in d2["relics_free"]
    assert abilities(landing(["purple"], ship="VL", relic="R2")) == []
    assert abilities(landing([], ship="VL")) == []


def test_volcano_landing_cards_option():
    d = landing(["purple"], ship="VU")
    d["rules"] = {"volcano_landing_cards": "pirate"}
    assert abilities(d) == []
    set_hand(d, 0, [PIRATE_4])
    assert abilities(d) == [ABILITY(0, VOLCANO("purple"))]


# ---------------------------------------------------------------- imitator

def test_imitator_copies_an_opponents_top_discard():
    def setup(d):
        set_discard(d, 2, [PIRATE_1S, FORTUNE_2S])
        set_discard(d, 1, [PIRATE_4])
    d = at_ability([IMITATOR], setup=setup)
    # Seat 1's Pirate has nothing to take in the harbour; seat 2's Fortune teller works.
    assert abilities(d) == [ABILITY(0, IMITATE(2))]
    state = after(d, ABILITY(0, IMITATE(2)))
    assert state.to_dict()["phase"] == "copy"
    assert state.legal_actions() == [ABILITY(COPY_SLOT, PEEK(f"T{i}")) for i in range(1, 13)]
    state.apply(ABILITY(COPY_SLOT, PEEK("T3")))
    d2 = state.to_dict()
    assert d2["seats"][0]["known_chests"] == ["T3"] and d2["current_player"] == 1
    assert d2["seats"][0]["discard"][-1] == IMITATOR


def test_imitator_copies_a_landing():
    # Seat 1's discard top is a Landing; seat 0 (ship at the black T5, a black pirate and
    # permit 3) lands through its Imitator as with the card itself.
    def setup(d):
        set_discard(d, 1, [LANDING_2])
        give_pirates(d, 0, "black")
        set_permits(d, 0, held=[3])
    d = at_ability([IMITATOR], ship="T5", setup=setup)
    assert abilities(d) == [ABILITY(0, IMITATE(1))]
    state = after(d, ABILITY(0, IMITATE(1)))
    assert state.to_dict()["phase"] == "copy"
    assert state.legal_actions() == [ABILITY(COPY_SLOT, LAND(3, "black"))]
    state.apply(ABILITY(COPY_SLOT, LAND(3, "black")))
    d2 = state.to_dict()
    assert island(d2, "T5")["permits"] == [[0, 3]]
    assert island(d2, "T5")["pirates"]["black"] == 1 and d2["seats"][0]["pirates"]["black"] == 0
    assert d2["seats"][0]["permits_held"] == [] and d2["seats"][0]["discard"][-1] == IMITATOR
    assert d2["seats"][1]["discard"] == [LANDING_2] and d2["current_player"] == 1
    # Without a permit to place, the copied Landing is not possible: no Imitator play.
    d = at_ability([IMITATOR], ship="T5", setup=setup)
    set_permits(d, 0, held=[])
    assert abilities(d) == []


def test_copying_an_imitator_does_nothing():
    # Seat 1's discard top is its own Imitator; seat 0 plays its Imitator on it.
    d = at_ability([IMITATOR], setup=lambda x: set_discard(x, 1, [IMITATOR]))
    state = build(d)
    assert state.legal_actions() == [PASS, ABILITY(0, IMITATE(1))]
    before = state.to_dict()
    state.apply(ABILITY(0, IMITATE(1)))
    assert state.legal_actions() == [PASS]
    state.apply(PASS)
    now = state.to_dict()
    assert now["current_player"] == 1
    for key in ("island_cards", "known_chests", "pirates", "permits_held"):
        assert now["seats"][0][key] == before["seats"][0][key]


# ---------------------------------------------------------------- turn order, relics, refill

def test_only_one_ability_then_the_turn_passes_and_the_hand_refills():
    d = at_ability([FORTUNE_4, FORTUNE_2S])
    state = after(d, ABILITY(0, PEEK("T1")))
    d2 = state.to_dict()
    assert d2["current_player"] == 1 and len(d2["seats"][0]["hand"]) == 4


def test_pass_ends_the_turn():
    d = at_ability([FORTUNE_4])
    state = after(d, PASS)
    assert state.current_player == 1
    assert len(state.to_dict()["seats"][0]["hand"]) == 4


def test_G18_relic_R3_refills_to_five():
    def setup(d):
        d["relics_free"].remove("R3")
        d["seats"][0]["relic"] = "R3"
    d = at_ability([FORTUNE_4, LANDING_1], setup=setup)
    state = after(d, ABILITY(1, PEEK("T1")))      # one card left after the turn
    assert len(state.to_dict()["seats"][0]["hand"]) == 5


def test_relic_R4_discard_and_draw_at_turn_start():
    d = base(4, seed=5)
    d["relics_free"].remove("R4")
    d["seats"][1]["relic"] = "R4"
    d["phase"] = "ability"
    state = after(d, PASS)
    assert state.to_dict()["phase"] == "start" and state.current_player == 1
    legal = state.legal_actions()
    assert legal == sorted([SWAP()] + [SWAP(k) for k in range(4)] +
                           [SWAP(i, j) for i in range(4) for j in range(i + 1, 4)])
    hand = state.to_dict()["seats"][1]["hand"]
    state.apply(SWAP(0, 2))
    seat = state.to_dict()["seats"][1]
    assert seat["discard"][-2:] == [hand[2], hand[0]] and len(seat["hand"]) == 4
    assert state.to_dict()["phase"] == "move"


def test_refill_reshuffles_the_discard_pile():
    d = at_ability([FORTUNE_4])
    s = d["seats"][0]
    s["discard"], s["deck"] = s["deck"], []
    state = after(d, ABILITY(0, PEEK("T1")))
    seat = state.to_dict()["seats"][0]
    assert len(seat["hand"]) == 4 and seat["discard"] == [] and len(seat["deck"]) == 12
