"""The strength ladder (spec option `ladder`) and head-to-head ratings (pipelines.ladder)."""
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pydantic import ValidationError

import core_cy
from core_cy.play import batch
from pipelines import ladder
from services.spec import ExperimentSpec, ladder_arm
from pipelines.folder import storage_table

RUNGS = ["random", "greedy", "mcts(iterations=20)"]


def _spec(**extra):
    return ExperimentSpec.model_validate({"game": "maori", "players": [2, 3],
                                          "arms": {"basic": {"mode": "basic"}},
                                          "ladder": RUNGS, **extra})


def test_a_ladder_plays_every_cell_once_per_rung_with_that_agent_in_every_seat():
    spec = _spec()
    cells = spec.cells()
    assert [c.arm for c in cells[:2]] == ["basic@random"] * 2
    assert len(cells) == 2 * len(RUNGS) == spec.cell_count()
    assert {c.agent for c in cells} == set(RUNGS)
    cell = cells[-1]
    assert cell.arm == ladder_arm("basic", "mcts(iterations=20)")
    assert spec.agent_list(cell.players, cell) == ["mcts(iterations=20)"] * cell.players
    assert ladder.split_arm(cell.arm) == ("basic", "mcts(iterations=20)")
    assert spec.baseline_arm() == "basic@mcts(iterations=20)"
    assert spec.result_arms() == [f"basic@{r}" for r in RUNGS]


@pytest.mark.parametrize("extra, loc, message", [
    ({"ladder": ["random"]}, ("ladder",), "at least two rungs"),
    ({"ladder": ["random", "mcts(depth=2)"]}, ("ladder", 1), "unknown parameter 'depth'"),
    ({"ladder": ["random", "random"]}, ("ladder",), "twice"),
    ({"agents": "greedy"}, ("ladder",), "leave agents"),
])
def test_bad_ladders_name_the_field(extra, loc, message):
    with pytest.raises(ValidationError) as err:
        _spec(**extra)
    [e] = [e for e in err.value.errors() if e["loc"][:len(loc)] == loc]
    assert message in e["msg"]


def _write(tmp_path, name, rows):
    path = tmp_path / name
    path.mkdir(exist_ok=True)
    pq.write_table(storage_table(rows), path / f"part-{len(list(path.iterdir()))}.parquet")
    return str(path)


def test_ladder_tables_and_the_stability_verdict(tmp_path):
    game = core_cy.load("maori")
    for rung in ("random", "greedy"):
        rows = batch.play(game, 2, None, rung, seed=4, count=300, arm=ladder_arm("a", rung))
        root = _write(tmp_path, "ladder", rows)
    seats = ladder.ladder_summary(root, ["random", "greedy"])
    assert seats["level"].to_list() == [0, 0, 1, 1] and seats["games"].to_list() == [300] * 4
    assert np.allclose(seats["advantage"].to_numpy()[:2].sum(), 0.0)
    assert (seats["win_lo"] <= seats["win_share"]).all()
    assert (seats["win_share"] <= seats["win_hi"]).all()
    [verdict] = ladder.ladder_verdicts(root, ["random", "greedy"]).iter_rows(named=True)
    assert (verdict["strongest"], verdict["second"]) == ("greedy", "random")
    assert verdict["stable"] == (abs(verdict["change"]) <= verdict["half_width"])


def test_an_unstable_verdict_is_reported(tmp_path):
    """Seat 0 wins every game at one rung and none at the other: not stable."""
    game = core_cy.load("maori")
    rows = storage_table(batch.play(game, 2, None, "random", seed=1, count=50, arm="a@weak"))
    for arm, first in (("a@weak", 1.0), ("a@strong", 0.0)):
        shares = pa.array([[first, 1 - first]] * 50, pa.list_(pa.float64()))
        table = rows.set_column(
            rows.schema.get_field_index("seat_win_share"), "seat_win_share", shares).set_column(
            rows.schema.get_field_index("arm"), "arm", pa.array([arm] * 50))
        pq.write_table(table, tmp_path / f"{arm}.parquet")
    [v] = ladder.ladder_verdicts(str(tmp_path), ["weak", "strong"]).iter_rows(named=True)
    assert not v["stable"] and abs(v["change"]) == pytest.approx(1.0)


def test_bradley_terry_ratings_order_the_agents(tmp_path):
    game = core_cy.load("maori")
    rows = batch.play(game, 3, None, ["random", "greedy", "mcts(iterations=20)"], seed=2,
                      count=90, rotate=True, arm="x")
    table = ladder.ratings(_write(tmp_path, "rated", rows))
    elo = dict(zip(table["agent"], table["elo"]))
    random, greedy = elo["random"], elo["greedy"]
    if random is None:  # random lost every comparison: no rating, a note instead
        note = table.filter(agent="random")["note"][0]
        assert note == "not estimable: random lost every comparison"
    else:
        assert greedy > random + 100
    assert (table["elo_lo"] <= table["elo"]).all() and (table["elo"] <= table["elo_hi"]).all()
    # Each of 90 games of 3 agents holds 3 pairs; each agent takes part in two of them.
    assert table["comparisons"].to_list() == [180, 180, 180]


def test_bradley_terry_recovers_known_strengths():
    """Synthetic comparisons drawn from known logits: the fit lands within its intervals."""
    rng = np.random.default_rng(0)
    truth = np.array([0.0, 0.5, 1.5])
    a, b = np.array([0, 0, 1]), np.array([1, 2, 2])
    games = np.full(3, 4000.0)
    p = 1 / (1 + np.exp(-(truth[a] - truth[b])))
    wins = rng.binomial(4000, p).astype(float)
    theta, se = ladder._bradley_terry(3, a, b, games, wins)
    assert np.all(np.abs(theta - truth) <= 3 * se + 1e-9)
    assert se[1] > 0 and se[0] == 0


def test_the_cli_prints_the_ladder_and_its_verdict(tmp_path):
    import io

    from services.cli import print_results

    spec = ExperimentSpec.model_validate({"game": "maori", "players": 2,
                                          "ladder": ["random", "greedy"], "games_per_arm": 100})
    game = core_cy.load("maori")
    for cell in spec.cells():
        rows = batch.play(game, 2, cell.rules, spec.agent_list(2, cell), seed=3, count=100,
                          arm=cell.arm)
        _write(tmp_path, "exp", rows)
    out = io.StringIO()
    print_results(str(tmp_path / "exp"), spec, out)
    text = out.getvalue()
    assert "== strength ladder ==" in text
    assert "default, 2 players: the seats' advantages are" in text
    assert "between random and greedy" in text
    assert "default, 2 players: the stronger rung" in text or \
        "default, 2 players: the weaker rung is undecided" in text
    assert "Each arm against default@greedy:" in text


def test_the_api_reports_the_ladder_and_rejects_a_bad_one(tmp_path):
    from fastapi.testclient import TestClient

    from services.app import create_app
    from service_support import wait_for

    app = create_app(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"))
    with TestClient(app) as client:
        bad = client.post("/api/experiments", json={"game": "maori", "players": 2,
                                                    "ladder": ["random", "mcts(depth=1)"]})
        assert bad.status_code == 422
        assert any(list(e["loc"][-2:]) == ["ladder", 1] for e in bad.json()["detail"]), \
            bad.json()
        response = client.post("/api/experiments", json={
            "game": "maori", "players": 2, "ladder": ["random", "greedy"],
            "games_per_arm": 100, "shard_size": 100})
        assert response.status_code == 201, response.text
        eid = response.json()["id"]
        assert wait_for(client, eid)["status"] == "done"
        got = client.get(f"/api/experiments/{eid}/ladder").json()
        assert got["rungs"] == ["random", "greedy"]
        assert len(got["seats"]) == 4 and len(got["verdicts"]) == 1
        assert got["verdicts"][0]["strongest"] == "greedy"
        assert client.get(f"/api/experiments/{eid}/ratings").json() == []


def _rung(arm, answer, best=0, shares=((0.5, 0.45, 0.55), (0.5, 0.45, 0.55))):
    cell = {"arm": arm, "players": 2, "seat_answer": answer, "best_seat": best,
            "fair_share": 0.5}
    seats = [{"arm": arm, "players": 2, "seat": k, "win_share": s, "win_lo": lo,
              "win_hi": hi} for k, (s, lo, hi) in enumerate(shares)]
    return cell, seats


@pytest.mark.parametrize("weak, strong, expected", [
    (("balanced",), ("balanced",), ladder.AGREES),
    (("balanced",), ("unbalanced", 1, ((0.4, 0.35, 0.45), (0.6, 0.55, 0.65))), ladder.REVERSES),
    (("balanced",), ("undecided",), ladder.STRONGER_UNDECIDED),
    # seat 1 favoured below; one rung up seat 2 tops the table but seat 1 is still above fair
    (("unbalanced", 0, ((0.6, 0.55, 0.65), (0.4, 0.35, 0.45))),
     ("unbalanced", 1, ((0.6, 0.52, 0.68), (0.62, 0.55, 0.69))), ladder.AGREES),
    (("unbalanced", 0, ((0.6, 0.55, 0.65), (0.4, 0.35, 0.45))),
     ("unbalanced", 1, ((0.5, 0.45, 0.55), (0.6, 0.55, 0.65))), ladder.REVERSES),
    (("unbalanced", 0, ((0.6, 0.55, 0.65), (0.4, 0.35, 0.45))), ("balanced",), ladder.REVERSES),
    # undecided one rung up, but the favoured seat's interval already lies below fair there
    (("unbalanced", 0, ((0.6, 0.55, 0.65), (0.4, 0.35, 0.45))),
     ("undecided", 1, ((0.44, 0.41, 0.47), (0.5, 0.4, 0.6))), ladder.REVERSES),
    (("undecided",), ("unbalanced",), ladder.WEAKER_UNDECIDED),
])
def test_whether_the_stronger_rung_agrees_is_read_from_answers_and_intervals(weak, strong,
                                                                           expected):
    (wc, ws), (sc, ss) = _rung("a@weak", *weak), _rung("a@strong", *strong)
    other_cell, other_seats = _rung("a@other", "balanced")  # not a rung: left out
    [row] = ladder.rung_agreement([wc, sc, other_cell], ws + ss + other_seats,
                                  ["weak", "strong"])
    assert (row["base"], row["weaker"], row["stronger"]) == ("a", "weak", "strong")
    assert row["agreement"] == expected
    assert (row["stronger_seat"] is None) == (weak[0] != "unbalanced")
