"""End-to-end pipeline benchmark: a Maori random-agent experiment on the Ray runner.

    python -m benchmarks.pipeline                 # 1,000,000 games, then a 10^8-game summary
    python -m benchmarks.pipeline --games 200000
    python -m benchmarks.pipeline --games 0 --scale-games 1000000000   # the summary only
    python -m benchmarks.pipeline --games 100000 --nodes 1,2   # local multi-node clusters
    python -m benchmarks.pipeline --games 100000 --shard-size 100 --nodes 2 --scale-games 0 \
        [--one-shard-per-task]                    # the driver's cost per task and per game
    python -m benchmarks.pipeline --completion 100,1000,8000   # learning of finished tasks

With `--nodes`, the experiment runs on real multi-node Ray clusters on this machine, one
after the other: a head without CPUs and 1, then 2, ... worker nodes of `--cpus-per-node`
CPUs (tests/ray_support.local_cluster, all on 127.0.0.1), and the scaling per added node is
printed.  Nodes on one machine share its cores: the scaling shows what Ray's scheduling,
the Parquet writes and the driver cost as nodes are added, never more than the cores there are.

With `--nodes`, each cluster's run also prints the driver's CPU per task and per game, the
tasks and shards it issued (`--one-shard-per-task`: as before tasks played several), the registry writes the job queue would make of its progress, the bytes written
per shard, and what a fresh process pays to read the figures (verify and summary).

Prints, measured in the same run:
- single-process engine throughput (core_cy.play.batch.play in this process, no Ray);
- end-to-end games/s of run_experiment (Ray tasks + Parquet writes), and its ratio to twice
  the single-process rate (goal >= 0.90 on a 2-core machine);
- Ray start time and time from submission to the first progress with games done (goal < 10 s);
- aggregation time (pipelines.summary) as a share of the simulation time (goal <= 2%);
- peak RSS of the driver and of the whole process tree (Ray processes included), sampled;
- at scale (--scale-games, default 10^8): the summary of an experiment of that many games in
  shards of --scale-shard games (synthetic: one real shard of that size and its statistics
  table, hard-linked once per shard, so the files have the real shape and take no space),
  read cold (a fresh process: every shard's table read) and as interim looks after a new
  shard with 1%, 10%, 50% and 100% of the shards written (goal: <= 2 s cold, and a look's
  cost independent of the games already played); then the comparisons of a two-arm
  experiment of as many games (compare_at_scale: pair tables, interim comparison looks with
  the stop rule's decided, a cold compare and agent_summary).
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pyarrow as pa

from tests.ray_support import LOOPBACK_ENV, local_cluster  # noqa: E402

os.environ.update(LOOPBACK_ENV)  # before Ray is imported: drivers of 127.0.0.1 clusters

import core_cy  # noqa: E402
from core_cy.play import batch  # noqa: E402

import pipelines  # noqa: E402
from pipelines import paired, sufficient  # noqa: E402
from pipelines.shard_tables import pair_table, read_stored, table_bytes  # noqa: E402
from services import runner  # noqa: E402
from services.runner import init_ray, run_experiment  # noqa: E402
from services.shard import write_statistics  # noqa: E402
from services.spec import ExperimentSpec  # noqa: E402
from pipelines.folder import (STATS_SUFFIX, cell_dir, filesystem, pair_path,  # noqa: E402
                              shard_name, write_shard)
from services.worker import PROGRESS_INTERVAL_S  # noqa: E402


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree(root: int) -> set[int]:
    """`root` and all its descendants (from /proc, Linux)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    tree, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in tree:
                tree.add(child)
                frontier.append(child)
    return tree


def _tree_rss_kib(root: int) -> int:
    return sum(_rss_kib(p) for p in _tree(root))


def _name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline") as f:
            return f.read().replace("\0", " ")[:100]
    except OSError:
        return "?"


def _cpu_seconds(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def tree_cpu_seconds() -> dict[int, float]:
    """CPU seconds used so far by this process and every descendant (Ray's included)."""
    return {p: _cpu_seconds(p) for p in _tree(os.getpid())}


class RssSampler(threading.Thread):
    def __init__(self, every: float = 1.0):
        super().__init__(daemon=True)
        self.every, self.peak, self.stop = every, 0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.peak = max(self.peak, _tree_rss_kib(os.getpid()))
            self.stop.wait(self.every)


def single_process_rate(players: int, games: int) -> float:
    game = core_cy.load("maori")
    batch.play(game, players, {}, "random", seed=1, start=0, count=200)  # warm up
    t = time.perf_counter()
    batch.play(game, players, {}, "random", seed=1, start=0, count=games)
    return games / (time.perf_counter() - t)


class _CountedTasks:
    """services.runner.play_shards, counting the tasks and the shards they play."""

    def __init__(self):
        self.tasks, self.shards, self.real = 0, 0, runner.play_shards

    def remote(self, job):
        self.tasks += 1
        self.shards += len(job["shards"])
        return self.real.remote(job)


def run(spec: ExperimentSpec, out: str, verbose: bool = False) -> dict:
    """Plays `spec` on the Ray this process is connected to; wall and CPU time, first
    progress, peak RSS of the process tree, the tasks and shards the driver issued, and the
    registry writes the job queue would make of its progress (services.worker: at most one
    per PROGRESS_INTERVAL_S while running, and the last)."""
    sampler = RssSampler()
    sampler.start()
    first, writes = {}, {"calls": 0, "writes": 0, "last": float("-inf")}
    counted = runner.play_shards = _CountedTasks()
    cpu_before = tree_cpu_seconds()
    driver_before = time.process_time()
    submitted = time.perf_counter()

    def progress(p):
        if p.done > 0 and "t" not in first:
            first["t"] = time.perf_counter() - submitted
        now = time.monotonic()
        writes["calls"] += 1
        if p.status != "running" or now - writes["last"] >= PROGRESS_INTERVAL_S:
            writes["writes"] += 1
            writes["last"] = now

    try:
        status = run_experiment(spec, out, "bench", progress=progress)
    finally:
        runner.play_shards = counted.real
    sim = time.perf_counter() - submitted
    driver = time.process_time() - driver_before
    cpu_after = tree_cpu_seconds()
    if verbose:
        for p in sorted(cpu_after, key=lambda p: cpu_before.get(p, 0.0) - cpu_after[p])[:12]:
            print(f"  cpu {cpu_after[p] - cpu_before.get(p, 0.0):7.2f} s  {_name(p)}")
    sampler.stop.set()
    sampler.join()
    assert status == "done", status
    return {"sim": sim, "cpu": sum(cpu_after[p] - cpu_before.get(p, 0.0) for p in cpu_after),
            "first": first.get("t", float("nan")), "peak_kib": sampler.peak, "driver": driver,
            "tasks": counted.tasks, "shards": counted.shards, "progress": writes["calls"],
            "writes": writes["writes"]}


def shard_report(spec: ExperimentSpec, root: str, m: dict) -> str:
    """The driver's CPU per task and per game, the tasks it issued, the registry writes, and
    the bytes written per shard (its file and its statistics table) and per game."""
    files = list(Path(root).rglob("shard-*.parquet"))
    size = sum(f.stat().st_size for f in files)
    tables = sum(f.stat().st_size for f in Path(root).rglob("shard-*.parquet.stats"))
    games = spec.total_games()
    return (f"driver CPU {m['driver']:.2f} s for {m['tasks']} tasks of {m['shards']} shards "
            f"({m['shards'] / m['tasks']:.1f} shards per task): "
            f"{1000 * m['driver'] / m['tasks']:.2f} ms per task, "
            f"{1e6 * m['driver'] / games:.1f} us per game (at most "
            f"~{games / m['driver']:,.0f} games/s and ~{m['tasks'] / m['driver']:,.0f} tasks/s "
            f"per driver core); {m['tasks'] / m['sim']:.1f} tasks/s issued; registry writes "
            f"{m['writes']} ({m['writes'] / m['sim']:.2f}/s, of {m['progress']} progress "
            f"calls); per shard {size / len(files) / 2**20:.3f} MiB of rows + "
            f"{tables / len(files) / 1024:.1f} KiB of statistics table, "
            f"{(size + tables) / games:.1f} bytes per game")


def read_cost(root: str) -> str:
    """What a fresh process pays for the figures of the finished experiment at `root`:
    checking its files against the manifest (pipelines.dataset.verify), and the summary
    (its statistics tables read and merged), CPU seconds each."""
    from pipelines import dataset

    pipelines.summary(root)  # the code paths warm (imports, Polars): what is timed is reading
    dataset._VERDICTS.clear()
    sufficient._TABLES.clear()
    sufficient._MERGED.clear()
    rows = _timed(lambda: dataset.verify(root))[1]
    dataset._VERDICTS.clear()
    tables = _timed(lambda: dataset.verify(root, rows=False))[1]
    dataset._VERDICTS.clear()
    summary = _timed(lambda: pipelines.summary(root))[1]
    shards = len(list(Path(root).rglob("shard-*.parquet")))
    return (f"figures' read cost in a fresh process, {shards} shards: verify for a reader of "
            f"rows (every shard hashed) {1000 * rows:.0f} ms CPU, for a reader of the tables "
            f"(tables hashed, shards as written not read) {1000 * tables:.0f} ms CPU; summary "
            f"(its verify included) {1000 * summary:.0f} ms CPU = "
            f"{1000 * summary / shards:.2f} ms per shard")


def on_clusters(spec: ExperimentSpec, nodes: list[int], cpus: int, single: float,
                single_cpu: float, verbose: bool) -> None:
    """The experiment on a local cluster of a head and each number of worker nodes."""
    import ray

    rates = {}
    for count in nodes:
        out = tempfile.mkdtemp(prefix="meeplelab-bench-")
        t = time.perf_counter()
        with local_cluster(workers=count, cpus=cpus) as (cluster, _workers):
            ray.init(address=cluster.address, log_to_driver=False, logging_level="WARNING")
            started = time.perf_counter() - t
            try:
                m = run(spec, out, verbose)
            finally:
                ray.shutdown()
            print("  " + shard_report(spec, os.path.join(out, "bench"), m))
            print("  " + read_cost(os.path.join(out, "bench")))
        games = spec.total_games()
        rates[count] = games / m["sim"]
        print(f"head + {count} worker node(s) of {cpus} CPU: cluster up in {started:.1f} s; "
              f"{games:,} games in {m['sim']:.1f} s = {rates[count]:,.0f} games/s "
              f"({rates[count] / (count * cpus * single):.2f} of {count * cpus} x single "
              f"process); {games / m['cpu']:,.0f} games per CPU-second of the process tree "
              f"({games / m['cpu'] / single_cpu:.2f} of single); first progress after "
              f"{m['first']:.1f} s; load average {os.getloadavg()[0]:.1f}")
        shutil.rmtree(out, ignore_errors=True)
    base = min(rates)
    for count in sorted(rates):
        if count != base:
            print(f"scaling {base} -> {count} worker nodes: x{rates[count] / rates[base]:.2f} "
                  f"(ideal x{count / base:.2f} if the machine had {count * cpus} idle cores; "
                  f"it has {os.cpu_count()}, shared)")


def completion_cost(counts: list[int]) -> None:
    """The driver's CPU to learn of one finished task with `count` tasks in flight: one
    ray.wait over all of them (as the driver did), against the runner's way (each task's
    future puts it on a queue: services.runner._finished).  Tasks that sleep, on a local Ray
    of one CPU: what is measured is the driver's bookkeeping, not play."""
    import queue

    import ray

    @ray.remote(num_cpus=1)
    def hold(seconds: float) -> int:
        time.sleep(seconds)
        return 1

    init_ray(num_cpus=1)
    try:
        for count in counts:
            refs = [hold.remote(600) for _ in range(count)]
            waits = _timed(lambda: [ray.wait(refs, num_returns=1, timeout=0)
                                    for _ in range(20)])[1] / 20
            finished = queue.SimpleQueue()
            done = [ray.put(1) for _ in range(1000)]
            pending = {ref: None for ref in [*refs, *done]}

            def learn():  # the callbacks (Ray's threads: this process's CPU too), the drain
                for ref in done:
                    ref.future().add_done_callback(lambda _, ref=ref: finished.put(ref))
                got = 0
                while got < len(done):
                    got += len(runner._finished(finished, pending))

            took = _timed(learn)[1]
            print(f"{count:,} tasks in flight: ray.wait over them {1000 * waits:.2f} ms CPU per "
                  f"call; the queue: {1000 * took / len(done):.4f} ms CPU per finished task")
            for ref in refs:
                ray.cancel(ref, force=True)
    finally:
        ray.shutdown()


def _linked_shards(real: str, root: str, starts: list[int], players: int, arm: str = "a",
                   spans: bool = False) -> None:
    """Shards `starts` of `arm`: hard links to the real shard at `real` and its table (with
    `spans`, a table of its own saying the shard holds games start.., for pairing)."""
    folder = cell_dir(root, arm, players)
    os.makedirs(folder, exist_ok=True)
    for start in starts:
        path = os.path.join(folder, shard_name(start))
        os.link(real, path)
    for start in starts:  # every table after its shard, as the task writes them
        path = os.path.join(folder, shard_name(start))
        if spans:  # the table says which games the shard holds: a copy of its own
            with open(real + STATS_SUFFIX, "rb") as f:
                table, described = read_stored(f.read())
            first, last = described["game_index"]
            described["game_index"] = [start + first, start + last]
            with open(path + STATS_SUFFIX, "wb") as f:
                f.write(table_bytes(table, described))
        else:
            os.link(real + STATS_SUFFIX, path + STATS_SUFFIX)


def _timed(fn) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def at_scale(games: int, shard: int, players: int, spec: ExperimentSpec) -> None:
    """The summary and interim looks of a synthetic experiment of `games` games."""
    work = tempfile.mkdtemp(prefix="meeplelab-scale-")
    try:
        fs, base = filesystem(work)
        t = time.process_time()
        rows = batch.play(core_cy.load("maori"), players, seed=1, start=0, count=shard)
        played = time.process_time() - t
        table = pa.Table.from_batches([rows])
        entry = write_shard(table, fs, base, 0, shard)
        real = os.path.join(base, entry["path"])
        took = _timed(lambda: write_statistics(table, fs, base, entry))
        stats_bytes = os.path.getsize(real + STATS_SUFFIX)
        print(f"at scale: one real shard of {shard:,} games ({os.path.getsize(real) / 2**20:.2f}"
              f" MiB) played in {played:.1f} CPU s; its statistics table "
              f"({stats_bytes / 1024:.1f} KiB) written in {1000 * took[1]:.0f} ms CPU = "
              f"{100 * took[1] / played:.2f}% of its play")
        count = games // shard
        root = os.path.join(base, "scale")
        look = spec.look(interim=True)
        marks = sorted({max(1, count // 100), max(1, count // 10), max(1, count // 2), count})
        written = 0
        for mark in marks:
            _linked_shards(real, root, [shard * i for i in range(written, mark - 1)], players)
            if mark > 1:
                sufficient.statistics(root)  # the looks before this one
            _linked_shards(real, root, [shard * (mark - 1)], players)
            wall, cpu = _timed(lambda: pipelines.summary(root, look=look))
            written = mark
            print(f"  interim look after a new shard, {mark:,} shards ({mark * shard:,} games)"
                  f" written: {1000 * wall:.0f} ms wall, {1000 * cpu:.0f} ms CPU")
        sufficient._TABLES.clear()
        sufficient._MERGED.clear()
        wall, cpu = _timed(lambda: pipelines.summary(root))
        print(f"summary of {count * shard:,} games in {count:,} shards, cold (every table "
              f"read): {wall:.2f} s wall, {cpu:.2f} s CPU (goal <= 2 s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _stored_pairs(root: str, starts: list[int], players: int, table: pa.Table) -> None:
    """The pair tables of arm 'b' against 'a' for shards `starts`, stored as a look that
    computed them would (one real pair table, described as each pair's)."""
    fs, base = filesystem(root)
    facts = {"cooperative": False, "safety_end_reasons": list(
        core_cy.load("maori").safety_end_reasons)}
    for start in starts:
        shards = [fs.get_file_info(os.path.join(cell_dir(base, arm, players),
                                                shard_name(start))) for arm in "ba"]
        path = pair_path(base, *(os.path.relpath(s.path, base) for s in shards))
        paired._store_pair(fs, path, table, paired._described(base, shards, facts))


def _comparison_look(root: str, look) -> None:
    pipelines.compare(root, "a", look=look)
    pipelines.decided(root, "a", look)


def compare_at_scale(games: int, shard: int, players: int, spec: ExperimentSpec) -> None:
    """Comparisons (compare and the stop rule's decided) of a synthetic two-arm experiment
    of `games` games (half per arm): the pair table of one pair of shards computed from
    their rows, interim looks after a new pair of shards with 1%, 10%, 50% and 100% of the
    shards written, and a cold look (every stored pair table and statistics table read)."""
    work = tempfile.mkdtemp(prefix="meeplelab-pairs-")
    try:
        fs, base = filesystem(work)
        real = {}
        for arm, seed in (("a", 1), ("b", 2)):
            rows = pa.Table.from_batches([batch.play(core_cy.load("maori"), players, seed=seed,
                                                     start=0, count=shard, arm=arm)])
            entry = write_shard(rows, fs, base, 0, shard)
            write_statistics(rows, fs, base, entry)
            real[arm] = (rows, os.path.join(base, entry["path"]))
        safety = list(core_cy.load("maori").safety_end_reasons)
        wall, cpu = _timed(lambda: pair_table(real["b"][0], real["a"][0], safety))
        pair = pair_table(real["b"][0], real["a"][0], safety)
        print(f"comparisons at scale: the pair table of two shards of {shard:,} games "
              f"computed from their rows in {1000 * cpu:.0f} ms CPU (once per pair of "
              f"shards, in the first look after both are written)")
        count = games // shard // 2
        root = os.path.join(base, "scale")
        look = spec.look(interim=True)
        marks = sorted({max(1, count // 100), max(1, count // 10), max(1, count // 2), count})
        written = 0
        for mark in marks:
            older = [shard * i for i in range(written, mark - 1)]
            for arm in "ab":
                _linked_shards(real[arm][1], root, older, players, arm, spans=True)
            _stored_pairs(root, older, players, pair)
            if mark > 1:
                _comparison_look(root, look)  # the looks before this one
            for arm in "ab":
                _linked_shards(real[arm][1], root, [shard * (mark - 1)], players, arm,
                               spans=True)
            wall, cpu = _timed(lambda: _comparison_look(root, look))
            written = mark
            print(f"  interim comparison look (compare + decided) after a new pair of shards, "
                  f"{2 * mark * shard:,} games written: {1000 * wall:.0f} ms wall, "
                  f"{1000 * cpu:.0f} ms CPU (the new pair computed from its rows)")
        for cache in (sufficient._TABLES, sufficient._MERGED, paired._PAIRS, paired._MERGED,
                      paired._SPANS):
            cache.clear()
        wall, cpu = _timed(lambda: pipelines.compare(root, "a"))
        print(f"compare of {2 * count * shard:,} games in {2 * count:,} shards, cold (every "
              f"statistics and pair table read): {wall:.2f} s wall, {cpu:.2f} s CPU")
        wall, cpu = _timed(lambda: pipelines.agent_summary(root))
        print(f"agent_summary of the same after it (statistics merged): {1000 * wall:.0f} ms "
              f"wall, {1000 * cpu:.0f} ms CPU")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=1_000_000)
    ap.add_argument("--players", type=int, default=3)
    ap.add_argument("--shard-size", type=int, default=5000)
    ap.add_argument("--single-games", type=int, default=20000,
                    help="games for the single-process reference")
    ap.add_argument("--verbose", action="store_true", help="CPU seconds per process")
    ap.add_argument("--out", default=None, help="results folder (default: a temp folder)")
    ap.add_argument("--nodes", default=None, help="comma-separated worker node counts: run "
                    "on a local multi-node cluster of each size instead of a local Ray")
    ap.add_argument("--cpus-per-node", type=int, default=1)
    ap.add_argument("--one-shard-per-task", action="store_true",
                    help="every task plays one shard, as before tasks played several (the "
                    "driver's cost compared)")
    ap.add_argument("--scale-games", type=int, default=100_000_000,
                    help="games of the synthetic experiment summarised at scale (0: none)")
    ap.add_argument("--completion", default=None, help="comma-separated tasks-in-flight "
                    "counts: only the driver's cost to learn of a finished task (ray.wait over "
                    "all, against the runner's queue)")
    ap.add_argument("--scale-shard", type=int, default=50_000,
                    help="games per shard of the synthetic experiment")
    args = ap.parse_args()
    if args.one_shard_per_task:
        runner._task_size = lambda state, left, cpus: 1
    if args.completion:
        completion_cost([int(n) for n in args.completion.split(",")])
        return

    spec = ExperimentSpec.model_validate(
        {"name": "bench", "game": "maori", "players": args.players, "agents": "random",
         "games_per_arm": args.games or args.scale_games, "seed": 12345,
         "shard_size": args.shard_size})
    print(f"load average before: {os.getloadavg()[0]:.2f} (other work on the machine skews "
          "the wall-clock ratio; the CPU-time ratio below does not depend on it)")
    cpu0 = time.process_time()
    single = single_process_rate(args.players, args.single_games)
    single_cpu = (args.single_games + 200) / (time.process_time() - cpu0)
    print(f"single process (core_cy.play.batch.play): {single:,.0f} games/s wall, "
          f"{single_cpu:,.0f} games per CPU-second ({args.single_games} games)")

    if args.games == 0:
        at_scale(args.scale_games, args.scale_shard, args.players, spec)
        compare_at_scale(args.scale_games, args.scale_shard, args.players, spec)
        return
    if args.nodes:
        on_clusters(spec, [int(n) for n in args.nodes.split(",")], args.cpus_per_node, single,
                    single_cpu, args.verbose)
        return
    out = args.out or tempfile.mkdtemp(prefix="meeplelab-bench-")
    t = time.perf_counter()
    init_ray()
    ray_start = time.perf_counter() - t
    import ray
    cpus = int(ray.cluster_resources().get("CPU", 1))
    print(f"Ray started in {ray_start:.1f} s with {cpus} CPUs")

    m = run(spec, out, args.verbose)
    sim, run_cpu = m["sim"], m["cpu"]

    print(shard_report(spec, os.path.join(out, "bench"), m))
    print(read_cost(os.path.join(out, "bench")))
    t = time.perf_counter()
    table = pipelines.summary(os.path.join(out, "bench"))
    agg = time.perf_counter() - t
    assert int(table["games"][0]) == args.games

    e2e = args.games / sim
    print(f"end to end (run_experiment, {args.games:,} games, shards of {args.shard_size}): "
          f"{e2e:,.0f} games/s in {sim:.1f} s")
    print(f"ratio vs {cpus} x single process: {e2e / (cpus * single):.3f}   "
          f"(vs 2 x single: {e2e / (2 * single):.3f}; goal >= 0.90)")
    print(f"CPU efficiency: {args.games / run_cpu:,.0f} games per CPU-second of the whole "
          f"process tree = {args.games / run_cpu / single_cpu:.3f} of the single process "
          f"(1.0 = no overhead from Ray, Arrow and Parquet)")
    print(f"time to first progress: {m['first']:.2f} s after submission "
          f"(+ {ray_start:.1f} s Ray start when not already running)")
    print(f"aggregation (pipelines.summary): {agg:.3f} s = {100 * agg / sim:.2f}% of the "
          f"simulation time (goal <= 2%)")
    driver = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak RSS: driver {driver / 1024:.0f} MiB; process tree (Ray included, sampled "
          f"every 1 s) {m['peak_kib'] / 1024:.0f} MiB")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if args.out is None:
        shutil.rmtree(out, ignore_errors=True)
    if args.scale_games:
        at_scale(args.scale_games, args.scale_shard, args.players, spec)
        compare_at_scale(args.scale_games, args.scale_shard, args.players, spec)


if __name__ == "__main__":
    main()
