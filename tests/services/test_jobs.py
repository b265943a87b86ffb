"""One job queue (services.worker) for experiments, plans and balance searches: every job has
an owner, a place, a budget and a cancel.  Every game is a shard task of the one runner (a
plan's pilot and a balance search through a services.runner.Player), which a cancel
force-cancels at once, a game in the middle or not, so the place goes to the next job
(another token's first) within a second; a token cannot take more than its places in any
job kind while another token and the admin still get theirs."""
import time

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st
from ray_support import ray_local  # noqa: F401  (session fixture)
from service_support import PLAYERS, small_spec

from services import worker as worker_module
from services.app import create_app
from services.settings import Settings

A, B, ADMIN = "token-a-for-the-job-queue", "token-b-for-the-job-queue", "admin-for-the-jobs"
AS = {name: {"Authorization": f"Bearer {token}"} for name, token in
      (("a", A), ("b", B), ("admin", ADMIN))}
ENDLESS = "mcts(iterations=100000)"  # one game of it takes minutes: it is cut in the middle
SEARCH = {"name": "gi", "game": "golden_island", "players": 2, "agents": "greedy", "seed": 3,
          "balance": {"option": "seat_bonus_gold", "seat": 1, "range": [0, 20],
                      "wave_games": 40, "max_games": 600, "confirm_games": 60}}
ROUTES = {"experiment": "/api/experiments", "plan": "/api/plans", "balance": "/api/balance"}


def _body(kind: str, agents: str | None = None) -> dict:
    if kind == "experiment":
        return small_spec()
    if kind == "plan":
        return {"spec": small_spec(**({"agents": agents} if agents else {})),
                "pilot_games": 20}
    return {**SEARCH, **({"agents": agents} if agents else {})}


def _app(tmp_path, run_worker: bool, **settings):
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{A}\n{B}\n")
    config = Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"),
                      token=str(tokens), admin_token=ADMIN, **settings)
    return create_app(config, run_worker=run_worker)


def _url(kind: str, jid: str) -> str:
    return f"{ROUTES[kind]}/{jid}"


def _wait(c, kind: str, jid: str, statuses, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while (job := c.get(_url(kind, jid)).json())["status"] not in statuses:
        assert time.monotonic() < deadline, job
        time.sleep(0.02)
    return job


def _cpus_free(ray) -> bool:
    return ray.available_resources().get("CPU", 0) >= ray.cluster_resources()["CPU"]


@pytest.mark.parametrize("kind", ["plan", "balance"])
def test_a_cancel_ends_the_running_game_and_frees_the_place_within_a_second(
        tmp_path, ray_local, kind):  # noqa: F811
    """Issue 38: a plan whose pilot plays mcts(iterations=100000), and a balance search:
    cancelled, its shard tasks gone (every CPU free again), and another token's job running
    within 1 s of the cancel."""
    app = _app(tmp_path, run_worker=True, max_running_plans=1, max_running_balance=1)
    with TestClient(app) as c:
        first = c.post(ROUTES[kind], json=_body(kind, ENDLESS), headers=AS["a"])
        assert first.status_code == 202, first.text
        first = first.json()["id"]
        _wait(c, kind, first, ("running",))
        _wait_until(lambda: not _cpus_free(ray_local), "the job never played")
        time.sleep(2)  # in its first games
        second = c.post(ROUTES[kind], json=_body(kind), headers=AS["b"]).json()["id"]
        time.sleep(0.3)
        assert c.get(_url(kind, second)).json()["status"] == "queued"  # the place is taken
        assert c.post(f"{_url(kind, first)}/cancel", headers=AS["b"]).status_code == 403
        began = time.monotonic()
        assert c.post(f"{_url(kind, first)}/cancel", headers=AS["a"]).status_code == 200
        _wait(c, kind, second, ("running", "done"), timeout=1.0)
        assert time.monotonic() - began < 1.0
        assert c.get(_url(kind, first)).json()["status"] == "cancelled"
        assert c.post(f"{_url(kind, first)}/cancel", headers=AS["a"]).status_code == 409
        done = _wait(c, kind, second, ("done", "failed"), timeout=120)
        assert done["status"] == "done", done
        assert c.get(_url(kind, first)).json()["status"] == "cancelled"
        _wait_until(lambda: _cpus_free(ray_local), "the cancelled job's tasks still play", 10)


@pytest.mark.parametrize("kind", ["experiment", "plan", "balance"])
def test_a_token_takes_at_most_its_places_while_others_get_theirs(tmp_path, kind):
    """Token A is refused (429, Retry-After, naming the per-token limit) beyond its places
    in every job kind; B and the admin still get theirs; a cancel frees A's place."""
    app = _app(tmp_path, run_worker=False, max_running_per_token=2)
    with TestClient(app) as c:
        posted = [c.post(ROUTES[kind], json=_body(kind), headers=AS["a"]) for _ in range(3)]
        assert [p.status_code < 300 for p in posted] == [True, True, False], \
            [p.text for p in posted]
        assert posted[2].status_code == 429 and int(posted[2].headers["Retry-After"]) >= 1
        assert "MEEPLELAB_MAX_RUNNING_PER_TOKEN" in posted[2].json()["detail"]
        for other in ("b", "admin"):
            assert all(c.post(ROUTES[kind], json=_body(kind), headers=AS[other]).status_code
                       < 300 for _ in range(2))
        assert c.post(f"{_url(kind, posted[0].json()['id'])}/cancel",
                      headers=AS["admin"]).status_code == 200
        assert c.post(ROUTES[kind], json=_body(kind), headers=AS["a"]).status_code < 300


def _holds_its_places_while_others_play(c, kind: str, long_body: dict) -> None:
    """A's long job takes its place (places_per_token 1) and its next waits although the cap
    (2) has room; B's job takes that place and the admin's starts beyond the cap: both end
    while A's first still runs, and A's second is still queued."""
    first = c.post(ROUTES[kind], json=long_body, headers=AS["a"]).json()["id"]
    _wait(c, kind, first, ("running",), timeout=120)
    second = c.post(ROUTES[kind], json=_body(kind), headers=AS["a"]).json()["id"]
    others = [c.post(ROUTES[kind], json=_body(kind), headers=AS[who]).json()["id"]
              for who in ("b", "admin")]
    for jid in others:
        done = _wait(c, kind, jid, ("done", "failed", "cancelled"), timeout=120)
        assert done["status"] == "done", done
    assert c.get(_url(kind, first)).json()["status"] == "running"
    assert c.get(_url(kind, second)).json()["status"] == "queued"  # A is at its limit
    assert c.post(f"{_url(kind, first)}/cancel", headers=AS["a"]).status_code == 200
    _wait(c, kind, second, ("running", "done"), timeout=10)  # A's place, freed, is A's again
    c.post(f"{_url(kind, second)}/cancel", headers=AS["a"])


@pytest.mark.parametrize("kind", ["plan", "balance"])
def test_a_token_at_its_places_holds_no_other_tokens_job_back(tmp_path, ray_local,  # noqa: F811
                                                               kind):
    """Issue 38: A's long job held the kind's one place and B's job only queued.  Now each
    token runs at most MEEPLELAB_PLACES_PER_TOKEN jobs of a kind: B's and the admin's run
    (and end) while A's runs and A's next waits."""
    app = _app(tmp_path, run_worker=True, max_running_plans=2, max_running_balance=2)
    with TestClient(app) as c:
        _holds_its_places_while_others_play(c, kind, _body(kind, ENDLESS))


def test_a_token_at_its_places_holds_no_other_tokens_experiment_back(
        tmp_path, ray_local):  # noqa: F811
    app = _app(tmp_path, run_worker=True, max_running=2)
    with TestClient(app) as c:
        _holds_its_places_while_others_play(
            c, "experiment", small_spec(games_per_arm=10**6, shard_size=100))


def test_without_tokens_only_the_cap_counts(tmp_path, ray_local):  # noqa: F811
    """A service without tokens has one owner: its jobs take every place of the cap."""
    config = Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"),
                      max_running_balance=2)
    with TestClient(create_app(config, run_worker=True)) as c:
        ids = [c.post("/api/balance", json=_body("balance", ENDLESS)).json()["id"]
               for _ in range(3)]
        for jid in ids[:2]:
            _wait(c, "balance", jid, ("running",))
        time.sleep(0.3)
        assert c.get(_url("balance", ids[2])).json()["status"] == "queued"
        for jid in ids:
            c.post(f"{_url('balance', jid)}/cancel")


def test_the_queue_has_a_global_cap_and_kinds_do_not_mix(tmp_path):
    app = _app(tmp_path, run_worker=False, max_queued=3)
    with TestClient(app) as c:
        ids = {kind: c.post(ROUTES[kind], json=_body(kind), headers=AS["a"]).json()["id"]
               for kind in ROUTES}
        full = c.post("/api/balance", json=SEARCH, headers=AS["b"])
        assert full.status_code == 429 and "MEEPLELAB_MAX_QUEUED" in full.json()["detail"]
        # each kind is found under its own routes only, and listed apart
        for kind, jid in ids.items():
            for other in ROUTES:
                assert c.get(_url(other, jid)).status_code == (200 if other == kind else 404)
        assert [e["id"] for e in c.get("/api/experiments").json()] == [ids["experiment"]]
        job = c.get(_url("balance", ids["balance"])).json()
        assert job["status"] == "queued" and job["spec"]["balance"]["option"] == \
            "seat_bonus_gold"


def test_a_balance_search_has_a_budget(tmp_path):
    """Issue 38: max_games 10^8 plus confirm_games 10^7 was accepted; now the search's games
    (max_games and two confirmations per player count) are capped, 422 naming the field."""
    app = _app(tmp_path, run_worker=False, max_balance_games=100_000)
    with TestClient(app) as c:
        big = {**SEARCH, "balance": {**SEARCH["balance"], "max_games": 10**8,
                                     "confirm_games": 10**7}}
        refused = c.post("/api/balance", json=big, headers=AS["a"])
        assert refused.status_code == 422
        error = refused.json()["detail"][0]
        assert error["field"] == "balance.max_games" and "MEEPLELAB_MAX_BALANCE_GAMES" in \
            error["msg"]
        assert c.post("/api/balance", json=SEARCH, headers=AS["a"]).status_code == 202


def test_a_balance_search_ends_when_its_cpu_budget_is_spent(tmp_path, ray_local):  # noqa: F811
    """Its shard tasks' CPU-seconds count against MEEPLELAB_JOB_CPU_SECONDS, as an
    experiment's count against its own: spent, the job fails saying so, its games kept."""
    app = _app(tmp_path, run_worker=True, job_cpu_seconds=2)
    long = {**SEARCH, "balance": {**SEARCH["balance"], "wave_games": 2000,
                                  "max_games": 100_000, "precision": 0.05}}
    with TestClient(app) as c:
        jid = c.post("/api/balance", json=long, headers=AS["a"]).json()["id"]
        failed = _wait(c, "balance", jid, ("failed", "done"), timeout=120)
        assert "of 2 CPU-seconds (MEEPLELAB_JOB_CPU_SECONDS) used" in failed["error"], failed
        assert failed["status"] == "failed" and "games of the shards written are kept" in failed["error"]


def _wait_until(condition, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_a_stop_ends_a_search_at_once_and_the_next_start_resumes_it(tmp_path,
                                                                   ray_local):  # noqa: F811
    """A service stop is not a cancel: the running search's tasks end at once, the job
    stays unfinished, and the next start answers it from the shards it had written (nothing
    lost, nothing played twice), with the answer of a search never stopped."""
    app = _app(tmp_path, run_worker=True)
    with TestClient(app) as c:
        jid = c.post("/api/balance", json=SEARCH, headers=AS["a"]).json()["id"]
        _wait_until(lambda: c.get(_url("balance", jid)).json()["games_played"] > 0,
                    "the search never wrote a shard")
        began = time.monotonic()
    assert time.monotonic() - began < 3.0
    again = _app(tmp_path, run_worker=True)
    with TestClient(again) as c:
        assert c.get(_url("balance", jid)).json()["status"] in ("queued", "running")
        done = _wait(c, "balance", jid, ("done",), timeout=120)
        assert done["result"]["kind"] == "fair_value" and done["games_played"] > 0
        assert done["progress"]["done"] == done["games_played"]
        whole = c.post("/api/balance", json=SEARCH, headers=AS["b"]).json()["id"]
        whole = _wait(c, "balance", whole, ("done",), timeout=120)
    for got in (done, whole):
        for cell in got["result"]["cells"]:
            cell.pop("cpu_seconds")
    assert done["result"] == whole["result"]


def test_a_cancelled_experiment_frees_its_place_for_another_token_within_a_second(
        tmp_path, ray_local):  # noqa: F811
    """An experiment whose shard plays mcts(iterations=100000): the cancel force-cancels the
    shard's task (a game in the middle), and another token's queued experiment runs."""
    app = _app(tmp_path, run_worker=True, max_running=1)
    with TestClient(app) as c:
        first = c.post("/api/experiments", json=small_spec(agents=ENDLESS, games_per_arm=100),
                       headers=AS["a"]).json()["id"]
        _wait(c, "experiment", first, ("running",), timeout=120)
        time.sleep(3)  # its shards are playing their first games
        second = c.post("/api/experiments", json=small_spec(), headers=AS["b"]).json()["id"]
        assert c.get(_url("experiment", second)).json()["status"] == "queued"
        began = time.monotonic()
        assert c.post(f"{_url('experiment', first)}/cancel", headers=AS["a"]).status_code == 200
        _wait(c, "experiment", second, ("running", "done"), timeout=10)
        took = time.monotonic() - began
        assert c.get(_url("experiment", first)).json()["status"] == "cancelled"
        assert took < 1.0, took


@given(cpus=st.integers(1, 512), jobs=st.lists(st.sampled_from("abcdef"), min_size=1,
                                                 max_size=12))
def test_each_owners_share_of_the_cpus(cpus, jobs):
    """Worker._in_flight: one owner alone keeps twice the CPUs in flight per job; with n
    owners each owner's jobs together keep about CPUs / n (at least one task a job), so no
    owner holds more than its share plus its rounding."""
    worker = worker_module.Worker(None, "unused")
    worker._cpus_seen = (time.monotonic() + 1e9, cpus)  # no Ray: the cluster's CPUs given
    worker._taken = {f"job{i}": ("experiment", owner) for i, owner in enumerate(jobs)}
    limits = {f"job{i}": worker._in_flight(f"job{i}") for i in range(len(jobs))}
    owners = set(jobs)
    assert all(limit >= 1 for limit in limits.values())
    if len(owners) == 1:
        assert set(limits.values()) == {max(2, 2 * cpus)}
        return
    share = -(-cpus // len(owners))
    for owner in owners:
        mine = [limits[f"job{i}"] for i, o in enumerate(jobs) if o == owner]
        assert sum(mine) <= max(share + len(mine) - 1, len(mine))
        assert sum(mine) >= min(share, len(mine)) and len(set(mine)) == 1


def test_another_tokens_small_run_plays_while_a_slow_run_occupies_the_cluster(
        tmp_path, ray_local):  # noqa: F811
    """Issue 51: A's mcts(iterations=100000) experiment fills every CPU with tasks whose one
    game takes minutes; B's 200-game greedy run gets its share of the CPUs (A's tasks beyond
    A's share are preempted and played again later), plays within seconds and ends while A's
    still runs.  Without the share B waited for A's games (60 s and more)."""
    app = _app(tmp_path, run_worker=True, max_running=2)
    with TestClient(app) as c:
        slow = c.post("/api/experiments", json=small_spec(agents=ENDLESS, games_per_arm=100),
                      headers=AS["a"]).json()["id"]
        _wait(c, "experiment", slow, ("running",), timeout=120)
        _wait_until(lambda: ray_local.available_resources().get("CPU", 0) == 0,
                    "A's tasks never took every CPU")
        small = c.post("/api/experiments", headers=AS["b"], json=small_spec(
            agents="greedy", players=PLAYERS, games_per_arm=100)).json()["id"]
        began = time.monotonic()
        _wait(c, "experiment", small, ("running", "done"), timeout=10)
        # its first task may wait for a Ray worker to start on the CPU freed by A's preempted
        # task (0.6-22 s at load 21-26 on 2 cores: docs/lab/2026-12-07-fair-share.md); one
        # of A's games takes minutes of CPU, so without the share B would wait longer still
        _wait_until(lambda: c.get(_url("experiment", small)).json()["progress"]["done"] > 0,
                    "B's run never played", timeout=60)
        done = _wait(c, "experiment", small, ("done", "failed"), timeout=120)
        assert done["status"] == "done" and done["progress"]["done"] == 200, done
        assert c.get(_url("experiment", slow)).json()["status"] == "running"
        print(f"B's run: {time.monotonic() - began:.1f} s beside A's")
        assert c.post(f"{_url('experiment', slow)}/cancel", headers=AS["a"]).status_code == 200
        _wait(c, "experiment", slow, ("cancelled",), timeout=10)


def test_a_search_never_imports_the_working_directorys_sources(tmp_path, ray_local,  # noqa: F811
                                                               monkeypatch):
    """Served from inside a checkout (the README's path), a balance search's shard tasks
    import the installed product, not the folder's uncompiled sources (issue 34's Ray
    trap, avoided)."""
    fake = tmp_path / "checkout" / "services"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('the working directory copy')\n")
    monkeypatch.chdir(fake.parent)
    monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    app = _app(tmp_path, run_worker=True)
    with TestClient(app) as c:
        jid = c.post("/api/balance", json=SEARCH, headers=AS["a"]).json()["id"]
        done = _wait(c, "balance", jid, ("done", "failed"), timeout=120)
        assert done["status"] == "done", done["error"]
