"""How soon a run with the default spec (no shard_size: shards sized by time) shows progress
with an ETA, and whether every core plays: an experiment played through the runner, as
`meeplelab run` plays it, with the CPU time of each core read from /proc/stat over the run.

    python -m benchmarks.first_progress                      # 2,000 4-player Mondo games,
                                                             # the strong preset
    python -m benchmarks.first_progress --game maori --players 3 --agents greedy --games 20000
    python -m benchmarks.first_progress --seconds 120         # cancel after 120 s

Prints the seconds from the start (Ray already up) to the first progress with an ETA, the
games then, the run's games per second, the CPU-seconds its shard tasks used per second of
wall time (2.0: both cores of a 2-core machine playing its games all along), and each core's
busy share over the run (every process, the run's and any other).
"""
from __future__ import annotations

import argparse
import tempfile
import threading
import time

import core_cy


def _cores() -> list[tuple[int, int]]:
    """(busy, total) jiffies of each core, from /proc/stat."""
    cores = []
    with open("/proc/stat") as stat:
        for line in stat:
            if line.startswith("cpu") and line[3].isdigit():
                ticks = [int(x) for x in line.split()[1:]]
                idle = ticks[3] + ticks[4]  # idle and iowait
                cores.append((sum(ticks) - idle, sum(ticks)))
    return cores


def main() -> None:
    from services.runner import init_ray, run_experiment
    from services.spec import ExperimentSpec

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--game", default="mondo")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--agents", default="strong", help="an agent string or a preset's name")
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=None, help="cancel the run after this")
    args = ap.parse_args()
    agents = core_cy.catalogue.presets(args.game)["presets"].get(args.agents, {}).get(
        "agent", args.agents)
    spec = ExperimentSpec.model_validate({
        "name": "first-progress", "game": args.game, "players": args.players,
        "agents": agents, "games_per_arm": args.games, "seed": 1})
    init_ray()
    cancel = threading.Event()
    seen: dict = {}
    began = time.monotonic()
    before = _cores()

    def progress(p) -> None:
        now = time.monotonic() - began
        if p.done and "first_games" not in seen:
            seen["first_games"] = (now, p.done)
        if p.eta_s is not None and "first_eta" not in seen:
            seen["first_eta"] = (now, p.done, p.eta_s)
        seen["last"] = (now, p.done)
        seen["cpu"] = p.cpu_seconds
        if args.seconds is not None and now >= args.seconds:
            cancel.set()

    with tempfile.TemporaryDirectory() as folder:
        status = run_experiment(spec, folder, "e", progress=progress, cancel=cancel)
    wall = time.monotonic() - began
    after = _cores()
    print(f"{args.game}, {args.players} players, {agents}, {args.games:,} games, the default "
          f"spec: {status} after {wall:.0f} s, {seen['last'][1]:,} games "
          f"({seen['last'][1] / wall:.2f} games/s)")
    if "first_games" in seen:
        print(f"  first games counted after {seen['first_games'][0]:.1f} s "
              f"({seen['first_games'][1]} games)")
    if "first_eta" in seen:
        at, done, eta = seen["first_eta"]
        print(f"  first progress with an ETA after {at:.1f} s ({done} games, ETA {eta:.0f} s)")
    print(f"  the run's shard tasks used {seen.get('cpu', 0):.0f} CPU-seconds in {wall:.0f} s: "
          f"{seen.get('cpu', 0) / wall:.2f} cores busy with its games on average")
    for k, ((b0, t0), (b1, t1)) in enumerate(zip(before, after)):
        print(f"  core {k}: busy {100 * (b1 - b0) / max(t1 - t0, 1):.0f}% of the run")


if __name__ == "__main__":
    main()
