"""The smaller holes of issue 38 against a real `meeplelab serve`: the security headers of
every kind of answer, the summary CSV of arms named as formulas, the sockets the service's
local Ray listens on and its token file's mode, the token settings `serve` refuses at start,
`meeplelab report` with a spec.json that is not its rows', and from_dict's refusals of the
probe's state dicts.

    nice -n 19 python benchmarks/small_holes.py     # one server on a free loopback port, ~1-2 min

The server runs the product this interpreter imports (the installed package, or the checked
build on PYTHONPATH), from an empty folder with HOME in it (Ray writes ~/.ray there).
Results: docs/lab/ (dated, with the commit).
"""
from __future__ import annotations

import copy
import ipaddress
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import ray  # noqa: F401  (puts Ray's own copy of psutil on the path)
import psutil  # noqa: E402

from benchmarks.job_queue import serve

FORMULAS = ["=1+1", "@SUM(A1)", "+1+2", "-1+2"]
HEADERS = {"x-frame-options": "DENY", "x-content-type-options": "nosniff"}
TOKEN = {"Authorization": "Bearer job-queue-token-a-0001"}


def headers_probe(client: httpx.Client) -> None:
    answers = {"page /": client.get("/"), "api": client.get("/api/games"),
               "docs": client.get("/docs"), "404": client.get("/api/experiments/nope"),
               "422": client.post("/api/experiments", json={"game": "x"}, headers=TOKEN),
               "401": client.post("/api/experiments", json={}),
               "415": client.post("/api/experiments", content=b"x", headers={
                   **TOKEN, "content-type": "text/plain"}),
               "405": client.delete("/api/games")}
    bad = [name for name, r in answers.items()
           if any(r.headers.get(k) != v for k, v in HEADERS.items())
           or "frame-ancestors 'none'" not in r.headers.get("content-security-policy", "")]
    print(f"headers: {len(answers) - len(bad)} of {len(answers)} answers "
          f"({', '.join(answers)}) carry DENY, nosniff and frame-ancestors 'none'; "
          f"without: {bad}", flush=True)


def csv_probe(client: httpx.Client) -> str:
    spec = {"name": "formulas", "game": "maori", "players": 2, "games_per_arm": 40, "seed": 1,
            "arms": {arm: {"rotate_palmless": k % 2 == 0} for k, arm in enumerate(FORMULAS)}}
    eid = client.post("/api/experiments", json=spec, headers=TOKEN).json()["id"]
    while client.get(f"/api/experiments/{eid}").json()["status"] not in ("done", "failed"):
        time.sleep(0.5)
    text = client.get(f"/api/experiments/{eid}/download/summary.csv").text
    live = [cell for line in text.splitlines() for cell in line.split(",")
            if cell.startswith(("=", "+", "-", "@", "\t", "\r")) and not _number(cell)]
    arms = sorted({line.split(",")[0] for line in text.splitlines()[1:]})
    print(f"summary.csv of arms {FORMULAS}: arm cells {arms}; cells a spreadsheet would run: "
          f"{len(live)}", flush=True)
    return eid


def _number(cell: str) -> bool:
    try:
        float(cell)
        return True
    except ValueError:
        return False


def ray_probe(server_pid: int, home: Path) -> None:
    found = set()
    for process in psutil.Process(server_pid).children(recursive=True):
        try:
            found |= {(c.laddr.ip, c.laddr.port, process.name())
                      for c in process.net_connections("inet") if c.status == psutil.CONN_LISTEN}
        except psutil.Error:
            continue
    outside = [s for s in found if not _loopback(s[0])]
    names = sorted({name for _, _, name in found})
    token = home / ".ray" / "auth_token"
    mode = oct(token.stat().st_mode & 0o777) if token.exists() else "missing"
    print(f"local Ray: {len(found)} listening sockets of {names}; not on loopback: {outside}; "
          f"~/.ray/auth_token mode {mode}", flush=True)


def _loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    mapped = getattr(ip, "ipv4_mapped", None)   # ::ffff:127.0.0.1
    return ip.is_loopback or bool(mapped and mapped.is_loopback)


def token_probe(folder: Path) -> None:
    for value in ("etc/meeplelab/tokens", "file:///etc/hosts", "Q", "short-token"):
        env = {**os.environ, "MEEPLELAB_TOKEN": value, "HOME": str(folder),
               "MEEPLELAB_DB": str(folder / "t.db")}
        done = subprocess.run([sys.executable, "-P", "-m", "services.cli", "serve", "--port",
                               "1"], cwd=folder, env=env, capture_output=True, text=True,
                              timeout=120)
        last = (done.stderr.strip().splitlines() or [""])[-1]
        echoed = value in last and not value.startswith("file:")   # a file's name may be
        print(f"MEEPLELAB_TOKEN={value!r}: exit {done.returncode}, "
              f"token echoed: {echoed}; {last[:150]}", flush=True)


def report_probe(folder: Path, results: Path, eid: str) -> None:
    cases = {"a Mondo spec over Maori rows": json.dumps(
                 {"name": "m", "game": "mondo", "players": 2, "games_per_arm": 10}),
             "a spec 200,000 deep": "[" * 200_000 + "]" * 200_000}
    for name, text in cases.items():
        path = folder / "spec.json"
        path.write_text(text)
        done = subprocess.run([sys.executable, "-P", "-m", "services.cli", "report",
                               str(results / eid), "--spec", str(path), "-o",
                               str(folder / "r.html")], cwd=folder, capture_output=True,
                              text=True, timeout=300)
        print(f"report with {name}: exit {done.returncode}, "
              f"{done.stderr.count(chr(10))} line(s), traceback: {'Traceback' in done.stderr}; "
              f"{done.stderr.strip()[:150]}", flush=True)


def from_dict_probe() -> None:
    import core_cy

    def refusal(name: str, change) -> str:
        game = core_cy.load(name)
        d = game.new(max(game.min_players, 2), seed=4).to_dict()
        d = copy.deepcopy(d)
        change(d)
        try:
            back = game.from_dict(d).to_dict()
        except ValueError as exc:
            return f"refused: {str(exc)[:140]}"
        return (f"accepted, reads back exactly: {back == d} (written_notes "
                f"{d['rules'].get('written_notes')!r} -> {back['rules'].get('written_notes')!r})")

    def move_storm(d):
        d["storm"] = [(d["storm"][0] + 1) % 5, d["storm"][1]]

    def rename_part(d):
        d["parts"][0]["part"] = d["parts"][1]["part"]

    def notes_off(d):
        d["rules"]["written_notes"] = not d["rules"]["written_notes"]

    def no_rotation(d):
        d["seats"][0]["board"][0][0] = {"tile": d["pool"][0][0], "face": 0}
        d["pool"] = d["pool"][1:]

    for name, change in (("forbidden_desert", move_storm), ("forbidden_desert", rename_part),
                         ("golden_island", notes_off), ("mondo", no_rotation)):
        print(f"from_dict, {name}, {change.__name__}: {refusal(name, change)}", flush=True)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        os.environ["HOME"] = str(folder)   # the server's Ray writes its ~/.ray here
        server, client = serve(folder)
        try:
            headers_probe(client)
            eid = csv_probe(client)
            ray_probe(server.pid, folder)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(60)
        token_probe(folder)
        report_probe(folder, folder / "res", eid)
    from_dict_probe()


if __name__ == "__main__":
    main()
