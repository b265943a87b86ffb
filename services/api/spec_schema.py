"""The JSON schema of an experiment spec as the API documents it: one variant per game
(`oneOf`, discriminated by `game`), each with that game's player range, agent names and
rule options, so that what the schema allows is what the service accepts, up to the rules
that JSON Schema cannot express.  Those answer 422 with an error `type` of:

- `cross_field`: a rule between fields (one agent or speed per seat, balance.agents naming
  the game's agents and presets, rotate_agents or pairing 'rotations' with an agent list and
  whole deals, the baseline among the arms, options that depend on the player count);
- `data`: the inside of a data-valued rule option (tiles, decks, boards), checked by the game;
- `limit`: the service's size limits (games and cells per experiment).
"""
from __future__ import annotations

import copy

import core_cy
from services.spec import MAX_AGENT, MAX_NAME, MAX_RUNGS, ExperimentSpec

REF = "#/components/schemas/{model}"
UNEXPRESSED = ("cross_field", "data", "limit")


def _players(info: dict) -> dict:
    count = {"type": "integer", "minimum": info["min_players"], "maximum": info["max_players"]}
    return {"anyOf": [count, {"type": "array", "items": count, "minItems": 1,
                              "uniqueItems": True}],
            "description": "a player count, or several"}


def _agent_name(info: dict) -> dict:
    # Parameters (`mcts(iterations=400)`) are checked by the spec itself, not by the schema.
    return {"type": "string", "enum": sorted(info["agents"])}


def _agents(info: dict) -> dict:
    name = _agent_name(info)
    return {"anyOf": [name, {"type": "array", "items": name, "minItems": 1}],
            "description": "one agent for every seat, or one per seat"}


def _ladder(info: dict, base: dict) -> dict:
    return {"anyOf": [{"type": "array", "items": _agent_name(info), "minItems": 2,
                       "uniqueItems": True},
                      {"type": "null"}],
            "default": None, "description": base["properties"]["ladder"]["description"]}


# What services.spec.text_problem refuses, as a JSON Schema pattern: control characters (Cc),
# line and paragraph separators, bidirectional overrides (lone surrogates are no JSON text).
_NOT_TEXT = r"\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069"


def _text(pattern_extra: str = "", longest: int = MAX_NAME) -> dict:
    return {"type": "string", "minLength": 1, "maxLength": longest,
            "pattern": f"^[^{pattern_extra}{_NOT_TEXT}]+$"}


def _rungs(base: dict) -> dict:
    """balance.agents: agent strings or presets (which ones depends on the game: cross_field),
    one or a list of at most MAX_RUNGS."""
    agent = _text(longest=MAX_AGENT)
    return {"anyOf": [agent, {"type": "array", "items": agent, "minItems": 1,
                              "maxItems": MAX_RUNGS, "uniqueItems": True}, {"type": "null"}],
            "default": None, "description": base["description"]}


def _arm_name() -> dict:
    return _text(r"/\\")


def _variant(base: dict, info: dict) -> dict:
    rules = info["rules"]
    variant = copy.deepcopy(base)
    variant["title"] = f"ExperimentSpec_{info['name']}"
    variant["description"] = f"an experiment on {info['title']}"
    props = variant["properties"]
    props["game"] = {"type": "string", "enum": [info["name"]], "description": info["title"]}
    props["name"] = _text() | {"default": "experiment",
                               "description": base["properties"]["name"]["description"]}
    props["baseline"] = {"anyOf": [_arm_name(), {"type": "null"}], "default": None,
                         "description": base["properties"]["baseline"]["description"]}
    props["players"] = _players(info)
    props["agents"] = _agents(info) | {"default": "random"}
    props["ladder"] = _ladder(info, base)
    props["arms"] = {"anyOf": [{"type": "object", "additionalProperties": rules,
                                "propertyNames": _arm_name()},
                               {"type": "null"}],
                     "default": None, "description": base["properties"]["arms"]["description"]}
    props["speeds"] = {"anyOf": [{"type": "array", "minItems": 1, "items": {
        "type": "number", "exclusiveMinimum": 0}}, {"type": "null"}],
        "default": None, "description": base["properties"]["speeds"]["description"]}
    props["sweep"] = {"anyOf": [{"type": "object", "additionalProperties": False,
                                 "properties": {k: {"type": "array", "items": v, "minItems": 1}
                                                for k, v in rules["properties"].items()}},
                                {"type": "null"}],
                      "default": None, "description": base["properties"]["sweep"]["description"]}
    return variant


def spec_components(max_games: int) -> dict[str, dict]:
    """Components to add to the OpenAPI schema: ExperimentSpec (a oneOf over the games)
    and the models it refers to; no cell may ask for more than `max_games`."""
    base = ExperimentSpec.model_json_schema(ref_template=REF)
    base["properties"]["games_per_arm"]["maximum"] = max_games
    components = base.pop("$defs", {})
    components["StopWhen"]["properties"]["max_games"]["maximum"] = max_games
    balance = components["Balance"]["properties"]
    balance["agents"] = _rungs(balance["agents"])
    components["StopWhen"]["anyOf"] = [  # a rule: precision, decision, or both
        {"required": [rule], "properties": {rule: {"type": "number"}}}
        for rule in ("half_width", "delta")]
    variants = {}
    for name in core_cy.game_names():
        variants[f"ExperimentSpec_{name}"] = _variant(base, core_cy.load(name).info())
    components.update(variants)
    components["BalanceSpec"] = {  # the body of POST /api/balance: a spec with its question
        "title": "BalanceSpec",
        "description": "an experiment spec whose `balance` section asks what to change",
        "allOf": [{"$ref": REF.format(model="ExperimentSpec")},
                  {"type": "object", "required": ["balance"],
                   "properties": {"balance": {"$ref": REF.format(model="Balance")}}}]}
    components["ExperimentSpec"] = {
        "title": "ExperimentSpec",
        "description": ExperimentSpec.__doc__.strip() + " " + __doc__.split("\n\n", 1)[0]
        .replace("\n", " "),
        "oneOf": [{"$ref": REF.format(model=k)} for k in variants],
        "discriminator": {"propertyName": "game", "mapping": {
            name: REF.format(model=f"ExperimentSpec_{name}") for name in core_cy.game_names()}},
    }
    return components


def plan_request_schema() -> dict:
    """The body of POST /api/plans: its `spec` is the ExperimentSpec above."""
    from services.plan import PlanRequest

    schema = PlanRequest.model_json_schema(ref_template=REF)
    schema.pop("$defs", None)
    return schema
