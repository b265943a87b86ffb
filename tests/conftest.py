import os
import sys

# The shared test helpers (golden.py, agent_checks.py, service_support.py, ray_support.py)
# live in tests/; each game's position builder sits beside its tests in tests/games/<game>/.
sys.path.insert(0, os.path.dirname(__file__))
# The suite's services and commands take any experiment without asking to confirm its cost
# (MEEPLELAB_CONFIRM_CPU_SECONDS): tests post long experiments to see cancels, budgets and
# places; tests/services/test_cost.py sets the limit where it tests it.
os.environ.setdefault("MEEPLELAB_CONFIRM_CPU_SECONDS", str(10**15))


def pytest_configure(config):
    """scripts/test.sh runs the suite on the checked build (MEEPLELAB_SUITE_BUILD=checked):
    refuse to run it on another build that happens to come first on the path.  The suite
    runs in the folder of the product under test, because Ray puts a driver's working
    directory first on its workers' path (the checkout's own unbuilt packages must not
    shadow the build)."""
    from core_cy.engine import contract
    from product import PRODUCT

    wanted = os.environ.get("MEEPLELAB_SUITE_BUILD")
    if wanted and contract.BUILD != wanted:
        raise RuntimeError(f"the suite wants the {wanted} build of the engines, but "
                           f"{contract.__file__} is the {contract.BUILD} build")
    os.chdir(PRODUCT)


def pytest_report_header(config):
    from core_cy.engine import contract

    return f"meeplelab engines: {contract.BUILD} build ({os.path.dirname(contract.__file__)})"


def pytest_collection_modifyitems(config, items):
    """Markers for the slow families, so that `-m "not ray and not browser and not deploy"`
    runs the quick rest: ray (a Ray runtime: the ray_local fixture or a local cluster),
    browser (Chromium), deploy (the installed wheel, the image and the manifests)."""
    import pytest

    for item in items:
        parts = item.path.parts
        if "dashboards" in parts:
            item.add_marker(pytest.mark.browser)
        if "deploy" in parts:
            item.add_marker(pytest.mark.deploy)
        source = getattr(item.module, "__file__", "") or ""
        if "ray_local" in getattr(item, "fixturenames", ()) or "local_cluster" in \
                _text(source):
            item.add_marker(pytest.mark.ray)


_TEXTS: dict = {}


def _text(path: str) -> str:
    if path not in _TEXTS:
        try:
            with open(path, encoding="utf-8") as f:
                _TEXTS[path] = f.read()
        except OSError:
            _TEXTS[path] = ""
    return _TEXTS[path]
