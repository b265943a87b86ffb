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
from pipelines import shard_tables, sufficient
from pipelines import dataset
from pipelines.dataset import verify
from pipelines.figures import Look
from pipelines.summaries import summary
from services.shard import write_statistics
from services.storage import filesystem, write_manifest, write_shard

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


def _forget():
    """A new process: nothing read before is remembered."""
    sufficient._TABLES.clear()
    sufficient._MERGED.clear()
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


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large])
@given(datasets())
def test_figures_from_the_tables_are_the_figures_of_the_rows(tmp_path_factory, dataset):
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
    reference = _figures(root, sufficient.statistics_from_rows(root))
    for path, fate, where in fates:
        if fate == "damaged table":
            _flip(shard_tables.stats_path(path), where)
        elif fate == "replayed":  # written again after its table (identical rows)
            stamp = os.stat(shard_tables.stats_path(path)).st_mtime_ns
            os.utime(path, ns=(stamp + 10**9, stamp + 10**9))
        elif fate == "damaged shard":  # its sound table stands for it
            _flip(path, 0.5)
    _forget()
    stats = sufficient.statistics(root)
    for mine, theirs in zip(_figures(root, stats), reference):
        assert_frame_equal(mine, theirs, check_exact=True)
    _forget()  # and the same when the tables are merged look by look (incrementally)
    shards = sorted(p for p, *_ in fates)
    for count in range(1, len(shards)):
        hidden = [p + ".hidden" for p in shards[count:]]
        for p, h in zip(shards[count:], hidden):
            os.rename(p, h)
        sufficient.statistics(root)
        for p, h in zip(shards[count:], hidden):
            os.rename(h, p)
    for mine, theirs in zip(_figures(root, sufficient.statistics(root)), reference):
        assert_frame_equal(mine, theirs, check_exact=True)


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
    _flip(shard_tables.stats_path(paths[1]), 0.5)
    _forget()
    with pytest.raises(pipelines.DamagedShard, match="players=2/shard-000000000016.parquet"):
        pipelines.summary(tmp_path)


def test_a_table_of_other_bytes_is_never_taken_for_the_shards(tmp_path):
    """A table left beside a shard of the same name but other rows (stale) is not read."""
    rows = _pool("mondo", 2, False, "a")
    paths = _write_cell(tmp_path, rows.slice(0, 20), 20)
    old_table = open(shard_tables.stats_path(paths[0]), "rb").read()
    _write_cell(tmp_path, rows.slice(20, 20), 20, tables=False)
    open(shard_tables.stats_path(paths[0]), "wb").write(old_table)
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
    _flip(shard_tables.stats_path(os.path.join(base, entries[1]["path"])), 0.5)
    _forget()
    assert [d.path for d in verify(str(tmp_path)).damaged] == [entries[1]["path"]]
    shares = np.array(rows.slice(0, 24).column("seat_win_share").to_pylist())
    table = pipelines.summary(tmp_path)
    assert table["games"][0] == 24
    np.testing.assert_allclose(table["win_share"], shares.mean(axis=0))
