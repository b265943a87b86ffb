"""Forbidden Desert: the agents never peek (issue 10).  Two states the team cannot tell apart
(the hidden tile faces dealt otherwise among the hidden tiles, the unseen storm cards and the
equipment pile in another order, another future chance stream) give the same decisions for
the same seed: the search's visits, greedy's move and the team planners' moves (team_search's
teammates' turns included).  `observe`
sorts what is hidden before it shuffles it, so its view depends only on what the team knows."""
import numpy as np
import pytest

from core_cy import agents
from core_cy.games.forbidden_desert.engine import GAME

FACE_FIELDS = ("kind", "gear", "part", "axis")
WATER_DROP = ("well", "mirage")


def twin(d, rng):
    """A state dict the team cannot tell from d: hidden faces, unseen cards, deck orders and
    the chance stream changed."""
    known = set(d["rules"]["known_desert_sides"])
    drop_shown = d["rules"]["water_drop_desert_side"]
    cells = [e for row in d["board"] for e in row if e]
    hidden = [e for e in cells if not e["excavated"] and not e["known"] and e["kind"] not in known]
    out = dict(d, board=[[dict(e) if e else e for e in row] for row in d["board"]])
    by_tile = {e["tile"]: e for row in out["board"] for e in row if e}
    for drops in (False, True):
        group = [e for e in hidden if drop_shown and e["kind"] in WATER_DROP] if drops else \
            [e for e in hidden if not (drop_shown and e["kind"] in WATER_DROP)]
        faces = [{k: e[k] for k in FACE_FIELDS if k in e} for e in group]
        for e, k in zip(group, rng.permutation(len(group))):
            cell = by_tile[e["tile"]]
            for f in FACE_FIELDS:
                cell.pop(f, None)
            cell.update(faces[k])
    pile, seen = d["storm_draw_pile"], d["storm_known_on_top"]
    unseen = len(pile) - seen
    out["storm_draw_pile"] = [int(c) for c in rng.permutation(pile[:unseen])] + pile[unseen:]
    out["equipment_pile"] = [int(c) for c in rng.permutation(d["equipment_pile"])]
    out["rng"] = {"key": int(rng.integers(1, 2**31)), "counter": 3}
    return out


@pytest.mark.parametrize("players, seed", [(4, 3), (2, 8)])
def test_states_the_team_cannot_tell_apart_give_the_same_decisions(players, seed):
    state = GAME.new(players, rules={"difficulty": "novice"}, seed=seed)
    rng = np.random.default_rng(seed)
    checked = differed = 0
    for step in range(160):
        if state.is_terminal():
            break
        d = state.to_dict()
        other = twin(d, rng)
        differed += other["board"] != d["board"]
        look_alike = GAME.from_dict(other)
        if step % 8 == 0 and len(state.legal_actions()) > 1:
            assert (agents.search_visits(state, "mcts(iterations=24, cutoff=8)", seed=step)
                    == agents.search_visits(look_alike, "mcts(iterations=24, cutoff=8)", seed=step))
            checked += 1
        for agent in ("greedy", "search", "deep_search", "team_search", "planner"):
            assert (agents.choose(state, agent, seed=step)
                    == agents.choose(look_alike, agent, seed=step)), agent
        state.apply(agents.choose(state, "search", seed=step))
    assert checked >= 5 and differed >= 20


@pytest.mark.parametrize("seed", [1, 8])
def test_the_team_planners_never_read_the_equipment_pile(seed):
    """The crash site is a gear tile the team recognises: a search line that excavates it
    must not get the pile's hidden top card (the team cannot know which card comes)."""
    state = GAME.new(4, rules={"difficulty": "novice"}, seed=seed)
    d = state.to_dict()
    rng = np.random.default_rng(seed)
    for _ in range(12):
        other = dict(d, equipment_pile=[int(c) for c in rng.permutation(d["equipment_pile"])])
        look_alike = GAME.from_dict(other)
        for agent in ("search", "deep_search", "team_search"):
            assert (agents.choose(state, agent, seed=0)
                    == agents.choose(look_alike, agent, seed=0)), agent
