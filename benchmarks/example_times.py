"""How long each example takes here: a few games of every cell on one core (CPU time), the
share of them cut off by a simulator safety, and the wall time the whole spec needs on 2 cores
at that rate (Ray's start and the statistics come on top: seconds).

    python -m benchmarks.example_times [--games 15] examples/*.toml examples/*.json
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np


import core_cy  # noqa: E402
from core_cy.play import batch  # noqa: E402
from services.spec import ExperimentSpec  # noqa: E402


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="+")
    ap.add_argument("--games", type=int, default=15, help="games per cell (default 15)")
    ap.add_argument("--cores", type=int, default=2, help="cores of the estimate (default 2)")
    args = ap.parse_args(argv)
    for path in args.specs:
        spec = ExperimentSpec.from_file(path)
        game = core_cy.load(spec.game)
        cpu, truncated, played = 0.0, 0, 0
        for cell in spec.cells():
            t = time.process_time()
            cols = batch.play_columns(game, cell.players, cell.rules,
                                      spec.agent_list(cell.players, cell), seed=spec.seed,
                                      start=0, count=args.games, rotate=spec.rotates())
            cpu += time.process_time() - t
            truncated += int(np.isin(cols["end_reason"], list(game.safety_end_reasons)).sum())
            played += args.games
        rate = played / cpu
        print(f"{os.path.basename(path)}: {len(spec.cells())} cells, {spec.total_games():,} "
              f"games; {rate:,.1f} games per CPU-second over {played} games, {truncated} cut "
              f"off; about {spec.total_games() / rate / args.cores / 60:.1f} min on "
              f"{args.cores} cores (load average {os.getloadavg()[0]:.0f})", flush=True)


if __name__ == "__main__":
    main()
