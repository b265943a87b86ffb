"""Builds of several commits against each other in one process: CPU per game, moves a game
and CPU per move of one agent (the search by default), on the same games, alternating slices.

    python -m benchmarks.search_ab build 3042033 old      # the tree of a commit, built in place
    python -m benchmarks.search_ab build HEAD new
    python -m benchmarks.search_ab compare old new --game mondo [--agent mcts] [--rounds 6]

`build` copies core_cy/ of the commit (git archive, any layout: before and after the move to
core_cy/{engine,agents,play,games}) into <--root>/<name>/ as a package named `core_<name>`
(every `core_cy` in its sources renamed, nothing else changed) and builds it in place, so that
builds of different commits import side by side.  `compare` plays games start.. of one seed
under each build in turn, `--games` per slice, the order reversed every round, so that the
load on the machine falls on every build alike (engines.py --ab does the same for builds of one
layout), and prints each build's totals and its per-round ratio to the first.  Where the rules
changed between the commits the games differ: compare the CPU per move then.
"""
from __future__ import annotations

import argparse
import importlib
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import ROOT

DEFAULT_ROOT = Path("/tmp/meeplelab-builds")


def build(commit: str, name: str, root: Path, modules: str = "") -> Path:
    """The core_cy tree of `commit` as package core_<name>, built in place under root/name."""
    where = root / name
    pkg = f"core_{name}"
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "core_cy", "setup.py"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    (where / "core_cy").rename(where / pkg)
    for path in [where / "setup.py", *(p for p in (where / pkg).rglob("*") if p.is_file())]:
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        if "core_cy" in text:
            path.write_text(text.replace("core_cy", pkg))
    env = {**os.environ, "MEEPLELAB_MODULES": modules}
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=where,
                   env=env, check=True, stdout=subprocess.DEVNULL)
    return where


def load(name: str, root: Path, game: str):
    """(game object, play_columns) of build `name`."""
    sys.path.insert(0, str(root / name))
    try:
        pkg = importlib.import_module(f"core_{name}")
        try:
            batch = importlib.import_module(f"core_{name}.play.batch")
        except ImportError:                     # the layout before core_cy/play
            batch = importlib.import_module(f"core_{name}.batch")
    finally:
        sys.path.pop(0)
    return pkg.load(game), batch.play_columns


def compare(names: list[str], root: Path, game: str, agent: str, players: int, games: int,
            rounds: int, seed: int) -> list[dict]:
    builds = [(n, *load(n, root, game)) for n in names]
    slices = {n: [] for n in names}
    for r in range(rounds):
        for n, g, play in (builds if r % 2 == 0 else builds[::-1]):
            t0 = time.process_time()
            cols = play(g, players, None, agent, seed=seed, start=r * games, count=games)
            slices[n].append((time.process_time() - t0, int(cols["length"].sum())))
    out = []
    for n in names:
        cpu = sum(s[0] for s in slices[n])
        moves = sum(s[1] for s in slices[n])
        rel = [s[0] / b[0] for s, b in zip(slices[n], slices[names[0]])]
        out.append({"build": n, "cpu_per_game": cpu / (rounds * games),
                    "moves_per_game": moves / (rounds * games), "cpu_per_move": cpu / moves,
                    "ratio_median": statistics.median(rel), "ratio_min": min(rel),
                    "ratio_max": max(rel)})
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="where builds live")
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build a commit's engines as package core_<name>")
    b.add_argument("commit")
    b.add_argument("name")
    b.add_argument("--modules", default="", help="MEEPLELAB_MODULES: only these modules")
    c = sub.add_parser("compare", help="the same games under each build, interleaved")
    c.add_argument("names", nargs="+")
    c.add_argument("--game", required=True)
    c.add_argument("--agent", default="mcts")
    c.add_argument("--players", type=int, default=3)
    c.add_argument("--games", type=int, default=2, help="games per build per round")
    c.add_argument("--rounds", type=int, default=6)
    c.add_argument("--seed", type=int, default=777)
    args = ap.parse_args(argv)
    if args.command == "build":
        print(build(args.commit, args.name, args.root, args.modules))
        return
    print(f"{args.game}, {args.players} players, {args.agent}, {args.rounds} rounds of "
          f"{args.games} games; load average {os.getloadavg()[0]:.1f}")
    for r in compare(args.names, args.root, args.game, args.agent, args.players, args.games,
                     args.rounds, args.seed):
        print(f"{r['build']:<12}{1000 * r['cpu_per_game']:9.0f} CPU ms a game"
              f"{r['moves_per_game']:8.1f} moves{1e6 * r['cpu_per_move']:8.0f} CPU us a move"
              f"   x first, per round: median {r['ratio_median']:.3f} "
              f"[{r['ratio_min']:.3f}, {r['ratio_max']:.3f}]")


if __name__ == "__main__":
    main()
