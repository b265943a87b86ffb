"""The shared pieces every game's Python face is built on: the state codec
(core_cy/engine/codec.py), named actions (core_cy/engine/actions.py), the GameHeader at the start of every
state, and the results schema (engines hand back plain columns; pipelines.folder gives them
their types)."""
import struct

import numpy as np
import pyarrow as pa
import pytest

import core_cy
from core_cy.play import batch
from core_cy.engine import codec
from core_cy.engine.actions import ActionSpace, Kind
from core_cy.play.schema import OPTIONAL_COLUMNS, RESULT_COLUMNS, result_batch
from pipelines.folder import storage_table

GAMES_WITH_ACTIONS = [n for n in core_cy.game_names() if core_cy.load(n).actions is not None]


# ---- codec ------------------------------------------------------------------------------
def test_readers_name_the_exact_path_of_a_bad_value():
    top = codec.Obj({"players": [{"hand": [1, 2, 3, "x"]}]}, "state")
    seat = top.objs("players")[0]
    hand = seat.list("hand")
    with pytest.raises(ValueError) as e:
        codec.integer(hand[3], f"{seat.at('hand')}[3]", 0, 96)
    assert str(e.value) == "state.players[0].hand[3]: expected an integer in 0..96, got 'x'"
    with pytest.raises(ValueError, match=r"^state.players\[0\]: missing field 'board'$"):
        seat.get("board")
    with pytest.raises(ValueError, match=r"^state: expected an object, got \[\]$"):
        codec.Obj([], "state")


@pytest.mark.parametrize("read,value,message", [
    (lambda o: o.int("v", 0, 9), True, "expected an integer in 0..9, got True"),
    (lambda o: o.int("v", 0, 9), 10, "expected an integer in 0..9, got 10"),
    (lambda o: o.num("v", 0, 1), "half", "expected a number in 0..1, got 'half'"),
    (lambda o: o.bool("v"), 1, "expected true or false, got 1"),
    (lambda o: o.choice("v", ("a", "b")), "c", "expected one of ['a', 'b'], got 'c'"),
    (lambda o: o.list("v", length=2), [1], "expected a list of 2 items, got 1"),
    (lambda o: o.list("v", max_len=1), [1, 2], "expected at most 1 items, got 2"),
    (lambda o: o.grid("v", 2, 2), [[1, 2], [3]], "expected a list of 2 items, got 1"),
])
def test_typed_readers_reject_wrong_types_and_ranges(read, value, message):
    with pytest.raises(ValueError) as e:
        read(codec.Obj({"v": value}))
    path = "state.v[1]" if isinstance(value, list) and len(value) == 2 and value[1] == [3] else "state.v"
    assert str(e.value) == f"{path}: {message}"


def test_readers_return_values_and_defaults():
    top = codec.Obj({"a": 3, "b": 0.5, "c": True, "d": "y", "e": None})
    assert top.int("a", 0, 3) == 3 and top.int("z", 0, 3, default=1) == 1
    assert top.num("a", 0, 5) == 3.0 and isinstance(top.num("a", 0, 5), float)
    assert top.bool("c") is True and top.choice("d", ("x", "y")) == 1
    assert top.obj("e", default=None) is None


def test_unique_ids_find_doubles_and_missing_ids():
    ids = codec.UniqueIds(4, "tile")
    assert ids.take(2, "state.pile[0]") == 2 and ids.take(None, "x", nullable=True) is None
    with pytest.raises(ValueError, match=r"state.box\[1\]: tile 2 is also at state.pile\[0\]"):
        ids.take(2, "state.box[1]")
    with pytest.raises(ValueError, match=r"expected a tile id in 0..3, got 4"):
        ids.take(4, "state.box[2]")
    with pytest.raises(ValueError, match=r"tiles \[0, 1, 3\] are nowhere"):
        ids.check_all("the pile")


def test_items_name_each_entry_of_a_list():
    assert codec.items([5, 6], "rule option 'x'", 1, 3) == [("rule option 'x'[0]", 5),
                                                            ("rule option 'x'[1]", 6)]
    with pytest.raises(ValueError, match=r"^rule option 'x': expected at least 1 items, got 0$"):
        codec.items([], "rule option 'x'", 1, 3)
    with pytest.raises(ValueError, match=r"^rule option 'x': expected at most 3 items, got 4$"):
        codec.items([1, 2, 3, 4], "rule option 'x'", 1, 3)
    with pytest.raises(ValueError, match=r"^rule option 'x': expected a list, got 'a'$"):
        codec.items("a", "rule option 'x'")


def test_load_data_drops_comment_keys():
    boards = codec.load_data("core_cy.games.maori", "data/boards.json")
    assert "standard" in boards and not any(k.startswith("_") for k in boards)


# ---- named actions ----------------------------------------------------------------------
def test_action_space_is_mixed_radix_in_declared_order():
    space = ActionSpace(10, Kind("go", 0, d=(1, 3)), Kind("put", 3, cell=3, rot=2), Kind("end", 9))
    assert len(space) == 10
    assert space.encode("put", cell=2, rot=1) == 3 + 2 * 2 + 1
    assert space.decode(8) == ("put", {"cell": 2, "rot": 1})
    assert space.decode(0) == ("go", {"d": 1}) and space.kind_of(9) == "end"
    assert space.select([0, 4, 9, 5], "put") == [4, 5]
    with pytest.raises(ValueError, match="rot must be an integer in 0..1"):
        space.encode("put", cell=0, rot=2)
    with pytest.raises(ValueError, match="takes parameters"):
        space.encode("go")
    with pytest.raises(ValueError, match="no action kind"):
        space.encode("jump")
    with pytest.raises(ValueError, match="action must be an integer in 0..9"):
        space.decode(10)


def test_action_space_must_tile_the_engine_ids():
    with pytest.raises(ValueError, match="starts at 4, expected 3"):
        ActionSpace(10, Kind("go", 0, d=3), Kind("end", 4))
    with pytest.raises(ValueError, match="the engine has 11"):
        ActionSpace(11, Kind("go", 0, d=3), Kind("end", 3))


@pytest.mark.parametrize("name", GAMES_WITH_ACTIONS)
def test_every_action_id_decodes_and_encodes_back(name):
    space = core_cy.load(name).actions
    for a in range(len(space)):
        kind, params = space.decode(a)
        assert space.encode(kind, **params) == a


@pytest.mark.parametrize("name", GAMES_WITH_ACTIONS)
def test_describe_names_the_kind_of_every_legal_action(name):
    """describe() reads actions through the same ActionSpace: each legal action of a few
    positions decodes and is described."""
    game = core_cy.load(name)
    state = game.new(game.min_players, seed=3)
    for _ in range(20):
        if state.is_terminal():
            break
        for a in state.legal_actions():
            game.actions.decode(a)
            assert state.describe(a)
        state.apply(state.legal_actions()[-1])


# ---- the header every state opens with; the results schema -------------------------------
GAMES = core_cy.game_names()


def _players(game):
    return min(max(3, game.min_players), game.max_players)


@pytest.mark.parametrize("name", GAMES)
def test_every_state_opens_with_the_game_header(name):
    """rng (key, counter), players, current, terminal, moves, end reason at offset 0, as the
    contract's readers assume."""
    game = core_cy.load(name)
    state = game.new(_players(game), seed=3)
    for _ in range(5):
        state.apply(state.legal_actions()[0])
    key, counter, players, current, terminal, moves, reason = struct.unpack(
        "=QQiiiii", state.to_bytes()[:36])
    rng = state.to_dict()["rng"]
    assert (key, counter) == (rng["key"], rng["counter"])
    assert (players, current, terminal, moves, reason) == (
        state.num_players, state.current_player, 0, state.num_moves, 0)


@pytest.mark.parametrize("name", GAMES)
def test_engines_hand_back_plain_columns(name):
    game = core_cy.load(name)
    players = _players(game)
    columns = batch.play_columns(game, players, None, "random", seed=2, start=4, count=6,
                                 games_per_deal=2)
    assert list(columns)[:4] == ["experiment", "arm", "game_index", "deal"]
    for column, values in columns.items():
        assert isinstance(values, np.ndarray), column
        assert values.shape in ((6,), (6, players)), column
        assert (values.ndim == 2) == column.startswith("seat_"), column
    assert columns["game_index"].tolist() == list(range(4, 10))
    assert columns["deal"].tolist() == [2, 2, 3, 3, 4, 4]


@pytest.mark.parametrize("name", GAMES)
def test_the_results_schema_is_services_one(name):
    """play's record batch and the stored table carry RESULT_COLUMNS' types exactly, the
    game's own columns as plain numbers, strings and lists, in the engine's order."""
    game = core_cy.load(name)
    agent = f"random(forbid={game.actions.kinds[0].name})"   # every optional column: seat_forced
    columns = batch.play_columns(game, _players(game), None, agent, seed=2, count=5,
                                 games_per_deal=2)
    rows = batch.play(game, _players(game), None, agent, seed=2, count=5, games_per_deal=2)
    assert rows.schema.names == list(columns)
    assert rows.to_pylist() == result_batch(columns).to_pylist()
    table = storage_table(rows)
    for field in list(RESULT_COLUMNS) + list(OPTIONAL_COLUMNS):
        assert table.schema.field(field.name).type == field.type, field.name
    for field in table.schema:
        assert not pa.types.is_dictionary(field.type) and not pa.types.is_fixed_size_list(
            field.type), field.name
    with pytest.raises(ValueError, match="seat_score"):
        result_batch({k: v for k, v in columns.items() if k != "seat_score"})
