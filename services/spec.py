"""The experiment spec: what to play, validated against the game catalogue.

An experiment plays every *cell* (arm x player count) for `games_per_arm` games (or in waves
until `stop_when` is met).  Every arm uses the same seed and the same RNG stream, so game `i`
of every arm is dealt the same way (common random numbers): comparisons pair arms by
`game_index`.  Nothing here names a game: the game's own `resolve_rules`, player range and
agent list do the checking.

    >>> spec = ExperimentSpec.from_file("examples/maori_seats.json")
    >>> spec.cells()[0]
    Cell(arm='basic', rules={'mode': 'basic'}, players=3)
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import reprlib
import sys
import unicodedata
from pathlib import Path
from typing import Annotated, Any, Iterator, Literal, NamedTuple

from pydantic import (BaseModel, ConfigDict, Field, ValidationError, ValidationInfo,
                      field_validator, model_validator)
from pydantic_core import InitErrorDetails, PydanticCustomError

import core_cy
import core_cy.catalogue
from core_cy.agents import parse_agent

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

MAX_SEED = 2**63 - 1
SPREAD_CHECK_PATTERN = r"^[0-9a-f]{8}$"  # stop_when.spread_check: what a plan hands out
RUNG_SEPARATOR = "@"  # a ladder rung's arm is '<arm>@<agent>' (agent strings never hold '@')


def ladder_arm(arm: str, agent: str) -> str:
    """The arm name of one rung of a ladder experiment (pipelines.ladder.split_arm)."""
    return f"{arm}{RUNG_SEPARATOR}{agent}"


def check_fraction(value: Any, name: str, below: float) -> Any:
    """A margin or half-width is a fraction of the games: refuse a number outside
    (0, below) saying so (a designer reads margins as "+-5 points" and writes 5)."""
    if _is_number(value) and not 0 < value < below:
        raise ValueError(f"{name} is a fraction: 0.05 is 5 points; it must be above 0 and "
                         f"below {below:g}, got {value!r}")
    return value

CROSS = "cross_field"  # the error type of a rule between fields (no JSON schema can say it)
HARD_MAX_CELLS = 100_000
# What a game's checks raise on a bad value: ValueError by contract; the others only when a
# data value has an unexpected shape, and they are the user's mistake as well (never a 500).
BAD_VALUE = (ValueError, TypeError, KeyError, IndexError, AttributeError)  # without a limit in the context: arms are never built past this


MAX_NAME = 200  # characters of an experiment's or an arm's name
MAX_AGENT = 400  # characters of an agent string
MAX_RUNGS = 8  # agents of a balance question asked per strength (each a search of its own)
MAX_DEPTH = 32  # nesting of lists and objects in a spec (data-valued rules are a few deep)
MAX_SHARD = 20_000  # games per shard: one task holds its shard (1.3-2.9 KB a game) in memory
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def text_problem(value: Any, max_length: int | None = MAX_NAME) -> str | None:
    """Why `value` cannot be stored, shown or used in a path as a name (None when it can):
    not a string, empty or longer than `max_length`, not valid Unicode (a lone surrogate
    cannot be encoded), or holding a control character, a line or paragraph separator or a
    bidirectional override.  `max_length` None checks only that it is valid Unicode."""
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"is not valid Unicode (character {exc.start}: a lone surrogate)"
    if max_length is None:
        return None
    if not 1 <= len(value) <= max_length:
        return f"must be 1-{max_length} characters, got {len(value):,}"
    for i, char in enumerate(value):
        if unicodedata.category(char) in ("Cc", "Zl", "Zp") or char in _BIDI:
            return f"holds a control character (U+{ord(char):04X} at {i})"
    return None


def json_problems(data: Any, max_depth: int = MAX_DEPTH) -> list[tuple[tuple, str]]:
    """(location, problem) of every string (keys included) in a JSON value that is not valid
    Unicode, and of nesting deeper than `max_depth`; an iterative walk (no recursion), linear
    in the size of the value."""
    problems = []
    stack = [((), data, 0)]
    while stack:
        loc, value, depth = stack.pop()
        if isinstance(value, str):
            problem = text_problem(value, None)
            if problem:
                problems.append((loc, f"text {problem}"))
        elif isinstance(value, (dict, list)):
            if depth >= max_depth:
                problems.append((loc, f"nested deeper than {max_depth} levels"))
                continue
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str) and text_problem(key, None):
                    problems.append((loc, f"a key {text_problem(key, None)}"))
                    continue
                stack.append(((*loc, key), item, depth + 1))
    return sorted(problems, key=lambda p: str(p[0]))


class Cell(NamedTuple):
    """One combination to play: an arm's rule options at one player count (and, in a strength
    ladder, the rung's agent for every seat: the arm is then named '<arm>@<agent>')."""

    arm: str
    rules: dict
    players: int
    agent: str | None = None


class StopWhen(BaseModel):
    """Play in waves of `games_per_arm` and stop after a wave (never before `min_games` per
    cell) once a rule holds, or at `max_games` per cell:
    - half_width, the precision rule: every seat's interval on win share at the level
      1 - alpha (95% by default; a cooperative game: the team win rate's) is narrower than
      +-half_width and rests on at least 10 wins
      and 10 losses, or on 30/half_width games (so that a seat that never wins ends the run
      there, not at max_games);
    - delta, the decision rule: the question is decided at +-delta, that is every arm either
      differs from the baseline or is equivalent to it within +-delta (one arm: every cell's
      seats are shown unbalanced or balanced within +-delta), judged by confidence sequences
      that hold at every look, so the error rate stays at most `alpha` however often the
      runner checks; with `spread` (the spread the plan hands out, from its pilot: the sd per
      unit of the rows that decide) by a double triangular test scaled by that spread
      instead, which decides in fewer games (docs/statistics.md); with it `spread_check`,
      the check the plan hands out beside it: a spread without its check is accepted with a
      warning that no plan handed it out, and at a look whose games contradict the stored
      spread the run uses another and its results say so.
    With both, the run stops at whichever holds first."""

    model_config = ConfigDict(extra="forbid")
    half_width: float | None = Field(default=None, gt=0, lt=0.5)
    delta: float | None = Field(default=None, gt=0, lt=1)
    alpha: float = Field(default=0.05, gt=0, lt=0.5)
    min_games: int = Field(default=0, ge=0)
    max_games: int = Field(ge=1)
    spread: float | None = Field(default=None, gt=0, le=1, description="with delta: the "
                                 "spread the plan hands out (its pilot's sd per unit of the "
                                 "rows that decide, the paired win-share differences or the "
                                 "seats' win shares); the run then decides by the triangle "
                                 "scaled by it, guarded by the run's own spread")
    spread_check: str | None = Field(default=None, pattern=SPREAD_CHECK_PATTERN,
                                     description="with spread: the check the plan hands out "
                                     "with it (8 hex digits), which ties the spread to this "
                                     "experiment's question (game, rules, players, agents, "
                                     "pairing); a spread without it, or whose check does not "
                                     "match, is one no plan handed out: the run is accepted "
                                     "with a warning")

    @model_validator(mode="after")
    def _one_rule(self) -> "StopWhen":
        if self.half_width is None and self.delta is None:
            raise PydanticCustomError(CROSS, "stop_when needs half_width (precision) or "
                                      "delta (decision)")
        if self.min_games > self.max_games:
            raise PydanticCustomError(CROSS, f"min_games ({self.min_games}) must be at most "
                                      f"max_games ({self.max_games})")
        return self

    @field_validator("half_width", "delta", "alpha", "min_games", "max_games", "spread",
                     mode="before")
    @classmethod
    def _json_number(cls, value, info: ValidationInfo):
        if value is not None and not _is_number(value):  # null: the rule is unused
            raise ValueError(f"{info.field_name} must be a number, got {value!r}")
        if info.field_name in ("half_width", "delta"):
            return check_fraction(value, info.field_name,
                                  0.5 if info.field_name == "half_width" else 1)
        if info.field_name == "spread" and value is not None and info.data.get("delta", 0) is None:
            raise PydanticCustomError(CROSS, "spread needs delta: it scales the decision rule "
                                      "(stop_when.delta)")
        return value

    @field_validator("spread_check", mode="before")
    @classmethod
    def _check_text(cls, value, info: ValidationInfo):
        if value is None:
            return value
        if not isinstance(value, str) or not re.fullmatch(SPREAD_CHECK_PATTERN, value):
            raise ValueError("spread_check must be the 8 hex digits a plan hands out with its "
                             f"spread (e.g. \"3f9a01c2\"), got {reprlib.repr(value)}")
        if "spread" in info.data and info.data["spread"] is None:
            raise PydanticCustomError(CROSS, "spread_check needs spread: it is the check of "
                                      "the spread a plan hands out (stop_when.spread)")
        return value


def stored_spec(raw: dict, spec: "ExperimentSpec") -> dict:
    """A submitted spec as it is stored: as sent, but with the agents, the ladder and the
    balance section's agents as validated (a preset's name becomes its agent string)."""
    out = {**raw, **{key: getattr(spec, key) for key in ("agents", "ladder") if key in raw}}
    if isinstance(raw.get("balance"), dict) and "agents" in raw["balance"]:
        out["balance"] = {**raw["balance"], "agents": spec.balance.agents}
    return out


def cost_statement(spec: "ExperimentSpec", budget: float | None) -> tuple[float, str]:
    """(the CPU-seconds `spec` is expected to cost, a sentence that says so and where the
    figure comes from, and when its CPU `budget` would stop it first, after how much), the
    one statement of the API's submission and `meeplelab run`."""
    seconds, basis = spec.estimated_cpu_seconds()
    text = f"estimated CPU cost {seconds:,.0f} CPU-seconds ({cpu_time_text(seconds)}; {basis})"
    if budget is not None and seconds > budget:
        text += (f"; its CPU budget of {budget:,g} CPU-seconds would stop it after about "
                 f"{100 * budget / seconds:.2g}% of its games")
    return seconds, text


def cpu_time_text(seconds: float) -> str:
    """CPU-seconds in the largest unit that keeps a number above 1: '3.2 CPU-hours'."""
    for unit, size in (("CPU-days", 86_400), ("CPU-hours", 3600), ("CPU-minutes", 60)):
        if seconds >= size:
            return f"{seconds / size:,.1f} {unit}"
    return f"{seconds:.1f} CPU-seconds"


def _rate_bounds(schema: dict) -> None:
    """The schema of `target`: its number branch is a rate in (0, 1), as `_rate` checks (the
    type stays a plain union, so that its errors name balance.target)."""
    for branch in schema.get("anyOf", []):
        if branch.get("type") == "number":
            branch.update(exclusiveMinimum=0, exclusiveMaximum=1)


class Balance(BaseModel):
    """What to change (services/balance.py; pipelines/fair_value.py holds the statistics).
    Two questions, one per section:
    - a fair-value search (`option`): play the option's values over `range` on common deals
      and find the value where `seat` is fair (target 'equal': it wins as often as the other
      seats on average) or wins at `target` (a rate, e.g. 0.3; a cooperative game: the team),
      to +-`precision` of the option's unit, then confirm the nearest integers on fresh deals
      (the next seed) with a verdict at +-`delta`.  A per-seat option (e.g. seat_bonus_gold)
      varies `seat`'s value, the others 0; with seat 'all', every seat's value at once, the
      first at 0 (services/all_seats.py);
    - the value of an action kind (`forbid`): the same deals played with `seat`'s agent as
      given and restricted (agent(forbid=kind)), a paired difference per seat.
    Both play the spec's first arm's rules and agents, in this process (one core)."""

    model_config = ConfigDict(extra="forbid")
    option: str | None = Field(default=None, description="the rule option to search: an "
                               "integer option or a per-seat one (kind seats)")
    forbid: str | None = Field(default=None, min_length=1, max_length=200,
                               description="instead: action kinds ('+'-joined) whose value "
                               "to measure for `seat`")
    seat: Annotated[int, Field(ge=-1, le=8)] | Literal["all"] = Field(
        default=-1, description="the seat compensated, judged or restricted, counted from 1 "
        "(1: the first player; -1: the last seat); 'all': a per-seat option balanced for "
        "every seat at once (services/all_seats.py: the first seat at 0, the book, the "
        "others' values found together)", json_schema_extra={"not": {"const": 0}})
    # 0: the old 0-based count
    range: list[int] | None = Field(default=None, min_length=2, max_length=2,
                                    description="[low, high] of the option's values to search")
    target: Literal["equal"] | float = Field(default="equal", description="'equal' (the seat "
                                             "wins as often as the others) or a win rate",
                                             json_schema_extra=_rate_bounds)
    precision: float = Field(default=0.5, gt=0, description="stop once the 95% interval on "
                             "the fair value is within +-precision (the option's unit)")
    wave_games: int = Field(default=400, ge=10, le=1_000_000, description="games per value "
                            "in the first wave (a range of at most 13 integers plays each of "
                            "them, 5 x this many games in all; later waves about double the "
                            "total)")
    max_games: int = Field(default=40_000, ge=10, le=100_000_000, description="games of the "
                           "search in all (each value and deal counts one game)")
    confirm_games: int = Field(default=4000, ge=0, le=10_000_000, description="games per "
                               "nearest integer on fresh deals (0: no confirmation); with "
                               "forbid: games per arm")
    delta: float = Field(default=0.02, gt=0, lt=1, description="the confirmation's margin: "
                         "fair within +-delta of win share")
    agents: str | list[str] | None = Field(
        default=None, description="a fair-value search per strength: an agent string or a "
        "preset of the game (fast, strong, strongest) for every seat, or a list of them from "
        f"weakest to strongest (at most {MAX_RUNGS}); each is its own search of the same "
        "question, and the answer says whether the fair value moves with strength (the "
        "spec's `agents` then stays unset); unset: the spec's agents")

    @field_validator("seat", "wave_games", "max_games", "confirm_games", "precision", "delta",
                     mode="before")
    @classmethod
    def _json_number(cls, value, info: ValidationInfo):
        if info.field_name == "seat" and value == "all" and isinstance(value, str):
            return value
        if not _is_number(value):
            raise ValueError(f"{info.field_name} must be a number"
                             + (" or 'all'" if info.field_name == "seat" else "")
                             + f", got {value!r}")
        if info.field_name == "delta":
            return check_fraction(value, "delta", 1)
        if info.field_name == "seat" and value == 0:
            raise ValueError("seats are counted from 1 (1: the first player, 2: the second, "
                             "...; -1: the last seat): seat 0 was the first seat when they "
                             "were counted from 0, now write 1")
        if info.field_name == "seat" and not (float(value).is_integer() and -1 <= value <= 8):
            raise ValueError(f"seat must be a whole number from 1 to 8, -1 (the last seat) "
                             f"or 'all', got {value!r}")
        return value

    @field_validator("agents", mode="before")
    @classmethod
    def _rungs(cls, value):
        """Agent strings are stored with every row: bounded text, at least one (the game's
        checks, with the presets, come with the spec's: _rung_errors)."""
        if value is None:
            return value
        if isinstance(value, list) and not value:
            raise ValueError("agents lists no agent: name one or more, weakest first (e.g. "
                             "['fast', 'strong'])")
        if isinstance(value, list) and len(value) > MAX_RUNGS:
            raise ValueError(f"agents lists {len(value):,} agents (at most {MAX_RUNGS}: each "
                             "is a search of its own)")
        for text in value if isinstance(value, list) else [value]:
            problem = text_problem(text, MAX_AGENT)
            if problem:
                raise ValueError(f"agents: agent string {problem}")
        return value

    @field_validator("target", mode="before")
    @classmethod
    def _rate(cls, value):
        """One error naming balance.target (not one per branch of its union)."""
        if value != "equal" and not (_is_number(value) and 0 < value < 1):
            raise ValueError(f"target must be 'equal' or a win rate above 0 and below 1 (a "
                             f"fraction: 0.3 is 30%), got {value!r}")
        return value

    def question_errors(self) -> list[InitErrorDetails]:
        """The rules between the section's fields (one question, a range to search), each
        at its field; ExperimentSpec checks them with the game's, so that a section's
        mistakes all come at once, its fields' among them."""
        if (self.option is None) == (self.forbid is None):
            return [_error(("balance",), "balance needs an option (a fair-value search) or "
                           "forbid (the value of an action kind), not both", None, CROSS)]
        if self.option is not None:
            if self.range is None:
                return [_error(("balance", "range"), "balance.range ([low, high]) is needed "
                               "with an option", None, CROSS)]
            if self.range[0] >= self.range[1]:
                return [_error(("balance", "range"), f"balance.range must be [low, high] with "
                               f"low < high, got {self.range}", self.range, CROSS)]
        return []

    @property
    def all_seats(self) -> bool:
        """Whether every seat's value is searched at once (seat 'all')."""
        return self.seat == "all"

    def seat_of(self, players: int) -> int:
        """The seat's index in the data (0-based; the spec counts from 1); not with 'all'."""
        if self.all_seats:
            raise ValueError("seat 'all' names no one seat")
        return players - 1 if self.seat < 0 else self.seat - 1


def _error(loc: tuple, message: str, value: Any, kind: str = "spec") -> InitErrorDetails:
    return InitErrorDetails(type=PydanticCustomError(kind, "{message}", {"message": message}),
                            loc=tuple(loc), input=value)


def _raise(errors: list[InitErrorDetails]) -> None:
    if errors:
        raise ValidationError.from_exception_data("ExperimentSpec", errors)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _value_text(value: Any) -> str:
    """A sweep value as it appears in an arm name (JSON spelling for booleans)."""
    return json.dumps(value) if isinstance(value, bool) or value is None else str(value)


def _allowed(option) -> str:
    schema = option.json_schema()
    if "enum" in schema:
        return f"allowed values: {schema['enum']}"
    bounds = [f"{k} {schema[k]}" for k in ("minimum", "maximum") if k in schema]
    return f"allowed: {schema['type']}" + (f" ({', '.join(bounds)})" if bounds else "")


class ExperimentSpec(BaseModel):
    """A balance experiment (the format of the CLI's spec files and the API's request body)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="experiment", description="a label for the experiment")
    game: str = Field(description="a game of the catalogue (core_cy.game_names())")
    players: int | list[int] = Field(description="a player count, or several")
    arms: dict[str, dict[str, Any]] | None = Field(
        default=None, description="arm name -> rule options (default: one arm 'default' "
        "with the game's default rules)")
    sweep: dict[str, list[Any]] | None = Field(
        default=None, description="rule option -> values; the grid expands into arms named "
        "'option=value,option2=value' (crossed with `arms` when both are given)")
    baseline: str | None = Field(default=None, description="the arm others are compared "
                                 "with (default: the first arm)")
    agents: str | list[str] = Field(default="random", description="one agent for every seat, "
                                    "or one per seat: `name` or `name(key=value, ...)`, e.g. "
                                    "'mcts(iterations=400, rollout=greedy)', or a preset of the "
                                    "game (fast, strong, strongest), stored as its agent string")
    ladder: list[str] | None = Field(
        default=None, description="a strength ladder: agent strings from weakest to strongest "
        "(e.g. ['random', 'greedy', 'mcts(iterations=100)', 'mcts(iterations=1000)'], or "
        "presets: ['fast', 'strong', 'strongest']); every "
        "cell is played once per rung with every seat that agent, in arms named "
        "'<arm>@<agent>' (then `agents` stays unset)")
    rotate_agents: bool = Field(default=False, description="turn the agent list one seat per "
                                "game so every agent sits in every seat equally often")
    pairing: Literal["deals", "rotations"] = Field(
        default="deals", description="'deals': game i of every arm is dealt the same way "
        "(common random numbers between arms); 'rotations': besides, every deal is played "
        "once in every seat rotation of the agent list (k games for k seats, agents rotate) "
        "and the statistics take the deal (the mean of its k games) as the unit, so the "
        "deal's luck cancels out of seat and agent effects (Fishtest's game pairs, for k "
        "seats); games_per_arm and stop_when.max_games must then be multiples of the player "
        "counts")
    speeds: list[float] | None = Field(default=None, description="per-seat speed (> 0) for "
                                       "real-time games")
    games_per_arm: int = Field(default=1000, ge=1, description="games per arm and player "
                               "count; with stop_when, the size of each wave")
    seed: int = Field(default=0, ge=0, le=MAX_SEED, description="the experiment's seed; every "
                      "arm plays the same deals game by game")
    shard_size: int | None = Field(
        default=None, ge=100, le=MAX_SHARD, description="games per Parquet file on a fixed "
        "grid (an override); unset: shards sized by time, so that every CPU plays from the "
        "first seconds whatever a game costs (docs/service.md)")
    stop_when: StopWhen | None = Field(default=None, description="stop early once every "
                                       "seat's win share is precise enough")
    cpu_seconds: float | None = Field(
        default=None, gt=0, le=1e9, allow_inf_nan=False, description="the most CPU-seconds "
        "its shard tasks may use (a balance search's too): once spent the run issues "
        "no more shards and ends failed saying so, its shards written kept and counted; the "
        "service's limit when unset, and never more (422)")
    balance: Balance | None = Field(default=None, description="what to change: a fair-value "
                                    "search over a rule option, or the value of an action "
                                    "kind (`meeplelab balance SPEC`; services/balance.py)")

    # ---- field checks that need no game ------------------------------------------------
    @field_validator("name", "baseline")
    @classmethod
    def _text(cls, value, info: ValidationInfo):
        problem = None if value is None else text_problem(value)
        if problem:
            raise ValueError(f"{info.field_name} {problem}")
        return value

    @field_validator("agents", "ladder", mode="before")
    @classmethod
    def _agent_texts(cls, value, info: ValidationInfo):
        """Agent strings are stored with every row: bounded text, checked before parsing."""
        for text in value if isinstance(value, list) else [value]:
            problem = text_problem(text, MAX_AGENT) if isinstance(text, str) else None
            if problem:
                raise ValueError(f"{info.field_name}: agent string {problem}")
        if isinstance(value, list) and len(value) > 64:
            raise ValueError(f"{info.field_name} lists {len(value):,} agents (at most 64)")
        return value

    @field_validator("agents", "ladder", "balance")
    @classmethod
    def _presets(cls, value, info: ValidationInfo):
        """A form preset's name (fast, strong, strongest) stands for that preset's agent
        string of the game (core_cy.catalogue.presets), which the spec holds from then on:
        the stored spec and every row name the agent played, whatever the presets become
        (balance.agents too)."""
        game = info.data.get("game")
        if value is None or game is None:
            return value
        resolve = lambda text: core_cy.catalogue.preset_agent(game, text) or text  # noqa: E731
        if isinstance(value, Balance):
            if value.agents is not None:
                value.agents = cls._presets(value.agents, info)
            return value
        return resolve(value) if isinstance(value, str) else [resolve(v) for v in value]

    @field_validator("game")
    @classmethod
    def _known_game(cls, value: str) -> str:
        if value not in core_cy.game_names():
            raise ValueError(f"unknown game {value!r}; choose one of {core_cy.game_names()}")
        return value

    @field_validator("players", "games_per_arm", "seed", "shard_size", "speeds", "rotate_agents",
                     mode="before")
    @classmethod
    def _json_types(cls, value, info: ValidationInfo):
        """JSON's types, not Python's conversions: no true for 1, no "5" for 5."""
        if info.field_name == "rotate_agents":
            if not isinstance(value, bool):
                raise ValueError(f"rotate_agents must be true or false, got {value!r}")
        elif not all(map(_is_number, value if isinstance(value, list) else [value])) \
                and not (info.field_name in ("speeds", "shard_size") and value is None):
            raise ValueError(f"{info.field_name} must be a number or a list of numbers, got "
                             f"{value!r}" if info.field_name in ("players", "speeds") else
                             f"{info.field_name} must be an integer, got {value!r}")
        return value

    @field_validator("players")
    @classmethod
    def _players_list(cls, value):
        if isinstance(value, list):
            if not value:
                raise ValueError("players must name at least one player count")
            if len(set(value)) != len(value):
                raise ValueError(f"players lists a count twice: {value}")
        return value

    @field_validator("speeds")
    @classmethod
    def _positive_speeds(cls, value):
        if value is not None and any(not s > 0 for s in value):
            raise ValueError(f"every speed must be > 0, got {value}")
        return value

    @field_validator("sweep")
    @classmethod
    def _sweep_values(cls, value):
        if value is not None:
            for option, values in value.items():
                if not values:
                    raise ValueError(f"sweep option {option!r} needs at least one value")
        return value

    # ---- checks against the game -------------------------------------------------------
    @model_validator(mode="wrap")
    @classmethod
    def _every_mistake(cls, data: Any, handler, info: ValidationInfo) -> "ExperimentSpec":
        """Reports every mistake of a spec at once: the field errors and, when the game and
        the players are readable, the checks against the game on the fields that are.
        The validation context may carry limits: {"max_cells": n, "max_games": n}."""
        limits = info.context or {}
        if isinstance(data, dict):  # text and nesting first: no check below meets bad text
            _raise([_error(loc, message, None, "text") for loc, message in json_problems(data)])
        try:
            spec = handler(data)
        except ValidationError as exc:
            errors = [_error(e["loc"], e["msg"], e.get("input"), e["type"])
                      for e in exc.errors()]
            bad = {e["loc"][0] for e in exc.errors() if e["loc"]}
            if isinstance(data, dict) and not bad & {"game", "players"}:
                # the spec without its bad fields (defaults in their place); a balance
                # section without its bad fields, so that its other mistakes come too
                kept = {k: v for k, v in data.items() if k not in bad}
                section = data.get("balance")
                inside = {e["loc"][1] for e in exc.errors() if e["loc"][:1] == ("balance",)
                          and len(e["loc"]) > 1}
                if "balance" in bad and isinstance(section, dict) and inside and not (
                        {("balance",)} & {tuple(e["loc"]) for e in exc.errors()}):
                    kept["balance"] = {k: v for k, v in section.items() if k not in inside}
                try:
                    partial = handler(kept)
                except ValidationError:
                    partial = None
                if partial is not None:
                    errors += [e for e in partial._game_errors(limits)
                               if e["loc"][0] not in bad or (
                                   e["loc"][0] == "balance" and "balance" in kept
                                   and (e["loc"][1:2] or ("",))[0] not in inside)]
            _raise(errors)
            raise
        _raise(spec._game_errors(limits))
        return spec

    def cell_count(self) -> int:
        """Arms x player counts, counted without building the arms."""
        arms = len(self.arms or {})
        if self.sweep:
            arms = max(arms, 1) * math.prod(len(v) for v in self.sweep.values())
        return max(arms, 1) * len(self.player_counts()) * len(self.ladder or [None])

    def _limit_errors(self, limits: dict) -> list:
        """The service's size limits (MEEPLELAB_MAX_CELLS, MEEPLELAB_MAX_GAMES)."""
        cells = self.cell_count()
        max_cells = limits.get("max_cells", HARD_MAX_CELLS)
        if cells > max_cells:
            where = ("sweep",) if self.sweep else ("arms",)
            return [_error(where, f"the experiment has {cells:,} cells (arms x player counts"
                           f"{' x ladder rungs' if self.ladder else ''});"
                           f" at most {max_cells:,} are allowed per experiment (limit "
                           "MEEPLELAB_MAX_CELLS)", cells, "limit")]
        total, max_games = cells * self.max_games_per_cell(), limits.get("max_games")
        if max_games is not None and total > max_games:
            where = ("stop_when", "max_games") if self.stop_when else ("games_per_arm",)
            return [_error(where, f"the experiment asks for {total:,} games ({cells:,} cells x "
                           f"{self.max_games_per_cell():,}); at most {max_games:,} games are "
                           "allowed per experiment (limit MEEPLELAB_MAX_GAMES)", total,
                           "limit")]
        return []

    def _game_errors(self, limits: dict) -> list[InitErrorDetails]:
        errors = self._limit_errors(limits)
        if errors:  # do not build a grid of arms larger than allowed
            return errors
        game = core_cy.load(self.game)
        counts = self.player_counts()
        for i, n in enumerate(counts):
            try:
                game.check_players(n)
            except ValueError as exc:
                loc = ("players", i) if isinstance(self.players, list) else ("players",)
                errors.append(_error(loc, str(exc), n))
        valid_counts = [n for n in counts if game.min_players <= n <= game.max_players]
        arms = self.arm_rules()
        if not arms:
            errors.append(_error(("arms",), "an experiment needs at least one arm", self.arms))
        for arm, rules in arms.items():
            errors += self._arm_errors(game, arm, rules, valid_counts)
        if self.baseline is not None and self.baseline not in arms:
            errors.append(_error(("baseline",), f"baseline {self.baseline!r} is not an arm; "
                                 f"arms: {list(arms)}", self.baseline, CROSS))
        errors += self._agent_errors(game, valid_counts)
        return errors + self._balance_errors(game, valid_counts)

    def _balance_errors(self, game, counts: list[int]) -> list:
        """The balance section against the game: a searchable option and its range, a seat
        of every player count, a target the game can have, action kinds it knows."""
        b = self.balance
        if b is None:
            return []
        errors = b.question_errors() + self._rung_errors(game)
        errors += self._all_seats_errors(game)
        for n in counts:
            if not b.all_seats and b.seat > n:
                errors.append(_error(("balance", "seat"), f"seat {b.seat} does not exist with "
                                     f"{n} players (seats 1..{n}; -1: the last)", b.seat,
                                     CROSS))
        if game.cooperative and b.target == "equal" and b.option is not None:
            errors.append(_error(("balance", "target"), f"{game.name} is cooperative: its "
                                 "seats win together, so the target must be a team win rate",
                                 b.target, CROSS))
        if b.forbid is not None:
            for i, name in enumerate(b.forbid.split("+")):
                if name not in [k.name for k in game.actions.kinds]:
                    errors.append(_error(("balance", "forbid"), f"no action kind {name!r} in "
                                         f"{game.name}; kinds: "
                                         f"{[k.name for k in game.actions.kinds]}", b.forbid,
                                         CROSS))
            return errors
        if b.option is None:  # neither question (said above)
            return errors
        known = {o.name: o for o in game.options}
        opt = known.get(b.option)
        if opt is None or opt.kind not in ("int", "seats"):
            searchable = sorted(o.name for o in game.options if o.kind in ("int", "seats"))
            return errors + [_error(("balance", "option"), f"{b.option!r} is not an integer or "
                                    f"per-seat rule option of {game.name}; searchable: "
                                    f"{searchable}", b.option, CROSS)]
        if b.range is None:
            return errors
        for i, v in enumerate(b.range):
            if (opt.minimum is not None and v < opt.minimum) or \
                    (opt.maximum is not None and v > opt.maximum):
                errors.append(_error(("balance", "range", i), f"{v} is outside rule option "
                                     f"{b.option!r}'s values {opt.minimum}..{opt.maximum}", v,
                                     CROSS))
        if errors:
            return errors
        for n in counts:
            for v in b.range:
                try:
                    game.resolve_rules(self.searched_rules(n, v), n)
                except BAD_VALUE as exc:
                    errors.append(_error(("balance", "range"), f"value {v} with {n} players: "
                                         f"{exc}", b.range, CROSS))
        return errors

    def _rung_errors(self, game) -> list:
        """balance.agents: agents of the game (a preset's name already resolved), and the
        spec's own agents unset (every seat plays the rung's agent)."""
        rungs = self.balance.agents
        if rungs is None:
            return []
        errors = []
        for i, name in enumerate([rungs] if isinstance(rungs, str) else rungs):
            try:
                parse_agent(game, name)
            except ValueError as exc:
                presets = sorted(core_cy.catalogue.presets(game.name)["presets"])
                errors.append(_error(("balance", "agents") + (() if isinstance(rungs, str)
                                                                else (i,)),
                                     f"{exc} (or a preset: {', '.join(presets)})", name, CROSS))
        if isinstance(rungs, list) and len(set(rungs)) != len(rungs):
            errors.append(_error(("balance", "agents"), f"balance.agents names an agent twice "
                                 f"(presets as their agents): {rungs}", rungs, CROSS))
        if self.balance.forbid is not None:
            errors.append(_error(("balance", "agents"), "balance.agents asks a fair-value "
                                 "search per strength (option); the value of an action kind "
                                 "plays the spec's agents: leave it unset with forbid", rungs,
                                 CROSS))
        if "agents" in self.model_fields_set or self.rotate_agents or self.ladder:
            errors.append(_error(("balance", "agents"), "balance.agents sets every seat's "
                                 "agent per rung: leave the spec's agents, rotate_agents and "
                                 "ladder unset", rungs, CROSS))
        return errors

    def _all_seats_errors(self, game) -> list:
        """seat 'all' asks for every seat's value of a per-seat option at once (equal
        seats): not with forbid, an integer option or a target rate."""
        b = self.balance
        if not b.all_seats:
            return []
        kinds = {o.name: o.kind for o in game.options}
        if b.forbid is not None or (b.option is not None and kinds.get(b.option) == "int"):
            what = "forbid" if b.forbid is not None else f"{b.option!r}, one value for all"
            return [_error(("balance", "seat"), f"seat 'all' balances a per-seat option (one "
                           f"value per seat) for every seat at once, not {what}: name one "
                           "seat (1..k, -1: the last)", b.seat, CROSS)]
        if b.target != "equal":
            return [_error(("balance", "target"), "seat 'all' makes every seat fair (target "
                           "'equal'); a win rate is asked of one seat", b.target, CROSS)]
        return []

    def _arm_loc(self, arm: str, option: str | None = None) -> tuple:
        where = ("arms", arm) if self.arms and arm in self.arms else ("sweep",)
        return where + ((option,) if option is not None else ())

    def _arm_errors(self, game, arm: str, rules: dict, counts: list[int]) -> list:
        problem = text_problem(arm) or ("holds '/' or '\\'" if "/" in arm or "\\" in arm
                                        else None)
        if problem:
            kind = CROSS if self.sweep else "spec"  # a sweep's arm names come from its values
            return [_error(self._arm_loc(arm), f"arm name {arm[:MAX_NAME]!r} {problem} (an "
                           f"arm name is 1-{MAX_NAME} characters of text without control "
                           "characters, '/' or '\\')", arm[:MAX_NAME], kind)]
        known = {o.name: o for o in game.options}
        errors = []
        for option, value in rules.items():
            if option not in known:
                errors.append(_error(self._arm_loc(arm, option), f"unknown rule option "
                                     f"{option!r} for {game.name}; known options: "
                                     f"{sorted(known)}", value))
                continue
            try:
                known[option].validate(game.name, value)
            except BAD_VALUE as exc:
                text = str(exc)
                if "one of" not in text:  # enum messages already list the allowed values
                    text += f"; {_allowed(known[option])}"
                kind = "data" if known[option].kind == "data" else "spec"
                errors.append(_error(self._arm_loc(arm, option), text, value, kind))
        if errors:
            return errors
        for n in counts:  # cross-option checks may depend on the player count
            try:
                game.resolve_rules(rules, n)
            except BAD_VALUE as exc:
                errors.append(_error(self._arm_loc(arm), f"arm {arm!r} with {n} players: {exc}",
                                     rules, CROSS))
        return errors

    def _agent_errors(self, game, counts: list[int]) -> list:
        names = [self.agents] if isinstance(self.agents, str) else list(self.agents)
        errors = []
        for i, name in enumerate(names):
            try:
                parse_agent(game, name)
            except ValueError as exc:
                loc = ("agents",) if isinstance(self.agents, str) else ("agents", i)
                errors.append(_error(loc, str(exc), name))
        for n in counts:
            if isinstance(self.agents, list) and len(self.agents) != n:
                errors.append(_error(("agents",), f"agents must name one agent per seat "
                                     f"({n} players), got {len(self.agents)}", self.agents,
                                     CROSS))
            if self.speeds is not None and len(self.speeds) != n:
                errors.append(_error(("speeds",), f"speeds must give one value per seat "
                                     f"({n} players), got {len(self.speeds)}", self.speeds,
                                     CROSS))
        if self.rotate_agents and isinstance(self.agents, str):
            errors.append(_error(("rotate_agents",), "rotate_agents needs a list of agents, "
                                 "one per seat", self.rotate_agents, CROSS))
        return errors + self._ladder_errors(game) + self._pairing_errors(counts)

    def _pairing_errors(self, counts: list[int]) -> list:
        """Rotations turn the agent list through the seats and play whole deals only."""
        if self.pairing != "rotations":
            return []
        if isinstance(self.agents, str) or self.ladder:
            return [_error(("pairing",), "pairing 'rotations' plays every deal with the agent "
                           "list turned through every seat: it needs a list of agents, one per "
                           "seat (and no ladder)", self.pairing, CROSS)]
        block = math.lcm(*counts) if counts else 1
        sizes = [(("games_per_arm",), self.games_per_arm)]
        if self.stop_when:
            sizes.append((("stop_when", "max_games"), self.stop_when.max_games))
        players = ", ".join(map(str, counts))
        return [_error(loc, f"{loc[-1]} must be a multiple of {block} with pairing 'rotations' "
                       f"(every deal is played once per seat rotation: {players} players), "
                       f"got {value}", value, CROSS)
                for loc, value in sizes if value % block]

    def _ladder_errors(self, game) -> list:
        if self.ladder is None:
            return []
        if len(self.ladder) < 2:
            return [_error(("ladder",), "a ladder needs at least two rungs (agents from "
                           "weakest to strongest)", self.ladder)]
        errors = []
        for i, name in enumerate(self.ladder):
            try:
                parse_agent(game, name)
            except ValueError as exc:
                errors.append(_error(("ladder", i), str(exc), name))
        if len(set(self.ladder)) != len(self.ladder):
            errors.append(_error(("ladder",), f"ladder names an agent twice: {self.ladder}",
                                 self.ladder))
        if "agents" in self.model_fields_set or self.rotate_agents:
            errors.append(_error(("ladder",), "a ladder sets every seat's agent per rung: "
                                 "leave agents and rotate_agents unset", self.ladder, CROSS))
        return errors

    # ---- what to play ------------------------------------------------------------------
    def player_counts(self) -> list[int]:
        return [self.players] if isinstance(self.players, int) else list(self.players)

    def searched_rules(self, players: int, value) -> dict:
        """The rules one value of the balance search plays: the first arm's rules with the
        searched option set (a per-seat option: `value` at the seat, 0 elsewhere; with seat
        'all', at every seat but the first; a list: every seat's value)."""
        b = self.balance
        rules = dict(next(iter(self.arm_rules().values())))
        opt = next(o for o in core_cy.load(self.game).options if o.name == b.option)
        if opt.kind == "seats" and isinstance(value, (list, tuple)):
            rules[b.option] = [int(v) for v in value]
        elif opt.kind == "seats" and b.all_seats:
            rules[b.option] = [0] + [int(value)] * (players - 1)
        elif opt.kind == "seats":
            seats = [0] * players
            seats[b.seat_of(players)] = int(value)
            rules[b.option] = seats
        else:
            rules[b.option] = int(value)
        return rules

    def arm_rules(self) -> dict[str, dict]:
        """Arm name -> rule options (the sweep's grid crossed with the named arms)."""
        base = dict(self.arms) if self.arms else {}
        if not self.sweep:
            return base or {"default": {}}
        keys = list(self.sweep)
        grid = []
        for values in itertools.product(*(self.sweep[k] for k in keys)):
            name = ",".join(f"{k}={_value_text(v)}" for k, v in zip(keys, values))
            grid.append((name, dict(zip(keys, values))))
        if not base:
            return dict(grid)
        return {f"{arm},{name}": {**rules, **point}
                for arm, rules in base.items() for name, point in grid}

    def baseline_arm(self) -> str:
        """The arm (as named in the results) others are compared with; in a ladder, the
        baseline arm at the strongest rung."""
        arm = self.baseline if self.baseline is not None else next(iter(self.arm_rules()))
        return ladder_arm(arm, self.ladder[-1]) if self.ladder else arm

    def result_arms(self) -> list[str]:
        """The arm names the results hold, in spec order."""
        return list(dict.fromkeys(cell.arm for cell in self.cells()))

    def rotates(self) -> bool:
        """Whether the agent list turns one seat per game (rotate_agents, or rotations)."""
        return self.rotate_agents or self.pairing == "rotations"

    def games_per_deal(self, players: int) -> int:
        """Consecutive games that share a deal: one per seat rotation, or 1."""
        return players if self.pairing == "rotations" else 1

    def agent_list(self, players: int, cell: Cell | None = None) -> list[str]:
        """The seat agents of a cell (a ladder rung's agent in every seat)."""
        if cell is not None and cell.agent is not None:
            return [cell.agent] * players
        return [self.agents] * players if isinstance(self.agents, str) else list(self.agents)

    def balance_rungs(self) -> list[str | None]:
        """The agents a balance question is answered for, one answer each (every seat that
        agent); [None]: once, with the spec's agents."""
        rungs = self.balance.agents if self.balance is not None else None
        return [None] if rungs is None else [rungs] if isinstance(rungs, str) else list(rungs)

    def play_arguments(self, cell: Cell, agents: list[str] | None = None) -> dict:
        """How `cell` is played, the one answer for the runner's shards, the plan's pilot and
        the balance search: the keyword arguments of core_cy.play.batch.play_columns besides
        the game, seed, start and count (players, rules, the seat agents, their rotation, the
        games per deal, the seats' speeds, the arm).  `agents` replaces the cell's seat agents
        (a balance search's restricted seat), rotated and paired the same way."""
        return {"players": cell.players, "rules": cell.rules,
                "agents": list(self.agent_list(cell.players, cell) if agents is None
                               else agents),
                "rotate": self.rotates(), "games_per_deal": self.games_per_deal(cell.players),
                "speeds": self.speeds, "arm": cell.arm}

    def cells(self) -> list[Cell]:
        """Every (arm, rules, players) to play, arms in spec order, then ladder rungs (weakest
        first), then player counts."""
        return [Cell(ladder_arm(arm, agent) if agent else arm, rules, n, agent)
                for arm, rules in self.arm_rules().items()
                for agent in (self.ladder or [None]) for n in self.player_counts()]

    def max_games_per_cell(self) -> int:
        return self.stop_when.max_games if self.stop_when else self.games_per_arm

    def look(self, interim: bool, delta: float | None = None):
        """How this experiment's figures are computed, the one rule for the runner's stopping
        decision, the API, the CLI and the dashboard: interim (always-valid, a run in
        progress) or fixed-n, tuned for the planned games per cell, at the margin `delta`
        (default: stop_when.delta, else pipelines.DELTA) and the level stop_when.alpha; with
        stop_when.spread, the triangle's for the rows that decide (the comparisons with the
        baseline when there are two arms or more, else the seats, as the runner asks),
        looks one wave (games_per_arm) apart."""
        import pipelines

        rule = self.stop_when
        if delta is None:
            delta = rule.delta if rule is not None and rule.delta else pipelines.DELTA
        alpha = rule.alpha if rule is not None else pipelines.Look.alpha
        return pipelines.Look(interim=interim, planned_games=self.max_games_per_cell(),
                              delta=delta, alpha=alpha,
                              spread=rule.spread if rule is not None else None,
                              wave_games=self.games_per_arm if rule is not None else None,
                              spread_rows="comparisons" if len(self.arm_rules()) > 1
                              else "seats")

    def spread_check_for(self, spread: float) -> str:
        """The check a plan hands out with `spread` (stop_when.spread_check): 8 hex digits of
        a hash of the spread as the plan writes it (4 significant digits) and of the question
        it was measured on: the game, every cell's rules (fingerprint: the engine's version
        and resolved rules), players and seat agents, which is the baseline, the pairing, the
        agents' rotation and speeds, and which rows decide.  Not a secret: it tells a spread
        a plan handed out for this question from a typed one or one carried over to another
        question, not a forged one."""
        game = core_cy.load(self.game)
        baseline = self.baseline_arm() if len(self.arm_rules()) > 1 else None
        cells = sorted(json.dumps([cell.arm == baseline,
                                   game.rules_fingerprint(cell.rules, cell.players),
                                   cell.players, self.agent_list(cell.players, cell)])
                       for cell in self.cells())
        blob = json.dumps([f"{spread:.4g}", self.game, cells, self.pairing, self.rotates(),
                           self.speeds, self.look(interim=True).spread_rows])
        return hashlib.sha256(blob.encode()).hexdigest()[:8]

    def spread_warning(self) -> str | None:
        """What a submission says of a stop_when.spread that no plan handed out for this
        question (no spread_check, or one that does not match: spread_check_for), None for
        one a plan handed out or no stored spread.  A warning, not a refusal: the run's guard
        (pipelines.stats.spread_guard) replaces a spread its games contradict and its results
        say so, so a spread from elsewhere costs games, not wrong answers."""
        rule = self.stop_when
        if rule is None or rule.spread is None:
            return None
        if rule.spread_check is not None and rule.spread_check == self.spread_check_for(
                rule.spread):
            return None
        why = ("comes without the stop_when.spread_check a plan hands out with it"
               if rule.spread_check is None else
               f"does not match its stop_when.spread_check {rule.spread_check!r}: the plan "
               "that handed it out was for another spread or another question (game, rules, "
               "players, agents or pairing)")
        return (f"stop_when.spread {rule.spread:.4g} was not handed out by a plan for this "
                f"experiment (it {why}); the run decides by the triangle scaled by it, "
                "replaced at any look whose games contradict it (the results then say so). "
                "Plan it (`meeplelab plan SPEC` or POST /api/plans) and start with the "
                "stop_when.spread and stop_when.spread_check it hands out, or leave "
                "stop_when.spread out.")

    def waves(self) -> Iterator[int]:
        """Game counts per cell after which the runner may stop (stop_when), ascending; the
        last is every game.  Without stop_when there is one wave.  Lazy: memory does not
        grow with the number of games."""
        total = self.max_games_per_cell()
        if not self.stop_when:
            yield total
            return
        for end in range(self.games_per_arm, total + self.games_per_arm, self.games_per_arm):
            yield min(end, total)

    def total_games(self) -> int:
        return len(self.cells()) * self.max_games_per_cell()

    def estimated_cpu_seconds(self) -> tuple[float, str]:
        """The CPU-seconds the experiment's games are expected to cost (every cell's games,
        with stop_when its most), and where that comes from: per cell, the catalogue's cost
        of a game with its seat agents (core_cy.catalogue.game_cost: measured for a preset
        at its player count, an estimate otherwise)."""
        seconds, bases, measured = 0.0, [], True
        for cell in self.cells():
            cost = core_cy.catalogue.game_cost(self.game, self.agent_list(cell.players, cell),
                                               cell.players)
            seconds += cost.seconds * self.max_games_per_cell()
            measured &= cost.measured
            bases += [b.partition(": ")[2] for b in cost.basis.split("; ")]
        bases = list(dict.fromkeys(bases))
        return seconds, ("measured: " if measured else "an estimate: ") + "; ".join(
            bases[:4]) + (f"; {len(bases) - 4} more" if len(bases) > 4 else "")

    # ---- loading -----------------------------------------------------------------------
    @classmethod
    def from_file(cls, path: str | Path, limits: dict | None = None) -> "ExperimentSpec":
        """Reads a .json or .toml spec (ValueError for an unreadable file, ValidationError
        with every mistake for a bad spec; `limits` as in the validation context)."""
        path = Path(path)
        try:
            text = path.read_text()
        except OSError as exc:
            raise ValueError(f"cannot read spec file {path}: {exc.strerror}") from None
        try:
            data = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
        except RecursionError:
            raise ValueError(f"spec file {path} is nested too deeply (a spec has at most "
                             f"{MAX_DEPTH} levels)") from None
        except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ValueError(f"spec file {path} is not valid "
                             f"{'TOML' if path.suffix.lower() == '.toml' else 'JSON'}: {exc}") \
                from None
        return cls.model_validate(data, context=limits)
