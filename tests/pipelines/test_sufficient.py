"""The figures from the shards' statistics tables (pipelines.sufficient) are the figures of
the rows read whole, to the last digit: on random datasets of every game (real rows from the
engines), with resumed runs (shards without tables, temporary files left), replayed shards
(a table older than its shard), and damaged tables and shards."""
import functools
import os

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import core_cy
import pipelines
from core_cy.play import batch
from pipelines import paired, shard_tables, sufficient
from pipelines import dataset
from pipelines.dataset import verify
from pipelines.figures import Look
from pipelines.summaries import summary
from pipelines.folder import (PAIRS_DIR, filesystem, stats_path, write_manifest, write_shard,
                              write_statistics)

GAMES = core_cy.game_names()
POOL = 48  # games per (game, players, pairing, arm) in the pool the datasets are cut from


@functools.lru_cache(maxsize=None)
def _pool(game: str, players: int, rotations: bool, arm: str) -> pa.Table:
    """Real rows of `game` (random agents; arm 'b' on another seed), with their facts."""
    engine = core_cy.load(game)
    options = {"rotate": True, "games_per_deal": players} if rotations else {}
    return pa.Table.from_batches([batch.play(
        engine, players, seed=7 if arm == "a" else 8, start=0, count=POOL, experiment="t",
        arm=arm, **options)])


def _cut_short(rows: pa.Table, game: str, mask: list[bool]) -> pa.Table:
    """Rows whose games in `mask` ended at the game's safety (truncated games)."""
    reason = core_cy.load(game).safety_end_reasons[0]
    ends = [reason if cut else end for cut, end in
            zip(mask, rows.column("end_reason").to_pylist())]
    i = rows.schema.get_field_index("end_reason")
    return rows.set_column(i, "end_reason", pa.array(ends, pa.string()))


def _flip(path: str, where: float) -> None:
    """A byte of the file changed, as a disk's fault would: its time of writing kept."""
    stamp = os.stat(path).st_mtime_ns
    data = bytearray(open(path, "rb").read())
    data[min(int(where * len(data)), len(data) - 1)] ^= 0x5A
    open(path, "wb").write(bytes(data))
    os.utime(path, ns=(stamp, stamp))


def _figures(path, stats) -> list[pl.DataFrame]:
    """Every figure of the summary the page shows: fixed-n and interim, truncated games left
    out and counted, and the end reasons."""
    looks = [Look(), Look(interim=True, planned_games=5000, delta=0.05)]
    return [summary(path, truncated, look, stats=stats) for look in looks
            for truncated in (False, True)] + [sufficient.end_reason_frame(stats)]


LOOKS = [Look(), Look(interim=True, planned_games=5000, delta=0.05)]
# every breakdown kind: the labels the tables hold (a seat's, a team's, a game's) and
# numbers computed from the rows (a game's, a team of seat values)
BREAKDOWNS = [("seat_agent", False), ("seat_agent", True), ("end_reason", False),
              ("length", False), ("seat_score", True)]


def _paired_figures(path, stats, pairs) -> list[pl.DataFrame]:
    """Every comparison figure (each arm against arm 'a'), fixed-n and interim, truncated
    games left out and counted."""
    return [pipelines.compare(path, "a", truncated, look, stats=stats, pairs=pairs)
            for look in LOOKS for truncated in (False, True)]


def _breakdown_figures(path, by, team, stats) -> list[pl.DataFrame]:
    """The breakdown by `by` (agent_summary for the seats' agents), fixed-n and interim,
    truncated games left out and counted."""
    if (by, team) == ("seat_agent", False):
        return [pipelines.agent_summary(path, truncated, look, stats=stats)
                for look in LOOKS for truncated in (False, True)]
    return [pipelines.breakdown(path, by, team, truncated, look, stats=stats)
            for look in LOOKS for truncated in (False, True)]


def _reference(root) -> dict:
    """Every figure from all rows read whole (no stored table, no shard boundary)."""
    stats = sufficient.statistics_from_rows(root)
    out = {"summary": _figures(root, stats),
           "compare": _paired_figures(root, stats, paired.pairs_from_rows(root, "a", stats))}
    for by, team in BREAKDOWNS:
        rows = sufficient.statistics_from_rows(root, [(by, team)])
        out[by, team] = _breakdown_figures(root, by, team, rows)
    return out


def _same(mine: list[pl.DataFrame], theirs: list[pl.DataFrame]) -> None:
    for a, b in zip(mine, theirs, strict=True):
        assert_frame_equal(a, b, check_exact=True)


def _forget():
    """A new process: nothing read before is remembered."""
    sufficient._TABLES.clear()
    sufficient._MERGED.clear()
    sufficient._VALUES.clear()
    paired._PAIRS.clear()
    paired._MERGED.clear()
    paired._SPANS.clear()
    dataset._VERDICTS.clear()


@st.composite
def datasets(draw):
    game = draw(st.sampled_from(GAMES))
    engine = core_cy.load(game)
    players = draw(st.integers(engine.min_players, min(engine.max_players, 4)))
    rotations = draw(st.booleans())
    per = players if rotations else 1
    arms = draw(st.sampled_from([["a"], ["a", "b"]]))
    cells = []
    for arm in arms:
        games = per * draw(st.integers(1, POOL // per))
        size = per * draw(st.integers(1, max(games // per, 1)))
        cut = draw(st.lists(st.booleans(), min_size=games, max_size=games))
        fates = draw(st.lists(st.sampled_from(["table", "table", "none", "damaged table",
                                               "replayed", "damaged shard"]),
                              min_size=-(-games // size), max_size=-(-games // size)))
        cells.append((arm, games, size, cut, fates, draw(st.floats(0, 1))))
    return game, players, rotations, cells


def _damage(fates) -> None:
    for path, fate, where in fates:
        if fate == "damaged table":
            _flip(stats_path(path), where)
        elif fate == "replayed":  # written again after its table (identical rows)
            stamp = os.stat(stats_path(path)).st_mtime_ns
            os.utime(path, ns=(stamp + 10**9, stamp + 10**9))
        elif fate == "damaged shard":  # its sound table stands for it
            _flip(path, 0.5)


def _rows_figures(root, stats, reference, damaged: list[str]) -> None:
    """The figures that need rows where no table holds them (pairs not stored yet,
    breakdowns by numbers) are the reference's, or a damaged shard is named."""
    needs_rows = [("compare", lambda: _paired_figures(root, stats, None))] + [
        ((by, team), lambda by=by, team=team: _breakdown_figures(root, by, team, None))
        for by, team in BREAKDOWNS]
    for name, figures in needs_rows:
        try:
            mine = figures()
        except sufficient.DamagedShard as e:
            assert damaged and any(d in str(e) for d in damaged), str(e)
            assert name not in STORED, "a breakdown the tables hold read the rows"
            continue
        _same(mine, reference[name])


STORED = [("seat_agent", False), ("seat_agent", True), ("end_reason", False)]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large])
@given(datasets(), st.booleans())
def test_figures_from_the_tables_are_the_figures_of_the_rows(tmp_path_factory, dataset,
                                                             looked):
    game, players, rotations, cells = dataset
    root = str(tmp_path_factory.mktemp("data"))
    fs, base = filesystem(root)
    fates = []
    for arm, games, size, cut, shard_fates, where in cells:
        rows = _cut_short(_pool(game, players, rotations, arm).slice(0, games), game, cut)
        for (start, fate) in zip(range(0, games, size), shard_fates):
            part = rows.slice(start, size)
            entry = write_shard(part, fs, base, start, part.num_rows)
            if fate != "none":  # a shard written before shards had tables, or a cut run
                write_statistics(part, fs, base, entry)
            fates.append((os.path.join(base, entry["path"]), fate, where))
    leftover = os.path.join(os.path.dirname(fates[0][0]), ".shard-x.parquet.stats.1.tmp")
    open(leftover, "wb").write(b"a write a kill cut short")  # resumed: never read
    _forget()
    reference = _reference(root)
    if looked:  # a comparison looked at before: its pair tables are stored
        _same(_paired_figures(root, None, None), reference["compare"])
    _damage(fates)
    damaged = [os.path.relpath(p, base) for p, fate, _ in fates if fate == "damaged shard"]
    _forget()
    stats = sufficient.statistics(root)
    _same(_figures(root, stats), reference["summary"])
    _rows_figures(root, stats, reference, damaged)
    _forget()  # and the same when the tables are merged look by look (incrementally)
    shards = sorted(p for p, *_ in fates)
    for count in range(1, len(shards)):
        hidden = [p + ".hidden" for p in shards[count:]]
        for p, h in zip(shards[count:], hidden):
            os.rename(p, h)
        try:
            pipelines.compare(root, "a", look=LOOKS[1])
        except sufficient.DamagedShard:
            assert damaged
        for p, h in zip(shards[count:], hidden):
            os.rename(h, p)
    stats = sufficient.statistics(root)
    _same(_figures(root, stats), reference["summary"])
    _rows_figures(root, stats, reference, damaged)


def _write_cell(root, rows: pa.Table, size: int, tables: bool = True) -> list[str]:
    fs, base = filesystem(str(root))
    paths = []
    for start in range(0, rows.num_rows, size):
        part = rows.slice(start, size)
        entry = write_shard(part, fs, base, start, part.num_rows)
        if tables:
            write_statistics(part, fs, base, entry)
        paths.append(os.path.join(base, entry["path"]))
    return paths


def test_the_figures_match_independent_arithmetic_on_the_rows(tmp_path):
    """The sums give the means, spreads and rates numpy gives from the rows."""
    rows = _pool("maori", 3, False, "a")
    _write_cell(tmp_path, rows, 10)
    _forget()
    table = pipelines.summary(tmp_path)
    shares = np.array(rows.column("seat_win_share").to_pylist())
    scores = np.array(rows.column("seat_score").to_pylist())
    np.testing.assert_allclose(table["win_share"], shares.mean(axis=0), rtol=1e-14)
    np.testing.assert_allclose(table["share_var"], shares.var(axis=0), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(table["score_mean"], scores.mean(axis=0), rtol=1e-14)
    np.testing.assert_allclose(table["score_sd"], scores.std(axis=0, ddof=1), rtol=1e-12)
    lengths = np.array(rows.column("length").to_pylist())
    assert table["length_mean"][0] == pytest.approx(lengths.mean(), rel=1e-14)
    assert table["length_p50"][0] == pl.Series(lengths).quantile(0.5, "nearest")
    top = np.sort(scores, axis=1)
    assert table["margin_mean"][0] == pytest.approx((top[:, -1] - top[:, -2]).mean())


def test_a_damaged_shard_without_a_sound_table_is_named(tmp_path):
    paths = _write_cell(tmp_path, _pool("reef_encounter", 2, False, "a"), 16)
    _flip(paths[1], 0.1)  # a data page: its checksum fails
    _flip(stats_path(paths[1]), 0.5)
    _forget()
    with pytest.raises(pipelines.DamagedShard, match="players=2/shard-000000000016.parquet"):
        pipelines.summary(tmp_path)


def test_a_table_of_other_bytes_is_never_taken_for_the_shards(tmp_path):
    """A table left beside a shard of the same name but other rows (stale) is not read."""
    rows = _pool("mondo", 2, False, "a")
    paths = _write_cell(tmp_path, rows.slice(0, 20), 20)
    old_table = open(stats_path(paths[0]), "rb").read()
    _write_cell(tmp_path, rows.slice(20, 20), 20, tables=False)
    open(stats_path(paths[0]), "wb").write(old_table)
    _forget()
    shares = np.array(rows.slice(20, 20).column("seat_win_share").to_pylist())
    np.testing.assert_allclose(pipelines.summary(tmp_path)["win_share"], shares.mean(axis=0))


def test_a_shards_table_is_read_instead_of_its_rows(tmp_path, monkeypatch):
    paths = _write_cell(tmp_path, _pool("golden_island", 3, False, "a"), 12)
    _forget()
    monkeypatch.setattr(sufficient, "_from_rows", lambda *a: pytest.fail("rows were read"))
    assert pipelines.summary(tmp_path)["games"][0] == POOL
    assert len(sufficient._TABLES) == len(paths)


def test_scores_and_shares_off_the_integer_grid_are_refused():
    rows = _pool("maori", 2, False, "a").slice(0, 2)
    i = rows.schema.get_field_index("seat_score")
    odd = rows.set_column(i, "seat_score", pa.array([[0.5, 1.0], [1.0, 2.0]],
                                                    pa.list_(pa.float64())))
    with pytest.raises(ValueError, match="a score 0.5 is not a multiple of 1/1:"):
        shard_tables.shard_table(odd)


def test_the_manifest_covers_the_tables(tmp_path):
    """A finished experiment's manifest holds each shard's table too: a table damaged after
    the run names its shard (not counted), it never changes a figure silently."""
    rows = _pool("maori", 2, False, "a")
    fs, base = filesystem(str(tmp_path))
    entries = []
    for start in (0, 24):
        part = rows.slice(start, 24)
        entry = write_shard(part, fs, base, start, 24)
        entries.append({**entry, "statistics": write_statistics(part, fs, base, entry)})
    write_manifest(str(tmp_path), entries, "t", 7)
    _forget()
    assert pipelines.summary(tmp_path)["games"][0] == 48
    _flip(stats_path(os.path.join(base, entries[1]["path"])), 0.5)
    _forget()
    assert [d.path for d in verify(str(tmp_path)).damaged] == [entries[1]["path"]]
    shares = np.array(rows.slice(0, 24).column("seat_win_share").to_pylist())
    table = pipelines.summary(tmp_path)
    assert table["games"][0] == 24
    np.testing.assert_allclose(table["win_share"], shares.mean(axis=0))


def _two_arms(root, game="maori", players=3, sizes=(12, 12)) -> list[str]:
    paths = []
    for arm, size in zip("ab", sizes):
        paths += _write_cell(root, _pool(game, players, False, arm), size)
    return paths


def _pair_files(root) -> list[str]:
    folder = os.path.join(root, PAIRS_DIR)
    return sorted(os.path.join(folder, f) for f in os.listdir(folder)) if \
        os.path.isdir(folder) else []


def test_a_comparison_reads_its_stored_pair_tables_instead_of_rows(tmp_path, monkeypatch):
    """The pair tables are computed once (one per pair of same-start shards) and stored; a
    new process reads them, not the shards' rows, and gets the same figures."""
    _two_arms(tmp_path)
    _forget()
    first = pipelines.compare(tmp_path, "a")
    assert len(_pair_files(tmp_path)) == POOL // 12
    _forget()
    monkeypatch.setattr(sufficient, "_read_rows", lambda *a: pytest.fail("rows were read"))
    assert_frame_equal(pipelines.compare(tmp_path, "a"), first, check_exact=True)


def test_misaligned_shards_pair_every_game_once(tmp_path):
    """Shards of other sizes in the two arms: each game pairs with the baseline's game of
    its index in whichever shard holds it, once."""
    _two_arms(tmp_path, sizes=(12, 7))
    _forget()
    mine = pipelines.compare(tmp_path, "a")
    a, b = (_pool("maori", 3, False, arm) for arm in "ab")
    diff = (np.array(b.column("seat_win_share").to_pylist())
            - np.array(a.column("seat_win_share").to_pylist()))
    assert mine["pairs"].to_list() == [POOL] * 3
    np.testing.assert_allclose(mine["win_share_diff"], diff.mean(axis=0), rtol=1e-12)


def test_a_stored_pair_table_stands_for_a_damaged_shard_and_a_damaged_one_is_recomputed(
        tmp_path):
    paths = _two_arms(tmp_path)
    _forget()
    first = pipelines.compare(tmp_path, "a")
    _flip(paths[-1], 0.5)  # arm b's last shard: its pair table and statistics stand for it
    _forget()
    assert_frame_equal(pipelines.compare(tmp_path, "a"), first, check_exact=True)
    for path in _pair_files(tmp_path):
        _flip(path, 0.5)
    _forget()
    with pytest.raises(pipelines.DamagedShard, match="arm=b/players=3/shard-000000000036"):
        pipelines.compare(tmp_path, "a")


def test_a_pair_table_older_than_its_shard_is_computed_again(tmp_path):
    """A replayed shard (written again after its pair table) is paired again from its rows:
    a stored table of its former rows is never read."""
    _two_arms(tmp_path)
    _forget()
    pipelines.compare(tmp_path, "a")
    other = _pool("maori", 3, False, "a").slice(0, 12)  # arm b's first shard, other rows
    other = other.set_column(other.schema.get_field_index("arm"), "arm",
                             pa.array(["b"] * 12, pa.string()))
    fs, base = filesystem(str(tmp_path))
    entry = write_shard(other, fs, base, 0, 12)
    write_statistics(other, fs, base, entry)
    _forget()
    replayed = pipelines.compare(tmp_path, "a")
    rows = {arm: np.array(_pool("maori", 3, False, arm).column("seat_win_share").to_pylist())
            for arm in "ab"}
    total = (rows["b"] - rows["a"])[12:].sum(axis=0)  # games 0..11 now equal in both arms
    assert replayed["pairs"].to_list() == [POOL] * 3
    np.testing.assert_allclose(replayed["win_share_diff"], total / POOL, rtol=1e-12)


def test_a_breakdown_the_tables_hold_reads_no_rows_and_others_read_each_shard_once(
        tmp_path, monkeypatch):
    _write_cell(tmp_path, _pool("golden_island", 3, False, "a"), 12)
    _forget()
    numbers = pipelines.breakdown(tmp_path, "seat_gold_coins")
    assert len(sufficient._VALUES) == POOL // 12
    monkeypatch.setattr(sufficient, "_read_rows", lambda *a: pytest.fail("rows were read"))
    assert_frame_equal(pipelines.breakdown(tmp_path, "seat_gold_coins"), numbers)
    _forget()
    relics = pipelines.breakdown(tmp_path, "seat_relic", team=True)
    agents = pipelines.agent_summary(tmp_path)
    assert relics["games"].sum() == POOL and agents["games"].to_list() == [POOL]
    with pytest.raises(ValueError, match="no outcome column 'seat_nothing'"):
        pipelines.breakdown(tmp_path, "seat_nothing")
    with pytest.raises(ValueError, match="team=True needs a per-seat column"):
        pipelines.breakdown(tmp_path, "end_reason", team=True)
