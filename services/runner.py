"""Plays an experiment on Ray: one Parquet file per shard, and tasks that play one or more
consecutive shards of a cell each (about TASK_SECONDS of play: the driver's cost is per task).

The layout and schema of the results are pipelines.folder's; the task is services.shard's.
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
import math
import os
import posixpath
import queue
import secrets
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import ray

from services.shard import ProgressTally, play_shards, warm_up
from services.spec import Cell, ExperimentSpec
from pipelines.folder import (cell_dir, experiment_path, filesystem, read_manifest,
                              remove_manifest, remove_stale_temporaries, shard_entry,
                              shard_files, shard_name, shard_start, write_manifest,
                              written_shards)

InFlight = int | Callable[[], int]  # tasks in flight: a number, or asked as a run goes (_run_wave)

__all__ = ["Budget", "Part", "Player", "Progress", "Stopped", "init_ray", "run_experiment",
           "experiment_path", "filesystem"]
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
# Shards sized by time hold at most this many games (a file's rows stay a modest table).
MAX_TIMED_SHARD = 5000
# Before a run has timed a task, its first block is about this long at the catalogue's cost.
FIRST_BLOCK_SECONDS = 1.0


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
    written: int | None = None  # games of the shards written (done, less those playing;
    # the shards a task in flight has written count, as it reports them)
    cpu_seconds: float = 0.0  # CPU-seconds the job's shard tasks have used, as they report
    # them (finished, cut short and playing; earlier runs of the job included: Budget.spent)
    detail: str | None = None  # where a job that is not an experiment stands, in words


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
@dataclass(frozen=True)
class Part:
    """Games start..start+count-1 of one cell, to be played as the runner plays every game:
    `cell` names the folder (its arm and player count), `play` is how it is played
    (ExperimentSpec.play_arguments), `seed` deals it.  An experiment's wave is one Part per
    cell; a fair-value wave one per value searched; a pilot or a confirmation one per cell."""

    cell: Cell
    play: dict
    seed: int
    start: int
    count: int


def _gaps(covered: list[tuple[int, int]], begin: int, end: int) -> list[tuple[int, int]]:
    """The (start, end) ranges of begin..end-1 that no range of `covered` ((start, end)
    each, not overlapping) holds."""
    gaps, at = [], begin
    for first, last in sorted(covered):
        if last <= at or first >= end:
            continue
        if first > at:
            gaps.append((at, first))
        at = max(at, last)
    if at < end:
        gaps.append((at, end))
    return gaps


def _block_games(state: dict) -> int:
    """How many games of each part the next block of tasks plays (shards sized by time):
    before any task has finished, state["first_block"] (_first_block: about a second of play
    at the catalogue's estimate, else 1) and then twice as many each block, so every CPU
    plays from the first seconds whatever a game costs; then about TASK_SECONDS of play at
    the seconds per game measured so far."""
    games = state.get("task_games", 0)
    if not games:
        state["blind"] = state.get("blind", 0) + 1
        return state.get("first_block", 1) << min(state["blind"] - 1, 30)
    per_game = max(state["task_seconds"] / games, 1e-7)
    return max(1, int(TASK_SECONDS / per_game))


def _first_block(game: str, parts: list[Part]) -> int:
    """The games of the first block of `parts` before any is timed: about FIRST_BLOCK_SECONDS
    of play at the catalogue's estimated cost of a game (core_cy.catalogue.game_cost) of the
    dearest part; 1 when no estimate can be made.  An estimate ten times too low costs a
    first task of ten seconds, never a silent long one."""
    import core_cy

    try:
        cost = max(core_cy.catalogue.game_cost(game, list(p.play["agents"]),
                                               p.cell.players).seconds for p in parts)
    except (ValueError, KeyError, AttributeError, TypeError, OSError):
        return 1
    return max(1, min(int(FIRST_BLOCK_SECONDS / max(cost, 1e-9)), MAX_TIMED_SHARD))


def _task_size(state: dict, left: int, cpus: int) -> int:
    """With a fixed shard_size: how many shards the next task plays: one until a task has
    finished, then about TASK_SECONDS of play at the seconds per shard measured so far, and
    at most the `left` shards to submit shared among the cluster's `cpus`."""
    most = max(1, -(-left // cpus))
    shards = state.get("task_shards", 0)
    if not shards:
        return 1
    per_shard = max(state["task_seconds"] / shards, 1e-6)
    return max(1, min(int(TASK_SECONDS / per_shard), most))


def _tasks(game: str, parts: list[Part], covered: dict, state: dict, cpus: int,
           shard_size: int | None, job_id: str, root_uri: str, nice: int, tally
           ) -> Iterator[tuple[int, dict]]:
    """The tasks that play `parts` (lazily, a block of consecutive games at a time: one task
    per part with the block's games not yet `covered`, so the parts' shards start at the
    same games and pair one to one).  `covered`: (arm, players) -> the (start, end) of its
    shards written, updated here as tasks are issued.  Shards are sized by time (_block_games;
    each at most MAX_TIMED_SHARD games) or, with a `shard_size`, on its fixed grid from each
    part's start (_task_size shards a task)."""
    if not shard_size and not state.get("task_games") and "first_block" not in state:
        state["first_block"] = _first_block(game, parts)
    groups: dict[tuple[int, int], list[int]] = {}
    for i, part in enumerate(parts):
        groups.setdefault((part.start, part.count), []).append(i)
    for (start, count), members in groups.items():
        end, at = start + count, start
        # a shard holds whole deals (with pairing 'rotations' a deal is k consecutive games)
        deal = math.lcm(*(parts[i].play.get("games_per_deal", 1) for i in members))
        tail = None  # the end's block: the games left then, shared among the CPUs
        while at < end:
            left = end - at
            if shard_size:
                shards = _task_size(state, -(-left // shard_size) * len(members), cpus)
                block = min(left, shards * shard_size)
                piece = shard_size
            else:
                block = _block_games(state)
                if tail is None and block * len(members) * 2 > left * len(members) // cpus:
                    tail = max(1, -(-left * len(members) // cpus))
                block = min(left, -(-min(block, tail or block) // deal) * deal)
                piece = max(deal, MAX_TIMED_SHARD // deal * deal)
            for i in members:
                part = parts[i]
                key = (part.cell.arm, part.cell.players)
                mine = [(s, min(piece, e - s)) for a, e in _gaps(covered.setdefault(key, []),
                                                                  at, at + block)
                        for s in range(a, e, piece)]
                if mine:
                    covered[key].extend((s, s + n) for s, n in mine)
                    yield i, {"game": game, "play": part.play, "seed": part.seed,
                              "shards": mine, "experiment": job_id, "root": root_uri,
                              "nice": nice, "key": (job_id, *key, mine[0][0]),
                              "tally": tally, "report_s": REPORT_SECONDS}
            at += block


def _drop_damaged(fs, root: str, cells: list[Cell], written: list[set],
                  manifest: dict | None = None) -> dict[str, dict]:
    """Deletes the shards found written that are damaged or empty (folder.shard_entry:
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


def _covered(fs, root: str, cells: list[Cell], written: list[set]) -> dict:
    """(arm, players) -> the (start, end) game ranges of the shards found written."""
    covered = {}
    for cell, names in zip(cells, written):
        covered[(cell.arm, cell.players)] = [
            (start, start + _read_games(fs, root, cell, start))
            for start in sorted(shard_start(n) for n in names)]
    return covered


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

    def __call__(self, state: dict, status="running", error=None, detail=None) -> None:
        if self.progress is None:
            return
        playing = sum(state["playing"].values())
        rate, done = self.rate(state["played"] + playing), state["done"] + playing
        left = None if self.end is None else max(self.cells * self.end - done, 0)
        eta = None if left is None or rate <= 0 else left / rate
        if status != "running":
            eta = None
        written = state["done"] + sum(state.get("written_playing", {}).values())
        self.progress(Progress(done, self.total, rate, eta, status, error, written,
                               _cpu(state), detail))


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

    covered = _covered(fs, root, cells, written)

    def to_play(begin: int, end: int) -> Iterator[tuple[int, dict]]:
        """The wave's tasks, lazily (_tasks: one Part per cell, games begin..end-1)."""
        parts = [Part(c, spec.play_arguments(c), spec.seed, begin, end - begin) for c in cells]
        return _tasks(spec.game, parts, covered, state, cpus, spec.shard_size, experiment_id,
                      root_uri, nice, tally)

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


class Stopped(Exception):
    """A job's games stopped before all were played: `status` cancelled, or failed with
    `error` (a task's error, or the CPU budget spent)."""

    def __init__(self, status: str, error: str | None = None):
        super().__init__(error or status)
        self.status, self.error = status, error


class Player:
    """Plays the games of a job that is not an experiment (a fair-value search's waves and
    confirmations, restricted play, a plan's pilot) into the job's own results folder
    <results>/<job_id>/, exactly as an experiment's are played: shard tasks of the one
    runner (_tasks, _run_wave), the same files, checksums, manifest, CPU budget, progress
    and cancel.  Games found written (a job resumed after its process died) are read, not
    played again, so a resumed job gives the same answer; damaged shards are played again.

    `play(parts)` returns once every game of the parts is written (Stopped when the job is
    cancelled, a task fails or the budget is spent); `rows(part)` reads them back, a row per
    game in game order.  `expect(left, detail)` says how many more games the job expects to
    play (None: not known) and where it stands, for the progress (its total and ETA).
    `finish(status)` writes the manifest of every shard written (not after a stop of the
    service, which resumes the job)."""

    def __init__(self, game: str, results: str, job_id: str, *, seed: int = 0,
                 progress: Callable[[Progress], None] | None = None,
                 cancel: threading.Event | None = None, budget: Budget | None = None,
                 nice: int = 0, max_in_flight: int | None = None,
                 shard_done: Callable[[float, int], None] | None = None,
                 stopped: Callable[[], bool] | None = None):
        init_ray()
        self.game, self.job_id, self.seed, self.nice = game, job_id, seed, nice
        self.budget = budget or Budget()
        self.root_uri = experiment_path(results, job_id)
        self.fs, self.root = filesystem(self.root_uri)
        remove_stale_temporaries(self.root_uri)  # no task of this job is writing now
        self.state = {"done": 0, "played": 0, "playing": {}, "cpu": self.budget.spent,
                      "cpu_playing": {}, "shards": {}}
        self.covered: dict = {}
        for path, _rel in shard_files(self.root_uri):
            entry = shard_entry(self.fs, self.root, path)
            if entry is None:
                self.fs.delete_file(path)  # damaged or empty: played again when asked
                log.warning("a damaged shard of %s will be played again: %s", job_id, _rel)
                continue
            self.state["shards"][entry["path"]] = entry
            self.state["done"] += entry["games"]
            self.covered.setdefault((entry["arm"], entry["players"]), []).append(
                (entry["start"], entry["start"] + entry["games"]))
        self.cancelled = (lambda: False) if cancel is None else cancel.is_set
        self.stopped = stopped
        self.shard_done = shard_done
        self.slots = max_in_flight or _default_in_flight()
        self.tally = _tally()
        self.clock = _Clock(progress, 1, None, self.state["done"])
        self.detail: str | None = None

    def expect(self, left: int | None, detail: str | None = None) -> None:
        """The games the job still expects to play (None: not known) and where it stands."""
        self.detail = detail if detail is not None else self.detail
        done = self.state["done"] + sum(self.state["playing"].values())
        self.clock.end = None if left is None else done + max(int(left), 0)
        self.clock.total = done if left is None else done + max(int(left), 0)
        self.report()

    def report(self, status="running", error=None) -> None:
        self.clock(self.state, status, error, self.detail)

    def play(self, parts: list[Part], seconds: float | None = None) -> None:
        """Plays every game of `parts` not yet written.  With `seconds`: at most about that
        long; the tasks still in flight then are cancelled (the shards they finished are
        kept) and play returns: rows() has what was written."""
        if self.cancelled():
            raise Stopped("cancelled")
        deadline = None if seconds is None else time.monotonic() + seconds
        cancelled = self.cancelled if deadline is None else \
            (lambda: self.cancelled() or time.monotonic() >= deadline)
        jobs = _tasks(self.game, parts, self.covered, self.state, _cluster_cpus(), None,
                      self.job_id, self.root_uri, self.nice, self.tally)
        outcome = _run_wave(jobs, self.slots, self.state, cancelled, self.report,
                            self.shard_done, _Poll(self.tally, self.job_id), self.budget)
        if outcome is not None:
            remove_stale_temporaries(self.root_uri)  # the killed tasks have stopped
            self._recover()
            if outcome[0] == "cancelled" and not self.cancelled():
                return  # the time bound: what was written is kept
            raise Stopped(*outcome)

    def _recover(self) -> None:
        """After tasks were cut short: the shards they had finished are listed and counted,
        and the ranges they had not written are free to be played again."""
        _settle(self.state)
        self.covered = {}
        for path, rel in shard_files(self.root_uri):
            entry = self.state["shards"].get(rel)
            if entry is None:  # finished by a task cut short: listed and counted now
                entry = shard_entry(self.fs, self.root, path)
                if entry is None:
                    continue
                self.state["shards"][entry["path"]] = entry
                self.state["done"] += entry["games"]
            self.covered.setdefault((entry["arm"], entry["players"]), []).append(
                (entry["start"], entry["start"] + entry["games"]))

    def rows(self, part: Part, columns: list[str] | None = None) -> pa.Table:
        """The rows of the part's games written, one per game in game order (games not
        written, e.g. past a time bound, are absent)."""
        folder = cell_dir(self.root, part.cell.arm, part.cell.players)
        end = part.start + part.count
        tables = []
        for start, stop in sorted(self.covered.get((part.cell.arm, part.cell.players), [])):
            if stop <= part.start or start >= end:
                continue
            table = pq.read_table(posixpath.join(folder, shard_name(start)), columns=columns,
                                  filesystem=self.fs)
            index = table.column("game_index")
            keep = pa.compute.and_(pa.compute.greater_equal(index, part.start),
                                   pa.compute.less(index, end))
            tables.append(table.filter(keep))
        if not tables:
            return pa.table({})
        return pa.concat_tables(tables).sort_by("game_index")

    @property
    def cpu_seconds(self) -> float:
        return _cpu(self.state)

    def cpu_per_game(self, cell: Cell) -> float | None:
        """The CPU-seconds a game of `cell` took to play in the tasks of this Player (games
        read back from an earlier run are not timed: None when none was played here)."""
        games, cpu = self.state.get("cells", {}).get((cell.arm, cell.players), (0, 0.0))
        return max(cpu, 1e-9) / games if games else None

    def finish(self, status: str = "done", error: str | None = None) -> str:
        """Ends the job's play: the manifest of every shard written, how the job ended (not
        when it was cancelled by a stop of the service: it resumes at the next start)."""
        _settle(self.state)
        if self.tally is not None:
            try:
                self.tally.take.remote(self.job_id, [])
            except Exception:  # noqa: BLE001
                pass
        if not (status == "cancelled" and self.stopped is not None and self.stopped()) \
                and self.state["shards"]:
            try:
                write_manifest(self.root_uri, list(self.state["shards"].values()),
                               self.job_id, self.seed, status, error)
            except OSError:
                if status == "done":
                    raise
                log.warning("the manifest of %s was not written", self.job_id, exc_info=True)
        self.report(status, error)
        return status


def _settle(state: dict) -> None:
    """A run's tally at its end: games of unwritten shards are not results, the CPU they
    used was spent all the same."""
    state["playing"].clear()
    state.get("written_playing", {}).clear()  # a cut task's shards: _list_cut_short's
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
            state["written_playing"] = {k: v[2] for k, v in played.items() if k in flying}
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
            state.get("written_playing", {}).pop(key, None)
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
            state["task_games"] = state.get("task_games", 0) + out["games"]
            cell = state.setdefault("cells", {}).setdefault(tuple(key[1:3]), [0, 0.0])
            cell[0] += out["games"]
            cell[1] += out.get("play_cpu_seconds", out["cpu_seconds"])
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
        state.get("written_playing", {}).pop(key, None)
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
