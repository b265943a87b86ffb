"""Forbidden Desert invariants under random and planner play (hypothesis)."""
from hypothesis import given, settings, strategies as st_

from core_cy import agents
from core_cy.play import batch
from core_cy.games.forbidden_desert.engine import GAME, DEFAULT_ADVENTURERS, planner_legal

RULES = st_.fixed_dictionaries({
    "difficulty": st_.sampled_from(["novice", "normal", "elite", "legendary"]),
    "include_storm_tracker": st_.booleans(),
    "storm_discard_timing": st_.sampled_from(["end_of_phase", "per_card"]),
    "solar_shield_anchor": st_.sampled_from(["pawn", "tile"]),
    "jetpack_when_buried": st_.booleans(),
    "navigator_can_move_buried": st_.booleans(),
    "takeoff_costs_action": st_.booleans(),
    "tunnel_shade_requires_unblocked": st_.booleans(),
    "climber_hops_blocked_tunnels": st_.booleans(),
})


def check_invariants(state):
    d = state.to_dict()
    cells = [e for row in d["board"] for e in row]
    assert sum(1 for e in cells if e is None) == 1
    assert sorted(e["tile"] for e in cells if e) == list(range(24))
    assert d["sand_supply"] + sum(e["sand"] for e in cells if e) == 48
    assert d["sand_supply"] >= 0
    tiles = {e["tile"] for e in cells if e}
    for p in d["pawns"]:
        assert p["tile"] in tiles
        assert p["water"] <= DEFAULT_ADVENTURERS[p["adventurer"]]
        assert p["water"] >= (-1 if state.is_terminal() else 0)
    assert sorted(d["storm_draw_pile"] + d["storm_discard_pile"]
                  + d["storm_drawn_this_phase"]) == list(range(31))
    assert sorted(d["equipment_pile"]) == sorted(
        i for i, o in enumerate(d["equipment_owner"]) if o == "deck")
    for part in d["parts"]:
        assert (part["state"] == "on_tile") == (part["tile"] is not None)
    back = GAME.from_dict(d)
    assert back == state and back.to_bytes() == state.to_bytes()
    if not state.is_terminal():
        legal = state.legal_actions()
        assert legal and legal == sorted(set(legal))
        for a in legal[:50]:
            assert isinstance(state.describe(a), str)


def play(players, rules, seed, agent, check=True):
    state = GAME.new(players, rules=rules, seed=seed)
    trace = []
    k = 0
    while not state.is_terminal():
        if check:
            check_invariants(state)
        a = agents.choose(state, agent, seed=seed * 100003 + k)
        trace.append(a)
        state.apply(a)
        k += 1
    check_invariants(state)
    return state, trace


@settings(max_examples=40, deadline=None)
@given(players=st_.integers(2, 5), rules=RULES, seed=st_.integers(0, 2**32))
def test_random_play_keeps_invariants(players, rules, seed):
    state, _ = play(players, rules, seed, "random")
    assert state.end_reason in ("win", "thirst", "buried", "swept_away", "turn_limit")


@settings(max_examples=15, deadline=None)
@given(players=st_.integers(2, 5), rules=RULES, seed=st_.integers(0, 2**32))
def test_planner_play_keeps_invariants(players, rules, seed):
    play(players, rules, seed, "planner")


@settings(max_examples=30, deadline=None)
@given(players=st_.integers(2, 5), rules=RULES, seed=st_.integers(0, 2**32), rich=st_.booleans(),
       agent=st_.sampled_from(["random", "planner"]))
def test_planners_ask_legality_as_the_legal_list_says(players, rules, seed, rich, agent):
    """The planners ask legality one action id at a time (plan_legal: act_legal, free_legal),
    never listing: in every state of a game, exactly the ids d_legal lists (the
    printed deck, or one with more of each card, so that holders pass, fly companions and
    blast more often)."""
    if rich:
        rules = dict(rules, equipment={"dune_blaster": 4, "jet_pack": 4, "solar_shield": 2,
                                       "terrascope": 2, "secret_water_reserve": 2,
                                       "time_throttle": 1})
    state = GAME.new(players, rules=rules, seed=seed)
    k = 0
    while not state.is_terminal():
        assert planner_legal(state) == state.legal_actions()
        state.apply(agents.choose(state, agent, seed=seed * 100003 + k))
        k += 1
    assert planner_legal(state) == []


@settings(max_examples=10, deadline=None)
@given(players=st_.integers(2, 5), seed=st_.integers(0, 2**32))
def test_same_seed_same_game(players, seed):
    a, ta = play(players, {}, seed, "random", check=False)
    b, tb = play(players, {}, seed, "random", check=False)
    assert ta == tb and a.to_bytes() == b.to_bytes()


def test_batch_is_reproducible_and_cooperative():
    r1 = batch.play(GAME, 4, {}, "planner", seed=5, count=50)
    r2 = batch.play(GAME, 4, {}, "planner", seed=5, start=25, count=25)
    assert r1.slice(25).to_pylist() == r2.to_pylist()
    for row in r1.to_pylist():
        shares = row["seat_win_share"]
        assert len(set(shares)) == 1 and shares[0] in (0.0, 1.0)
        assert (shares[0] == 1.0) == (row["end_reason"] == "win") == (row["win"] == 1.0)
        assert sorted(row["seat_adventurer"]) == sorted(set(row["seat_adventurer"]))


def test_greedy_and_random_terminate_in_batch():
    for agent in ("random", "greedy"):
        rb = batch.play(GAME, 3, {"difficulty": "legendary"}, agent, seed=1, count=30)
        assert rb.num_rows == 30


def test_observe_hides_undersides_and_deck_orders():
    from core_cy.games.forbidden_desert.engine import observe_dict
    state = GAME.new(4, seed=9)
    d = state.to_dict()
    seen_kinds, seen_piles = set(), set()
    for k in range(20):
        v = observe_dict(state, 0, k)
        seen_kinds.add(tuple(e["kind"] if e else None for row in v["board"] for e in row))
        seen_piles.add(tuple(v["storm_draw_pile"]))
        # Public information is unchanged.
        for r in range(5):
            for c in range(5):
                e, o = d["board"][r][c], v["board"][r][c]
                assert (e is None) == (o is None)
                if e and e["kind"] in ("crash_site", "launch_pad"):
                    assert o["kind"] == e["kind"]
        assert v["pawns"] == d["pawns"] and sorted(v["storm_draw_pile"]) == sorted(d["storm_draw_pile"])
    assert len(seen_kinds) > 1 and len(seen_piles) > 1


def test_planner_beats_random_and_feels_difficulty():
    def parts(agent, difficulty):
        rb = batch.play(GAME, 4, {"difficulty": difficulty}, agent, seed=2, count=400)
        return sum(rb.column("parts_collected").to_pylist()) / 400
    assert parts("planner", "novice") > parts("random", "novice") + 0.5
    assert parts("planner", "novice") > parts("planner", "legendary") + 0.2


def test_planner_wins_novice_clearly_more_often_than_legendary():
    """Two-proportion z-test over 3,000 seeded games per difficulty (a few seconds): the
    planner's Novice win rate exceeds its Legendary one by more than 3 standard errors."""
    import math
    n = 3000

    def wins(difficulty):
        rb = batch.play(GAME, 4, {"difficulty": difficulty}, "planner", seed=5, count=n)
        return rb.column("end_reason").to_pylist().count("win")
    novice, legendary = wins("novice"), wins("legendary")
    pooled = (novice + legendary) / (2 * n)
    se = math.sqrt(max(pooled * (1 - pooled), 1e-12) * 2 / n)
    assert (novice - legendary) / n > 3 * se, (novice, legendary)


@settings(max_examples=8, deadline=None)
@given(players=st_.integers(2, 5), rules=RULES, seed=st_.integers(0, 2**32))
def test_search_play_keeps_invariants(players, rules, seed):
    play(players, rules, seed, "search")


def test_search_batch_is_reproducible_across_shards():
    """The search caches its plan in the worker's scratch: a shard must not depend on the
    games played before it in the same worker."""
    r1 = batch.play(GAME, 4, {}, "search", seed=3, count=40)
    r2 = batch.play(GAME, 4, {}, "search", seed=3, start=20, count=20)
    assert r1.slice(20).to_pylist() == r2.to_pylist()


def test_search_does_not_read_hidden_tiles():
    """Re-dealing the faces of the unexcavated tiles (what the team cannot see) never changes
    the search's choice.  Checked at turn starts: later in a turn the worker's scratch may
    still hold the plan searched at the turn start (freed and reused by `choose`), which
    need not equal a fresh search from the later state."""
    from core_cy.games.forbidden_desert.engine import observe_dict
    checked = 0
    for seed in range(6):
        state = GAME.new(4, seed=seed)
        k = 0
        while not state.is_terminal() and k < 120:
            d = state.to_dict()
            if d["phase"] == "actions" and d["actions_left"] == 4:
                v = observe_dict(state, state.current_player, seed * 1000 + k)
                v["storm_draw_pile"], v["equipment_pile"] = d["storm_draw_pile"], d["equipment_pile"]
                other = GAME.from_dict(v)
                assert agents.choose(state, "search", 1) == agents.choose(other, "search", 1)
                checked += 1
            state.apply(agents.choose(state, "search", seed * 7919 + k))
            k += 1
    assert checked > 20


def test_search_collects_more_parts_than_random():
    def parts(agent):
        rb = batch.play(GAME, 4, {"difficulty": "novice"}, agent, seed=2, count=300)
        return sum(rb.column("parts_collected").to_pylist()) / 300
    assert parts("search") > parts("random") + 0.5


def test_search_wins_novice_clearly_more_often_than_legendary():
    """The same two-proportion z-test as the planner's, over 2,000 games per difficulty."""
    import math
    n = 2000

    def wins(difficulty):
        rb = batch.play(GAME, 4, {"difficulty": difficulty}, "search", seed=5, count=n)
        return rb.column("end_reason").to_pylist().count("win")
    novice, legendary = wins("novice"), wins("legendary")
    pooled = (novice + legendary) / (2 * n)
    se = math.sqrt(max(pooled * (1 - pooled), 1e-12) * 2 / n)
    assert (novice - legendary) / n > 3 * se, (novice, legendary)
