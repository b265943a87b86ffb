"""Where the product under test lives: the folder that holds the loaded `core_cy` (the
checkout after an in-place build, or scripts/test.sh's build/checked).  Subprocesses and Ray
workers must import that same build: run them with `product_env()` and `cwd=PRODUCT` (Ray
puts a driver's working directory first on its workers' path)."""
from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import core_cy

PRODUCT = Path(core_cy.__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent


def product_path() -> str:
    """A PYTHONPATH that finds the product under test and the shared test helpers."""
    return os.pathsep.join([str(PRODUCT), str(TESTS)])


def product_env(**extra: str) -> dict:
    """This environment with product_path() as PYTHONPATH, plus `extra`."""
    return {**os.environ, "PYTHONPATH": product_path(), **extra}


def benchmark(name: str, monkeypatch):
    """The module benchmarks.`name`, imported from the checkout (the benchmarks are not part
    of the wheel), with the checkout last on the path for this test only, so the product
    under test is still the build found first."""
    monkeypatch.setattr(sys, "path", [*sys.path, str(TESTS.parent)])
    return importlib.import_module(f"benchmarks.{name}")
