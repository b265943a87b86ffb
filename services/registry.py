"""The job registry: one SQLite table of jobs (kind, owner, spec, status, progress, times,
error, result), the service's one job queue.

A job is an experiment, a plan or a balance search (`kind`, KINDS).  The registry is the
service's memory across restarts: a job is written here before it is queued, its status and
progress are updated while it runs, and a new service process finds every unfinished (queued
or running) job here and runs it again (an experiment's runner skips the shards already
written, so nothing is lost and nothing is played twice; a plan or a balance search, a pure
function of its request, starts again).  A plan's or a balance search's answer is its
`result` (JSON).

Its file is the settings' `db` (services.settings, MEEPLELAB_DB).
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid

# A job's statuses, spelled here only: the API's models, the pages (a job's `finished`) and
# the runner read them from here.
ACTIVE = ("queued", "running")
ENDED_EARLY = ("failed", "cancelled")  # finished before the spec's end
FINISHED = ("done", *ENDED_EARLY)
STATUSES = ACTIVE + FINISHED
KINDS = ("experiment", "plan", "balance")

_COLUMNS = ("id", "name", "game", "spec", "status", "games_done", "games_total",
            "games_per_second", "eta_seconds", "created_at", "started_at", "finished_at",
            "error", "cancel_requested", "owner", "kind", "result", "detail", "cpu_seconds")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS experiments (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    game TEXT NOT NULL,
    spec TEXT NOT NULL,
    status TEXT NOT NULL,
    games_done INTEGER NOT NULL DEFAULT 0,
    games_total INTEGER,
    games_per_second REAL,
    eta_seconds REAL,
    created_at REAL NOT NULL,
    started_at REAL,
    finished_at REAL,
    error TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    seq INTEGER,
    owner TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL DEFAULT 'experiment',
    result TEXT,
    detail TEXT,
    cpu_seconds REAL
)
"""
# Columns added after the first release, for registries created before them.
_ADDED = {"owner": "TEXT NOT NULL DEFAULT ''", "kind": "TEXT NOT NULL DEFAULT 'experiment'",
          "result": "TEXT", "detail": "TEXT", "cpu_seconds": "REAL"}


class QuotaFull(Exception):
    """The owner already has its quota of unfinished jobs of the kind (`unfinished`: their
    records), or (`everyone`) the queue holds its global cap of unfinished jobs."""

    def __init__(self, unfinished: list[dict], everyone: bool = False):
        super().__init__(f"{len(unfinished)} unfinished jobs")
        self.unfinished, self.everyone = unfinished, everyone


def _readable(value):
    """A stored spec with every string made valid Unicode (a lone surrogate, which specs
    stored before text was validated may hold, becomes U+FFFD), so that it can be shown."""
    if isinstance(value, str):
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in value)
    if isinstance(value, list):
        return [_readable(v) for v in value]
    if isinstance(value, dict):
        return {_readable(k): _readable(v) for k, v in value.items()}
    return value


def new_id() -> str:
    """A short, sortable-enough, collision-safe experiment id."""
    return time.strftime("%Y%m%d-%H%M%S-", time.gmtime()) + uuid.uuid4().hex[:8]


def _connect(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    db.row_factory = sqlite3.Row
    return db


class Registry:
    """Thread-safe access to the experiments table: one connection for writes and one for
    reads, each under its own lock.

    Why two: a write waits for the disk (8-20 ms of fsync here) while holding its lock, and
    the API answers polls from the event loop; in WAL mode a reader sees the last committed
    rows without waiting for a writer, so a poll never waits for a progress update."""

    def __init__(self, path: str):
        self.path = path
        self._lock = threading.Lock()
        self._writes = 0  # statements run on the write connection (see version)
        self.write_error: str | None = None  # the last write's failure, until one succeeds
        # The API handlers and the worker thread share each connection under its lock.
        self._db = _connect(self.path)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
            have = {row["name"] for row in self._db.execute("PRAGMA table_info(experiments)")}
            for name, kind in _ADDED.items():
                if name not in have:
                    self._db.execute(f"ALTER TABLE experiments ADD COLUMN {name} {kind}")
        if path == ":memory:":  # a second connection would open another, empty database
            self._reader, self._read_lock = self._db, self._lock
        else:
            self._reader, self._read_lock = _connect(self.path), threading.Lock()

    def close(self) -> None:
        with self._read_lock:
            self._reader.close()
        with self._lock:
            self._db.close()

    def _execute(self, sql: str, args: tuple = ()) -> list[sqlite3.Row]:
        """A write; `write_error` keeps the last failure's text until a write succeeds."""
        with self._lock:
            self._writes += 1
            try:
                rows = self._db.execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                self.write_error = f"{type(exc).__name__}: {exc}"
                raise
            self.write_error = None
            return rows

    def _query(self, sql: str, args: tuple = ()) -> list[sqlite3.Row]:
        """A read, on the read connection (never waits for a write in progress)."""
        with self._read_lock:
            return self._reader.execute(sql, args).fetchall()

    @staticmethod
    def _record(row: sqlite3.Row) -> dict:
        record = {k: row[k] for k in _COLUMNS}
        record["spec"] = _readable(json.loads(record["spec"])) if "\\ud" in record["spec"] \
            else json.loads(record["spec"])
        record["cancel_requested"] = bool(record["cancel_requested"])
        record["result"] = None if record["result"] is None else json.loads(record["result"])
        return record

    # ---- writes -------------------------------------------------------------------------
    def create(self, spec: dict, name: str, game: str, games_total: int | None = None,
               owner: str = "", quota: int | None = None, kind: str = "experiment",
               cap: int | None = None) -> str:
        """Store a validated request (a JSON-able dict: an experiment's spec, a plan's or a
        balance search's request) as a queued job of `kind`; return its id.  `owner` names
        the token that submitted it ("" without tokens).  The quotas are counted and the row
        written in one transaction (BEGIN IMMEDIATE: no other writer, of this process or
        another, in between): QuotaFull when the owner has `quota` unfinished jobs of this
        kind already, or the queue `cap` unfinished jobs of every kind and owner."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {list(KINDS)}, got {kind!r}")
        eid = new_id()
        row = (eid, name, game, json.dumps(spec, ensure_ascii=False), games_total, time.time(),
               owner, kind)
        self._within_quota(owner, kind, quota, cap, (
            "INSERT INTO experiments (id, name, game, spec, status, games_total,"
            " created_at, owner, kind, seq) VALUES (?, ?, ?, ?, 'queued', ?, ?, ?, ?,"
            " (SELECT COALESCE(MAX(seq), 0) + 1 FROM experiments))", row))
        return eid

    def requeue(self, eid: str, quota: int | None = None, cap: int | None = None) -> None:
        """Queue a job that has ended again (an experiment's replay), counted against its
        owner's `quota` of unfinished jobs of its kind and the queue's `cap` as a new job is
        (QuotaFull), in one transaction; a cancel requested before is forgotten."""
        record = self.get(eid)
        self._within_quota(record["owner"], record["kind"], quota, cap, (
            "UPDATE experiments SET status='queued', error=NULL, cancel_requested=0"
            " WHERE id=? AND status NOT IN ('queued', 'running')", (eid,)))

    def _within_quota(self, owner: str, kind: str, quota: int | None, cap: int | None,
                      write: tuple[str, tuple]) -> None:
        """Runs `write` (sql, args) after counting the unfinished jobs, in one transaction
        (BEGIN IMMEDIATE: no other writer, of this process or another, in between):
        QuotaFull instead when `owner` has `quota` of `kind` or the queue `cap` of all."""
        with self._lock:
            self._writes += 1
            try:
                self._db.execute("BEGIN IMMEDIATE")
                if quota is not None:
                    mine = [self._record(r) for r in self._db.execute(
                        f"SELECT {', '.join(_COLUMNS)} FROM experiments WHERE owner=? AND"
                        " kind=? AND status IN ('queued', 'running') ORDER BY seq",
                        (owner, kind))]
                    if len(mine) >= quota:
                        raise QuotaFull(mine)
                if cap is not None:
                    every = [self._record(r) for r in self._db.execute(
                        f"SELECT {', '.join(_COLUMNS)} FROM experiments WHERE"
                        " status IN ('queued', 'running') ORDER BY seq")]
                    if len(every) >= cap:
                        raise QuotaFull(every, everyone=True)
                self._db.execute(*write)
                self._db.execute("COMMIT")
            except BaseException as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    self.write_error = f"{type(exc).__name__}: {exc}"
                raise
            self.write_error = None

    def delete(self, eid: str) -> None:
        self._execute("DELETE FROM experiments WHERE id=?", (eid,))

    def set_status(self, eid: str, status: str, error: str | None = None,
                   result: dict | None = None) -> None:
        """A job's new status; a finished one with its error or (done) its result."""
        if status not in STATUSES:
            raise ValueError(f"status must be one of {list(STATUSES)}, got {status!r}")
        now = time.time()
        if status == "running":
            self._execute("UPDATE experiments SET status=?, started_at=COALESCE(started_at, ?),"
                          " error=NULL WHERE id=?", (status, now, eid))
        elif status in FINISHED:
            self._execute("UPDATE experiments SET status=?, finished_at=?, error=?,"
                          " eta_seconds=NULL, result=? WHERE id=?",
                          (status, now, error, None if result is None
                           else json.dumps(result, ensure_ascii=False), eid))
        else:
            self._execute("UPDATE experiments SET status=?, error=NULL WHERE id=?",
                          (status, eid))

    def set_progress(self, eid: str, done: int, total: int | None,
                     games_per_second: float | None, eta_seconds: float | None,
                     detail: str | None = None, cpu_seconds: float | None = None) -> None:
        """A running job's progress; `detail`: what it is doing, in words; `cpu_seconds`:
        what the job has used so far (an experiment's budget counts them across restarts;
        kept when None)."""
        self._execute("UPDATE experiments SET games_done=?, games_total=?, games_per_second=?,"
                      " eta_seconds=?, detail=?, cpu_seconds=COALESCE(?, cpu_seconds)"
                      " WHERE id=?",
                      (int(done), None if total is None else int(total),
                       games_per_second, eta_seconds, detail, cpu_seconds, eid))

    def request_cancel(self, eid: str) -> None:
        self._execute("UPDATE experiments SET cancel_requested=1 WHERE id=?", (eid,))

    # ---- reads --------------------------------------------------------------------------
    def get(self, eid: str) -> dict | None:
        rows = self._query(f"SELECT {', '.join(_COLUMNS)} FROM experiments WHERE id=?", (eid,))
        return self._record(rows[0]) if rows else None

    def get_job(self, eid: str, kind: str) -> dict | None:
        """The job `eid` if it is of `kind` (None otherwise)."""
        record = self.get(eid)
        return record if record is not None and record["kind"] == kind else None

    def list(self, limit: int | None = None, offset: int = 0,
             kind: str = "experiment") -> list[dict]:
        """The jobs of `kind`, newest first (at most `limit` of them after skipping
        `offset`)."""
        rows = self._query(f"SELECT {', '.join(_COLUMNS)} FROM experiments WHERE kind=?"
                           " ORDER BY seq DESC LIMIT ? OFFSET ?",
                           (kind, -1 if limit is None else limit, offset))
        return [self._record(r) for r in rows]

    def count(self, kind: str = "experiment") -> int:
        return self._query("SELECT COUNT(*) AS n FROM experiments WHERE kind=?",
                           (kind,))[0]["n"]

    def version(self) -> tuple[int, int]:
        """A value that changes whenever the table may have changed since the last call, so
        that an answer built from it can be kept until then: this object's writes, and SQLite's
        data_version of the read connection (it changes with every commit of another
        connection: this object's writer, or another process's)."""
        return self._writes, self._query("PRAGMA data_version")[0][0]

    def status_counts(self, kind: str = "experiment") -> dict[str, int]:
        rows = self._query("SELECT status, COUNT(*) AS n FROM experiments WHERE kind=?"
                           " GROUP BY status", (kind,))
        return {r["status"]: r["n"] for r in rows}

    def unfinished(self) -> list[str]:
        """Ids of the queued or running jobs of every kind, oldest first (the order to
        resume them)."""
        rows = self._query("SELECT id FROM experiments WHERE status IN ('queued', 'running')"
                           " ORDER BY seq")
        return [r["id"] for r in rows]
