"""How far the interim figures the page shows lag the shards on disk while a run goes: the
service (its worker playing on a local Ray) runs one experiment; a thread counts the games
in the finished shard files every 0.1 s, and a client asks GET .../view every 2 s as the
experiment page does (dashboards/static/experiment.js: results every 2 polls of 1 s) and
reads the games its tables count.

    python -m benchmarks.interim_lag                     # Maori, 3 players, greedy
    python -m benchmarks.interim_lag --game mondo --players 4 --agents strong --games 1500

Prints, over the interim /view answers, how long before each answer the oldest game on disk
that it does not count was written (0 when it counts them all: median, 90th percentile,
most), the same for the games the runner had been told were written (the version the
answers are kept by), how many answers count every game that was on disk at the look before
(the interim figures lag the shards by at most a look), and how many games on disk each
answer did not count, beside the page's 2 s between looks.
"""
from __future__ import annotations

import argparse
import re
import tempfile
import threading
import time

import numpy as np
import pyarrow.parquet as pq

import core_cy
from services.registry import FINISHED

PAGE_LOOK_S = 2.0  # the page reloads its results every 2 polls of 1 s
GAMES_TABLE = re.compile(r"<table class='data' data-table='\d+p-games'>.*?</table>", re.S)
ROW = re.compile(r"<tr[^>]*><td>[^<]*</td><td>([\d,]+)</td>")


def shown_games(html: str) -> int:
    """The games the view's tables count (every cell's 'games' column, truncated left out)."""
    return sum(int(g.replace(",", "")) for table in GAMES_TABLE.findall(html)
               for g in ROW.findall(table))


def disk_games(root: str, rows: dict) -> int:
    """The games in the finished shard files under `root` (each file's rows read once)."""
    from pipelines.folder import shard_files

    for path, _rel in shard_files(root):
        if path not in rows:
            rows[path] = pq.read_metadata(path).num_rows
    return sum(rows.values())


def main() -> None:
    from fastapi.testclient import TestClient

    from pipelines.folder import experiment_path
    from services.app import create_app
    from services.settings import Settings

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--game", default="maori")
    ap.add_argument("--players", type=int, default=3)
    ap.add_argument("--agents", default="greedy", help="an agent string or a preset's name")
    ap.add_argument("--games", type=int, default=30000)
    ap.add_argument("--shard-size", type=int, default=None)
    args = ap.parse_args()
    agents = core_cy.catalogue.presets(args.game)["presets"].get(args.agents, {}).get(
        "agent", args.agents)
    spec = {"name": "interim-lag", "game": args.game, "players": args.players,
            "agents": agents, "games_per_arm": args.games, "seed": 1}
    if args.shard_size:
        spec["shard_size"] = args.shard_size
    tmp = tempfile.mkdtemp(prefix="interim-lag-")
    app = create_app(Settings(db=f"{tmp}/r.db", results=f"{tmp}/results"))
    disk: list[tuple[float, int]] = []
    polls: list[dict] = []  # per /view asked: when, its answer's time, code, games counted
    with TestClient(app) as client:
        eid = client.post("/api/experiments", json=spec).json()["id"]
        root = experiment_path(f"{tmp}/results", eid)
        began, done, rows = time.monotonic(), threading.Event(), {}

        def count() -> None:
            while not done.is_set():
                disk.append((time.monotonic() - began, disk_games(root, rows)))
                time.sleep(0.1)

        counter = threading.Thread(target=count, daemon=True)
        counter.start()
        while True:
            asked = time.monotonic() - began
            exp = client.get(f"/api/experiments/{eid}").json()
            answer = client.get(f"/api/experiments/{eid}/view")
            polls.append({"asked": asked, "answered": time.monotonic() - began,
                          "code": answer.status_code,
                          "version": client.app.state.worker.written(eid, 0),
                          "shown": shown_games(answer.json()["html"])
                          if answer.status_code == 200 else 0,
                          "disk": disk[-1][1] if disk else 0, "status": exp["status"]})
            if exp["status"] in FINISHED:
                break
            time.sleep(max(0.0, PAGE_LOOK_S - (time.monotonic() - began - asked)))
        done.set()
        counter.join()
    report(args, disk, polls)


def staleness(disk: list[tuple[float, int]], at: float, counted: int) -> float:
    """How long before `at` the first game not among `counted` was on disk (0: none was)."""
    first = next((t for t, g in disk if g > counted), None)
    return 0.0 if first is None or first >= at else at - first


def report(args, disk: list[tuple[float, int]], polls: list[dict]) -> None:
    running = [p for p in polls if p["status"] not in FINISHED and p["code"] == 200]
    grew = sum(g > before for (_, g), (_, before) in zip(disk[1:], disk))
    print(f"{args.game}, {args.players} players, {args.agents}, shard_size "
          f"{args.shard_size or 'by time'}: {disk[-1][1]:,} games on disk in {disk[-1][0]:.0f} s "
          f"({grew} times more); {len(running)} interim /view answers, one every "
          f"{PAGE_LOOK_S:.0f} s as the page asks; the final view counts {polls[-1]['shown']:,}")
    for what, words in (("version", "the games the runner was told were written (the "
                         "answers' version)"), ("shown", "the /view answer's figures")):
        old = [staleness(disk, p["answered"], p[what]) for p in running]
        if old:
            print(f"oldest game on disk not in {words}: median {np.median(old):.1f} s, "
                  f"p90 {np.percentile(old, 90):.1f} s, most {max(old):.1f} s")
    within = [(now["shown"] >= before["disk"], before["disk"] - now["shown"])
              for before, now in zip(running, running[1:])]
    if within:
        short = [n for ok, n in within if not ok]
        print(f"answers that count every game on disk at the look before: "
              f"{sum(ok for ok, _ in within)} of {len(within)}"
              + (f" (the others short by {min(short):,}-{max(short):,} games)" if short else ""))
    behind = [p["disk"] - p["shown"] for p in running]
    if behind:
        print(f"games on disk when asked, not in the answer: median {np.median(behind):,.0f}, "
              f"most {max(behind):,} (of {disk[-1][1]:,})")
    took = [p["answered"] - p["asked"] for p in polls]
    print(f"a poll (the experiment, then /view) took: median {np.median(took):.2f} s, most "
          f"{max(took):.2f} s")


if __name__ == "__main__":
    main()
