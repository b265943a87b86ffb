"""The demo: a question worth asking that a 2-core laptop answers in minutes.

Embedded as package data (services/demo.json) so that `meeplelab demo` works from any folder
after `pip install .`.  It holds the question in words and its experiments in order: the
question under a strong agent that plays fast enough to decide it in a minute or two, then
the same question under a stronger agent (the next rung), which shows whether the verdict
holds when the players get better.  Each stops as soon as it is decided (stop_when.delta:
always-valid figures, so stopping early keeps its error rate).  The measured times are in
docs/tour.md.

`meeplelab demo` queues them in the service and prints, in the terminal, their progress with
an ETA and each verdict as it is decided, then the dashboard URL again (TerminalReport);
`meeplelab demo --table` plays them here and prints their tables.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from importlib import resources

from services.registry import ENDED_EARLY, FINISHED
from services.spec import ExperimentSpec

DEMO_FILE = "demo.json"
_FAILED: list[str] = []  # the demo experiments this process saw fail (failures())


def demo_file() -> dict:
    return json.loads(resources.files("services").joinpath(DEMO_FILE).read_text())


DEMO_QUESTION = demo_file()["question"]


def demo_specs() -> list[dict]:
    """The demo's experiment specs, in the order they are played."""
    return demo_file()["experiments"]


def ensure_demo(registry) -> list[str]:
    """The ids of the demo's experiments in the registry, queued now unless they are already
    there (finished or not: a restart resumes them instead of starting them again)."""
    ids = []
    records = registry.list()
    for raw in demo_specs():
        spec = ExperimentSpec.model_validate(raw)
        found = next((r["id"] for r in records if r["spec"] == raw
                      and r["status"] not in ENDED_EARLY), None)
        ids.append(found or registry.create(raw, spec.name, spec.game,
                                            games_total=spec.total_games()))
    return ids


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    s = int(round(seconds))
    return f"{s} s" if s < 60 else f"{s // 60} min {s % 60:02d} s"


class TerminalReport(threading.Thread):
    """Prints, while the service plays the demo: each experiment's progress with an ETA
    (every `every` seconds), each verdict as it is decided (interim figures, valid at any
    look), the answer when it is done, then the dashboard URL again.  A failed experiment
    ends the demo: the terminal says so and `on_failure` runs (by default it stops the
    service, and `meeplelab demo` then exits with 1: `failed` holds the failures)."""

    def __init__(self, db: str, results: str, ids: list[str], url: str, every: float = 5.0,
                 out=None, on_failure=None):
        super().__init__(daemon=True, name="demo-terminal")
        self.db, self.results, self.ids, self.url, self.every = db, results, ids, url, every
        self.out = out or sys.stderr
        self.on_failure = on_failure or _stop_this_process
        self.stopped = threading.Event()
        self.failed: list[str] = []

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def run(self) -> None:
        from services.registry import Registry

        registry = Registry(self.db)
        try:
            for n, eid in enumerate(self.ids, 1):
                status = self.follow(registry, eid, f"[{n}/{len(self.ids)}]")
                if status is None:
                    return
                if status == "failed":
                    self.failed.append(eid)
                    _FAILED.append(eid)
                    self.say(f"the demo failed: experiment {n} of {len(self.ids)} did not "
                             "finish (the error is above); stopping the service")
                    self.on_failure()
                    return
            self.say(f"the demo is done: {self.url}")
        except Exception as exc:  # the terminal's report must never stop the service
            self.say(f"(the terminal report stopped: {exc}; the dashboard has everything)")
        finally:
            registry.close()

    def follow(self, registry, eid: str, tag: str) -> str | None:
        """Follows one experiment to its end; its final status (None: stopped first)."""
        from services.report import VerdictLog
        from pipelines.folder import experiment_path, has_results

        record = registry.get(eid)
        spec = ExperimentSpec.model_validate(record["spec"])
        root = experiment_path(self.results, eid)
        log = VerdictLog(spec, root)
        self.say(f"{tag} {record['name']}: {_who(spec)}, until decided (at most "
                 f"{spec.total_games():,} games)")
        shown = seen_games = 0
        while not self.stopped.wait(1.0):
            record = registry.get(eid)
            if record is None:
                return None
            status, done = record["status"], record["games_done"]
            now = time.monotonic()
            quiet = done == seen_games and now - shown < 6 * self.every  # nothing new
            if status == "running" and now - shown >= self.every and not quiet:
                shown = now
                self.say(f"{tag} " + progress_text(done, record["games_per_second"],
                                                   record["eta_seconds"]))
                if done > seen_games and has_results(root):
                    seen_games = done
                    for line in log.new_lines():
                        self.say(f"{tag} {line}")
            if status in FINISHED:
                self.ended(log, record, tag)
                self.say(f"{tag} figures and charts: {self.url}experiments/{eid}")
                return status
        return None

    def ended(self, log, record: dict, tag: str) -> None:
        status = record["status"]
        if status != "done":
            self.say(f"{tag} {status} after {record['games_done']:,} games"
                     + (f": {record['error']}" if record.get("error") else ""))
            return
        self.say(f"{tag} done after {record['games_done']:,} games. The answer:")
        for line in log.answer_lines():
            self.say(f"{tag} {line}")


def failures() -> list[str]:
    """The ids of the demo experiments that failed while this process served the demo."""
    return list(_FAILED)


def _who(spec) -> str:
    from services.report import short_agent

    agent = short_agent(spec.agents) if isinstance(spec.agents, str) else "mixed agents"
    return f"{agent} in every seat" if isinstance(spec.agents, str) else agent


def progress_text(done: int, rate: float | None, eta: float | None) -> str:
    """'1,200 games played, 35 games/s, ETA 2 min 10 s' ('ETA –' while it is unknown)."""
    from services.report import games_per_second, plural

    text = f"{plural(done, 'game')} played"
    if rate:
        text += f", {games_per_second(rate)}, ETA {duration(eta)}"
    return text


def _stop_this_process() -> None:
    """Stops the service the way Ctrl-C does (uvicorn ends the lifespan, then returns)."""
    os.kill(os.getpid(), signal.SIGINT)
