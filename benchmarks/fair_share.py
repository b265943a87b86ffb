"""Fair share between owners (issue 51, "Must show"), against a real `meeplelab serve` with
two experiment places: token B's 200-game greedy run alone, then while token A's
mcts(iterations=100000) experiment occupies every CPU of the server's Ray (each of A's games
takes minutes): seconds from B's submission to its first game played and to its end.  A is
cancelled after each round.  B's runs use the same spec with another seed each round (a
new experiment each time).

    nice -n 19 python benchmarks/fair_share.py [--rounds 3]     # ~2-3 min

The server runs the product this interpreter imports.  Results: docs/lab/ (dated, with the
commit; say the machine's load).
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.job_queue import HEADERS, serve, wait
from services.registry import FINISHED

SLOW = {"name": "slow", "game": "maori", "players": 3, "agents": "mcts(iterations=100000)",
        "games_per_arm": 100, "shard_size": 100, "seed": 1}
SMALL = {"name": "small", "game": "maori", "players": 3, "agents": "greedy",
         "games_per_arm": 200, "shard_size": 100}


def small_run(client, seed: int) -> tuple[float, float]:
    """(seconds to B's first game played, seconds to its end) from its submission."""
    began = time.monotonic()
    jid = client.post("/api/experiments", json={**SMALL, "seed": seed},
                      headers=HEADERS["B"]).json()["id"]
    first = None
    while True:
        job = client.get(f"/api/experiments/{jid}").json()
        now = time.monotonic() - began
        if first is None and job["progress"]["done"] > 0:
            first = now
        if job["status"] in FINISHED:
            assert job["status"] == "done", job
            return first if first is not None else now, now
        if now > 600:
            raise RuntimeError(f"B's run still {job['status']} after 600 s")
        time.sleep(0.05)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        server, client = serve(Path(folder), MEEPLELAB_MAX_RUNNING="2")
        try:
            cold = small_run(client, 999)  # the server's first: its Ray workers start
            alone = [small_run(client, 100 + r) for r in range(args.rounds)]
            beside = []
            for r in range(args.rounds):
                slow = client.post("/api/experiments?confirm_cost=true",
                                   json={**SLOW, "seed": 10 + r},
                                   headers=HEADERS["A"]).json()["id"]
                wait(client, "experiment", slow, ("running",))
                time.sleep(8)  # A's tasks hold every CPU, well into their first games
                beside.append(small_run(client, 200 + r))
                state = client.get(f"/api/experiments/{slow}").json()
                assert state["status"] == "running", state
                client.post(f"/api/experiments/{slow}/cancel", headers=HEADERS["A"])
                wait(client, "experiment", slow, ("cancelled",))
        finally:
            server.terminate()
            server.wait(60)
    print(f"B alone, the server's first run (Ray's workers start): first game after "
          f"{cold[0]:.1f} s, done after {cold[1]:.1f} s")
    for name, runs in (("alone", alone), ("beside A's slow run", beside)):
        print(f"B {name}: first game after " + ", ".join(f"{f:.1f}" for f, _ in runs)
              + " s; done after " + ", ".join(f"{d:.1f}" for _, d in runs) + " s", flush=True)
    ratio = statistics.median(d for _, d in beside) / statistics.median(d for _, d in alone)
    print(f"median time to done beside A / alone: {ratio:.2f}; load average "
          f"{os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
