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
from core_cy.play.schema import facts_metadata
from pipelines.stats import benjamini_hochberg
from services.runner import run_experiment
from services.spec import ExperimentSpec

GAME = next(g for g in core_cy.game_names() if not core_cy.load(g).cooperative)  # a competitive game


def _write(root, arm: str, players: int, rows: list[dict], start: int = 0, game: str = GAME,
           facts: dict | None = None):
    """A results shard written by hand (the columns the pipelines read; `facts`: the game's
    facts in the schema metadata, as every shard written now carries them, else none, as in
    a dataset written before shards carried them)."""
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
        "game": [game] * n,
        "engine_version": [f"{game}-test"] * n,
        **({"deal": pa.array([r["deal"] for r in rows], pa.int64())}
           if rows and "deal" in rows[0] else {}),
    })
    if facts is not None:
        table = table.replace_schema_metadata(facts_metadata(
            {"game": game, "players": players, "cooperative": False,
             "safety_end_reasons": [], **facts}))
    pq.write_table(table, folder / f"shard-{start:012d}.parquet")


def _game(score, length=10, end="normal", agents=None):
    best = max(score)
    winners = [s == best for s in score]
    share = [1 / sum(winners) if w else 0.0 for w in winners]
    row = {"score": score, "share": share, "length": length, "end": end}
    if agents:
        row["agents"] = agents
    return row


def test_benjamini_hochberg_adjustment():
    assert benjamini_hochberg([0.01, 0.04, 0.03]).tolist() == pytest.approx([0.03, 0.04, 0.04])
    assert benjamini_hochberg([0.5, 0.9]).tolist() == pytest.approx([0.9, 0.9])
    out = benjamini_hochberg([np.nan, 0.02])
    assert np.isnan(out[0]) and out[1] == pytest.approx(0.02)


def test_scan_of_an_empty_experiment(tmp_path):
    with pytest.raises(FileNotFoundError):
        pipelines.scan(tmp_path)


def _shown_interval(shares):
    """The rate interval of tied shares computed here another way: on the effective count
    (x of m), Jeffreys' 95% (scipy's beta) from 10 wins and 10 losses; below, Blaker's 94%
    found by scanning rates 0-1 in steps of 1e-5 (its p-value: the observed binomial tail
    plus the largest tail no larger than it at counts x + k on the other side, the tails
    through scipy's incomplete beta, so fractional counts need no rounding)."""
    n, p, var = len(shares), np.mean(shares), np.var(shares)
    m = n * p * (1 - p) / var if 0 < p < 1 and var > 0 else n
    x = p * m
    if min(x, m - x) >= 10:
        return (stats.beta.ppf(0.025, x + 0.5, m - x + 0.5),
                stats.beta.ppf(0.975, x + 0.5, m - x + 0.5))
    from scipy.special import betainc

    rates = np.linspace(0, 1, 100_001)[:, None]

    def at_most(y):
        return 0.0 if y <= -1 else 1.0 if y >= m else 1 - betainc(y + 1, m - y, rates)

    def at_least(y):
        return 1.0 if y <= 0 else 0.0 if y >= m + 1 else betainc(y, m - y + 1, rates)

    low_tail, high_tail = at_most(x), at_least(x)
    above = np.hstack([np.broadcast_to(at_least(x + k), rates.shape) for k in range(1, 40)])
    below = np.hstack([np.broadcast_to(at_most(x - k), rates.shape) for k in range(1, 40)])
    opposite_above = np.where(above <= low_tail, above, 0).max(axis=1, keepdims=True)
    opposite_below = np.where(below <= high_tail, below, 0).max(axis=1, keepdims=True)
    p_value = np.where(low_tail <= high_tail, low_tail + opposite_above,
                       high_tail + opposite_below)
    accepted = rates[p_value[:, 0] > 0.06, 0]
    return accepted.min(), accepted.max()


def _hotelling_p(shares):
    """Hotelling's T^2 test that the first k-1 mean shares are 1/k (numpy + scipy.stats.f)."""
    n, k = shares.shape
    x = shares[:, :k - 1] - 1 / k
    t2 = n * x.mean(0) @ np.linalg.pinv(np.atleast_2d(np.cov(x, rowvar=False))) @ x.mean(0)
    f = (n - k + 1) / ((k - 1) * (n - 1)) * t2
    return stats.f.sf(f, k - 1, n - k + 1)


def _seat_t2(s):
    """Hotelling's T^2 of the seat contrasts (each seat's share less the game's mean)."""
    n, k = s.shape
    x = s[:, :k - 1] - s.mean(axis=1, keepdims=True)
    cov = np.atleast_2d(np.cov(x, rowvar=False))
    return n * x.mean(0) @ np.linalg.pinv(cov) @ x.mean(0)


def _rotation_p(shares, draws=1000):
    """Monte Carlo p-value of T^2 with every game's seats turned at random (own seed)."""
    rng = np.random.default_rng(3)
    observed = _seat_t2(shares)
    idx = np.arange(shares.shape[1])
    values = [_seat_t2(shares[np.arange(len(shares))[:, None],
                              (idx + rng.integers(0, shares.shape[1], (len(shares), 1)))
                              % shares.shape[1]]) for _ in range(draws)]
    return np.mean(np.array(values) >= observed * (1 - 1e-9))


def _exact_rotation_p(shares):
    """The exact p-value of Hotelling's T^2 on the seat contrasts over every rotation of the
    seats of every game (k^n of them: small n only)."""
    import itertools

    n, k = shares.shape

    def t2(s):
        x = s[:, :k - 1] - s.mean(axis=1, keepdims=True)
        cov = np.atleast_2d(np.cov(x, rowvar=False))
        return n * x.mean(0) @ np.linalg.pinv(cov) @ x.mean(0)

    observed = t2(shares)
    values = [t2(np.array([np.roll(row, r) for row, r in zip(shares, turn)]))
              for turn in itertools.product(range(k), repeat=n)]
    return np.mean(np.array(values) >= observed * (1 - 1e-9))


def test_hand_made_cell(tmp_path):
    games = [_game([5, 3], 10, "normal"), _game([2, 7], 20, "normal"),
             _game([4, 4], 30, "timeout"), _game([9, 1], 40, "normal")]
    _write(tmp_path, "a", 2, games)
    s = pipelines.summary(tmp_path)
    assert s["seat"].to_list() == [0, 1]
    assert s["games"].to_list() == [4, 4]
    assert s["wins"].to_list() == [2.5, 1.5]
    assert s["win_share"].to_list() == [0.625, 0.375]
    low, high = _shown_interval(np.array([1, 0, 0.5, 1]))
    assert s["win_lo"][0] == pytest.approx(low, abs=2e-5)
    assert s["win_hi"][0] == pytest.approx(high, abs=2e-5)
    scores0 = np.array([5, 2, 4, 9.0])
    assert s["score_mean"][0] == pytest.approx(scores0.mean())
    low, high = stats.t.interval(0.95, 3, scores0.mean(), stats.sem(scores0))
    assert (s["score_lo"][0], s["score_hi"][0]) == pytest.approx((low, high))
    assert s["small_n"].all()  # 4 games: flagged
    assert s["tie_rate"][0] == pytest.approx(0.25)
    assert s["margin_mean"][0] == pytest.approx((2 + 5 + 0 + 8) / 4)
    assert s["length_mean"][0] == pytest.approx(25)
    assert (s["length_p10"][0], s["length_p90"][0]) == (10, 40)
    assert s["length_p50"][0] in (20, 30)  # the nearest observed length to the median
    assert s["end_normal"][0] == pytest.approx(0.75) and s["end_timeout"][0] == 0.25
    shares = np.array([g["share"] for g in games])
    assert s["seat_p_value"][0] == pytest.approx(_exact_rotation_p(shares), abs=0.03)
    assert s["seat_p_adjusted"][0] == pytest.approx(s["seat_p_value"][0])  # one cell
    assert s["team_win_rate"].is_null().all()  # a competitive game has no team result
    assert s["agent"].to_list() == ["random", "random"]
    assert s["engine_version"][0] == f"{GAME}-test" and s["truncated"][0] == 0
    assert s["verdict"][0].startswith("Seat 1 wins 62.5%") and "undecided" in s["verdict"][0]


def test_truncated_games_are_left_out_and_counted(tmp_path):
    game = next(g for g in map(core_cy.load, core_cy.game_names())
                if g.safety_end_reasons and not g.cooperative)
    safety = game.safety_end_reasons[0]
    games = [_game([5, 3])] * 6 + [_game([0, 9], end=safety)] * 2
    _write(tmp_path, "a", 2, games, game=game.name)
    cell = pipelines.cell_summary(tmp_path).row(0, named=True)
    assert cell["games"] == 6 and cell["truncated"] == 2
    assert cell["truncated_share"] == pytest.approx(0.25)
    assert cell[f"end_{safety}"] == pytest.approx(0.25)  # still an end reason of all games
    assert "2 truncated games (25.0%) are left out" in cell["verdict"]
    assert pipelines.seat_summary(tmp_path)["win_share"].to_list() == [1.0, 0.0]
    counted = pipelines.seat_summary(tmp_path, include_truncated=True)
    assert counted["win_share"].to_list() == [0.75, 0.25]
    assert pipelines.results(tmp_path).collect().height == 6


def test_seat_test_is_stratified_by_rotated_agents(tmp_path):
    """A strong agent rotating through the seats: the pooled test would see its wins as
    noise; stratified by seating, the seats show no effect and the agents do."""
    rng = np.random.default_rng(3)
    rows = []
    for i in range(600):
        strong = i % 3
        agents = ["random"] * 3
        agents[strong] = "greedy"
        winner = strong if rng.random() < 0.7 else (strong + 1 + rng.integers(2)) % 3
        score = [0, 0, 0]
        score[winner] = 1
        rows.append(_game(score, agents=agents))
    _write(tmp_path, "a", 3, rows)
    cell = pipelines.cell_summary(tmp_path).row(0, named=True)
    shares = np.array([r["share"] for r in rows])
    strata = np.arange(600) % 3
    means = np.mean([shares[strata == s].mean(0) for s in range(3)], axis=0)
    assert pipelines.summary(tmp_path)["win_share"].to_numpy() == pytest.approx(means)
    assert cell["seat_p_value"] > 0.01
    agents = pipelines.agent_summary(tmp_path)
    greedy = agents.filter(agent="greedy").row(0, named=True)
    assert greedy["games"] == 600 and greedy["win_lo"] > 0.6


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


def test_cooperative_game_is_one_unit(tmp_path):
    """The facts of a game travel in its files (schema metadata): a game no catalogue knows
    whose files say it is cooperative has one team result per game."""
    rows = [{"score": [1, 1], "share": [1.0, 1.0]}] * 3 + [{"score": [0, 0],
                                                             "share": [0.0, 0.0]}]
    _write(tmp_path, "a", 2, rows, game="team-test", facts={"cooperative": True})
    _write(tmp_path, "b", 2, rows[::-1], game="team-test", facts={"cooperative": True})
    cells = pipelines.cell_summary(tmp_path)
    assert cells["team_win_rate"][0] == pytest.approx(0.75)
    low, high = _shown_interval(np.array([1, 1, 1, 0.0]))
    assert cells["team_win_lo"][0] == pytest.approx(low, abs=2e-5)
    assert cells["team_win_hi"][0] == pytest.approx(high, abs=2e-5)
    assert cells["seat_p_value"].is_null().all() and cells["tie_rate"].is_null().all()
    s = pipelines.summary(tmp_path)
    assert len(s) == 2 and s["seat"].is_null().all()  # one row per cell, not per seat
    assert s["verdict"][0].startswith("The team wins 75.0%")
    c = pipelines.compare(tmp_path, "a")
    assert len(c) == 1 and c["seat"][0] is None and c["pairs"][0] == 4  # one test
    assert c["win_share_diff"][0] == pytest.approx(0.0)
    assert "team win rate" in c["verdict"][0]
    per_agent = pipelines.breakdown(tmp_path, "seat_agent")
    assert per_agent["games"].to_list() == [4, 4]  # each game once, not once per seat


def test_agent_summary_and_rotated_seats(tmp_path):
    rows = [_game([3, 1], agents=["greedy", "random"]), _game([0, 2], agents=["random", "greedy"]),
            _game([1, 5], agents=["greedy", "random"]), _game([4, 0], agents=["random", "greedy"])]
    _write(tmp_path, "a", 2, rows)
    agents = pipelines.agent_summary(tmp_path)
    assert agents["agent"].to_list() == ["greedy", "random"]
    assert agents["games"].to_list() == [4, 4] and agents["seat_games"].to_list() == [4, 4]
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
    assert c["test"][0] == "sign+t"  # two differing pairs: the exact sign test (and t)
    p_t = stats.ttest_1samp(d, 0.0).pvalue
    assert c["win_p"][0] == pytest.approx(max(stats.binomtest(2, 2).pvalue, p_t))
    assert c["win_p"][1] == c["win_p"][0]  # every game has one winner: seat 1 mirrors seat 0
    # the interval matches its test: it holds 0 exactly when the p-value is above alpha
    assert (c["win_diff_lo"][0] <= 0 <= c["win_diff_hi"][0]) == (c["win_p_adjusted"][0] > 0.05)
    ds = np.array([0, 1, 0, 1, 1, 0.0])  # seat 0 score differences
    assert c["score_diff"][0] == pytest.approx(ds.mean())
    # two families: the win-share tests (which decide; seat 1's mirrors seat 0's and is
    # counted once) and the score tests
    assert c["win_p_adjusted"].to_list() == pytest.approx([c["win_p"][0]] * 2)
    assert c["score_p_adjusted"].to_list() == pytest.approx(
        benjamini_hochberg(c["score_p"].to_numpy()).tolist())
    level = 0.05 / 1  # no rejection among the 1 win test: the false-coverage level alpha / m
    # a sign-test row: Miettinen's test-based interval, the half-width at which t gives p
    crit = stats.t.ppf(1 - level / 2, 5)
    half = max(crit * d.std(ddof=1) / np.sqrt(6),
               crit * d.mean() / stats.t.isf(c["win_p"][0] / 2, 5))
    assert c["win_diff_lo"][0] == pytest.approx(d.mean() - half)
    assert c["interval_level"][0] == pytest.approx(1 - level)
    assert "Benjamini-Hochberg over 1 win-share test(s)" in c["p_adjust"][0]
    assert "Benjamini-Hochberg over 2 score test(s)" in c["p_adjust"][0]
    assert c["baseline"].to_list() == ["base", "base"]


def test_compare_identical_arms_is_exactly_null(tmp_path):
    games = [_game([1, 0]), _game([0, 1]), _game([3, 3])]
    _write(tmp_path, "x", 2, games)
    _write(tmp_path, "y", 2, games)
    c = pipelines.compare(tmp_path, "x")
    assert c["win_share_diff"].to_list() == [0.0, 0.0]
    assert c["win_p"].to_list() == [1.0, 1.0] and not c["win_significant"].any()
    assert not c["score_significant"].any()


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
        assert part["seat_p_value"][0] == pytest.approx(_rotation_p(shares), abs=0.07)
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
        level = 1 - part["interval_level"][0]
        half = stats.t.ppf(1 - level / 2, len(a) - 1) * diff.std(axis=0, ddof=1) / np.sqrt(len(a))
        assert part["score_diff_hi"].to_numpy() == pytest.approx(diff.mean(axis=0) + half)


def test_breakdown_gives_team_win_rates_per_adventurer_and_per_team(tmp_path):
    """Cooperative results carry adventurer names per seat (Game.outcome_labels)."""
    import pyarrow as pa
    from core_cy.play import batch

    game = core_cy.load("forbidden_desert")
    folder = tmp_path / "arm=novice" / "players=3"
    folder.mkdir(parents=True)
    rb = batch.play(game, 3, {"difficulty": "novice"}, "planner", seed=4, count=400,
                    arm="novice")
    pq.write_table(pa.Table.from_batches([rb]), folder / "shard.parquet")
    rows = rb.to_pylist()
    names = set(game.outcome_labels["adventurer"])
    per_adv = pipelines.breakdown(tmp_path, "seat_adventurer")
    assert set(per_adv["value"]) <= names and per_adv["games"].sum() == 3 * 400
    for r in per_adv.iter_rows(named=True):
        games = [g for g in rows if r["value"] in g["seat_adventurer"]]
        assert r["games"] == len(games)
        assert r["win_rate"] == pytest.approx(np.mean([g["seat_win_share"][0] for g in games]))
        assert r["win_lo"] - 1e-12 <= r["win_rate"] <= r["win_hi"] + 1e-12
    teams = pipelines.breakdown(tmp_path, "seat_adventurer", team=True)
    assert teams["games"].sum() == 400 and teams["game_share"].sum() == pytest.approx(1)
    some = teams.row(0, named=True)
    members = some["value"].split("+")
    assert len(members) == 3 and members == sorted(members)
    with pytest.raises(ValueError, match="no_such"):
        pipelines.breakdown(tmp_path, "no_such")


def _rotated_rows(rng, deals: int, safety: str | None = None) -> list[dict]:
    """3-seat games in deals of three rotations of (greedy, random, random): scores drawn
    with a per-deal bonus for seat 2 and a strong greedy agent; the last game of deal 1 ends
    by a simulator safety when `safety` is given."""
    rows = []
    for deal in range(deals):
        luck = rng.normal(0, 3, size=3)
        for rotation in range(3):
            agents = ["random"] * 3
            agents[(-rotation) % 3] = "greedy"
            score = (rng.integers(0, 10, size=3) + luck + 6 * np.array(
                [a == "greedy" for a in agents])).round().tolist()
            row = _game(score, agents=agents)
            row["deal"] = deal
            if safety and deal == 1 and rotation == 2:
                row["end"] = safety
            rows.append(row)
    return rows


def _deal_means(rows: list[dict], key: str) -> dict:
    out = {}
    for r in rows:
        out.setdefault(r["deal"], []).append(r[key])
    return {d: np.mean(v, axis=0) for d, v in out.items()}


def test_rotations_take_the_deal_as_the_unit(tmp_path):
    """pairing 'rotations': seat figures, the seat test, agent figures and comparisons use
    each complete deal's means over its rotations; a deal missing a game is left out."""
    rng = np.random.default_rng(12)
    a, b = _rotated_rows(rng, 40, "turn_limit"), _rotated_rows(rng, 40)  # maori's safety
    _write(tmp_path, "a", 3, a, game="maori")
    _write(tmp_path, "b", 3, b, game="maori")
    complete = [r for r in a if r["deal"] != 1]
    share = _deal_means(complete, "share")
    units = np.array([share[d] for d in sorted(share)])
    seats = pipelines.summary(tmp_path).filter(arm="a").sort("seat")
    assert seats["units"].to_list() == [39] * 3 and seats["games"].to_list() == [117] * 3
    assert seats["win_share"].to_numpy() == pytest.approx(units.mean(axis=0))
    low, high = _rate_interval(units)
    assert seats["win_lo"].to_numpy() == pytest.approx(low)
    assert seats["win_hi"].to_numpy() == pytest.approx(high)
    scores = np.array(list(_deal_means(complete, "score").values()))
    assert seats["score_sd"].to_numpy() == pytest.approx(scores.std(axis=0, ddof=1))
    cell = pipelines.cell_summary(tmp_path).filter(arm="a").row(0, named=True)
    assert cell["unit"] == "deal of 3 rotations" and cell["truncated"] == 1
    assert cell["seat_p_value"] == pytest.approx(_rotation_p(units), abs=0.07)
    assert "39 deals (3 rotations each)" in cell["verdict"]
    greedy = pipelines.agent_summary(tmp_path).filter(arm="a", agent="greedy").row(0, named=True)
    greedy_units = [np.mean([r["share"][r["agents"].index("greedy")] for r in complete
                             if r["deal"] == d]) for d in sorted(share)]
    assert greedy["games"] == 39 and greedy["win_share"] == pytest.approx(np.mean(greedy_units))
    diff = np.array([_deal_means(b, "share")[d] for d in sorted(share)]) - units
    c = pipelines.compare(tmp_path, "a").sort("seat")
    assert c["unit"].to_list() == ["deal"] * 3 and c["pairs"].to_list() == [39] * 3
    assert c["win_share_diff"].to_numpy() == pytest.approx(diff.mean(axis=0))
    assert "39 paired deals" in c["verdict"][0]


def _rate_interval(units: np.ndarray):
    from pipelines.stats import rate_interval
    return rate_interval(units.mean(axis=0), units.var(axis=0), len(units))


def test_rotated_deals_share_their_chance_and_are_shard_independent():
    """With games_per_deal = players the games of a deal are dealt alike (the adventurers,
    drawn at setup, are the same in all four), each agent sits in every seat once per deal,
    and the rows do not depend on where a shard starts."""
    from core_cy.play import batch

    game = core_cy.load("forbidden_desert")
    agents = ["search", "planner", "greedy", "random"]
    whole = batch.play(game, 4, None, agents, seed=8, count=16, rotate=True,
                       games_per_deal=4).to_pylist()
    assert [r["deal"] for r in whole] == [i // 4 for i in range(16)]
    dealt = {}
    for r in whole:
        dealt.setdefault(r["deal"], []).append(r)
    for games in dealt.values():
        assert len({tuple(g["seat_adventurer"]) for g in games}) == 1
        assert len({tuple(g["seat_agent"]) for g in games}) == 4  # four seatings
        for seat in range(4):
            assert {g["seat_agent"][seat] for g in games} == set(whole[0]["seat_agent"])
    assert len({tuple(g[0]["seat_adventurer"]) for g in dealt.values()}) > 1
    part = batch.play(game, 4, None, agents, seed=8, start=5, count=7, rotate=True,
                      games_per_deal=4).to_pylist()
    assert part == whole[5:12]


def test_rotations_experiment_is_the_same_whatever_the_shards(ray_local, tmp_path):
    g = core_cy.load(GAME)
    n = g.min_players
    rows = []
    for size, name in ((100, "small"), (300, "big")):
        spec = ExperimentSpec.model_validate(
            {"game": GAME, "players": n, "games_per_arm": 300, "shard_size": size, "seed": 2,
             "agents": ["greedy"] + ["random"] * (n - 1), "pairing": "rotations"})
        assert run_experiment(spec, str(tmp_path), name) == "done"
        table = pa.concat_tables(pq.read_table(p) for p in
                                 sorted((tmp_path / name).rglob("*.parquet")))
        rows.append(table.drop_columns(["experiment"]).sort_by("game_index").to_pylist())
    assert rows[0] == rows[1]
    assert [r["deal"] for r in rows[0]] == [i // n for i in range(300)]
    assert pipelines.cell_summary(tmp_path / "small")["units"].to_list() == [300 // n]


def test_games_without_a_winner_leave_equal_seats_balanced(tmp_path):
    """A Golden Island-like 3-player cell: equal seats, but 10% of the games have no winner
    (every share 0).  Judged among the seats (a fair share of 30%, not 1/3), the seats are
    not called unbalanced, and the no-winner share is reported."""
    rng = np.random.default_rng(8)
    rows = []
    for _ in range(300):
        share = [0.0, 0.0, 0.0]
        if rng.random() >= 0.1:
            share[int(rng.integers(0, 3))] = 1.0
        rows.append({"score": share, "share": share})
    _write(tmp_path, "a", 3, rows)
    cell = pipelines.cell_summary(tmp_path).row(0, named=True)
    nowin = np.mean([sum(r["share"]) == 0 for r in rows])
    assert cell["no_winner_share"] == pytest.approx(nowin)
    shares = np.array([r["share"] for r in rows])
    assert cell["seat_p_value"] == pytest.approx(_rotation_p(shares), abs=0.07)
    assert cell["seat_p_value"] > 0.05 and "unbalanced" not in cell["verdict"]
    assert f"against a fair {100 * shares.mean():.1f}%" in cell["verdict"]


def test_two_player_seats_have_their_own_tests(tmp_path):
    """Two players, some games without a winner: seat 1's difference is not seat 0's mirror,
    so each seat has its own p-value, and each interval matches its own test."""
    base = [{"score": [1, 0], "share": [1.0, 0.0]}, {"score": [0, 1], "share": [0.0, 1.0]}] * 20
    alt = [{"score": [1, 0], "share": [1.0, 0.0]}] * 20 + \
        [{"score": [0, 0], "share": [0.0, 0.0]}] * 20
    _write(tmp_path, "base", 2, base)
    _write(tmp_path, "alt", 2, alt)
    c = pipelines.compare(tmp_path, "base").sort("seat")
    assert c["win_share_diff"].to_list() == pytest.approx([0.0, -0.5])
    assert c["win_p"][0] != c["win_p"][1]
    for r in c.iter_rows(named=True):
        assert (r["win_diff_lo"] > 0 or r["win_diff_hi"] < 0) == (r["win_p_adjusted"] <= 0.05)
        assert r["win_significant"] == (r["win_p_adjusted"] <= 0.05)


def test_ratings_of_an_agent_that_always_wins_are_not_estimable(tmp_path):
    """Complete separation: 'strong' wins every game.  No Elo is printed for it (its maximum
    likelihood rating is infinite) and the others stay finite under the prior."""
    from pipelines import ladder

    rng = np.random.default_rng(4)
    rows = []
    for i in range(60):
        agents = ["strong", "weak", "middle"]
        agents = agents[i % 3:] + agents[:i % 3]
        score = [3.0 if a == "strong" else float(rng.integers(0, 3)) for a in agents]
        rows.append({**_game(score), "agents": agents})
    _write(tmp_path, "x", 3, rows)
    table = ladder.ratings(tmp_path)
    strong = table.filter(agent="strong").row(0, named=True)
    assert strong["elo"] is None and strong["note"] == "not estimable: strong won every comparison"
    others = table.filter(pl.col("agent") != "strong")
    assert others["elo"].abs().max() < 1000 and others["note"].is_null().all()
    assert set(others["reference"]) == {"middle"}  # the first agent of the estimable group


def _two_player_games(rng, strength: dict, pairs: list, count: int) -> list:
    """2-player games between the agents of each pair (both seatings), won with the
    Bradley-Terry probability of their strengths (logits)."""
    rows = []
    for x, y in pairs:
        for i in range(count):
            agents = [x, y] if i % 2 else [y, x]
            d = strength[agents[0]] - strength[agents[1]]
            first = rng.random() < 1 / (1 + np.exp(-d))
            rows.append(_game([1.0, 0.0] if first else [0.0, 1.0], agents=agents))
    return rows


def test_ratings_across_separated_groups_are_blank_and_the_reference_is_estimable(tmp_path):
    """'aa' (first by name) always beats the others, and the group (b, c, d) always beats
    (e, f), whose members beat each other: separation that no single agent shows.  Ratings
    are given within the largest group that is estimable together, relative to its first
    agent, and match the truth there; every other agent has no rating and a note."""
    from pipelines import ladder

    rng = np.random.default_rng(7)
    strength = {"aa": 0.0, "b": 0.0, "c": 0.7, "d": 1.4, "e": 0.0, "f": 0.5}
    rows = _two_player_games(rng, strength, [("b", "c"), ("b", "d"), ("c", "d"), ("e", "f")],
                             600)
    for x in ("b", "c", "d", "e", "f"):
        rows += [_game([1.0, 0.0], agents=["aa", x]), _game([0.0, 1.0], agents=[x, "aa"])] * 20
    for x in ("b", "c", "d"):
        for y in ("e", "f"):
            rows += [_game([1.0, 0.0], agents=[x, y]), _game([0.0, 1.0], agents=[y, x])] * 20
    _write(tmp_path, "x", 2, rows)
    table = ladder.ratings(tmp_path)
    rated = table.filter(pl.col("elo").is_not_null())
    assert sorted(rated["agent"]) == ["b", "c", "d"] and set(rated["reference"]) == {"b"}
    for r in rated.iter_rows(named=True):  # the truth inside the intervals
        truth = ladder.ELO_PER_LOGIT * strength[r["agent"]]
        assert r["elo_lo"] <= truth <= r["elo_hi"]
    notes = dict(zip(table["agent"], table["note"]))
    assert notes["aa"] == "not estimable: aa won every comparison"
    for x in ("e", "f"):
        assert notes[x].startswith("not estimable against b:")
    # 0 beat 1 in every game, 0 and 2 beat each other: {0, 2} and {1}
    groups = ladder.estimable_groups(3, np.array([0, 0]), np.array([1, 2]),
                                     np.array([10.0, 10.0]), np.array([10.0, 4.0]))
    assert groups[0] == groups[2] != groups[1]
