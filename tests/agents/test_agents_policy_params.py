"""A game's engine policies take parameters like mcts does (`team_search(team_beam=16)`): the
game declares them in its own folder (agent_params.toml, apart from its rule options), the
generic agent code parses and validates them, lists them in the catalogue, spells them in the
full agent string and hands them to the engine policy as the agent's own parameter block."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core_cy
from core_cy import agents
from core_cy.agents import NO_POLICY_PARAMS, parse_policy_params

POLICIES = {"fast": "", "slow": ""}
ROW = {"name": "width", "kind": "int", "default": 4, "minimum": 1, "maximum": 8,
       "description": "a beam width", "policies": ["slow"]}


def test_every_policy_parameter_is_in_the_catalogue_and_the_agent_string():
    """For every game and engine policy: the catalogue lists exactly the policy's parameters
    with their defaults, the full agent string spells every one, and the default agent's
    block holds the game's defaults (a policy without parameters keeps its plain name)."""
    for name in core_cy.game_names():
        game = core_cy.load(name)
        catalogue = game.info()["agents"]
        for policy in game.policies:
            params = agents.agent_params(game, policy)
            schema = catalogue[policy]["parameters"]["properties"]
            assert list(schema) == [p.name for p in params]
            assert all(schema[p.name]["default"] == p.default for p in params)
            text = agents.canonical_agent(game, policy)
            assert text == (policy if not params else policy + "(" + ", ".join(
                f"{p.name}={p.spell(p.default)}" for p in params) + ")")
            block = agents.agent_spec(game, policy)["params"]
            assert block == game.policy_params.block()
            assert len(block) == 64 and all(math.isfinite(v) for v in block)


def test_mondo_solo_planner_and_the_desert_searches_have_parameters():
    mondo, desert = core_cy.load("mondo"), core_cy.load("forbidden_desert")
    assert [p.name for p in agents.agent_params(mondo, "solo_planner")] == ["nodes",
                                                                            "extra_penalty"]
    assert agents.agent_params(mondo, "greedy_placer") == ()
    assert len(agents.agent_params(desert, "team_search")) == 30
    for name in ("maori", "reef_encounter", "golden_island"):
        assert core_cy.load(name).policy_params is NO_POLICY_PARAMS


def test_an_mcts_rollout_policy_plays_with_its_default_parameters():
    desert = core_cy.load("forbidden_desert")
    spec = agents.agent_spec(desert, "mcts(rollout=team_search)")
    assert spec["params"] == desert.policy_params.block()
    assert agents.agent_spec(desert, "mcts")["params"] == NO_POLICY_PARAMS.block()


def test_a_parameter_block_keeps_the_defaults_of_what_is_not_given():
    table = parse_policy_params([ROW, {**ROW, "name": "sharing", "kind": "bool",
                                       "default": True, "policies": ["fast", "slow"]}],
                                POLICIES)
    assert table.names == ("width", "sharing")
    assert [p.name for p in table.of("fast")] == ["sharing"]
    assert table.block({"width": 6})[:3] == [6.0, 1.0, 0.0]
    assert table.block({"sharing": False})[:2] == [4.0, 0.0]


@pytest.mark.parametrize("change, message", [
    ({"kind": "enum"}, r"param\[0\]\.kind must be one of"),
    ({"policies": ["medium"]}, r"param\[0\]\.policies must name policies"),
    ({"policies": []}, r"param\[0\]\.policies must name policies"),
    ({"default": 9}, r"param\[0\]\.default: parameter 'width' of agent 'slow' must be <= 8"),
    ({"default": 2.5}, r"param\[0\]\.default: parameter 'width' of agent 'slow' must be an "
                       r"integer"),
    ({"colour": "red"}, r"param\[0\] needs name, kind, default, description and policies"),
    ({"description": None}, r"param\[0\] needs name, kind, default, description"),
])
def test_a_bad_declaration_is_refused_naming_the_row_and_field(change, message):
    row = {k: v for k, v in {**ROW, **change}.items() if v is not None}
    with pytest.raises(ValueError, match=message):
        parse_policy_params([row], POLICIES, "agent_params.toml")


def test_a_parameter_declared_twice_or_too_many_are_refused():
    with pytest.raises(ValueError, match="'width' is declared twice"):
        parse_policy_params([ROW, ROW], POLICIES)
    rows = [{**ROW, "name": f"p{i}"} for i in range(65)]
    with pytest.raises(ValueError, match="a block holds at most 64"):
        parse_policy_params(rows, POLICIES)


DESERT = core_cy.load("forbidden_desert")
TEAM = agents.agent_params(DESERT, "team_search")


def value_of(p):
    if p.kind == "bool":
        return st.booleans()
    if p.kind == "int":
        return st.integers(p.minimum, p.maximum)
    return st.floats(0.0, 1e9, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(st.fixed_dictionaries({}, optional={p.name: value_of(p) for p in TEAM}))
def test_any_valid_parameters_round_trip_through_the_agent_string(values):
    """Whatever valid parameters an agent string gives, its full spelling parses back to the
    same values, and the block the engine gets holds them (the others at their defaults)."""
    text = "team_search(" + ", ".join(f"{k}={p.spell(values[k])}" for p in TEAM
                                      for k in [p.name] if k in values) + ")"
    name, parsed = agents.parse_agent(DESERT, text)
    assert name == "team_search" and parsed == {**DESERT.policy_params.defaults(), **values}
    full = agents.canonical_agent(DESERT, text)
    assert agents.parse_agent(DESERT, full)[1] == parsed
    block = agents.agent_spec(DESERT, text)["params"]
    assert block[:len(TEAM)] == [float(parsed[p.name]) for p in TEAM]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(TEAM), st.sampled_from(["-1", "x", "nan", "inf", "1e999", "2.5", "",
                                               "true", "99999"]))
def test_a_bad_value_is_refused_naming_the_parameter(param, raw):
    """A value of the wrong type, out of bounds or not finite: ValueError naming the
    parameter (never a bad block handed to the engine)."""
    try:
        value = param.parse("team_search", raw)
    except ValueError:
        value = None
    if value is not None:
        return       # a valid value for this parameter (e.g. 99999 for a weight)
    with pytest.raises(ValueError, match=f"'{param.name}'|key=value"):
        agents.agent_spec(DESERT, f"team_search({param.name}={raw})")
