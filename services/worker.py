"""The service's one job queue: experiments, plans and balance searches (the registry's job
kinds), each kind with its places (`lanes`: how many run at once, the global cap), taken in
submission order with the owners (tokens) in turn; a token runs at most `places_per_token`
jobs of a kind at once, so one token's long jobs never hold another's back (an admin token's
jobs have places of their own beyond the cap), and running jobs of different tokens share the
cluster's CPUs (each experiment's shard tasks in flight bounded by its owner's share:
Worker._in_flight, which the runner asks as it goes).

The registry is the source of truth: the worker reads a job's request from it, writes status,
progress and result back, and on start re-queues every unfinished job (a `running` one was
interrupted by a stop or a crash; an experiment's runner skips the shards it had already
written).  Heavy work never runs in the API process: an experiment's shards are niced Ray
tasks (a cancel force-cancels them), and a plan's pilot or a balance search plays in a niced
process of its own (JOB_PROCESS, `run_job`) under a CPU-time limit (its
budget: RLIMIT_CPU), which a cancel or a stop ends at once (SIGKILL), a game in the middle
or not, so its place is free within a poll (JOB_POLL_SECONDS).
"""
from __future__ import annotations

import json
import logging
import math
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from typing import Callable

from services.registry import FINISHED, KINDS, Registry

log = logging.getLogger("meeplelab.worker")

PROGRESS_INTERVAL_S = 0.5  # at most two registry writes a second per running job
STUCK_SECONDS = 120.0  # a worker thread silent this long is reported stuck (/readyz)
RETRY_SECONDS = 0.5  # between attempts of a registry write that failed
JOB_POLL_SECONDS = 0.05  # how often a job process's thread looks at its cancel and its output
RATE_WINDOW_S = 30.0  # a job's games per second: over about the last this many seconds
CPUS_SECONDS = 5.0  # the cluster's CPUs (for the owners' shares) are asked at most this often
# A job process: the installed product, never the working directory's sources ('' leaves the
# path before anything is imported: `python -P` on Python 3.11+ only).
JOB_PROCESS = ("import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
               "from services.worker import _job_process; _job_process()")

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


class Rate:
    """Games per second over about the last RATE_WINDOW_S seconds (None until two reports)."""

    def __init__(self):
        self._seen: list[tuple[float, int]] = []

    def add(self, done: int) -> float | None:
        now = time.monotonic()
        self._seen.append((now, done))
        while len(self._seen) > 2 and now - self._seen[1][0] > RATE_WINDOW_S:
            self._seen.pop(0)
        (t0, d0), (t1, d1) = self._seen[0], self._seen[-1]
        return (d1 - d0) / (t1 - t0) if t1 > t0 and d1 > d0 else None


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
        self._lock = threading.Lock()  # guards _running, _procs and queued->running
        self._running: dict[str, threading.Event] = {}
        self._procs: dict[str, subprocess.Popen] = {}  # running plan or balance -> process
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
            for proc in self._procs.values():
                _end(proc)
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
                if eid in self._procs:
                    _end(self._procs[eid])
                    self.registry.set_status(eid, "cancelled")
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
        if kind == "experiment":
            try:
                start_ray(self.ray_address)  # pay Ray's start-up once, before work arrives
            except Exception:
                log.exception("Ray did not start; experiments will fail until it does")
        while not self._stopping.is_set():
            self._beat()
            eid = self._next(kind)
            if eid is None:
                continue
            try:
                (self._run if kind == "experiment" else self._run_process)(eid)
            except Exception as exc:  # never let one job kill the worker
                log.exception("job %s crashed the worker step", eid)
                with self._lock:
                    self._running.pop(eid, None)
                    self._procs.pop(eid, None)
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
            self._procs.pop(eid, None)
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
        last = [0.0]
        errors: list[str] = []

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
                                           cpu_seconds=p.cpu_seconds)
            except sqlite3.Error as exc:
                log.warning("progress of %s not written: %s", eid, exc)

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

    def _run_process(self, eid: str) -> None:
        """A plan or a balance search in a job process of its own (run_job): its progress
        and result read from its output, ended at once on a cancel or a stop."""
        cancel = self._claim(eid)
        if cancel is None:
            return
        record = self.registry.get(eid)
        asked = record["spec"].get("cpu_seconds") if record["kind"] == "balance" else None
        seconds, name = self._budget(asked, self.job_cpu_seconds, "MEEPLELAB_JOB_CPU_SECONDS")
        order = {"kind": record["kind"], "request": record["spec"], "limits": self.limits,
                 "plan_seconds": self.plan_seconds, "nice": self.worker_nice,
                 "cpu_seconds": seconds}
        proc = subprocess.Popen([sys.executable, "-c", JOB_PROCESS],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        with self._lock:
            self._procs[eid] = proc
            if cancel.is_set():
                _end(proc)
        lines: queue.Queue = queue.Queue()
        tail: list[str] = []
        threading.Thread(target=_pump, args=(proc.stdout, lines.put), daemon=True).start()
        threading.Thread(target=_pump, args=(proc.stderr, _keep(tail)), daemon=True).start()
        try:
            proc.stdin.write(json.dumps(order))
            proc.stdin.close()
        except OSError:  # ended before it read its order (a cancel)
            pass
        answer: dict = {}
        self._follow(eid, proc, lines, cancel, answer)
        proc.wait()
        if cancel.is_set():
            self._finish(eid, "cancelled")
        elif "result" in answer:
            self._finish(eid, "done", result=answer["result"])
        elif proc.returncode == -signal.SIGXCPU:
            self._finish(eid, "failed", f"the job used its CPU budget of {seconds:g} "
                         f"CPU-seconds ({name})")
        else:
            self._finish(eid, "failed", answer.get("error") or
                         f"the job's process ended with code {proc.returncode}: "
                         + " ".join(tail[-3:]).strip())

    def _follow(self, eid: str, proc, lines: queue.Queue, cancel, answer: dict) -> None:
        """Reads a job process's messages until it ends (or a cancel ends it): progress to
        the registry (at most every PROGRESS_INTERVAL_S), the result or error to `answer`."""
        rate, last, done = Rate(), 0.0, 0
        while True:
            self._beat()
            try:
                line = lines.get(timeout=JOB_POLL_SECONDS)
            except queue.Empty:
                if cancel.is_set():
                    _end(proc)
                    return
                continue
            if line is None:
                return
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if "progress" not in message:
                answer.update(message)
                continue
            p = message["progress"]
            done += int(p.get("games", 0))
            per_s = rate.add(done)
            left = p.get("left")
            eta = left / per_s if per_s and left is not None else None
            if time.monotonic() - last < PROGRESS_INTERVAL_S:
                continue
            last = time.monotonic()
            try:
                self.registry.set_progress(eid, done, None if left is None else done + left,
                                           per_s, eta, detail=p.get("detail"))
            except sqlite3.Error as exc:
                log.warning("progress of %s not written: %s", eid, exc)

    def _public(self, text: str) -> str:
        """An error text as clients may see it: the server's results folder and working
        directory are named, not spelled out (no absolute server path in the open list)."""
        root = os.path.abspath(self.results) if "://" not in self.results else self.results
        for path, name in ((root, "<results>"), (os.getcwd(), "<server>")):
            text = text.replace(path.rstrip("/"), name)
        return text[:2000]


def _end(proc: subprocess.Popen) -> None:
    """End a job process at once (it holds no file of the service: nothing to clean)."""
    if proc.poll() is None:
        proc.kill()


def _pump(stream, put: Callable) -> None:
    for line in stream:
        put(line)
    put(None)


def _keep(tail: list[str]) -> Callable:
    def put(line):
        if line is not None:
            tail.append(line.strip())
            del tail[:-20]
    return put


# ---- the job process -----------------------------------------------------------------------
def run_job(order: dict, emit: Callable[[dict], None]) -> dict:
    """A plan's or a balance search's answer (JSON-ready), from its order: the request as
    stored, the service's limits, the pilot's time budget; `emit(progress)` reports how far
    it has come."""
    kind = order["kind"]
    if kind == "plan":
        from services.plan import Plan, PlanRequest, plan_experiment

        request = PlanRequest.model_validate(order["request"], context=order["limits"])
        plan = plan_experiment(request.spec, half_width=request.half_width,
                               delta=request.delta, pilot_games=request.pilot_games,
                               seconds=order.get("plan_seconds"))
        return Plan.model_validate(plan).model_dump(mode="json")
    if kind == "balance":
        from services.balance import run_balance
        from services.spec import ExperimentSpec

        spec = ExperimentSpec.model_validate(order["request"], context=order["limits"])
        return json.loads(json.dumps(run_balance(spec, progress=emit), default=float))
    raise ValueError(f"no job process runs a job of kind {kind!r}")


def _job_process() -> None:
    """A job process (JOB_PROCESS): one job, its order read from stdin, its messages
    written to stdout one JSON object a line (progress, then its result or error); niced
    and under its CPU budget before it plays."""
    import ctypes
    import resource

    try:  # ends with the thread that started it, even when the service is killed
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything else printed goes to stderr, not into the messages
    order = json.loads(sys.stdin.read())
    niceness = int(order.get("nice") or 0)
    if os.nice(0) < niceness:  # raised to the setting, never lowered (os.nice only adds)
        os.nice(niceness - os.nice(0))
    if order.get("cpu_seconds"):
        limit = math.ceil(order["cpu_seconds"])
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))

    def emit(progress: dict) -> None:
        out.write(json.dumps({"progress": progress}, default=float) + "\n")

    try:
        out.write(json.dumps({"result": run_job(order, emit)}) + "\n")
    except Exception as exc:  # reported as the job's error
        out.write(json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\n")
    out.flush()
