"""The reference tables in docs/, generated from the product's own models, so they cannot drift:
the spec's fields (services/spec.py ExperimentSpec and StopWhen) in docs/spec.md, the
service's settings (services/settings.py Settings) in docs/service.md, and per game its
players, agents, end reasons, outcome columns and option table in docs/games/<game>.md.

    python -m services.docs            # from the checkout root: rewrite the generated blocks
    python -m services.docs --check    # exit 1 naming every page that is out of date

A page is hand-written prose around generated blocks, each between a line
`<!-- generated: NAME (python -m services.docs) -->` and a line `<!-- end generated -->`;
only the blocks are rewritten.  A game without a page gets one with its block alone.
tests/docs/test_docs.py checks that the committed pages match.
"""
from __future__ import annotations

import argparse
import inspect
import json
import re
import sys
import types
import typing
from pathlib import Path

import annotated_types
from pydantic import AliasChoices, BaseModel, SecretStr

import core_cy
from core_cy.engine import codec
from services.settings import Settings
from services.spec import ExperimentSpec, StopWhen

BEGIN = "<!-- generated: {name} (python -m services.docs) -->"
END = "<!-- end generated -->"
BLOCK = re.compile(r"<!-- generated: (?P<name>[^()]+?) \(python -m services\.docs\) -->\n"
                   r".*?<!-- end generated -->", re.S)
LONG_DEFAULT = 60  # characters: a longer default value is named, not spelled out


# ---- cells ----------------------------------------------------------------------------------
def _cell(text: str) -> str:
    """Text for one Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(value) -> str:
    return f"`{json.dumps(value)}`"


def _type_text(annotation, plural: bool = False) -> str:
    """A field's type in JSON's words: 'integer or list of integers', '"deals" or ...'."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_text(a, plural) for a in args if a is not type(None))
    if origin is typing.Literal:
        return " or ".join(_code(a) for a in args)
    if origin is list:
        return ("lists" if plural else "list") + f" of {_type_text(args[0], True)}"
    if origin is dict:
        name = "objects" if plural else "object"
        return name if args[1] is typing.Any else f"{name} of {_type_text(args[1], True)}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"object ({annotation.__name__}, below)"
    names = {int: "integer", float: "number", str: "string", bool: "boolean",
             typing.Any: "value", SecretStr: "string (secret)"}
    if annotation in names:
        return names[annotation] + ("s" if plural else "")
    return getattr(annotation, "__name__", str(annotation))  # pragma: no cover - new types


def _bounds(metadata) -> str:
    signs = {annotated_types.Ge: (">=", "ge"), annotated_types.Gt: (">", "gt"),
             annotated_types.Le: ("<=", "le"), annotated_types.Lt: ("<", "lt")}
    parts = []
    for item in metadata:
        for kind, (sign, attribute) in signs.items():
            if isinstance(item, kind):
                parts.append(f"{sign} {getattr(item, attribute):,}")
    return ", ".join(parts)


def _default(field) -> str:
    if field.is_required():
        return "required"
    value = field.default
    if value is None:
        return "unset"
    if hasattr(value, "get_secret_value"):  # pragma: no cover - no secret has a default now
        return "(secret)"
    return _code(value)


def _model_table(model: type[BaseModel], names: dict | None = None) -> list[str]:
    """One row per field of `model`: name (or its environment variable), type and bounds,
    default, meaning (the column left out when no field has a description)."""
    fields = model.model_fields
    described = any(f.description for f in fields.values())
    head = ["field" if names is None else "setting", "type", "default"]
    head += ["meaning"] if described else []
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, field in fields.items():
        kind = _type_text(field.annotation)
        bounds = _bounds(field.metadata)
        row = [f"`{names[name] if names else name}`", kind + (f" ({bounds})" if bounds else ""),
               _default(field)]
        row += [field.description or ""] if described else []
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    return lines


# ---- blocks ---------------------------------------------------------------------------------
def spec_block() -> list[str]:
    lines = [f"`ExperimentSpec` (services/spec.py): {inspect.cleandoc(ExperimentSpec.__doc__)}",
             "Unknown fields are refused.", ""]
    lines += _model_table(ExperimentSpec)
    lines += ["", f"`stop_when` (`StopWhen`): {inspect.cleandoc(StopWhen.__doc__)}", ""]
    lines += _model_table(StopWhen)
    return lines


def setting_names() -> dict[str, str]:
    """Each setting's environment variable (its first alias, else MEEPLELAB_<NAME>)."""
    prefix = Settings.model_config["env_prefix"]
    names = {}
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        names[name] = (alias.choices[0] if isinstance(alias, AliasChoices)
                       else f"{prefix}{name}".upper())
    return names


def settings_block() -> list[str]:
    return [f"`Settings` (services/settings.py): {inspect.cleandoc(Settings.__doc__)}", ""] \
        + _model_table(Settings, setting_names())


def _data_name(game, value) -> str | None:
    """The data file of `game` (or the key in one) whose content is `value`, if any."""
    package = type(game).__module__.rpartition(".")[0]
    folder = Path(sys.modules[type(game).__module__].__file__).parent / "data"
    for path in sorted(folder.glob("*.json")):
        content = codec.load_data(package, f"data/{path.name}")
        if content == value:
            return f"`data/{path.name}`"
        if isinstance(content, dict):
            for key, part in content.items():
                if part == value:
                    return f"`data/{path.name}` (`{key}`)"
    return None


def _option_values(option) -> str:
    if option.kind == "enum":
        return ", ".join(f"`{c}`" for c in option.choices)
    if option.kind == "int":
        low = "" if option.minimum is None else f"{option.minimum:,}"
        high = "" if option.maximum is None else f"{option.maximum:,}"
        return f"integer {low}..{high}" if low or high else "integer"
    if option.kind == "bool":
        return "`true`, `false`"
    return "JSON " + ("list" if isinstance(option.default, list) else "object")


def _option_default(game, option) -> str:
    if option.kind == "data":
        named = _data_name(game, option.default)
        if named:
            return named
    text = json.dumps(option.default)
    return f"`{text}`" if len(text) <= LONG_DEFAULT else "built in (see the description)"


def game_block(name: str) -> list[str]:
    game = core_cy.load(name)
    safety = set(game.safety_end_reasons)
    reasons = ", ".join(f"`{r}`" + (" (a simulator safety: truncated)" if r in safety else "")
                        for r in game.end_reasons)
    lines = [f"Players {game.min_players}-{game.max_players}"
             + ("; cooperative: one team result per game" if game.cooperative else "")
             + f"; engine version {game.engine_version}.", "",
             f"End reasons: {reasons}.", "",
             "Outcome columns per game: " + (", ".join(f"`{o}`" for o in game.game_outcome_names)
                                            or "none") + ".", "",
             "Outcome columns per seat: " + (", ".join(f"`{o}`" for o in game.seat_outcome_names)
                                            or "none") + ".", "",
             "### Agents", "", "| agent | what it does |", "|---|---|"]
    for agent, entry in game.info()["agents"].items():
        lines.append(f"| `{agent}` | {_cell(entry['description'])} |")
    lines += ["", "### Rule options", "",
              "Every option a spec's arms may set (`core_cy/games/" + name + "/options.toml`); "
              "ASSUMPTION: the rule specification marks the value as an assumption, and the "
              "default is its reading.", "",
              "| option | values | default | ASSUMPTION | meaning |", "|---|---|---|---|---|"]
    for option in game.options:
        lines.append("| " + " | ".join(_cell(c) for c in (
            f"`{option.name}`", _option_values(option), _option_default(game, option),
            "yes" if option.assumption else "", option.description)) + " |")
    return lines


def blocks() -> dict[str, list[str]]:
    """Every generated block by name."""
    out = {"spec": spec_block(), "settings": settings_block()}
    out.update({f"game {name}": game_block(name) for name in core_cy.game_names()})
    return out


# ---- pages ----------------------------------------------------------------------------------
def render(text: str, generated: dict[str, list[str]], seen: set | None = None) -> str:
    """`text` with every generated block rewritten from `generated` (the prose around them
    kept as it is); the names of the blocks met are added to `seen`."""
    def fill(match: re.Match) -> str:
        name = match["name"]
        if name not in generated:
            raise ValueError(f"unknown generated block {name!r}; known: {sorted(generated)}")
        if seen is not None:
            seen.add(name)
        return "\n".join([BEGIN.format(name=name), *generated[name], END])

    return BLOCK.sub(fill, text)


def pages(root: Path) -> dict[Path, str]:
    """Every page of root/docs that holds a generated block, with its up-to-date text (a game
    without a page gets one)."""
    generated = blocks()
    texts = {}
    for path in sorted((root / "docs").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        if BLOCK.search(text):
            texts[path] = text
    for name in core_cy.game_names():
        path = root / "docs" / "games" / f"{name}.md"
        if path not in texts:
            texts[path] = (f"# {core_cy.load(name).title}\n\n{BEGIN.format(name=f'game {name}')}"
                           f"\n{END}\n")
    seen: set = set()
    out = {path: render(text, generated, seen) for path, text in texts.items()}
    missing = sorted(set(generated) - seen)
    if missing:
        raise ValueError(f"no page holds the generated block(s) {missing}")
    return out


def stale(root: Path) -> list[Path]:
    """The pages whose committed text differs from what this module generates."""
    return [path for path, text in pages(root).items()
            if not path.exists() or path.read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m services.docs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path.cwd(),
                        help="the checkout whose docs/ to write (default: here)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 naming every out-of-date page")
    args = parser.parse_args(argv)
    if not (args.root / "docs").is_dir():
        parser.error(f"--root: {args.root} has no docs/ folder (run from the checkout root)")
    if args.check:
        old = stale(args.root)
        for path in old:
            print(f"out of date: {path.relative_to(args.root)} (python -m services.docs "
                  "rewrites it)")
        return 1 if old else 0
    for path, text in pages(args.root).items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(args.root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
