"""The Forbidden Desert search policies: equipment in the search, the thirst-risk model
built from the storm deck's public composition, the search weights as a named structure per
game, and play strength."""
import importlib.util
import json
from pathlib import Path

import pytest

from core_cy import agents
from core_cy.play import batch
from core_cy.games.forbidden_desert import engine as fd
from core_cy.games.forbidden_desert.engine import GAME, thirst_risk, water_plan, plan_value
from desert_pos import (base, entry, find, put, swap, pawn_at, set_sand, give_card, card_ids,
                         load, ACTIONS, BLAST, DIG, JET, MOVE, NAVIGATE, WC_DRAW)


def sun_cards(d):
    return set(card_ids(d, "sun_beats_down"))


def deck_without_suns(d):
    """All Sun Beats Down cards are in the (public) discard pile."""
    suns = sun_cards(d)
    d["storm_draw_pile"] = [c for c in d["storm_draw_pile"] + d["storm_discard_pile"]
                            if c not in suns]
    d["storm_discard_pile"] = sorted(suns)


def dry_explorer(**rules):
    d = base(players=4, roles=["explorer", "navigator", "climber", "archeologist"], **rules)
    for seat in range(4):
        pawn_at(d, seat, (0, 0))
        d["pawns"][seat]["water"] = 3
    d["pawns"][0]["water"] = 0
    return d


def test_thirst_risk_counts_the_suns_left_in_the_draw_pile():
    d = dry_explorer()
    assert thirst_risk(load(d), 0) > 0.3      # ~4 suns in 31 cards, 8 cards before its turn
    deck_without_suns(d)
    assert thirst_risk(load(d), 0) == 0.0     # the discard pile shows every sun is out


def test_thirst_risk_grows_with_the_cards_before_the_pawns_turn():
    d = dry_explorer()
    for seat in range(4):
        d["pawns"][seat]["water"] = 0
    st = load(d)
    # Seat 1 acts right after this turn's storm, seat 3 after three storms.
    assert thirst_risk(st, 1) < thirst_risk(st, 2) < thirst_risk(st, 3) < thirst_risk(st, 0)


def test_thirst_risk_is_zero_in_an_excavated_tunnel_and_under_a_shield():
    d = dry_explorer()
    put(d, (0, 0), "tunnel")["excavated"] = True
    pawn_at(d, 0, (0, 0))
    assert thirst_risk(load(d), 0) == 0.0
    d = dry_explorer()
    d["pawns"][0]["shield"] = True            # its own shield lasts until its next turn
    assert thirst_risk(load(d), 0) == 0.0
    d = dry_explorer()
    d["pawns"][1]["shield"] = True            # the navigator's ends after one storm
    assert 0.0 < thirst_risk(load(d), 0) < thirst_risk(load(dry_explorer()), 0)


def test_thirst_risk_counts_a_held_solar_shield_for_a_dry_pawn_on_its_tile():
    """Weight shield_held: a Solar Shield in hand shades a pawn at 1 water or less on its
    holder's tile as if played (shield_op plays it before the storm), until the holder's
    next turn; off, or for a pawn with more water, it changes nothing."""
    def risk(holder, water=0, **weights):
        d = dry_explorer(search_weights=weights)
        d["pawns"][0]["water"] = water
        give_card(d, "solar_shield", holder)
        return thirst_risk(load(d), 0)
    bare = risk(0, shield_held=0.0)
    assert bare > 0.0
    assert risk(0, shield_held=1.0) == 0.0
    assert 0.0 < risk(1, shield_held=1.0) < bare
    assert risk(0, 2, shield_held=1.0) == risk(0, 2, shield_held=0.0) > 0.0


def test_more_water_means_less_risk():
    d = dry_explorer()
    risks = []
    for w in range(4):
        d["pawns"][0]["water"] = w
        risks.append(thirst_risk(load(d), 0))
    assert risks == sorted(risks, reverse=True) and risks[3] < risks[0] / 5


def put_all(d, kind, cells):
    """Moves the tiles of `kind` to the cells, one each; returns their board entries."""
    for i, rc in enumerate(cells):
        src = next(h for h in (find(d, kind, n) for n in range(len(cells)))
                   if h not in cells[:i])
        swap(d, src, rc)
    return [entry(d, rc) for rc in cells]


def water_plan_position(roles=("explorer", "navigator", "climber", "archeologist")):
    """The water plan's position: the two wells and the mirage in the south-east corner
    (water-drop tiles, unexcavated), seat 1 dry; every other pawn in the shade of an
    excavated tunnel in the north-west, where the water plan counts no risk for it."""
    d = base(players=4, roles=list(roles), difficulty="novice")
    put_all(d, "well", [(4, 4), (4, 3)])
    put(d, (3, 4), "mirage")
    for e in put_all(d, "tunnel", [(0, 0), (0, 1), (1, 0)]):
        e["excavated"] = True
    for seat, rc in zip((0, 2, 3), [(0, 0), (0, 1), (1, 0)]):
        pawn_at(d, seat, rc)
    d["pawns"][1]["water"] = 0
    return d


def test_water_plan_risk_grows_with_the_way_to_water():
    """Seat 1, dry, acts right after this storm: next to a water-drop tile it can dig one in
    its next turn (2 cards until then), from six actions away it needs two turns (10 cards)."""
    d = water_plan_position()
    pawn_at(d, 1, (3, 3))
    near = water_plan(load(d))
    pawn_at(d, 1, (0, 2))
    far = water_plan(load(d))
    assert 0.0 < near < far
    pawn_at(d, 0, (1, 1))                    # the acting pawn out of the shade, with 4 water:
    assert water_plan(load(d)) == far        # not within reach of death, not counted
    d["pawns"][0]["water"] = 2               # with 2: six actions away, two of them next turn
    assert water_plan(load(d)) > far


def test_water_plan_drop_tiles_dug_in_the_search_give_no_more_water():
    """A water-drop tile excavated in the search (face unseen) is no source for the others:
    digging alone takes the teammates' water; with all three dug the team knows none."""
    d = water_plan_position()
    pawn_at(d, 1, (4, 4))
    st = load(d)
    undug = water_plan(st)
    assert water_plan(st, dug=[(4, 4)]) == undug          # the other well is one step away
    assert water_plan(st, dug=[(4, 4), (4, 3), (3, 4)]) > undug


def test_water_plan_counts_a_water_carrier_with_water_as_a_source():
    """The Water Carrier (in a tunnel two steps from the dry pawn) gives water for free to an
    orthogonal neighbour: a source one step away, if he has water to give."""
    d = water_plan_position(roles=("explorer", "navigator", "water_carrier", "archeologist"))
    pawn_at(d, 1, (0, 3))
    d["pawns"][2]["water"] = 5
    full = water_plan(load(d))
    d["pawns"][2]["water"] = 1
    assert full < water_plan(load(d))


def well_dug_under(roles, water, **weights):
    """The value the search gives a water-drop tile dug in its line, with seat 0 (and seat 1)
    on it at `water`, less the same position undug: the wells and the mirage unexcavated
    (ev_well 2/3), the pawns on the tile that water_plan_position puts at (4, 4)."""
    d = water_plan_position(roles=roles)
    for seat in (0, 1):
        pawn_at(d, seat, (4, 4))
        d["pawns"][seat]["water"] = water
    d["rules"]["search_weights"] = weights
    st = load(d)
    return plan_value(st, dug=[(4, 4)]) - plan_value(st)


def test_a_dug_well_waters_the_pawns_on_it_on_the_held_waters_scale():
    """Weight well_water_scaled: the 2 water a well may give each pawn on it (2/3 chance:
    two wells and the mirage undug) count as the water a pawn holds does, water_scale on the
    WATER_VALUE curve (the Water Carrier's carrier_water a unit); at 0 they counted unscaled
    (water_scale left out: the dug tile's water was worth 1/2.35 of held water)."""
    w = json.loads(Path(fd.__file__).with_name("data").joinpath(
        "search_weights.json").read_text())["weights"]
    roles = ("explorer", "navigator", "climber", "archeologist")
    # Two non-carriers at 1 water: each 1 -> 3 on the curve (10 -> 21).
    gain = (well_dug_under(roles, 1, well_water_scaled=1.0)
            - well_dug_under(roles, 1, well_water_scaled=0.0))
    assert gain == pytest.approx(2 * (2 / 3) * (w["water_scale"] - 1.0) * (21 - 10))
    # Seat 0 the Water Carrier: his 2 units at carrier_water each, no longer on the curve.
    roles = ("water_carrier", "navigator", "climber", "archeologist")
    gain = (well_dug_under(roles, 1, well_water_scaled=1.0)
            - well_dug_under(roles, 1, well_water_scaled=0.0))
    assert gain == pytest.approx((2 / 3) * ((w["carrier_water"] * 2 - (21 - 10))
                                            + (w["water_scale"] - 1.0) * (21 - 10)))
    # Full canteens (4: Explorer and Navigator) gain nothing either way.
    roles = ("explorer", "navigator", "climber", "archeologist")
    assert well_dug_under(roles, 4, well_water_scaled=1.0) == pytest.approx(
        well_dug_under(roles, 4, well_water_scaled=0.0))


def thirsty_teammate_three_steps_from_a_well(mate_water, **weights):
    """Every tile excavated but a cleared well at (2, 4) (the other well excavated, the mirage
    somewhere unexcavated), the Explorer on it at 2 water with 2 actions left, the Navigator
    (next to act) at mate_water three steps away at (4, 3), the others far with 3 water."""
    d = base(players=4, roles=["explorer", "navigator", "climber", "archeologist"],
             difficulty="novice")
    for row in d["board"]:
        for e in row:
            if e:
                e.update(excavated=True, sand=0)
    put_all(d, "well", [(2, 4), (0, 4)])[0]["excavated"] = False
    for seat, rc in enumerate([(2, 4), (4, 3), (0, 0), (0, 0)]):
        pawn_at(d, seat, rc)
        d["pawns"][seat]["water"] = 3
    d["pawns"][0]["water"] = 2
    d["pawns"][1]["water"] = mate_water
    d["actions_left"] = 2
    d["rules"]["search_weights"] = weights
    return load(d)


def test_team_search_waits_on_a_cleared_well_for_a_thirsty_teammate():
    """Weight well_gather: an excavated well waters every pawn on its tile (seed, spec 4.4),
    so the Explorer on a cleared well does not excavate it alone while the dry Navigator, next
    to act, can walk onto it and excavate it in her turn.  It excavates (and drinks) when she
    is not thirsty, when it is itself at 1 water (the storm between could kill it), and with
    the weight at 0."""
    def after(mate_water, own=2, **weights):
        st = thirsty_teammate_three_steps_from_a_well(mate_water, **weights)
        st = load({**st.to_dict(), "pawns": [dict(p, water=own) if i == 0 else p
                                             for i, p in enumerate(st.to_dict()["pawns"])]})
        d = play_action_phase(st, "team_search")
        return d["pawns"][0]["water"], d["board"][2][4]["excavated"]
    assert after(1, well_gather=1.0) == (2, False)
    assert after(3, well_gather=1.0) == (4, True)
    assert after(1, own=1, well_gather=1.0) == (3, True)
    assert after(1, well_gather=0.0) == (4, True)
    st = thirsty_teammate_three_steps_from_a_well(1, well_gather=1.0)
    assert plan_value(st) > plan_value(thirsty_teammate_three_steps_from_a_well(1, well_gather=0.0))


def reserve_position(dry_at, **weights):
    """dry_explorer's Explorer (0 water) at dry_at, the Navigator (3 water, on (0, 0))
    holding the Secret Water Reserve."""
    d = dry_explorer()
    pawn_at(d, 0, dry_at)
    give_card(d, "secret_water_reserve", 1)
    d["rules"]["search_weights"] = weights
    return load(d)


def test_a_held_secret_water_reserve_waters_its_holders_tile_in_the_evaluation():
    """Weight reserve_water: the Reserve (every pawn on the holder's tile gains 2 water, to
    its canteen's size; water_op plays it for a dry pawn) counts in the water the evaluation
    sees, for the pawns on the holder's tile only."""
    def gain(at):
        return (plan_value(reserve_position(at, reserve_water=1.0))
                - plan_value(reserve_position(at, reserve_water=0.0)))
    assert gain((0, 0)) > 0.0      # the dry Explorer and the others on the holder's tile
    # Away from the holder: only the holder's tile (Navigator 3 -> 4, the others 3 -> 5)
    # changes, the same as with the Explorer there less her own water.
    assert 0.0 < gain((4, 4)) < gain((0, 0))


def blocked_in(policy_roles=("navigator", "explorer")):
    """Seat 0 in a corner, walled in by two drifts of 4 sand; unexcavated tiles beyond."""
    d = base(players=2, roles=list(policy_roles))
    put(d, (0, 0), "gear")["excavated"] = True
    pawn_at(d, 0, (0, 0))
    pawn_at(d, 1, (4, 4))
    set_sand(d, (0, 1), 4)
    set_sand(d, (1, 0), 4)
    return d


@pytest.mark.parametrize("policy", ["search", "deep_search", "team_search"])
def test_search_blasts_a_drift_that_walls_it_in(policy):
    d = blocked_in()
    give_card(d, "dune_blaster", 0)
    st = load(d)
    assert agents.choose(st, policy, 1) in (BLAST(0, 0, 1), BLAST(0, 1, 0))
    # Without the card the same position is answered by digging.
    d = blocked_in()
    assert agents.choose(load(d), policy, 1) in (DIG(0, 1), DIG(1, 0))


@pytest.mark.parametrize("policy", ["search", "deep_search", "team_search"])
def test_search_flies_a_jet_pack_out_of_a_walled_corner(policy):
    d = blocked_in()
    set_sand(d, (0, 1), 8)
    set_sand(d, (1, 0), 8)
    give_card(d, "jet_pack", 0)
    a = agents.choose(load(d), policy, 1)
    kind, x = ACTIONS.decode(a)
    assert kind == "jet" and x["holder"] == 0, GAME.describe(load(d), a)


@pytest.mark.parametrize("policy", ["deep_search", "team_search"])
def test_deep_search_is_reproducible_across_shards(policy):
    r1 = batch.play(GAME, 3, {}, policy, seed=4, count=12)
    r2 = batch.play(GAME, 3, {}, policy, seed=4, start=6, count=6)
    assert r1.slice(6).column("end_reason").to_pylist() == r2.column("end_reason").to_pylist()
    assert r1.slice(6).column("turns").to_pylist() == r2.column("turns").to_pylist()


def test_search_policies_rank_by_strength():
    """Same games (common random numbers), 4 players Novice: the wider beam collects more
    parts than the narrow one, which collects more than the rule-based planner (measured on
    three seeds: 2.92/2.78/1.10, 2.90/2.79/1.21, 2.96/2.73/1.10)."""
    n = 300

    def parts(policy):
        rb = batch.play(GAME, 4, {"difficulty": "novice"}, policy, seed=8, count=n)
        return sum(rb.column("parts_collected").to_pylist()) / n

    planner, search, deep = parts("planner"), parts("search"), parts("deep_search")
    assert deep > search + 0.05 and search > planner + 1.0, (planner, search, deep)


@pytest.mark.parametrize("policy", ["planner"])
def test_endgame_navigator_pulls_a_teammate_onto_the_pad_from_afar(policy):
    """All parts held: the Navigator, far from the Launch Pad, spends his action moving a
    teammate three steps onto it rather than walking there first."""
    d = base(players=2, roles=["navigator", "climber"])
    put(d, (4, 4), "launch_pad")["excavated"] = True
    for part in d["parts"]:
        part.update(state="held", tile=None, holder=0)
    pawn_at(d, 0, (0, 0))
    pawn_at(d, 1, (4, 1))                   # three steps west of the pad
    st = load(d)
    assert agents.choose(st, policy, 1) == NAVIGATE(1, 4, 4)


@pytest.mark.parametrize("policy", ["planner", "search", "deep_search", "team_search"])
def test_endgame_navigator_on_the_pad_pulls_the_last_teammate_on(policy):
    """All parts held, the Navigator on the excavated Launch Pad, the last teammate three
    steps away: one Navigator action takes off now.  (From afar the search policies rather
    walk when that lands everyone sooner: the time to take off is their measure.)"""
    d = base(players=2, roles=["navigator", "archeologist"])
    put(d, (4, 4), "launch_pad")["excavated"] = True
    for part in d["parts"]:
        part.update(state="held", tile=None, holder=0)
    pawn_at(d, 0, (4, 4))
    pawn_at(d, 1, (4, 1))
    st = load(d)
    assert agents.choose(st, policy, 1) == NAVIGATE(1, 4, 4)
    st.apply(NAVIGATE(1, 4, 4))
    assert st.end_reason == "win"


@pytest.mark.parametrize("policy", ["search", "deep_search", "team_search"])
def test_endgame_search_fills_the_water_carrier_before_the_long_walk(policy):
    """All parts held, the Water Carrier dry on an excavated well, eight steps from the
    Launch Pad (two turns of walking, a third of the storm deck's suns ahead): the endgame
    search draws water first (the chance to take off against two actions); the rule-based
    endgame walked at once."""
    d = base(players=2, roles=["water_carrier", "navigator"])
    put(d, (4, 4), "launch_pad")["excavated"] = True
    put(d, (0, 0), "well")["excavated"] = True
    for part in d["parts"]:
        part.update(state="held", tile=None, holder=0)
    pawn_at(d, 0, (0, 0))
    pawn_at(d, 1, (4, 4))
    d["pawns"][0]["water"] = 0
    assert agents.choose(load(d), policy, 1) == WC_DRAW
    d["pawns"][0]["water"] = 4              # enough for the trip: no draw, walk
    kind, _ = ACTIONS.decode(agents.choose(load(d), policy, 1))
    assert kind == "move"


def dry_teammate_three_steps_away(teammate_water, **weights):
    """Every tile excavated (no work left), the Explorer (4 water) three diagonal-free steps
    east of the Archeologist on row 0."""
    d = base(players=2, roles=["explorer", "archeologist"])
    for row in d["board"]:
        for e in row:
            if e:
                e["excavated"] = True
    pawn_at(d, 0, (0, 3))
    pawn_at(d, 1, (0, 0))
    d["pawns"][0]["water"] = 4
    d["pawns"][1]["water"] = teammate_water
    d["rules"]["search_weights"] = weights
    return load(d)


def play_action_phase(st, policy):
    """The policy's decisions until the storm phase starts; the final dict."""
    for _ in range(12):
        st.apply(agents.choose(st, policy, 1))
        if st.to_dict()["phase"] != "actions":
            break
    return st.to_dict()


@pytest.mark.parametrize("policy", ["search", "deep_search", "team_search"])
def test_search_lines_share_water_as_the_team_does(policy):
    """The searched lines share water after each action as water_op will (weight
    line_sharing): the Explorer walks three steps to the dry Archeologist and the team shares
    on her tile.  Without it the search saw no worth in meeting her (sharing was only in
    play), and with her at 3 water (no gift wanted) it does not go."""
    d = play_action_phase(dry_teammate_three_steps_away(0), policy)
    assert [p["water"] for p in d["pawns"]] == [2, 2]
    d = play_action_phase(dry_teammate_three_steps_away(0, line_sharing=0.0), policy)
    assert [p["water"] for p in d["pawns"]] == [4, 0]
    d = play_action_phase(dry_teammate_three_steps_away(3), policy)
    assert [p["water"] for p in d["pawns"]] == [4, 3]
    assert d["pawns"][0]["tile"] != d["pawns"][1]["tile"]


def carrier_near_a_well(carrier_water, carrier_at=(0, 0), part=True, **weights):
    """4 players, before the fourth part: an excavated well at (0, 0), with a part on it
    (worth more to the search than water) if part, unexcavated tiles around, the Water
    Carrier at carrier_at, the teammates far away with full canteens."""
    d = base(players=4, roles=["water_carrier", "explorer", "navigator", "archeologist"])
    put(d, (0, 0), "well")["excavated"] = True
    for seat in range(1, 4):
        pawn_at(d, seat, (4, 4))
    pawn_at(d, 0, carrier_at)
    d["pawns"][0]["water"] = carrier_water
    if part:
        d["parts"][0].update(state="on_tile", tile=entry(d, (0, 0))["tile"])
    d["rules"]["search_weights"] = weights
    return load(d)


@pytest.mark.parametrize("policy", ["search", "deep_search", "team_search"])
def test_water_carrier_hub_draws_on_a_well_when_low(policy):
    """Weight water_hub: the Water Carrier low on water on an excavated well draws before
    anything else (the search alone picks the part up first and walks on to excavate); with
    water to spare the hub leaves the decision to the search."""
    assert agents.choose(carrier_near_a_well(1, water_hub=1), policy, 1) == WC_DRAW
    for water in (3, 4):
        assert (agents.choose(carrier_near_a_well(water, water_hub=1), policy, 1)
                == agents.choose(carrier_near_a_well(water, water_hub=0), policy, 1))


@pytest.mark.parametrize("policy", ["search", "deep_search", "team_search"])
def test_water_carrier_hub_walks_a_dry_carrier_to_a_well_in_reach(policy):
    """water_hub 2: a dry Water Carrier two steps from an excavated well walks to it (and
    draws with an action to spare); four steps away, out of this turn's reach, the hub
    leaves the decision to the search."""
    def choice(at, hub):
        return agents.choose(carrier_near_a_well(1, at, part=False, water_hub=hub), policy, 1)

    assert choice((0, 2), 2) == MOVE(0, 1)     # the search alone excavates its tile first
    assert choice((0, 4), 2) == choice((0, 4), 0)


# ---------------------------------------------------------------- search weights (issue 9)

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks" / "forbidden_desert"


def test_search_weight_names_are_one_list():
    """The C struct's fields (read back through a state's rules), the default data file and
    the tuner use the engine's names, in one order."""
    names = list(fd.SEARCH_WEIGHT_NAMES)
    assert len(names) == 36 and len(set(names)) == 36
    assert list(GAME.new(2, seed=1).to_dict()["rules"]["search_weights"]) == names
    assert list(fd.DEFAULT_SEARCH_WEIGHTS) == names
    spec = importlib.util.spec_from_file_location("tune_desert_search",
                                                  BENCHMARKS / "tune_search_weights.py")
    tuner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tuner)
    assert tuner.NAMES == names


def walled_in_with_blaster(**weights):
    d = blocked_in()
    give_card(d, "dune_blaster", 0)
    d["rules"]["search_weights"] = weights
    return load(d)


@pytest.mark.parametrize("policy", ["search", "deep_search"])
def test_search_weights_belong_to_each_game(policy):
    """A game whose rules value a held Dune Blaster above everything digs instead of blasting;
    a game with the default weights, before and after it in the same process, still blasts."""
    blasts = (BLAST(0, 0, 1), BLAST(0, 1, 0))
    default = walled_in_with_blaster()
    keeper = walled_in_with_blaster(blaster_held=1e6)
    assert agents.choose(default, policy, 1) in blasts
    assert agents.choose(keeper, policy, 1) in (DIG(0, 1), DIG(1, 0))
    assert agents.choose(default, policy, 1) in blasts
    assert keeper.to_dict()["rules"]["search_weights"]["blaster_held"] == 1e6
    assert GAME.from_dict(keeper.to_dict()) == keeper


def test_search_weights_change_a_batch_only_where_given():
    """Batches with other weights in between leave a default batch as it was (no global)."""
    def turns(rules):
        return batch.play(GAME, 3, rules, "search", seed=2, count=20).column("turns").to_pylist()

    before = turns({})
    other = turns({"search_weights": {"part_held": 0.0, "dist_work": 0.0}})
    assert turns({}) == before and other != before


# ---------------------------------------------------------------- team_search's widths

@pytest.mark.parametrize("name", sorted(fd.SEARCH_WIDTH_LIMITS))
def test_team_search_widths_are_whole_numbers_within_their_bound(name):
    """A width is a beam or a count of lines: a whole number from 1 to what the policy
    scratch holds; anything else is refused with the weight's name, the bound itself taken."""
    bound = fd.SEARCH_WIDTH_LIMITS[name]
    assert fd.parse_search_weights({name: bound})[name] == bound
    for bad in (0, 2.5, bound + 1, -3):
        with pytest.raises(ValueError, match=f"search_weights'.{name} must be a whole number"):
            GAME.new(4, {"search_weights": {name: bad}})


def test_team_search_widths_reach_the_search():
    """The defaults spelled out play the same games as no option; a wider search plays other
    games (the widths travel in each game's rules); the widest fits the policy scratch."""
    def games(weights, count=16):
        rb = batch.play(GAME, 4, {"search_weights": weights}, "team_search", seed=3, count=count)
        return rb.column("turns").to_pylist(), rb.column("length").to_pylist()

    defaults = {name: fd.DEFAULT_SEARCH_WEIGHTS[name] for name in fd.SEARCH_WIDTH_LIMITS}
    assert games(defaults) == games({})
    assert games({"team_beam": 24, "team_lines": 9}) != games({})
    widest = batch.play(GAME, 2, {"search_weights": dict(fd.SEARCH_WIDTH_LIMITS)}, "team_search",
                        seed=3, count=1)
    assert widest.column("turns").to_pylist()[0] > 0
