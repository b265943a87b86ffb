"""The experiment spec: validation against the catalogue, arms, sweeps, cells and shards."""
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import core_cy
from services.spec import ExperimentSpec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GAME = next(g for g in core_cy.game_names() if not core_cy.load(g).cooperative)  # a competitive game


def _game():
    return core_cy.load(GAME)


def _enum_option():
    """The first enum rule option of the game and two of its values."""
    for o in _game().options:
        if o.kind == "enum" and len(o.choices) >= 2:
            return o
    pytest.fail("the game has no enum option")


def _errors(data) -> list[tuple[tuple, str]]:
    with pytest.raises(ValidationError) as info:
        ExperimentSpec.model_validate(data)
    return [(e["loc"], e["msg"]) for e in info.value.errors()]


def _base(**extra):
    return {"game": GAME, "players": _game().min_players, **extra}


def test_defaults_give_one_default_arm():
    spec = ExperimentSpec.model_validate(_base())
    assert spec.name == "experiment"
    assert spec.arm_rules() == {"default": {}}
    assert spec.baseline_arm() == "default"
    assert spec.shard_size is None  # shards sized by time
    assert spec.cells() == [("default", {}, _game().min_players, None)]  # no ladder rung


def test_unknown_game_lists_the_games():
    [(loc, msg)] = _errors({"game": "no-such-game", "players": 2})
    assert loc == ("game",)
    for name in core_cy.game_names():
        assert name in msg


def test_unknown_field_is_rejected():
    [(loc, _)] = _errors(_base(colour="blue"))
    assert loc == ("colour",)


def test_player_count_outside_the_games_range():
    g = _game()
    [(loc, msg)] = _errors(_base(players=[g.min_players, g.max_players + 1]))
    assert loc == ("players", 1)
    assert str(g.max_players) in msg
    [(loc, _)] = _errors(_base(players=g.min_players - 1))
    assert loc == ("players",)


def test_bad_arm_option_value_names_arm_option_and_allowed_values():
    opt = _enum_option()
    [(loc, msg)] = _errors(_base(arms={"mine": {opt.name: "not-a-choice"}}))
    assert loc == ("arms", "mine", opt.name)
    for choice in opt.choices:
        assert choice in msg


def test_unknown_arm_option_lists_known_options():
    [(loc, msg)] = _errors(_base(arms={"a": {"no_such_option": 1}}))
    assert loc == ("arms", "a", "no_such_option")
    assert _game().options[0].name in msg


def test_integer_option_bounds_are_reported():
    opt = next(o for o in _game().options if o.kind == "int" and o.maximum is not None)
    [(loc, msg)] = _errors(_base(arms={"big": {opt.name: opt.maximum + 1}}))
    assert loc == ("arms", "big", opt.name)
    assert str(opt.maximum) in msg


def _count_dependent_option():
    """(game, option, value, bad player count) for a rule value valid only at some counts."""
    for name in core_cy.game_names():
        g = core_cy.load(name)
        counts = range(g.min_players, g.max_players + 1)
        for o in g.options:
            for value in o.choices:
                bad = []
                for n in counts:
                    try:
                        g.resolve_rules({o.name: value}, n)
                    except ValueError:
                        bad.append(n)
                if bad and len(bad) < len(counts):
                    return g, o.name, value, bad[0]
    return None


def test_rules_checked_at_every_player_count():
    """An arm valid at one player count but not another is rejected, naming the arm."""
    found = _count_dependent_option()
    assert found is not None, "the catalogue has no player-count-dependent rule option"
    g, name, value, n = found
    counts = list(range(g.min_players, g.max_players + 1))
    with pytest.raises(ValidationError) as info:
        ExperimentSpec.model_validate({"game": g.name, "players": counts,
                                       "arms": {"x": {name: value}}})
    [error] = info.value.errors()
    assert error["loc"] == ("arms", "x")
    assert f"{n} players" in error["msg"]


def test_agents_validated_per_seat():
    g = _game()
    n = g.min_players
    errors = _errors(_base(agents=["random"] * (n - 1) + ["no-such-agent"]))
    assert errors[0][0] == ("agents", n - 1)
    assert "random" in errors[0][1]
    [(loc, msg)] = _errors(_base(agents=["random"] * (n + 1)))
    assert loc == ("agents",) and "one agent per seat" in msg


def test_rotation_needs_an_agent_list():
    [(loc, _)] = _errors(_base(rotate_agents=True))
    assert loc == ("rotate_agents",)


def test_rotations_pairing_needs_agents_and_whole_deals():
    n = _game().min_players
    [(loc, msg)] = _errors(_base(pairing="rotations"))
    assert loc == ("pairing",) and "list of agents" in msg
    agents = ["random"] * n
    [(loc, msg)] = _errors(_base(pairing="rotations", agents=agents, games_per_arm=n * 10 + 1))
    assert loc == ("games_per_arm",) and f"multiple of {n}" in msg
    [(loc, _)] = _errors(_base(pairing="rotations", agents=agents, games_per_arm=n,
                               stop_when={"half_width": 0.1, "max_games": n * 10 + 1}))
    assert loc == ("stop_when", "max_games")
    spec = ExperimentSpec.model_validate(_base(pairing="rotations", agents=agents,
                                               games_per_arm=n * 10))
    assert spec.rotates() and spec.games_per_deal(n) == n
    [(loc, _)] = _errors(_base(pairing="pentanomial"))
    assert loc == ("pairing",)


def test_speeds_positive_and_one_per_seat():
    n = _game().min_players
    [(loc, _)] = _errors(_base(speeds=[1.0] * (n - 1) + [0.0]))
    assert loc == ("speeds",)
    [(loc, _)] = _errors(_base(speeds=[1.0] * (n + 1)))
    assert loc == ("speeds",)


@pytest.mark.parametrize("field,value", [("games_per_arm", 0), ("seed", -1), ("seed", 2**63),
                                         ("shard_size", 99)])
def test_numeric_bounds(field, value):
    [(loc, _)] = _errors(_base(**{field: value}))
    assert loc == (field,)


@pytest.mark.parametrize("stop", [{"half_width": 0, "max_games": 10},
                                  {"half_width": 0.5, "max_games": 10},
                                  {"half_width": 0.1, "max_games": 0}])
def test_stop_when_bounds(stop):
    errors = _errors(_base(stop_when=stop))
    assert errors[0][0][0] == "stop_when"


@settings(max_examples=150, deadline=None)
@given(spread=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5),
                        st.booleans(), st.text(max_size=3), st.none()),
       delta=st.sampled_from([0.03, None]))
def test_stop_when_spread_is_a_number_in_0_1_with_delta(spread, delta):
    """stop_when.spread (the stored spread of the triangle rule): a number in (0, 1], only
    with delta; anything else is refused naming stop_when.spread."""
    rule = {"max_games": 1000, "spread": spread, **({"delta": delta} if delta else
                                                    {"half_width": 0.05})}
    number = isinstance(spread, (int, float)) and not isinstance(spread, bool)
    if spread is None or (number and 0 < spread <= 1 and delta):
        look = ExperimentSpec.model_validate(_base(stop_when=rule)).look(interim=True)
        assert look.spread == spread and look.wave_games == 1000
        return
    errors = _errors(_base(stop_when=rule))
    assert errors and all(loc == ("stop_when", "spread") for loc, _ in errors), errors


@settings(max_examples=150, deadline=None)
@given(check=st.one_of(st.text(max_size=10), st.text("0123456789abcdef", min_size=8,
                                                      max_size=8),
                       st.integers(), st.floats(), st.booleans(), st.none(),
                       st.lists(st.integers(), max_size=2)),
       spread=st.sampled_from([0.3, None]))
def test_stop_when_spread_check_is_eight_hex_digits_with_a_spread(check, spread):
    """stop_when.spread_check (what a plan hands out beside its spread): 8 lowercase hex
    digits, only with spread; anything else is refused naming stop_when.spread_check."""
    rule = {"max_games": 1000, "delta": 0.03, "spread": spread, "spread_check": check}
    good = isinstance(check, str) and len(check) == 8 and set(check) <= set("0123456789abcdef")
    if check is None or (good and spread is not None):
        assert ExperimentSpec.model_validate(_base(stop_when=rule)).stop_when.spread_check \
            == check
        return
    errors = _errors(_base(stop_when=rule))
    assert errors and all(loc == ("stop_when", "spread_check") for loc, _ in errors), errors
    assert all("spread" in msg for _, msg in errors)


def _planned(spread: float, **change) -> ExperimentSpec:
    """A spec stopped by the triangle, its spread and check as a plan hands them out for the
    two-arm question (then `change`d)."""
    option = _enum_option()
    raw = _base(arms={"a": {option.name: option.choices[0]}, "b": {option.name:
                                                                 option.choices[1]}},
                stop_when={"max_games": 1000, "delta": 0.03, "spread": spread})
    check = ExperimentSpec.model_validate(raw).spread_check_for(spread)
    raw["stop_when"]["spread_check"] = check
    return ExperimentSpec.model_validate({**raw, **change})


@settings(max_examples=40, deadline=None)
@given(spread=st.floats(1e-3, 1.0), typed=st.floats(1e-3, 1.0))
def test_a_spread_no_plan_handed_out_for_the_question_is_warned_of(spread, typed):
    """spread_warning: none for the spread and check a plan hands out (also as the plan
    writes the spread, to 4 significant digits, and under another name and seed); a warning
    for a spread typed without its check or another spread under the check."""
    planned = _planned(spread)
    assert planned.spread_warning() is None
    assert _planned(spread, name="renamed", seed=9).spread_warning() is None  # same question
    written = planned.model_copy(update={"stop_when": planned.stop_when.model_copy(
        update={"spread": float(f"{spread:.4g}")})})
    assert written.spread_warning() is None
    bare = planned.model_copy(update={"stop_when": planned.stop_when.model_copy(
        update={"spread_check": None})})
    assert "without the stop_when.spread_check" in bare.spread_warning()
    if f"{typed:.4g}" != f"{spread:.4g}":
        other = planned.model_copy(update={"stop_when": planned.stop_when.model_copy(
            update={"spread": typed})})
        assert "does not match" in other.spread_warning()


def test_a_plans_spread_carried_to_another_question_is_warned_of():
    """The spread and check a plan handed out, carried to other rules, players or agents:
    spread_warning says no plan handed it out for this question."""
    option = _enum_option()
    planned = _planned(0.4321).model_dump(exclude_unset=True)
    for change in ({"players": _game().max_players}, {"agents": "greedy"},
                   {"arms": {"a": {option.name: option.choices[0]},
                             "b": {option.name: option.choices[0]}}}):
        warned = ExperimentSpec.model_validate({**planned, **change}).spread_warning()
        assert warned and "does not match" in warned and "meeplelab plan" in warned, change


def test_baseline_must_be_an_arm():
    [(loc, msg)] = _errors(_base(arms={"a": {}, "b": {}}, baseline="c"))
    assert loc == ("baseline",) and "'a'" in msg


def test_sweep_expands_into_a_grid_of_named_arms():
    opt = _enum_option()
    flag = next(o for o in _game().options if o.kind == "bool")
    spec = ExperimentSpec.model_validate(
        _base(sweep={opt.name: list(opt.choices[:2]), flag.name: [True, False]}))
    arms = spec.arm_rules()
    assert len(arms) == 4
    first = f"{opt.name}={opt.choices[0]},{flag.name}=true"
    assert arms[first] == {opt.name: opt.choices[0], flag.name: True}
    assert spec.baseline_arm() == first


def test_bad_sweep_value_is_located_in_the_sweep():
    opt = _enum_option()
    errors = _errors(_base(sweep={opt.name: [opt.choices[0], "nope"]}))
    assert errors[0][0] == ("sweep", opt.name)


def test_arms_crossed_with_sweep():
    opt = _enum_option()
    flag = next(o for o in _game().options if o.kind == "bool")
    spec = ExperimentSpec.model_validate(
        _base(arms={"a": {opt.name: opt.choices[0]}, "b": {opt.name: opt.choices[1]}},
              sweep={flag.name: [False, True]}))
    assert list(spec.arm_rules()) == [f"a,{flag.name}=false", f"a,{flag.name}=true",
                                      f"b,{flag.name}=false", f"b,{flag.name}=true"]


def test_cells_cover_arms_times_player_counts():
    g = _game()
    counts = [g.min_players, g.min_players + 1]
    spec = ExperimentSpec.model_validate(_base(players=counts, arms={"x": {}, "y": {}},
                                               games_per_arm=10))
    assert [(c.arm, c.players) for c in spec.cells()] == [
        ("x", counts[0]), ("x", counts[1]), ("y", counts[0]), ("y", counts[1])]
    assert spec.total_games() == 40


def _grid(spec, begin: int, end: int) -> list[tuple[int, int]]:
    """The (start, count) shards the runner writes for games begin..end-1 of one cell."""
    from services.runner import Part, _tasks

    cell = spec.cells()[0]
    part = Part(cell, spec.play_arguments(cell), spec.seed, begin, end - begin)
    return sorted(s for _, task in _tasks(spec.game, [part], {}, {}, 2, spec.shard_size, "e",
                                         "/x", 0, None) for s in task["shards"])


@settings(max_examples=50, deadline=None)
@given(games=st.integers(1, 20000), shard=st.one_of(st.none(), st.integers(100, 3000)))
def test_shards_tile_the_games_exactly(games, shard):
    spec = ExperimentSpec.model_validate(_base(games_per_arm=games, shard_size=shard))
    shards = _grid(spec, 0, spec.max_games_per_cell())
    assert shards[0][0] == 0
    for (s, c), (s2, _) in zip(shards, shards[1:]):
        assert s + c == s2 and (shard is None or c == shard)
    assert sum(c for _, c in shards) == games
    assert all(0 < c <= (shard or 5000) for _, c in shards)


def test_waves_with_stop_when():
    spec = ExperimentSpec.model_validate(
        _base(games_per_arm=300, stop_when={"half_width": 0.05, "max_games": 1000}))
    assert list(spec.waves()) == [300, 600, 900, 1000]
    # the runner's shards never straddle a wave boundary (each wave extends every cell)
    ends = list(spec.waves())
    waves = [_grid(spec, b, e) for b, e in zip([0] + ends, ends)]
    assert [sum(c for _, c in w) for w in waves] == [300, 300, 300, 100]
    assert all(b <= s and s + c <= e for w, b, e in zip(waves, [0] + ends, ends)
               for s, c in w)
    assert spec.total_games() == 1000


def test_from_file_json_and_toml(tmp_path):
    data = _base(name="t", games_per_arm=123)
    (tmp_path / "s.json").write_text(json.dumps(data))
    (tmp_path / "s.toml").write_text(f'name = "t"\ngame = "{GAME}"\n'
                                     f'players = {data["players"]}\ngames_per_arm = 123\n')
    assert ExperimentSpec.from_file(tmp_path / "s.json") == ExperimentSpec.from_file(
        tmp_path / "s.toml")


def test_from_file_errors(tmp_path):
    with pytest.raises(ValueError, match="cannot read"):
        ExperimentSpec.from_file(tmp_path / "missing.json")
    (tmp_path / "bad.toml").write_text("game = ")
    with pytest.raises(ValueError, match="not valid TOML"):
        ExperimentSpec.from_file(tmp_path / "bad.toml")


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")) + sorted(EXAMPLES.glob("*.toml")))
def test_examples_are_valid(path):
    spec = ExperimentSpec.from_file(path)
    assert spec.cells()
    assert spec.baseline_arm() in spec.arm_rules()
