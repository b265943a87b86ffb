"""Mondo's search at a designer's pace (issue 35): cost and length of a game under each agent,
and a candidate's strength head to head against the search as it was before (a benchmark,
not a test).  The commands and the columns are Reef Encounter's
(benchmarks/reef_encounter/search.py), for Mondo:

    python -m benchmarks.mondo.search cost [--agents "greedy_placer;mcts;..."] [--games 40]
                                           [--players 3] [--seed 1]
    python -m benchmarks.mondo.search duel --a AGENT [--b AGENT] [--games 400] [--players 2]
                                           [--seed 1] [--workers 2]

duel's --b defaults to BEFORE, Mondo's `mcts` at b8c431f spelled out (the game's defaults
then), so that the comparison holds whatever the defaults are now.
"""
from __future__ import annotations

import sys

from benchmarks.reef_encounter import search

BEFORE = ("mcts(iterations=200, exploration=0.7, rollout=quick, expand=greedy, cutoff=24, "
          "epsilon=0.0, sample=0, reuse=true, top_up=true, margin=0.0, widen=1.0, turns=false)")


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "duel" in argv and "--b" not in argv:
        argv += ["--b", BEFORE]
    search.main(argv, "mondo", __doc__)


if __name__ == "__main__":
    main()
