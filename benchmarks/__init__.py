"""meeplelab's benchmarks: measurements, never timed tests (their figures go to docs/lab/).

Run them as modules from the root of a checkout built in place
(`python setup.py -q build_ext --inplace`): Python then puts the checkout first on the path,
so a benchmark measures this checkout's engines, not whichever meeplelab is installed.

    python -m benchmarks.engines                       # games/s and moves/s per game and agent
    python -m benchmarks.forbidden_desert.endgames -h  # a per-game study

At the top, the shared scripts: engines, openspiel_anchor (the same against OpenSpiel's C++),
agents (the search agent's strength, speed and budget), strong_play (the form's presets: cost
and strength against mcts), search_ab (builds of two commits side by side), pairing, plan_accuracy, pipeline (end
to end on Ray), api_load (the service under load).  In benchmarks/<game>/, that game's
studies and tuners.  Each module's docstring gives its options.
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the checkout these benchmarks measure
