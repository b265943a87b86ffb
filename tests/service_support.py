"""Helpers shared by the service tests: a generic small spec, an app on a fresh registry, and
waiting for an experiment to reach a status."""
import os
import signal
import socket
import threading
import time
from contextlib import contextmanager

import uvicorn

import core_cy

GAME = next(g for g in core_cy.game_names() if not core_cy.load(g).cooperative)  # a competitive game
INFO = core_cy.load(GAME).info()
PLAYERS = INFO["min_players"]
FINISHED = ("done", "failed", "cancelled")


def enum_option() -> tuple[str, list]:
    """The first rule option with a choice of values (every game has a variant switch)."""
    for name, schema in INFO["rules"]["properties"].items():
        if len(schema.get("enum", ())) > 1:
            return name, schema["enum"]
    raise AssertionError(f"{GAME} has no enum rule option to build arms from")


def small_spec(**extra) -> dict:
    """Two arms (two values of a variant switch), two player counts, a few hundred games."""
    name, values = enum_option()
    players = [PLAYERS, PLAYERS + 1] if INFO["max_players"] > PLAYERS else PLAYERS
    spec = {"name": "small", "game": GAME, "players": players,
            "arms": {"a": {name: values[0]}, "b": {name: values[1]}}, "baseline": "a",
            "games_per_arm": 200, "seed": 5, "shard_size": 100}
    spec.update(extra)
    return spec


def wait_for(client, eid: str, statuses=FINISHED, timeout: float = 120, condition=None) -> dict:
    """Poll GET /api/experiments/{eid} until its status is in `statuses` (and `condition`)."""
    deadline = time.monotonic() + timeout
    while True:
        exp = client.get(f"/api/experiments/{eid}").json()
        if exp["status"] in statuses and (condition is None or condition(exp)):
            return exp
        if time.monotonic() > deadline:
            raise AssertionError(f"experiment {eid} still {exp['status']} after {timeout} s: {exp}")
        time.sleep(0.1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_finished(registry, results, raw: dict, owner: str = "", status: str = "done",
                   error: str | None = None, games: int | None = None, agent: str = "random",
                   edit=None) -> tuple[str, "Path", dict]:
    """A finished experiment of the spec `raw` in `registry` (`status`: done, or cancelled or
    failed with `error` after the first `games` of each cell; `agent` in every seat, a ladder
    rung's in a rung's cells), its shards written as the
    runner writes them (the shard task's writer, then the manifest) without Ray: (id, its
    folder, its manifest).  `edit(cell, table)`: the table to store instead of a shard's."""
    from pathlib import Path

    from core_cy.play import batch
    from pipelines import folder
    from services.spec import ExperimentSpec

    spec = ExperimentSpec.model_validate(raw)
    eid = registry.create(raw, spec.name, spec.game, spec.total_games(), owner=owner)
    root = Path(folder.experiment_path(str(results), eid))
    fs, base = folder.filesystem(str(root))
    game, entries = core_cy.load(spec.game), []
    for cell in spec.cells():
        for start in range(0, games or spec.games_per_arm, spec.shard_size):
            rows = batch.play(game, cell.players, cell.rules, cell.agent or agent,
                              seed=spec.seed, start=start, count=spec.shard_size,
                              experiment=eid, arm=cell.arm)
            table = folder.storage_table(rows)
            entries.append(folder.write_shard(edit(cell, table) if edit else table, fs, base,
                                               start, spec.shard_size))
    manifest = folder.write_manifest(str(root), entries, eid, spec.seed, status, error)
    registry.set_progress(eid, manifest["games"], manifest["games"], None, None)
    registry.set_status(eid, status, error)
    return eid, root, manifest


@contextmanager
def _running(app):
    """The app served by uvicorn on a free loopback port (its base URL)."""
    port = _free_port()
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(60)


def session_processes(sid: int) -> list[str]:
    """Command lines of the live processes of a session (a service started in its own)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[3]) == sid and fields[0] != "Z":
                with open(f"/proc/{entry}/cmdline") as f:
                    found.append(f.read().replace("\0", " ")[:120])
        except (OSError, IndexError, ValueError):
            pass
    return found


def assert_session_ends(server, seconds: float = 15.0) -> None:
    """A stopped service (a Popen in a session of its own) leaves no process behind: Ray's
    included, within `seconds`."""
    deadline = time.monotonic() + seconds
    while session_processes(server.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert session_processes(server.pid) == []


def kill_session(server) -> None:
    """Whatever a test's service left running, killed (the test's own clean-up)."""
    try:
        os.killpg(server.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
