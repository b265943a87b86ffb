"""pipelines: summaries and comparisons checked against independent numpy/scipy arithmetic,
on hand-made datasets with known answers and on a real (small) experiment."""
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from ray_support import ray_local  # noqa: F401  (session fixture)
from scipy import stats

import core_cy
import pipelines
from pipelines.stats import holm, wilson_interval
from services.runner import run_experiment
from services.spec import ExperimentSpec

GAME = next(g for g in core_cy.games() if not core_cy.load(g).cooperative)  # a competitive game
Z = 1.959963984540054


def _write(root, arm: str, players: int, rows: list[dict], start: int = 0):
    """A results shard written by hand (the columns the pipelines read)."""
    folder = root / f"arm={arm}" / f"players={players}"
    folder.mkdir(parents=True, exist_ok=True)
    n = len(rows)
    table = pa.table({
        "experiment": ["t"] * n, "arm": [arm] * n,
        "game_index": pa.array([start + i for i in range(n)], pa.int64()),
        "players": pa.array([players] * n, pa.int8()),
        "seat_agent": pa.array([r.get("agents", ["random"] * players) for r in rows],
                               pa.list_(pa.string())),
        "seat_score": pa.array([r["score"] for r in rows], pa.list_(pa.float64())),
        "seat_win_share": pa.array([r["share"] for r in rows], pa.list_(pa.float64())),
        "num_winners": pa.array([sum(s > 0 for s in r["share"]) for r in rows], pa.int8()),
        "length": pa.array([r.get("length", 10) for r in rows], pa.int32()),
        "end_reason": [r.get("end", "normal") for r in rows],
        "game": [GAME] * n,
    })
    pq.write_table(table, folder / f"shard-{start:012d}.parquet")


def _game(score, length=10, end="normal", agents=None):
    best = max(score)
    winners = [s == best for s in score]
    share = [1 / sum(winners) if w else 0.0 for w in winners]
    row = {"score": score, "share": share, "length": length, "end": end}
    if agents:
        row["agents"] = agents
    return row


def test_wilson_known_values():
    low, high = wilson_interval(0.5, 100)
    assert (round(low, 4), round(high, 4)) == (0.4038, 0.5962)
    low, high = wilson_interval(0.0, 10)
    assert low == pytest.approx(0.0, abs=1e-12) and round(high, 4) == 0.2775


def test_holm_adjustment():
    assert holm([0.01, 0.04, 0.03]).tolist() == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]).tolist() == pytest.approx([1.0, 1.0])
    out = holm([np.nan, 0.02])
    assert np.isnan(out[0]) and out[1] == pytest.approx(0.02)


def test_scan_of_an_empty_experiment(tmp_path):
    with pytest.raises(FileNotFoundError):
        pipelines.scan(tmp_path)


def test_hand_made_cell(tmp_path):
    games = [_game([5, 3], 10, "normal"), _game([2, 7], 20, "normal"),
             _game([4, 4], 30, "timeout"), _game([9, 1], 40, "normal")]
    _write(tmp_path, "a", 2, games)
    s = pipelines.summary(tmp_path)
    assert s["seat"].to_list() == [0, 1]
    assert s["games"].to_list() == [4, 4]
    assert s["wins"].to_list() == [2.5, 1.5]
    assert s["win_share"].to_list() == [0.625, 0.375]
    low, high = wilson_interval(0.625, 4)
    assert s["win_lo"][0] == pytest.approx(low) and s["win_hi"][0] == pytest.approx(high)
    scores0 = np.array([5, 2, 4, 9.0])
    assert s["score_mean"][0] == pytest.approx(scores0.mean())
    half = Z * scores0.std(ddof=1) / 2
    assert s["score_lo"][0] == pytest.approx(scores0.mean() - half)
    assert s["tie_rate"][0] == pytest.approx(0.25)
    assert s["margin_mean"][0] == pytest.approx((2 + 5 + 0 + 8) / 4)
    assert s["length_mean"][0] == pytest.approx(25)
    assert (s["length_p10"][0], s["length_p90"][0]) == (10, 40)
    assert s["length_p50"][0] in (20, 30)  # the nearest observed length to the median
    assert s["end_normal"][0] == pytest.approx(0.75) and s["end_timeout"][0] == 0.25
    chi2, p = stats.chisquare([2.5, 1.5])
    assert s["seat_chi2"][0] == pytest.approx(chi2) and s["seat_p_value"][0] == pytest.approx(p)
    assert s["team_win_rate"].is_null().all()  # a competitive game has no team result
    assert s["agent"].to_list() == ["random", "random"]


def test_cells_are_separate_and_end_reasons_fill_zero(tmp_path):
    _write(tmp_path, "a", 2, [_game([1, 0], end="x")] * 3)
    _write(tmp_path, "a", 3, [_game([0, 1, 0], end="y")] * 2)
    _write(tmp_path, "b", 2, [_game([0, 1], end="y")] * 5)
    cells = pipelines.cell_summary(tmp_path)
    assert cells.select("arm", "players", "games").rows() == [("a", 2, 3), ("a", 3, 2),
                                                              ("b", 2, 5)]
    assert cells["end_x"].to_list() == [1.0, 0.0, 0.0]
    assert cells["end_y"].to_list() == [0.0, 1.0, 1.0]
    reasons = pipelines.end_reasons(tmp_path)
    assert reasons.filter(arm="a", players=2)["share"].to_list() == [1.0]
    s = pipelines.summary(tmp_path)
    assert len(s) == 2 + 3 + 2
    assert s.filter(arm="a", players=3)["win_share"].to_list() == [0.0, 1.0, 0.0]


def test_cooperative_team_win_rate(tmp_path, monkeypatch):
    monkeypatch.setattr(pipelines, "_is_cooperative", lambda games: True)
    rows = [{"score": [1, 1], "share": [1.0, 1.0]}] * 3 + [{"score": [0, 0],
                                                             "share": [0.0, 0.0]}]
    _write(tmp_path, "a", 2, rows)
    cells = pipelines.cell_summary(tmp_path)
    assert cells["team_win_rate"][0] == pytest.approx(0.75)
    low, high = wilson_interval(0.75, 4)
    assert cells["team_win_lo"][0] == pytest.approx(low)
    assert cells["team_win_hi"][0] == pytest.approx(high)
    assert cells["seat_p_value"].is_null().all()


def test_agent_summary_and_rotated_seats(tmp_path):
    rows = [_game([3, 1], agents=["greedy", "random"]), _game([0, 2], agents=["random", "greedy"]),
            _game([1, 5], agents=["greedy", "random"]), _game([4, 0], agents=["random", "greedy"])]
    _write(tmp_path, "a", 2, rows)
    agents = pipelines.agent_summary(tmp_path)
    assert agents["agent"].to_list() == ["greedy", "random"]
    assert agents["seat_games"].to_list() == [4, 4]
    assert agents["win_share"].to_list() == [0.5, 0.5]
    assert agents["score_mean"].to_list() == [(3 + 2 + 1 + 0) / 4, (1 + 0 + 5 + 4) / 4]
    assert pipelines.summary(tmp_path)["agent"].to_list() == ["rotated", "rotated"]


def test_compare_pairs_games_by_index(tmp_path):
    base = [_game([1, 0]), _game([0, 1]), _game([1, 0]), _game([0, 1]), _game([2, 0]),
            _game([0, 2])]
    other = [_game([1, 0]), _game([1, 0]), _game([1, 0]), _game([1, 0]), _game([3, 0]),
             _game([0, 2])]
    _write(tmp_path, "base", 2, base)
    _write(tmp_path, "alt", 2, other[:3])
    _write(tmp_path, "alt", 2, other[3:], start=3)  # two shards: pairing is by game_index
    c = pipelines.compare(tmp_path, "base")
    assert c["arm"].to_list() == ["alt", "alt"] and c["seat"].to_list() == [0, 1]
    assert c["pairs"].to_list() == [6, 6]
    d = np.array([0, 1, 0, 1, 0, 0.0])  # seat 0 share differences, game by game
    assert c["win_share_diff"][0] == pytest.approx(d.mean())
    se = d.std(ddof=1) / np.sqrt(6)
    assert c["win_diff_lo"][0] == pytest.approx(d.mean() - Z * se)
    assert c["win_p"][0] == pytest.approx(2 * stats.norm.sf(d.mean() / se))
    ds = np.array([0, 1, 0, 1, 1, 0.0])  # seat 0 score differences
    assert c["score_diff"][0] == pytest.approx(ds.mean())
    p_all = np.concatenate([c["win_p"].to_numpy(), c["score_p"].to_numpy()])
    assert np.concatenate([c["win_p_holm"].to_numpy(), c["score_p_holm"].to_numpy()]) == \
        pytest.approx(holm(p_all))
    assert c["baseline"].to_list() == ["base", "base"]


def test_compare_identical_arms_is_exactly_null(tmp_path):
    games = [_game([1, 0]), _game([0, 1]), _game([3, 3])]
    _write(tmp_path, "x", 2, games)
    _write(tmp_path, "y", 2, games)
    c = pipelines.compare(tmp_path, "x")
    assert c["win_share_diff"].to_list() == [0.0, 0.0]
    assert c["win_p"].to_list() == [1.0, 1.0] and not c["significant"].any()


def test_compare_unknown_baseline(tmp_path):
    _write(tmp_path, "x", 2, [_game([1, 0])])
    with pytest.raises(ValueError, match="'x'"):
        pipelines.compare(tmp_path, "nope")


@pytest.fixture(scope="module")
def experiment(ray_local, tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    g = core_cy.load(GAME)
    opt = next(o for o in g.options if o.kind == "enum" and len(o.choices) > 1)
    spec = ExperimentSpec.model_validate(
        {"game": GAME, "players": [g.min_players, g.min_players + 1], "games_per_arm": 600,
         "shard_size": 200, "seed": 5,
         "arms": {"a": {opt.name: opt.choices[0]}, "b": {opt.name: opt.choices[1]}}})
    assert run_experiment(spec, str(root), "exp") == "done"
    table = pa.concat_tables(pq.read_table(p) for p in sorted((root / "exp").rglob("*.parquet")))
    return root / "exp", table.to_pylist()


def test_summary_of_a_real_experiment_matches_numpy(experiment):
    path, rows = experiment
    s = pipelines.summary(path)
    for (arm, players), group in _cells(rows).items():
        shares = np.array([r["seat_win_share"] for r in group])
        scores = np.array([r["seat_score"] for r in group])
        part = s.filter(arm=arm, players=players).sort("seat")
        assert part["games"].to_list() == [len(group)] * players
        assert part["win_share"].to_numpy() == pytest.approx(shares.mean(axis=0))
        assert part["score_mean"].to_numpy() == pytest.approx(scores.mean(axis=0))
        assert part["score_sd"].to_numpy() == pytest.approx(scores.std(axis=0, ddof=1))
        assert part["tie_rate"][0] == pytest.approx(np.mean([r["num_winners"] > 1
                                                             for r in group]))
        top2 = -np.sort(-scores, axis=1)[:, :2]
        assert part["margin_mean"][0] == pytest.approx((top2[:, 0] - top2[:, 1]).mean())
        lengths = np.array([r["length"] for r in group])
        assert part["length_p50"][0] in set(lengths.tolist())
        assert part["length_mean"][0] == pytest.approx(lengths.mean())
        assert part["seat_chi2"][0] == pytest.approx(stats.chisquare(shares.sum(axis=0))[0])
        ends = part.select(pl.col("^end_.*$")).row(0)
        assert sum(ends) == pytest.approx(1.0)


def _cells(rows):
    out = {}
    for r in rows:
        out.setdefault((r["arm"], r["players"]), []).append(r)
    return out


def test_compare_on_a_real_experiment_is_paired(experiment):
    path, rows = experiment
    c = pipelines.compare(path, "a")
    assert set(c["arm"]) == {"b"}
    cells = _cells(rows)
    for players in {r["players"] for r in rows}:
        a = sorted(cells[("a", players)], key=lambda r: r["game_index"])
        b = sorted(cells[("b", players)], key=lambda r: r["game_index"])
        diff = np.array([rb["seat_score"] for rb in b]) - np.array([ra["seat_score"] for ra in a])
        part = c.filter(players=players).sort("seat")
        assert part["pairs"].to_list() == [len(a)] * players
        assert part["score_diff"].to_numpy() == pytest.approx(diff.mean(axis=0))
        half = Z * diff.std(axis=0, ddof=1) / np.sqrt(len(a))
        assert part["score_diff_hi"].to_numpy() == pytest.approx(diff.mean(axis=0) + half)


def test_breakdown_gives_team_win_rates_per_adventurer_and_per_team(tmp_path):
    """Cooperative results carry adventurer names per seat (Game.outcome_labels)."""
    import pyarrow as pa
    from core_cy import batch

    game = core_cy.load("forbidden_desert")
    folder = tmp_path / "arm=novice" / "players=3"
    folder.mkdir(parents=True)
    rb = batch.play(game, 3, {"difficulty": "novice"}, "planner", seed=4, count=400,
                    arm="novice")
    pq.write_table(pa.Table.from_batches([rb]), folder / "shard.parquet")
    rows = rb.to_pylist()
    names = set(game.outcome_labels["adventurer"])
    per_adv = pipelines.breakdown(tmp_path, "seat_adventurer")
    assert set(per_adv["value"]) <= names and per_adv["rows"].sum() == 3 * 400
    for r in per_adv.iter_rows(named=True):
        games = [g for g in rows if r["value"] in g["seat_adventurer"]]
        assert r["rows"] == len(games)
        assert r["win_rate"] == pytest.approx(np.mean([g["seat_win_share"][0] for g in games]))
        assert r["win_lo"] - 1e-12 <= r["win_rate"] <= r["win_hi"] + 1e-12
    teams = pipelines.breakdown(tmp_path, "seat_adventurer", team=True)
    assert teams["rows"].sum() == 400 and teams["row_share"].sum() == pytest.approx(1)
    some = teams.row(0, named=True)
    members = some["value"].split("+")
    assert len(members) == 3 and members == sorted(members)
    with pytest.raises(ValueError, match="no_such"):
        pipelines.breakdown(tmp_path, "no_such")
