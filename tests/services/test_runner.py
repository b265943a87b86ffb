"""The Ray runner: layout, reproducibility whatever the sharding, resume, cancel, failure,
stop_when, agent rotation and progress."""
import math
import os
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from product import PRODUCT, product_env
from ray_support import ray_local  # noqa: F401  (session fixture)

import core_cy
import pipelines
from core_cy.play import batch
from services.runner import Progress, run_experiment
from services.spec import ExperimentSpec

# A competitive game in which every game has a winner (win shares sum to 1).
GAME = next(g for g in core_cy.game_names() if not core_cy.load(g).cooperative
            and not getattr(core_cy.load(g), "may_end_without_winner", False))
PLAYERS = core_cy.load(GAME).min_players + 1
SLOW_AGENT = "mcts(iterations=30)"  # a few hundredths of a CPU second per game


def _enum_arms() -> dict:
    opt = next(o for o in core_cy.load(GAME).options if o.kind == "enum" and len(o.choices) > 1)
    return {"a": {opt.name: opt.choices[0]}, "b": {opt.name: opt.choices[1]}}


def _spec(**extra) -> ExperimentSpec:
    data = {"game": GAME, "players": PLAYERS, "arms": _enum_arms(), "games_per_arm": 400,
            "seed": 99, "shard_size": 100}
    data.update(extra)
    return ExperimentSpec.model_validate(data)


def _files(root: Path) -> list[Path]:
    """The shard files (a worker killed while writing may leave a hidden .tmp file, which
    no reader ever picks up)."""
    return sorted(root.rglob("*.parquet"))


def _rows(root: Path) -> list[dict]:
    table = pa.concat_tables(pq.read_table(p) for p in _files(root))
    rows = table.to_pylist()
    return sorted(rows, key=lambda r: (r["arm"], r["players"], r["game_index"]))


def test_layout_one_file_per_shard(ray_local, tmp_path):
    spec = _spec()
    assert run_experiment(spec, str(tmp_path), "exp") == "done"
    files = sorted(p.relative_to(tmp_path / "exp").as_posix()
                   for p in (tmp_path / "exp").rglob("*") if p.is_file())
    expected = sorted(f"arm={arm}/players={PLAYERS}/shard-{start:012d}.parquet{table}"
                      for arm in ("a", "b") for start in (0, 100, 200, 300)
                      for table in ("", ".stats"))  # each shard and its statistics table
    assert files == sorted([*expected, "manifest.json"])  # and no temporary file left behind
    files = [f for f in files if f.endswith(".parquet")]
    table = pq.read_table(tmp_path / "exp" / files[0])
    assert table.num_rows == 100
    assert set(table.column("experiment").to_pylist()) == {"exp"}
    assert set(table.column("arm").to_pylist()) == {"a"}


def test_rows_equal_a_single_process_batch(ray_local, tmp_path):
    """The runner adds nothing and loses nothing: its rows are batch.play's rows."""
    spec = _spec(games_per_arm=250)
    run_experiment(spec, str(tmp_path), "exp")
    rows = [r for r in _rows(tmp_path / "exp") if r["arm"] == "b"]
    game = core_cy.load(GAME)
    direct = batch.play(game, PLAYERS, spec.arm_rules()["b"], "random", seed=99, start=0,
                        count=250, experiment="exp", arm="b").to_pylist()
    assert rows == direct


def test_same_rows_with_one_worker_or_many_and_any_shard_size(ray_local, tmp_path):
    one = _spec(shard_size=400)  # one shard per cell, one task at a time
    many = _spec(shard_size=100)  # four shards per cell, several in flight
    assert run_experiment(one, str(tmp_path / "one"), "exp", max_in_flight=1) == "done"
    assert run_experiment(many, str(tmp_path / "many"), "exp", max_in_flight=4) == "done"
    assert len(_files(tmp_path / "one" / "exp")) == 2
    assert len(_files(tmp_path / "many" / "exp")) == 8
    rows = _rows(tmp_path / "one" / "exp")
    assert len(rows) == 800
    assert rows == _rows(tmp_path / "many" / "exp")


def _written(root: Path) -> dict[str, bytes]:
    """Every shard file and statistics table under `root`, by path, as bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("shard-*")) if not p.name.startswith(".")}


@pytest.mark.parametrize("sizes", [[3], [2, 1, 4], [8]])
def test_same_files_whatever_shards_a_task_plays(ray_local, tmp_path, monkeypatch, sizes):
    """A task may play several consecutive shards of a cell (services.runner._task_size):
    every shard's file and table are byte for byte those of one task per shard, and the
    manifest lists the same entries, whatever the grouping and the tasks in flight."""
    from services import runner
    from pipelines.folder import read_manifest

    spec = _spec(games_per_arm=750)  # 8 shards per cell, the last of 50 games
    assert run_experiment(spec, str(tmp_path / "one"), "exp", max_in_flight=3) == "done"
    asked = iter(sizes * 8)
    monkeypatch.setattr(runner, "_task_size", lambda state, left, cpus: next(asked))
    tasks = []
    real = runner.play_shards

    class Counting:
        @staticmethod
        def remote(job):
            tasks.append([start for start, _ in job["shards"]])
            return real.remote(job)

    monkeypatch.setattr(runner, "play_shards", Counting)
    assert run_experiment(spec, str(tmp_path / "grouped"), "exp", max_in_flight=2) == "done"
    assert max(map(len, tasks)) == min(max(sizes), 8) and len(tasks) < 16
    one, grouped = _written(tmp_path / "one" / "exp"), _written(tmp_path / "grouped" / "exp")
    assert len(one) == 32 and one == grouped
    assert _timeless(read_manifest(str(tmp_path / "grouped" / "exp"))["shards"]) == \
        _timeless(read_manifest(str(tmp_path / "one" / "exp"))["shards"])


def _timeless(value):
    """A manifest's entries without the files' modification times (the rest is content)."""
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k != "mtime_ns"}
    return value


@given(seconds=st.floats(0, 1e4), shards=st.integers(0, 10**6), left=st.integers(1, 10**7),
       cpus=st.integers(1, 10**4))
@settings(max_examples=200, deadline=None)
def test_a_task_plays_about_task_seconds_of_shards_and_leaves_every_cpu_work(
        seconds, shards, left, cpus):
    from services.runner import TASK_SECONDS, _task_size

    state = {"task_seconds": seconds, "task_shards": shards} if shards else {}
    k = _task_size(state, left, cpus)
    share = math.ceil(left / cpus)  # the shards left shared among the CPUs
    assert 1 <= k <= share
    if not shards:
        assert k == 1  # no rate yet: one shard a task
    elif k > 1:
        assert k * seconds / shards <= TASK_SECONDS * (1 + 1e-9)
    elif share >= 2:
        assert 2 * seconds / shards > TASK_SECONDS  # two shards would be too long


def test_arms_share_seeds_game_by_game(ray_local, tmp_path):
    """Common random numbers: with identical rules, two arms play identical games."""
    spec = _spec(arms={"x": {}, "y": {}}, games_per_arm=200)
    run_experiment(spec, str(tmp_path), "exp")
    rows = _rows(tmp_path / "exp")
    x = [{k: v for k, v in r.items() if k != "arm"} for r in rows if r["arm"] == "x"]
    y = [{k: v for k, v in r.items() if k != "arm"} for r in rows if r["arm"] == "y"]
    assert x == y and len(x) == 200


def test_restart_skips_written_shards(ray_local, tmp_path):
    spec = _spec()
    run_experiment(spec, str(tmp_path), "exp")
    files = _files(tmp_path / "exp")
    before = {p: p.stat().st_mtime_ns for p in files}
    files[3].unlink()
    seen = []
    assert run_experiment(spec, str(tmp_path), "exp", progress=seen.append) == "done"
    assert seen[0].done == 700  # the seven shards found written count as done
    assert seen[-1].done == seen[-1].total == 800
    after = {p: p.stat().st_mtime_ns for p in _files(tmp_path / "exp")}
    assert set(after) == set(before)
    changed = [p for p in after if after[p] != before[p]]
    assert changed == [files[3]]


def test_progress_reports(ray_local, tmp_path):
    seen: list[Progress] = []
    run_experiment(_spec(), str(tmp_path), "exp", progress=seen.append)
    done = [p.done for p in seen]
    assert done == sorted(done) and done[0] == 0
    assert all(p.total == 800 for p in seen)
    assert seen[-1].status == "done" and seen[-1].done == 800 and seen[-1].error is None
    assert seen[-1].games_per_s > 0 and seen[-2].eta_s == pytest.approx(0.0)
    assert all(p.status == "running" for p in seen[:-1])


def test_cancel_stops_and_a_restart_completes_identically(ray_local, tmp_path):
    spec = _spec(games_per_arm=1500, shard_size=100)
    cancel = threading.Event()

    def stop_after_first(p: Progress):
        if p.done > 0:
            cancel.set()

    seen = []
    status = run_experiment(spec, str(tmp_path / "c"), "exp", max_in_flight=2,
                            progress=lambda p: (seen.append(p), stop_after_first(p)),
                            cancel=cancel)
    assert status == "cancelled" and seen[-1].status == "cancelled"
    written = len(_files(tmp_path / "c" / "exp"))
    assert 1 <= written < 30
    assert run_experiment(spec, str(tmp_path / "c"), "exp") == "done"
    run_experiment(spec, str(tmp_path / "full"), "exp")
    assert _rows(tmp_path / "c" / "exp") == _rows(tmp_path / "full" / "exp")


def test_failure_reports_the_error(ray_local, tmp_path):
    # a file where a cell's folder must go: every write of that cell fails, even on retry
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "arm=b").write_text("not a folder")
    seen = []
    status = run_experiment(_spec(), str(tmp_path), "exp", progress=seen.append)
    assert status == "failed"
    assert seen[-1].status == "failed" and seen[-1].error
    assert "arm=b" in seen[-1].error or "exists" in seen[-1].error.lower()


def _jeffreys_half(shares: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """Per seat, the half-width of Jeffreys' interval at level 1 - alpha with the effective
    count of tied shares (scipy's beta quantiles)."""
    from scipy import stats

    n, p, var = len(shares), shares.mean(axis=0), shares.var(axis=0)
    m = np.where((var > 0) & (p > 0) & (p < 1), n * p * (1 - p) / np.where(var > 0, var, 1), n)
    low = stats.beta.ppf(alpha / 2, p * m + 0.5, m - p * m + 0.5)
    high = stats.beta.ppf(1 - alpha / 2, p * m + 0.5, m - p * m + 0.5)
    return (high - low) / 2


@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_stop_when_stops_after_the_first_precise_wave(ray_local, tmp_path, alpha):
    """The precision rule judges the intervals at the run's level (stop_when.alpha), the
    ones its finished page shows: every one is within +-half_width there."""
    half = 0.09
    spec = _spec(games_per_arm=100, stop_when={"half_width": half, "max_games": 2000,
                                              "alpha": alpha})
    seen = []
    assert run_experiment(spec, str(tmp_path), "exp", progress=seen.append) == "done"
    rows = _rows(tmp_path / "exp")
    per_arm = len(rows) // 2
    assert per_arm % 100 == 0 and 100 <= per_arm < 2000
    shares = {arm: np.array([r["seat_win_share"] for r in rows if r["arm"] == arm])
              for arm in ("a", "b")}

    def precise(n):
        return n > 0 and all(np.all(_jeffreys_half(s[:n], alpha) < half)
                             for s in shares.values())

    assert precise(per_arm)
    assert not precise(per_arm - 100)  # the wave before was not yet precise enough
    assert seen[-1].done == seen[-1].total == 2 * per_arm
    page = pipelines.summary(tmp_path / "exp", look=spec.look(interim=False))
    shown = ((page["win_hi"] - page["win_lo"]) / 2).to_numpy()
    assert np.all(shown < half)  # the finished page shows the half-width it stopped at
    assert shown.max() == pytest.approx(max(_jeffreys_half(s, alpha).max()
                                            for s in shares.values()))
    # the ETA: unknown ("–") until the rule can tell, then what it is expected to need (at
    # most the max_games bound, and below it once the rule expects to stop earlier)
    running = [p for p in seen if p.status == "running"]
    assert all(p.eta_s is None for p in running if p.written < 2 * 100)
    known = [p for p in running if p.eta_s is not None]
    assert all(p.eta_s * p.games_per_s <= p.total - p.done + 1e-6 for p in known)
    assert per_arm == 100 or known


def test_stop_when_caps_at_max_games(ray_local, tmp_path):
    spec = _spec(games_per_arm=100, stop_when={"half_width": 0.001, "max_games": 250})
    assert run_experiment(spec, str(tmp_path), "exp") == "done"
    rows = _rows(tmp_path / "exp")
    assert len(rows) == 500
    assert sorted({r["game_index"] for r in rows}) == list(range(250))


def test_rotation_seats_every_agent_everywhere_equally(ray_local, tmp_path):
    agents = ["greedy"] + ["random"] * (PLAYERS - 1)
    spec = _spec(arms=None, agents=agents, rotate_agents=True, games_per_arm=PLAYERS * 40)
    run_experiment(spec, str(tmp_path), "exp")
    rows = _rows(tmp_path / "exp")
    greedy_seat = [r["seat_agent"].index("greedy") for r in rows]
    assert all(r["seat_agent"].count("greedy") == 1 for r in rows)
    assert np.bincount(greedy_seat).tolist() == [40] * PLAYERS


def test_results_given_as_a_uri(ray_local, tmp_path):
    assert run_experiment(_spec(games_per_arm=100), f"file://{tmp_path}", "exp") == "done"
    assert len(_files(tmp_path / "exp")) == 2


def test_arm_names_are_one_path_segment(ray_local, tmp_path):
    opt = next(o for o in core_cy.load(GAME).options if o.kind == "enum")
    spec = _spec(arms=None, sweep={opt.name: list(opt.choices[:2])}, games_per_arm=100)
    run_experiment(spec, str(tmp_path), "exp")
    dirs = sorted(p.name for p in (tmp_path / "exp").iterdir() if p.is_dir())
    assert dirs == sorted(f"arm={opt.name}%3D{c}" for c in opt.choices[:2])
    arms = {r["arm"] for r in _rows(tmp_path / "exp")}
    assert arms == set(spec.arm_rules())
    assert not any(name.startswith(".") for name in os.listdir(tmp_path / "exp"))


def test_tasks_in_flight_are_bounded(ray_local, tmp_path, monkeypatch):
    import services.runner as runner

    submitted, handled, flying = [], [], []
    real = runner.play_shards

    class Counting:
        @staticmethod
        def remote(job):
            submitted.append(job["key"])
            flying.append(len(submitted) - len(handled))  # submitted, not yet handled
            return real.remote(job)

    monkeypatch.setattr(runner, "play_shards", Counting)
    monkeypatch.setattr(runner, "_task_size", lambda state, left, cpus: 1)  # 8 tasks
    assert run_experiment(_spec(), str(tmp_path), "exp", max_in_flight=3,
                          shard_done=lambda seconds, games: handled.append(games)) == "done"
    assert len(submitted) == len(handled) == 8 and max(flying) == 3


def test_a_shrinking_limit_preempts_the_latest_tasks_and_plays_them_again(
        ray_local, tmp_path, monkeypatch):
    """Issue 51 (fair share): a callable limit asked as the run goes; when it falls below the
    tasks in flight the latest are cancelled and submitted again first, and the files are
    those of a run that was never preempted."""
    import services.runner as runner

    preempted, asked = [], []
    real = runner._preempt
    monkeypatch.setattr(runner, "_preempt", lambda refs, *rest: (preempted.append(len(refs)),
                                                                  real(refs, *rest)))
    monkeypatch.setattr(runner, "_task_size", lambda state, left, cpus: 1)

    def limit():  # four in flight on the first turns, then one (another owner came)
        asked.append(1)
        return 4 if len(asked) <= 2 else 1

    spec = _spec(agents=SLOW_AGENT, games_per_arm=200)  # four tasks
    assert run_experiment(spec, str(tmp_path / "shared"), "exp", max_in_flight=limit) == "done"
    assert preempted == [3]
    assert run_experiment(spec, str(tmp_path / "alone"), "exp") == "done"
    assert _written(tmp_path / "shared" / "exp") == _written(tmp_path / "alone" / "exp")


def _descendants(root: int) -> set[int]:
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        for child, parent in parents.items():
            if parent == pid and child not in tree:
                tree.add(child)
                todo.append(child)
    return tree


def _busy_shard_workers() -> list[int]:
    """Ray workers of this test session that are executing a shard right now."""
    out = []
    for pid in _descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read().startswith(b"ray::play_shard"):
                    out.append(pid)
        except OSError:
            pass
    return out


def test_a_killed_worker_is_retried_and_rows_are_unchanged(ray_local, tmp_path):
    import signal

    spec = _spec(games_per_arm=4000, shard_size=1000)
    killed = []

    def kill_a_busy_worker(p: Progress):
        if p.done > 0 and not killed:
            for pid in _busy_shard_workers():
                os.kill(pid, signal.SIGKILL)  # a worker of this session, by its id
                killed.append(pid)

    assert run_experiment(spec, str(tmp_path / "k"), "exp", max_in_flight=2,
                          progress=kill_a_busy_worker) == "done"
    assert killed, "no shard was running when the first one finished"
    rows = _rows(tmp_path / "k" / "exp")
    assert len(rows) == 8000
    assert pipelines.summary(tmp_path / "k" / "exp")["games"].to_list() == [4000] * (2 * PLAYERS)
    game = core_cy.load(GAME)
    direct = batch.play(game, PLAYERS, spec.arm_rules()["a"], "random", seed=99, start=0,
                        count=4000, experiment="exp", arm="a").to_pylist()
    assert [r for r in rows if r["arm"] == "a"] == direct


def test_resume_refuses_results_of_another_engine_or_rules(ray_local, tmp_path):
    spec = _spec(games_per_arm=200)
    assert run_experiment(spec, str(tmp_path), "exp") == "done"
    first = _files(tmp_path / "exp")[0]
    table = pq.read_table(first)
    column = table.schema.get_field_index("engine_version")
    other = pa.array(["an-older-engine"] * table.num_rows).dictionary_encode()
    pq.write_table(table.set_column(column, "engine_version", other), first)
    (tmp_path / "exp" / "arm=b").rename(tmp_path / "moved")  # cell b must be played again
    before = {p: p.stat().st_mtime_ns for p in _files(tmp_path / "exp")}
    seen = []
    assert run_experiment(spec, str(tmp_path), "exp", progress=seen.append) == "failed"
    assert "an-older-engine" in seen[-1].error and "new experiment" in seen[-1].error
    assert not (tmp_path / "exp" / "arm=b").exists()  # nothing was played
    assert {p: p.stat().st_mtime_ns for p in _files(tmp_path / "exp")} == before


def test_resume_follows_the_agents_and_their_parameters_not_the_rules(ray_local, tmp_path):
    """An engine policy's parameters are agent parameters (no part of the rules fingerprint):
    the same spec resumes its own results, playing only the missing shard; a spec whose agent
    differs by one parameter is refused (the rows record every seat's full agent string),
    though its rules fingerprint is the same."""
    data = {"game": "forbidden_desert", "players": 2, "arms": {"a": {}}, "games_per_arm": 200,
            "seed": 5, "shard_size": 100, "agents": "search(sand=4)"}
    spec = ExperimentSpec.model_validate(data)
    assert run_experiment(spec, str(tmp_path), "exp") == "done"
    rows = _rows(tmp_path / "exp")
    _files(tmp_path / "exp")[-1].unlink()
    assert run_experiment(spec, str(tmp_path), "exp") == "done"
    assert _rows(tmp_path / "exp") == rows
    other = ExperimentSpec.model_validate({**data, "agents": "search(sand=5)"})
    assert {r["rules_fingerprint"] for r in rows} == {
        core_cy.load("forbidden_desert").rules_fingerprint({}, 2)}
    seen = []
    assert run_experiment(other, str(tmp_path), "exp", progress=seen.append) == "failed"
    assert "seat_agent" in seen[-1].error and "sand=5.0" in seen[-1].error
    assert _rows(tmp_path / "exp") == rows


def test_stop_when_decided_stops_once_the_comparison_is_decided(ray_local, tmp_path):
    """At a wide margin (+-20 points) the arms are soon shown equivalent or different under
    the always-valid figures: the run stops at the first wave after min_games where that
    holds, long before max_games."""
    spec = _spec(games_per_arm=200, stop_when={"delta": 0.2, "min_games": 400,
                                               "max_games": 20_000})
    assert run_experiment(spec, str(tmp_path), "exp") == "done"
    per_arm = len(_rows(tmp_path / "exp")) // 2
    assert 400 <= per_arm < 20_000 and per_arm % 200 == 0
    look = pipelines.Look(interim=True, planned_games=20_000, delta=0.2)
    assert pipelines.decided(tmp_path / "exp", "a", look)
    assert not pipelines.decided(tmp_path / "exp", "a",
                                 pipelines.Look(interim=True, planned_games=20_000, delta=0.001))


def test_shard_workers_play_at_the_configured_niceness(tmp_path):
    """Playing is batch work: the app's settings (worker_nice) reach the worker, the job
    carries its niceness and the shard task raises its niceness to it once (never lowering
    it), so the API on the same machine stays responsive."""
    import subprocess
    import sys

    from services import runner
    from services.app import create_app
    from services.settings import Settings

    app = create_app(Settings(db=str(tmp_path / "r.db"), results=str(tmp_path),
                              worker_nice=7), run_worker=False)
    assert app.state.worker.worker_nice == 7
    spec = _spec()
    job = runner._job(spec, "e", "/tmp/x", spec.cells()[0], [(0, 10)],
                      nice=app.state.worker.worker_nice)
    assert job["nice"] == 7
    probe = ("import os; from services.shard import lower_priority; base = os.nice(0); "
             "lower_priority(base + 7); a = os.nice(0); lower_priority(base + 3); "
             "print(base, a - base, os.nice(0) - base)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=PRODUCT, env=product_env(), check=True).stdout.split()
    raised = min(7, 19 - int(out[0]))  # a suite run niced already cannot go past 19
    assert out[1:] == [str(raised), str(raised)]


def test_progress_moves_while_a_single_slow_shard_plays(ray_local, tmp_path, monkeypatch):
    """A shard task reports the games it has played every REPORT_SECONDS (services.shard):
    a run of one slow shard shows progress above 0 and below its total before the shard
    ends, never going back, and its rows are those of one call (the pieces change none)."""
    from services import runner

    monkeypatch.setattr(runner, "REPORT_SECONDS", 0.2)  # the job carries it to the task
    monkeypatch.setattr(runner, "POLL_SECONDS", 0.1)
    spec = _spec(arms={"a": {}}, games_per_arm=100, shard_size=100, agents=SLOW_AGENT)
    seen = []
    assert run_experiment(spec, str(tmp_path), "exp", progress=seen.append) == "done"
    running = [p.done for p in seen if p.status == "running"]
    assert any(0 < done < 100 for done in running), running
    assert running == sorted(running) and seen[-1].done == seen[-1].total == 100
    direct = batch.play(core_cy.load(GAME), PLAYERS, {}, SLOW_AGENT, seed=99, start=0,
                        count=100, experiment="exp", arm="a").to_pylist()
    assert _rows(tmp_path / "exp") == direct


def test_a_tasks_shards_count_as_written_as_it_writes_them(ray_local, tmp_path, monkeypatch):
    """A task of several shards reports each shard it has written (services.shard), so the
    games written that the progress says (the interim figures' version) grow while the task
    plays, and never count a game that is not on disk."""
    from services import runner

    monkeypatch.setattr(runner, "REPORT_SECONDS", 0.1)
    monkeypatch.setattr(runner, "POLL_SECONDS", 0.1)
    monkeypatch.setattr(runner, "_task_size", lambda state, left, cpus: 4)  # 4 shards a task
    spec = _spec(arms={"a": {}}, games_per_arm=400, shard_size=100, agents=SLOW_AGENT)
    root, seen = tmp_path / "exp", []

    def progress(p):
        on_disk = sum(pq.read_metadata(f).num_rows for f in _files(root))
        seen.append((p.status, p.written, on_disk))

    assert run_experiment(spec, str(tmp_path), "exp", progress=progress,
                          max_in_flight=1) == "done"
    running = [(w, d) for status, w, d in seen if status == "running"]
    assert all(w <= d for w, d in running), running
    assert {100, 200, 300} & {w for w, _ in running}, running  # before the task's end
    assert seen[-1][1] == 400


def test_a_finished_run_keeps_a_manifest_and_a_replay_rebuilds_exactly_its_bad_shards(
        ray_local, tmp_path):
    """The manifest names every shard as written (rows, games, bytes, SHA-256); run again, a
    finished experiment plays exactly its missing, empty, truncated and damaged shards, into
    the same bytes, and leaves every other shard untouched."""
    import hashlib

    from pipelines.folder import read_manifest

    spec = _spec()
    assert run_experiment(spec, str(tmp_path), "exp") == "done"
    manifest = read_manifest(str(tmp_path / "exp"))
    files = _files(tmp_path / "exp")
    assert sorted(e["path"] for e in manifest["shards"]) == \
        [p.relative_to(tmp_path / "exp").as_posix() for p in files]
    assert all(e["sha256"] == hashlib.sha256((tmp_path / "exp" / e["path"]).read_bytes())
               .hexdigest() and e["rows"] == e["games"] == 100 for e in manifest["shards"])
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files}
    files[0].unlink()
    files[1].write_bytes(b"")
    files[2].write_bytes(before[files[2]][0][:500])
    flipped = bytearray(before[files[3]][0])
    flipped[len(flipped) // 3] ^= 0xFF
    files[3].write_bytes(bytes(flipped))
    seen = []
    assert run_experiment(spec, str(tmp_path), "exp", progress=seen.append) == "done"
    assert seen[0].done == 400 and seen[-1].done == 800
    assert {p: p.read_bytes() for p in files} == {p: b for p, (b, _) in before.items()}
    assert all(p.stat().st_mtime_ns == before[p][1] for p in files[4:])  # not played again
    assert read_manifest(str(tmp_path / "exp")) == manifest


def test_a_replay_reads_each_written_shards_bytes_once(ray_local, tmp_path, monkeypatch):
    """A replay hashes every shard of the manifest once (its entry, read and parsed), and its
    check of the companion files does not hash the shards again."""
    from pipelines import dataset

    spec = _spec()
    assert run_experiment(spec, str(tmp_path), "exp") == "done"
    files = _files(tmp_path / "exp")
    files[0].unlink()
    hashed = []
    same_bytes = dataset._same_bytes
    monkeypatch.setattr(dataset, "_VERDICTS", {})
    monkeypatch.setattr(dataset, "_same_bytes", lambda fs, info, sha: (
        hashed.append(info.path), same_bytes(fs, info, sha))[1])
    assert run_experiment(spec, str(tmp_path), "exp") == "done"
    shards = {str(p) for p in files}
    assert hashed and not shards & set(hashed), hashed  # companions only


def test_a_replay_whose_shard_comes_out_different_fails_naming_it(ray_local, tmp_path):
    from pipelines.folder import read_manifest

    spec = _spec(games_per_arm=200)
    assert run_experiment(spec, str(tmp_path), "exp") == "done"
    manifest = read_manifest(str(tmp_path / "exp"))
    path = tmp_path / "exp" / "manifest.json"
    manifest["shards"][0]["sha256"] = "0" * 64  # as if another library had written it
    path.write_text(__import__("json").dumps(manifest))
    seen = []
    assert run_experiment(spec, str(tmp_path), "exp", progress=seen.append) == "failed"
    assert manifest["shards"][0]["path"] in seen[-1].error and "differ" in seen[-1].error


def test_a_replay_rebuilds_a_shard_whose_statistics_table_is_damaged(ray_local, tmp_path):
    from pipelines.dataset import verify
    from pipelines.folder import read_manifest

    spec = _spec(games_per_arm=200)
    assert run_experiment(spec, str(tmp_path), "exp") == "done"
    entry = read_manifest(str(tmp_path / "exp"))["shards"][0]
    table = tmp_path / "exp" / entry["statistics"]["path"]
    written = table.read_bytes()
    table.write_bytes(written[:10])
    assert [d.path for d in verify(str(tmp_path / "exp")).damaged] == [entry["path"]]
    assert run_experiment(spec, str(tmp_path), "exp") == "done"
    assert table.read_bytes() == written and verify(str(tmp_path / "exp")).damaged == ()


def test_runs_starting_together_share_one_progress_tally(ray_local, monkeypatch):
    """Runs start in parallel threads (a place per job): they get the one handle that made
    the named tally, never a second handle that would replace it (the tally dies with its
    creator's handle, so it would die under a run still playing when the first ends)."""
    from services import runner

    monkeypatch.setattr(runner, "_TALLY", {})
    start, got = threading.Barrier(8), []

    def take():
        start.wait()
        got.append(runner._tally())

    threads = [threading.Thread(target=take) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(h is got[0] for h in got) and got[0] is not None
