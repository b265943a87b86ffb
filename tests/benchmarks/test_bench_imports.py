"""Every benchmark module imports against today's product: a renamed or removed product name
(`from pipelines.stats import ...`) fails here, not months later in someone's study.  A
module may need a library the product does not (OpenSpiel for the anchor); that missing
library is the only import error allowed."""
import importlib
import pkgutil

import pytest

import benchmarks

OURS = {"core_cy", "services", "pipelines", "dashboards", "benchmarks"}
MODULES = sorted(m.name for m in pkgutil.walk_packages(benchmarks.__path__, "benchmarks."))


def test_the_benchmarks_are_found():
    assert "benchmarks.forbidden_desert.rule_effect" in MODULES and len(MODULES) > 10


@pytest.mark.parametrize("name", MODULES)
def test_a_benchmark_module_imports(name):
    try:
        importlib.import_module(name)
    except ImportError as exc:
        missing = (exc.name or "").split(".")[0]
        assert missing and missing not in OURS, f"{name}: {exc}"
