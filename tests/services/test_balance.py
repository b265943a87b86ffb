"""What to change (services/balance.py): the spec's balance section, the fair-value search on
a real engine, the value of an action kind by restricted play, and the CLI and API faces."""
import json
import math
import time

import numpy as np
import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError
from ray_support import ray_local  # noqa: F401  (session fixture)

from dashboards.balance_chart import chart_svg
from pipelines import fair_value as fv
from pipelines import stats as st
from services.app import create_app
from services import balance as sb
from services.balance import run_balance
from services.cli import main
from services.runner import Budget, Player, Stopped
from services.settings import Settings
from services.spec import ExperimentSpec

SEARCH = {"name": "gi", "game": "golden_island", "players": 2, "agents": "greedy", "seed": 3,
          "balance": {"option": "seat_bonus_gold", "seat": 1, "range": [0, 20],
                      "wave_games": 40, "max_games": 600, "confirm_games": 60}}
# A Maori pro turn limit that cuts some games of greedy and random agents short, not all.
SHORT_TURNS = 80
VALUE = {"name": "gi-steal", "game": "golden_island", "players": 2, "agents": "greedy",
         "seed": 4, "balance": {"forbid": "steal", "seat": 1, "confirm_games": 40}}


def _answer(spec, folder, job: str = "b", budget: "Budget | None" = None) -> tuple[dict, Player]:
    """The spec's balance answer, its games played by a Player of <folder>/<job>."""
    player = Player(spec.game, str(folder), job, seed=spec.seed, budget=budget)
    result = run_balance(spec, player)
    player.finish()
    return result, player


def _without_cost(result: dict) -> dict:
    for c in result["cells"]:
        c.pop("cpu_seconds", None)
    return result


def _fields(spec: dict) -> set:
    with pytest.raises(ValidationError) as info:
        ExperimentSpec.model_validate(spec)
    return {".".join(map(str, e["loc"])) for e in info.value.errors()}


@pytest.mark.parametrize("balance, field", [
    ({"option": "max_rounds_x", "range": [0, 3]}, "balance.option"),
    ({"option": "volcano_landing_cards", "range": [0, 3]}, "balance.option"),
    ({"option": "seat_bonus_gold", "range": [0, 99]}, "balance.range.1"),
    ({"option": "seat_bonus_gold", "range": [3, 1]}, "balance.range"),
    ({"option": "seat_bonus_gold"}, "balance.range"),
    ({"option": "seat_bonus_gold", "range": [0, 3], "seat": 5}, "balance.seat"),
    ({"option": "seat_bonus_gold", "range": [0, 3], "target": 1.5}, "balance.target"),
    ({"option": "seat_bonus_gold", "range": [0, 3], "forbid": "steal"}, "balance"),
    ({"forbid": "fly"}, "balance.forbid"),
    ({"option": "seat_bonus_gold", "range": [0, 3], "max_games": "9"}, "balance.max_games"),
])
def test_a_bad_balance_section_names_its_field(balance, field):
    assert field in _fields({**SEARCH, "balance": balance})


def test_seats_count_from_one_and_an_old_zero_based_seat_is_refused():
    """Issue 52: seat 2 is the second seat (the data's index 1), -1 the last; seat 0, the
    first seat when seats were counted from 0, is refused with a message that says how
    they are counted now, and the last seat of the player count is allowed, one more not."""
    spec = ExperimentSpec.model_validate({**SEARCH, "players": 3, "balance": {
        **SEARCH["balance"], "seat": 2}})
    assert spec.balance.seat_of(3) == 1
    assert ExperimentSpec.model_validate({**SEARCH, "players": 3, "balance": {
        **SEARCH["balance"], "seat": -1}}).balance.seat_of(3) == 2
    assert ExperimentSpec.model_validate({**SEARCH, "players": 3, "balance": {
        **SEARCH["balance"], "seat": 3}}).balance.seat_of(3) == 2
    with pytest.raises(ValidationError) as info:
        ExperimentSpec.model_validate({**SEARCH, "balance": {**SEARCH["balance"], "seat": 0}})
    error = info.value.errors()[0]
    assert error["loc"] == ("balance", "seat") and "counted from 1" in error["msg"]
    assert _fields({**SEARCH, "players": 3, "balance": {**SEARCH["balance"], "seat": 4}}) \
        == {"balance.seat"}


def test_every_mistake_of_a_balance_section_comes_at_once():
    """Its fields' own mistakes, the rules between them and the checks against the game in
    one answer (a designer's four mistakes took four round trips)."""
    balance = {"option": "nope", "range": [10, 2], "seat": 5, "target": "fair", "delta": 5}
    assert _fields({**SEARCH, "players": 3, "balance": balance}) == {
        "balance.target", "balance.delta", "balance.range", "balance.seat", "balance.option"}
    bad = {"option": "seat_bonus_gold", "range": [1, 2, 3], "precision": 0}
    assert _fields({**SEARCH, "balance": bad}) == {"balance.range", "balance.precision"}


def test_a_cooperative_game_needs_a_team_rate():
    spec = {"game": "forbidden_desert", "players": 2,
            "balance": {"option": "max_turns", "range": [50, 100]}}
    assert "balance.target" in _fields(spec)


def test_the_search_plays_common_deals_and_answers_with_an_interval(ray_local, tmp_path):
    spec = ExperimentSpec.model_validate(SEARCH)
    result, player = _answer(spec, tmp_path, "first")
    again, _ = _answer(spec, tmp_path, "again")  # reproducible: the same deals and agents
    assert _without_cost(result) == _without_cost(again)
    # its games are kept like an experiment's: shards with a manifest that verifies
    from pipelines.dataset import verify

    manifest = json.loads((tmp_path / "first" / "manifest.json").read_text())
    assert manifest["status"] == "done" and manifest["games"] == player.state["done"] > 0
    assert not verify(str(tmp_path / "first")).damaged
    (cell,) = result["cells"]
    ans = cell["answer"]
    assert ans["status"] in ("found", "edge", "outside_range", "no_dependence", "unresolved")
    assert cell["games"] <= 600 and cell["seat"] == 0
    assert cell["waves"][0]["values"] == [0, 5, 10, 15, 20]      # the first grid
    chart = cell["chart"]
    assert len(chart["x"]) == len(chart["curve"]) == len(chart["low"]) == len(chart["high"])
    assert all(lo <= c <= hi for lo, c, hi in zip(chart["low"], chart["curve"], chart["high"]))
    # the nearest integers first, then what reconciling them with the search added
    assert set(ans["nearest"]) <= {c["value"] for c in cell["confirmations"]}
    assert cell["recommendation"]["sentence"]
    for c in cell["confirmations"]:
        assert c["seed"] == 4 and c["games"] <= 60
        assert c["verdict"] in ("fair", "unfair", "not decided") and c["sentence"]
    svg = chart_svg(cell, result["option"])
    assert svg.startswith("<svg") and 'class="band"' in svg and "<script" not in svg


def test_a_search_stopped_midway_resumes_from_its_shards_with_the_same_answer(ray_local,
                                                                          tmp_path):
    """A search whose job dies midway (here in its first wave, two of its values played, as a
    killed process would) keeps the shards it wrote; started again on the same folder it
    plays only the games missing and gives the answer of a search never stopped."""
    spec = ExperimentSpec.model_validate(SEARCH)
    whole, _ = _answer(spec, tmp_path, "whole")

    class Dies(Player):
        def play(self, parts, seconds=None):
            super().play(parts[:2], seconds)
            raise Stopped("failed", "the process died")

    cut = Dies(spec.game, str(tmp_path), "cut", seed=spec.seed)
    with pytest.raises(Stopped):
        run_balance(spec, cut)
    assert 0 < cut.state["done"] < whole["cells"][0]["games"]
    resumed, player = _answer(spec, tmp_path, "cut")
    assert player.state["played"] < player.state["done"]   # the shards found were not played
    assert _without_cost(resumed) == _without_cost(whole)
    again = Player(spec.game, str(tmp_path), "cut", seed=spec.seed)
    assert _without_cost(run_balance(spec, again)) == _without_cost(whole)
    assert again.state["played"] == 0                       # every game read, none played


def test_restricted_play_reports_the_paired_value_of_a_kind(ray_local, tmp_path):
    result, _ = _answer(ExperimentSpec.model_validate(VALUE), tmp_path)
    (cell,) = result["cells"]
    assert cell["restricted_agent"] == "greedy(forbid=steal)"
    assert cell["sentence"].startswith("using steal is worth ")
    share = cell["seats"][0]["win_share"]
    assert share["low"] <= share["mean"] <= share["high"] and share["n"] == 40
    assert cell["forced_decisions"] >= 0


def test_the_cli_prints_the_answer_and_its_confirmation(ray_local, tmp_path, capsys):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(SEARCH))
    assert main(["balance", str(path), "--out", str(tmp_path / "res")]) == 0
    printed = capsys.readouterr()
    out = printed.out
    assert "seat 1 of 2 under greedy" in out and "values within" in out
    # progress on stderr while it plays: where it stands, and an ETA (or "ETA -" until the
    # games it still needs are known), never silent
    progress = [line for line in printed.err.splitlines() if line.startswith("  ")]
    assert progress and all("ETA" in line for line in progress), printed.err
    assert "searching seat_bonus_gold, wave 1" in progress[0]
    # a confirmation (when the answer has nearest integers) is said while it plays
    assert any("confirming seat_bonus_gold" in line for line in progress) == \
        ("confirmation:" in out)
    path.write_text(json.dumps({**SEARCH, "balance": {"option": "nope", "range": [0, 1]}}))
    assert main(["balance", str(path)]) == 2
    assert "balance.option" in capsys.readouterr().err


def test_an_app_without_a_worker_keeps_balance_jobs_queued(tmp_path):
    app = create_app(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"),
                     run_worker=False)
    with TestClient(app) as client:
        job = client.post("/api/balance", json=SEARCH).json()
        time.sleep(0.5)
        assert client.get(job["url"]).json()["status"] == "queued"
        assert client.get(job["url"] + "/chart.svg").status_code == 409


def test_a_balance_request_is_read_as_an_experiment_is(tmp_path):
    """POST /api/balance takes its body as POST /api/experiments does (services.api.deps.
    spec_body): JSON only, the service's limits checked first, off the event loop, every
    mistake a 422 naming its field."""
    app = create_app(Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"),
                              max_games=1000), run_worker=False)
    with TestClient(app) as client:
        sent = client.post("/api/balance", content=json.dumps(SEARCH),
                           headers={"Content-Type": "text/plain"})
        assert sent.status_code == 415
        began = time.monotonic()
        hostile = client.post("/api/balance", json={**SEARCH, "agents": "random" + " " * 60_000
                                                    + "x"})
        assert hostile.status_code == 422 and time.monotonic() - began < 2
        assert hostile.json()["detail"][0]["field"] == "agents"
        big = client.post("/api/balance", json={**SEARCH, "games_per_arm": 10**6})
        assert big.status_code == 422
        assert any(e["field"] == "games_per_arm" for e in big.json()["detail"])


def test_the_api_answers_in_the_background_with_a_chart(ray_local, tmp_path):
    app = create_app(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"),
                     run_worker=True)
    with TestClient(app) as client:
        bad = client.post("/api/balance", json={**SEARCH, "balance": None})
        assert bad.status_code == 422 and bad.json()["detail"][0]["field"] == "balance"
        bad = client.post("/api/balance", json={**SEARCH, "balance": {"option": "x",
                                                                      "range": [0, 1]}})
        assert bad.status_code == 422 and bad.json()["detail"][0]["field"] == "balance.option"
        job = client.post("/api/balance", json=SEARCH)
        assert job.status_code == 202, job.text
        url = job.json()["url"]
        deadline = time.monotonic() + 120
        while (got := client.get(url).json())["status"] not in ("done", "failed"):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert got["status"] == "done", got
        svg = client.get(url + "/chart.svg")
        assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg")
        assert client.get(url + "/chart.svg?players=3").status_code == 404
        assert client.get("/api/balance/nothing-here").status_code == 404
        # its games are kept like an experiment's: the shards of every value it played
        import io
        import zipfile

        games = client.get(url + "/results.zip")
        assert games.status_code == 200
        names = zipfile.ZipFile(io.BytesIO(games.content)).namelist()
        arms = {n.split("/")[0] for n in names if n.endswith(".parquet")}
        assert {f"arm=seat_bonus_gold%3D{v}" for v in (0, 5, 10, 15, 20)} <= arms, arms
        assert client.get("/api/balance/nothing-here/results.zip").status_code == 404


@pytest.mark.parametrize("pairing", [{"rotate_agents": True}, {"pairing": "rotations"}])
def test_the_search_plays_the_runners_games_and_drops_truncated_ones(ray_local, tmp_path,
                                                                      pairing):
    """A searched value is played as the runner plays an arm with the same rules (one
    spec.play_arguments: the agents turned through the seats, whole deals with rotations)
    and made units as the statistics make them (pipelines.units): the units a balance
    search sees are those of the runner's dataset, and games that ended at the turn limit
    are left out (a row of NaN, so that the values stay paired by deal)."""
    import pipelines
    from services import balance
    from services.runner import run_experiment

    players, units = 3, 24
    raw = {"name": "m", "game": "maori", "players": players, "seed": 5,
           "games_per_arm": units * players, "agents": ["greedy", "random", "random"],
           **pairing,
           "arms": {"short": {"mode": "pro", "max_turns": SHORT_TURNS}},
           "balance": {"option": "seat_bonus_shells", "seat": 1, "range": [0, 4],
                       "wave_games": 10, "max_games": 60, "confirm_games": 0}}
    spec = ExperimentSpec.model_validate(raw)
    rules = spec.searched_rules(players, 2)
    player = Player(spec.game, str(tmp_path), "search", seed=spec.seed)
    (out,) = balance._play(player, spec, [balance._part(
        spec, "v", players, rules, spec.agent_list(players), spec.seed, 0, units)])

    per = spec.games_per_deal(players)
    ran = ExperimentSpec.model_validate({**{k: v for k, v in raw.items() if k != "balance"},
                                         "arms": {"v": rules}, "games_per_arm": units * per})
    assert run_experiment(ran, str(tmp_path), "e") == "done"
    games = pipelines.scan(tmp_path / "e").collect()
    rotated = games.sort("game_index")["seat_agent"].to_list()
    assert rotated[1] == ["random", "random", "greedy"]  # the agents turn one seat per game
    truncated = int((games["end_reason"] == "turn_limit").sum())
    assert 0 < truncated < len(games) and out["truncated"] == truncated
    assert out["games"] == len(games)
    kept = pipelines.units(games, ["turn_limit"]).sort("game_index")
    seen = ~np.isnan(out["seat_win_share"]).any(axis=1)
    assert 0 < seen.sum() == len(kept) < units  # some units left out, the others kept
    assert np.flatnonzero(seen).tolist() == kept["game_index"].to_list()
    for column in ("seat_win_share", "seat_score"):
        assert out[column][seen] == pytest.approx(np.array(kept[column].to_list()))
    # the dataset the service reads agrees: the same units, the truncated games reported
    cells = pipelines.cell_summary(tmp_path / "e")
    assert cells["units"][0] == len(kept) and cells["truncated"][0] == truncated
    # and the whole search runs on such units (NaN-aware fit), the same twice
    first, _ = _answer(spec, tmp_path, "one")
    again, _ = _answer(spec, tmp_path, "two")
    assert _without_cost(first) == _without_cost(again) and first["cells"][0]["games"] > 0
def _curve(mean: float, values=(0, 1, 2), games=2000, players=2):
    """A search's curve whose figure at `values` has the given mean (0/1 games)."""
    rng = np.random.default_rng(1)
    y = (rng.random((games, len(values))) < mean).astype(float)
    return fv.fit([(np.asarray(values, float), y)])


def _fake_play(win: float, calls: list):
    """A stand-in for services.balance._play: the seat 0 of 2 wins a `win` share of games."""
    def play(player, spec, parts):
        out = []
        for part in parts:
            count, players = part.count, part.cell.players
            calls.append(count)
            shares = np.zeros((count, players))
            won = np.arange(count) < round(win * count)
            shares[won, 0], shares[~won, 1] = 1.0, 1.0
            out.append({"seat_win_share": shares})
        return out
    return play


def test_the_confirmation_is_sized_to_decide_and_says_when_its_cap_is_too_small(monkeypatch):
    spec = ExperimentSpec.model_validate({**SEARCH, "balance": {
        **SEARCH["balance"], "confirm_games": 100_000, "delta": 0.02}})
    c = _curve(0.53)                       # +6 points: decided in a few hundred games
    plan, needed = sb.confirm_games(spec, 2, 1, c)
    mean, sd = fv.at_value(c, 1)
    assert needed == st.games_to_decide(2 * mean - 1, 2 * sd, 0, 0.02)
    assert plan == max(math.ceil(1.5 * needed), 100) < 100_000
    calls = []
    monkeypatch.setattr(sb, "_play", _fake_play(0.53, calls))
    (got,) = sb.confirm(None, spec, 2, [1], c, None)
    assert calls == [plan] and got["games"] == plan and got["verdict"] == "unfair"
    # near the margin it would need more than the cap: it plays the cap and says so
    capped = ExperimentSpec.model_validate({**SEARCH, "balance": {
        **SEARCH["balance"], "confirm_games": 200, "delta": 0.02}})
    near = _curve(0.51)
    monkeypatch.setattr(sb, "_play", _fake_play(0.51, calls))
    (got,) = sb.confirm(None, capped, 2, [1], near, None)
    assert got["games"] == 200 and got["verdict"] == "not decided"
    assert got["games_needed"] > 200 and "confirm_games caps it at 200" in got["sentence"]
    assert "more fresh games would decide it about half the time" in got["sentence"]


def test_a_confirmation_that_disagrees_with_the_search_says_both(monkeypatch):
    spec = ExperimentSpec.model_validate(SEARCH)
    c = _curve(0.5)
    ans = fv.answer(c, 0, 2, 0.5, integer=True)
    assert any(a <= 1 <= b for a, b in ans.pieces)
    monkeypatch.setattr(sb, "_play", _fake_play(0.7, []))     # fresh deals: far from fair
    (got,) = sb.confirm(None, spec, 2, [1], c, ans)
    assert got["verdict"] == "unfair"
    assert "not fair; yet the search's interval still allows 1" in got["sentence"]


def test_the_equal_target_is_the_fair_share_at_every_player_count():
    """The figure is the seat's own share (1/k when nobody wins) against 1/k, and the chart
    shows it as 'the seat's share less the others' mean', 0 at the target."""
    for players in (2, 3, 4):
        spec = ExperimentSpec.model_validate({**SEARCH, "players": players, "balance": {
            **SEARCH["balance"], "seat": -1}})
        assert sb._target(spec, players) == 1 / players
        assert sb._points(spec, players)(1 / players) == 0
        shares = np.eye(players)[[0, players - 1]]           # the last seat wins once
        assert sb._figure(spec, players, shares).tolist() == [0.0, 1.0]


def _answers_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "balance_answers.py"
    spec = importlib.util.spec_from_file_location("balance_answers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_docs_answers_are_their_stored_results():
    """docs/balance.md's answers are rendered from the results scripts/balance_answers.py
    stored when it played each example: a hand-edited block, a changed example or a missing
    answer fails here."""
    assert _answers_script().stale() == []


def test_a_stale_answer_is_caught(tmp_path, monkeypatch):
    script = _answers_script()
    (tmp_path / "answers").mkdir()
    name = "golden_island_last_seat_greedy"
    for folder, sub in ((script.EXAMPLES, ""), (script.ANSWERS, "answers")):
        (tmp_path / sub / f"{name}.json").write_text((folder / f"{name}.json").read_text())
    doc = tmp_path / "balance.md"
    monkeypatch.setattr(script, "EXAMPLES", tmp_path)
    monkeypatch.setattr(script, "ANSWERS", tmp_path / "answers")
    monkeypatch.setattr(script, "DOC", doc)
    doc.write_text(f"x\n<!-- answer: {name} -->\nold words\n<!-- /answer -->\n")
    assert script.stale() == ["docs/balance.md differs from its stored answers (write it)"]
    doc.write_text(script.render(doc.read_text()))
    assert script.stale() == [] and "seat 4 of 4 under greedy" in doc.read_text()
    spec = json.loads((tmp_path / f"{name}.json").read_text())
    spec["seed"] += 1
    (tmp_path / f"{name}.json").write_text(json.dumps(spec))
    assert "changed since its answer was played" in script.stale()[0]
