"""docs/balance.md's answers, played and written by one script so they cannot go stale.

    nice -n 19 python scripts/balance_answers.py play NAME [NAME ...]   # play examples/balance/NAME.json
    python scripts/balance_answers.py write                            # rewrite docs/balance.md's blocks
    python scripts/balance_answers.py check                            # exit 1 if a block is stale

`play` runs the example's balance question (services.balance.run_balance, printing what
`meeplelab balance` prints: its progress on stderr, its answer on stdout) and stores the result with the spec it answered, the commit and the CPU time
in examples/balance/answers/NAME.json.  docs/balance.md holds one block per stored answer,

    <!-- answer: NAME -->
    ...the lines `meeplelab balance` prints, rendered from the stored result...
    <!-- /answer -->

and one side-by-side table per question asked under several agents (`<!-- rungs: NAME NAME
-->`).  `write` renders them; `check` (run by tests/services/test_balance.py) fails when a
block differs from its rendering or a stored answer's spec is not its example file's any more.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "balance"
ANSWERS = EXAMPLES / "answers"
DOC = ROOT / "docs" / "balance.md"
BLOCK = re.compile(r"(<!-- (answer|rungs): ([^>]*?) -->\n)(.*?)(<!-- /\2 -->)", re.S)


def _spec_text(name: str) -> dict:
    return json.loads((EXAMPLES / f"{name}.json").read_text())


def play(name: str) -> dict:
    from services.balance import answer_lines, run_balance
    from services.cli import _job_progress
    from services.runner import Player
    from services.spec import ExperimentSpec

    raw = _spec_text(name)
    spec = ExperimentSpec.model_validate(raw)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=ROOT).stdout.strip()
    wall = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:  # as meeplelab balance: shard tasks
        player = Player(spec.game, folder, name, seed=spec.seed,
                        progress=_job_progress(sys.stderr))
        result = run_balance(spec, player)
        player.finish()
    stored = {"spec": raw, "commit": commit, "cpu_seconds": player.cpu_seconds,
              "wall_seconds": time.monotonic() - wall, "date": time.strftime("%Y-%m-%d"),
              "result": result}
    ANSWERS.mkdir(exist_ok=True)
    (ANSWERS / f"{name}.json").write_text(json.dumps(stored, indent=1) + "\n")
    print("\n".join(answer_lines(result)), flush=True)
    return stored


def _stored(name: str) -> dict:
    return json.loads((ANSWERS / f"{name}.json").read_text())


def _answer_block(name: str) -> str:
    from services.balance import answer_lines

    stored = _stored(name)
    games = sum(c["games"] + sum(k["games"] for k in c.get("confirmations", []))
                for c in stored["result"]["cells"])
    head = (f"`meeplelab balance examples/balance/{name}.json` at commit {stored['commit']} "
            f"({stored['date']}): {games:,} games, {stored['cpu_seconds']:,.0f} CPU-s in all "
            f"({stored['cpu_seconds'] / max(games, 1) * 1000:.2f} CPU-ms a game)"
            + (f", {stored['wall_seconds']:,.0f} s of wall time on the shared machine"
               if "wall_seconds" in stored else "") + "\n\n")
    return head + "".join(f"    {line}\n" for line in answer_lines(stored["result"]))


def _rungs_block(names: list[str]) -> str:
    """One row per answer of the stored results `names` (several answers of one question
    asked per strength, or one answer each): the agent, what to do, the fair value with its
    interval (an open end names the range's end it reaches) and the cost."""
    from pipelines.fair_value import bound_text

    rows = ["| agent | players | what to do | fair value | interval | games (search + "
            "confirming) | CPU-s | CPU-ms a game |",
            "|---|---|---|---|---|---|---|---|"]
    for name in names:
        stored = _stored(name)
        for cell in stored["result"]["cells"]:
            a = cell["answer"]
            lo, hi = a["range"]
            est = "-" if a["estimate"] is None else f"{a['estimate']:.2f}"
            if a["status"] != "found":
                est += f" ({a['status'].replace('_', ' ')})"
            low = bound_text(float("-inf") if a["low"] is None else a["low"], lo, hi)
            high = bound_text(float("inf") if a["high"] is None else a["high"], lo, hi)
            interval = ("; ".join(f"{p[0]:.2f}..{p[1]:.2f}" for p in a["possible"])
                        or f"{low} to {high}")
            todo = (cell.get("recommendation") or {}).get("sentence", "-").split(":")[0]
            confirming = sum(k["games"] for k in cell["confirmations"])
            rows.append(f"| {cell['agent']} | {cell['players']} | {todo} | {est} | {interval} "
                        f"| {cell['games']:,} + {confirming:,} | {cell['cpu_seconds']:,.0f} | "
                        f"{1000 * cell['cpu_seconds'] / (cell['games'] + confirming):,.2f} |")
    return "\n".join(rows) + "\n"


def render(text: str) -> str:
    def one(m):
        kind, names = m.group(2), m.group(3).split()
        if not all((ANSWERS / f"{n}.json").exists() for n in names):
            return m.group(0)            # not played yet: stale() says so
        body = _answer_block(names[0]) if kind == "answer" else _rungs_block(names)
        return m.group(1) + body + m.group(5)
    return BLOCK.sub(one, text)


def stale() -> list[str]:
    """What is out of date: blocks that differ from their rendering, answers whose spec is
    not their example file's."""
    text = DOC.read_text()
    problems = []
    for m in BLOCK.finditer(text):
        for name in m.group(3).split():
            if not (ANSWERS / f"{name}.json").exists():
                problems.append(f"{name}: no stored answer (play it)")
            elif _stored(name)["spec"] != _spec_text(name):
                problems.append(f"{name}: examples/balance/{name}.json changed since its answer "
                                "was played (play it again)")
    if not problems and render(text) != text:
        problems.append("docs/balance.md differs from its stored answers (write it)")
    return problems


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ("play", "write", "check"):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[0] == "play":
        for name in argv[1:]:
            stored = play(name)
            print(f"{name}: {stored['cpu_seconds']:.0f} CPU-s", file=sys.stderr)
    if argv[0] in ("play", "write"):
        DOC.write_text(render(DOC.read_text()))
    problems = stale()
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
