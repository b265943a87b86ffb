"""Issue 52, items 3 and 4 (services/balance.py): every fair-value answer leads with what to
do in the option's own units, reconciled with its confirmation on fresh deals (more games or
more values within the budget, else "cannot yet decide between A and B"), never an
infinity; and `balance.agents` asks the question per strength, each rung its own search,
with a sentence decided from the rungs' intervals.  The games here are simulated from known
truths (the seat's win chance at each value, as benchmarks/fair_value.py's), played through
the product's own search, confirmation and wording (benchmarks/recommendation.py's simulator;
that benchmark measures how often the recommendation is right)."""
import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from pydantic import ValidationError
from ray_support import ray_local  # noqa: F401  (session fixture)

import core_cy
from pipelines import fair_value as fv
from services import balance as sb
from services.spec import MAX_RUNGS, ExperimentSpec

PLAYERS = 3
REEF = {"name": "reef", "game": "reef_encounter", "players": PLAYERS,
        "balance": {"option": "seat_bonus_polyps", "seat": -1, "range": [-4, 8],
                    "wave_games": 400, "max_games": 20_000, "confirm_games": 3000}}
INFINITY = re.compile(r"(?<![A-Za-z])[-+]?(inf|Infinity)(?![A-Za-z])")


def _spec(rungs=None, agents="greedy", **balance) -> ExperimentSpec:
    raw = {**REEF, "balance": {**REEF["balance"], **balance}}
    if rungs is None:
        raw["agents"] = agents
    else:
        raw["balance"]["agents"] = rungs
    return ExperimentSpec.model_validate(raw)


_spec_file = importlib.util.spec_from_file_location(
    "bench_recommendation", Path(__file__).resolve().parents[2] / "benchmarks" /
    "recommendation.py")
bench = importlib.util.module_from_spec(_spec_file)
_spec_file.loader.exec_module(bench)
Truth, Quiet, _win = bench.Truth, bench.Quiet, bench.win_chance


def _run(monkeypatch, spec, points):
    truth = Truth(points)
    monkeypatch.setattr(sb, "_play", truth)
    return sb.run_fair_value(spec, Quiet()), truth


def _line(slope: float, star: float):
    """A truth rising `slope` points a unit through 0 at `star`."""
    return lambda value, agent: slope * (value - star)


def _curve(values, points, games=4000):
    """A search's curve whose figure at `values` is exactly `points` (no noise)."""
    cols = []
    for p in points:
        col = np.zeros(games)
        col[:round(_win(p) * games)] = 1.0
        cols.append(col)
    return fv.fit([(np.asarray(values, float), np.column_stack(cols))])


def test_the_answer_leads_with_the_integer_to_give(monkeypatch):
    """A truth crossing at 3.9 (4 extra polyps: -0.45 points, fair within 2): the answer's
    first line says what to do in polyps, with the fresh games that show it."""
    result, _ = _run(monkeypatch, _spec(confirm_games=12_000), _line(4.5, 3.9))
    (cell,) = result["cells"]
    rec = cell["recommendation"]
    assert rec["verdict"] == "give" and rec["value"] == 4
    (shown,) = [c for c in cell["confirmations"] if c["value"] == 4]
    assert rec["sentence"] == (f"Give the last seat 4 extra polyps: fair within ±2 points, "
                               f"shown on {shown['games']:,} fresh games")
    first = sb.answer_lines(result)[0]
    assert first.startswith(rec["sentence"] + " [")
    assert sb.answer_lines(result)[1].startswith("  search: seat 3 of 3 under greedy needs")


def test_the_action_is_said_in_the_options_units():
    spec = _spec()
    assert sb.action(spec, PLAYERS, 1) == "give the last seat 1 extra polyp"
    assert sb.action(spec, PLAYERS, -2) == "take 2 polyps from the last seat"
    assert sb.action(spec, PLAYERS, 0) == \
        "give the last seat nothing extra (seat_bonus_polyps 0)"
    assert sb.action(_spec(seat=2), PLAYERS, 3) == "give seat 2 3 extra polyps"


def test_a_disagreeing_confirmation_plays_more_until_it_agrees(monkeypatch):
    """The issue's case: the search says 3.98 (4 all but fair, 3 three points short) while
    on fresh deals 4 is 2.5 points ahead and 3 only 0.3 short.  The first confirmation
    shows 4 not fair and leaves 3 undecided; the answer plays more fresh games on 3 (within
    the budget) until it is decided, and gives 3.  With a budget that cannot decide it, it
    says so, naming both values (the old answer stopped at 'the nearest integers: [3, 4]')."""
    truth = Truth(lambda value, agent: {3: -0.3, 4: 2.5}[value])
    monkeypatch.setattr(sb, "_play", truth)
    spec = _spec()
    c = _curve([3, 4], [-3.0, 0.06])
    ans = fv.answer(c, -4, 8, 1 / PLAYERS, integer=True)
    assert ans.nearest == [3, 4] and 3.9 < ans.estimate < 4
    first = sb.confirm_games(spec, PLAYERS, 3, c)[0]
    confs = sb.reconcile(Quiet(), spec, PLAYERS, ans, c, 60_000, ["greedy"] * PLAYERS)
    by = {k["value"]: k for k in confs}
    assert by[4]["verdict"] == "unfair" and by[3]["verdict"] == "fair"
    assert by[3]["games"] > first          # it played more than the first confirmation
    rec = sb.recommendation(spec, PLAYERS, ans, confs, 60_000)
    assert rec["verdict"] == "give" and rec["value"] == 3
    assert rec["sentence"].startswith("Give the last seat 3 extra polyps: fair within ±2")

    short = sb.reconcile(Quiet(), spec, PLAYERS, ans, c, 2 * first, ["greedy"] * PLAYERS)
    assert {k["value"]: k["verdict"] for k in short} == {3: "not decided", 4: "unfair"}
    assert sum(k["games"] for k in short) <= 2 * first
    rec = sb.recommendation(spec, PLAYERS, ans, short, 2 * first)
    assert rec["verdict"] == "undecided" and rec["values"] == [3, 4]
    assert rec["sentence"].startswith(f"Cannot yet decide between 3 and 4 (seat_bonus_polyps) "
                                      f"within the budget ({2 * first:,} games) at ±2 points: "
                                      f"3 not decided (")


def test_a_value_shown_off_the_target_by_less_than_delta_is_played_on(monkeypatch):
    """4 polyps is 1.4 points short, fair within +-2.  On its first 10,000 fresh games its
    interval excludes 0 (the confirmation's 'not fair') but reaches into +-2: it may still
    be fair, so the answer plays on rather than say 'no whole number is fair' between 4 and
    5 (5 is 6 points ahead), and gives 4 (benchmarks/recommendation.py: such a 'between'
    was wrong in 6-11% of the answers on its gentle truth)."""
    monkeypatch.setattr(sb, "_play", Truth(lambda value, agent: {4: -1.4, 5: 6.0}[value]))
    spec = _spec(confirm_games=10_000)
    c = _curve([4, 5], [-1.4, 6.0])
    ans = fv.answer(c, -4, 8, 1 / PLAYERS, integer=True)
    assert ans.nearest == [4, 5]
    assert sb.confirm_games(spec, PLAYERS, 4, c)[0] == 10_000   # the first confirmation's
    (first,) = sb.confirm(Quiet(), spec, PLAYERS, [4], c, ans, games={4: 10_000})
    assert first["verdict"] == "unfair" and first["low"] < -0.02 < first["high"] < 0
    confs = sb.reconcile(Quiet(), spec, PLAYERS, ans, c, 200_000, ["greedy"] * PLAYERS)
    rec = sb.recommendation(spec, PLAYERS, ans, confs, 200_000)
    assert rec["verdict"] == "give" and rec["value"] == 4, rec


def test_values_all_on_one_side_lead_to_the_next_integer(monkeypatch):
    """The search's 3.5 is wrong by two polyps (the truth crosses at 5): 3 and 4 are both
    shown short on fresh deals, so the next integer up is confirmed, and it is fair."""
    monkeypatch.setattr(sb, "_play", Truth(_line(4.0, 5.0)))
    spec = _spec()
    c = _curve([3, 4], [-2.0, 2.0])
    ans = fv.answer(c, -4, 8, 1 / PLAYERS, integer=True)
    confs = sb.reconcile(Quiet(), spec, PLAYERS, ans, c, 40_000, ["greedy"] * PLAYERS)
    assert [k["value"] for k in confs] == [3, 4, 5]
    rec = sb.recommendation(spec, PLAYERS, ans, confs, 40_000)
    assert rec["verdict"] == "give" and rec["value"] == 5


def test_values_all_short_by_less_than_delta_lead_to_the_next_integer(monkeypatch):
    """Reef Encounter's flat stretch at 3 players: the search points at 2.8, and on fresh
    deals 2 and 3 polyps are both about a point short (shown off fair, not shown beyond
    +-1 point) while 4 is fair.  The answer confirms the next integer up before playing on
    at the margin, and gives 4 (it said 'cannot yet decide between 2 and 3' on the replayed
    answer, spending its whole budget on the two)."""
    monkeypatch.setattr(sb, "_play", Truth(lambda value, agent: {2: -1.0, 3: -1.05,
                                                                  4: 0.0}[value]))
    spec = _spec(delta=0.01, confirm_games=20_000)
    c = _curve([2, 3], [-1.2, 0.2])
    ans = fv.answer(c, -4, 8, 1 / PLAYERS, integer=True)
    assert ans.nearest == [2, 3]
    confs = sb.reconcile(Quiet(), spec, PLAYERS, ans, c, 250_000, ["greedy"] * PLAYERS)
    by = {k["value"]: k for k in confs}
    assert all(by[v]["high"] < 0 and by[v]["low"] < -0.01 for v in (2, 3))
    assert 4 in by and by[4]["verdict"] == "fair"
    rec = sb.recommendation(spec, PLAYERS, ans, confs, 250_000)
    assert rec["verdict"] == "give" and rec["value"] == 4, rec


def test_no_value_at_the_ranges_end_and_no_whole_number_between_are_said_plainly(
        monkeypatch):
    spec = _spec(range=[0, 8])
    monkeypatch.setattr(sb, "_play", Truth(_line(4.0, 9.5)))
    c = _curve([7, 8], [-2.0, 2.0])
    ans = fv.answer(c, 0, 8, 1 / PLAYERS, integer=True)
    confs = sb.reconcile(Quiet(), spec, PLAYERS, ans, c, 40_000, ["greedy"] * PLAYERS)
    rec = sb.recommendation(spec, PLAYERS, ans, confs, 40_000)
    assert rec["verdict"] == "outside" and rec["sentence"].startswith(
        "No value of seat_bonus_polyps in 0..8 makes the last seat fair: even at the range's "
        "high end seat_bonus_polyps = 8 at -")
    # steep through 3.5: 3 is 4.5 points short, 4 as far ahead: no integer is fair at +-2
    result, _ = _run(monkeypatch, _spec(confirm_games=12_000), _line(9.0, 3.5))
    rec = result["cells"][0]["recommendation"]
    assert rec["verdict"] == "between" and rec["values"] == [3, 4]
    said = re.match(r"No whole number is fair within ±2 points: seat_bonus_polyps = 3 at "
                    r"-\d+\.\d points \[(-\d+\.\d), (-\d+\.\d)\]", rec["sentence"])
    assert said and float(said[1]) <= -4.5 <= float(said[2]), rec["sentence"]


@pytest.mark.parametrize("star, status", [(-4.3, "found"), (9.0, "edge")])
def test_an_interval_open_to_a_side_names_the_ranges_end_never_infinity(monkeypatch, star,
                                                                        status):
    """A fair value at the edge of the range leaves the values beyond its end possible: the
    sentences say 'at or below the range's low end -4' (or above the high end), and no
    sentence, line or JSON of the answer holds an infinity (the old answer read '[-inf,
    6.24]')."""
    result, _ = _run(monkeypatch, _spec(max_games=6000), _line(1.0, star))
    (cell,) = result["cells"]
    ans = cell["answer"]
    end = "low" if star < 0 else "high"
    assert ans[end] is None and ans["status"] == status, ans   # open on that side
    if status == "found":
        assert "[at or below the range's low end -4, " in cell["sentence"]
    else:
        assert "lies there or above 8" in cell["sentence"]
    text = "\n".join(sb.answer_lines(result))
    assert not INFINITY.search(text), text
    assert not INFINITY.search(json.dumps(result, allow_nan=False))
    a = fv.Answer(0.1, -np.inf, 3.1, "found", 0.0, 0, 4, 0.25, pieces=[[0, 3.1]])
    assert fv.interval_text(a) == "[at or below the range's low end 0, 3.10]"
    assert "inf" not in fv.sentence(a, "seat_bonus_gold", "gold", "the seat fair")


# ---- item 4: per strength ------------------------------------------------------------------
def _found(low, high, lo=0, hi=8, status="found", side=None):
    return {"status": status, "low": low, "high": high, "range": [lo, hi], "side": side}


@pytest.mark.parametrize("answers, verdict", [
    ([_found(1.0, 1.8), _found(3.0, 3.9)], "moves"),               # disjoint
    ([_found(None, 0.9), _found(1.2, 2.0)], "moves"),              # open at 0, still apart
    ([_found(1.0, 1.8), _found(None, None, status="outside_range", side="above")], "moves"),
    ([_found(1.0, 1.8), _found(1.5, 2.2)], "holds"),               # overlap, within +-0.5
    ([_found(1.0, 1.8), _found(1.5, 2.2), _found(1.7, 2.5)], "holds"),
    ([_found(1.0, 1.8), _found(0.2, 3.0)], "undecided"),            # overlap, one too wide
    ([_found(1.0, 1.8), _found(None, 2.0)], "undecided"),           # open: not narrow
    ([_found(None, None, status="unresolved"), _found(1.0, 1.8)], "undecided"),
    ([_found(None, None, status="outside_range", side="below"),
      _found(None, None, status="outside_range", side="below")], "undecided"),
])
def test_the_strength_sentence_is_decided_from_the_rungs_intervals(answers, verdict):
    rungs = [(f"agent{k}", a) for k, a in enumerate(answers)]
    got = sb.strength_verdict(rungs, 0.5)
    assert got["verdict"] == verdict
    assert {"moves": "the compensation moves with strength",
            "holds": "the compensation holds across strengths",
            "undecided": "not decided yet whether the compensation moves with strength"
            }[verdict] in got["sentence"]
    assert not INFINITY.search(got["sentence"])


def test_a_list_of_agents_answers_per_rung_then_says_whether_it_moves(monkeypatch):
    """balance.agents ['fast', 'strong'] (the presets, stored as their agents): each rung its
    own search of the same question on arms of its own, every seat that agent; the lines
    answer per rung, then say that the compensation moves with strength (the truth crosses
    at 2 under greedy and at 6 under the search)."""
    spec = _spec(["fast", "strong"], confirm_games=6000)
    strong = core_cy.catalogue.preset_agent("reef_encounter", "strong")
    assert spec.balance.agents == ["greedy", strong]
    result, truth = _run(monkeypatch, spec,
                         lambda value, agent: 4.0 * (value - (2 if agent == "greedy" else 6)))
    assert [(c["players"], c["agent"]) for c in result["cells"]] == \
        [(PLAYERS, "greedy"), (PLAYERS, strong)]
    assert {arm.rsplit("@", 1)[1] for arm in truth.games} == {"greedy", strong}
    assert [c["recommendation"]["value"] for c in result["cells"]] == [2, 6]
    assert result["strength"][0]["verdict"] == "moves"
    lines = sb.answer_lines(result)
    assert lines[0].startswith("Give the last seat 2 extra polyps")
    assert any(line.startswith(f"  search: seat 3 of 3 under {strong}") for line in lines)
    assert lines[-1].startswith("3 players, per strength: the compensation moves with "
                                "strength: the fair values under greedy and")
    assert sb.budget_games(spec) == 2 * (20_000 + 2 * 6000)


def _agent_errors(agents) -> list[tuple]:
    with pytest.raises(ValidationError) as info:
        _spec(agents)
    return [e["loc"] for e in info.value.errors()]


@settings(max_examples=80, deadline=None)
@given(agents=hs.one_of(
    hs.lists(hs.sampled_from(["greedy", "random", "fast", "strong", "mcts(iterations=50)",
                              "nope", "strongerest", "", 3, None]), max_size=MAX_RUNGS + 2),
    hs.sampled_from(["greedy", "strong", "nope", "", 7, {}])))
def test_balance_agents_is_accepted_or_refused_naming_the_field(agents):
    """balance.agents, whatever is sent: a non-empty list (at most MAX_RUNGS) of distinct
    agents or presets of the game, or one of them alone, is accepted (presets stored as
    their agents); anything else is refused, every error at balance.agents."""
    game = core_cy.load("reef_encounter")
    items = agents if isinstance(agents, list) else [agents]

    def valid(text):
        if not isinstance(text, str) or not text:
            return None
        text = core_cy.catalogue.preset_agent("reef_encounter", text) or text
        try:
            core_cy.agents.parse_agent(game, text)
        except ValueError:
            return None
        return text

    resolved = [valid(t) for t in items]
    good = (all(resolved) and 0 < len(items) <= MAX_RUNGS
            and len(set(resolved)) == len(resolved))
    if good:
        spec = _spec(agents)
        assert spec.balance_rungs() == resolved
        return
    locs = _agent_errors(agents)
    assert locs and all(loc[:2] == ("balance", "agents") for loc in locs), locs


def test_balance_agents_refuses_the_specs_own_agents_and_a_forbid_question():
    raw = {**REEF, "agents": "greedy", "balance": {**REEF["balance"], "agents": ["fast"]}}
    with pytest.raises(ValidationError) as info:
        ExperimentSpec.model_validate(raw)
    assert [e["loc"] for e in info.value.errors()] == [("balance", "agents")]
    assert "leave the spec's agents" in info.value.errors()[0]["msg"]
    raw = {**REEF, "balance": {"forbid": "draw", "agents": ["fast", "strong"]}}
    with pytest.raises(ValidationError) as info:
        ExperimentSpec.model_validate(raw)
    assert ("balance", "agents") in [e["loc"] for e in info.value.errors()]


# ---- the faces: CLI, API, the page's fragment and the report, on real games -----------------
RUNGS = {"name": "gi-rungs", "game": "golden_island", "players": 2, "seed": 3,
         "balance": {"option": "seat_bonus_gold", "seat": 1, "range": [0, 20],
                     "agents": ["random", "fast"], "wave_games": 40, "max_games": 600,
                     "confirm_games": 60}}


def test_the_cli_answers_per_rung_then_for_strength(ray_local, tmp_path, capsys):
    from services.cli import main

    path = tmp_path / "spec.json"
    path.write_text(json.dumps(RUNGS))
    assert main(["balance", str(path), "--out", str(tmp_path / "res")]) == 0
    out = capsys.readouterr().out
    searches = [line for line in out.splitlines() if line.startswith("  search: ")]
    assert [line.split(" under ")[1].split(" ")[0].rstrip(":") for line in searches] == \
        ["random", "greedy"]
    assert re.search(r"^2 players, per strength: (the compensation moves with strength|the "
                     r"compensation holds across strengths|not decided yet whether the "
                     r"compensation moves with strength)", out, re.M), out
    assert not INFINITY.search(out)
    assert main(["balance", str(path), "--json", "--out", str(tmp_path / "res")]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [c["agent"] for c in result["cells"]] == ["random", "greedy"]
    assert [s["players"] for s in result["strength"]] == [2]


def test_the_api_and_the_page_answer_per_rung(ray_local, tmp_path):
    import time

    from fastapi.testclient import TestClient

    from services.app import create_app

    app = create_app(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"), run_worker=True)
    with TestClient(app) as client:
        for agents, field in (([], "balance.agents"), (["fast", "nope"], "balance.agents.1"),
                              ("strongerest", "balance.agents")):
            bad = client.post("/api/balance", json={**RUNGS, "balance": {
                **RUNGS["balance"], "agents": agents}})
            assert bad.status_code == 422, bad.text
            assert [e["field"] for e in bad.json()["detail"]] == [field], bad.json()
        job = client.post("/api/balance", json=RUNGS)
        assert job.status_code == 202, job.text
        assert job.json()["spec"]["balance"]["agents"] == ["random", "greedy"]  # stored
        url = job.json()["url"]
        assert client.get(url + "/view").status_code == 409    # not done yet
        deadline = time.monotonic() + 240
        while (got := client.get(url).json())["status"] not in ("done", "failed"):
            assert time.monotonic() < deadline
            time.sleep(0.3)
        assert got["status"] == "done", got
        cells = got["result"]["cells"]
        assert [(c["agent"], c["rung"]) for c in cells] == [("random", "random"),
                                                             ("greedy", "greedy")]
        assert all(c["recommendation"]["sentence"] for c in cells)
        assert got["result"]["strength"][0]["verdict"] in ("moves", "holds", "undecided")
        assert not INFINITY.search(json.dumps(got))
        listed = client.get("/api/balance").json()[0]["answers"]
        assert [a["agent"] for a in listed] == ["random", "greedy"]
        assert [a["recommendation"] for a in listed] == \
            [c["recommendation"]["sentence"] for c in cells]
        # the page shows the service's fragment: per rung its recommendation and sentence,
        # then the strength sentence; the report holds the same
        html = client.get(url + "/view").json()["html"]
        from html import unescape

        for cell in cells:
            assert unescape(cell["recommendation"]["sentence"]) in unescape(html)
        sections = re.findall(r"<section class='balance-answer' data-players='2' "
                              r"data-agent='([^']*)'>", html)
        assert sections == ["random", "greedy"]
        strength = re.search(r"<p class='strength' data-players='2' data-verdict='(\w+)'>"
                             r"([^<]*)</p>", html)
        assert strength and strength.group(1) == got["result"]["strength"][0]["verdict"]
        assert html.index("data-agent='greedy'") < strength.start()
        report = client.get(url + "/report.html").text
        assert strength.group(2) in report and not INFINITY.search(unescape(report))
