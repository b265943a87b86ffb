"""Hostile input against real `meeplelab serve` processes on loopback (issue 27): every probe
of the issue replayed, one line each: what was sent, the status (or outcome), the time and the
server's resident memory after it.

    nice -n 19 python benchmarks/hostile.py            # two servers on free ports, ~1-2 min

Servers: one on the token-less loopback default, one with its registry on a tmpfs filled up
for 10 s (needs root; skipped otherwise), one with a file of two tokens and an admin
token (quotas, ownership, plans: a running pilot cancelled, and SIGTERM while another
plays).  Only 127.0.0.1 is used; everything started is stopped at the end.
Results: docs/lab/ (dated, with the commit).
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from services.registry import FINISHED

ROOT = Path(__file__).resolve().parents[1]
GAME = "maori"
TOKENS = ("hostile-token-one", "hostile-token-two")
ADMIN = "hostile-admin-token"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:")) / 1024
    except (OSError, StopIteration):
        return float("nan")


def _session(sid: int) -> list[int]:
    """Live processes of a session (the server was started in its own)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[3]) == sid and fields[0] != "Z":
                    found.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return found


class Server:
    def __init__(self, folder: Path, **env: str):
        self.port = _port()
        self.base = f"http://127.0.0.1:{self.port}"
        environ = {**os.environ, "PYTHONPATH": str(ROOT), "MEEPLELAB_DB": str(folder / "r.db"),
                   "MEEPLELAB_RESULTS": str(folder / "res"), **env}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "services.cli", "serve", "--host", "127.0.0.1", "--port",
             str(self.port)], cwd=folder, env=environ, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        raise RuntimeError("the server did not become ready")

    @property
    def client(self) -> httpx.Client:
        """A kept-alive client (times are the server's, not a new connection's)."""
        if getattr(self, "_client", None) is None:
            self._client = httpx.Client(base_url=self.base, timeout=120)
        return self._client

    @property
    def rss(self) -> float:
        return _rss_mib(self.process.pid)

    def stop(self) -> tuple[float, int | None, int]:
        """SIGTERM: (seconds to exit, exit status, processes of its session left)."""
        began = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(60)
        except subprocess.TimeoutExpired:
            code = None
        seconds = time.monotonic() - began
        time.sleep(1)
        left = _session(self.process.pid)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return seconds, code, len(left)


def line(probe: str, outcome, seconds: float, server: Server, note: str = "") -> None:
    print(f"{probe:<58} {str(outcome):<14} {seconds * 1000:9.1f} ms  "
          f"RSS {server.rss:7.1f} MiB  {note}", flush=True)


def spec(**extra) -> dict:
    base = {"name": "hostile", "game": GAME, "players": 3, "games_per_arm": 200,
            "shard_size": 100, "seed": 1}
    base.update(extra)
    return base


def post(server: Server, path: str, body, headers=None, timeout=120) -> httpx.Response:
    content = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return server.client.post(path, content=content, timeout=timeout,
                              headers={"Content-Type": "application/json", **(headers or {})})


def timed(probe: str, server: Server, call, note=lambda r: "") -> httpx.Response:
    began = time.monotonic()
    response = call()
    line(probe, response.status_code, time.monotonic() - began, server, note(response))
    return response


def while_healthz(server: Server, call) -> tuple[httpx.Response, float, float]:
    """(the answer, its seconds, the slowest /healthz answered meanwhile)."""
    probe = httpx.Client(base_url=server.base, timeout=60)
    probe.get("/healthz")  # connected before the call starts
    with ThreadPoolExecutor(2) as pool:
        future = pool.submit(lambda: (time.monotonic(), call(), time.monotonic()))
        slowest = 0.0
        while not future.done():
            began = time.monotonic()
            probe.get("/healthz")
            slowest = max(slowest, time.monotonic() - began)
            time.sleep(0.01)
        began, response, ended = future.result()
    return response, ended - began, slowest


def open_server_probes(server: Server) -> None:
    timed("1. arm name a lone surrogate", server,
          lambda: post(server, "/api/experiments", spec(arms={"\udfff": {}})))
    timed("1. then GET /api/experiments", server,
          lambda: server.client.get("/api/experiments"))
    timed("1. cross-site text/plain POST", server,
          lambda: server.client.post("/api/experiments", content=json.dumps(spec()),
                             headers={"Content-Type": "text/plain"}))
    timed("1. POST with Origin: http://evil.example", server,
          lambda: post(server, "/api/experiments", spec(),
                       {"Origin": "http://evil.example"}))
    timed("1. Host: evil.example (DNS rebinding)", server,
          lambda: server.client.get("/api/experiments",
                            headers={"Host": "evil.example"}))
    timed("1. name of 900 KB", server,
          lambda: post(server, "/api/experiments", spec(name="n" * 900_000)))
    for name, text in (("agent 'random' + 60,000 spaces + 'x'", "random" + " " * 60_000 + "x"),
                       ("agent 'random(' + 60,000 spaces + 'x'", "random(" + " " * 60_000),
                       ("agent 'random' + 1,000,000 spaces + 'x'",
                        "random" + " " * 1_000_000 + "x")):
        response, seconds, slowest = while_healthz(
            server, lambda: post(server, "/api/experiments", spec(agents=text)))
        line(f"3. {name}", response.status_code, seconds, server,
             f"slowest /healthz meanwhile {slowest * 1000:.0f} ms")
    sweep = {"mode": ["basic", "pro"] * 50_000}
    response, seconds, slowest = while_healthz(
        server, lambda: post(server, "/api/plans", {"spec": spec(sweep=sweep)}))
    line("3. plan with a 100,000-cell sweep", response.status_code, seconds, server,
         f"slowest /healthz meanwhile {slowest * 1000:.0f} ms")
    timed("7. JSON nested 1,000 deep", server,
          lambda: post(server, "/api/experiments",
                       '{"name": "x", "game": "maori", "players": 3, "arms": {"a": '
                       '{"mode": ' + "[" * 1000 + "]" * 1000 + "}}}"))
    timed("7. shard_size 10^6", server,
          lambda: post(server, "/api/experiments", spec(shard_size=10**6)))
    timed("7. list ?limit=10^6", server,
          lambda: server.client.get("/api/experiments", params={"limit": 10**6}))
    slow = post(server, "/api/experiments", spec(games_per_arm=400, shard_size=400,
                                                 agents="mcts(iterations=200)")).json()["id"]
    began, seen = time.monotonic(), 0
    while time.monotonic() - began < 60:
        record = server.client.get(f"/api/experiments/{slow}").json()
        seen = record["progress"]["done"]
        if 0 < seen < 400 and record["status"] == "running":
            break
        time.sleep(0.2)
    line("7. one slow shard of 400 games: progress while it plays", f"{seen}/400",
         time.monotonic() - began, server, "(the first report of games played)")
    server.client.post(f"/api/experiments/{slow}/cancel")
    done = post(server, "/api/experiments", spec(games_per_arm=2000, shard_size=500)).json()
    deadline = time.monotonic() + 120
    while server.client.get(f"/api/experiments/{done['id']}").json()["status"] != "done":
        assert time.monotonic() < deadline
        time.sleep(0.3)
    began = time.monotonic()
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda k: httpx.get(
            f"{server.base}/api/experiments/{done['id']}/summary",
            params={"delta": 0.001 + k / 1000}, timeout=120).status_code, range(96)))
    line("7. 96 parallel summaries, each a new ?delta=", f"{answers.count(200)}x200",
         time.monotonic() - began, server)


def token_server_probes(server: Server) -> list[str]:
    """The probes of a served process with tokens; returns the ids of the plans queued."""
    one, two = ({"Authorization": f"Bearer {t}"} for t in TOKENS)
    admin = {"Authorization": f"Bearer {ADMIN}"}
    began = time.monotonic()
    with ThreadPoolExecutor(60) as pool:
        statuses = list(pool.map(lambda _: post(server, "/api/experiments",
                                                spec(games_per_arm=10**6), one).status_code,
                                 range(60)))
    line("2. 60 concurrent submits, quota 4", f"{statuses.count(201)} accepted",
         time.monotonic() - began, server, f"{statuses.count(429)} x 429")
    mine = server.client.get("/api/experiments").json()[0]["id"]
    timed("7. another token cancels it", server,
          lambda: server.client.post(f"/api/experiments/{mine}/cancel", headers=two))
    timed("7. the admin token cancels it", server,
          lambda: server.client.post(f"/api/experiments/{mine}/cancel", headers=admin))
    plans = [timed(f"7. plan #{k + 1} of one token", server,
                   lambda: post(server, "/api/plans",
                                {"spec": spec(agents="mcts(iterations=2000)"),
                                 "pilot_games": 2000}, one)) for k in range(3)]
    plans.append(timed("7. plan of another token meanwhile", server,
                       lambda: post(server, "/api/plans", {"spec": spec()}, two)))
    return [r.json()["id"] for r in plans if r.status_code == 202]


def plan_cancel_probe(server: Server, earlier: list[str]) -> str:
    """The admin cancels the `earlier` plans; then a running pilot is cancelled: how long
    until the next plan starts (the pilot has stopped: plans play one at a time); returns
    the id of a pilot left running."""
    two = {"Authorization": f"Bearer {TOKENS[1]}"}
    slow = {"spec": spec(agents="mcts(iterations=2000)"), "pilot_games": 2000}

    def wait(pid, statuses, limit=120):
        deadline = time.monotonic() + limit
        while (status := server.client.get(f"/api/plans/{pid}").json()["status"]) not in \
                statuses and time.monotonic() < deadline:
            time.sleep(0.05)
        return status

    admin = {"Authorization": f"Bearer {ADMIN}"}
    began = time.monotonic()
    statuses = [server.client.post(f"/api/plans/{pid}/cancel", headers=admin).json()["status"]
                for pid in earlier]
    line("7. the admin token cancels the plans queued or running", statuses,
         time.monotonic() - began, server)
    first = post(server, "/api/plans", slow, admin).json()["id"]
    wait(first, ("running",))
    time.sleep(2)
    after = post(server, "/api/plans", slow, admin).json()["id"]
    refused = server.client.post(f"/api/plans/{first}/cancel", headers=two).status_code
    began = time.monotonic()
    answer = server.client.post(f"/api/plans/{first}/cancel", headers=admin)
    status = wait(after, ("running", "done", "failed"))
    line("7. cancel a running pilot: the next plan starts", f"{answer.status_code} {status}",
         time.monotonic() - began, server, f"(mcts(iterations=2000); another token: "
         f"{refused})")
    return after


def registry_outage_probe(folder: Path, seconds: float = 10.0) -> None:
    """The registry's disk is full for `seconds` (a small tmpfs filled up; mounting it needs
    root, skipped otherwise) while an experiment runs: /readyz says so meanwhile, the
    run's end is written once the disk is back, and the next experiment runs."""
    disk = folder / "registry-disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(disk)],
                      capture_output=True).returncode != 0:
        print(f"{'4. registry disk full for 10 s':<58} skipped (mounting a tmpfs needs "
              "root)")
        return
    try:
        (folder / "outage").mkdir()
        server = Server(folder / "outage", MEEPLELAB_DB=str(disk / "r.db"))
        try:
            eid = post(server, "/api/experiments", spec(games_per_arm=20000,
                                                        shard_size=1000)).json()["id"]
            while server.client.get(f"/api/experiments/{eid}").json()["status"] != \
                    "running":
                time.sleep(0.2)
            filler = disk / "filler"
            with open(filler, "wb") as f:  # the disk full (the WAL grows with each write)
                try:
                    while True:
                        f.write(b"\0" * (1 << 20))
                        f.flush()
                except OSError:
                    pass
            began, statuses = time.monotonic(), []
            while time.monotonic() - began < seconds:
                statuses.append(server.client.get("/readyz", timeout=30).status_code)
                time.sleep(0.5)
            filler.unlink()
            runs = [[statuses[0], 0]]  # the answers in order, as (status, times) runs
            for status in statuses:
                if status != runs[-1][0]:
                    runs.append([status, 0])
                runs[-1][1] += 1
            line(f"4. registry disk full for {seconds:.0f} s: /readyz meanwhile",
                 " ".join(f"{s}x{n}" for s, n in runs), time.monotonic() - began, server,
                 "(every 0.5 s, in order)")
            began = time.monotonic()
            while server.client.get(f"/api/experiments/{eid}").json()["status"] not in \
                    FINISHED and time.monotonic() - began < 300:
                time.sleep(0.5)
            after = post(server, "/api/experiments", spec()).json()["id"]
            while server.client.get(f"/api/experiments/{after}").json()["status"] != \
                    "done" and time.monotonic() - began < 300:
                time.sleep(0.5)
            states = [server.client.get(f"/api/experiments/{e}").json()["status"]
                      for e in (eid, after)]
            line("4. then: the run, the next run, /readyz", states, time.monotonic() - began,
                 server, f"readyz {server.client.get('/readyz').status_code}")
        finally:
            server.stop()
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="meeplelab-hostile-") as folder:
        folder = Path(folder)
        began = time.monotonic()
        missing = subprocess.run(
            [sys.executable, "-m", "services.cli", "serve", "--port", str(_port())],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT),
                           "MEEPLELAB_TOKEN": "/no/such/file"},
            capture_output=True, text=True, timeout=120)
        print(f"{'5. MEEPLELAB_TOKEN=/no/such/file meeplelab serve':<58} "
              f"{'exit ' + str(missing.returncode):<14} "
              f"{(time.monotonic() - began) * 1000:9.1f} ms  {missing.stderr.strip()[:60]}")
        (folder / "open").mkdir()
        server = Server(folder / "open")
        try:
            open_server_probes(server)
        finally:
            seconds, code, left = server.stop()
            print(f"{'6. SIGTERM (open server)':<58} {'exit ' + str(code):<14} "
                  f"{seconds * 1000:9.1f} ms  {left} processes left")
        registry_outage_probe(folder)
        (folder / "tokens").mkdir()
        tokens = folder / "tokens" / "tokens"
        tokens.write_text("\n".join(TOKENS) + "\n")
        server = Server(folder / "tokens", MEEPLELAB_TOKEN=str(tokens),
                        MEEPLELAB_ADMIN_TOKEN=ADMIN)
        try:
            pilot = plan_cancel_probe(server, token_server_probes(server))
            time.sleep(1)
            state = server.client.get(f"/api/plans/{pilot}").json()["status"]
            print(f"{'6. the plan pilot at SIGTERM':<58} {state}")
        finally:
            seconds, code, left = server.stop()
            print(f"{'6. SIGTERM during a plan pilot':<58} {'exit ' + str(code):<14} "
                  f"{seconds * 1000:9.1f} ms  {left} processes left")


if __name__ == "__main__":
    main()
