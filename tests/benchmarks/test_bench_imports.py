"""Every benchmark module imports against today's product: a renamed or removed product name
(`from pipelines.stats import ...`) fails here, not months later in someone's study.  A
module may need a library the product does not (OpenSpiel for the anchor); that missing
library is the only import error allowed.  The benchmarks are not part of the wheel, so they
are imported from the checkout, in a process whose path puts the build under test first."""
import json
import os
import subprocess
import sys
from pathlib import Path

from product import PRODUCT, product_path

CHECKOUT = Path(__file__).resolve().parents[2]
OURS = ["core_cy", "services", "pipelines", "dashboards", "benchmarks"]
PROBE = """
import importlib, json, pkgutil, sys
import benchmarks, core_cy
ours, found, bad = set(sys.argv[1].split(",")), [], {}
for m in pkgutil.walk_packages(benchmarks.__path__, "benchmarks."):
    found.append(m.name)
    try:
        importlib.import_module(m.name)
    except ImportError as exc:
        if (exc.name or "").split(".")[0] in ours or not exc.name:
            bad[m.name] = str(exc)
print(json.dumps({"found": found, "bad": bad, "benchmarks": benchmarks.__file__,
                  "core_cy": core_cy.__file__}))
"""


def test_every_benchmark_module_imports():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([product_path(), str(CHECKOUT)])}
    done = subprocess.run([sys.executable, "-c", PROBE, ",".join(OURS)], cwd=PRODUCT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["benchmarks"] == str(CHECKOUT / "benchmarks" / "__init__.py")
    assert Path(report["core_cy"]).parents[1] == PRODUCT  # the build under test, not sources
    assert "benchmarks.forbidden_desert.rule_effect" in report["found"]
    assert len(report["found"]) > 10
    assert report["bad"] == {}
