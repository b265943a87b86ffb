"""One results view (services.view) rendered three ways: the page's fragment (GET .../view),
the one-file report (GET .../report.html) and the terminal (`meeplelab` print_results) say
the same sentences with the same numbers; a run that ended early says so in each."""
import re
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient
from ray_support import ray_local  # noqa: F401  (session fixture)
from service_support import enum_option, small_spec, write_finished

from services import cli, view
from services.app import create_app
from services.settings import Settings
from services.spec import ExperimentSpec

NUMBER = re.compile(r"[+-]?\d[\d,]*(?:\.\d+)?%?")


class _Text(HTMLParser):
    """The text a reader sees in an HTML document (no style, no SVG)."""

    def __init__(self):
        super().__init__()
        self.parts, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        self.skip += tag in ("style", "svg")

    def handle_endtag(self, tag):
        self.skip -= tag in ("style", "svg")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def _words(text: str) -> str:
    return " ".join(text.split())


def _html_text(markup: str) -> str:
    parser = _Text()
    parser.feed(markup)
    return _words(" ".join(parser.parts))


@pytest.fixture
def service(tmp_path):
    app = create_app(Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res")),
                     run_worker=False)
    with TestClient(app) as client:
        yield client, tmp_path / "res"


def _renderings(client, results, capsys, **how):
    raw = small_spec()
    eid, root, _manifest = write_finished(client.app.state.registry, results, raw, **how)
    spec = ExperimentSpec.model_validate(raw)
    page = client.get(f"/api/experiments/{eid}/view")
    assert page.status_code == 200, page.text
    report = client.get(f"/api/experiments/{eid}/report.html")
    assert report.status_code == 200 and report.headers["content-type"].startswith("text/html")
    record = client.app.state.registry.get(eid)
    cli.print_results(str(root), spec, status=record["status"], error=record["error"])
    printed = capsys.readouterr().out
    look = spec.look(interim=record["status"] != "done")
    model = view.build(spec, str(root), look, status=record["status"], drawn=False)
    return model, page.json(), _html_text(page.json()["html"]), \
        _html_text(report.text), printed


def test_page_report_and_terminal_say_the_same_sentences_and_numbers(service, capsys):
    client, results = service
    model, _, page, report, printed = _renderings(client, results, capsys)
    terminal = _words(printed)
    sentences = model["answers"] + [s for part in model["sections"] for s in part["sentences"]]
    assert len(model["answers"]) >= 3 and sentences
    for sentence in sentences:
        for name, text in (("page", page), ("report", report), ("terminal", terminal)):
            assert _words(sentence) in text, (name, sentence)
    cells = [c if isinstance(c, str) else c["text"] for part in model["sections"]
             for t in part["tables"] for r in t["rows"] for c in r["cells"]]
    numbers = {n for c in cells for n in NUMBER.findall(c)}
    assert any(n.endswith("%") for n in numbers) and len(numbers) > 20
    for name, text in (("page", page), ("report", report), ("terminal", printed)):
        assert numbers <= set(NUMBER.findall(text)), (name, numbers - set(NUMBER.findall(text)))
    # one number format: a rate and its interval as "33.3% [30.1%, 36.5%]", never "CI a-b"
    for text in (page, report, terminal):
        assert "CI" not in text and " pts" not in text
        assert re.search(r"\d\.\d% \[\d+\.\d%, \d+\.\d%\]", text)
    assert max(len(line) for line in printed.splitlines()) <= 100
    assert "Interim" not in page + report + terminal  # a done run's figures are final


def test_a_cancelled_run_says_so_with_its_games_in_page_report_and_terminal(service, capsys):
    client, results = service
    model, answer, page, report, printed = _renderings(
        client, results, capsys, status="cancelled", error="cancelled by its owner",
        games=100)
    assert answer["ended"]["status"] == "cancelled"
    played = answer["ended"]["games"]
    assert played == 100 * len(ExperimentSpec.model_validate(small_spec()).cells())
    sentence = answer["ended"]["sentence"]
    assert "was cancelled" in sentence and f"after {played:,} games" in sentence
    for text in (page, report, _words(printed)):
        assert _words(sentence) in text
        assert "Interim figures" in text  # not the final fixed-n figures of a done run


def test_an_option_that_never_changed_a_game_is_said_so(service, capsys):
    """The Golden Island's exact_move_required against the book at 3 players, greedy, 300
    games: every paired game is the same game, and the CLI and the page say that (no
    interval, no equivalence)."""
    client, results = service
    raw = {"name": "exact", "game": "golden_island", "players": 3, "agents": "greedy",
           "arms": {"book": {}, "exact": {"exact_move_required": True}}, "baseline": "book",
           "games_per_arm": 300, "shard_size": 150, "seed": 1}
    eid, root, _ = write_finished(client.app.state.registry, results, raw, agent="greedy")
    said = ("the two arms played identical games in 300 deals: this option never changed a "
            "decision.")
    page = _html_text(client.get(f"/api/experiments/{eid}/view").json()["html"])
    cli.print_results(str(root), ExperimentSpec.model_validate(raw))
    printed = _words(capsys.readouterr().out)
    for text in (page, printed):
        assert f"exact against book, 3 players, greedy in every seat: {said}" in text
        assert f"exact against book (3 players): {said}" in text  # the verdict
        assert "not shown to matter" not in text and "equivalent" not in text


def test_the_gap_between_the_best_and_the_worst_seat_agrees_with_the_rows(service, capsys):
    """The seat gap the answer states (best minus worst seat's win share in the same games,
    with its t interval) is the one computed from the rows themselves."""
    import numpy as np
    import polars as pl
    from scipy import stats

    import pipelines

    client, results = service
    eid, root, _ = write_finished(client.app.state.registry, results, small_spec())
    cells = pipelines.cell_summary(str(root)).to_dicts()
    rows = pipelines.results(str(root)).collect()
    for c in cells:
        part = rows.filter((pl.col("arm") == c["arm"]) & (pl.col("players") == c["players"]))
        shares = np.array(part["seat_win_share"].to_list(), dtype=float)
        d = shares[:, c["best_seat"]] - shares[:, c["worst_seat"]]
        half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
        assert abs(c["seat_gap"] - d.mean()) < 1e-9
        assert abs(c["seat_gap_lo"] - (d.mean() - half)) < 1e-9
        assert shares.mean(axis=0)[c["best_seat"]] == shares.mean(axis=0).max()
        assert shares.mean(axis=0)[c["worst_seat"]] == shares.mean(axis=0).min()
    answers = client.get(f"/api/experiments/{eid}/headline").json()
    seats = [i for b in answers["blocks"] if b["kind"] == "seats" for i in b["items"]]
    assert seats and all("more than the worst (" in i["answer"] for i in seats)


def test_a_presets_agent_is_named_by_its_preset(tmp_path, capsys):
    """A spec whose agent string is a game's strong preset: the answer, the tables and the
    terminal name the preset, the full string said once."""
    from core_cy.catalogue import presets

    strong = presets("golden_island")["presets"]["strong"]["agent"]
    raw = {"name": "p", "game": "golden_island", "players": 2, "agents": strong,
           "games_per_arm": 100, "shard_size": 100, "seed": 1}
    spec = ExperimentSpec.model_validate(raw)
    assert view.report.agents_text(spec.agent_list(2), "golden_island")[0] == \
        f"the strong preset ({strong.split('(')[0]})"
    assert view._agents_line([strong], "golden_island") == \
        f"agents: the strong preset (mcts) in every seat = {strong}"
    assert view.report.short_agent("greedy", "golden_island") == "greedy"  # no parameters
    assert "the strong preset (mcts) in every seat" in view.report.question(spec)


ROUTES = ["summary", "compare", "histograms", "figures", "headline", "view", "report.html",
          "download/results.parquet", "download/summary.csv", "download/results.zip"]


def test_a_shard_flipped_in_place_is_named_by_every_route(service):
    """A finished experiment's shard changed in place while the service runs (its size and
    mtime kept, so no listing tells): the first reader that fails on it marks the shards
    unverified and hashes them; from then every route answers 200 and names the shard."""
    import os

    client, results = service
    eid, root, manifest = write_finished(client.app.state.registry, results, small_spec())
    for route in ROUTES:  # every answer computed and kept, every shard verified once
        assert client.get(f"/api/experiments/{eid}/{route}").status_code == 200, route
    entry = manifest["shards"][1]
    shard = root / entry["path"]
    before = shard.stat()
    data = bytearray(shard.read_bytes())
    data[len(data) // 2:len(data) // 2 + 64] = bytes(b ^ 0xFF for b in
                                                     data[len(data) // 2:len(data) // 2 + 64])
    shard.write_bytes(bytes(data))
    os.utime(shard, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert shard.stat().st_size == before.st_size
    # the download reads every row: the first reader to fail on it
    for route in ["download/results.parquet"] + ROUTES:
        answer = client.get(f"/api/experiments/{eid}/{route}")
        assert answer.status_code == 200, (route, answer.text[:300])
        assert entry["path"] in answer.text + str(answer.headers), route
    rows = client.get(f"/api/experiments/{eid}/summary").json()
    counted = sum(r["games"] for r in rows if r["seat"] == 0)
    assert counted == manifest["games"] - entry["games"]  # its games are not counted


def test_the_report_is_rendered_once_per_verified_shard_set(service, monkeypatch):
    """report.html is kept per (experiment, verified shard set), as the figures are: asked
    again, the same bytes without rendering; once a shard goes missing, rendered anew
    without it and naming it."""
    from services import report

    client, results = service
    eid, root, manifest = write_finished(client.app.state.registry, results, small_spec())
    rendered = []
    monkeypatch.setattr(report, "render", lambda *a, render=report.render, **k: (
        rendered.append(1), render(*a, **k))[1])
    first = client.get(f"/api/experiments/{eid}/report.html")
    again = client.get(f"/api/experiments/{eid}/report.html")
    assert first.status_code == again.status_code == 200 and first.content == again.content
    assert len(rendered) == 1
    lost = manifest["shards"][0]["path"]
    (root / lost).unlink()
    after = client.get(f"/api/experiments/{eid}/report.html")
    assert after.status_code == 200 and len(rendered) == 2
    assert lost in after.text and lost not in first.text
    assert client.get(f"/api/experiments/{eid}/report.html").content == after.content
    assert len(rendered) == 2


def test_a_resumed_runs_manifest_lists_every_shards_statistics(ray_local, tmp_path):  # noqa: F811
    """A run interrupted before its manifest (and one shard's statistics table lost) is
    resumed: its manifest lists the statistics table of every shard, those written before
    the restart included (the lost one written anew), and every file verifies."""
    import json as jsonlib

    from pipelines.dataset import verify
    from services.runner import run_experiment
    from pipelines.folder import MANIFEST

    spec = ExperimentSpec.model_validate(small_spec(games_per_arm=200, shard_size=100))
    assert run_experiment(spec, str(tmp_path), "exp") == "done"
    root = tmp_path / "exp"
    (root / MANIFEST).unlink()  # as if the first run had been stopped before its end
    shards = sorted(root.rglob("*.parquet"))
    shards[0].unlink()
    (shards[0].parent / (shards[0].name + ".stats")).unlink()
    (shards[1].parent / (shards[1].name + ".stats")).unlink()
    assert run_experiment(spec, str(tmp_path), "exp") == "done"
    manifest = jsonlib.loads((root / MANIFEST).read_text())
    assert len(manifest["shards"]) == len(shards)
    for entry in manifest["shards"]:
        stats = entry["statistics"]
        assert stats["path"] == entry["path"] + ".stats" and (root / stats["path"]).exists()
    found = verify(str(root))
    assert not found.damaged and len(found.sound) == len(shards)


def test_the_plan_says_when_an_option_never_changed_a_pilot_game(ray_local, tmp_path):  # noqa: F811
    """exact_move_required against the book (Golden Island, 3 players, greedy): every pilot
    game is the same in both arms, and the plan says so instead of sizing a difference."""
    from services.plan import plan_experiment
    from services.runner import Player

    spec = ExperimentSpec.model_validate({
        "name": "exact", "game": "golden_island", "players": 3, "agents": "greedy",
        "arms": {"book": {}, "exact": {"exact_move_required": True}}, "baseline": "book",
        "games_per_arm": 100, "seed": 1})
    plan = plan_experiment(spec, Player(spec.game, str(tmp_path), "pilot", seed=spec.seed),
                           delta=0.05, pilot_games=100, workers=2)
    (cell,) = [c for c in plan["cells"] if c["arm"] == "exact"]
    assert cell["pairs"] >= 100 and cell["identical_pairs"] == cell["pairs"]
    assert (f"exact against book (3 players): the two arms played identical games in "
            f"{cell['pairs']:,} pilot deals: this option never changed a decision") \
        in plan["verdict"]


# seat 1's win share per (arm, rung) of the ladder test, out of 200 two-player games
RUNG_SHARES = {"agree": (80, 70), "reverse": (80, 20), "open": (80, 55), "none": (55, 80)}


def _seat_one_wins(cell, table):
    """The table with seat 1 winning the first p of every 100 games (RUNG_SHARES)."""
    import pyarrow as pa

    from pipelines.ladder import split_arm

    base, rung = split_arm(cell.arm)
    p = RUNG_SHARES[base][["random", "greedy"].index(rung)]
    shares = [[1.0, 0.0] if i % 100 < p else [0.0, 1.0]
              for i in table.column("game_index").to_pylist()]
    return table.set_column(table.schema.get_field_index("seat_win_share"), "seat_win_share",
                            pa.array(shares, pa.list_(pa.float64())))


def test_the_answer_says_whether_the_stronger_rung_agrees(service, capsys):
    """A ladder (random, then greedy) whose rungs answer the seat question alike, the other
    way, undecided above, and undecided below: the answer says so from the intervals, the
    same sentence on the page, in the report and in the terminal."""
    client, results = service
    raw = {"name": "rungs", "game": "maori", "players": 2,
           "arms": {name: {} for name in RUNG_SHARES}, "ladder": ["random", "greedy"],
           "games_per_arm": 200, "shard_size": 100, "seed": 3}
    eid, root, _ = write_finished(client.app.state.registry, results, raw, edit=_seat_one_wins)
    spec = ExperimentSpec.model_validate(raw)
    model = view.build(spec, str(root), spec.look(interim=False), drawn=False)
    [block] = [b for b in model["headline"]["blocks"] if b["kind"] == "ladder"]
    items = {i["arm"]: i for i in block["items"]}
    assert {a: i["agreement"] for a, i in items.items()} == {
        "agree": "agrees", "reverse": "reverses", "open": "stronger undecided",
        "none": "weaker undecided"}
    assert [items[a]["decided"] for a in RUNG_SHARES] == [True, True, False, False]
    agree, reverse, open_, none = (items[a]["answer"] for a in RUNG_SHARES)
    assert agree.startswith("agree, 2 players: the stronger rung agrees: under random seat 1 "
                            "is favoured, winning 80.0% [")
    assert "; under greedy seat 1 wins 70.0% [" in agree
    assert reverse.startswith("reverse, 2 players: the stronger rung reverses the answer: "
                              "under random seat 1 is favoured")
    assert "; under greedy seat 1 wins 20.0% [" in reverse and "below a fair 50.0%" in reverse
    assert "the stronger rung is undecided: " in open_
    assert "; under greedy not decided yet (seat 1 wins 55.0% [" in open_
    assert none == ("none, 2 players: the weaker rung is undecided: under random the answer "
                    "is not decided yet, so there is nothing for greedy to confirm.")
    # the intervals behind the words: the weaker's favoured seat one rung up
    cells = {c["arm"]: c for c in view.report.figures(spec, str(root), spec.look(False))[
        "summary"] if c["seat"] == 0}
    assert cells["agree@greedy"]["win_lo"] > 0.5 and cells["reverse@greedy"]["win_hi"] < 0.5
    assert cells["open@greedy"]["win_lo"] < 0.5 < cells["open@greedy"]["win_hi"]
    page = _html_text(client.get(f"/api/experiments/{eid}/view").json()["html"])
    report = _html_text(client.get(f"/api/experiments/{eid}/report.html").text)
    cli.print_results(str(root), spec)
    printed = _words(capsys.readouterr().out)
    for sentence in (agree, reverse, open_, none):
        for name, text in (("page", page), ("report", report), ("terminal", printed)):
            assert _words(sentence) in text, (name, sentence)


def test_a_poll_after_new_shards_gets_their_figures_when_they_come_within_a_wait(tmp_path):
    """While a run goes, a poll that finds more games written waits (asynchronously, up to
    FRESH_WAIT_S) for their figures instead of answering the last ones, so the page's next
    look counts them; a recompute slower than that leaves the last answer, at once after
    the wait, and the poll after it gets the new one."""
    import asyncio
    import json as jsonlib
    import time

    from services.api import results as routes

    root, question = str(tmp_path / "exp"), ("test-fresh",)

    def record(games: int) -> dict:
        return {"id": "exp", "status": "running", "games_written": games}

    async def ask(games: int, answer) -> tuple[dict, float]:
        began = time.monotonic()
        body = (await routes._kept(record(games), root, question, answer)).body
        return jsonlib.loads(body), time.monotonic() - began

    def slow():
        time.sleep(routes.FRESH_WAIT_S + 0.5)
        return {"games": 300}

    async def polls():
        first = await ask(100, lambda: {"games": 100})
        fresh = await ask(200, lambda: {"games": 200})
        late = await ask(300, slow)
        await asyncio.sleep(1.0)
        return first, fresh, late, await ask(300, slow)

    (first, _), (fresh, _), (late, waited), (after, _) = asyncio.run(polls())
    assert first == {"games": 100} and fresh == {"games": 200}
    assert late == {"games": 200} and routes.FRESH_WAIT_S <= waited < routes.FRESH_WAIT_S + 0.4
    assert after == {"games": 300}


def _seat_plan_spread(root) -> float:
    """The spread a plan hands out for a one-arm run (the seats' win shares) from the pilot
    at `root`: pipelines.plan_spread of each cell's seat shares as seat_summary reads them."""
    import numpy as np

    import pipelines

    table = pipelines.seat_summary(str(root))
    blocks = [(part.sort("seat")["win_share"].to_numpy(),
               np.diag(part.sort("seat")["share_var"].to_numpy()), int(part["units"][0]), 1)
              for _, part in table.group_by(["arm", "players"])]
    return pipelines.plan_spread(blocks, seats=True)


def test_a_stored_spread_the_games_contradict_is_said_everywhere_and_the_plans_is_not(
        service, capsys):
    """Issue 52: a one-arm run (3 and 4 players, 200 games a cell, its seats decided by the
    triangle) whose stop_when.spread is 0.5x or 2x the one a plan hands out (from an
    independent 200-game pilot of the same cells): every player count's section says the
    games contradict it, the same sentence in the page, the report and the terminal, and
    the API's summary carries it as spread_warning; with the plan's spread and check, none
    of them does."""
    client, results = service
    name, values = enum_option()
    raw = small_spec(players=[3, 4], arms={"a": {name: values[0]}}, baseline="a",
                     stop_when={"delta": 0.05, "max_games": 1000})
    _, pilot, _ = write_finished(client.app.state.registry, results, {**raw, "seed": 77})
    planned = _seat_plan_spread(pilot)
    assert 0.4 < planned < 0.5
    for factor in (0.5, 2.0, None):
        rule = {**raw["stop_when"], "spread": planned * (factor or 1)}
        if factor is None:
            rule["spread_check"] = ExperimentSpec.model_validate(
                {**raw, "stop_when": rule}).spread_check_for(planned)
        run = {**raw, "stop_when": rule}
        spec = ExperimentSpec.model_validate(run)
        assert (spec.spread_warning() is None) == (factor is None)
        eid, root, _ = write_finished(client.app.state.registry, results, run)
        model = view.build(spec, str(root), spec.look(interim=False), drawn=False,
                           provenance=False)
        said = [w for part in model["sections"] for w in part["warnings"]
                if "stop_when.spread" in w]
        page = _html_text(client.get(f"/api/experiments/{eid}/view").json()["html"])
        report = _html_text(client.get(f"/api/experiments/{eid}/report.html").text)
        cli.print_results(str(root), spec)
        terminal = _words(capsys.readouterr().out)
        rows = client.get(f"/api/experiments/{eid}/summary").json()
        if factor is None:
            assert said == [] and all(r["spread_warning"] is None for r in rows)
            for text in (page, report, terminal):
                assert "is contradicted by the games" not in text
            continue
        assert len(said) == 2, said  # one per player count
        word = "at least" if factor < 1 else "at most"
        for sentence in said:
            assert sentence.startswith(f"The stored spread {planned * factor:.3g} "
                                       "(stop_when.spread) is contradicted by the games of "
                                       f"a's seats (their spread is {word} ")
            for where, text in (("page", page), ("report", report), ("terminal", terminal)):
                assert _words(sentence) in text, (where, sentence)
        assert {r["spread_warning"] for r in rows} == set(said)
