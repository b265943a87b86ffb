"""The search's fitted move prior (mcts(prior=fitted)): its weights as data, validated on load;
the expansion order and the PUCT selection it drives; the search without it unchanged."""
import hashlib
import math

import pytest

import core_cy
from core_cy import agents
from core_cy.agents import game as agent_game
from core_cy.play import batch

MAORI = core_cy.load("maori")
MAORI_KINDS = tuple(k.name for k in MAORI.actions.kinds)


def _flat(value=0.0, **offsets):
    """A Maori prior: every kind's value weight `value`, offsets as given (else 0)."""
    return {k: (value, offsets.get(k, 0.0)) for k in MAORI_KINDS}


def _data(**rows):
    kinds = {k: {"value": 1.0, "offset": 0.0} for k in MAORI_KINDS}
    kinds.update(rows)
    return {"kinds": kinds}


@pytest.mark.parametrize("data, message", [
    ({"kinds": {k: {"value": 1, "offset": 0} for k in MAORI_KINDS[1:]}},
     "kinds must name exactly the game's action kinds"),
    ({"kinds": {**{k: {"value": 1, "offset": 0} for k in MAORI_KINDS}, "fly": {}}},
     "got ['fly', "),
    ([1, 2], "kinds must name exactly"),
    (_data(take={"value": 1.0}), "kind 'take' must give exactly ['value', 'offset']"),
    (_data(take={"value": 1.0, "offset": 0.0, "scale": 2}), "kind 'take' must give exactly"),
    (_data(pass_={"value": 1.0, "offset": 0.0}), "got ['from_store', 'move', 'pass', 'pass_'"),
    (_data(move={"value": math.inf, "offset": 0.0}), "value of kind 'move' must be a finite number"),
    (_data(store={"value": 1.0, "offset": "high"}), "offset of kind 'store' must be a finite number"),
    (_data(remove={"value": True, "offset": 0.0}), "value of kind 'remove' must be a finite number"),
])
def test_bad_prior_weights_are_refused_naming_the_kind_and_field(data, message):
    with pytest.raises(ValueError, match="maori/data/move_prior.json") as err:
        agent_game.move_prior_weights(data, MAORI_KINDS, "maori/data/move_prior.json")
    assert message in str(err.value)


def test_every_stored_prior_loads_with_a_weight_pair_per_kind():
    fitted = 0
    for name in core_cy.game_names():
        game = core_cy.load(name)
        if game.move_prior is not None:
            fitted += 1
            assert set(game.move_prior) == {k.name for k in game.actions.kinds}
            assert all(math.isfinite(w) for pair in game.move_prior.values() for w in pair)
            assert "prior=fitted" in agents.canonical_agent(game, "mcts(prior=fitted)")
    assert fitted >= 1


def test_prior_fitted_needs_the_games_prior_and_none_is_not_spelled():
    desert = core_cy.load("forbidden_desert")
    assert desert.move_prior is None
    with pytest.raises(ValueError, match="parameter 'prior' of agent 'mcts': forbidden_desert "
                                         "has no fitted move prior"):
        agents.parse_agent(desert, "mcts(prior=fitted)")
    assert agents.canonical_agent(MAORI, "mcts(prior=none)") == agents.canonical_agent(MAORI, "mcts")
    assert "prior" not in agents.canonical_agent(MAORI, "mcts")


# Digests of (seat_score, seat_win_share, length) of small batches played by 7d34e3f's search
# (before the prior existed): the search without a prior plays the same games.
BEFORE = [("maori", 2, "mcts(iterations=30, cutoff=8)", 2, "73835eed78fbfdd6"),
          ("mondo", 3, "mcts(iterations=20, cutoff=6, exploration=0.2, stop=true, stop_lead=0.05, "
                       "light=place, light_iterations=1, forbid=flip, judge=fitted)", 1,
           "e84625a87717e9c9"),
          ("golden_island", 3, "mcts(iterations=30, cutoff=4, exploration=0.1, stop=true, "
                               "judge=fitted)", 1, "b170fdbfd68e29e1"),
          ("reef_encounter", 2, "mcts(iterations=20)", 1, "bcd53df7ba96b8f6")]


@pytest.mark.parametrize("name, players, agent, games, digest", BEFORE)
def test_the_search_without_a_prior_plays_the_games_it_played_before(name, players, agent,
                                                                     games, digest):
    cols = batch.play_columns(core_cy.load(name), players, None, agent, seed=54, count=games)
    got = hashlib.sha256(repr([cols[k].tolist() for k in ("seat_score", "seat_win_share",
                                                            "length")]).encode()).hexdigest()
    assert got[:16] == digest


def _state():
    """A 2-player Maori decision with 150 takes, 4 stores, a remove and a pass."""
    state = MAORI.new(2, seed=6)
    for _ in range(6):
        state.apply(agents.choose(state, "greedy", seed=1))
    return state


def _logits(state, prior):
    values = agents.action_values(state, state.current_player)
    best = max(values.values())
    return {a: prior[MAORI.actions.kind_of(a)][0] * (v - best)
            + prior[MAORI.actions.kind_of(a)][1] for a, v in values.items()}


def test_the_prior_orders_the_untried_actions(monkeypatch):
    """A node expands its untried actions most probable first: with a prior that lifts one
    kind over the one-ply values, the first child is of that kind (the one-ply order's is a
    take); the children a widened search holds are the best by the prior's logits."""
    state = _state()
    values = agents.action_values(state, state.current_player)
    assert MAORI.actions.kind_of(max(values, key=values.get)) == "take"
    one = agents.search_stats(state, "mcts(iterations=1, cutoff=8)", seed=3)[0]
    assert MAORI.actions.kind_of(next(iter(one))) == "take"
    for kind in ("pass", "remove"):
        monkeypatch.setitem(agent_game._PRIORS, "maori", _flat(1.0, **{kind: 10.0}))
        for prior in ("order", "fitted"):
            first = agents.search_stats(state, f"mcts(iterations=1, cutoff=8, prior={prior})",
                                        seed=3)[0]
            assert [MAORI.actions.kind_of(a) for a in first] == [kind]
    prior = _flat(0.5, store=3.0, take=-1.0)
    monkeypatch.setitem(agent_game._PRIORS, "maori", prior)
    logits = _logits(state, prior)
    visits = agents.search_stats(state, "mcts(iterations=60, cutoff=8, widen=0.5, prior=fitted)",
                                 seed=3)[0]
    assert 1 < len(visits) < 60
    ranked = sorted(logits.values(), reverse=True)
    assert min(logits[a] for a in visits) >= ranked[len(visits) - 1]


def test_a_child_holds_its_probability_among_every_action_of_the_node(monkeypatch):
    """Each root child keeps the prior's softmax over all the root's legal actions (not only
    over those still untried when its batch was valued): a search that tries every action
    holds the whole distribution, summing to 1, equal to the formula's."""
    state = _state()
    prior = _flat(0.2, store=1.0, take=0.3)
    monkeypatch.setitem(agent_game._PRIORS, "maori", prior)
    logits = _logits(state, prior)
    total = sum(math.exp(z) for z in logits.values())
    held = agents.search_priors(state, "mcts(iterations=200, cutoff=2, prior=fitted)", seed=3)
    assert set(held) == set(logits)
    for a, p in held.items():
        assert p == pytest.approx(math.exp(logits[a]) / total, rel=1e-9)


def test_puct_spends_the_visits_in_proportion_to_the_prior(monkeypatch):
    """Selection adds exploration x prior x sqrt(visits) / (1 + visits): where the bonus
    outweighs the values (exploration 100), the visits follow the prior (a store 7.4 times as
    probable as any other action gets several times the visits), where UCB1 (no prior, or
    the prior's order alone) gives every child about as many."""
    state = _state()
    agent = "mcts(iterations=200, cutoff=8, widen=0.3, exploration=100{})"
    monkeypatch.setitem(agent_game._PRIORS, "maori", _flat(0.0, store=2.0))
    visits = agents.search_stats(state, agent.format(", prior=fitted"), seed=3)[0]
    stores = [v for a, v in visits.items() if MAORI.actions.kind_of(a) == "store"]
    others = [v for a, v in visits.items() if MAORI.actions.kind_of(a) != "store"]
    assert len(stores) == 4 and others
    assert min(stores) > 3 * max(others)
    even = agents.search_stats(state, agent.format(""), seed=3)[0]
    assert max(even.values()) < 2 * min(even.values())
    # prior=order: the same children in the prior's order, chosen among by UCB1 (even visits)
    ordered = agents.search_stats(state, agent.format(", prior=order"), seed=3)[0]
    assert set(ordered) == set(visits)
    assert max(ordered.values()) < 2 * min(ordered.values())


def test_the_prior_search_is_reproducible_and_plays_to_the_end(monkeypatch):
    monkeypatch.setitem(agent_game._PRIORS, "maori", _flat(0.3, take=0.5))
    agent = "mcts(iterations=30, cutoff=8, widen=0.5, prior=fitted)"
    a = batch.play_columns(MAORI, 3, None, agent, seed=9, count=2)
    b = batch.play_columns(MAORI, 3, None, agent, seed=9, count=2)
    for key in ("seat_score", "seat_win_share", "length"):
        assert (a[key] == b[key]).all()
    assert set(a["end_reason"]) <= set(MAORI.end_reasons) - {"turn_limit", "safety_limit"}
