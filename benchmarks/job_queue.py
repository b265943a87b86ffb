"""The job queue against a real `meeplelab serve` (issue 38, "Must show"): a running balance
search and a plan whose pilot plays mcts(iterations=100000), each cancelled: how long until
another token's job of the same kind runs (a server with one
place per kind, so that B's job waits for it); then, on a server with the default places,
token A's long job running in every job kind while A's next waits and B's and the admin's
start, and A asking for more than its unfinished jobs while B and the admin ask for theirs.

    nice -n 19 python benchmarks/job_queue.py     # two servers on free loopback ports, ~2-4 min

The server runs the product this interpreter imports (the installed package, or the
checked build on PYTHONPATH), from an empty folder.  Results: docs/lab/ (dated, with the
commit).
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

A, B, ADMIN = "job-queue-token-a-0001", "job-queue-token-b-0002", "job-queue-admin-0003"
HEADERS = {k: {"Authorization": f"Bearer {t}"} for k, t in (("A", A), ("B", B), ("admin", ADMIN))}
ENDLESS = "mcts(iterations=100000)"
SEARCH = {"name": "gi", "game": "golden_island", "players": 2, "agents": "greedy", "seed": 3,
          "balance": {"option": "seat_bonus_gold", "seat": 0, "range": [0, 20],
                      "wave_games": 40, "max_games": 600, "confirm_games": 60}}
SPEC = {"name": "small", "game": "maori", "players": 3, "games_per_arm": 200, "seed": 1,
        "shard_size": 100}
ROUTES = {"experiment": "/api/experiments", "plan": "/api/plans", "balance": "/api/balance"}


def body(kind: str, agents: str | None = None) -> dict:
    extra = {"agents": agents} if agents else {}
    if kind == "experiment":
        return {**SPEC, **extra}
    if kind == "plan":
        return {"spec": {**SPEC, **extra}, "pilot_games": 20}
    return {**SEARCH, **extra}


def serve(folder: Path, **settings: str) -> tuple[subprocess.Popen, httpx.Client]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tokens = folder / "tokens"
    tokens.write_text(f"{A}\n{B}\n")
    env = {**os.environ, "MEEPLELAB_TOKEN": str(tokens), "MEEPLELAB_ADMIN_TOKEN": ADMIN,
           "MEEPLELAB_DB": str(folder / "r.db"), "MEEPLELAB_RESULTS": str(folder / "res"),
           **settings}
    server = subprocess.Popen([sys.executable, "-P", "-m", "services.cli", "serve", "--port",
                               str(port)], cwd=folder, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        try:
            if client.get("/readyz").status_code == 200:
                return server, client
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise RuntimeError("the server did not become ready")


def status(client, kind: str, jid: str) -> str:
    return client.get(f"{ROUTES[kind]}/{jid}").json()["status"]


def wait(client, kind: str, jid: str, statuses, limit: float = 120.0) -> float:
    began = time.monotonic()
    while status(client, kind, jid) not in statuses:
        if time.monotonic() - began > limit:
            raise RuntimeError(f"{kind} {jid} never reached {statuses}")
        time.sleep(0.01)
    return time.monotonic() - began


def cancel_probe(client, server_pid: int, kind: str) -> None:
    first = client.post(ROUTES[kind], json=body(kind, ENDLESS), headers=HEADERS["A"]).json()
    wait(client, kind, first["id"], ("running",))
    time.sleep(5)  # well into its first game of mcts(iterations=100000)
    second = client.post(ROUTES[kind], json=body(kind), headers=HEADERS["B"]).json()["id"]
    queued = status(client, kind, second)
    began = time.monotonic()
    answer = client.post(f"{ROUTES[kind]}/{first['id']}/cancel", headers=HEADERS["A"])
    answered = time.monotonic() - began
    started = wait(client, kind, second, ("running", "done"), limit=10) + answered
    print(f"{kind}: A's job playing {ENDLESS} cancelled ({answer.status_code} "
          f"{answer.json()['status']}, answered in {answered * 1000:.0f} ms); B's job, "
          f"{queued} until then, running {started * 1000:.0f} ms after the cancel",
          flush=True)
    wait(client, kind, second, ("done", "failed"), limit=240)


def running_places_probe(client, kind: str) -> None:
    """A's long job takes A's one place; A's next waits; B's and the admin's start."""
    # an experiment's long run: many short shards (Ray serves the shard tasks in the order
    # they come, so one of minutes-long shards would hold B's first shards that long)
    slow = {**SPEC, "games_per_arm": 10**6} if kind == "experiment" else body(kind, ENDLESS)
    long = client.post(ROUTES[kind], json=slow, headers=HEADERS["A"]).json()
    wait(client, kind, long["id"], ("running",))
    nxt = client.post(ROUTES[kind], json=body(kind), headers=HEADERS["A"]).json()["id"]
    began = time.monotonic()
    others = {who: client.post(ROUTES[kind], json=body(kind), headers=HEADERS[who]).json()["id"]
              for who in ("B", "admin")}
    started = {who: wait(client, kind, jid, ("running", "done")) for who, jid in others.items()}
    for jid in others.values():
        wait(client, kind, jid, ("done", "failed"), limit=240)
    ended = time.monotonic() - began
    print(f"{kind}: " + ", ".join(f"{who}'s job running {started[who] * 1000:.0f} ms after it "
                                  f"was sent" for who in others)
          + f"; both {'/'.join(status(client, kind, j) for j in others.values())} within "
          f"{ended:.1f} s, while A's long job was {status(client, kind, long['id'])} and A's "
          f"next {status(client, kind, nxt)}", flush=True)
    for jid in (long["id"], nxt):
        client.post(f"{ROUTES[kind]}/{jid}/cancel", headers=HEADERS["A"])


def places_probe(client) -> None:
    for kind in ROUTES:
        codes = {who: [client.post(ROUTES[kind], json=body(kind), headers=HEADERS[who])
                       for _ in range(5 if who == "A" else 2)] for who in HEADERS}
        for who, sent in codes.items():
            for r in sent:
                if r.status_code < 300:
                    client.post(f"{ROUTES[kind]}/{r.json()['id']}/cancel",
                                headers=HEADERS["admin"])
        text = "; ".join(f"{who}: " + " ".join(str(r.status_code) for r in sent)
                         for who, sent in codes.items())
        print(f"{kind} unfinished jobs (4 per token): {text}", flush=True)


def main() -> None:
    one_place = {"MEEPLELAB_MAX_RUNNING_PLANS": "1", "MEEPLELAB_MAX_RUNNING_BALANCE": "1"}
    for settings, probe in ((one_place, "cancel"), ({}, "places")):
        with tempfile.TemporaryDirectory() as folder:
            server, client = serve(Path(folder), **settings)
            try:
                if probe == "cancel":
                    for kind in ("balance", "plan"):
                        cancel_probe(client, server.pid, kind)
                else:
                    for kind in ROUTES:
                        running_places_probe(client, kind)
                    places_probe(client)
            finally:
                os.killpg(server.pid, signal.SIGTERM)
                server.wait(60)


if __name__ == "__main__":
    main()
