"""The service under load and under abuse, on loopback only (bounded in time and clients).

    python -m benchmarks.api_load                  # 50 clients for 20 s
    python -m benchmarks.api_load --clients 50 --seconds 20
    python -m benchmarks.api_load --synchronized   # every client starts in the same instant
    python -m benchmarks.api_load --load-only      # only part 3 (quicker, for comparisons)

Starts `meeplelab serve` on 127.0.0.1 with a token and a fresh registry, then measures:
1. the must-show: a submit without the token (401); with it, a submit of 10^12 games (422)
   and its latency; the API process's RSS before and after;
2. a 10^9-game experiment (the default limit) running: the API process's RSS after a while
   (shards are generated lazily, so it must not grow with the games), then its cancel latency;
3. `--clients` concurrent dashboard clients polling, while an experiment runs, what the
   dashboard polls: the list, the running experiment's status and interim summary, and the
   summary of a finished experiment: p50/p95/p99 latency and errors (goal: p99 < 200 ms, 0).

Each client polls every 0.5 s after its last answer (the dashboard polls every second, and its
results only every fifth time: this is twice its rate, half of it summaries).  Clients start at
random instants within the first poll interval, as dashboards opened by different people do;
--synchronized starts all of them in the same instant, a burst that stays in step.  The clients
share one aiohttp session in this process (about 0.2 ms of CPU per request; httpx's async
client took 1.2-1.8 ms, more than the server, and its queue of answers waiting for this one
process counted as latency that 50 browsers would not see).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import httpx

from benchmarks import ROOT  # noqa: E402
from benchmarks.pipeline import _cpu_seconds, _rss_kib, _tree_rss_kib  # noqa: E402
from tests.service_support import INFO, small_spec  # noqa: E402

HOST = "127.0.0.1"  # loopback only
POLL_S = 0.5  # a client's pause between its answer and its next request
TOKEN = "api-load-token-of-the-benchmark"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _serve(workdir: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "MEEPLELAB_DB": str(workdir / "r.db"),
           "MEEPLELAB_RESULTS": str(workdir / "results"), "MEEPLELAB_TOKEN": TOKEN,
           "MEEPLELAB_MAX_RUNNING": "2", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "services.cli", "serve", "--host", HOST,
                             "--port", str(port)], cwd=workdir, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def _wait_ready(client: httpx.Client, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if client.get("/readyz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise SystemExit("the service did not become ready")


def _wait_status(client, eid, statuses, timeout=300, min_done=0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        exp = client.get(f"/api/experiments/{eid}").json()
        if exp["status"] in statuses and exp["progress"]["done"] >= min_done:
            return exp
        time.sleep(0.2)
    raise SystemExit(f"{eid} still not {statuses}")


def abuse(client: httpx.Client, pid: int) -> None:
    rss0 = _rss_kib(pid)
    denied = client.post("/api/experiments", json=small_spec())
    began = time.monotonic()
    huge = client.post("/api/experiments", headers=AUTH, json=small_spec(games_per_arm=10**12))
    took = time.monotonic() - began
    print(f"submit without token: {denied.status_code}; 10^12 games with token: "
          f"{huge.status_code} in {1000 * took:.1f} ms ({huge.json()['detail'][0]['msg'][:60]}...)")
    print(f"API process RSS: {rss0 / 1024:.0f} MiB before, {_rss_kib(pid) / 1024:.0f} MiB after")

    spec = small_spec(players=INFO["min_players"], games_per_arm=5 * 10**8, shard_size=20000,
                      name="lazy")  # two arms: 10^9 games
    response = client.post("/api/experiments", headers=AUTH, json=spec)
    assert response.status_code == 201, response.text
    eid = response.json()["id"]
    _wait_status(client, eid, ("running",))
    time.sleep(15)
    exp = client.get(f"/api/experiments/{eid}").json()
    print(f"10^9-game experiment running 15 s: {exp['progress']['done']:,} games done; API "
          f"process RSS {_rss_kib(pid) / 1024:.0f} MiB, whole tree "
          f"{_tree_rss_kib(pid) / 1024:.0f} MiB")
    began = time.monotonic()
    client.post(f"/api/experiments/{eid}/cancel", headers=AUTH)
    _wait_status(client, eid, ("cancelled",))
    print(f"cancel of the running experiment took effect in {time.monotonic() - began:.2f} s")


async def _poller(client: aiohttp.ClientSession, urls: list[str], until: float,
                  latencies: dict[str, list[float]], errors: list[str], first: int,
                  delay: float) -> None:
    k = first  # clients start at different routes, as dashboards on different pages would
    await asyncio.sleep(delay)
    while time.monotonic() < until:
        url = urls[k % len(urls)]
        k += 1
        began = time.monotonic()
        try:
            async with client.get(url) as response:
                await response.read()
                if response.status != 200:
                    errors.append(f"{url}: {response.status}")
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            errors.append(f"{url}: {exc!r}")
        latencies[url].append(time.monotonic() - began)
        await asyncio.sleep(POLL_S)


def _quantiles(values: list[float]) -> str:
    values = sorted(values)
    p = lambda q: 1000 * values[min(len(values) - 1, int(q * len(values)))]  # noqa: E731
    return (f"{len(values)} requests, p50 {p(0.5):.1f} ms, p95 {p(0.95):.1f} ms, "
            f"p99 {p(0.99):.1f} ms, max {1000 * values[-1]:.1f} ms")


async def load(base: str, clients: int, seconds: float, running: str, finished: str,
               server_pid: int, synchronized: bool) -> None:
    urls = {f"/api/experiments/{running}": "status of the running experiment",
            "/api/experiments": "the list",
            f"/api/experiments/{running}/summary": "interim summary of the running one",
            f"/api/experiments/{finished}/summary": "summary of a finished one"}
    latencies: dict[str, list[float]] = {url: [] for url in urls}
    errors: list[str] = []
    starts = random.Random(1)
    delays = [0.0 if synchronized else starts.uniform(0, POLL_S) for _ in range(clients)]
    load_before, cpu_before = os.getloadavg()[0], _cpu_seconds(server_pid)
    own_before = _cpu_seconds(os.getpid())
    async with aiohttp.ClientSession(base_url=base, timeout=aiohttp.ClientTimeout(total=30),
                                     connector=aiohttp.TCPConnector(limit=clients)) as client:
        until = time.monotonic() + seconds
        await asyncio.gather(*(_poller(client, list(urls), until, latencies, errors, k,
                                       delays[k]) for k in range(clients)))
    served = sum(len(v) for v in latencies.values())
    server_cpu = _cpu_seconds(server_pid) - cpu_before
    own_cpu = _cpu_seconds(os.getpid()) - own_before
    start = "in the same instant" if synchronized else "at random instants"
    print(f"{clients} clients x {seconds:.0f} s ({start}) polling status, list and summaries "
          f"during a run: {_quantiles(sum(latencies.values(), []))}, errors {len(errors)}"
          + (f" (first: {errors[0]})" if errors else ""))
    for url, what in urls.items():
        print(f"  {what}: {_quantiles(latencies[url])}")
    print(f"API process CPU: {server_cpu:.1f} s = {1000 * server_cpu / served:.1f} ms per "
          f"request (the Ray workers playing games are other processes); load average "
          f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} "
          f"cores (other work on the machine delays every request); the clients' own CPU "
          f"{1000 * own_cpu / served:.1f} ms per request")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--synchronized", action="store_true",
                        help="start every client in the same instant (a worst case)")
    parser.add_argument("--load-only", action="store_true",
                        help="skip parts 1-2 (the abuse checks): only the polling clients")
    args = parser.parse_args()
    if not (1 <= args.clients <= 200 and 1 <= args.seconds <= 120):
        parser.error("bounded: 1-200 clients, 1-120 seconds")
    with tempfile.TemporaryDirectory(prefix="meeplelab-load-") as tmp:
        port = _free_port()
        server = _serve(Path(tmp), port)
        base = f"http://{HOST}:{port}"
        try:
            with httpx.Client(base_url=base, timeout=30) as client:
                _wait_ready(client)
                if not args.load_only:
                    abuse(client, server.pid)
                finished = client.post("/api/experiments", headers=AUTH,
                                       json=small_spec(name="finished")).json()["id"]
                _wait_status(client, finished, ("done",))
                running = client.post("/api/experiments", headers=AUTH, json=small_spec(
                    name="running", games_per_arm=10**7, shard_size=20000)).json()["id"]
                # its first shards written: the interim summary has figures (else 409)
                _wait_status(client, running, ("running",), min_done=1)
                asyncio.run(load(base, args.clients, args.seconds, running, finished,
                                 server.pid, args.synchronized))
                client.post(f"/api/experiments/{running}/cancel", headers=AUTH)
        finally:
            server.terminate()  # SIGTERM: the service stops its worker and its Ray
            server.wait(60)


if __name__ == "__main__":
    main()
