"""The uniform Python face of a game: rules options, validation, new/from_dict, info.

Each game module defines a subclass of `Game` that supplies its engine handle, its rule
options, its actions and its state-dict codec; everything else (validation, schemas, seeding,
agents, fingerprints, the from_dict opening) is shared here so that every game looks the same
to tests, the CLI and the API.

What a game module writes (see core_cy/games/maori/engine.pyx for a complete one):
- module constants the C part uses too, which the Game subclass takes over (MODULE_FACTS):
  ENGINE_VERSION, END_REASONS, GAME_OUTCOMES, SEAT_OUTCOMES (name lists), ACTIONS (an
  ActionSpace from core_cy/engine/actions.py built from the engine's constants);
- class attributes: name, title, min_players, max_players, cooperative, options (Option
  records, read from core_cy/games/<game>/options.toml by options_from_data), policies ({name: description}, in Engine.policy order),
  policy_params (their parameters, core_cy/games/<game>/agent_params.toml read by
  core_cy.agents.policy_params_from_data; a game class derives from core_cy.agents.AgentGame,
  which adds the agents to this face, so that the engine layer names no agent);
- hooks: pack_rules(rules, players) -> bytes, fill_state(state, data, rules) (the rest of
  from_dict, reading `data`, a codec.Obj, with the typed readers of core_cy/engine/codec.py),
  to_dict(state) (with "rng": contract.rng_to_dict(state)), describe, score_breakdown;
- a state struct that opens with the contract's GameHeader (rng, players, current, terminal,
  moves, end reason, win shares), and at the end of the module one call that fills the
  engine table (contract.pxd):
      TheGame.handle = engine_handle(&ENGINE, TheGame, &_LAYOUT, sizeof(State),
          &_LAYOUT.rules, sizeof(Rules), setup, legal, apply, scores, outcomes, ...)
  which derives the counts (actions, outcomes, policies) from the class attributes.
"""
from __future__ import annotations

import hashlib
import json
import math
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from importlib import metadata

from core_cy.engine import codec, contract

try:  # the one written version is pyproject.toml's; a source tree that is not installed has none
    PACKAGE_VERSION = metadata.version("meeplelab")
except metadata.PackageNotFoundError:  # pragma: no cover - only outside an installation
    PACKAGE_VERSION = "0+unknown"

# End reasons that mean a simulator safety cut the game short (not an ending of the rules):
# such games are truncated, and the pipelines leave them out of results by default.
SAFETY_END_REASONS = ("turn_limit", "round_limit", "safety_limit")


@dataclass(frozen=True)
class Option:
    """One rule option: a variant switch, a numeric parameter or a replaceable data value."""

    name: str
    kind: str  # "enum" | "int" | "bool" | "data" | "seats" (one integer per seat)
    default: Any
    description: str
    choices: tuple = ()
    minimum: int | None = None   # int; seats: of every seat's value
    maximum: int | None = None
    assumption: bool = False  # the spec marks this value as an ASSUMPTION
    label: str = ""  # what a designer reads in the form ("Game mode")
    help: str = ""  # one plain line on what it changes; `description` keeps the spec reference
    # An analysis option, not a rule of the book (e.g. seat compensation): its default plays
    # the rules as written, and at the default it leaves the rules fingerprint as it was.
    analysis: bool = False

    def json_schema(self) -> dict:
        schema: dict[str, Any] = {"description": self.description, "default": self.default}
        if self.label:
            schema["title"] = self.label
        if self.help:
            schema["x-help"] = self.help
        if self.kind == "enum":
            schema.update(type="string", enum=list(self.choices))
        elif self.kind == "int":
            schema["type"] = "integer"
            if self.minimum is not None:
                schema["minimum"] = self.minimum
            if self.maximum is not None:
                schema["maximum"] = self.maximum
        elif self.kind == "bool":
            schema["type"] = "boolean"
        elif self.kind == "seats":
            items: dict[str, Any] = {"type": "integer"}
            if self.minimum is not None:
                items["minimum"] = self.minimum
            if self.maximum is not None:
                items["maximum"] = self.maximum
            schema.update(type="array", items=items, maxItems=contract.SEATS_LIMIT)
        else:
            schema["type"] = "array" if isinstance(self.default, list) else "object"
        if self.assumption:
            schema["x-assumption"] = True
        if self.analysis:
            schema["x-analysis"] = True
        return schema

    def validate(self, game: str, value: Any) -> Any:
        where = f"rule option '{self.name}' of {game}"
        if self.kind == "enum":
            if value not in self.choices:
                raise ValueError(f"{where} must be one of {list(self.choices)}, got {value!r}")
        elif self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                if isinstance(value, float) and value.is_integer() and math.isfinite(value):
                    value = int(value)
                else:
                    raise ValueError(f"{where} must be an integer, got {value!r}")
            if self.minimum is not None and value < self.minimum:
                raise ValueError(f"{where} must be >= {self.minimum}, got {value}")
            if self.maximum is not None and value > self.maximum:
                raise ValueError(f"{where} must be <= {self.maximum}, got {value}")
        elif self.kind == "bool":
            if not isinstance(value, bool):
                raise ValueError(f"{where} must be true or false, got {value!r}")
        elif self.kind == "seats":
            if not isinstance(value, (list, tuple)) or len(value) > contract.SEATS_LIMIT:
                raise ValueError(f"{where} must be a list of integers, one per seat (at most "
                                 f"{contract.SEATS_LIMIT}; [] for none), got {value!r}")
            value = [Option(f"{self.name}[{i}]", "int", 0, "", minimum=self.minimum,
                            maximum=self.maximum).validate(game, v)
                     for i, v in enumerate(value)]
        return value

    def check_seats(self, game: str, value: Any, players: int) -> None:
        """A per-seat option lists one value per seat, or none at all ([])."""
        if self.kind == "seats" and value and len(value) != players:
            raise ValueError(f"rule option '{self.name}' of {game} must list one value per "
                             f"seat ({players} players) or be [], got {value!r}")

    def neutral(self, value: Any) -> bool:
        """Whether the value plays as the default does (a per-seat option: all zeros)."""
        return not any(value) if self.kind == "seats" else value == self.default


OPTION_FIELDS = ("name", "kind", "default", "description", "choices", "minimum", "maximum",
                 "assumption", "label", "help", "analysis")


def options_from_data(package: str, name: str, **refs: Any) -> tuple[Option, ...]:
    """A game's option table, the file `name` of its package (TOML, one [[option]] a rule option, in
    order), so that the declarations are data beside the game's other data.  A value written
    {ref = "NAME"} is refs["NAME"]: a constant of the module (component data read from its
    own file, a bound its arrays fix); every ref given must be used.  Choices become a tuple."""
    unused = set(refs)

    def value(v: Any, where: str) -> Any:
        if isinstance(v, dict) and set(v) == {"ref"}:
            if v["ref"] not in refs:
                raise ValueError(f"{name}: {where} refers to {v['ref']!r}, which the module "
                                 f"does not hand over")
            unused.discard(v["ref"])
            return refs[v["ref"]]
        return v

    options = []
    for i, row in enumerate(codec.load_data(package, name)["option"]):
        where = f"option[{i}]"
        if not set(row) <= set(OPTION_FIELDS) or not {"name", "kind", "default",
                                                       "description"} <= set(row):
            raise ValueError(f"{name}: {where} needs name, kind, default and description, "
                             f"and has only fields from {list(OPTION_FIELDS)}: {sorted(row)}")
        fields = {k: value(v, f"{where}.{k}") for k, v in row.items()}
        if "choices" in fields:
            fields["choices"] = tuple(fields["choices"])
        options.append(Option(**fields))
    if unused:
        raise ValueError(f"{name}: refs {sorted(unused)} are not used")
    return tuple(options)


# Class attribute <- the module constant a game module names it by (see the module doc).
MODULE_FACTS = {"engine_version": "ENGINE_VERSION", "end_reasons": "END_REASONS",
                "game_outcome_names": "GAME_OUTCOMES", "seat_outcome_names": "SEAT_OUTCOMES",
                "actions": "ACTIONS"}


class Game(ABC):
    """Base of every game's Python face.  Subclasses fill the class attributes and hooks."""

    def __init_subclass__(cls, **kwargs):
        """Takes the MODULE_FACTS from the subclass's module, unless the class sets them."""
        super().__init_subclass__(**kwargs)
        module = sys.modules.get(cls.__module__)
        for attribute, constant in MODULE_FACTS.items():
            if attribute not in cls.__dict__ and hasattr(module, constant):
                setattr(cls, attribute, getattr(module, constant))

    name: str = ""
    title: str = ""
    min_players: int = 1
    max_players: int = 1
    cooperative: bool = False
    engine_version: str = ""
    options: tuple = ()
    end_reasons: tuple = ()
    game_outcome_names: tuple = ()
    seat_outcome_names: tuple = ()
    # Outcome fields that hold a code rather than a quantity: name -> labels by code.  The
    # results then carry the label (e.g. an adventurer's name), so pipelines group by it.
    outcome_labels: dict = {}
    # Engine-specific agents: {name: description}, in Engine.policy number order (their
    # parameters and the agent listing: core_cy.agents.AgentGame).
    policies: dict = {}
    # This game's own defaults for the search agent's parameters ({mcts parameter: value}),
    # where the generic ones (core_cy/agents/agent.pyx mcts_params) miss a goal of issue 10 in
    # this game; the measurements behind them: docs/lab/search_agent.md.  The catalogue, the
    # form and every result row's full agent string show the values in force.
    search_defaults: dict = {}
    actions: Any = None  # an ActionSpace (core_cy/engine/actions.py): action ids by name
    handle: Any = None

    # ---- hooks a game supplies -------------------------------------------------------
    def check_rules(self, rules: dict, players: int) -> None:
        """Cross-option checks (e.g. a board side's player limit); raise ValueError."""

    @abstractmethod
    def pack_rules(self, rules: dict, players: int) -> bytes:
        """Supplied by every game module."""

    @abstractmethod
    def to_dict(self, state) -> dict:
        """Supplied by every game module."""

    @abstractmethod
    def fill_state(self, state, data: codec.Obj, rules: dict) -> None:
        """from_dict's game part: every field but players, rules and rng (set already);
        supplied by every game module."""

    @abstractmethod
    def describe(self, state, action) -> str:
        """Supplied by every game module."""

    @abstractmethod
    def score_breakdown(self, state) -> list:
        """Supplied by every game module."""

    # ---- shared face -----------------------------------------------------------------
    def choice_index(self, rules: dict, name: str) -> int:
        """Where rules[name] stands in the enum option's choices (options.toml, the one list
        of them): what an engine packs."""
        return self._enum(name).choices.index(rules[name])

    def choice_at(self, name: str, index: int) -> str:
        """The enum option's choice at `index`: what an engine unpacks (choice_index's inverse)."""
        return self._enum(name).choices[index]

    def _enum(self, name: str) -> Option:
        option = next(o for o in self.options if o.name == name)
        assert option.kind == "enum", name
        return option

    def from_dict(self, data: dict):
        """Rebuild a state from to_dict() output; ValueError names the path of the first bad
        value.  The opening is the same for every game: a dict of this game, its players and
        rules (validated as for new()), its random stream ("rng"); the game's fill_state hook
        reads the rest.  Last, the state must read back as exactly `data`
        (codec.check_exact): a field the game would ignore, default or normalise is refused,
        so that to_dict(from_dict(d)) == d for every d accepted."""
        state = self.read_state(data)
        self.check_read_back(data, state)
        return state

    def read_state(self, data: dict):
        """from_dict without its last check: the state the fields of `data` make."""
        if not isinstance(data, dict):
            raise ValueError("state must be a dict (from to_dict())")
        if data.get("game") != self.name:
            raise ValueError(f"state.game must be {self.name!r}, got {data.get('game')!r}")
        top = codec.Obj(data, "state")
        players = self.check_players(top.get("players"))
        rules = self.resolve_rules(top.get("rules"), players)
        state = contract.start_state(self, self.pack_rules(rules, players), players,
                                     top.get("rng"))
        self.fill_state(state, top, rules)
        return state

    def check_read_back(self, data: dict, state) -> None:
        """from_dict's last check: `state`, read from `data`, writes exactly `data`."""
        codec.check_exact(data, self.to_dict(state))

    def rules_schema(self) -> dict:
        return {
            "type": "object",
            "additionalProperties": False,
            "properties": {o.name: o.json_schema() for o in self.options},
        }

    def info(self) -> dict:
        return {
            "name": self.name,
            "title": self.title,
            "min_players": self.min_players,
            "max_players": self.max_players,
            "cooperative": self.cooperative,
            "engine_version": self.engine_version,
            "build": contract.BUILD,   # "release", or "checked" (bounds checks, the suite's)
            "rules": self.rules_schema(),
            "end_reasons": list(self.end_reasons),
            "safety_end_reasons": list(self.safety_end_reasons),
            "game_outcomes": list(self.game_outcome_names),
            "seat_outcomes": list(self.seat_outcome_names),
            "outcome_labels": {k: list(v) for k, v in self.outcome_labels.items()},
        }

    @property
    def safety_end_reasons(self) -> tuple:
        """This game's end reasons that mark a truncated game (SAFETY_END_REASONS)."""
        return tuple(r for r in self.end_reasons if r in SAFETY_END_REASONS)

    def check_players(self, players: Any) -> int:
        if isinstance(players, bool) or not isinstance(players, int):
            raise ValueError(f"players must be an integer, got {players!r}")
        if not self.min_players <= players <= self.max_players:
            raise ValueError(f"players must be between {self.min_players} and "
                             f"{self.max_players} for {self.name}, got {players}")
        return players

    def resolve_rules(self, rules: dict | None, players: int) -> dict:
        """Validated rules with every default filled in; ValueError names a bad option."""
        rules = {} if rules is None else rules
        if not isinstance(rules, dict):
            raise ValueError(f"rules must be an object of rule options, got {type(rules).__name__}")
        known = {o.name: o for o in self.options}
        unknown = sorted(set(rules) - set(known))
        if unknown:
            raise ValueError(f"unknown rule option(s) {unknown} for {self.name}; "
                             f"known options: {sorted(known)}")
        resolved = {name: opt.validate(self.name, rules.get(name, opt.default))
                    for name, opt in known.items()}
        players = self.check_players(players)
        for name, opt in known.items():
            opt.check_seats(self.name, resolved[name], players)
        self.check_rules(resolved, players)
        return resolved

    def rules_fingerprint(self, rules: dict | None, players: int) -> str:
        """A short hash of the fully resolved rules and data (what the engine really plays).
        An analysis option at its default is left out, so that adding one (e.g. seat
        compensation, off by default) keeps the fingerprints of the rules as written."""
        resolved = self.resolve_rules(rules, players)
        for o in self.options:
            if o.analysis and o.neutral(resolved[o.name]):
                del resolved[o.name]
        blob = json.dumps([self.name, self.engine_version, resolved], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def new(self, players: int, rules: dict | None = None, seed: int = 0, speeds=None):
        """A new game; chance comes from `seed` alone (game 0 of that seed in a batch)."""
        resolved = self.resolve_rules(rules, players)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ValueError(f"seed must be an integer in [0, 2**64), got {seed!r}")
        return contract.setup_state(self, self.handle, self.pack_rules(resolved, players),
                                    players, seed, speeds)

    def __hash__(self):
        return hash(self.name)
