"""Forbidden Desert rules, one test per rule of ../shared/rules/forbidden_desert.md."""
import pytest

import core_cy
from core_cy.games.forbidden_desert.engine import GAME, DEFAULT_METER, DEFAULT_ADVENTURERS
from desert_pos import (base, entry, find, put, storm_to, set_sand, pawn_at, wind, card_ids,
                         stack_storm, give_card, load, pawn_cell, run_storm, storm, clear,
                         ACTIONS, END_ACTIONS, DRAW, EXCAVATE, PICKUP, METEO_SKIP, METEO_PEEK,
                         WC_DRAW, TAKEOFF, PEEK_KEEP, PEEK_BOTTOM, MOVE, DIG, NAVIGATE, GIVE,
                         PASS_EQUIPMENT, BLAST, JET, SHIELD, SCOPE, RESERVE, THROTTLE, TRACKER)

ROLES4 = ["water_carrier", "archeologist", "navigator", "explorer"]


# ---------------------------------------------------------------- setup (spec 3)

@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_setup(players):
    for seed in range(5):
        d = GAME.new(players, seed=seed).to_dict()
        assert d["board"][2][2] is None
        tiles = [e["tile"] for row in d["board"] for e in row if e]
        assert sorted(tiles) == list(range(24))
        diamond = [(0, 2), (1, 1), (1, 3), (2, 0), (2, 4), (3, 1), (3, 3), (4, 2)]
        for r in range(5):
            for c in range(5):
                if d["board"][r][c]:
                    assert d["board"][r][c]["sand"] == (1 if (r, c) in diamond else 0)
                    assert not d["board"][r][c]["excavated"]
        assert d["sand_supply"] == 40
        crash = find(d, "crash_site")
        assert all(p["tile"] == entry(d, crash)["tile"] for p in d["pawns"])
        assert len({p["adventurer"] for p in d["pawns"]}) == players
        for p in d["pawns"]:
            assert p["water"] == DEFAULT_ADVENTURERS[p["adventurer"]]
        low = min(p["water"] for p in d["pawns"])
        assert d["pawns"][d["current_player"]]["water"] == low
        assert len(d["storm_draw_pile"]) == 31 and len(d["equipment_pile"]) == 12
        assert d["storm_meter_index"] == 0 and d["actions_left"] == 4
        assert all(p["state"] == "hidden" for p in d["parts"])


def test_setup_water_is_adventurer_maximum():
    d = GAME.new(5, rules={"roles": ["archeologist", "climber", "explorer", "meteorologist",
                                     "water_carrier"]}, seed=3).to_dict()
    assert [p["water"] for p in d["pawns"]] == [3, 3, 4, 4, 5]


@pytest.mark.parametrize("difficulty,index", [("novice", 0), ("normal", 1), ("elite", 2),
                                              ("legendary", 3)])
def test_difficulty_sets_meter_start(difficulty, index):
    d = GAME.new(3, rules={"difficulty": difficulty}).to_dict()
    assert d["storm_meter_index"] == index
    assert d["rules"]["storm_meter"]["3"] == DEFAULT_METER["3"]


def test_storm_deck_and_equipment_composition():
    d = GAME.new(2, rules={"include_storm_tracker": True}).to_dict()
    deck = d["rules"]["storm_deck"]
    assert len(deck) == 31
    for direction in "NESW":
        assert [sum(1 for c in deck if c.get("direction") == direction and c["strength"] == s)
                for s in (1, 2, 3)] == [3, 2, 1]
    assert sum(1 for c in deck if c["kind"] == "storm_picks_up") == 3
    assert sum(1 for c in deck if c["kind"] == "sun_beats_down") == 4
    assert len(d["equipment_pile"]) == 13
    assert len(GAME.new(2).to_dict()["equipment_pile"]) == 12


def test_first_player_thirstiest_tiebreak():
    roles = ["archeologist", "climber", "navigator"]   # waters 3, 3, 4
    firsts = {GAME.new(3, rules={"roles": roles}, seed=s).to_dict()["current_player"]
              for s in range(40)}
    assert firsts == {0, 1}
    firsts = {GAME.new(3, rules={"roles": roles, "first_player_tiebreak": "lowest_seat"},
                       seed=s).to_dict()["current_player"] for s in range(10)}
    assert firsts == {0}


def test_random_roles_vary_and_are_distinct():
    seen = set()
    for s in range(30):
        d = GAME.new(2, seed=s).to_dict()
        seen.add(tuple(p["adventurer"] for p in d["pawns"]))
    assert len(seen) > 10


# ---------------------------------------------------------------- actions (spec 4.2-4.5)

def test_we1_water_carrier_four_actions():
    d = base(roles=ROLES4)
    a = put(d, (0, 0), "mirage")
    b = put(d, (0, 1), "gear")
    set_sand(d, (0, 1), 2)
    for s in range(4):
        pawn_at(d, s, (1, 4) if s else (0, 0))
    st = load(d)
    assert MOVE(0, 1) not in st.legal_actions()        # B is blocked
    st.apply(DIG(0, 1)).apply(DIG(0, 1))
    assert st.to_dict()["sand_supply"] == 48
    st.apply(MOVE(0, 1))
    assert EXCAVATE in st.legal_actions()
    st.apply(EXCAVATE)
    out = st.to_dict()
    assert entry(out, (0, 1))["excavated"]
    assert out["phase"] == "storm"                       # 4 actions used, storm phase
    assert out["pawns"][0]["tile"] == b["tile"]


def test_move_rules_orthogonal_unblocked_not_storm():
    d = base(roles=ROLES4)
    storm_to(d, (2, 2))
    pawn_at(d, 1, (2, 1))                                # archeologist
    d["current_player"] = 1
    set_sand(d, (1, 1), 2)
    st = load(d)
    moves = set(ACTIONS.select(st.legal_actions(), "move"))
    assert moves == {MOVE(3, 1), MOVE(2, 0)}             # not (1,1) blocked, not the storm


def test_explorer_moves_and_digs_diagonally():
    d = base(roles=ROLES4)
    pawn_at(d, 3, (0, 0))
    d["current_player"] = 3
    set_sand(d, (1, 1), 1)
    st = load(d)
    assert MOVE(1, 1) in st.legal_actions() and DIG(1, 1) in st.legal_actions()
    d["current_player"] = 1
    pawn_at(d, 1, (0, 0))
    st = load(d)
    assert MOVE(1, 1) not in st.legal_actions() and DIG(1, 1) not in st.legal_actions()


def test_tv4_pawn_rides_tile_and_is_buried():
    d = base(roles=["navigator", "archeologist"], players=2)
    put(d, (2, 3), "gear")
    set_sand(d, (2, 3), 1)
    pawn_at(d, 0, (2, 3))
    pawn_at(d, 1, (0, 0))
    d["current_player"] = 1
    stack_storm(d, [wind(d, "W", 1)] + card_ids(d, "wind", "N", 1)[:2])
    st = load(d)
    st.apply(END_ACTIONS)
    st.apply(DRAW)
    assert pawn_cell(st, 0) == (2, 2)
    out = st.to_dict()
    assert entry(out, (2, 2))["sand"] == 2
    while out["phase"] == "storm":
        st.apply(DRAW)
        out = st.to_dict()
    assert out["current_player"] == 0
    r, c = pawn_cell(st, 0)
    actions = [a for a in st.legal_actions() if a < GIVE(0, 0)]
    assert actions == [END_ACTIONS, DIG(r, c)]


def test_tv5_archeologist_removes_two():
    d = base(roles=["archeologist", "navigator"], players=2)
    put(d, (1, 1), "gear")
    set_sand(d, (1, 1), 3)
    pawn_at(d, 0, (1, 1))
    st = load(d)
    st.apply(DIG(1, 1))
    assert entry(st.to_dict(), (1, 1))["sand"] == 1
    assert MOVE(1, 2) in st.legal_actions() or MOVE(1, 0) in st.legal_actions()
    d["pawns"][0]["adventurer"], d["pawns"][1]["adventurer"] = "navigator", "archeologist"
    d["pawns"][0]["water"] = 4
    d["pawns"][1]["water"] = 3
    st = load(d)
    st.apply(DIG(1, 1))
    assert entry(st.to_dict(), (1, 1))["sand"] == 2
    assert [a for a in st.legal_actions() if a < GIVE(0, 0)] == [END_ACTIONS, DIG(1, 1)]


def test_excavate_needs_zero_sand_and_unexcavated():
    d = base(roles=ROLES4)
    put(d, (0, 0), "gear")
    set_sand(d, (0, 0), 1)
    pawn_at(d, 0, (0, 0))
    d["pawns"][1]["tile"] = d["pawns"][0]["tile"]
    st = load(d)
    assert EXCAVATE not in st.legal_actions()
    st.apply(DIG(0, 0))
    assert EXCAVATE in st.legal_actions()
    st.apply(EXCAVATE)
    assert EXCAVATE not in st.legal_actions()


def test_gear_tiles_draw_equipment_and_others_do_not():
    for kind, gets in (("gear", True), ("tunnel", True), ("crash_site", True), ("well", False),
                       ("mirage", False), ("launch_pad", False)):
        d = base(roles=ROLES4)
        put(d, (0, 0), kind)
        pawn_at(d, 0, (0, 0))
        top = d["equipment_pile"][-1]
        st = load(d)
        st.apply(EXCAVATE)
        out = st.to_dict()
        assert (out["equipment_owner"][top] == 0) == gets, kind
        assert len(out["equipment_pile"]) == (11 if gets else 12)


def test_gear_with_empty_deck_gives_nothing():
    d = base(roles=ROLES4, equipment={"dune_blaster": 0, "jet_pack": 0, "solar_shield": 0,
                                      "terrascope": 0, "secret_water_reserve": 0,
                                      "time_throttle": 0})
    put(d, (0, 0), "gear")
    pawn_at(d, 0, (0, 0))
    st = load(d).apply(EXCAVATE)
    assert st.to_dict()["equipment_owner"] == []


def test_tv16_well_with_caps_and_mirage():
    for kind, expect in (("well", [3, 5, 4]), ("mirage", [2, 4, 4])):
        d = base(players=3, roles=["archeologist", "water_carrier", "navigator"])
        put(d, (0, 0), kind)
        for s in range(3):
            pawn_at(d, s, (0, 0))
        d["pawns"][0]["water"], d["pawns"][1]["water"] = 2, 4
        st = load(d).apply(EXCAVATE)
        assert [p["water"] for p in st.to_dict()["pawns"]] == expect


def test_well_only_waters_pawns_on_the_tile():
    d = base(players=2, roles=["archeologist", "navigator"])
    put(d, (0, 0), "well")
    pawn_at(d, 0, (0, 0))
    pawn_at(d, 1, (0, 1))
    d["pawns"][0]["water"] = d["pawns"][1]["water"] = 1
    st = load(d).apply(EXCAVATE)
    assert [p["water"] for p in st.to_dict()["pawns"]] == [3, 1]


def test_tv17_pickup_preconditions():
    d = base(roles=ROLES4)
    e = put(d, (1, 1), "gear")
    e["excavated"] = True
    d["parts"][0].update(state="on_tile", tile=e["tile"])
    set_sand(d, (1, 1), 1)
    pawn_at(d, 0, (1, 1))
    st = load(d)
    assert PICKUP in st.legal_actions()
    st.apply(PICKUP)
    p = st.to_dict()["parts"][0]
    assert p["state"] == "held" and p["holder"] == 0 and p["tile"] is None
    set_sand(d, (1, 1), 2)
    assert PICKUP not in load(d).legal_actions()
    set_sand(d, (1, 1), 0)
    e["excavated"] = False
    assert PICKUP not in load(d).legal_actions()
    e["excavated"] = True
    pawn_at(d, 0, (1, 2))
    assert PICKUP not in load(d).legal_actions()       # A11: not from a neighbour


# ---------------------------------------------------------------- clues (spec 4.6)

def _clue_setup(row_at, col_at, part="solar_crystal"):
    d = base(roles=ROLES4)
    r = put(d, row_at, "clue", part=part, axis="row")
    r["excavated"] = True
    put(d, col_at, "clue", part=part, axis="column")
    pawn_at(d, 0, col_at)
    return d


def test_we4_clue_example_and_part_moves_with_tile():
    d = _clue_setup((1, 0), (4, 3))
    st = load(d)
    st.apply(EXCAVATE)
    out = st.to_dict()
    part = out["parts"][2]
    assert part["state"] == "on_tile" and part["tile"] == entry(out, (1, 3))["tile"]
    # The part's tile slides (wind S 1 moves the tile at (1,2) into the storm, not (1,3)):
    # then a wind W 1 from the new storm (1,2) pulls (1,3) west: the part goes with it.
    out["actions_left"] = 0
    stack_storm(out, [wind(out, "S", 1), wind(out, "W", 1)])
    st = run_storm(load(out))
    out = st.to_dict()
    assert out["parts"][2]["tile"] == entry(out, (1, 2))["tile"] == part["tile"]


def test_tv9_clue_intersection():
    d = _clue_setup((1, 0), (3, 4), part="engine")
    st = load(d).apply(EXCAVATE)
    out = st.to_dict()
    assert out["parts"][1]["tile"] == entry(out, (1, 4))["tile"]
    assert all(p["state"] == "hidden" for i, p in enumerate(out["parts"]) if i != 1)


def test_single_clue_places_nothing():
    d = base(roles=ROLES4)
    put(d, (0, 0), "clue", part="engine", axis="column")
    pawn_at(d, 0, (0, 0))
    st = load(d).apply(EXCAVATE)
    assert st.to_dict()["parts"][1]["state"] == "hidden"


def test_part_in_storm_waits_for_the_next_tile():
    d = _clue_setup((2, 0), (0, 2), part="propeller")      # target (2,2) = the storm
    st = load(d).apply(EXCAVATE)
    out = st.to_dict()
    assert out["parts"][0]["state"] == "in_storm"
    out["actions_left"] = 0
    stack_storm(out, [wind(out, "N", 1)])
    st = load(out)
    st.apply(END_ACTIONS).apply(DRAW)
    out = st.to_dict()
    moved = entry(out, (2, 2))                               # came from (3,2)
    assert out["parts"][0]["state"] == "on_tile" and out["parts"][0]["tile"] == moved["tile"]


def test_part_rides_its_tile_and_sand_goes_under():
    d = base(roles=ROLES4)
    e = put(d, (2, 3), "gear")
    e["excavated"] = True
    d["parts"][3].update(state="on_tile", tile=e["tile"])
    d["actions_left"] = 0
    stack_storm(d, [wind(d, "W", 1)])
    st = load(d).apply(END_ACTIONS).apply(DRAW)
    out = st.to_dict()
    assert out["parts"][3]["tile"] == entry(out, (2, 2))["tile"] == e["tile"]
    assert entry(out, (2, 2))["sand"] == 1


# ---------------------------------------------------------------- storm (spec 4.7)

def _storm_state(cards, players=2, **rules):
    d = base(players=players, roles=["navigator", "archeologist"][:players], **rules)
    d["actions_left"] = 0
    stack_storm(d, cards)
    return d


def test_we2_wind_west_two():
    d = _storm_state([])
    x, y = entry(d, (2, 3))["tile"], entry(d, (2, 4))["tile"]
    set_sand(d, (2, 4), 1)
    stack_storm(d, [wind(d, "W", 2)])
    st = load(d).apply(END_ACTIONS).apply(DRAW)
    out = st.to_dict()
    assert entry(out, (2, 2))["tile"] == x and entry(out, (2, 3))["tile"] == y
    assert out["board"][2][4] is None
    assert entry(out, (2, 2))["sand"] == 1 and entry(out, (2, 3))["sand"] == 2
    assert out["sand_supply"] == 48 - 3


def test_we3_wind_north_three_respite():
    d = _storm_state([])
    set_sand(d, (3, 2), 1)
    set_sand(d, (4, 2), 1)
    a, b = entry(d, (3, 2))["tile"], entry(d, (4, 2))["tile"]
    stack_storm(d, [wind(d, "N", 3)])
    st = load(d).apply(END_ACTIONS).apply(DRAW)
    out = st.to_dict()
    assert entry(out, (2, 2))["tile"] == a and entry(out, (3, 2))["tile"] == b
    assert out["board"][4][2] is None
    assert entry(out, (2, 2))["sand"] == 2 and entry(out, (3, 2))["sand"] == 2
    assert out["sand_supply"] == 48 - 4


def test_tv2_respite_at_edge():
    d = _storm_state([])
    storm_to(d, (0, 4))
    stack_storm(d, [wind(d, "W", 1), wind(d, "E", 1)])
    before = entry(d, (0, 3))["tile"]
    st = load(d).apply(END_ACTIONS).apply(DRAW)
    out = st.to_dict()
    assert out["board"][0][4] is None and out["sand_supply"] == 48
    st.apply(DRAW)
    out = st.to_dict()
    assert entry(out, (0, 4))["tile"] == before and entry(out, (0, 4))["sand"] == 1
    assert out["board"][0][3] is None


def test_tv3_partial_respite():
    d = _storm_state([])
    storm_to(d, (3, 2))
    stack_storm(d, [wind(d, "N", 3)])
    t = entry(d, (4, 2))["tile"]
    st = load(d).apply(END_ACTIONS).apply(DRAW)
    out = st.to_dict()
    assert entry(out, (3, 2))["tile"] == t and out["board"][4][2] is None
    assert out["sand_supply"] == 47


def test_tv12_sand_exhaustion_buries():
    d = _storm_state([])
    for r in range(5):
        for c in range(5):
            if d["board"][r][c]:
                d["board"][r][c]["sand"] = 0
    set_sand(d, (0, 0), 47)
    assert d["sand_supply"] == 1
    stack_storm(d, [wind(d, "S", 2)])
    st = load(d).apply(END_ACTIONS).apply(DRAW)
    out = st.to_dict()
    assert st.is_terminal() and st.end_reason == "buried"
    assert out["sand_supply"] == 0 and entry(out, (2, 2))["sand"] == 1


def test_tv13_meter_to_skull_sweeps_away():
    d = _storm_state(card_ids(base(players=2), "storm_picks_up")[:1])
    d["storm_meter_index"] = 12
    st = load(d).apply(END_ACTIONS).apply(DRAW)
    assert st.is_terminal() and st.end_reason == "swept_away"
    assert st.win_shares() == [0.0, 0.0] and st.scores() == [0.0, 0.0]


def test_storm_picks_up_counts_from_next_turn():
    d = _storm_state([])
    picks = card_ids(d, "storm_picks_up")
    stack_storm(d, [picks[0], wind(d, "N", 1), picks[1]])
    st = load(d).apply(END_ACTIONS)
    assert st.to_dict()["storm_cards_left"] == 2
    st.apply(DRAW).apply(DRAW)
    out = st.to_dict()
    assert out["phase"] == "actions" and out["storm_meter_index"] == 1
    assert out["storm_draw_pile"][-1] == picks[1]          # the third card was not drawn


@pytest.mark.parametrize("players,ticks", [(2, 13), (3, 14), (4, 14), (5, 15)])
def test_meter_columns(players, ticks):
    d = GAME.new(players).to_dict()
    col = d["rules"]["storm_meter"][str(players)]
    assert len(col) == ticks and col[0] == 2 and col[-1] == 6


def test_meter_draw_count_per_tick():
    d = _storm_state([])
    d["storm_meter_index"] = 5                             # 2p column: 4 cards
    st = load(d).apply(END_ACTIONS)
    assert st.to_dict()["storm_cards_left"] == 4


def test_tv7_tunnels_and_sun_and_shield():
    d = base(players=4, roles=["navigator", "archeologist", "climber", "explorer"])
    t1 = put(d, (0, 0), "tunnel")
    t1["excavated"] = True
    set_sand(d, (0, 0), 2)
    put(d, (0, 4), "tunnel", nth=1)
    put(d, (4, 0), "gear")
    pawn_at(d, 0, (0, 0))
    pawn_at(d, 1, (0, 4))
    pawn_at(d, 2, (4, 0))
    pawn_at(d, 3, (4, 0))
    for s, w in enumerate([1, 1, 0, 2]):
        d["pawns"][s]["water"] = w
    d["pawns"][3]["shield"] = True
    d["actions_left"] = 0
    d["current_player"] = 1
    stack_storm(d, card_ids(d, "sun_beats_down")[:1])
    st = load(d).apply(END_ACTIONS).apply(DRAW)
    assert not st.is_terminal()
    assert [p["water"] for p in st.to_dict()["pawns"]] == [1, 0, 0, 2]
    d["pawns"][3]["shield"] = False
    st = load(d).apply(END_ACTIONS).apply(DRAW)
    assert st.is_terminal() and st.end_reason == "thirst"


def test_blocked_tunnel_shade_switch():
    d = base(players=2, roles=["navigator", "archeologist"], tunnel_shade_requires_unblocked=True)
    t = put(d, (0, 0), "tunnel")
    t["excavated"] = True
    set_sand(d, (0, 0), 2)
    pawn_at(d, 0, (0, 0))
    d["actions_left"] = 0
    d["current_player"] = 1
    stack_storm(d, card_ids(d, "sun_beats_down")[:1])
    st = load(d).apply(END_ACTIONS).apply(DRAW)
    assert st.to_dict()["pawns"][0]["water"] == 3


def test_pawn_at_zero_survives_until_next_sun():
    d = _storm_state([])
    d["pawns"][0]["water"] = 1
    d["pawns"][1]["water"] = 3
    suns = card_ids(d, "sun_beats_down")
    stack_storm(d, suns[:2])
    st = load(d).apply(END_ACTIONS).apply(DRAW)
    assert not st.is_terminal() and st.to_dict()["pawns"][0]["water"] == 0
    st.apply(DRAW)
    assert st.is_terminal() and st.end_reason == "thirst"
    assert st.outcomes()[0]["win"] == 0.0


@pytest.mark.parametrize("timing", [None, "end_of_phase", "per_card"])
def test_tv19_reshuffle_mid_phase(timing):
    """Worked example 19.  The default is the seed's per_card: 'draw the first, look at it,
    carry out its effect, then put it on the discarded storm cards', so the reshuffle in
    mid-phase takes the card just drawn in."""
    rules = {} if timing is None else {"storm_discard_timing": timing}
    per_card = timing != "end_of_phase"
    d = _storm_state([], **rules)
    d["storm_meter_index"] = 1                              # 3 cards
    first = wind(d, "N", 1)
    pile = d["storm_draw_pile"]
    d["storm_draw_pile"] = [first]
    d["storm_discard_pile"] = [x for x in pile if x != first]
    st = load(d).apply(END_ACTIONS).apply(DRAW)
    out = st.to_dict()
    assert out["storm_draw_pile"] == []
    assert (first in out["storm_discard_pile"]) == per_card
    assert out["storm_drawn_this_phase"] == ([] if per_card else [first])
    st.apply(DRAW)
    out = st.to_dict()
    assert len(out["storm_draw_pile"]) == (30 if per_card else 29)
    assert (first in out["storm_draw_pile"]) == per_card
    st.apply(DRAW)
    out = st.to_dict()
    assert out["phase"] == "actions"
    assert sorted(out["storm_draw_pile"] + out["storm_discard_pile"]) == list(range(31))
    # per_card: the two cards drawn after the reshuffle; end_of_phase: all three, at the end.
    assert len(out["storm_discard_pile"]) == (2 if per_card else 3)
    assert out["storm_drawn_this_phase"] == []


# ---------------------------------------------------------------- tunnel hops (spec 4.2)

def _tunnels(roles, **rules):
    """Worked example 8's board: T1 (1,0) excavated, T2 (4,4) excavated with 2 sand, T3 (0,3)
    unexcavated; seat 0 on T1."""
    d = base(players=len(roles), roles=roles, **rules)
    ids = [e["tile"] for row in d["board"] for e in row if e and e["kind"] == "tunnel"]
    for rc, tile in zip(((1, 0), (4, 4), (0, 3)), ids):
        put(d, rc, "tunnel", tile=tile)
    entry(d, (1, 0))["excavated"] = entry(d, (4, 4))["excavated"] = True
    set_sand(d, (4, 4), 2)
    for seat in range(len(roles)):
        pawn_at(d, seat, (1, 0))
    return d


def test_tv8_tunnel_hop_rules():
    d = _tunnels(["archeologist", "navigator"])
    legal = load(d).legal_actions()
    assert MOVE(4, 4) not in legal                    # T2 blocked
    assert MOVE(0, 3) not in legal                    # T3 unexcavated
    set_sand(d, (4, 4), 1)
    st = load(d)
    st.apply(MOVE(4, 4))
    assert pawn_cell(st, 0) == (4, 4) and st.to_dict()["actions_left"] == 3


@pytest.mark.parametrize("option", [None, False, True])
def test_climber_hop_into_or_out_of_a_blocked_tunnel_is_the_option(option):
    """Seed: hops only between unblocked tunnels (default); climber_hops_blocked_tunnels lets
    the Climber (and his passenger) hop into or out of a blocked one."""
    rules = {} if option is None else {"climber_hops_blocked_tunnels": option}
    allowed = bool(option)
    d = _tunnels(["climber", "archeologist"], **rules)
    legal = load(d).legal_actions()
    assert (MOVE(4, 4) in legal) == allowed
    assert (MOVE(4, 4, 1) in legal) == allowed        # carrying the archeologist
    assert MOVE(0, 3) not in legal                    # never into an unexcavated tunnel
    d["current_player"] = 1                             # the archeologist never hops there
    assert MOVE(4, 4) not in load(d).legal_actions()
    d["current_player"] = 0
    pawn_at(d, 0, (4, 4))                               # out of the blocked tunnel
    assert (MOVE(1, 0) in load(d).legal_actions()) == allowed
    # The Navigator moves the Climber by the Climber's steps: the hop is one of them.
    d = _tunnels(["navigator", "climber"], **rules)
    pawn_at(d, 0, (0, 0))
    assert (NAVIGATE(1, 4, 4) in load(d).legal_actions()) == allowed


# ---------------------------------------------------------------- adventurers (spec 4.8)

def test_tv15_meteorologist_reduction():
    d = base(players=2, roles=["meteorologist", "archeologist"])
    d["storm_meter_index"] = 5                             # 4 cards
    st = load(d)
    for _ in range(3):
        st.apply(METEO_SKIP)
    st.apply(END_ACTIONS)
    assert st.to_dict()["storm_cards_left"] == 1
    st = load(d)
    for _ in range(4):
        st.apply(METEO_SKIP)
    out = st.to_dict()
    assert out["phase"] == "actions" and out["current_player"] == 1   # no storm cards


def test_meteorologist_peek_moves_a_card_to_the_bottom():
    d = base(players=2, roles=["meteorologist", "archeologist"])
    sun = card_ids(d, "sun_beats_down")[0]
    w1, w2 = wind(d, "N", 1), wind(d, "E", 1)
    stack_storm(d, [w1, sun, w2])
    st = load(d).apply(METEO_PEEK)
    out = st.to_dict()
    assert out["phase"] == "peek" and out["peek"] == 2 and out["actions_left"] == 3
    assert st.legal_actions() == [PEEK_KEEP, PEEK_BOTTOM(0), PEEK_BOTTOM(1)]
    st.apply(PEEK_BOTTOM(1))
    out = st.to_dict()
    assert out["storm_draw_pile"][0] == sun and out["storm_draw_pile"][-2:] == [w2, w1]
    assert out["phase"] == "actions"


def test_navigator_moves_another_pawn_three_steps():
    d = base(players=2, roles=["navigator", "archeologist"])
    storm_to(d, (4, 4))
    pawn_at(d, 1, (0, 0))
    set_sand(d, (0, 2), 2)
    st = load(d)
    moved = [ACTIONS.decode(a)[1] for a in ACTIONS.select(st.legal_actions(), "navigate")]
    cells = {(x["row"], x["col"]) for x in moved if x["pawn"] == 1}
    assert cells == {(0, 1), (1, 0), (1, 1), (2, 0), (3, 0), (2, 1), (1, 2)}
    st.apply(NAVIGATE(1, 1, 2))
    assert pawn_cell(st, 1) == (1, 2) and st.to_dict()["actions_left"] == 3


def test_navigator_cannot_move_buried_pawn_unless_switch():
    for switch, legal in ((False, False), (True, True)):
        d = base(players=2, roles=["navigator", "archeologist"], navigator_can_move_buried=switch)
        pawn_at(d, 1, (0, 0))
        set_sand(d, (0, 0), 2)
        st = load(d)
        assert (NAVIGATE(1, 0, 1) in st.legal_actions()) == legal


def test_navigator_moves_explorer_diagonally_and_climber_with_passenger():
    d = base(players=4, roles=["navigator", "explorer", "climber", "archeologist"])
    storm_to(d, (4, 4))
    pawn_at(d, 1, (0, 0))
    pawn_at(d, 2, (4, 0))
    pawn_at(d, 3, (4, 0))
    set_sand(d, (3, 0), 3)
    st = load(d)
    assert NAVIGATE(1, 3, 3) in st.legal_actions()          # 3 diagonal steps
    assert NAVIGATE(3, 3, 0) not in st.legal_actions()      # blocked for the archeologist
    assert NAVIGATE(2, 3, 0, 3) in st.legal_actions()       # climber onto blocked, carrying
    st.apply(NAVIGATE(2, 3, 0, 3))
    assert pawn_cell(st, 2) == pawn_cell(st, 3) == (3, 0)


def test_climber_powers():
    d = base(players=2, roles=["climber", "archeologist"])
    pawn_at(d, 0, (0, 0))
    pawn_at(d, 1, (0, 0))
    set_sand(d, (0, 1), 3)
    st = load(d)
    assert MOVE(0, 1) in st.legal_actions() and MOVE(0, 1, 1) in st.legal_actions()
    st.apply(MOVE(0, 1, 1))
    assert pawn_cell(st, 1) == (0, 1)
    # The archeologist on the blocked tile with the Climber is not buried: she may move off,
    # but not onto another blocked tile by herself.
    out = st.to_dict()
    out["current_player"] = 1
    set_sand(out, (0, 2), 2)
    st2 = load(out)
    legal = st2.legal_actions()
    assert MOVE(1, 1) in legal and MOVE(0, 0) in legal and MOVE(0, 2) not in legal
    # ...and she is not buried for a storm's Sun either (irrelevant) nor for actions: excavate
    # is illegal only because of the sand.
    assert EXCAVATE not in legal


def test_water_carrier_draws_from_excavated_well_only():
    d = base(players=2, roles=["water_carrier", "archeologist"])
    w = put(d, (0, 0), "well")
    pawn_at(d, 0, (0, 0))
    d["pawns"][0]["water"] = 1
    assert WC_DRAW not in load(d).legal_actions()
    w["excavated"] = True
    st = load(d).apply(WC_DRAW)
    assert st.to_dict()["pawns"][0]["water"] == 3
    st.apply(WC_DRAW)
    assert st.to_dict()["pawns"][0]["water"] == 5
    m = put(d, (0, 0), "mirage")
    m["excavated"] = True
    pawn_at(d, 0, (0, 0))
    assert WC_DRAW not in load(d).legal_actions()       # A8: never from the mirage


def test_tv21_water_carrier_gives_orthogonally_only():
    d = base(players=3, roles=["water_carrier", "climber", "archeologist"])
    pawn_at(d, 0, (0, 0))
    pawn_at(d, 1, (0, 1))
    pawn_at(d, 2, (1, 1))
    d["pawns"][1]["water"] = d["pawns"][2]["water"] = 0
    d["actions_left"] = 0
    d["current_player"] = 1
    st = load(d).apply(END_ACTIONS)                       # storm phase: before a card
    legal = st.legal_actions()
    assert GIVE(0, 1) in legal and GIVE(0, 2) not in legal
    st.apply(GIVE(0, 1))
    assert [p["water"] for p in st.to_dict()["pawns"]] == [4, 1, 0]


def test_water_sharing_same_tile_caps():
    d = base(players=2, roles=["navigator", "archeologist"])
    pawn_at(d, 0, (0, 0))
    pawn_at(d, 1, (0, 0))
    d["pawns"][1]["water"] = 2
    st = load(d)
    assert GIVE(0, 1) in st.legal_actions() and GIVE(1, 0) not in st.legal_actions()
    st.apply(GIVE(0, 1))
    assert GIVE(0, 1) not in st.legal_actions()           # the archeologist is full (3)
    assert st.to_dict()["actions_left"] == 4                # free
    pawn_at(d, 1, (0, 1))
    assert GIVE(0, 1) not in load(d).legal_actions()      # only the Water Carrier reaches


# ---------------------------------------------------------------- equipment (spec 2.5, 4.10)

def test_tv22_dune_blaster():
    d = base(players=2, roles=["explorer", "archeologist"])
    give_card(d, "dune_blaster", 0)
    give_card(d, "dune_blaster", 1, nth=1)
    pawn_at(d, 0, (0, 0))
    pawn_at(d, 1, (0, 0))
    set_sand(d, (1, 1), 4)
    st = load(d)
    assert BLAST(1, 1, 1) not in st.legal_actions()
    st.apply(BLAST(0, 1, 1))
    out = st.to_dict()
    assert entry(out, (1, 1))["sand"] == 0 and out["sand_supply"] == 48
    assert out["actions_left"] == 4 and out["equipment_owner"].count("used") == 1


def test_jet_pack_with_companion_and_buried_switch():
    d = base(players=3, roles=["navigator", "archeologist", "climber"])
    give_card(d, "jet_pack", 0)
    for s in range(3):
        pawn_at(d, s, (0, 0))
    set_sand(d, (4, 4), 2)
    st = load(d)
    legal = st.legal_actions()
    assert JET(0, 4, 4) not in legal and JET(0, 3, 3, 1) in legal
    st.apply(JET(0, 3, 3, 1))
    assert pawn_cell(st, 0) == pawn_cell(st, 1) == (3, 3) and pawn_cell(st, 2) == (0, 0)
    for switch in (True, False):
        d2 = base(players=2, roles=["navigator", "archeologist"], jetpack_when_buried=switch)
        give_card(d2, "jet_pack", 0)
        pawn_at(d2, 0, (0, 0))
        set_sand(d2, (0, 0), 2)
        assert (JET(0, 3, 3) in load(d2).legal_actions()) == switch


def test_solar_shield_lasts_until_users_next_turn_and_anchor():
    for anchor in ("pawn", "tile"):
        d = base(players=2, roles=["navigator", "archeologist"], solar_shield_anchor=anchor)
        give_card(d, "solar_shield", 0)
        pawn_at(d, 0, (0, 0))
        pawn_at(d, 1, (0, 0))
        st = load(d).apply(SHIELD(0)).apply(MOVE(0, 1))
        out = st.to_dict()
        out["actions_left"] = 0
        sun = card_ids(out, "sun_beats_down")[0]
        stack_storm(out, [sun, wind(out, "E", 1)])
        st = run_storm(load(out))
        w = [p["water"] for p in st.to_dict()["pawns"]]
        # pawn anchor: the navigator (user) is protected where he is now, the archeologist not;
        # tile anchor: the archeologist on the tile is protected, the navigator who left not.
        assert w == ([4, 2] if anchor == "pawn" else [3, 3])
        # The shield ends when the user's (seat 0) next turn starts.
        out = st.to_dict()
        assert out["current_player"] == 1 and out["pawns"][0]["shield"]
        out["actions_left"] = 0
        stack_storm(out, [wind(out, "N", 1)])
        st = run_storm(load(out))
        assert st.to_dict()["current_player"] == 0 and not st.to_dict()["pawns"][0]["shield"]


def test_terrascope_reveals_underside_to_observe():
    d = base(players=2, roles=["navigator", "archeologist"])
    give_card(d, "terrascope", 0)
    w = put(d, (0, 0), "well")
    st = load(d)
    assert SCOPE(0, 0, 0) in st.legal_actions()
    assert SCOPE(0, *find(d, "crash_site")) not in st.legal_actions()   # known side
    st.apply(SCOPE(0, 0, 0))
    out = st.to_dict()
    assert entry(out, (0, 0))["known"] and out["actions_left"] == 4
    for seed in range(10):
        v = core_cy.games.forbidden_desert.engine.observe_dict(st, 0, seed)
        assert entry(v, (0, 0))["kind"] == "well"


def test_secret_water_reserve_and_time_throttle():
    d = base(players=3, roles=["navigator", "archeologist", "climber"])
    give_card(d, "secret_water_reserve", 0)
    give_card(d, "time_throttle", 1)
    pawn_at(d, 0, (0, 0))
    pawn_at(d, 1, (0, 0))
    pawn_at(d, 2, (0, 1))
    for s in range(3):
        d["pawns"][s]["water"] = 1
    st = load(d).apply(RESERVE(0))
    assert [p["water"] for p in st.to_dict()["pawns"]] == [3, 3, 1]
    assert THROTTLE(1) not in st.legal_actions()        # not seat 1's turn
    d["current_player"] = 1
    st = load(d).apply(THROTTLE(1))
    assert st.to_dict()["actions_left"] == 6


def test_time_throttle_after_last_action_and_auto_end():
    d = base(players=2, roles=["navigator", "archeologist"])
    pawn_at(d, 0, (0, 0))
    d["actions_left"] = 1
    st = load(d).apply(MOVE(0, 1))
    assert st.to_dict()["phase"] == "storm"                # no action, no throttle: storm
    give_card(d, "time_throttle", 0)
    st = load(d).apply(MOVE(0, 1))
    out = st.to_dict()
    assert out["phase"] == "actions" and out["actions_left"] == 0   # throttle still in hand
    assert [a for a in st.legal_actions() if a < GIVE(0, 0)] == [END_ACTIONS]
    st.apply(THROTTLE(0))
    assert st.to_dict()["actions_left"] == 2


def test_storm_tracker_switch():
    d = base(players=2, roles=["navigator", "archeologist"], include_storm_tracker=True)
    give_card(d, "storm_tracker", 1)
    sun = card_ids(d, "sun_beats_down")[0]
    stack_storm(d, [sun, wind(d, "N", 1)])
    st = load(d).apply(TRACKER(1))
    assert st.to_dict()["phase"] == "peek"
    st.apply(PEEK_BOTTOM(0))
    out = st.to_dict()
    assert out["storm_draw_pile"][0] == sun and out["actions_left"] == 4


def test_pass_equipment_same_tile_only():
    d = base(players=2, roles=["navigator", "archeologist"])
    i = give_card(d, "jet_pack", 0)
    pawn_at(d, 0, (0, 0))
    pawn_at(d, 1, (0, 0))
    st = load(d).apply(PASS_EQUIPMENT("jet_pack", 0, 1))
    assert st.to_dict()["equipment_owner"][i] == 1
    pawn_at(d, 1, (0, 1))
    assert PASS_EQUIPMENT("jet_pack", 0, 1) not in load(d).legal_actions()


def test_equipment_not_after_a_revealed_card():
    # Free operations exist only before a draw: the Sun resolves when drawn, with no decision
    # between revealing and resolving it.
    d = base(players=2, roles=["navigator", "archeologist"])
    give_card(d, "solar_shield", 0)
    d["actions_left"] = 0
    d["pawns"][0]["water"] = 0
    stack_storm(d, card_ids(d, "sun_beats_down")[:1])
    st = load(d).apply(END_ACTIONS)
    assert SHIELD(0) in st.legal_actions()               # before the draw: allowed
    st.apply(DRAW)
    assert st.is_terminal() and st.end_reason == "thirst"


# ---------------------------------------------------------------- win and limits (spec 5)

def _win_setup(pad_sand=0, excavated=True, **rules):
    d = base(players=4, roles=["navigator", "archeologist", "climber", "explorer"], **rules)
    pad = put(d, (0, 0), "launch_pad")
    pad["excavated"] = excavated
    set_sand(d, (0, 0), pad_sand)
    for i in range(4):
        d["parts"][i].update(state="held", holder=0)
    for s in range(4):
        pawn_at(d, s, (0, 0))
    pawn_at(d, 0, (0, 1))
    return d


def test_tv18_win_check():
    st = load(_win_setup(pad_sand=1)).apply(MOVE(0, 0))
    assert st.is_terminal() and st.end_reason == "win" and st.win_shares() == [1.0] * 4
    assert st.outcomes()[0]["win"] == 1.0 and st.scores() == [1.0] * 4
    d = _win_setup(pad_sand=2)
    d["pawns"][0]["adventurer"], d["pawns"][2]["adventurer"] = "climber", "navigator"
    d["pawns"][0]["water"], d["pawns"][2]["water"] = 3, 4
    st = load(d).apply(MOVE(0, 0))
    assert not st.is_terminal()
    st = load(_win_setup(excavated=False)).apply(MOVE(0, 0))
    assert not st.is_terminal()
    d = _win_setup()
    d["parts"][3].update(state="on_tile", holder=None, tile=entry(d, (4, 4))["tile"])
    assert not load(d).apply(MOVE(0, 0)).is_terminal()


def test_takeoff_costs_action_switch():
    st = load(_win_setup(takeoff_costs_action=True)).apply(MOVE(0, 0))
    assert not st.is_terminal() and TAKEOFF in st.legal_actions()
    st.apply(TAKEOFF)
    assert st.end_reason == "win"


def test_turn_limit_ends_the_game():
    d = base(players=2, roles=["navigator", "archeologist"], max_turns=3)
    st = load(d)
    for _ in range(3):
        assert not st.is_terminal()
        run_storm(st)
    assert st.is_terminal() and st.end_reason == "turn_limit" and st.win_shares() == [0.0, 0.0]


def test_free_op_cap_per_phase():
    d = base(players=2, roles=["navigator", "archeologist"], max_free_ops_per_phase=2)
    pawn_at(d, 0, (0, 0))
    pawn_at(d, 1, (0, 0))
    d["pawns"][0]["water"] = 2
    st = load(d).apply(GIVE(1, 0)).apply(GIVE(0, 1))
    assert not any(a >= GIVE(0, 0) for a in st.legal_actions())


# ---------------------------------------------------------------- outcomes and the face

def test_outcomes_fields():
    st = GAME.new(3, rules={"roles": ["archeologist", "climber", "water_carrier"]}, seed=1)
    g, seats = st.outcomes()
    assert g["team"] == 1 | 2 | 32 and g["parts_found"] == 0 and g["water_left"] == 11
    assert [s["adventurer"] for s in seats] == [0, 1, 5]
    assert GAME.info()["cooperative"] and "planner" in GAME.agents
    br = st.score_breakdown()
    assert br[2]["adventurer"] == "water_carrier" and br[2]["max_water"] == 5


@pytest.mark.parametrize("rules,field", [
    ({"difficulty": "hard"}, "difficulty"),
    ({"roles": ["archeologist"]}, "roles"),
    ({"roles": ["pilot", "climber"]}, "roles"),
    ({"tiles": []}, "tiles"),
    ({"storm_meter": {"3": [2]}}, "storm_meter"),
    ({"equipment": {"laser": 1}}, "equipment"),
    ({"known_desert_sides": ["volcano"]}, "known_desert_sides"),
    ({"max_turns": 0}, "max_turns"),
    ({"bogus": 1}, "bogus"),
])
def test_bad_rules_name_the_field(rules, field):
    with pytest.raises(ValueError, match=field):
        GAME.new(2, rules=rules)


def test_from_dict_rejects_bad_states():
    d = GAME.new(2, seed=1).to_dict()
    bad = dict(d, sand_supply=3)
    with pytest.raises(ValueError, match="sand"):
        GAME.from_dict(bad)
    bad = GAME.new(2, seed=1).to_dict()
    bad["board"][2][2] = bad["board"][0][0]
    with pytest.raises(ValueError, match="tile"):
        GAME.from_dict(bad)
    bad = GAME.new(2, seed=1).to_dict()
    bad["storm_draw_pile"] = bad["storm_draw_pile"][1:]
    with pytest.raises(ValueError, match="storm"):
        GAME.from_dict(bad)
    with pytest.raises(ValueError, match="game"):
        GAME.from_dict({"game": "maori"})


def _set(path, value):
    """A mutation of a state dict: sets d[path...] = value."""
    def mutate(d):
        for key in path[:-1]:
            d = d[key]
        d[path[-1]] = value
    return mutate


@pytest.mark.parametrize("mutate,message", [
    (_set(("pawns", 1, "water"), "x"), r"^state.pawns\[1\].water: expected an integer in -1..\d, got 'x'$"),
    (_set(("pawns", 0, "adventurer"), "pilot"), r"^state.pawns\[0\].adventurer: expected one of \["),
    (_set(("board", 0, 1, "kind"), "volcano"), r"^state.board\[0\]\[1\].kind: expected one of \["),
    (_set(("board", 0, 1, "sand"), -1), r"^state.board\[0\]\[1\].sand: expected an integer in 0..255"),
    (_set(("board", 0, 1), 7), r"^state.board\[0\]\[1\]: expected an object, got 7$"),
    (_set(("parts", 2, "state"), "lost"), r"^state.parts\[2\].state: expected one of"),
    (_set(("parts", 3, "holder"), 5), r"^state.parts\[3\].holder: expected an integer in 0..1, got 5$"),
    (_set(("storm_discard_pile",), [0]), r"^state.storm_discard_pile\[0\]: storm card 0 is also at "
                                         r"state.storm_draw_pile\[\d+\]$"),
    (_set(("equipment_owner", 0), 7), r"^state.equipment_owner\[0\]: expected an integer in 0..1, got 7$"),
    (_set(("current_player",), 2), r"^state.current_player: expected an integer in 0..1, got 2$"),
    (_set(("phase",), "bidding"), r"^state.phase: expected one of \['actions', 'storm', 'peek'\]"),
    (_set(("rng",), {"key": -1, "counter": 0}), r"^state.rng.key: expected an integer"),
    (_set(("terminal",), "no"), r"^state.terminal: expected true or false, got 'no'$"),
])
def test_from_dict_names_the_path_of_a_bad_value(mutate, message):
    d = GAME.new(2, seed=1).to_dict()
    mutate(d)
    with pytest.raises(ValueError, match=message):
        GAME.from_dict(d)


def test_describe_and_illegal_action():
    st = GAME.new(2, seed=2)
    for a in st.legal_actions():
        assert isinstance(st.describe(a), str)
    with pytest.raises(ValueError):
        st.apply(TAKEOFF)
    with pytest.raises(ValueError):
        st.describe(-1)


# ---------------------------------------------------------------- audit fixes (issue 4)

@pytest.mark.parametrize("water_drop", [True, False])
def test_water_drop_shows_the_three_water_tiles_not_the_mirage(water_drop):
    """Seed, Water: the 3 water tiles carry a water drop on their DESERT side (a possible
    well; one is a mirage).  The team knows where they are before excavating, but not which
    one is the mirage.  The engine used to hide them like any other tile."""
    from core_cy.games.forbidden_desert.engine import observe_dict
    state = GAME.new(4, rules={"water_drop_desert_side": water_drop}, seed=3)
    d = state.to_dict()
    cells = lambda b, kinds: {(r, c) for r in range(5) for c in range(5)
                              if b[r][c] and b[r][c]["kind"] in kinds}
    water = cells(d["board"], ("well", "mirage"))
    assert len(water) == 3
    seen_water, seen_mirage = set(), set()
    for k in range(40):
        v = observe_dict(state, 0, k)
        seen_water.add(frozenset(cells(v["board"], ("well", "mirage"))))
        seen_mirage.add(frozenset(cells(v["board"], ("mirage",))))
    if water_drop:
        assert seen_water == {frozenset(water)}     # where the water is: public
        assert len(seen_mirage) == 3                # which one is the mirage: hidden
    else:
        assert len(seen_water) > 1
    assert GAME.from_dict(d).to_dict()["rules"]["water_drop_desert_side"] is water_drop
