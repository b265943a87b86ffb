"""Plays an experiment on Ray: one Parquet file per shard, and tasks that play one or more
consecutive shards of a cell each (about TASK_SECONDS of play: the driver's cost is per task).

The layout and schema of the results are services.storage's; the task is services.shard's.
A shard task is a pure function of its arguments (game i depends only on the seed and i),
writes each file under a temporary name in the same folder and renames it, so a retried or
restarted task can only ever produce the same files, and a file that exists is complete;
a shard's file is the same whichever task, and with whichever others, plays it.

Tasks are produced lazily (one wave at a time, one task at a time), so the driver's memory
does not grow with the number of games; a cancel is seen between any two shards read, and
kills the tasks in flight at once.

`results` is a local folder or any pyarrow.fs URI (s3://bucket/prefix, gs://...).
"""
from __future__ import annotations

import logging
import os
import posixpath
import queue
import secrets
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Callable, Iterator

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import ray

from services.shard import ProgressTally, play_shards, warm_up
from services.spec import Cell, ExperimentSpec
from services.storage import (cell_dir, experiment_path, filesystem, read_manifest,
                              remove_manifest, remove_stale_temporaries, shard_entry,
                              shard_name, shard_start, write_manifest, written_shards)

InFlight = int | Callable[[], int]  # tasks in flight: a number, or asked as a run goes (_run_wave)

__all__ = ["Budget", "Progress", "init_ray", "run_experiment", "experiment_path", "filesystem"]
log = logging.getLogger("meeplelab.runner")

# How long a failed or cancelled run waits for its killed tasks to stop before it cleans up
# (a force-cancel kills the worker process at once; within the 2 s a cancel may take).
CANCEL_WAIT_SECONDS = 1.5
# A shard task reports the games it has played about this often (services.shard), and the
# driver asks for them about every POLL_SECONDS: progress moves while a long shard plays.
REPORT_SECONDS = 2.0
POLL_SECONDS = 1.0
# The progress's rate (and so its ETA) is that of the last this many seconds of play.
RATE_WINDOW_SECONDS = 30.0
# A task plays consecutive shards of one cell for about this long (at the shards' measured
# rate), fewer when the wave's shards left shared among the CPUs are fewer (_task_size):
# the driver's cost is per task (docs/lab/scaling.md).
TASK_SECONDS = 10.0


@dataclass
class Progress:
    """What the progress callback receives (after every finished shard, as shards in flight
    report games played, and once at the end)."""

    done: int  # games played: shards written (found or by this run) and games of shards
    # still playing (their latest report; games a cancel cuts short are not counted)
    total: int  # games planned (with stop_when: the most the experiment may play)
    games_per_s: float  # games played by this run per second, over its last
    # RATE_WINDOW_SECONDS of play
    eta_s: float | None  # seconds left at that rate for the games the run is expected to
    # play: every game, or with stop_when what its rule is expected to need; None while that
    # is not known (no rate yet, or a stop rule that cannot tell), and once the run has ended
    status: str = "running"  # running | done | cancelled | failed
    error: str | None = None
    written: int | None = None  # games of the shards written (done, less those playing)
    cpu_seconds: float = 0.0  # CPU-seconds the job's shard tasks have used, as they report
    # them (finished, cut short and playing; earlier runs of the job included: Budget.spent)


@dataclass
class Budget:
    """A job's CPU budget: its shard tasks may use at most `seconds` CPU-seconds (None: no
    budget), `spent` of them by earlier runs of the job (a resume); `name` says what set it.
    Once they are spent the run issues no more shards, cancels those in flight and ends
    failed saying so; the shards written are kept, listed in its manifest and counted."""

    seconds: float | None = None
    spent: float = 0.0
    name: str = "cpu_seconds"

    def over(self, state: dict) -> bool:
        return self.seconds is not None and _cpu(state) >= self.seconds

    def message(self, state: dict) -> str:
        return (f"stopped at its CPU budget: {_cpu(state):,.1f} of {self.seconds:,g} "
                f"CPU-seconds ({self.name}) used; the {state['done']:,} games of the shards "
                "written are kept and counted (their figures are interim, valid at any look, "
                "as for a run stopped early)")


def _cpu(state: dict) -> float:
    """The CPU-seconds of a run's state: its finished shards' and those in flight so far."""
    return state["cpu"] + sum(state["cpu_playing"].values())


# ---- Ray ---------------------------------------------------------------------------------
def init_ray(num_cpus: int | None = None, address: str | None = None) -> None:
    """Starts an in-process local Ray (all cores by default), or connects to `address` (the
    caller's settings: RAY_ADDRESS for the service and the CLI).  Does nothing when Ray is
    already initialised.  A local Ray's workers are warmed up (engine modules imported)
    before this returns, so the first shards run at full speed.

    The workers get a working directory of their own (runtime_env working_dir, an empty
    folder): without one, Ray puts the driver's working directory and script folder at the
    front of every worker's sys.path, so a driver started inside a clone of this repository
    would have its workers import the uncompiled sources instead of the installed product."""
    if ray.is_initialized():
        return
    with tempfile.TemporaryDirectory(prefix="meeplelab-workers-") as empty:
        own = {"runtime_env": {"working_dir": empty}, "log_to_driver": False,
               "logging_level": logging.WARNING}
        if address:
            _connect(address, own)
            return
        cpus = num_cpus or os.cpu_count() or 1
        local_ray_private()
        # address="local": a new instance even when another Ray runs on this machine
        # (without it ray.init() joins that one, e.g. a second test run's, and refuses
        # num_cpus).
        ray.init(address="local", num_cpus=cpus, include_dashboard=False, **own)
    ray.get([warm_up.remote() for _ in range(cpus)])


# A driver's connection to a cluster that fails (the head's client server did not start, the
# head is restarting) is tried again after 1, 2, 4, ... s, at most CONNECT_TRIES times in all.
CONNECT_TRIES = 7
CONNECT_FIRST_WAIT_S = 1.0
CONNECT_MAX_WAIT_S = 30.0


def _connect(address: str, own: dict) -> None:
    """ray.init(address), tried again with backoff after a ConnectionError (what Ray raises
    for a failed connection, the client server's "Starting Ray client server failed" among
    them); the last error is raised, naming the address, once CONNECT_TRIES have failed."""
    wait = CONNECT_FIRST_WAIT_S
    for attempt in range(1, CONNECT_TRIES + 1):
        try:
            ray.init(address=address, **own)
            return
        except ConnectionError as exc:
            if ray.is_initialized():  # a half-made connection: a clean slate for the next
                ray.shutdown()
            if attempt == CONNECT_TRIES:
                raise ConnectionError(f"could not connect to the Ray cluster at {address} "
                                      f"in {CONNECT_TRIES} tries: {exc}") from exc
            log.warning("connecting to the Ray cluster at %s failed (%s: %s); trying again "
                        "in %.0f s (%d of %d)", address, type(exc).__name__,
                        " ".join(str(exc).split()), wait, attempt, CONNECT_TRIES)
            time.sleep(wait)
            wait = min(2 * wait, CONNECT_MAX_WAIT_S)


RAY_TOKEN_FILE = Path("~/.ray/auth_token")  # Ray's default token file (its token-auth docs)


def local_ray_private() -> None:
    """Before a local Ray starts: every process it starts (GCS, raylet, workers, the
    dashboard and runtime-env agents) listens on loopback only, and its token file is the
    user's alone (0600).  On Linux Ray gives a local node the machine's outward address and
    binds its servers to it; RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 makes it use 127.0.0.1, as
    on macOS and Windows: the processes Ray starts read it from the environment, this one
    from ray_constants (read when ray was imported).  Ray writes a missing token file with
    the umask's mode (0644): it is written here first, 0600, and an existing one made 0600."""
    from ray._private import ray_constants

    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    if os.environ.get("RAY_AUTH_MODE", "").lower() == "disabled" or \
            os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH"):
        return  # no token file, or the user's own
    path = RAY_TOKEN_FILE.expanduser()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_hex(32))  # 256 bits, as Ray generates its own
    os.chmod(path, 0o600)


_TALLY: dict = {}  # this driver's ProgressTally handle, per Ray job
_TALLY_LOCK = threading.Lock()


def _tally():
    """This driver's ProgressTally (one named actor, made on first use, living as long as
    the driver's Ray), or None when it cannot be had: progress then moves per shard only."""
    try:
        # the handle is kept for this Ray job: a named actor dies with its creator's handle,
        # and a run's handle dropped at its end would end the tally under the next run; made
        # under a lock, since runs start in parallel threads (a second handle made by a
        # parallel run would replace the creator's, which then dies with the first run)
        with _TALLY_LOCK:
            job = ray.get_runtime_context().get_job_id()
            if _TALLY.get("job") != job:
                _TALLY.update(job=job, handle=ProgressTally.options(
                    name="meeplelab-progress", get_if_exists=True).remote())
            return _TALLY["handle"]
    except Exception:  # noqa: BLE001  (progress is a hint: the run goes on without it)
        log.warning("no progress tally: progress moves once per finished shard",
                    exc_info=True)
        return None


# ---- the driver --------------------------------------------------------------------------
def _shards(begin: int, end: int, size: int) -> Iterator[tuple[int, int]]:
    """(start, count) of the shards that play games begin..end-1 of a cell, lazily."""
    return ((s, min(size, end - s)) for s in range(begin, end, size))


def _task_size(state: dict, left: int, cpus: int) -> int:
    """How many shards the next task plays: one until a task has finished (no rate yet:
    a long first task would hold CPUs that other jobs' tasks wait for), then about
    TASK_SECONDS of play at the seconds per shard measured so far, and at most the `left`
    shards to submit shared among the cluster's `cpus` (tasks shrink as the wave's end
    nears, so its last ones still spread over every CPU)."""
    most = max(1, -(-left // cpus))
    shards = state.get("task_shards", 0)
    if not shards:
        return 1
    per_shard = max(state["task_seconds"] / shards, 1e-6)
    return max(1, min(int(TASK_SECONDS / per_shard), most))


def _drop_damaged(fs, root: str, cells: list[Cell], written: list[set],
                  manifest: dict | None = None) -> dict[str, dict]:
    """Deletes the shards found written that are damaged or empty (storage.shard_entry:
    their page checksums), or whose bytes differ from the `manifest`'s entry, so that they
    are played again; returns the manifest entries of the sound ones, by path."""
    listed = {e["path"]: e for e in (manifest or {}).get("shards", [])}
    sound, damaged = {}, []
    for cell, names in zip(cells, written):
        folder = cell_dir(root, cell.arm, cell.players)
        for name in sorted(names):
            path = posixpath.join(folder, name)
            entry = shard_entry(fs, root, path)
            known = listed.get(entry["path"]) if entry else None
            if entry is None or (known and known["sha256"] != entry["sha256"]):
                fs.delete_file(path)
                names.discard(name)
                damaged.append(posixpath.relpath(path, root))
            else:
                sound[entry["path"]] = entry
    if damaged:
        log.warning("%d damaged or empty shards will be played again: %s", len(damaged),
                    ", ".join(damaged[:20]))
    return sound


def _list_cut_short(fs, root: str, root_uri: str, cells: list[Cell], state: dict) -> None:
    """Adds to `state` the shards that tasks stopped early (cancelled, or cut by a failure or
    the budget) had written: a task plays several shards, and those it finished are complete
    files, so a run that ends early lists and counts every shard written (each read back
    once with its page checksums verified, as a resume reads it)."""
    for cell in cells:
        folder = cell_dir(root, cell.arm, cell.players)
        for name in sorted(written_shards(root_uri, cell.arm, cell.players)):
            path = posixpath.join(folder, name)
            if posixpath.relpath(path, root) not in state["shards"]:
                entry = shard_entry(fs, root, path)
                if entry is not None:
                    state["shards"][entry["path"]] = entry
                    state["done"] += entry["games"]


def _read_games(fs, root: str, cell: Cell, start: int) -> int:
    path = posixpath.join(cell_dir(root, cell.arm, cell.players), shard_name(start))
    return pq.read_metadata(path, filesystem=fs).num_rows


def _provenance_error(spec: ExperimentSpec, fs, root: str, cell: Cell, shard: str) -> str | None:
    """Why a written shard must not be resumed (another engine version, other resolved rules
    or other agents, parameters included, than this run would play), or None.  The agents
    are compared as each row's set of full agent strings (seats rotate from game to game);
    agent parameters are no part of the rules fingerprint."""
    import core_cy
    from core_cy.agents import canonical_agent
    from core_cy.play.batch import engine_label

    game = core_cy.load(spec.game)
    agents = sorted(canonical_agent(game, a) for a in spec.agent_list(cell.players, cell))
    want = {"engine_version": engine_label(game),
            "rules_fingerprint": game.rules_fingerprint(cell.rules, cell.players),
            "seat_agent": ", ".join(agents)}
    path = posixpath.join(cell_dir(root, cell.arm, cell.players), shard)
    table = pq.read_table(path, columns=list(want), filesystem=fs)
    for column, expected in want.items():
        if column == "seat_agent":
            found = {", ".join(sorted(row)) for row in table.column(column).to_pylist()}
        else:
            found = set(table.column(column).cast(pa.string()).unique().to_pylist())
        if found != {expected}:
            return (f"cannot resume: arm {cell.arm!r} with {cell.players} players already has "
                    f"results with {column} {sorted(found)}, but this run would play "
                    f"{expected!r}; results of different engines, rules or agents are never "
                    f"pooled: start a new experiment (another name or results folder)")
    return None


def _check_provenance(spec, fs, root, cells, written) -> str | None:
    for cell, shards in zip(cells, written):
        finished = sorted(shards)
        for shard in finished[:1] + finished[-1:]:  # the first and the last
            error = _provenance_error(spec, fs, root, cell, shard)
            if error:
                return error
    return None


def _stop_check(spec: ExperimentSpec, root_uri: str, games_per_cell: int
                ) -> tuple[bool, int | None]:
    """The stop_when check between waves: (stop now, the games per cell the run is expected
    to end at, or None when that is not known).  The precision rule judges the intervals the
    finished run shows, at the run's level (pipelines.precise, spec.look); a decision rule,
    always-valid confidence sequences (pipelines.decided)."""
    import pipelines

    rule, most = spec.stop_when, spec.max_games_per_cell()
    if rule is None:
        return False, most
    if games_per_cell >= most:
        return True, games_per_cell
    last = games_per_cell + spec.games_per_arm >= most  # the next wave is the last
    if rule.half_width is not None:
        look = spec.look(interim=False)
        if games_per_cell >= rule.min_games and pipelines.precise(root_uri, rule.half_width,
                                                                   look):
            return True, games_per_cell
        need = pipelines.games_for_precision(root_uri, rule.half_width, look)
        if need is None:
            return False, most if last else None
        need = max(need, rule.min_games, games_per_cell + 1)
        return False, min(most, -(-need // spec.games_per_arm) * spec.games_per_arm)
    if games_per_cell >= rule.min_games and pipelines.decided(
            root_uri, spec.baseline_arm() if len(spec.arm_rules()) > 1 else None,
            spec.look(interim=True)):
        return True, games_per_cell
    return False, most if last else None


def _error_text(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None) or exc
    return f"{type(cause).__name__}: {cause}".strip()


def _cluster_cpus() -> int:
    return max(1, int(ray.cluster_resources().get("CPU", os.cpu_count() or 1)))


def _default_in_flight() -> int:
    return max(2, 2 * _cluster_cpus())  # keep every worker busy while results come back


class _Clock:
    """The run's progress as the callback receives it: games per second over the last
    RATE_WINDOW_SECONDS of play by this run, and the seconds left at that rate for the games
    the run is expected to play (`end` games per cell: every game without stop_when; with it,
    what the stop rule is expected to need, None while that is not known)."""

    def __init__(self, progress, cells: int, end: int | None, total: int):
        self.progress, self.cells, self.end, self.total = progress, cells, end, total
        self.samples: deque = deque([(time.monotonic(), 0)])

    def rate(self, played: int) -> float:
        now = time.monotonic()
        if played > self.samples[-1][1]:
            self.samples.append((now, played))
        while len(self.samples) > 2 and now - self.samples[1][0] >= RATE_WINDOW_SECONDS:
            self.samples.popleft()
        then, before = self.samples[0]
        return (played - before) / (now - then) if now > then else 0.0

    def __call__(self, state: dict, status="running", error=None) -> None:
        if self.progress is None:
            return
        playing = sum(state["playing"].values())
        rate, done = self.rate(state["played"] + playing), state["done"] + playing
        left = None if self.end is None else max(self.cells * self.end - done, 0)
        eta = None if left is None or rate <= 0 else left / rate
        if status != "running":
            eta = None
        self.progress(Progress(done, self.total, rate, eta, status, error, state["done"],
                               _cpu(state)))


def run_experiment(spec: ExperimentSpec, results: str, experiment_id: str, *,
                   progress: Callable[[Progress], None] | None = None,
                   cancel: threading.Event | None = None,
                   max_in_flight: InFlight | None = None,
                   shard_done: Callable[[float, int], None] | None = None,
                   nice: int = 0, budget: Budget | None = None,
                   stopped: Callable[[], bool] | None = None, play_on: bool = True) -> str:
    """Plays `spec` into <results>/<experiment_id>/ and returns "done", "cancelled" or
    "failed".  Shards already written are skipped (after checking they were played by the
    same engine version and rules: "failed" otherwise); `progress` gets a Progress after
    each finished task and a last one with the final status (and the error text when failed);
    `shard_done(seconds, games)` is called as each task played here finishes (seconds from
    its submission, the games of its shards); shard tasks
    raise their niceness to `nice` (the settings' worker_nice: batch work yields to the API);
    `budget`: the job's CPU budget (Budget); `max_in_flight`: the most tasks in flight (a
    number, or a callable asked as the run goes: _run_wave; default twice the cluster's
    CPUs).  Settings come from the caller; the runner
    reads no environment of its own.

    A run that ends (done, cancelled, failed) writes the manifest of the shards written
    and how it ended, unless it was cancelled because `stopped()` (a stop of the service:
    the run resumes at the next start).  An experiment with a manifest is replayed, never
    played further (replay), except one that ended early when `play_on` (the CLI: run it
    again to finish it; the service never extends a job that has ended)."""
    init_ray()
    budget = budget or Budget()
    root_uri = experiment_path(results, experiment_id)
    manifest = read_manifest(root_uri)
    if manifest is not None and (manifest.get("status", "done") == "done" or not play_on):
        return replay(spec, results, experiment_id, manifest, progress=progress,
                      cancel=cancel, max_in_flight=max_in_flight, shard_done=shard_done,
                      nice=nice, cpu_spent=budget.spent)
    fs, root = filesystem(root_uri)
    remove_stale_temporaries(root_uri)  # no task of this experiment is writing now
    cells = spec.cells()
    written = [written_shards(root_uri, c.arm, c.players) for c in cells]
    # shards: the manifest entries of the shards written (found sound, or played here)
    state = {"done": 0, "played": 0, "playing": {},  # playing: shard key -> games so far
             "cpu": budget.spent, "cpu_playing": {},  # and CPU-seconds so far
             "shards": _drop_damaged(fs, root, cells, written, manifest)}
    tally = _tally()
    cancelled = (lambda: False) if cancel is None else cancel.is_set
    clock = _Clock(progress, len(cells), None if spec.stop_when else spec.max_games_per_cell(),
                   spec.total_games())

    def report(status="running", error=None):
        clock(state, status, error)

    def finish(status, error=None, listed=True):
        _settle(state)
        if tally is not None:
            try:
                tally.take.remote(experiment_id, [])  # the tally forgets this run
            except Exception:  # noqa: BLE001
                pass
        if listed and not (status == "cancelled" and stopped is not None and stopped()):
            if status != "done":
                _list_cut_short(fs, root, root_uri, cells, state)
            try:
                write_manifest(root_uri, list(state["shards"].values()), experiment_id,
                               spec.seed, status, error)
            except OSError:  # a run that has failed already (unwritable results) says why
                if status == "done":
                    raise
                log.warning("the manifest of %s was not written", experiment_id,
                            exc_info=True)
        report(status, error)
        return status

    slots, cpus = max_in_flight or _default_in_flight(), _cluster_cpus()

    def to_play(begin: int, end: int) -> Iterator[tuple[int, dict]]:
        """The wave's tasks, lazily: per block of consecutive shards (_task_size of them),
        one task per cell with the block's shards it has not written."""
        shards, left = _shards(begin, end, spec.shard_size), -(-(end - begin) // spec.shard_size)
        while left > 0:
            block = list(islice(shards, _task_size(state, left * len(cells), cpus)))
            left -= len(block)
            for i in range(len(cells)):
                mine = [(s, count) for s, count in block if shard_name(s) not in written[i]]
                if mine:
                    job = _job(spec, experiment_id, root_uri, cells[i], mine, nice)
                    yield i, {**job, "tally": tally, "report_s": REPORT_SECONDS}

    mixed = _check_provenance(spec, fs, root, cells, written)
    if mixed:  # the files found are not this run's: no manifest lists them
        return finish("failed", mixed, listed=False)
    if manifest is not None:  # an early end played on: in progress again, until its end
        remove_manifest(root_uri)
    begin = 0
    for end in spec.waves():
        # shards found written count as done from the first report
        state["done"] += _games_written(fs, root, cells, written, begin, end, cancelled)
        report()
        outcome = _run_wave(to_play(begin, end), slots, state, cancelled, report, shard_done,
                            _Poll(tally, experiment_id), budget)
        if outcome is not None:
            # The wave's cancelled tasks have stopped (_cancel_all waits for them): a write a
            # kill cut short left its temporary file, which nobody will finish now.
            remove_stale_temporaries(root_uri)
            return finish(*outcome)
        stop, clock.end = _stop_check(spec, root_uri, end)
        if stop:
            clock.total = state["done"]
            break
        begin = end
    # A worker (or node) that died mid-write left its temporary file; its shard was written
    # again by the retry, and every task of this run has returned: nothing writes now.
    remove_stale_temporaries(root_uri)
    return finish("done")


def _settle(state: dict) -> None:
    """A run's tally at its end: games of unwritten shards are not results, the CPU they
    used was spent all the same."""
    state["playing"].clear()
    state["cpu"] = _cpu(state)
    state["cpu_playing"].clear()


def replay(spec: ExperimentSpec, results: str, experiment_id: str, manifest: dict, *,
           progress: Callable[[Progress], None] | None = None,
           cancel: threading.Event | None = None, max_in_flight: InFlight | None = None,
           shard_done: Callable[[float, int], None] | None = None, nice: int = 0,
           cpu_spent: float = 0.0) -> str:
    """Plays again exactly the shards of an experiment's ended run whose files are missing
    or differ from its `manifest` (each with its first game and games: the same job, so the
    same rows and bytes), then checks them: the run's own end (the manifest's status, done
    or, for a run that ended early, cancelled or failed with its error) when every replayed
    shard's bytes are its manifest entry's, "failed" naming those that differ (they stay not
    counted), or "cancelled".  The manifest is never rewritten: it is what the run played.
    `cpu_spent`: the job's CPU-seconds before (the replay's are added; no budget stops it:
    it plays only what the run had played)."""
    root_uri = experiment_path(results, experiment_id)
    fs, root = filesystem(root_uri)
    remove_stale_temporaries(root_uri)
    cells = {(c.arm, c.players): c for c in spec.cells()}
    shards = manifest["shards"]
    from pipelines.dataset import verify

    found = {e["path"]: shard_entry(fs, root, posixpath.join(root, e["path"])) for e in shards}
    # the shard or a companion file; a shard's own bytes were hashed just above
    damaged = {d.path for d in verify(root_uri, rows=False).damaged}
    bad = [e for e in shards if e["path"] in damaged
           or (found[e["path"]] or {}).get("sha256") != e["sha256"]]
    state = {"done": manifest["games"] - sum(e["games"] for e in bad), "played": 0,
             "playing": {}, "shards": {}, "cpu": cpu_spent, "cpu_playing": {}}
    clock = _Clock(progress, len(cells), None, manifest["games"])
    mixed = _replay_mismatch(spec, fs, root, cells, shards,
                             [e for e in shards if found[e["path"]]],
                             manifest.get("status", "done") != "done")
    if mixed:
        clock(state, "failed", mixed)
        return "failed"
    for e in bad:  # a damaged file goes first: nothing reads it while it is played again
        if fs.get_file_info(posixpath.join(root, e["path"])).type == pafs.FileType.File:
            fs.delete_file(posixpath.join(root, e["path"]))
    clock(state)  # the shards that verify count as done from the first report
    tally = _tally()
    jobs = ((0, {**_job(spec, experiment_id, root_uri, cells[(e["arm"], e["players"])],
                        [(e["start"], e["games"])], nice), "tally": tally,
                 "report_s": REPORT_SECONDS}) for e in bad)
    outcome = _run_wave(jobs, max_in_flight or _default_in_flight(), state,
                        (lambda: False) if cancel is None else cancel.is_set,
                        lambda: clock(state), shard_done, _Poll(tally, experiment_id))
    remove_stale_temporaries(root_uri)
    _settle(state)
    if outcome is not None:
        clock(state, *outcome)
        return outcome[0]
    differ = [e["path"] for e in bad if state["shards"][e["path"]]["sha256"] != e["sha256"]]
    if differ:
        clock(state, "failed", f"{len(differ)} replayed shards differ from the ones the run "
              f"wrote (another engine or library version?): {', '.join(differ[:5])}; they "
              "stay not counted")
        return "failed"
    ended = manifest.get("status", "done")
    clock(state, ended, manifest.get("error"))
    return ended


def _replay_mismatch(spec, fs, root: str, cells: dict, shards: list[dict], readable: list[dict],
                     early: bool = False) -> str | None:
    """Why `spec` cannot replay a finished experiment's `shards` (other cells, or `readable`
    ones of other engines, rules or agents: _provenance_error), or None.  A run that ended
    `early` may have written no shard of some cells (a task plays several shards of one
    cell, and those queued behind it had not started)."""
    played = {(e["arm"], e["players"]) for e in shards}
    if played != set(cells) and not (early and played <= set(cells)):
        return ("cannot replay: this experiment has finished (it has a manifest) with the "
                f"cells {sorted(played)}, and this spec plays {sorted(cells)}: another spec is "
                "a new experiment (another name or results folder)")
    sound = [{posixpath.basename(e["path"]) for e in readable
              if (e["arm"], e["players"]) == key} for key in cells]
    return _check_provenance(spec, fs, root, list(cells.values()), sound)


def _games_written(fs, root: str, cells: list[Cell], written: list[set], begin: int,
                   end: int, cancelled: Callable[[], bool]) -> int:
    """The games of the shards found written (a resume) that start in begin..end-1."""
    games = 0
    for i, cell in enumerate(cells):
        for start in sorted(shard_start(n) for n in written[i]):
            if cancelled():
                return games
            if begin <= start < end:
                games += _read_games(fs, root, cell, start)
    return games


def _job(spec: ExperimentSpec, experiment_id: str, root_uri: str, cell: Cell,
         shards: list[tuple[int, int]], nice: int = 0) -> dict:
    """The task that plays `shards` ((start, count) each) of `cell` (services.shard)."""
    return {"game": spec.game, "play": spec.play_arguments(cell), "seed": spec.seed,
            "shards": shards, "experiment": experiment_id, "root": root_uri, "nice": nice,
            "key": (experiment_id, cell.arm, cell.players, shards[0][0])}


class _Poll:
    """Asks the tally for the games played by the shards in flight, about every POLL_SECONDS,
    without waiting for the answer (it is read on a later turn of the driver's loop)."""

    def __init__(self, tally, experiment_id: str):
        self.tally, self.experiment_id = tally, experiment_id
        self.asked, self.answer = 0.0, None

    def __call__(self, pending: dict, state: dict) -> bool:
        """True when state["playing"] has changed."""
        if self.tally is None:
            return False
        changed = False
        if self.answer is not None and ray.wait([self.answer], timeout=0)[0]:
            try:
                played = ray.get(self.answer)
            except Exception:  # noqa: BLE001  (the tally died: progress per shard only)
                log.warning("the progress tally stopped answering", exc_info=True)
                self.tally = None
                return False
            self.answer = None
            flying = {key for _, key, _ in pending.values()}
            state["playing"] = {k: v[0] for k, v in played.items() if k in flying}
            state["cpu_playing"] = {k: v[1] for k, v in played.items() if k in flying}
            changed = True
        now = time.monotonic()
        if self.answer is None and pending and now - self.asked >= POLL_SECONDS:
            self.asked = now
            try:
                self.answer = self.tally.take.remote(
                    self.experiment_id, [key for _, key, _ in pending.values()])
            except Exception:  # noqa: BLE001  (progress per shard only from now on)
                log.warning("the progress tally cannot be asked", exc_info=True)
                self.tally = None
        return changed


def _run_wave(jobs: Iterator[tuple[int, dict]], limit: InFlight, state,
              cancelled: Callable[[], bool], report, shard_done=None, poll=None,
              budget: Budget | None = None):
    """Submits the wave's shards (drawn lazily from `jobs`) with at most `limit` in flight
    and handles them in completion order; returns None when the wave is complete, else
    (status, error): cancelled, failed (a task's error), or failed once the `budget` is
    spent (no task is issued after that, and those in flight are cancelled).  Each task, as
    it finishes, puts itself on a queue (its future's callback): the driver's cost per
    finished task does not grow with the tasks in flight, as one ray.wait over all of them
    would (docs/lab/scaling.md).

    A callable `limit` is asked on every turn (the service's fair share of the cluster
    between owners: services.worker); when it falls below the tasks in flight, the latest
    submitted beyond it are cancelled (Ray does not preempt a running task: this frees
    their CPUs for the other owners' tasks) and submitted again, first, once the limit
    allows (a task is a pure function of its job: the same files); the CPU they had used
    counts as spent."""
    pending: dict = {}
    tasks: dict = {}  # ref in flight -> its (i, task), to submit again when preempted
    again: deque = deque()  # preempted tasks, submitted before any new one
    finished: queue.SimpleQueue = queue.SimpleQueue()
    more = True
    while more or pending or again:
        if cancelled():
            _cancel_all(pending)
            return "cancelled", None
        if budget is not None and budget.over(state):
            _cancel_all(pending)
            return "failed", budget.message(state)
        most = max(1, limit()) if callable(limit) else limit
        if len(pending) > most:
            _preempt(list(pending)[most:], pending, tasks, again, state)
        while (more or again) and len(pending) < most:
            job = again.popleft() if again else next(jobs, None)
            if job is None:
                more = False
                break
            i, task = job
            ref = play_shards.remote(task)
            pending[ref], tasks[ref] = (i, task["key"], time.monotonic()), job
            ref.future().add_done_callback(lambda _, ref=ref: finished.put(ref))
        if not pending:
            continue
        ready = _finished(finished, pending)
        if poll is not None and poll(pending, state) and not ready:
            report()
        for ref in ready:
            i, key, submitted = pending.pop(ref)
            tasks.pop(ref, None)
            state["playing"].pop(key, None)
            state["cpu_playing"].pop(key, None)
            try:
                out = ray.get(ref)
            except Exception as exc:  # the task failed after its retries
                _cancel_all(pending)
                return "failed", _error_text(exc)
            if shard_done is not None:
                shard_done(time.monotonic() - submitted, out["games"])
            state["done"] += out["games"]
            state["played"] += out["games"]
            state["cpu"] += out["cpu_seconds"]
            state["task_seconds"] = state.get("task_seconds", 0.0) + out["seconds"]
            state["task_shards"] = state.get("task_shards", 0) + len(out["shards"])
            state.setdefault("shards", {}).update((e["path"], e) for e in out["shards"])
            report()
    return ("cancelled", None) if cancelled() else None


def _preempt(refs: list, pending: dict, tasks: dict, again: deque, state: dict) -> None:
    """Cancels the tasks `refs` of `pending` and queues their jobs on `again` (in submission
    order); the CPU they used so far is spent, their games played are not results."""
    for ref in refs:
        ray.cancel(ref, force=True)
        _, key, _ = pending.pop(ref)
        state["playing"].pop(key, None)
        state["cpu"] += state["cpu_playing"].pop(key, 0.0)
        again.append(tasks.pop(ref))
    log.info("%d tasks preempted (the run's share of the cluster shrank)", len(refs))


def _finished(finished: queue.SimpleQueue, pending: dict) -> list:
    """The tasks of `pending` that have finished: those on the queue, waiting at most 0.25 s
    for the first (refs of tasks cancelled before are skipped)."""
    try:
        refs = [finished.get(timeout=0.25)]
    except queue.Empty:
        return []
    while True:
        try:
            refs.append(finished.get_nowait())
        except queue.Empty:
            return [ref for ref in refs if ref in pending]


def _cancel_all(pending: dict) -> None:
    """Kills the tasks still in flight and waits (at most CANCEL_WAIT_SECONDS) until they have
    stopped, so that none writes a file after the caller has cleaned up."""
    refs = list(pending)
    # force: a shard runs in nogil C code that a KeyboardInterrupt would not reach
    for ref in refs:
        ray.cancel(ref, force=True)
    pending.clear()
    if refs:
        ray.wait(refs, num_returns=len(refs), timeout=CANCEL_WAIT_SECONDS)
