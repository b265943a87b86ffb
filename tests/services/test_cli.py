"""The meeplelab command line: catalogue, spec errors, run (with resume), demo."""
import json
import re

import pytest
from ray_support import ray_local  # noqa: F401  (session fixture)

import core_cy
from services import cli
from services.plan import ROUGH_PILOT, Plan, plan_experiment
from services.runner import Player, Progress
from services.spec import ExperimentSpec

GAME = next(g for g in core_cy.game_names() if not core_cy.load(g).cooperative)  # a competitive game


def _write_spec(tmp_path, **extra):
    g = core_cy.load(GAME)
    opt = next(o for o in g.options if o.kind == "enum" and len(o.choices) > 1)
    data = {"name": "cli-test", "game": GAME, "players": g.min_players + 1, "games_per_arm": 300,
            "shard_size": 100, "seed": 3,
            "arms": {"first": {opt.name: opt.choices[0]}, "second": {opt.name: opt.choices[1]}}}
    data.update(extra)
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(data))
    return path


def test_games_prints_the_catalogue(capsys):
    assert cli.main(["games"]) == 0
    out = capsys.readouterr().out
    for name in core_cy.game_names():
        g = core_cy.load(name)
        assert f"{name}: {g.title} ({g.min_players}-{g.max_players} players" in out
        for o in g.options:
            assert f"    {o.name} = " in out
        assert "agents: " + ", ".join(sorted(g.agents)) in out
    assert "forbid = \n" not in out  # restricted play names the kinds it takes
    kinds = core_cy.load("golden_island").info()["agents"]["greedy"]["parameters"][
        "properties"]["forbid"]["x-kinds"]
    assert f"    forbid = (none) (action kinds, '+'-joined: {' | '.join(kinds)})" in out


def test_a_bad_flag_is_named_as_typed_with_every_other_mistake(tmp_path, capsys):
    """`meeplelab plan --delta 5` blames the flag (a fraction: 0.05 is 5 points), not the
    spec file; every bad flag and every mistake of the spec at once."""
    path = _write_spec(tmp_path)
    assert cli.main(["plan", str(path), "--delta", "5", "--pilot-games", "3"]) == 2
    err = capsys.readouterr().err
    assert "--delta 5.0: a fraction: 0.05 is 5 points" in err
    assert "--pilot-games 3: " in err and "invalid experiment spec" not in err
    bad = _write_spec(tmp_path, players=1)
    assert cli.main(["plan", str(bad), "--half-width", "0.7"]) == 2
    err = capsys.readouterr().err
    assert "--half-width 0.7: a fraction" in err and f"invalid experiment spec {bad}" in err
    assert "players:" in err


def test_bad_spec_is_one_clear_message(tmp_path, capsys):
    path = _write_spec(tmp_path, arms={"x": {"no_such_option": 1}}, players=1)
    assert cli.main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "invalid experiment spec" in err
    assert "players:" in err
    assert "Traceback" not in err


def test_bad_option_value_names_the_arm_and_option(tmp_path, capsys):
    opt = next(o for o in core_cy.load(GAME).options if o.kind == "enum")
    path = _write_spec(tmp_path, arms={"x": {opt.name: "zzz"}})
    assert cli.main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"arms.x.{opt.name}:" in err and opt.choices[0] in err


def test_missing_and_malformed_spec_files(tmp_path, capsys):
    assert cli.main(["run", str(tmp_path / "nope.json")]) == 2
    (tmp_path / "bad.json").write_text("{")
    assert cli.main(["run", str(tmp_path / "bad.json")]) == 2
    err = capsys.readouterr().err
    assert "cannot read" in err and "not valid JSON" in err and "Traceback" not in err


def test_workers_must_be_positive(tmp_path):
    with pytest.raises(SystemExit) as info:
        cli.main(["run", str(_write_spec(tmp_path)), "--workers", "0"])
    assert info.value.code == 2


def test_run_writes_parquet_and_prints_tables(ray_local, tmp_path, capsys):
    spec_path = _write_spec(tmp_path)
    out_dir = tmp_path / "results"
    assert cli.main(["run", str(spec_path), "--out", str(out_dir)]) == 0
    printed = capsys.readouterr().out
    [exp] = list(out_dir.iterdir())
    assert exp.name.startswith("cli-test-")
    assert len(list(exp.rglob("*.parquet"))) == 6
    players = core_cy.load(GAME).min_players + 1
    assert f"== {players} players ==" in printed and "agents: random in every seat" in printed
    seat_rows = re.findall(r"^  (first|second) +(\d) +300 +\d+\.\d% \[\d+\.\d%, \d+\.\d%\]",
                           printed, re.M)
    assert sorted(seat_rows) == sorted((arm, str(k + 1)) for arm in ("first", "second")
                                       for k in range(players))
    assert "Each arm against first:" in printed
    assert printed.count("second changes seat ") == players  # one verdict per seat
    assert "Benjamini-Hochberg over" in printed
    assert "ties" in printed and "length mean" in printed
    assert max(len(line) for line in printed.splitlines()) <= 100
    # the same spec again resumes: nothing new is written, the same table is printed
    before = {p: p.stat().st_mtime_ns for p in exp.rglob("*.parquet")}
    assert cli.main(["run", str(spec_path), "--out", str(out_dir)]) == 0
    assert capsys.readouterr().out == printed
    assert {p: p.stat().st_mtime_ns for p in exp.rglob("*.parquet")} == before


def test_run_prints_interim_figures_while_it_goes(ray_local, tmp_path, capsys):
    """--interim-every 0: after every shard, each cell with results gets one line of win
    shares with confidence-sequence intervals, labelled interim; they are wider than the
    fixed-n intervals of the same games."""
    import pipelines
    from services.spec import ExperimentSpec

    spec_path = _write_spec(tmp_path)
    out_dir = tmp_path / "results"
    assert cli.main(["run", str(spec_path), "--out", str(out_dir), "--interim-every", "0"]) == 0
    captured = capsys.readouterr()
    players = core_cy.load(GAME).min_players + 1
    figure = r"seat (\d) ([\d.]+)% \[([\d.]+)%, ([\d.]+)%\]"
    lines = [line for line in captured.err.splitlines() if "interim" in line]
    for arm in ("first", "second"):
        mine = [line for line in lines if f"arm '{arm}', {players} players" in line]
        assert mine and all(line.startswith("interim (valid at any look)") for line in mine)
        for line in mine:
            seats = re.findall(figure, line)
            assert [int(s[0]) for s in seats] == list(range(1, players + 1))  # seats from 1
            assert all(float(lo) <= float(x) <= float(hi) for _, x, lo, hi in seats)
    assert "interim" not in captured.out  # the final tables are fixed-n
    [exp] = list(out_dir.iterdir())
    spec = ExperimentSpec.from_file(spec_path)
    final = pipelines.summary(exp).filter(arm="first").sort("seat")
    [line] = [x for x in cli.interim_lines(str(exp), spec) if "'first'" in x]
    widths = [float(hi) - float(lo) for _, _, lo, hi in re.findall(figure, line)]
    assert all(w > 100 * (h - lo) for w, lo, h in zip(widths, final["win_lo"], final["win_hi"]))


def test_plan_prints_games_in_whole_waves(ray_local, tmp_path, capsys):
    """A spec with stop_when stops between waves of games_per_arm: the plan says so."""
    spec_path = _write_spec(tmp_path, games_per_arm=70,
                            stop_when={"half_width": 0.05, "max_games": 140})
    assert cli.main(["plan", str(spec_path), "--pilot-games", "100", "--workers", "2"]) == 0
    printed = capsys.readouterr().out
    games = int(re.search(r"About ([\d,]+) games per cell", printed)[1].replace(",", ""))
    assert games % 70 == 0 and games > 140  # +-5 points needs a few hundred games
    assert "stop_when.max_games (140) would end the run before that" in printed
    assert "first, " in printed and "games per CPU-second" in printed


def test_plan_sizes_a_precision_run_at_the_level_it_stops_at(ray_local, tmp_path):
    """stop_when.alpha = 0.01: the run stops once every 99% interval is narrow enough, so
    its plan (the same pilot) asks about (z_0.995 / z_0.975)^2 = 1.73 times the games of
    alpha = 0.05, and says the level."""
    from scipy import stats

    plans = {}
    for alpha in (0.05, 0.01):
        spec = ExperimentSpec.from_file(_write_spec(tmp_path, games_per_arm=10, stop_when={
            "half_width": 0.03, "alpha": alpha, "max_games": 100_000}))
        pilot = Player(spec.game, str(tmp_path), f"pilot-{alpha}", seed=spec.seed)
        plans[alpha] = plan_experiment(spec, pilot, pilot_games=100, workers=2)
    expected = (stats.norm.ppf(0.995) / stats.norm.ppf(0.975)) ** 2
    for wide, narrow in zip(plans[0.05]["cells"], plans[0.01]["cells"]):
        ratio = narrow["games_for_half_width"] / wide["games_for_half_width"]
        assert abs(ratio - expected) < 0.1, ratio
    assert abs(plans[0.01]["games_per_cell"] / plans[0.05]["games_per_cell"] - expected) < 0.1
    assert plans[0.01]["alpha"] == 0.01 and "(99%)" in plans[0.01]["verdict"]
    assert "(95%)" in plans[0.05]["verdict"]


def test_plan_of_a_decision_rule_simulates_it(ray_local, tmp_path, capsys):
    """stop_when.delta: the plan is the rule's own (simulated): expected games, the median and
    the p10-p90 range in whole waves, at most max_games, and what share of runs would end
    undecided."""
    spec_path = _write_spec(tmp_path, games_per_arm=100,
                            stop_when={"delta": 0.01, "max_games": 1000})
    assert cli.main(["plan", str(spec_path), "--pilot-games", "100", "--workers", "2"]) == 0
    printed = capsys.readouterr().out
    found = re.search(r"About ([\d,]+) games per cell expected .*; median ([\d,]+), 80% of "
                      r"runs between ([\d,]+) and ([\d,]+), \d+ s at most\), to decide at ±1 "
                      r"point \(stop_when.delta\)", printed)
    assert found, printed
    expected, median, p10, p90 = (int(x.replace(",", "")) for x in found.groups())
    assert 100 <= p10 <= median <= p90 <= 1000 and expected <= p90 and p90 % 100 == 0
    # +-1 point from a few hundred games is out of reach: most runs end at max_games
    assert re.search(r"(\d+)% of runs would reach stop_when.max_games \(1,000\) undecided: "
                     r"it rarely stops early", printed), printed
    assert "at a fixed n for the difference (80% power)" in printed
    # errors of +-0.25 points need about 35,000 games, and the pilot stops at 20 x 100
    assert re.search(r"The pilot's errors reach ±[\d.]+ points, over the ±0.25 a close "
                     r"plan needs: the plan is rough", printed), printed
    spec = ExperimentSpec.from_file(spec_path)
    plan = plan_experiment(spec, Player(spec.game, str(tmp_path), "pilot", seed=spec.seed),
                           pilot_games=100, workers=2)
    shown = Plan.model_validate(plan)  # what the API answers
    assert shown.rule == "stop_when.delta" and shown.undecided_share > 0.5
    assert shown.games_per_cell == shown.expected_games_per_cell <= shown.p90_games_per_cell
    assert shown.p10_games_per_cell <= shown.median_games_per_cell <= shown.p90_games_per_cell
    assert shown.p90_wall_seconds >= shown.wall_seconds > 0
    assert 0.0025 * ROUGH_PILOT < shown.pilot_error < 0.02
    # the spread to start the run with: the pilot's largest sd of a paired difference, raised
    # a little for the pilot's error (pipelines.plan_spread)
    largest = max(max(c.diff_sd) for c in shown.cells if c.diff_sd)
    assert largest < shown.spread < 1.05 * largest
    assert re.search(r"once the run is started with stop_when.spread = 0\.\d+ \(this pilot's "
                     r"spread", printed), printed
    # ... with the check that says a plan handed it out: copied from the sentence, or from
    # the API's fields, the run is submitted without a warning; typed alone, with one
    assert shown.spread_check == spec.spread_check_for(shown.spread)
    spread, check = re.search(r"stop_when.spread = (0\.\d+) \(this pilot's spread\) and "
                              r"stop_when.spread_check = \"([0-9a-f]{8})\"", printed).groups()
    for value, code, warned in ((float(spread), check, False), (shown.spread,
                                                                shown.spread_check, False),
                                (float(spread), None, True)):
        rule = {**spec.stop_when.model_dump(), "spread": value, "spread_check": code}
        assert (spec.model_copy(update={"stop_when": type(spec.stop_when)(**rule)})
                .spread_warning() is not None) == warned


def test_run_warns_of_a_spread_no_plan_handed_out(tmp_path, capsys, monkeypatch):
    """`meeplelab run` of a spec whose stop_when.spread was typed by hand prints the warning
    (services.spec.spread_warning) before it plays; with the plan's check it prints none."""
    monkeypatch.setattr(cli, "run_spec", lambda *args, **kwargs: 0)  # the warning, not a run
    rule = {"delta": 0.05, "max_games": 600, "spread": 0.45}
    path = _write_spec(tmp_path, stop_when=rule)
    assert cli.main(["run", str(path)]) == 0
    err = capsys.readouterr().err
    assert "warning: stop_when.spread 0.45 was not handed out by a plan for this experiment" \
        in err, err
    check = ExperimentSpec.from_file(path).spread_check_for(0.45)
    path = _write_spec(tmp_path, stop_when={**rule, "spread_check": check})
    assert cli.main(["run", str(path)]) == 0
    assert "stop_when.spread" not in capsys.readouterr().err


def test_plan_from_a_pilot_with_small_enough_errors_is_not_called_rough(ray_local, tmp_path, capsys):
    """At +-20 points a pilot of 100 games (grown a little for the differences) has errors of
    about delta / 4: the plan says nothing of a rough pilot."""
    spec_path = _write_spec(tmp_path, games_per_arm=100,
                            stop_when={"delta": 0.2, "max_games": 1000})
    assert cli.main(["plan", str(spec_path), "--pilot-games", "100", "--workers", "2"]) == 0
    printed = capsys.readouterr().out
    assert "(stop_when.delta)" in printed and "rough" not in printed, printed


def test_plan_of_games_that_never_finish_is_a_clear_error(ray_local, tmp_path, capsys):
    path = tmp_path / "cut.json"
    path.write_text(json.dumps({"game": "forbidden_desert", "players": 2,
                                "arms": {"cut": {"max_turns": 1}}}))
    assert cli.main(["plan", str(path), "--pilot-games", "20"]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith("error: only 0 of the pilot's 20 games of arm 'cut' with 2 players "
                          "finished by the rules") and "turn_limit" in err


def test_run_with_different_agents_prints_agent_shares(ray_local, tmp_path, capsys):
    n = core_cy.load(GAME).min_players
    spec_path = _write_spec(tmp_path, arms=None, players=n, rotate_agents=True,
                            agents=["greedy"] + ["random"] * (n - 1), games_per_arm=100 * n)
    assert cli.main(["run", str(spec_path), "--out", str(tmp_path / "r")]) == 0
    printed = capsys.readouterr().out
    assert "Win share per agent" in printed
    assert "rotated" in printed and "greedy" in printed
    assert "Each arm against" not in printed  # one arm: nothing to compare


def test_demo_table_plays_the_embedded_demo(ray_local, tmp_path, capsys, monkeypatch):
    """The demo's own experiments (a strong agent, then a stronger one) with fewer games: each
    is played in turn, stops once decided, and prints its verdicts as it decides them."""
    from services import demo

    specs = demo.demo_specs()
    assert [s["game"] for s in specs] == ["forbidden_desert"] * 2
    assert specs[0]["agents"] != specs[1]["agents"]  # the next rung
    assert all(s["stop_when"]["delta"] and s["arms"] == specs[0]["arms"] for s in specs)
    # the cheap search in place of the demo's agents: the same question, seconds to play
    small = [dict(s, agents=agent, stop_when=dict(s["stop_when"], max_games=300))
             for s, agent in zip(specs, ["search", "deep_search"])]
    monkeypatch.setattr(demo, "demo_specs", lambda: small)
    assert cli.main(["demo", "--table", "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert captured.out.count("Normal is harder than novice for a team of 4 under ") == 2
    assert "[1] demo-desert-difficulty: search in every seat" in captured.err
    assert "[2] demo-desert-difficulty-stronger: deep_search in every seat" in captured.err
    for arm in specs[0]["arms"]:
        assert re.search(rf"^  {arm} +\d", captured.out, re.M)
    assert captured.out.count("normal changes the team win rate by -") == 2


def test_demo_service_queues_the_demo_once(tmp_path, monkeypatch):
    from services import app, demo
    from services.registry import Registry

    registry = Registry(str(tmp_path / "db.sqlite"))
    first = demo.ensure_demo(registry)
    assert len(first) == len(demo.demo_specs()) == 2
    assert demo.ensure_demo(registry) == first, "a restart reuses the queued demo"
    record = registry.get(first[0])
    assert record["status"] == "queued" and record["spec"] == demo.demo_specs()[0]
    registry.set_status(first[0], "failed", "boom")
    again = demo.ensure_demo(registry)
    assert again[0] != first[0] and again[1] == first[1], "a failed demo is queued anew"
    registry.close()
    # `meeplelab demo` serves the app with the demo queued, access logs off, and prints its
    # page; the terminal report follows the queued experiments.
    served, reports = {}, []
    monkeypatch.setenv("MEEPLELAB_DB", str(tmp_path / "serve.sqlite"))
    monkeypatch.setattr("uvicorn.run", lambda application, **kw: served.update(kw))
    monkeypatch.setattr(demo.TerminalReport, "start", lambda self: reports.append(self))
    assert cli.main(["demo", "--port", "8123"]) == 0
    assert served["port"] == 8123 and served["host"] == "127.0.0.1"
    assert served["access_log"] is False
    (report,) = reports
    assert len(report.ids) == 2 and report.url == "http://127.0.0.1:8123/"


@pytest.mark.parametrize("flag", [["--out", "x"], ["--workers", "1"], ["--interim-every", "3"]])
def test_served_demo_refuses_the_flags_of_demo_table(flag, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["demo", *flag])
    assert info.value.code == 2
    assert "only apply to `meeplelab demo --table`" in capsys.readouterr().err


def test_a_busy_port_is_one_line_naming_port_before_anything_starts(tmp_path, monkeypatch,
                                                                    capsys):
    import socket

    monkeypatch.setenv("MEEPLELAB_DB", str(tmp_path / "db.sqlite"))
    started = []
    monkeypatch.setattr("uvicorn.run", lambda application, **kw: started.append(kw))
    monkeypatch.setattr("services.app.create_app", lambda *a, **kw: started.append("app"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for command in ("serve", "demo"):
            assert cli.main([command, "--port", str(port)]) == 2
            (line,) = capsys.readouterr().err.strip().splitlines()
            assert f"port {port}" in line and "--port" in line and "in use" in line
    assert started == []  # neither the app (nor Ray, which its worker starts) nor uvicorn
    from services.registry import Registry

    assert Registry(str(tmp_path / "db.sqlite")).list() == []  # no demo queued either


def test_spec_errors_carry_no_pydantic_prefix(tmp_path, capsys):
    path = _write_spec(tmp_path, players=[])  # a validator's ValueError
    assert cli.main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "players: players must name at least one player count" in err
    assert "Value error" not in err


def test_run_and_plan_say_when_games_per_arm_is_the_default(ray_local, tmp_path, capsys):
    data = json.loads(_write_spec(tmp_path).read_text())
    del data["games_per_arm"]
    path = tmp_path / "no-games.json"
    path.write_text(json.dumps(data))
    assert cli.main(["plan", str(path), "--pilot-games", "20", "--half-width", "0.2"]) == 0
    assert "sets no games_per_arm: it would play the default 1,000" in capsys.readouterr().out


def test_cooperative_results_print_team_win_rate_loss_causes_and_adventurers(ray_local, tmp_path,
                                                                            capsys):
    spec = tmp_path / "desert.json"
    spec.write_text(json.dumps({
        "name": "desert", "game": "forbidden_desert", "players": 3, "agents": "planner",
        "sweep": {"difficulty": ["novice", "legendary"]}, "games_per_arm": 300,
        "shard_size": 150, "seed": 3}))
    assert cli.main(["run", str(spec), "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert printed.count("team win rate [") == 0  # the interval follows the rate
    assert printed.count("team win rate ") >= 2 and "end reasons" in printed
    assert "Team win rate by adventurer:" in printed and "Seats:" not in printed
    assert printed.count("difficulty=legendary changes the team win rate") == 1  # one test
    assert "seat 1" not in printed and "The team wins" in printed


def test_api_error_items_carry_no_pydantic_prefix():
    from services.api.errors import error_items

    (item,) = error_items([{"loc": ("players",), "msg": "Value error, players must name at "
                            "least one player count", "type": "value_error"}], source="body")
    assert item["msg"] == "players must name at least one player count"
    assert item["field"] == "players"


def test_a_failed_demo_experiment_ends_the_demo_saying_so(tmp_path, monkeypatch):
    """A demo experiment that fails: the terminal says so (with the error), never "the demo
    is done", stops the service, and `meeplelab demo` exits with 1."""
    import io

    from services import demo
    from services.registry import Registry

    db = str(tmp_path / "db.sqlite")
    registry = Registry(db)
    ids = demo.ensure_demo(registry)
    registry.set_status(ids[0], "failed", "ModuleNotFoundError: no module named x")
    registry.close()
    stops, out = [], io.StringIO()
    report = demo.TerminalReport(db, str(tmp_path / "results"), ids, "http://h/", every=0.1,
                                 out=out, on_failure=lambda: stops.append(True))
    report.run()
    text = out.getvalue()
    assert "[1/2] failed after 0 games: ModuleNotFoundError: no module named x" in text
    assert "the demo failed: experiment 1 of 2 did not finish" in text
    assert "the demo is done" not in text and "[2/2]" not in text
    assert stops == [True] and report.failed == [ids[0]]
    # `meeplelab demo`: the report stops the service, and the command exits with 1
    monkeypatch.setenv("MEEPLELAB_DB", db)
    monkeypatch.setattr(demo, "_FAILED", [])
    monkeypatch.setattr(demo, "_stop_this_process", lambda: None)
    monkeypatch.setattr("uvicorn.run", lambda application, **kw: None)

    def fail_then_follow(self):  # the worker fails the queued demo, the report follows
        registry = Registry(db)
        registry.set_status(self.ids[0], "failed", "boom")
        registry.close()
        self.run()

    monkeypatch.setattr(demo.TerminalReport, "start", fail_then_follow)
    assert cli.main(["demo", "--port", "8124"]) == 1
    assert len(demo.failures()) == 1


def test_a_failed_run_says_so_and_exits_non_zero(tmp_path, capsys, monkeypatch):
    from types import SimpleNamespace

    from services import runner

    def failing(spec, out_dir, exp_id, progress, **kw):  # what the runner reports (Progress)
        progress(SimpleNamespace(done=0, total=10, games_per_s=0.0, eta_s=None,
                                 status="failed", error="boom: a shard died"))
        return "failed"

    monkeypatch.setattr(runner, "init_ray", lambda **kw: None)
    monkeypatch.setattr(runner, "run_experiment", failing)
    assert cli.main(["run", str(_write_spec(tmp_path)), "--out", str(tmp_path / "r")]) == 1
    captured = capsys.readouterr()
    assert "error: experiment failed: boom: a shard died" in captured.err
    assert "the answer:" not in captured.out


def test_progress_shows_an_unknown_eta_as_a_dash():
    from services.demo import duration, progress_text

    assert progress_text(1, 30.0, None) == "1 game played, 30 games/s, ETA –"
    assert progress_text(1200, 30.0, 130) == "1,200 games played, 30 games/s, ETA 2 min 10 s"
    assert progress_text(0, None, None) == "0 games played"
    assert progress_text(3, 0.42, None) == "3 games played, 0.42 games/s, ETA –"
    assert progress_text(30, 2.44, None) == "30 games played, 2.4 games/s, ETA –"
    assert duration(None) == "–" and duration(59.6) == "1 min 00 s"


@pytest.mark.parametrize("field", ["delta", "half_width"])
def test_a_margin_given_in_points_is_refused_saying_it_is_a_fraction(tmp_path, capsys, field):
    path = _write_spec(tmp_path, stop_when={field: 5, "max_games": 1000})
    assert cli.main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"stop_when.{field}: {field} is a fraction: 0.05 is 5 points" in err


def test_no_message_shows_the_branches_of_a_union(tmp_path, capsys):
    path = _write_spec(tmp_path, balance={"option": "x", "target": "fair", "range": [0, 5]})
    assert cli.main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "balance.target: target must be 'equal' or a win rate" in err
    assert "literal" not in err and "float" not in err


def test_report_and_run_name_a_damaged_shard_and_replay_restores_it(ray_local, tmp_path,
                                                                    capsys):
    """A finished run's damaged shard is named by `report` and `run` with the games not
    counted and the replay command; `replay` plays it again into the same bytes."""
    spec_path = _write_spec(tmp_path)
    out_dir = tmp_path / "results"
    assert cli.main(["run", str(spec_path), "--out", str(out_dir)]) == 0
    [exp] = list(out_dir.iterdir())
    capsys.readouterr()
    shard = sorted(exp.rglob("*.parquet"))[2]
    written = shard.read_bytes()
    shard.write_bytes(written[: len(written) // 2])
    notice = (f"1 of 6 shards is damaged ({shard.relative_to(exp).as_posix()} (truncated)): "
              f"100 of 600 games are not counted; replay it with `meeplelab replay {exp}`")
    assert cli.main(["report", str(exp), "-o", str(tmp_path / "r.html")]) == 0
    assert notice in capsys.readouterr().err
    assert cli.main(["replay", str(exp)]) == 0
    replayed = capsys.readouterr()
    assert notice in replayed.err and "replayed 1 shards" in replayed.err
    assert shard.read_bytes() == written
    assert "300 games" in replayed.out and "damaged" not in replayed.out
    assert cli.main(["replay", str(exp)]) == 0
    assert "nothing to replay" in capsys.readouterr().err


def test_job_progress_says_where_it_stands_with_a_rate_and_an_eta(monkeypatch):
    """A plan's or a balance search's progress: a line whenever where it stands changes,
    else at most one every `every` seconds; a slow rate shown as it is (never "0 games/s"),
    an unknown ETA as "ETA -"."""
    import io
    import time

    now = [0.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    out = io.StringIO()
    progress = cli._job_progress(out, every=5.0)
    for done, rate, eta, detail in [(2, 0.2, None, "at 1 coin"), (4, 0.2, 160.0, "at 1 coin"),
                                    (6, 0.4, 80.0, "at 1 coin"), (8, 0.4, 60.0, "at 2 coins")]:
        progress(Progress(done, 40, rate, eta, detail=detail))
        now[0] += 3.0
    lines = out.getvalue().splitlines()
    assert len(lines) == 3  # the second report came 3 s after the first, with no change
    assert lines[0] == "  at 1 coin: 2 games, 0.20 games/s; ETA -"
    assert lines[-1].startswith("  at 2 coins: 8 games, 0.40 games/s; ETA ")
    assert not re.search(r"(?<![\d.])0 games/s", out.getvalue())


def test_a_look_prints_games_rate_and_eta_only_when_something_changed():
    """The terminal of `meeplelab run` at each look: the games, the rate and the ETA ('–'
    until known) above the lines that changed; nothing at a look where nothing did; and
    once, when the open questions need more games than the cap allows, that the run will
    likely end undecided at its cap."""
    from services.runner import Progress

    spec = ExperimentSpec.model_validate({
        "game": GAME, "players": 2, "arms": {"a": {}, "b": {}}, "baseline": "a",
        "games_per_arm": 100, "stop_when": {"delta": 0.01, "max_games": 1000}})

    class Verdicts:
        most_more_games, said = 0, []

        def new_lines(self):
            return self.said

    looks, verdicts = cli.LookLines(spec), Verdicts()
    cells = ["interim (valid at any look) arm 'a', 2 players, 100 games: seat 1 50.0% [...]"]
    first = looks.lines(Progress(200, 2000, 0.0, None), cells, verdicts)
    assert first == ["look: 200 of 2,000 games, – games/s, ETA –"] + cells
    assert looks.lines(Progress(200, 2000, 40.0, 45.0), cells, verdicts) == []  # unchanged
    verdicts.most_more_games = 5_000
    later = looks.lines(Progress(400, 2000, 40.0, 45.0), cells, verdicts)
    assert later[0] == "look: 400 of 2,000 games, 40 games/s, ETA 45 s"
    assert later[1].startswith("this run will likely end undecided at its cap: its open "
                               "questions need about 5,000 more games per cell, "
                               "stop_when.max_games allows 800 more")
    assert looks.lines(Progress(400, 2000, 40.0, 45.0), cells, verdicts) == []  # said once
