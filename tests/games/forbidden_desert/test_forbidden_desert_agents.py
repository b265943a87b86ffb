"""The Forbidden Desert search policies: equipment in the search, the thirst-risk model
built from the storm deck's public composition, the search's parameters as agent parameters
(each agent's own, never the game's rules), and play strength."""
import importlib.util
from pathlib import Path

import pytest

from core_cy import agents
from core_cy.play import batch
from core_cy.games.forbidden_desert import engine as fd
from core_cy.games.forbidden_desert.engine import GAME, thirst_risk
from desert_pos import (base, put, pawn_at, set_sand, give_card, card_ids, load, ACTIONS, BLAST,
                        DIG, NAVIGATE, WC_DRAW)


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


def test_more_water_means_less_risk():
    d = dry_explorer()
    risks = []
    for w in range(4):
        d["pawns"][0]["water"] = w
        risks.append(thirst_risk(load(d), 0))
    assert risks == sorted(risks, reverse=True) and risks[3] < risks[0] / 5


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


def dry_teammate_three_steps_away(teammate_water):
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
    """The searched lines share water after each action as water_op will (parameter
    line_sharing): the Explorer walks three steps to the dry Archeologist and the team shares
    on her tile.  Without it the search saw no worth in meeting her (sharing was only in
    play), and with her at 3 water (no gift wanted) it does not go."""
    d = play_action_phase(dry_teammate_three_steps_away(0), policy)
    assert [p["water"] for p in d["pawns"]] == [2, 2]
    d = play_action_phase(dry_teammate_three_steps_away(0), f"{policy}(line_sharing=false)")
    assert [p["water"] for p in d["pawns"]] == [4, 0]
    d = play_action_phase(dry_teammate_three_steps_away(3), policy)
    assert [p["water"] for p in d["pawns"]] == [4, 3]
    assert d["pawns"][0]["tile"] != d["pawns"][1]["tile"]


# ---------------------------------------------------------------- the search's parameters

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks" / "forbidden_desert"
SEARCHERS = ("search", "deep_search", "team_search", "rollout", "rollout_search")


def test_search_parameter_names_are_one_list():
    """The C struct's fields, the game's parameter table (agent_params.toml) and the tuner
    use the engine's names, in one order; the rule-based planner takes none, the widths and
    team_round only the team searches."""
    names = list(fd.SEARCH_WEIGHT_NAMES)
    assert len(names) == 30 and len(set(names)) == 30
    assert list(GAME.policy_params.names) == names
    for policy in SEARCHERS:
        own = [p.name for p in agents.agent_params(GAME, policy)]
        team = policy not in ("search", "deep_search")
        assert own == [n for n in names if team or n not in (*fd.SEARCH_WIDTH_LIMITS,
                                                            "team_round")]
    assert agents.agent_params(GAME, "planner") == ()
    spec = importlib.util.spec_from_file_location("tune_desert_search",
                                                  BENCHMARKS / "tune_search_weights.py")
    tuner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tuner)
    assert tuner.NAMES == names


def test_search_parameters_are_no_rules():
    """The weights left the rules: no rule option, nothing in a state's rules, a rules
    fingerprint that no agent string changes."""
    assert "search_weights" not in {o.name for o in GAME.options}
    with pytest.raises(ValueError, match="search_weights"):
        GAME.new(2, {"search_weights": {"sand": 1.0}})
    assert not set(GAME.new(2, seed=1).to_dict()["rules"]) & set(fd.SEARCH_WEIGHT_NAMES)


def test_search_parameters_are_agent_parameters_in_the_catalogue_and_agent_string():
    """team_search's parameters are listed in the catalogue with their defaults and bounds,
    and the full agent string (what results record per seat) spells every one of them."""
    schema = GAME.info()["agents"]["team_search"]["parameters"]["properties"]
    assert list(schema) == list(fd.SEARCH_WEIGHT_NAMES)
    assert schema["team_beam"] == {"type": "integer", "default": 12, "minimum": 1,
                                   "maximum": fd.SEARCH_WIDTH_LIMITS["team_beam"],
                                   "description": schema["team_beam"]["description"]}
    assert schema["line_sharing"]["type"] == "boolean" and schema["line_sharing"]["default"]
    text = agents.canonical_agent(GAME, "team_search(team_beam=16, sand=2)")
    assert text.startswith("team_search(part_held=486.6, ") and "team_beam=16, " in text
    assert "sand=2.0, " in text and "line_sharing=true" in text
    assert agents.canonical_agent(GAME, text) == text
    assert agents.canonical_agent(GAME, "planner") == "planner"


@pytest.mark.parametrize("agent, message", [
    ("search(sand=x)", "parameter 'sand' of agent 'search' must be a number"),
    ("search(sand=nan)", "parameter 'sand' of agent 'search' must be finite"),
    ("search(sand=-1)", "parameter 'sand' of agent 'search' must be >= 0.0"),
    ("search(sandy=1)", "unknown parameter 'sandy' of agent 'search'"),
    ("search(team_beam=8)", "unknown parameter 'team_beam' of agent 'search'"),
    ("planner(sand=1)", "unknown parameter 'sand' of agent 'planner'"),
    ("team_search(line_sharing=1)", "parameter 'line_sharing' of agent 'team_search' must be "
                                    "true or false"),
    ("rollout(sand=1, sand=2)", "parameter 'sand' of agent 'rollout' is given twice"),
])
def test_bad_search_parameters_are_refused_naming_the_parameter(agent, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        agents.agent_spec(GAME, agent)


def walled_in_with_blaster():
    d = blocked_in()
    give_card(d, "dune_blaster", 0)
    return load(d)


@pytest.mark.parametrize("policy", ["search", "deep_search", "team_search"])
def test_a_search_parameter_changes_the_choice_where_it_should(policy):
    """An agent that values a held Dune Blaster above everything digs instead of blasting;
    the default agent, before and after it in the same process, still blasts (the
    parameters are each agent's own, not the game's)."""
    blasts = (BLAST(0, 0, 1), BLAST(0, 1, 0))
    st = walled_in_with_blaster()
    assert agents.choose(st, policy, 1) in blasts
    assert agents.choose(st, f"{policy}(blaster_held=1000000)", 1) in (DIG(0, 1), DIG(1, 0))
    assert agents.choose(st, policy, 1) in blasts
    assert agents.choose(st, f"{policy}(blaster_held=8.988)", 1) in blasts   # the default


def test_search_parameters_change_a_batch_only_where_given():
    """Batches with other parameters in between leave a default batch as it was (no global);
    the parameters spelled at their defaults play the same games; two seats of one batch
    keep their own parameters."""
    def turns(agent, players=3):
        rb = batch.play(GAME, players, {}, agent, seed=2, count=20)
        return rb.column("turns").to_pylist(), rb.column("seat_agent").to_pylist()[0]

    before, seats = turns("search")
    assert seats == [agents.canonical_agent(GAME, "search")] * 3
    other, seats = turns("search(part_held=0, dist_work=0)")
    assert seats[0].startswith("search(part_held=0.0, ")
    assert turns("search")[0] == before and other != before
    assert turns(agents.canonical_agent(GAME, "search"))[0] == before
    mixed = ["search", "search(part_held=0, dist_work=0)", "search"]
    assert turns(mixed)[0] not in (before, other)


# ---------------------------------------------------------------- team_search's widths

@pytest.mark.parametrize("name", sorted(fd.SEARCH_WIDTH_LIMITS))
def test_team_search_widths_are_whole_numbers_within_their_bound(name):
    """A width is a beam or a count of lines: a whole number from 1 to what the policy
    scratch holds; anything else is refused with the parameter's name, the bound itself
    taken."""
    bound = fd.SEARCH_WIDTH_LIMITS[name]
    assert agents.parse_agent(GAME, f"team_search({name}={bound})")[1][name] == bound
    for bad, why in (("0", ">= 1"), ("2.5", "an integer"), (str(bound + 1), f"<= {bound}"),
                     ("-3", ">= 1")):
        with pytest.raises(ValueError, match=f"parameter '{name}' of agent 'team_search' "
                                             f"must be {why}"):
            agents.agent_spec(GAME, f"team_search({name}={bad})")


def test_team_search_widths_reach_the_search():
    """The defaults spelled out play the same games as none given; a wider search plays other
    games; the widest fits the policy scratch."""
    def games(agent, count=16):
        rb = batch.play(GAME, 4, {}, agent, seed=3, count=count)
        return rb.column("turns").to_pylist(), rb.column("length").to_pylist()

    assert games("team_search(team_beam=12, team_lines=6, team_reply_beam=4)") == games(
        "team_search")
    assert games("team_search(team_beam=24, team_lines=9)") != games("team_search")
    widest = ", ".join(f"{k}={v}" for k, v in fd.SEARCH_WIDTH_LIMITS.items())
    rb = batch.play(GAME, 2, {}, f"team_search({widest})", seed=3, count=1)
    assert rb.column("turns").to_pylist()[0] > 0
