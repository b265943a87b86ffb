"""The shared state codec: typed readers for state dicts, and the component-data loader.

Every game's `from_dict` reads its dict through these readers, so that a bad value is named
by its exact path and the same words in every game:

    state.seats[2].shells: expected an integer in 0..30, got 'x'
    state.phase: expected one of ['move', 'discover'], got 'bidding'
    state.seats[0]: missing field 'board'

Use:

    top = Obj(data, "state")                   # a JSON object and where it sits
    top.int("bank", 0, 30)                     # required integer in 0..30
    top.int("moves", 0, INT32_MAX, default=0)  # optional, with its default
    top.num("clock", 0.0, 1e9)                 # int or float -> float
    top.bool("terminal", default=False)
    top.choice("phase", PHASES)                # a name from PHASES -> its index
    top.list("pile", max_len=127)              # a list (length checked)
    top.grid("board", rows, cols)              # rows x cols list of lists
    for seat in top.objs("seats", length=players): seat.int("shells", 0, 30)
    ids = UniqueIds(n_tiles, "tile")           # ids that stand in exactly one place
    ids.take(v, "state.pile[3]"); ids.check_all("the pile, a hand or a board")
    check_live(state)                          # last: a running state has a legal action

`check_exact(data, state.to_dict())` (Game.from_dict's last step) refuses a field the game's
reader ignored or normalised: a state dict is accepted exactly when it reads back unchanged.

The free functions (`integer`, `number`, `boolean`, `choice`, `array`) read one value at a
given path, for list elements.  `load_data(package, name)` reads a file of a game's package
(core_cy/games/<game>/: JSON or TOML, top-level keys starting with "_" are comments and
dropped).  The state-dict opening (dict check, game
name, players, rules, random stream) is written once in `Game.from_dict` (game.py).
"""
from __future__ import annotations

import json
import math
import sys
from importlib import resources
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

REQUIRED = object()          # default of a reader: the field must be present
INT32_MAX = 2**31 - 1


def fail(path: str, message: str):
    """Raises the codec's ValueError: `<path>: <message>`."""
    raise ValueError(f"{path}: {message}")


def _expected(path: str, what: str, value: Any):
    fail(path, f"expected {what}, got {value!r}")


def integer(value: Any, path: str, lo: int, hi: int) -> int:
    """An int (not a bool) in lo..hi."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        _expected(path, f"an integer in {lo}..{hi}", value)
    return value


def number(value: Any, path: str, lo: float, hi: float) -> float:
    """An int or float (not a bool) in lo..hi, as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
        _expected(path, f"a number in {lo}..{hi}", value)
    return float(value)


def boolean(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        _expected(path, "true or false", value)
    return value


def choice(value: Any, path: str, names) -> int:
    """The index of value in names (a tuple of names)."""
    names = tuple(names)
    if not isinstance(value, str) or value not in names:
        _expected(path, f"one of {list(names)}", value)
    return names.index(value)


def array(value: Any, path: str, length: int | None = None, max_len: int | None = None) -> list:
    """A list, of exactly `length` items or at most `max_len`."""
    if not isinstance(value, list):
        _expected(path, "a list", value)
    if length is not None and len(value) != length:
        fail(path, f"expected a list of {length} items, got {len(value)}")
    if max_len is not None and len(value) > max_len:
        fail(path, f"expected at most {max_len} items, got {len(value)}")
    return value


def items(value: Any, path: str, min_len: int = 0, max_len: int | None = None) -> list:
    """(path[i], item) for every item of a list of min_len..max_len items (a rule option's
    entries, a state's cards), so that each check names the item's path."""
    array(value, path, max_len=max_len)
    if len(value) < min_len:
        fail(path, f"expected at least {min_len} items, got {len(value)}")
    return [(f"{path}[{i}]", v) for i, v in enumerate(value)]


class Obj:
    """One JSON object of a state dict and its path; typed reads name `path.key`."""

    def __init__(self, data: Any, path: str = "state"):
        if not isinstance(data, dict):
            _expected(path, "an object", data)
        self.data = data
        self.path = path

    def at(self, key: str) -> str:
        """The path of a field of this object."""
        return f"{self.path}.{key}"

    def __contains__(self, key: str) -> bool:
        return key in self.data

    def get(self, key: str, default: Any = REQUIRED) -> Any:
        """The raw value (a missing required field names the object and the key)."""
        if key in self.data:
            return self.data[key]
        if default is REQUIRED:
            fail(self.path, f"missing field '{key}'")
        return default

    def int(self, key: str, lo: int, hi: int, default: Any = REQUIRED) -> int:
        return integer(self.get(key, default), self.at(key), lo, hi)

    def num(self, key: str, lo: float, hi: float, default: Any = REQUIRED) -> float:
        return number(self.get(key, default), self.at(key), lo, hi)

    def bool(self, key: str, default: Any = REQUIRED) -> bool:
        return boolean(self.get(key, default), self.at(key))

    def choice(self, key: str, names, default: Any = REQUIRED) -> int:
        return choice(self.get(key, default), self.at(key), names)

    def list(self, key: str, length: int | None = None, max_len: int | None = None,
             default: Any = REQUIRED) -> list:
        return array(self.get(key, default), self.at(key), length, max_len)

    def obj(self, key: str, default: Any = REQUIRED, nullable: bool = False) -> "Obj | None":
        """A nested object (None when the value is null and null is allowed or the default)."""
        value = self.get(key, default)
        if value is None and (nullable or default is None):
            return None
        return Obj(value, self.at(key))

    def objs(self, key: str, length: int | None = None, max_len: int | None = None,
             default: Any = REQUIRED) -> list["Obj"]:
        """A list of objects, each an Obj at `path.key[i]`."""
        items = self.list(key, length, max_len, default)
        return [Obj(v, f"{self.at(key)}[{i}]") for i, v in enumerate(items)]

    def grid(self, key: str, rows: int, cols: int) -> list:
        """A rows x cols list of lists (cells unchecked)."""
        value = self.list(key, rows)
        for r, row in enumerate(value):
            array(row, f"{self.at(key)}[{r}]", cols)
        return value


class UniqueIds:
    """Ids (tiles, cards) of which each must stand in exactly one place of a state."""

    def __init__(self, count: int, what: str = "tile"):
        self.count = count
        self.what = what
        self.seen: dict[int, str] = {}

    def take(self, value: Any, path: str, nullable: bool = False) -> int | None:
        """The id at `path` (None for null when nullable); a second place is an error."""
        if value is None and nullable:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < self.count:
            _expected(path, f"a {self.what} id in 0..{self.count - 1}"
                      + (" or null" if nullable else ""), value)
        if value in self.seen:
            fail(path, f"{self.what} {value} is also at {self.seen[value]}")
        self.seen[value] = path
        return value

    def check_all(self, places: str, path: str = "state") -> None:
        """Every id was taken somewhere (`places` says where an id may be)."""
        missing = sorted(set(range(self.count)) - set(self.seen))
        if missing:
            fail(path, f"{self.what}s {missing[:10]} are nowhere (every {self.what} must be "
                       f"in {places})")


def check_exact(given: Any, read_back: Any, path: str = "state") -> None:
    """`given` (a state dict from outside) is exactly `read_back` (what the state built from
    it writes: its to_dict()), so that from_dict never ignores nor normalises a field; the
    first difference is named by its path.  Numbers compare by value (1 is 1.0), a flag only
    with a flag."""
    if isinstance(read_back, dict) and isinstance(given, dict):
        unknown = [k for k in given if k not in read_back]
        if unknown:
            fail(f"{path}.{unknown[0]}", "unknown field (a state holds only the fields "
                                         "to_dict writes)")
        for key, value in read_back.items():
            if key not in given:
                fail(path, f"missing field '{key}'")
            check_exact(given[key], value, f"{path}.{key}")
    elif isinstance(read_back, list) and isinstance(given, list):
        flat = not any(isinstance(v, (dict, list)) for v in read_back + given)
        if len(given) != len(read_back) or (flat and not all(
                _same_leaf(a, b) for a, b in zip(given, read_back))):
            # A list of names or numbers is named whole: a set in another order, a card
            # missing or added, reads best side by side.
            fail(path, f"{_short(given)} disagrees with the rest of the state, which gives "
                       f"{_short(read_back)}")
        for i, (a, b) in enumerate(zip(given, read_back)):
            check_exact(a, b, f"{path}[{i}]")
    elif not _same_leaf(given, read_back):
        fail(path, f"{_short(given)} disagrees with the rest of the state, which gives "
                   f"{_short(read_back)}")


def _same_leaf(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def _short(value: Any, most: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= most else text[:most] + "..."


def check_live(state, path: str = "state") -> None:
    """A running state must offer a legal action (a fill_state's last check): a dead one
    would stall every game loop, and no sequence of rules leads to it."""
    if not state.is_terminal() and not state.legal_actions():
        fail(path, "the game is not over, yet no action is legal: no play reaches this state")


def load_data(package: str, name: str) -> Any:
    """The file `name` of `package` (a game's component data, "data/tiles.json", or its
    option table: JSON, or TOML by its suffix); top-level "_..." keys are comments."""
    text = resources.files(package).joinpath(name).read_text()
    data = tomllib.loads(text) if name.endswith(".toml") else json.loads(text)
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if not k.startswith("_")}
    return data


def leaf_weight_values(data: Any, features: tuple, extra: tuple, where: str) -> list:
    """The cut-off judgement's weights of `data` ({"weights": {one per name of `features`}}
    and one top-level number per name of `extra`) as floats in that order; ValueError names a
    missing or unknown feature or a weight that is not a finite number."""
    weights = data.get("weights") if isinstance(data, dict) else None
    if not isinstance(weights, dict) or set(weights) != set(features):
        got = sorted(weights) if isinstance(weights, dict) else weights
        raise ValueError(f"{where}: weights must name exactly {list(features)}, got {got}")
    values = [weights[name] for name in features] + [data.get(name) for name in extra]
    for name, v in zip(features + extra, values):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"{where}: weight {name!r} must be a finite number, got {v!r}")
    return [float(v) for v in values]
