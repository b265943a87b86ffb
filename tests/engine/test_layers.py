"""The layers of core_cy import only downward, Python and Cython imports both: the engine
contract below the agents, the agents below the batch loop and the games, the catalogue on
top.  Read from the source files (import, cimport and include lines), since a compiled
module's imports are not visible to Python."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "core_cy"
# A layer may import from the layers listed after it, never from one before it or its own
# peers' folders (one game never imports another).
LAYERS = ["catalogue", "games", "play", "agents", "engine"]
IMPORT = re.compile(r"^\s*(?:from\s+(core_cy[\w.]*)\s+c?import|c?import\s+(core_cy[\w.]*))",
                    re.MULTILINE)
SOURCES = ("*.py", "*.pyx", "*.pxd", "*.pxi")


def layer_of(module: str) -> str:
    parts = module.split(".")
    return "catalogue" if len(parts) == 1 or parts[1] in ("__init__", "catalogue") else parts[1]


def imports() -> list[tuple[str, str, str]]:
    """(file, its layer, imported core_cy module) for every import line under core_cy/."""
    found = []
    for pattern in SOURCES:
        for path in ROOT.rglob(pattern):
            module = ".".join(("core_cy",) + path.relative_to(ROOT).with_suffix("").parts)
            for m in IMPORT.finditer(path.read_text()):
                found.append((str(path.relative_to(ROOT.parent)), layer_of(module),
                              m.group(1) or m.group(2)))
    return found


def test_the_sources_are_there_and_the_reader_finds_both_kinds_of_import():
    found = imports()
    assert ("core_cy/agents/agent.pxd", "agents", "core_cy.engine.contract") in found  # cimport
    assert ("core_cy/agents/game.py", "agents", "core_cy.engine.game") in found        # import


@pytest.mark.parametrize("file,layer,target", imports())
def test_every_import_runs_downward(file, layer, target):
    below = LAYERS[LAYERS.index(layer) + 1:]
    target_layer = layer_of(target)
    if target_layer == layer:
        if layer == "games":   # inside its own folder only
            assert target.split(".")[2] == file.split("/")[2], f"{file} imports {target}"
        return
    assert target_layer in below, f"{file} ({layer}) imports {target} ({target_layer})"
