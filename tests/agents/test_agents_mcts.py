"""The search agent (MCTS over the engine contract) and the agent grammar."""
import os

import numpy as np
import pytest

import core_cy
from core_cy import agents
from core_cy.play import batch

MAORI = core_cy.load("maori")
FAST = "mcts(iterations=40, cutoff=8)"


def _with_search_defaults(game, defaults):
    """An instance of `game`'s class with its own search defaults replaced."""
    return type("Tuned", (type(game),), {"search_defaults": defaults})()


# Maori with the generic search defaults (its own, Game.search_defaults, are tested below).
GENERIC = _with_search_defaults(MAORI, {})


# ---- the agent grammar -----------------------------------------------------------------

def test_agent_strings_parse_with_defaults_filled_in():
    name, values = agents.parse_agent(GENERIC, " mcts( iterations = 400 , rollout=greedy ) ")
    assert name == "mcts"
    assert values == {"iterations": 400, "exploration": 0.7, "rollout": "greedy", "cutoff": 4,
                      "epsilon": 0.0, "sample": 0, "reuse": True, "top_up": True,
                      "margin": 0.0, "expand": "greedy", "widen": 0.0, "turns": False,
                      "stop": False, "stop_lead": 1.0, "light": "", "light_iterations": 50, "judge": "margin",
                      "prior": "none", "forbid": ""}
    assert agents.parse_agent(GENERIC, "greedy") == ("greedy", {"forbid": ""})
    assert agents.parse_agent(GENERIC, "mcts()")[1]["iterations"] == 200
    assert agents.canonical_agent(GENERIC, "mcts(reuse=False,iterations=9)") == (
        "mcts(iterations=9, exploration=0.7, rollout=greedy, expand=greedy, cutoff=4, "
        "epsilon=0.0, sample=0, reuse=false, top_up=true, margin=0.0, widen=0.0, turns=false, "
        "stop=false, judge=margin)")
    assert agents.canonical_agent(MAORI, "random") == "random"


@pytest.mark.parametrize("text, message", [
    ("mcts(depth=3)", "unknown parameter 'depth' of agent 'mcts'"),
    ("mcts(iterations=0)", "parameter 'iterations' of agent 'mcts' must be >= 1"),
    ("mcts(iterations=many)", "parameter 'iterations' of agent 'mcts' must be an integer"),
    ("mcts(rollout=smart)", "parameter 'rollout' of agent 'mcts' must be one of"),
    ("mcts(reuse=yes)", "parameter 'reuse' of agent 'mcts' must be true or false"),
    ("mcts(margin=2)", "parameter 'margin' of agent 'mcts' must be <= 1.0"),
    ("mcts(epsilon=-0.1)", "parameter 'epsilon' of agent 'mcts' must be >= 0.0"),
    ("mcts(sample=-1)", "parameter 'sample' of agent 'mcts' must be >= 0"),
    ("mcts(top_up=1)", "parameter 'top_up' of agent 'mcts' must be true or false"),
    ("mcts(exploration=nan)", "parameter 'exploration' of agent 'mcts' must be finite"),
    ("mcts(iterations=3, iterations=4)", "'iterations' of agent 'mcts' is given twice"),
    ("mcts(light=fly)", "parameter 'light' of agent 'mcts' must name at most"),
    ("mcts(iterations=40, light=take)",
     "parameter 'light_iterations' of agent 'mcts' must be at most its iterations"),
    ("mcts(iterations)", "key=value"),
    ("mcts(iterations=3", "name or name"),
    ("greedy(iterations=3)", "unknown parameter 'iterations' of agent 'greedy'"),
    ("smart", "unknown agent 'smart'"),
])
def test_bad_agent_strings_name_the_problem(text, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        agents.agent_spec(MAORI, text)
    with pytest.raises(ValueError):
        batch.play(MAORI, 2, None, [text, "random"], count=1)


def test_a_game_own_search_defaults_fill_in_and_show_everywhere():
    tuned = _with_search_defaults(MAORI, {"rollout": "random", "cutoff": 7})
    values = agents.parse_agent(tuned, "mcts(iterations=9)")[1]
    assert (values["rollout"], values["cutoff"], values["iterations"]) == ("random", 7, 9)
    # Explicit values still win, and the row's full agent string records what was played.
    assert agents.parse_agent(tuned, "mcts(cutoff=3)")[1]["cutoff"] == 3
    assert "rollout=random, expand=greedy, cutoff=7," in agents.canonical_agent(tuned, "mcts")
    assert agents.agent_spec(tuned, "mcts") == agents.agent_spec(
        MAORI, "mcts(rollout=random, cutoff=7)")
    info = tuned.info()["agents"]["mcts"]
    props = info["parameters"]["properties"]
    assert props["cutoff"]["default"] == 7 and props["rollout"]["default"] == "random"
    assert "the generic default is 4" in props["cutoff"]["description"]
    assert "own defaults: rollout=random, cutoff=7" in info["description"]
    assert props["iterations"]["default"] == 200   # not overridden: the generic default


@pytest.mark.parametrize("defaults, message", [
    ({"depth": 3}, r"maori.search_defaults: unknown mcts parameter\(s\) \['depth'\]"),
    ({"cutoff": "x"}, "maori.search_defaults: parameter 'cutoff' of agent 'mcts' must be an "
                      "integer"),
    ({"rollout": "planner"}, "maori.search_defaults: parameter 'rollout' .* must be one of"),
])
def test_bad_search_defaults_name_the_game_and_parameter(defaults, message):
    with pytest.raises(ValueError, match=message):
        agents.parse_agent(_with_search_defaults(MAORI, defaults), "mcts")


def test_every_game_search_defaults_are_valid():
    for name in core_cy.game_names():
        game = core_cy.load(name)
        values = agents.parse_agent(game, "mcts")[1]
        assert {k: values[k] for k in game.search_defaults} == game.search_defaults


def test_engine_policies_are_rollout_choices_and_the_catalogue_lists_parameters():
    desert = core_cy.load("forbidden_desert")
    assert agents.parse_agent(desert, "mcts(rollout=planner)")[1]["rollout"] == "planner"
    with pytest.raises(ValueError, match="must be one of"):
        agents.parse_agent(MAORI, "mcts(rollout=planner)")
    info = GENERIC.info()["agents"]
    props = info["mcts"]["parameters"]["properties"]
    assert props["iterations"]["type"] == "integer" and props["iterations"]["default"] == 200
    assert props["cutoff"]["default"] == 4 and props["rollout"]["default"] == "greedy"
    assert props["rollout"]["enum"] == ["random", "greedy", "none", "quick"]
    # A game's own `quick` policy is the generic choice, not listed twice.
    assert desert.info()["agents"]["mcts"]["parameters"]["properties"]["rollout"]["enum"][:4] \
        == ["random", "greedy", "none", "quick"]
    assert list(info["greedy"]["parameters"]["properties"]) == ["forbid"]   # restricted play
    assert "description" in info["random"]


def test_results_record_the_full_agent_string():
    rows = batch.play(MAORI, 2, None, [FAST, "random"], seed=3, count=2, rotate=True)
    spelled = agents.canonical_agent(MAORI, FAST)
    assert rows.column("seat_agent").to_pylist() == [[spelled, "random"], ["random", spelled]]


# ---- the search ------------------------------------------------------------------------

def test_search_is_deterministic_and_legal():
    state = MAORI.new(3, seed=4)
    for _ in range(12):
        a = agents.choose(state, FAST, seed=9)
        assert a in state.legal_actions()
        assert a == agents.choose(state, FAST, seed=9)
        state.apply(a)


def test_same_rows_whatever_the_shards_with_subtree_reuse():
    whole = batch.play(MAORI, 2, None, [FAST, "greedy"], seed=5, count=4, rotate=True)
    parts = [batch.play(MAORI, 2, None, [FAST, "greedy"], seed=5, start=s, count=2, rotate=True)
             for s in (0, 2)]
    for column in ("seat_score", "length"):
        assert whole.column(column).to_pylist() == (parts[0].column(column).to_pylist()
                                                     + parts[1].column(column).to_pylist())


def test_the_search_never_peeks_at_the_hidden_pile():
    """Two states the acting seat cannot tell apart (the face-down pile in another order and
    another future chance stream) give the same search, visit for visit."""
    state = MAORI.new(2, seed=11)
    rng = np.random.default_rng(1)
    checked = 0
    for step in range(40):
        d = state.to_dict()
        if len(d["pile"]) > 2 and len(state.legal_actions()) > 1:
            other = dict(d, pile=[int(t) for t in rng.permutation(d["pile"])],
                         rng={"key": 12345 + step, "counter": 7})
            assert other["pile"] != d["pile"]
            twin = MAORI.from_dict(other)
            visits = agents.search_visits(state, "mcts(iterations=60)", seed=step)
            assert visits == agents.search_visits(twin, "mcts(iterations=60)", seed=step)
            assert sum(visits.values()) == 60
            checked += 1
        state.apply(agents.choose(state, "greedy", seed=step))
    assert checked >= 20


def test_the_search_uses_the_seed():
    state = MAORI.new(2, seed=2)
    runs = {tuple(sorted(agents.search_visits(state, "mcts(iterations=60)", seed=s).items()))
            for s in range(4)}
    assert len(runs) > 1


def test_search_beats_random_at_maori():
    rows = batch.play(MAORI, 2, None, [FAST, "random"], seed=8, count=20, rotate=True)
    shares = np.array(rows.column("seat_win_share").to_pylist())
    agent = np.array(rows.column("seat_agent").to_pylist())
    assert shares[agent != "random"].mean() >= 0.8


@pytest.mark.parametrize("game, players, agent", [
    ("mondo", 2, "mcts(iterations=20, cutoff=6)"),
    ("mondo", 1, "mcts(iterations=20, cutoff=6)"),
    ("forbidden_desert", 3, "mcts(iterations=20, cutoff=10)"),
    ("maori", 3, "mcts(iterations=20, rollout=greedy, cutoff=4, reuse=false, margin=0.5)"),
])
def test_search_plays_every_game_to_the_end(game, players, agent):
    g = core_cy.load(game)
    rows = batch.play(g, players, None, agent, seed=1, count=2)
    shares = np.array(rows.column("seat_win_share").to_pylist())
    assert np.all(rows.column("length").to_numpy() > 0)
    assert np.all((shares >= 0) & (shares <= 1))


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_the_node_pool_is_fixed_and_freed():
    big = "mcts(iterations=2000, cutoff=1)"
    per_agent = agents.memory_bytes(MAORI, big)
    assert 4000 * 24 < per_agent < 2_000_000
    # Two searches' worth of nodes (a reused subtree plus the next search), 204 bytes each
    # (40 the node with its prior, 64 its values, 4 for compacting, 96 its share of the
    # expansion order and the candidates' prior probabilities).
    grown = agents.memory_bytes(MAORI, "mcts(iterations=20000, cutoff=1)") - per_agent
    assert grown == 2 * 18000 * 204
    state = MAORI.new(2, seed=3)
    agents.choose(state, big, seed=0)
    before = _rss_bytes()
    for k in range(60):   # 60 agents: a leaked pool each would be far above the margin
        agents.choose(state, big, seed=k)
    assert _rss_bytes() - before < 10 * per_agent


def test_epsilon_plays_some_rollout_moves_at_random():
    """epsilon > 0 changes the greedy rollouts (a share of their moves at random), reproducibly
    for a seed; epsilon = 1 rollouts simulate as many moves as random rollouts on average."""
    state = MAORI.new(2, seed=6)
    for _ in range(6):
        state.apply(agents.choose(state, "greedy", seed=1))
    greedy = agents.search_stats(state, "mcts(iterations=80, rollout=greedy, cutoff=0)", seed=3)
    mixed = agents.search_stats(state, "mcts(iterations=80, rollout=greedy, cutoff=0, epsilon=0.5)", seed=3)
    assert mixed == agents.search_stats(state, "mcts(iterations=80, rollout=greedy, cutoff=0, epsilon=0.5)",
                                        seed=3)
    assert mixed != greedy
    # Rollouts to the end: random ones are several times longer than greedy ones here, and
    # epsilon=1 ones as long as random ones (within 10%).
    moves = {r: np.mean([agents.search_stats(state, f"mcts(iterations=40, cutoff=0, {r})",
                                             seed=s)[1] for s in range(3)])
             for r in ("rollout=random", "rollout=greedy, epsilon=1.0")}
    assert abs(moves["rollout=greedy, epsilon=1.0"] / moves["rollout=random"] - 1) < 0.1


def test_sample_values_only_some_actions_in_greedy_rollouts():
    """sample=k values k random legal actions per greedy rollout move: reproducible for a
    seed, the same search as sample=0 when k is at least the branching, and with k=1 the
    rollouts are random ones (as long on average, within 10%)."""
    state = MAORI.new(2, seed=6)
    for _ in range(6):
        state.apply(agents.choose(state, "greedy", seed=1))
    full = agents.search_stats(state, "mcts(iterations=80, rollout=greedy, cutoff=0)", seed=3)
    some = agents.search_stats(state, "mcts(iterations=80, rollout=greedy, cutoff=0, sample=3)", seed=3)
    assert some == agents.search_stats(state, "mcts(iterations=80, rollout=greedy, cutoff=0, sample=3)", seed=3)
    assert some != full
    assert agents.search_stats(state, "mcts(iterations=80, rollout=greedy, cutoff=0, sample=4096)",
                               seed=3) == full
    moves = {r: np.mean([agents.search_stats(state, f"mcts(iterations=40, cutoff=0, {r})",
                                             seed=s)[1] for s in range(3)])
             for r in ("rollout=random", "rollout=greedy, sample=1")}
    assert abs(moves["rollout=greedy, sample=1"] / moves["rollout=random"] - 1) < 0.1


def test_top_up_counts_the_kept_visits_towards_the_iterations():
    """With top_up a decision runs only the simulations the kept subtree lacks (at least
    one), so its root ends with max(iterations, kept + 1) visits; without it every decision
    runs all of them on top of what was kept."""
    state = MAORI.new(3, seed=2)
    topped = [d for d in agents.decision_iterations(state, "mcts(iterations=50)", 12, seed=1)
              if d is not None]
    assert len(topped) >= 8 and any(kept > 0 for kept, _ in topped)
    assert all(after == max(50, kept + 1) for kept, after in topped)
    plain = [d for d in agents.decision_iterations(state, "mcts(iterations=50, top_up=false)",
                                                   12, seed=1) if d is not None]
    assert any(kept > 0 for kept, _ in plain)
    assert all(after == kept + 50 for kept, after in plain)


def _golden_decisions(steps=24):
    """(step, state) at each of the first `steps` positions of a greedy 3-player Golden
    Island game (seed 5) that offer a choice; the state plays on by greedy after each."""
    state = core_cy.load("golden_island").new(3, seed=5)
    for step in range(steps):
        if len(state.legal_actions()) > 1:
            yield step, state
        state.apply(agents.choose(state, "greedy", seed=step))


def test_stop_ends_the_search_once_the_leader_cannot_be_overtaken():
    """stop=true ends a decision's simulations once the most visited root action leads every
    other by more than the simulations left: the same simulations up to there (visits never
    above the full search's), the same choice, and fewer simulations where the leader is
    clear early."""
    saved = 0
    for step, state in _golden_decisions():
        full = agents.search_stats(state, "mcts(iterations=80)", seed=step)[0]
        early = agents.search_stats(state, "mcts(iterations=80, stop=true)", seed=step)[0]
        assert sum(full.values()) == 80 and set(early) <= set(full)
        assert all(v <= full[a] for a, v in early.items())
        if sum(early.values()) == 80:
            assert early == full
        else:     # the leader's lead is more than the simulations left
            lead = max(early.values())
            assert [a for a, v in early.items() if v == lead] == [max(full, key=full.get)]
            assert sorted(early.values())[-2:-1] < [lead - (80 - sum(early.values()))]
        assert (agents.choose(state, "mcts(iterations=80, stop=true, reuse=false)", seed=step)
                == agents.choose(state, "mcts(iterations=80, reuse=false)", seed=step))
        saved += 80 - sum(early.values())
    assert saved > 0


def test_stop_lead_ends_a_decision_at_its_share_of_the_simulations_left():
    """stop_lead=x with stop=true ends a decision once the most visited root action leads
    every other by more than x times the simulations left: the same simulations as the full
    search up to there, never more than the exact stop (x = 1) runs, stopped only at such a
    lead, and the agent string spells stop_lead only when it is not the exact 1."""
    saved = 0
    for step, state in _golden_decisions():
        full = agents.search_stats(state, "mcts(iterations=80)", seed=step)[0]
        exact = agents.search_stats(state, "mcts(iterations=80, stop=true)", seed=step)[0]
        early = agents.search_stats(state, "mcts(iterations=80, stop=true, stop_lead=0.2)",
                                    seed=step)[0]
        done = sum(early.values())
        assert done <= sum(exact.values())
        assert all(v <= full[a] for a, v in early.items())
        if done < 80:
            ranked = sorted(early.values())
            assert ranked[-1] - (ranked[-2] if len(ranked) > 1 else 0) > 0.2 * (80 - done)
            assert early == agents.search_stats(state, f"mcts(iterations={done})",
                                                seed=step)[0]
        saved += sum(exact.values()) - done
    assert saved > 0
    assert "stop_lead" not in agents.canonical_agent(core_cy.load("golden_island"),
                                                  "mcts(stop=true, stop_lead=1)")
    assert "stop_lead=0.2" in agents.canonical_agent(core_cy.load("golden_island"),
                                                      "mcts(stop=true, stop_lead=0.2)")


def test_light_decisions_run_light_iterations():
    """light=kind: a decision where an action of that kind is legal runs light_iterations
    simulations, every other decision the full iterations; the agent string spells light
    only when it is set, and without it the search is the same."""
    mondo = core_cy.load("mondo")
    text = "mcts(iterations=60, reuse=false, light=place, light_iterations=7)"
    assert "light" not in agents.canonical_agent(mondo, "mcts(iterations=60)")
    assert agents.canonical_agent(mondo, text).endswith(
        "stop=false, light=place, light_iterations=7, judge=margin)")
    place = mondo.actions["place"]
    state = mondo.new(3, seed=4)
    seen = set()
    for step in range(16):
        legal = state.legal_actions()
        if len(legal) > 1:
            is_light = any(place.base <= a < place.base + place.size for a in legal)
            visits = agents.search_stats(state, text, seed=step)[0]
            assert sum(visits.values()) == (7 if is_light else 60)
            assert (agents.search_stats(state, "mcts(iterations=60, reuse=false, "
                                        "light_iterations=7)", seed=step)
                    == agents.search_stats(state, "mcts(iterations=60, reuse=false)",
                                           seed=step))
            seen.add(is_light)
        state.apply(agents.choose(state, "greedy", seed=step))
    assert seen == {True, False}


def test_random_rollouts_draw_through_the_engines_random_action_unchanged():
    """Where an engine draws random actions without listing them (Reef Encounter), a search
    with random rollouts through that fast path is the same search, visit for visit and
    move for move, as through the listed legal actions."""
    reef = core_cy.load("reef_encounter")
    state = reef.new(3, seed=4)
    for step in range(30):
        if step % 10 == 0 and len(state.legal_actions()) > 1:
            agent = "mcts(iterations=30, rollout=random, cutoff=40)"
            fast = agents.search_stats(state, agent, seed=step)
            assert fast == agents.search_stats(state, agent, seed=step, generic=True)
            assert fast[1] > 30 * 20
        state.apply(agents.choose(state, "greedy", seed=step))


def test_widening_keeps_the_iterations_on_the_best_few_root_actions():
    """A Mondo pick offers about 270 actions: without widening every one of 200 iterations
    tries a new root action (one rollout each); with widen=w the root never has more than
    1 + w * sqrt(visits) children, the first the best by the one-ply order, and its
    iterations go to those few."""
    mondo = core_cy.load("mondo")
    state = mondo.new(2, seed=3)
    assert len(state.legal_actions()) > 200
    flat = agents.search_stats(state, "mcts(rollout=quick, cutoff=8, widen=0)", seed=1)[0]
    assert len(flat) == 200 and set(flat.values()) == {1}
    values = agents.action_values(state, state.current_player)
    for widen in (0.5, 2.0):
        visits = agents.search_stats(state, f"mcts(rollout=quick, cutoff=8, widen={widen})",
                                     seed=1)[0]
        assert sum(visits.values()) == 200
        assert 1 < len(visits) < 2 + widen * 200 ** 0.5     # a child added at < 1 + w sqrt(v)
        assert max(visits.values()) > 200 / len(visits)
        # the children are the best len(visits) actions by the one-ply values (ties aside)
        assert min(values[a] for a in visits) >= np.sort(list(values.values()))[-len(visits)]


def test_judge_fitted_without_an_engine_judgement_is_the_margin():
    """judge=fitted reads the engine's leaf_values where it has them (the Golden Island:
    tests/games/golden_island/test_golden_island_leaf.py); Maori has none, so its games are
    the margin judge's, row for row."""
    a = batch.play_columns(MAORI, 3, None, FAST, seed=5, count=2)
    b = batch.play_columns(MAORI, 3, None, "mcts(iterations=40, cutoff=8, judge=fitted)",
                           seed=5, count=2)
    for key in ("seat_score", "seat_win_share", "length"):
        assert np.array_equal(a[key], b[key])


def test_rollout_none_judges_the_new_leaf_without_rollout_moves():
    """rollout=none plays no rollout moves: one iteration from an empty tree simulates exactly
    its one expansion move (a random rollout cut off after 5 moves adds those 5); here the root
    has more legal actions than iterations, so every iteration expands a root child and the
    search simulates one move per iteration, the rollouts' 5 moves fewer."""
    state = MAORI.new(2, seed=6)
    for _ in range(6):
        state.apply(agents.choose(state, "greedy", seed=1))
    assert len(state.legal_actions()) > 80
    assert agents.search_stats(state, "mcts(iterations=1, rollout=none)", seed=3)[1] == 1
    assert agents.search_stats(state, "mcts(iterations=1, rollout=random, cutoff=5)",
                               seed=3)[1] == 6
    leaf = agents.search_stats(state, "mcts(iterations=80, rollout=none)", seed=3)
    assert leaf == agents.search_stats(state, "mcts(iterations=80, rollout=none)", seed=3)
    assert sum(leaf[0].values()) == 80 and leaf[1] == 80
    assert agents.search_stats(state, "mcts(iterations=80, rollout=random, cutoff=5)",
                               seed=3)[1] == 80 + 5 * 80


def test_greedy_expansion_values_a_node_once_per_batch_of_expansions():
    """A wide root (more legal actions than iterations) expands one child per iteration,
    best one-ply value first: the children are the actions of the highest values (ties
    aside), whether the untried ones are valued per expansion or once per batch."""
    state = MAORI.new(2, seed=6)
    for _ in range(6):
        state.apply(agents.choose(state, "greedy", seed=1))
    values = agents.action_values(state, state.current_player)
    visits = agents.search_visits(state, "mcts(iterations=40, rollout=none)", seed=3)
    assert len(visits) == 40 and len(values) > 80
    threshold = sorted(values.values(), reverse=True)[39]
    assert all(values[a] >= threshold for a in visits)
    assert min(values[a] for a in visits) == threshold


# ---- the quick rollout policy ----------------------------------------------------------

QUICK_GAMES = [("maori", {"mode": "basic"}), ("maori", {"mode": "advanced"}),
               ("maori", {"mode": "pro"}), ("mondo", {})]


@pytest.mark.parametrize("name, rules", QUICK_GAMES)
def test_quick_is_legal_and_reproducible_in_seeded_random_states(name, rules):
    """States along seeded random games, at 2-4 players: quick's action is legal, and the
    same seed gives the same action."""
    game = core_cy.load(name)
    checked = 0
    for seed in range(6):
        state = game.new(2 + seed % 3, rules=rules, seed=seed)
        step = 0
        while not state.is_terminal() and step < 600:
            if step % 3 == 0:
                action = agents.choose(state, "quick", seed=step)
                assert action in state.legal_actions(), (seed, step, state.describe(action))
                assert action == agents.choose(state, "quick", seed=step)
                checked += 1
            state.apply(agents.choose(state, "random", seed=1000 * seed + step))
            step += 1
    assert checked > 100


@pytest.mark.parametrize("name, rules", [("maori", {"mode": "basic"}), ("maori", {"mode": "pro"}),
                                         ("mondo", {})])
def test_quick_beats_random_clearly(name, rules):
    """The quick policy plays with purpose: it wins nearly every game against the random
    agent (a quick policy that played at random would win about half)."""
    game = core_cy.load(name)
    rows = batch.play(game, 2, rules, ["quick", "random"], seed=4, count=20, rotate=True)
    shares = np.array(rows.column("seat_win_share").to_pylist())
    seats = np.array(rows.column("seat_agent").to_pylist())
    assert shares[seats == "quick"].mean() >= 0.9


def test_rollout_quick_is_the_games_quick_policy_else_greedy():
    """rollout=quick plays the game's `quick` policy (the same search as naming the policy),
    and greedy moves in a game without one (the desert)."""
    state = MAORI.new(2, seed=6)
    for _ in range(6):
        state.apply(agents.choose(state, "greedy", seed=1))
    # Rollouts to the end: the moves they simulate tell the policies apart.
    quick = agents.search_stats(state, "mcts(iterations=30, rollout=quick, cutoff=0)", seed=3)
    assert quick == agents.search_stats(state, "mcts(iterations=30, rollout=quick, cutoff=0)",
                                        seed=3)
    for other in ("greedy", "random"):
        assert quick[1] != agents.search_stats(
            state, f"mcts(iterations=30, rollout={other}, cutoff=0)", seed=3)[1]
    desert = core_cy.load("forbidden_desert")
    state = desert.new(3, seed=2)
    assert (agents.search_stats(state, "mcts(iterations=30, rollout=quick, cutoff=6)", seed=1)
            == agents.search_stats(state, "mcts(iterations=30, rollout=greedy, cutoff=6)", seed=1))
