"""Every seat at once (balance.seat "all", services/all_seats.py): the spec's new input, the
search on a real engine through the runner's Player, its answer in words, and the CLI and
API faces."""
import json
import time
from urllib.parse import unquote

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as hs
from pydantic import ValidationError
from ray_support import ray_local  # noqa: F401  (session fixture)

from pipelines import fair_vector as fvec
from services import all_seats as sa
from services.app import create_app
from services.balance import answer_lines, run_balance
from services.cli import main
from services.runner import Player
from services.spec import ExperimentSpec

ALL = {"name": "gi-all", "game": "golden_island", "players": 3, "agents": "greedy", "seed": 3,
       "balance": {"option": "seat_bonus_gold", "seat": "all", "range": [0, 4],
                   "wave_games": 40, "max_games": 900, "confirm_games": 80, "delta": 0.05}}
LEADS = ("Give ", "Probably give ", "Leave ", "Probably leave ", "Not decided", "No values")


def _errors(balance: dict, **spec) -> list:
    with pytest.raises(ValidationError) as info:
        ExperimentSpec.model_validate({**ALL, **spec, "balance": {**ALL["balance"], **balance}})
    return [(".".join(map(str, e["loc"])), e["msg"]) for e in info.value.errors()]


@settings(max_examples=120, deadline=None)
@given(seat=hs.one_of(hs.integers(-4, 12), hs.text(max_size=4), hs.sampled_from(
    ["all", "All", "all ", 2.0, 2.5, True, None, [], {}]), hs.floats(allow_nan=True)))
def test_a_seat_is_a_seat_from_1_the_last_or_all_and_anything_else_names_balance_seat(seat):
    """balance.seat takes 1..k (k: the players), -1 (the last seat) or 'all'; anything else
    is refused naming balance.seat and nothing else."""
    whole = isinstance(seat, (int, float)) and not isinstance(seat, bool) and seat == seat \
        and float(seat).is_integer()
    if seat == "all" or (whole and (seat == -1 or 1 <= seat <= 3)):
        spec = ExperimentSpec.model_validate({**ALL, "balance": {**ALL["balance"],
                                                                 "seat": seat}})
        assert spec.balance.all_seats == (seat == "all")
        return
    errors = _errors({"seat": seat})
    assert errors and {loc for loc, _ in errors} == {"balance.seat"}, errors


def test_all_seats_asks_a_per_seat_option_with_equal_seats():
    [(loc, msg)] = _errors({"option": None, "range": None, "forbid": "steal"})
    assert loc == "balance.seat" and "not forbid" in msg
    [(loc, msg)] = _errors({"option": "max_rounds", "range": [5, 9]})
    assert loc == "balance.seat" and "one value for all" in msg
    [(loc, msg)] = _errors({"target": 0.3})
    assert loc == "balance.target" and "every seat fair" in msg
    # the range is checked with every seat but the first at its ends
    spec = ExperimentSpec.model_validate(ALL)
    assert spec.searched_rules(3, 4) == {"seat_bonus_gold": [0, 4, 4]}
    assert spec.searched_rules(3, [0, 1, 2]) == {"seat_bonus_gold": [0, 1, 2]}
    with pytest.raises(ValueError):
        spec.balance.seat_of(3)


def test_the_answer_says_what_to_give_each_seat():
    assert sa.give_text([0, 1, 2, 3], "polyps") == (
        "give seat 2 one extra polyp, seat 3 two extra polyps and seat 4 three extra polyps "
        "(seat 1 as the book has it)")
    assert sa.give_text([0, -1, 0], "gold") == ("give seat 2 one gold fewer and seat 3 "
                                                 "nothing (seat 1 as the book has it)")
    assert sa.give_text([0, 0, 0], "points") == "leave every seat as the book has it"
    ans = fvec.Answer(3, "found", 0, 4, 0, [1.2, 1.9], [0.8, 1.5], [1.6, 2.3], [0, 1, 2])
    seats = [{"seat": s, "mean": m, "low": m - 0.01, "high": m + 0.01}
             for s, m in enumerate((0.004, -0.002, 0.001))]
    fair = {"games": 5000, "seed": 4, "seats": seats, "verdict": "fair", "off": [],
            "beyond": []}
    assert sa.lead_sentence(ans, fair, "seat_bonus_gold", 0.02) == (
        "Give seat 2 one extra gold and seat 3 two extra gold (seat 1 as the book has it): "
        "every seat fair within ±2 points, shown on 5,000 fresh games (seed 4)")
    off = {**fair, "verdict": "unfair", "off": [1], "beyond": [1], "seats": [
        {**seats[1], "mean": -0.05, "high": -0.03} if r["seat"] == 1 else r for r in seats]}
    text = sa.lead_sentence(ans, off, "seat_bonus_gold", 0.02)
    assert text.startswith("Not decided") and (
        "seat 2 (-5.0 points) is shown more than ±2 points from fair" in text)
    # shown off fair by less than the margin: not a 'not fair' (the one-seat rule)
    near = {**fair, "verdict": "not decided", "off": [1], "beyond": [], "seats": [
        {**seats[1], "mean": -0.015, "low": -0.025, "high": -0.005} if r["seat"] == 1 else r
        for r in seats]}
    text = sa.lead_sentence(ans, near, "seat_bonus_gold", 0.02)
    assert text.startswith("Probably") and "not fair" not in text
    line = sa.confirmation_sentence(near, "seat_bonus_gold", [0, 1, 2], 3, 0.02)
    assert line.endswith("not decided at ±2 points (seat 2 (-1.5 points) shown off fair, not "
                         "beyond ±2 points)")
    unsure = sa.lead_sentence(ans, {**fair, "verdict": "not decided"}, "seat_bonus_gold", 0.02)
    assert unsure.startswith("Probably give seat 2 one extra gold") and "not yet" in unsure
    out = fvec.Answer(3, "outside_range", 0, 4, 0, [9.0, 2.0], [6.0, 1.0], [12.0, 3.0],
                      [0, 4, 2])
    assert "seat 2's lies above it" in sa.lead_sentence(out, None, "seat_bonus_gold", 0.02)


def _answer(spec, folder, job):
    player = Player(spec.game, str(folder), job, seed=spec.seed)
    result = run_balance(spec, player)
    player.finish()
    return result, player


def test_every_seat_is_searched_through_the_runner_and_confirmed(ray_local, tmp_path):
    spec = ExperimentSpec.model_validate(ALL)
    result, player = _answer(spec, tmp_path, "first")
    again, _ = _answer(spec, tmp_path, "again")     # the same deals and agents: the same answer
    for r in (result, again):
        for c in r["cells"]:
            c.pop("cpu_seconds")
    assert result == again and result["kind"] == "all_seats"
    (cell,) = result["cells"]
    ans = cell["answer"]
    # the first look: the book's vector and each free seat at the range's grid
    assert cell["looks"][0]["vectors"] == [[0, 0, 0], [0, 2, 0], [0, 4, 0], [0, 0, 2],
                                           [0, 0, 4]]
    played = sum(len(k["vectors"]) * k["games_per_vector"] for k in cell["looks"])
    assert played == cell["games"] <= 900
    [conf] = cell["confirmations"]
    assert conf["seed"] == 4 and conf["games"] <= 80 and len(conf["seats"]) == 3
    assert player.state["done"] == cell["games"] + 80     # the search and the confirmation
    assert ans["vector"][0] == 0 and all(0 <= v <= 4 for v in ans["vector"])
    lines = answer_lines(result)
    assert lines[0].startswith(cell["recommendation"]["sentence"]) and lines[0].startswith(LEADS)
    assert lines[1] == "  search: " + cell["sentence"] and conf["sentence"] in lines[2]
    # the games are the job's own, one arm a vector
    arms = {unquote(p.name) for p in (tmp_path / "first").iterdir()
            if p.name.startswith("arm=")}
    assert "arm=seat_bonus_gold=[0,0,0]" in arms, arms
    assert f"arm=seat_bonus_gold={ans['vector']},confirmation".replace(" ", "") in arms


def test_the_cli_leads_with_what_to_give(ray_local, tmp_path, capsys):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(ALL))
    assert main(["balance", str(path), "--out", str(tmp_path / "res")]) == 0
    printed = capsys.readouterr()
    lines = printed.out.splitlines()
    assert lines[0].startswith(LEADS) and lines[0].endswith("CPU-s]")
    assert lines[1].startswith("  search: seat_bonus_gold for every seat at once, 3 players, "
                               "under greedy: seat 2 ")
    assert lines[2].startswith("  confirmation: seat_bonus_gold = [0, ")
    assert "every seat's seat_bonus_gold, the first look" in printed.err
    path.write_text(json.dumps({**ALL, "balance": {**ALL["balance"], "seat": "every"}}))
    assert main(["balance", str(path)]) == 2
    assert "balance.seat" in capsys.readouterr().err


def test_the_api_answers_every_seat_in_the_background(ray_local, tmp_path):
    app = create_app(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"), run_worker=True)
    with TestClient(app) as client:
        for bad, field in (({"seat": "every"}, "balance.seat"),
                           ({"target": 0.3}, "balance.target")):
            got = client.post("/api/balance", json={**ALL, "balance": {**ALL["balance"],
                                                                        **bad}})
            assert got.status_code == 422 and got.json()["detail"][0]["field"] == field
        job = client.post("/api/balance", json=ALL)
        assert job.status_code == 202, job.text
        url = job.json()["url"]
        deadline = time.monotonic() + 180
        while (got := client.get(url).json())["status"] not in ("done", "failed"):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert got["status"] == "done", got
        assert got["result"]["cells"][0]["recommendation"]["sentence"].startswith(LEADS)
        [listed] = client.get("/api/balance").json()
        vector = got["result"]["cells"][0]["answer"]["vector"]
        assert listed["kind"] == "all_seats"
        assert listed["answers"][0]["short"] == f"seat_bonus_gold = {vector}"
        assert listed["answers"][0]["recommendation"].startswith(LEADS)
        report = client.get(url + "/report.html")
        assert report.status_code == 200 and "every seat at once" in report.text
        assert client.get(url + "/chart.svg").status_code == 409


def _rung(players, status, low, high):
    return {"status": status, "players": players, "low": low, "high": high}


def test_the_strength_sentence_is_decided_from_every_seats_intervals():
    """Per strength: two rungs apart on some seat move; every seat known to +-precision and
    overlapping holds; overlapping but wide is not decided yet (never 'inf' in the words)."""
    weak = _rung(3, "found", [0.8, 1.6], [1.6, 2.4])
    apart = _rung(3, "found", [0.9, 2.6], [1.7, 3.4])       # seat 3: 2.6 > 2.4
    near = _rung(3, "found", [1.0, 1.9], [1.8, 2.7])
    wide = _rung(3, "found", [0.2, 1.0], [2.0, 3.0])
    moves = sa.strength_verdict([("random", weak), ("greedy", apart)], 0.5)
    assert moves["verdict"] == "moves" and "seat 3's fair values under random and greedy" \
        in moves["sentence"] and moves["sentence"].startswith(
            "the compensation of every seat moves with strength")
    holds = sa.strength_verdict([("random", weak), ("greedy", near)], 0.5)
    assert holds["verdict"] == "holds" and "holds across strengths" in holds["sentence"]
    open_ = sa.strength_verdict([("random", weak), ("greedy", wide)], 0.5)
    assert open_["verdict"] == "undecided" and "greedy is not known to +-0.5" in \
        open_["sentence"]
    unsolved = sa.strength_verdict([("random", weak), ("greedy", _rung(3, "not_identified",
                                                                        [], []))], 0.5)
    assert unsolved["verdict"] == "undecided" and "greedy: not solved" in unsolved["sentence"]
    for said in (moves, holds, open_, unsolved):
        assert "inf" not in said["sentence"]


def test_every_seat_per_strength_answers_each_rung_then_the_strength(ray_local, tmp_path):
    """seat 'all' with balance.agents a list: one answer per rung (its arms named by the
    rung), then whether the values move with strength, in the CLI's lines and the page's
    and report's markup."""
    from services.report import balance_answers

    spec = ExperimentSpec.model_validate({**{k: v for k, v in ALL.items() if k != "agents"},
                                          "balance": {**ALL["balance"], "max_games": 500,
                                                      "confirm_games": 40,
                                                      "agents": ["random", "greedy"]}})
    result, _ = _answer(spec, tmp_path, "rungs")
    assert [c["rung"] for c in result["cells"]] == ["random", "greedy"]
    [said] = result["strength"]
    assert said["players"] == 3 and said["verdict"] in ("moves", "holds", "undecided")
    lines = answer_lines(result)
    assert lines[-1] == "3 players, per strength: " + said["sentence"]
    page = balance_answers(result)
    assert "class='rung'>under random" in page and f"data-verdict='{said['verdict']}'" in page
    assert any(unquote(p.name).endswith("@greedy") for p in (tmp_path / "rungs").iterdir())
