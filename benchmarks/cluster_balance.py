"""The same fair-value search on one host of 1 CPU and on two hosts of 1 CPU each.

    nice -n 19 python -m benchmarks.cluster_balance          # Reef Encounter 3p, greedy
    python -m benchmarks.cluster_balance --max-games 12000 --wave-games 2000 --confirm-games 0

Hosts are Linux network namespaces, each with its own address (tests/cluster_support.py:
root and iproute2 needed), the nodes started with `ray start` as docs/deployment.md gives:
a head without CPUs, then 1 worker host of 1 CPU, then 2 worker hosts of 1 CPU each.  On
each cluster the driver (`meeplelab balance SPEC --json`, in the head's namespace, joining
by RAY_ADDRESS) is timed from the moment it is connected to its answer, so the clusters'
start and the connection are not counted.  The search has a fixed budget: a precision no
search reaches, so it plays every wave up to `--max-games`, then its confirmation.

Prints each cluster's wall time, the ratio one host / two hosts (goal >= 1.8) and whether
the answers (the result without its timings) are identical.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.cluster_support import answer_of, namespace_cluster

ROOT = Path(__file__).resolve().parents[1]

# The driver: connects first (not timed), then answers the spec's question; prints the
# result as JSON on stdout and its seconds on the last line of stderr.
DRIVER = """
import os, sys, time
from services.runner import init_ray
init_ray(address=os.environ["RAY_ADDRESS"])
began = time.monotonic()
from services import cli
code = cli.main(["balance", sys.argv[1], "--json", "--out", sys.argv[2]])
print(f"seconds {time.monotonic() - began:.3f}", file=sys.stderr)
sys.exit(code)
"""


def reef_spec(max_games: int, wave_games: int, confirm_games: int) -> dict:
    """examples/balance/reef_encounter_last_seat_polyps_3p.json with a fixed budget."""
    spec = json.loads((ROOT / "examples" / "balance" /
                       "reef_encounter_last_seat_polyps_3p.json").read_text())
    spec["name"] = "cluster-balance"
    spec["balance"].update(precision=0.01, max_games=max_games, wave_games=wave_games,
                           confirm_games=confirm_games)
    return spec


def search_on(workers: int, spec_file: Path, out: Path) -> tuple[float, dict]:
    """(seconds, result) of the search on a cluster of `workers` hosts of 1 CPU, its games
    written under `out` (a folder of its own: a search finding games written resumes)."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    with namespace_cluster(workers=workers, cpus=1, env=env) as cluster:
        done = subprocess.run(
            cluster.head.host.command([sys.executable, "-c", DRIVER, str(spec_file), str(out)]),
            cwd=ROOT, env={**cluster.env, "RAY_ADDRESS": cluster.address},
            capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"the search on {workers} host(s) failed:\n{done.stderr[-3000:]}")
    seconds = float(done.stderr.strip().splitlines()[-1].split()[1])
    return seconds, json.loads(done.stdout)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--max-games", type=int, default=30_000)
    p.add_argument("--wave-games", type=int, default=3_000)
    p.add_argument("--confirm-games", type=int, default=3_000)
    args = p.parse_args()
    spec = reef_spec(args.max_games, args.wave_games, args.confirm_games)
    with tempfile.TemporaryDirectory(prefix="cluster-balance-") as folder:
        spec_file = Path(folder) / "spec.json"
        spec_file.write_text(json.dumps(spec))
        began = time.monotonic()
        one_s, one = search_on(1, spec_file, Path(folder) / "one")
        two_s, two = search_on(2, spec_file, Path(folder) / "two")
    same = answer_of(one) == answer_of(two)
    print(f"spec: {json.dumps(spec['balance'])}")
    print(f"one host of 1 CPU:   {one_s:7.1f} s")
    print(f"two hosts of 1 CPU:  {two_s:7.1f} s")
    print(f"ratio {one_s / two_s:.2f} (goal >= 1.8); answers identical: {same}; "
          f"benchmark {time.monotonic() - began:.0f} s")
    from services.balance import answer_lines

    for line in answer_lines(one):
        print(f"  {line}")


if __name__ == "__main__":
    main()
