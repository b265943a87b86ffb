"""The service's background worker: runs queued experiments in submission order, at most
`slots` at once (MEEPLELAB_MAX_RUNNING), each on its own thread.

The registry is the source of truth: the worker reads the spec from it, writes status and
progress back, and on start re-queues every unfinished experiment (a `running` one was
interrupted by a stop or a crash; the runner skips the shards it had already written).
"""
from __future__ import annotations

import logging
import os
import queue
import sqlite3
import sys
import threading
import time
from typing import Callable

from services.registry import FINISHED, Registry

log = logging.getLogger("meeplelab.worker")

PROGRESS_INTERVAL_S = 0.5  # at most two registry writes a second per running experiment
STUCK_SECONDS = 120.0  # a worker thread silent this long is reported stuck (/readyz)
RETRY_SECONDS = 0.5  # between attempts of a registry write that failed

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
    """`slots` daemon threads consuming experiment ids; `cancel` and `stop` are thread-safe.
    `shard_done(seconds, games)` is called as each shard finishes (metrics).

    Supervised: an error in a run fails that run and the thread goes on; the registry
    writes that record a run's fate are retried until they succeed (a full disk for a
    while is survived); each thread beats while it waits or runs, and `problem()` says
    when one has died or not beaten for STUCK_SECONDS (what /readyz reports)."""

    def __init__(self, registry: Registry, results: str, slots: int = 1,
                 ray_address: str | None = None,
                 shard_done: Callable[[float, int], None] | None = None,
                 worker_nice: int = 0):
        self.registry = registry
        self.results = results
        self.slots = slots
        self.ray_address = ray_address
        self.shard_done = shard_done
        self.worker_nice = worker_nice
        self._queue: queue.Queue = queue.Queue()
        self._lock = threading.Lock()  # guards _running and the queued->running transition
        self._running: dict[str, threading.Event] = {}
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._beats: dict[str, float] = {}
        self._written: dict[str, int] = {}  # running experiment -> games of shards written

    # ---- control ------------------------------------------------------------------------
    def start(self) -> None:
        """Re-queue unfinished experiments (oldest first) and start the threads."""
        for eid in self.registry.unfinished():
            self.registry.set_status(eid, "queued")
            self._queue.put(eid)
        for k in range(self.slots):
            thread = threading.Thread(target=self._loop, name=f"meeplelab-worker-{k}",
                                      daemon=True)
            self._beats[thread.name] = time.monotonic()
            thread.start()
            self._threads.append(thread)

    def submit(self, eid: str) -> None:
        self._queue.put(eid)

    def ray_state(self) -> str:
        return _ray_state if self._threads else "not started (no worker)"

    def problem(self) -> str | None:
        """Why the worker cannot take experiments now (None when it can): a thread that has
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
        """Stop after interrupting the running experiments; they stay unfinished and resume
        at the next start."""
        self._stopping.set()
        with self._lock:
            for event in self._running.values():
                event.set()
        for _ in self._threads:
            self._queue.put(None)
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def written(self, eid: str, default: int) -> int:
        """The games of the shards written by a run of this worker (the registry's games
        done count those of shards still playing too); `default` when none runs `eid`."""
        return self._written.get(eid, default)

    def cancel(self, eid: str) -> bool:
        """Cancel a queued or running experiment; False when it had already finished."""
        with self._lock:
            record = self.registry.get(eid)
            if record is None or record["status"] in FINISHED:
                return False
            self.registry.request_cancel(eid)
            if eid in self._running:
                self._running[eid].set()  # the runner stops within a second and reports back
            else:
                self.registry.set_status(eid, "cancelled")
            return True

    # ---- the threads --------------------------------------------------------------------
    def _beat(self) -> None:
        self._beats[threading.current_thread().name] = time.monotonic()

    def _write(self, method: Callable, *args) -> bool:
        """A registry write that records a run's fate, retried (every RETRY_SECONDS, the
        thread beating) until it succeeds; False when the worker stops first."""
        while True:
            self._beat()
            try:
                method(*args)
                return True
            except sqlite3.Error as exc:
                log.warning("registry write %s%s failed (%s); retrying", method.__name__,
                            args[:2], exc)
            if self._stopping.wait(RETRY_SECONDS):
                return False

    def _loop(self) -> None:
        try:
            start_ray(self.ray_address)  # pay Ray's start-up once, before work arrives
        except Exception:
            log.exception("Ray did not start; experiments will fail until it does")
        while not self._stopping.is_set():
            self._beat()
            try:
                eid = self._queue.get(timeout=1.0)
            except queue.Empty:
                continue
            if eid is None:
                break
            try:
                self._run(eid)
            except Exception as exc:  # never let one experiment kill the worker
                log.exception("experiment %s crashed the worker step", eid)
                with self._lock:
                    self._running.pop(eid, None)
                self._written.pop(eid, None)
                self._write(self.registry.set_status, eid, "failed",
                            self._public(f"{type(exc).__name__}: {exc}"))

    def _claim(self, eid: str) -> threading.Event | None:
        """Mark a queued experiment running (None if it was cancelled or is gone)."""
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

    def _run(self, eid: str) -> None:
        from services.runner import run_experiment  # imports Ray: only when work arrives
        from services.spec import ExperimentSpec

        cancel = self._claim(eid)
        if cancel is None:
            return
        spec = ExperimentSpec.model_validate(self.registry.get(eid)["spec"])
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
                self.registry.set_progress(eid, p.done, p.total, p.games_per_s, p.eta_s)
            except sqlite3.Error as exc:
                log.warning("progress of %s not written: %s", eid, exc)

        try:
            outcome = run_experiment(spec, self.results, eid, progress=progress, cancel=cancel,
                                     shard_done=self.shard_done, nice=self.worker_nice)
        except Exception as exc:
            log.exception("experiment %s failed", eid)
            outcome = "failed"
            errors.append(f"{type(exc).__name__}: {exc}")
        with self._lock:
            self._running.pop(eid, None)
            interrupted = (outcome == "cancelled" and self._stopping.is_set()
                           and not self.registry.get(eid)["cancel_requested"])
        # A stop of the service is not a user's cancel: leave it to resume next start.
        self._write(self.registry.set_status, eid, "queued" if interrupted else outcome,
                    self._public(errors[-1] if errors else "the runner reported a failure")
                    if outcome == "failed" else None)
        self._written.pop(eid, None)  # the registry's games done are the games written now

    def _public(self, text: str) -> str:
        """An error text as clients may see it: the server's results folder and working
        directory are named, not spelled out (no absolute server path in the open list)."""
        root = os.path.abspath(self.results) if "://" not in self.results else self.results
        for path, name in ((root, "<results>"), (os.getcwd(), "<server>")):
            text = text.replace(path.rstrip("/"), name)
        return text[:2000]
