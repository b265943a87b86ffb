"""Forbidden Desert policy "rollout" (issue 10): team_search until the team holds three
parts and the fourth lies on a tile, then every choice simulated: each legal action played to
the end of the game by the rule-based endgame on views of the hidden parts (never the state
itself), the action with the most team wins taken.  It never peeks: states the team cannot
tell apart give the same decisions for the same seed."""
import numpy as np

from core_cy import agents
from core_cy.games.forbidden_desert.engine import GAME, ROLLOUT_SEARCH_KEEP, rollout_values
from test_forbidden_desert_observe import twin


def endgame_states(players, seed, count, search=False):
    """States of a team_search game where "rollout" simulates (three parts held and the
    fourth on a tile, or all four held; search: "rollout_search", all four held) and the
    acting seat has a choice."""
    state = GAME.new(players, rules={"difficulty": "novice"}, seed=seed)
    found = []
    while not state.is_terminal() and len(found) < count:
        if rollout_values(state, search=search) is not None and len(state.legal_actions()) > 1:
            found.append(state.clone())
        state.apply(agents.choose(state, "team_search", seed=seed))
    return found


def endgame_games(players, count, search=False):
    seeds = (s for s in range(100) if endgame_states(players, s, 1, search))
    return [next(seeds) for _ in range(count)]


def test_team_search_plays_early_in_the_game():
    state = GAME.new(4, rules={"difficulty": "novice"}, seed=3)
    for step in range(40):
        assert rollout_values(state) is None
        assert (agents.choose(state, "rollout", seed=step)
                == agents.choose(state, "team_search", seed=step))
        state.apply(agents.choose(state, "team_search", seed=step))


def test_the_simulations_start_when_three_parts_are_held_and_the_fourth_lies_on_a_tile():
    """"rollout": not while the fourth part is still hidden (team_search's choice played),
    but as soon as it lies on a tile: who fetches it, and how, is simulated too.
    "rollout_search" simulates only once all four parts are held."""
    waiting = started = 0
    for seed in range(40):
        state = GAME.new(4, rules={"difficulty": "novice"}, seed=seed)
        while not state.is_terminal() and not (waiting and started):
            parts = [p["state"] for p in state.to_dict()["parts"]]
            held, on_tile = parts.count("held"), "on_tile" in parts
            if rollout_values(state) is not None:
                assert held == 4 or (held == 3 and on_tile)
                if held == 3:       # "rollout_search" waits for the fourth part
                    started += 1
                    assert rollout_values(state, search=True) is None
                    assert (agents.choose(state, "rollout_search", seed=seed)
                            == agents.choose(state, "team_search", seed=seed))
                break
            assert held < 3 or (held == 3 and not on_tile)
            if held == 3 and not waiting:
                waiting += 1        # the fourth not on a tile yet: team_search's choice
                assert (agents.choose(state, "rollout", seed=seed)
                        == agents.choose(state, "team_search", seed=seed))
            state.apply(agents.choose(state, "team_search", seed=seed))
        if waiting and started:
            break
    assert waiting and started


def test_every_legal_action_is_simulated_and_the_pick_scores_best():
    moved = 0
    for seed in endgame_games(4, 3):
        for state in endgame_states(4, seed, 10):
            values, pick = rollout_values(state, seed=1)
            actions = [a for a, _ in values]
            assert actions[0] == agents.choose(state, "team_search", seed=0)  # first
            assert sorted(actions) == sorted(state.legal_actions())
            scores = [v for _, v in values]
            best = scores.index(max(scores))
            # Another action than team_search's only if it wins at least one more game.
            assert pick == (best if scores[best] >= scores[0] + 1 else 0)
            assert all(0 <= v <= 16 for v in scores)
            moved += pick != 0
    # The simulations decide: somewhere they prefer another action than team_search's.
    assert moved >= 1


def test_pruned_simulations_pick_the_same_action_as_the_full_ones():
    """The play (prune=True) stops a candidate once a win on every view left could not make
    the choice rule pick it: the same pick as every candidate played in full, the
    played values complete, a pruned one a partial sum at most its full value; and pruning
    saves simulations."""
    saved = 0
    for players in (4, 2):
        for seed in endgame_games(players, 2):
            for state in endgame_states(players, seed, 12):
                for salt in (1, 9):
                    full, pick = rollout_values(state, seed=salt)
                    pruned, pruned_pick = rollout_values(state, seed=salt, prune=True)
                    assert pruned_pick == pick
                    assert [a for a, _ in pruned] == [a for a, _ in full]
                    assert pruned[0] == full[0] and pruned[pick] == full[pick]
                    assert all(p <= f for (_, p), (_, f) in zip(pruned, full))
                    saved += sum(p < f for (_, p), (_, f) in zip(pruned, full))
    assert saved >= 1


def test_the_simulations_see_only_views():
    """Twin states (hidden faces, unseen storm cards, equipment pile and chance stream
    changed) give the same values and decisions for the same seed."""
    rng = np.random.default_rng(4)
    checked = 0
    for players in (4, 2):
        for seed in endgame_games(players, 1):
            twins = 0
            for state in endgame_states(players, seed, 8):
                d = state.to_dict()
                other = twin(d, rng)
                if other["board"] == d["board"] and other["storm_draw_pile"] == d["storm_draw_pile"]:
                    continue    # nothing hidden left to change (say one hidden tile, no pile)
                look_alike = GAME.from_dict(other)
                assert rollout_values(state, seed=7) == rollout_values(look_alike, seed=7)
                assert (agents.choose(state, "rollout", seed=7)
                        == agents.choose(look_alike, "rollout", seed=7))
                checked += 1
                twins += 1
                if twins == 3:
                    break
    assert checked >= 4


def test_rollout_search_plays_its_simulations_by_search_and_sees_only_views():
    """"rollout_search": on the same views, "search" plays out team_search's action and the
    ROLLOUT_SEARCH_KEEP others that the rule-based endgame ("rollout"'s values) rates best
    (other values than the rule-based endgame's), the others are left out (None); the same
    choice rule, and twin states give the same values and decisions."""
    rng = np.random.default_rng(5)
    differ = pruned = 0
    states = [state for seed in endgame_games(4, 2, True)
              for state in endgame_states(4, seed, 3, True)]
    for state in states:
        values, pick = rollout_values(state, seed=3, search=True)
        rule_based = rollout_values(state, seed=3)[0]
        assert [a for a, _ in values] == [a for a, _ in rule_based]
        # team_search's action, then the best of the rule-based stage (the first of equals).
        others = sorted(range(1, len(values)), key=lambda i: (-rule_based[i][1], i))
        kept = {0, *others[:ROLLOUT_SEARCH_KEEP]}
        assert {i for i, (_, v) in enumerate(values) if v is not None} == kept
        pruned += len(values) - len(kept)
        scores = [v if v is not None else -1 for _, v in values]
        best = scores.index(max(scores))
        assert pick == (best if scores[best] >= scores[0] + 1 else 0)
        assert all(0 <= values[i][1] <= 16 for i in kept)
        differ += any(values[i][1] != rule_based[i][1] for i in kept)
        look_alike = GAME.from_dict(twin(state.to_dict(), rng))
        assert rollout_values(look_alike, seed=3, search=True) == (values, pick)
        assert (agents.choose(state, "rollout_search", seed=3)
                == agents.choose(look_alike, "rollout_search", seed=3))
    assert differ >= 1 and pruned >= 1
