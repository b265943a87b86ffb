"""The service's one job queue: experiments, plans and balance searches (the registry's job
kinds), each kind with its places (`lanes`: how many run at once, the global cap), taken in
submission order with the owners (tokens) in turn; a token runs at most `places_per_token`
jobs of a kind at once, so one token's long jobs never hold another's back (an admin token's
jobs have places of their own beyond the cap), and running jobs of different tokens share the
cluster's CPUs (each job's shard tasks in flight bounded by its owner's share:
Worker._in_flight, which the runner asks as it goes).

The registry is the source of truth: the worker reads a job's request from it, writes status,
progress and result back, and on start re-queues every unfinished job (a `running` one was
interrupted by a stop or a crash; a runner skips the shards it had already written).  Heavy
work never runs in the API process: every game is a niced Ray shard task of the one runner
(services.runner: an experiment's run, and a plan's pilot or a balance search through a
Player of the job's own results folder), under the job's CPU budget; a cancel force-cancels
the tasks in flight, so the job's place is free within a second.
"""
from __future__ import annotations

import json
import logging
import math
import os
import sqlite3
import sys
import threading
import time
from typing import Callable

from services.registry import FINISHED, KINDS, Registry

log = logging.getLogger("meeplelab.worker")

PROGRESS_INTERVAL_S = 0.5  # at most two registry writes a second per running job
STUCK_SECONDS = 120.0  # a worker thread silent this long is reported stuck (/readyz)
RETRY_SECONDS = 0.5  # between attempts of a registry write that failed
CPUS_SECONDS = 5.0  # the cluster's CPUs (for the owners' shares) are asked at most this often

_ray_lock = threading.Lock()
_ray_thread: threading.Thread | None = None
_ray_state = "not started"


def start_ray(address: str | None = None) -> None:
    """Start the local Ray (or connect to `address`) from a thread that lives as long as
    the process, and wait until it is up.

    Why a thread of its own: Ray's local processes (GCS, raylet) die with the *thread* that
    started them (Linux parent-death signal), so starting Ray from a worker thread that a
    service stop ends would kill Ray under the next worker of the same process.
    """
    global _ray_thread, _ray_state
    from services.runner import init_ray

    with _ray_lock:
        if _ray_thread is None:
            ready = threading.Event()
            failure: list[BaseException] = []
            _ray_state = "starting"

            def own_ray() -> None:
                try:
                    init_ray(address=address)
                except BaseException as exc:  # reported to the caller below
                    failure.append(exc)
                ready.set()
                threading.Event().wait()  # live until the process exits

            _ray_thread = threading.Thread(target=own_ray, name="meeplelab-ray", daemon=True)
            _ray_thread.start()
            ready.wait()
            if failure:
                _ray_thread = None
                _ray_state = f"failed: {type(failure[0]).__name__}: {failure[0]}"
                raise failure[0]
            _ray_state = "cluster" if address else "local"


def stop_ray() -> None:
    """Shut down this process's Ray (its local Ray processes with it), if it was started."""
    global _ray_state
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()
    _ray_state = "stopped"


class _Watched(threading.Event):
    """A run's cancel event whose every check is a sign of life of the thread that checks it
    (the runner checks its cancel at least every quarter second while shards run)."""

    def __init__(self, beat: Callable[[], None]):
        super().__init__()
        self._beat = beat

    def is_set(self) -> bool:
        self._beat()
        return super().is_set()


class Worker:
    """The job queue's threads: `lanes[kind]` places per job kind (experiments:
    MEEPLELAB_MAX_RUNNING; plans and balance searches: theirs), so a long experiment never
    holds a plan back.  A free place takes the oldest queued job of the owner it served
    longest ago among the owners that may start one: an owner already running
    `places_per_token` jobs of the kind waits (None: no per-owner limit, a service without
    tokens), so one token at its limit never takes the place another token's job gets.  The
    `admins`' jobs (owner names) are not counted against the cap: they have their own
    `places_per_token` places each beyond it (one thread per place).  `cancel` and `stop`
    are thread-safe.  `shard_done(seconds, games)` is called as each shard of an experiment
    finishes (metrics).

    Supervised: an error in a job fails that job and the thread goes on; the registry
    writes that record a job's fate are retried until they succeed (a full disk for a
    while is survived); each thread beats while it waits or runs, and `problem()` says
    when one has died or not beaten for STUCK_SECONDS (what /readyz reports)."""

    def __init__(self, registry: Registry, results: str, slots: int = 1,
                 ray_address: str | None = None,
                 shard_done: Callable[[float, int], None] | None = None,
                 worker_nice: int = 0, lanes: dict[str, int] | None = None,
                 job_cpu_seconds: float | None = None, plan_seconds: float = 20.0,
                 limits: dict | None = None, places_per_token: int | None = None,
                 admins: frozenset[str] = frozenset(),
                 experiment_cpu_seconds: float | None = None):
        self.registry = registry
        self.results = results
        self.lanes = {"experiment": slots, "plan": 1, "balance": 1, **(lanes or {})}
        self.places_per_token = places_per_token
        self.admins = admins if places_per_token else frozenset()
        self.ray_address = ray_address
        self.shard_done = shard_done
        self.worker_nice = worker_nice
        self.job_cpu_seconds = job_cpu_seconds
        self.experiment_cpu_seconds = experiment_cpu_seconds
        self.plan_seconds = plan_seconds
        self.limits = limits or {}
        self._pending: dict[str, list[tuple[str, str]]] = {k: [] for k in KINDS}
        self._served: dict[tuple[str, str], float] = {}  # (kind, owner) -> last start
        self._taken: dict[str, tuple[str, str]] = {}  # job in a place -> (kind, owner)
        self._wake = threading.Condition()  # guards _pending, _served and _taken
        self._lock = threading.Lock()  # guards _running and queued->running
        self._running: dict[str, threading.Event] = {}
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._beats: dict[str, float] = {}
        self._written: dict[str, int] = {}  # running experiment -> games of shards written
        self._cpus_seen: tuple[float, int] = (-math.inf, 1)  # (when asked, cluster CPUs)

    # ---- control ------------------------------------------------------------------------
    def start(self) -> None:
        """Re-queue unfinished jobs (oldest first) and start the threads."""
        for eid in self.registry.unfinished():
            self.registry.set_status(eid, "queued")
            self.submit(eid)
        for kind in KINDS:
            places = self.lanes.get(kind, 0) + len(self.admins) * (self.places_per_token or 0)
            for k in range(places):
                thread = threading.Thread(target=self._loop, args=(kind,),
                                          name=f"meeplelab-{kind}-{k}", daemon=True)
                self._beats[thread.name] = time.monotonic()
                thread.start()
                self._threads.append(thread)

    def submit(self, eid: str) -> None:
        """Queue a job the registry holds (queued)."""
        record = self.registry.get(eid)
        if record is None:
            return
        with self._wake:
            self._pending[record["kind"]].append((eid, record["owner"]))
            self._wake.notify_all()

    def ray_state(self) -> str:
        return _ray_state if self._threads else "not started (no worker)"

    def problem(self) -> str | None:
        """Why the worker cannot take jobs now (None when it can): a thread that has
        died or has not beaten for STUCK_SECONDS, or registry writes that fail."""
        if self._stopping.is_set():
            return "the worker is stopping"
        now = time.monotonic()
        for thread in self._threads:
            if not thread.is_alive():
                return f"worker thread {thread.name} has died"
            silent = now - self._beats.get(thread.name, now)
            if silent > STUCK_SECONDS:
                return f"worker thread {thread.name} has not answered for {silent:.0f} s"
        if self.registry.write_error:
            return f"the registry cannot be written: {self.registry.write_error}"
        return None

    def stop(self, timeout: float = 60.0) -> None:
        """Stop after interrupting the running jobs (a job process is ended at once); they
        stay unfinished and run again at the next start."""
        self._stopping.set()
        with self._lock:
            for event in self._running.values():
                event.set()
        with self._wake:
            self._wake.notify_all()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def written(self, eid: str, default: int) -> int:
        """The games of the shards written by a run of this worker (the registry's games
        done count those of shards still playing too); `default` when none runs `eid`."""
        return self._written.get(eid, default)

    def cancel(self, eid: str) -> bool:
        """Cancel a queued or running job; False when it had already finished.  A queued
        job and a job process (a plan, a balance search) are cancelled at once, a game in the
        middle or not, and the place goes to the next job within a poll; a running
        experiment's runner force-cancels its shards within a second and reports back."""
        with self._lock:
            record = self.registry.get(eid)
            if record is None or record["status"] in FINISHED:
                return False
            self.registry.request_cancel(eid)
            if eid in self._running:
                self._running[eid].set()
            else:
                self.registry.set_status(eid, "cancelled")
        with self._wake:
            for kind in KINDS:
                self._pending[kind] = [p for p in self._pending[kind] if p[0] != eid]
        return True

    # ---- the threads --------------------------------------------------------------------
    def _beat(self) -> None:
        self._beats[threading.current_thread().name] = time.monotonic()

    def _write(self, method: Callable, *args, **kwargs) -> bool:
        """A registry write that records a job's fate, retried (every RETRY_SECONDS, the
        thread beating) until it succeeds; False when the worker stops first."""
        while True:
            self._beat()
            try:
                method(*args, **kwargs)
                return True
            except sqlite3.Error as exc:
                log.warning("registry write %s%s failed (%s); retrying", method.__name__,
                            args[:2], exc)
            if self._stopping.wait(RETRY_SECONDS):
                return False

    def _may_start(self, kind: str, owner: str) -> bool:
        """Whether a job of `kind` by `owner` may take a place now (under _wake): the owner
        runs fewer than places_per_token of the kind, and the cap has room (an admin's job
        is not counted against it)."""
        taken = [o for k, o in self._taken.values() if k == kind]
        if self.places_per_token and taken.count(owner) >= self.places_per_token:
            return False
        return owner in self.admins or \
            sum(o not in self.admins for o in taken) < self.lanes.get(kind, 0)

    def _next(self, kind: str) -> str | None:
        """The next job of `kind` that may start (_may_start), in a place from now on: the
        oldest of the owner served longest ago (None after a second without one, or when
        stopping)."""
        with self._wake:
            for attempt in (0, 1):
                if self._stopping.is_set():
                    return None
                ready = [p for p in self._pending[kind] if self._may_start(kind, p[1])]
                if ready:
                    break
                if attempt == 0:
                    self._wake.wait(1.0)
            else:
                return None
            chosen = min(ready, key=lambda p: self._served.get((kind, p[1]), 0.0))
            self._pending[kind].remove(chosen)
            self._served[(kind, chosen[1])] = time.monotonic()
            self._taken[chosen[0]] = (kind, chosen[1])
            return chosen[0]

    def _in_flight(self, eid: str) -> int:
        """The most shard tasks job `eid` may have in flight now: its owner's share of the
        cluster's CPUs.  Alone (every running job one owner's, or no tokens), twice the
        CPUs (the runner's default: every CPU busy while results come back); with n owners
        running jobs of any kind, the owner's CPUs / n (rounded up, at least 1), shared
        among its running jobs.  The runner asks on every turn and cancels what is beyond
        it (Ray does not preempt running tasks), so a newcomer's tasks get CPUs within
        seconds however long the others' tasks are; an admin token is one more owner."""
        with self._wake:
            owners = [owner for _, owner in self._taken.values()]
            owner = self._taken.get(eid, ("", ""))[1]
        cpus = self._cpus()
        if len(set(owners)) <= 1:
            return max(2, 2 * cpus)
        share = -(-cpus // len(set(owners)))
        return max(1, -(-share // max(1, owners.count(owner))))

    def _cpus(self) -> int:
        """The cluster's CPUs, asked of Ray at most every CPUS_SECONDS (nodes come and go)."""
        now = time.monotonic()
        if now - self._cpus_seen[0] > CPUS_SECONDS:
            from services.runner import _cluster_cpus

            self._cpus_seen = (now, _cluster_cpus())
        return self._cpus_seen[1]

    def _release(self, eid: str) -> None:
        """A job's place is free (it has ended, or never started): the next may take it."""
        with self._wake:
            if self._taken.pop(eid, None) is not None:
                self._wake.notify_all()

    def _loop(self, kind: str) -> None:
        try:
            start_ray(self.ray_address)  # pay Ray's start-up once, before work arrives
        except Exception:
            log.exception("Ray did not start; jobs will fail until it does")
        while not self._stopping.is_set():
            self._beat()
            eid = self._next(kind)
            if eid is None:
                continue
            try:
                (self._run if kind == "experiment" else self._run_job)(eid)
            except Exception as exc:  # never let one job kill the worker
                log.exception("job %s crashed the worker step", eid)
                with self._lock:
                    self._running.pop(eid, None)
                self._written.pop(eid, None)
                self._write(self.registry.set_status, eid, "failed",
                            self._public(f"{type(exc).__name__}: {exc}"))
            finally:
                self._release(eid)

    def _claim(self, eid: str) -> threading.Event | None:
        """Mark a queued job running (None if it was cancelled or is gone)."""
        with self._lock:
            record = self.registry.get(eid)
            if record is None or record["status"] != "queued" or self._stopping.is_set():
                return None
            if record["cancel_requested"]:
                self._write(self.registry.set_status, eid, "cancelled")
                return None
            if not self._write(self.registry.set_status, eid, "running"):
                return None
            self._running[eid] = _Watched(self._beat)
            return self._running[eid]

    def _finish(self, eid: str, outcome: str, error: str | None = None,
                result: dict | None = None) -> None:
        """Record a job's end: a stop of the service is not a user's cancel (the job stays
        queued for the next start); a job the cancel recorded already stays as it is."""
        with self._lock:
            self._running.pop(eid, None)
            record = self.registry.get(eid)
        if record is None or record["status"] in FINISHED:
            return
        if outcome == "cancelled" and self._stopping.is_set() \
                and not record["cancel_requested"]:
            outcome = "queued"
        self._write(self.registry.set_status, eid, outcome,
                    self._public(error or "the job reported a failure")
                    if outcome == "failed" else None, result=result)

    def _budget(self, asked: float | None, setting: float | None, name: str
                ) -> tuple[float | None, str]:
        """A job's CPU budget: what its request asks for (`asked`), never more than the
        service's `setting` (named `name`), and what sets it (for the job's message)."""
        if asked is not None and (setting is None or asked < setting):
            return asked, "the request's cpu_seconds"
        return setting, name

    def _run(self, eid: str) -> None:
        from services.runner import Budget, run_experiment  # imports Ray: only when needed
        from services.spec import ExperimentSpec

        cancel = self._claim(eid)
        if cancel is None:
            return
        record = self.registry.get(eid)
        spec = ExperimentSpec.model_validate(record["spec"])
        seconds, name = self._budget(spec.cpu_seconds, self.experiment_cpu_seconds,
                                     "MEEPLELAB_EXPERIMENT_CPU_SECONDS")
        budget = Budget(seconds, record["cpu_seconds"] or 0.0, name)
        errors: list[str] = []
        progress = self._progress(eid, errors)

        try:
            outcome = run_experiment(
                spec, self.results, eid, progress=progress, cancel=cancel,
                shard_done=self.shard_done, nice=self.worker_nice, budget=budget,
                max_in_flight=lambda: self._in_flight(eid),
                stopped=lambda: self._stopping.is_set() and not self.registry.get(eid)[
                    "cancel_requested"], play_on=False)
        except Exception as exc:
            log.exception("experiment %s failed", eid)
            outcome = "failed"
            errors.append(f"{type(exc).__name__}: {exc}")
        self._finish(eid, outcome, errors[-1] if errors else None)
        self._written.pop(eid, None)  # the registry's games done are the games written now

    def _progress(self, eid: str, errors: list[str]) -> Callable:
        """A run's progress callback (services.runner.Progress): to the registry at most every
        PROGRESS_INTERVAL_S while it runs, always at its end; errors collected in `errors`."""
        last = [0.0]

        def progress(p) -> None:
            now = time.monotonic()
            if p.error:
                errors.append(p.error)
            if p.written is not None:
                self._written[eid] = p.written
            if p.status == "running" and now - last[0] < PROGRESS_INTERVAL_S:
                return
            last[0] = now
            try:  # progress is a hint: a failed write is made good by the next one
                self.registry.set_progress(eid, p.done, p.total, p.games_per_s, p.eta_s,
                                           detail=p.detail, cpu_seconds=p.cpu_seconds)
            except sqlite3.Error as exc:
                log.warning("progress of %s not written: %s", eid, exc)
        return progress

    def _run_job(self, eid: str) -> None:
        """A plan or a balance search: its games are shard tasks of the one runner (a
        services.runner.Player of the job's own results folder: the cluster's CPUs, the
        job's CPU budget, progress, cancel, resume), its statistics in this thread.  A
        plan's pilot games are deleted once it has its answer; a balance search's are kept,
        with their manifest, like an experiment's."""
        from services.plan import PlanRequest
        from services.runner import Budget, Player, Stopped
        from services.spec import ExperimentSpec
        from pipelines.folder import remove_experiment

        cancel = self._claim(eid)
        if cancel is None:
            return
        record = self.registry.get(eid)
        kind = record["kind"]
        asked = record["spec"].get("cpu_seconds") if kind == "balance" else None
        seconds, name = self._budget(asked, self.job_cpu_seconds, "MEEPLELAB_JOB_CPU_SECONDS")
        errors: list[str] = []
        spec = (PlanRequest.model_validate(record["spec"], context=self.limits).spec
                if kind == "plan" else
                ExperimentSpec.model_validate(record["spec"], context=self.limits))
        player = Player(spec.game, self.results, eid, seed=spec.seed,
                        progress=self._progress(eid, errors), cancel=cancel,
                        budget=Budget(seconds, record["cpu_seconds"] or 0.0, name),
                        nice=self.worker_nice, shard_done=self.shard_done,
                        max_in_flight=lambda: self._in_flight(eid),
                        stopped=lambda: self._stopping.is_set() and not self.registry.get(eid)[
                            "cancel_requested"])
        try:
            result = run_job(kind, record["spec"], self.limits, player, self.plan_seconds)
        except Stopped as exc:
            player.finish(exc.status, exc.error)
            self._finish(eid, exc.status, exc.error)
            return
        except Exception as exc:  # the job's error, as the client sees it
            log.warning("job %s failed", eid, exc_info=True)
            player.finish("failed", f"{type(exc).__name__}: {exc}")
            self._finish(eid, "failed", f"{type(exc).__name__}: {exc}")
            return
        player.finish("done")
        if kind == "plan":
            remove_experiment(player.root_uri)
        self._finish(eid, "done", result=result)

    def _public(self, text: str) -> str:
        """An error text as clients may see it: the server's results folder and working
        directory are named, not spelled out (no absolute server path in the open list)."""
        root = os.path.abspath(self.results) if "://" not in self.results else self.results
        for path, name in ((root, "<results>"), (os.getcwd(), "<server>")):
            text = text.replace(path.rstrip("/"), name)
        return text[:2000]


def run_job(kind: str, request: dict, limits: dict, player, plan_seconds: float | None
            ) -> dict:
    """A plan's or a balance search's answer (JSON-ready), from its request as stored and the
    service's limits, its games played by `player` (services.runner.Player); a plan's pilot
    within `plan_seconds`."""
    if kind == "plan":
        from services.plan import Plan, PlanRequest, plan_experiment

        plan_request = PlanRequest.model_validate(request, context=limits)
        plan = plan_experiment(plan_request.spec, player, half_width=plan_request.half_width,
                               delta=plan_request.delta, pilot_games=plan_request.pilot_games,
                               seconds=plan_seconds)
        return Plan.model_validate(plan).model_dump(mode="json")
    if kind == "balance":
        from services.balance import run_balance
        from services.spec import ExperimentSpec

        spec = ExperimentSpec.model_validate(request, context=limits)
        return json.loads(json.dumps(run_balance(spec, player), default=float))
    raise ValueError(f"no job of kind {kind!r}")
