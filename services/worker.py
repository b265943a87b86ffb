"""The service's background worker: runs queued experiments one at a time, in submission order.

The registry is the source of truth: the worker reads the spec from it, writes status and
progress back, and on start re-queues every unfinished experiment (a `running` one was
interrupted by a stop or a crash; the runner skips the shards it had already written).
"""
from __future__ import annotations

import logging
import queue
import threading
import time

from services.registry import FINISHED, Registry

log = logging.getLogger("meeplelab.worker")

PROGRESS_INTERVAL_S = 0.5  # at most two registry writes a second while a run is going

_ray_lock = threading.Lock()
_ray_thread: threading.Thread | None = None


def start_ray() -> None:
    """Start the local Ray (or connect to RAY_ADDRESS) from a thread that lives as long as
    the process, and wait until it is up.

    Why a thread of its own: Ray's local processes (GCS, raylet) die with the *thread* that
    started them (Linux parent-death signal), so starting Ray from a worker thread that a
    service stop ends would kill Ray under the next worker of the same process.
    """
    global _ray_thread
    from services.runner import init_ray

    with _ray_lock:
        if _ray_thread is None:
            ready = threading.Event()
            failure: list[BaseException] = []

            def own_ray() -> None:
                try:
                    init_ray()
                except BaseException as exc:  # reported to the caller below
                    failure.append(exc)
                ready.set()
                threading.Event().wait()  # live until the process exits

            _ray_thread = threading.Thread(target=own_ray, name="meeplelab-ray", daemon=True)
            _ray_thread.start()
            ready.wait()
            if failure:
                _ray_thread = None
                raise failure[0]


class Worker:
    """One daemon thread consuming experiment ids; `cancel` and `stop` are thread-safe."""

    def __init__(self, registry: Registry, results: str):
        self.registry = registry
        self.results = results
        self._queue: queue.Queue = queue.Queue()
        self._lock = threading.Lock()  # guards _current and the queued->running transition
        self._current: tuple[str, threading.Event] | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    # ---- control ------------------------------------------------------------------------
    def start(self) -> None:
        """Re-queue unfinished experiments (oldest first) and start the thread."""
        for eid in self.registry.unfinished():
            self.registry.set_status(eid, "queued")
            self._queue.put(eid)
        self._thread = threading.Thread(target=self._loop, name="meeplelab-worker", daemon=True)
        self._thread.start()

    def submit(self, eid: str) -> None:
        self._queue.put(eid)

    def stop(self, timeout: float = 60.0) -> None:
        """Stop after interrupting the current run; it stays unfinished and resumes later."""
        self._stopping.set()
        with self._lock:
            if self._current:
                self._current[1].set()
        self._queue.put(None)
        if self._thread:
            self._thread.join(timeout)

    def cancel(self, eid: str) -> bool:
        """Cancel a queued or running experiment; False when it had already finished."""
        with self._lock:
            record = self.registry.get(eid)
            if record is None or record["status"] in FINISHED:
                return False
            self.registry.request_cancel(eid)
            if self._current and self._current[0] == eid:
                self._current[1].set()  # the runner stops between shards and reports back
            else:
                self.registry.set_status(eid, "cancelled")
            return True

    # ---- the thread ---------------------------------------------------------------------
    def _loop(self) -> None:
        try:
            start_ray()  # pay Ray's start-up once, before the first experiment arrives
        except Exception:
            log.exception("Ray did not start; experiments will fail until it does")
        while not self._stopping.is_set():
            eid = self._queue.get()
            if eid is None:
                break
            try:
                self._run(eid)
            except Exception as exc:  # never let one experiment kill the worker
                log.exception("experiment %s crashed the worker step", eid)
                self.registry.set_status(eid, "failed", f"{type(exc).__name__}: {exc}")

    def _claim(self, eid: str) -> threading.Event | None:
        """Mark a queued experiment running (None if it was cancelled or is gone)."""
        with self._lock:
            record = self.registry.get(eid)
            if record is None or record["status"] != "queued" or self._stopping.is_set():
                return None
            if record["cancel_requested"]:
                self.registry.set_status(eid, "cancelled")
                return None
            self.registry.set_status(eid, "running")
            self._current = (eid, threading.Event())
            return self._current[1]

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
            if p.status == "running" and now - last[0] < PROGRESS_INTERVAL_S:
                return
            last[0] = now
            self.registry.set_progress(eid, p.done, p.total, p.games_per_s, p.eta_s)

        try:
            outcome = run_experiment(spec, self.results, eid, progress=progress, cancel=cancel)
        except Exception as exc:
            log.exception("experiment %s failed", eid)
            outcome = "failed"
            errors.append(f"{type(exc).__name__}: {exc}")
        with self._lock:
            self._current = None
            interrupted = (outcome == "cancelled" and self._stopping.is_set()
                           and not self.registry.get(eid)["cancel_requested"])
            # A stop of the service is not a user's cancel: leave it to resume next start.
            self.registry.set_status(eid, "queued" if interrupted else outcome,
                                     (errors[-1] if errors else "the runner reported a failure")
                                     if outcome == "failed" else None)
