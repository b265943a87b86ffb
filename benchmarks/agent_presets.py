"""The form's agent presets (dashboards/static/presets.json): games per CPU-second of each,
on one core, at the game's default player count; `--write` stores the figures in the file.

    python -m benchmarks.agent_presets [--seconds 5] [--game maori] [--write]

Each preset plays shards with core_cy.play.batch (benchmarks/engines.measure) until --seconds
of CPU time; CPU-time rates, so other work on the machine affects them less than wall time
(not at all only on an idle machine: docs/lab/agent_presets.md notes the load of each run).
"""
from __future__ import annotations

import argparse
import json
import os


import core_cy  # noqa: E402
from benchmarks import ROOT  # noqa: E402
from benchmarks.engines import measure  # noqa: E402

PRESETS = ROOT / "dashboards" / "static" / "presets.json"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="CPU seconds per preset")
    ap.add_argument("--game", help="only this game")
    ap.add_argument("--write", action="store_true", help="store the figures in presets.json")
    args = ap.parse_args(argv)
    data = json.loads(PRESETS.read_text())
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'game':<18}{'players':>8}  {'preset':<10}{'agent':<24}{'games/CPU-s':>12}")
    for name, entry in data["games"].items():
        if args.game and name != args.game:
            continue
        game = core_cy.load(name)
        for preset, about in entry["presets"].items():
            rate = measure(game, entry["players"], about["agent"], args.seconds, shard=2)
            about["games_per_cpu_second"] = round(rate["games_per_s"], 1 if
                                                  rate["games_per_s"] < 10 else 0)
            print(f"{name:<18}{entry['players']:>8}  {preset:<10}{about['agent']:<24}"
                  f"{rate['games_per_s']:>12,.1f}", flush=True)
    if args.write:
        PRESETS.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
