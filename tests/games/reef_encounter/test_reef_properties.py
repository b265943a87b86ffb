"""Invariants of Reef Encounter under random and greedy play from many seeds and variants
(hypothesis): the 200 polyps, 50 larva cubes, 20 alga cylinders and 16 shrimps are conserved,
every reached state is legal (the state-dict codec re-validates it and rebuilds it exactly),
the same seed replays the same game, greedy's fast action values equal the generic
clone-apply-heuristic values, the random agent's draw without listing equals the draw from the
listed actions, and the determinized view hides only what it should."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import core_cy
from core_cy import agents
from core_cy.play import batch

GAME = core_cy.load("reef_encounter")


@st.composite
def setups(draw):
    players = draw(st.integers(2, 4))
    rules = {"advanced_no_extra_growth": draw(st.booleans()),
             "advanced_eat_return_plus_one": draw(st.booleans()),
             "end4_literal_bag_lt3": draw(st.booleans()),
             "larva_play_min_polyps": draw(st.integers(0, 1)),
             "bonus_shortage": draw(st.sampled_from(["from_bag", "fail"])),
             "start_player": draw(st.sampled_from(["seat0", "random"])),
             "end_stops_turn": draw(st.booleans()),
             "reef_full_check": draw(st.sampled_from(["action", "placement"])),
             "attack_extra_growth": draw(st.booleans())}
    return players, rules, draw(st.integers(0, 2**32)), draw(st.floats(0, 1))


def totals(d):
    polyps = sum(d["bag"].values()) + sum(d["bonus_row"].values())
    polyps += sum(sum(sp["polyps"].values()) for sp in d["open_sea"])
    polyps += sum(ch in "GOPWY" for b in d["boards"] for row in b["cells"] for ch in row)
    cubes = sum(d["larva_supply"].values()) + sum(sp["cube"] for sp in d["open_sea"])
    cylinders = sum(d["alga_supply"].values()) + (d["alga_space"] is not None)
    cylinders += sum(t["covered"] for t in d["tiles"])
    shrimps = sum(len(b["shrimps"]) for b in d["boards"])
    for seat in d["seats"]:
        polyps += sum(seat["screen"].values()) + sum(seat["consumed"].values())
        polyps += sum(seat["fish"].values())
        cubes += sum(seat["larva"].values())
        shrimps += seat["shrimps_behind_screen"] + seat["fish_shrimps"] + seat["open_sea_shrimp"]
    return polyps, cubes, cylinders, shrimps


def check_state(state, d, before):
    assert totals(d) == (200, 50, 20, 4 * d["players"]), "components conserved"
    assert GAME.from_dict(d) == state, "a legal state that the codec rebuilds exactly"
    if d["phase"] == "turn" and not d["terminal"]:
        assert all(1 <= sum(sp["polyps"].values()) <= 3 for sp in d["open_sea"])
        assert d["turn"]["plays"] <= 2 and d["turn"]["play_from_screen"] <= 4
    if before is not None:
        for t0, t1 in zip(before["tiles"], d["tiles"]):
            if t0["covered"]:
                assert t1 == t0, "a covered tile never flips"
        for s0, s1 in zip(before["seats"], d["seats"]):
            assert sum(s1["fish"].values()) >= sum(s0["fish"].values())
            assert s1["corals_eaten"] >= s0["corals_eaten"]
    values = state.score_breakdown()[0]["values"]
    assert sum(values.values()) == 15 and all(1 <= v <= 5 for v in values.values())


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setups())
def test_random_and_greedy_play_keeps_every_invariant(setup):
    players, rules, seed, greedy_share = setup
    state = GAME.new(players, rules=rules, seed=seed)
    rng = np.random.default_rng(seed)
    before = None
    while not state.is_terminal() and state.num_moves < 600:
        d = state.to_dict()
        check_state(state, d, before)
        before = d
        seat = state.current_player
        for k in range(3):      # the engine's random draw without listing = the draw from the list
            assert agents.random_choice(state, k) == agents.random_choice(state, k, generic=True)
        if rng.random() < greedy_share:
            assert agents.action_values(state, seat) == agents.action_values(state, seat, generic=True)
            action = agents.choose(state, "greedy", seed=int(rng.integers(2**32)))
        else:
            action = int(rng.choice(state.legal_actions()))
        state.apply(action)
    check_state(state, state.to_dict(), before)


@settings(max_examples=6, deadline=None)
@given(st.integers(2, 4), st.integers(0, 2**32))
def test_every_game_ends_by_a_rule_under_random_and_greedy(players, seed):
    for agent in ("random", "greedy"):
        rb = batch.play(GAME, players, None, agent, seed=seed, count=3)
        reasons = rb.column("end_reason").to_pylist()
        assert all(r in ("all_tiles_covered", "fourth_shrimp", "reef_full", "supply_exhausted")
                   for r in reasons), reasons


def test_same_seed_same_game_with_agents():
    def play(seed):
        s = GAME.new(3, seed=seed)
        actions = []
        while not s.is_terminal():
            a = agents.choose(s, "greedy" if s.current_player == 0 else "random", seed=s.num_moves)
            actions.append(a)
            s.apply(a)
        return actions, s.scores()
    assert play(9) == play(9)
    assert play(9) != play(10)


def test_the_determinized_view_keeps_the_seat_s_own_and_public_information():
    from core_cy.games.reef_encounter.engine import GAME as G
    s = G.new(3, seed=4)
    while s.num_moves < 60:
        s.apply(agents.choose(s, "greedy", seed=s.num_moves))
    d = s.to_dict()
    seat = s.current_player
    views = [G.view(s, seat, seed=k).to_dict() for k in range(20)]
    for v in views:
        assert v["seats"][seat] == d["seats"][seat]
        assert v["boards"] == d["boards"] and v["open_sea"] == d["open_sea"]
        assert v["tiles"] == d["tiles"] and v["bonus_row"] == d["bonus_row"]
        for i, (a, b) in enumerate(zip(v["seats"], d["seats"])):
            for key in ("consumed", "larva", "shrimps_behind_screen", "corals_eaten"):
                assert a[key] == b[key]
            assert sum(a["screen"].values()) == sum(b["screen"].values())
            assert sum(a["fish"].values()) == sum(b["fish"].values())
        assert sum(v["bag"].values()) == sum(d["bag"].values())
        assert totals(v) == totals(d)
    others = [i for i in range(3) if i != seat]
    assert len({str([v["seats"][i]["screen"] for i in others]) for v in views}) > 1
    # What every seat saw go behind a screen or into a fish stays in every view.
    assert any(sum(d["seats"][i]["seen_screen"].values()) for i in others)
    for v in views:
        for i in others:
            for zone in ("screen", "fish"):
                seen = d["seats"][i]["seen_" + zone]
                assert all(v["seats"][i][zone][c] >= seen[c] for c in seen)


def mid_game(players=3, moves=90, seed=4):
    s = GAME.new(players, seed=seed)
    while s.num_moves < moves or s.to_dict()["phase"] != "turn":
        s.apply(agents.choose(s, "greedy", seed=s.num_moves))
    return s


def swap_unseen(d, seat, zone, colour_out, colour_in):
    """Swaps one unseen polyp of a seat's screen or fish with one of the bag."""
    d["seats"][seat][zone][colour_out] -= 1
    d["seats"][seat][zone][colour_in] += 1
    d["bag"][colour_out] += 1
    d["bag"][colour_in] -= 1


def hidden_twin(d, other):
    """A copy of state dict d that differs only in what seat `other` hides (one polyp of
    its screen and one of its fish, swapped with the bag) and in the future chance."""
    d2 = {**d, "bag": dict(d["bag"]),
          "seats": [{k: dict(v) if isinstance(v, dict) else v for k, v in p.items()}
                    for p in d["seats"]]}
    for zone in ("screen", "fish"):
        held, seen = d2["seats"][other][zone], d2["seats"][other]["seen_" + zone]
        out = next(c for c in held if held[c] > seen[c])
        swap_unseen(d2, other, zone, out, next(c for c in d2["bag"] if c != out and d2["bag"][c] > 0))
    d2["rng"] = GAME.new(d["players"], seed=999).to_dict()["rng"]
    return d2


def test_states_that_look_the_same_to_a_seat_give_the_same_view():
    d = mid_game().to_dict()
    seat = d["current_player"]
    other = (seat + 1) % 3
    # Another hidden hand, another secret fish polyp and another future chance stream.
    d2 = hidden_twin(d, other)
    a, b = GAME.from_dict(d), GAME.from_dict(d2)
    assert a != b
    for k in range(5):
        assert GAME.view(a, seat, seed=k) == GAME.view(b, seat, seed=k)
    # The seat's own hidden zones are part of what it sees: changing them changes the view.
    fish, seen = d2["seats"][seat]["fish"], d2["seats"][seat]["seen_fish"]
    out = next(c for c in fish if fish[c] > seen[c])
    swap_unseen(d2, seat, "fish", out, next(c for c in d2["bag"] if c != out and d2["bag"][c] > 0))
    assert GAME.view(GAME.from_dict(d2), seat, seed=0) != GAME.view(a, seat, seed=0)


@pytest.mark.parametrize("agent", ["greedy", "quick"])
def test_greedy_and_quick_beat_random_and_eat_corals(agent):
    rb = batch.play(GAME, 2, None, [agent, "random"], seed=21, count=40, rotate=True)
    shares = np.array(rb.column("seat_win_share").to_pylist())
    agents_ = rb.column("seat_agent").to_pylist()
    assert np.mean([s[a.index(agent)] for s, a in zip(shares, agents_)]) > 0.8
    eaten = np.array(rb.column("seat_corals_eaten").to_pylist())
    assert eaten.sum() > 40


def test_fast_values_of_collects_and_meals_match_the_generic_path_on_every_view():
    """The fast path also values the collects that may end the game and the last meals of
    the final round (on a copy of the true state): those values must not depend on hidden
    parts, so they equal the generic clone-apply-heuristic values on any determinized view."""
    ending = 0
    for players, seed in ((3, 1), (4, 2)):
        s = GAME.new(players, seed=seed)
        while not s.is_terminal():
            seat = s.current_player
            if s.to_dict()["phase"] in ("turn", "final"):
                fast = agents.action_values(s, seat)
                kinds = {a: GAME.actions.decode(a)[0] for a in fast}
                checked = [a for a in fast if kinds[a] in ("collect", "eat", "final_pass")]
                for k in range(2):
                    view = GAME.view(s, seat, seed=k)
                    generic = agents.action_values(view, seat, generic=True)
                    assert all(generic[a] == fast[a] for a in checked)
                for a in checked:
                    after = s.clone()
                    after.apply(a)
                    ending += after.is_terminal()
            s.apply(agents.choose(s, "greedy", seed=s.num_moves))
    assert ending > 0
