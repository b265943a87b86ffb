"""Ray clusters whose nodes are hosts of their own, on this one machine: each node is started
with the `ray start` command line docs/deployment.md gives, inside a Linux network namespace
of its own (its own address on a bridge, like a host on a LAN), so a node's loss is a host's
loss: every process of that namespace, found by the namespace (`ip netns pids`), killed.

Used by tests/services/test_cluster.py and benchmarks/cluster_balance.py.  Needs root and
iproute2 (CI runs as root): where namespaces cannot be made, `NamespacesUnavailable` says
why, and a test fails with that reason (never skips).  Everything made here is undone on
exit, pass or fail: every process of every namespace killed by PID, then the namespaces,
links and bridge deleted, the nodes' folders removed; never `ray stop` (it would stop every
Ray on the machine)."""
from __future__ import annotations

import contextlib
import ipaddress
import os
import random
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

GCS_PORT = 6379  # each node has ports of its own: the fixed ports of the docs cannot collide
OBJECT_STORE_BYTES = 80 * 2**20  # Ray's floor is 75 MiB; these nodes move little data
# How fast the head declares a killed node dead (Ray's defaults: a check every 3 s, 5 misses):
# tests wait for it, and the product's behaviour after it is the same.
FAST_DEATH_ENV = {"RAY_health_check_period_ms": "1000", "RAY_health_check_timeout_ms": "1000",
                  "RAY_health_check_failure_threshold": "3"}


class NamespacesUnavailable(RuntimeError):
    """This machine (or user) cannot make network namespaces; the message says why."""


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check,
                          timeout=30)


def require_namespaces() -> None:
    """NamespacesUnavailable naming the reason unless this process can make namespaces."""
    if os.geteuid() != 0:
        raise NamespacesUnavailable(f"network namespaces need root (uid {os.geteuid()})")
    if shutil.which("ip") is None:
        raise NamespacesUnavailable("the `ip` command (iproute2) is not installed")


def _free_subnet() -> ipaddress.IPv4Network:
    """A /24 of 10.0.0.0/8 that no address or route of this machine touches."""
    used = []
    for line in _ip("-4", "-o", "addr").stdout.splitlines() + \
            _ip("-4", "route").stdout.splitlines():
        for word in line.split():
            with contextlib.suppress(ValueError):
                used.append(ipaddress.ip_network(word, strict=False))
    rng = random.Random()  # a fresh seed: two test runs at once pick different nets
    for _ in range(200):
        net = ipaddress.ip_network(f"10.{rng.randrange(200, 250)}.{rng.randrange(256)}.0/24")
        if not any(net.overlaps(u) for u in used if u.version == 4 and u.prefixlen > 0):
            return net
    raise NamespacesUnavailable("no free /24 in 10.200.0.0-10.249.255.255")


@dataclass
class Host:
    """A network namespace with one address on the bridge: a host of the LAN."""
    netns: str
    address: str

    def command(self, argv: list[str]) -> list[str]:
        """`argv` run inside this host's namespace."""
        return ["ip", "netns", "exec", self.netns, *argv]

    def pids(self) -> list[int]:
        """Every process living in this host's namespace."""
        done = _ip("netns", "pids", self.netns, check=False)
        return [int(p) for p in done.stdout.split()]

    def kill(self, timeout: float = 30) -> list[int]:
        """SIGKILLs every process of the namespace (again, until none is left: a dying
        parent may have started a child meanwhile); returns their PIDs."""
        killed: list[int] = []
        deadline = time.monotonic() + timeout
        while pids := [p for p in self.pids() if p != os.getpid()]:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            killed += [p for p in pids if p not in killed]
            if time.monotonic() > deadline:
                raise AssertionError(f"processes of {self.netns} outlive SIGKILL: {pids}")
            time.sleep(0.05)
        return killed


@contextlib.contextmanager
def network(hosts: int) -> Iterator[list[Host]]:
    """`hosts` network namespaces, each with a veth on one bridge of this (root) namespace;
    the bridge holds the subnet's first address, so this namespace reaches every host too.
    On exit every process of the namespaces is killed and the namespaces, links and bridge
    are deleted."""
    require_namespaces()
    tag = f"{os.getpid() % 10000:04d}{random.randrange(256):02x}"  # names of 15 bytes at most
    bridge, made_bridge, made = f"mlb{tag}", False, []
    try:
        net = _free_subnet()
        gateway, *addresses = list(net.hosts())[:hosts + 1]
        try:
            _ip("link", "add", bridge, "type", "bridge")
        except subprocess.CalledProcessError as exc:
            raise NamespacesUnavailable(f"cannot make a bridge: {exc.stderr.strip()}") from None
        made_bridge = True
        _ip("addr", "add", f"{gateway}/{net.prefixlen}", "dev", bridge)
        _ip("link", "set", bridge, "up")
        for n, address in enumerate(addresses):
            host = Host(f"meeplelab-{tag}-{n}", str(address))
            try:
                _ip("netns", "add", host.netns)
            except subprocess.CalledProcessError as exc:
                raise NamespacesUnavailable(
                    f"cannot make a network namespace: {exc.stderr.strip()}") from None
            made.append(host)
            veth = f"mlv{tag}{n}"
            _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns",
                host.netns)
            _ip("link", "set", veth, "master", bridge, "up")
            _ip("-n", host.netns, "addr", "add", f"{address}/{net.prefixlen}", "dev", "eth0")
            _ip("-n", host.netns, "link", "set", "eth0", "up")
            _ip("-n", host.netns, "link", "set", "lo", "up")
            _ip("-n", host.netns, "route", "add", "default", "via", str(gateway))
        yield made
    finally:
        for host in made:
            host.kill()
        for host in made:  # its veth goes with it
            _ip("netns", "del", host.netns, check=False)
        if made_bridge:
            _ip("link", "del", bridge, check=False)
        left = [h.netns for h in made if h.netns in _ip("netns", "list").stdout]
        assert not left, f"network namespaces outlived the cluster: {left}"


def ray_command() -> str:
    """The `ray` command of this Python (not another Ray found first on PATH)."""
    own = Path(sys.executable).parent / "ray"
    return str(own) if own.exists() else shutil.which("ray") or "ray"


# What several nodes on one machine need and a host of its own does not (docs/deployment.md
# gives the rest): folders and memory of their own, and a `ray start` that stays to be killed.
ONE_MACHINE_FLAGS = ("--temp-dir", "--object-store-memory", "--block")


def start_args(host: Host, head: Host | None, cpus: int, temp: str) -> list[str]:
    """The `ray start` command of docs/deployment.md for a node on `host`: the head when
    `head` is None (it plays nothing: no CPUs), else a worker of `cpus` CPUs joining it."""
    common = [f"--node-ip-address={host.address}", f"--temp-dir={temp}",
              f"--object-store-memory={OBJECT_STORE_BYTES}", "--disable-usage-stats",
              "--block"]
    if head is None:
        return [ray_command(), "start", "--head", f"--port={GCS_PORT}", "--num-cpus=0",
                "--include-dashboard=false", *common]
    return [ray_command(), "start", f"--address={head.address}:{GCS_PORT}",
            f"--num-cpus={cpus}", *common]


@dataclass
class Node:
    host: Host
    head: Host | None  # the head's host (None: this is the head)
    cpus: int
    env: dict
    temp: str
    starter: subprocess.Popen
    log: Path
    role: str
    killed: list[int] = field(default_factory=list)

    def running(self, title: str) -> bool:
        """True when a process of this node runs a task whose name starts with `title`
        (Ray titles a worker that runs a task 'ray::<function name>')."""
        for pid in self.host.pids():
            with contextlib.suppress(OSError):
                if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(
                        f"ray::{title}".encode()):
                    return True
        return False

    def kill(self) -> list[int]:
        """The node's loss: SIGKILL of every process of its host (raylet, object store,
        agents, workers, and `ray start` itself)."""
        self.killed = self.host.kill()
        self.starter.wait(timeout=30)
        return self.killed


@dataclass
class Cluster:
    head: Node
    workers: list[Node]
    env: dict  # the nodes' environment, the cluster's token among it: a driver's too

    @property
    def address(self) -> str:
        """RAY_ADDRESS of a driver on the head's host (Ray's GCS address)."""
        return f"{self.head.host.address}:{GCS_PORT}"


def _start(host: Host, head: Host | None, cpus: int, env: dict, role: str) -> Node:
    temp = tempfile.mkdtemp(prefix="mlns-")  # short: Ray's unix sockets live under it
    log = Path(temp) / "ray-start.log"
    with open(log, "wb") as out:
        starter = subprocess.Popen(host.command(start_args(host, head, cpus, temp)), env=env,
                                   stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, cwd=temp)
    return Node(host, head, cpus, env, temp, starter, log, role)


# `ray start` gives a node's raylet 30 s to register (a constant of Ray's): on a loaded
# machine it may not, and the node is started again, at most this many times in all.
START_TRIES = 3
SLOW_START = b"timed out during startup"


def _wait_started(node: Node, timeout: float) -> Node:
    """The node once `ray start` says it runs (it then blocks), started again after Ray's
    own start-up timeout; AssertionError with its log otherwise."""
    deadline = time.monotonic() + timeout
    for attempt in range(1, START_TRIES + 1):
        while b"Ray runtime started" not in (log := node.log.read_bytes()):
            if node.starter.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        else:
            return node
        if not (SLOW_START in log and attempt < START_TRIES and time.monotonic() < deadline):
            raise AssertionError(f"ray start of the {node.role} on {node.host.address} "
                                 f"{'exited' if node.starter.poll() is not None else 'hung'}"
                                 f":\n{log.decode(errors='replace')[-3000:]}")
        node.host.kill()
        node.starter.wait(timeout=30)
        shutil.rmtree(node.temp, ignore_errors=True)
        again = _start(node.host, node.head, node.cpus, node.env, node.role)
        node.temp, node.starter, node.log = again.temp, again.starter, again.log
    raise AssertionError("unreachable")


@contextlib.contextmanager
def namespace_cluster(workers: int, cpus: int = 1, env: dict | None = None,
                      timeout: float = 120) -> Iterator[Cluster]:
    """A head (no CPUs) and `workers` worker nodes of `cpus` CPUs, each started with
    `ray start --block` in a network namespace of its own; `env` is the nodes' environment
    (PYTHONPATH: where their workers import the product from), plus Ray's token auth (the
    mode on, one token file of the cluster's, as docs/deployment.md has every node and
    driver share it; Ray 2.59+ turns a head's on by default).  A driver joins by the GCS
    address (`Cluster.address`) from the head's host, as `ray job submit` and a RayJob run
    one.  On exit, pass or fail: every process of every node is killed by PID (found by
    namespace), the nodes' folders removed, the network deleted."""
    nodes: list[Node] = []
    own = tempfile.mkdtemp(prefix="mlns-")
    token = Path(own) / "auth_token"
    token.touch(mode=0o600)
    token.write_text(secrets.token_hex(32))
    env = {**(env or os.environ), **FAST_DEATH_ENV, "RAY_AUTH_MODE": "token",
           "RAY_AUTH_TOKEN_PATH": str(token)}
    env.pop("RAY_AUTH_TOKEN", None)
    # a local Ray of this process (services.runner.local_ray_private) sets this switch, which
    # refuses multi-node clusters: these nodes are hosts of a real network
    env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)
    with network(workers + 1) as hosts:
        try:
            head = _start(hosts[0], None, 0, env, "head")
            nodes.append(head)
            _wait_started(head, timeout)
            nodes += [_start(h, hosts[0], cpus, env, f"worker {n}")
                      for n, h in enumerate(hosts[1:], 1)]
            for node in nodes[1:]:
                _wait_started(node, timeout)
            yield Cluster(head, nodes[1:], env)
        finally:
            for node in nodes:
                node.host.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    node.starter.wait(timeout=30)
            for folder in [node.temp for node in nodes] + [own]:
                shutil.rmtree(folder, ignore_errors=True)


TIMINGS = ("seconds", "elapsed")  # keys of a result that say how long, not what


def answer_of(result):
    """A balance search's result (`meeplelab balance --json`) less its figures of time: what
    must be identical whatever the hosts and cores."""
    if isinstance(result, dict):
        return {k: answer_of(v) for k, v in result.items() if not any(t in k for t in TIMINGS)}
    if isinstance(result, list):
        return [answer_of(v) for v in result]
    return result
