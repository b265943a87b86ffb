"""A finished experiment's manifest and the figures' verified reads: a missing, empty,
truncated or damaged shard is named, its games are not counted, and no figure is ever
computed from bytes other than those written (pipelines.folder writes the manifest,
pipelines.dataset verifies against it)."""
import hashlib
import os
import posixpath
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import core_cy
import pipelines
from core_cy.play import batch
from pipelines import dataset
from pipelines import folder

GAME, PLAYERS, PER_SHARD = "maori", 2, 25


def write_experiment(root: Path, shards: int = 4, arms=("a", "b")) -> dict:
    """A finished experiment written as the runner writes one (its shards through
    folder.write_shard, then the manifest); returns the manifest."""
    game = core_cy.load(GAME)
    fs, base = folder.filesystem(str(root))
    entries = []
    for arm in arms:
        for k in range(shards):
            rows = batch.play(game, PLAYERS, {}, "random", seed=11, start=k * PER_SHARD,
                              count=PER_SHARD, experiment="exp", arm=arm)
            entries.append(folder.write_shard(folder.storage_table(rows), fs, base,
                                               k * PER_SHARD, PER_SHARD))
    return folder.write_manifest(str(root), entries, "exp", 11)


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("exp")
    return root, write_experiment(root)


def test_the_manifest_holds_what_each_shard_is(written):
    root, manifest = written
    assert folder.read_manifest(str(root)) == manifest
    assert manifest["games"] == 8 * PER_SHARD and len(manifest["shards"]) == 8
    fs, base = folder.filesystem(str(root))
    for entry in manifest["shards"]:
        data = (root / entry["path"]).read_bytes()
        assert entry["bytes"] == len(data)
        assert entry["sha256"] == hashlib.sha256(data).hexdigest()
        assert entry["mtime_ns"] == (root / entry["path"]).stat().st_mtime_ns
        # the entry a resume rebuilds from the file (one page-checksum-verified read), with
        # its statistics table's (written beside it when missing) and then that table's again
        rebuilt = folder.shard_entry(fs, base, posixpath.join(base, entry["path"]))
        assert {k: v for k, v in rebuilt.items() if k != "statistics"} == entry
        assert rebuilt["statistics"]["path"] == entry["path"] + ".stats"
        assert folder.shard_entry(fs, base, posixpath.join(base, entry["path"])) == rebuilt
    assert dataset.verify(str(root)).damaged == ()


def _damage(path: Path, how: str) -> bytes:
    data = path.read_bytes()
    if how == "missing":
        path.unlink()
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:  # one byte of a data page flipped, the size kept
        changed = bytearray(data)
        changed[len(data) // 3] ^= 0x5A
        path.write_bytes(bytes(changed))
    return data


def _restore(path: Path, data: bytes, mtime_ns: int) -> None:
    """Puts the shard back as it was written, mtime too (as `cp -p` would)."""
    path.write_bytes(data)
    os.utime(path, ns=(mtime_ns, mtime_ns))


def _counted(root: Path, entries) -> pl.DataFrame:
    """Games per seat computed another way: the rows of the given shards read directly."""
    rows = pl.concat([pl.read_parquet(root / e["path"]) for e in entries])
    return (rows.group_by("arm", "players").agg(games=pl.len())
            .sort("arm", "players"))


@pytest.mark.parametrize("how", ["missing", "empty", "truncated", "damaged"])
def test_a_bad_shard_is_named_and_its_games_are_not_counted(written, how):
    root, manifest = written
    entry = manifest["shards"][5]
    path = root / entry["path"]
    mtime = path.stat().st_mtime_ns
    data = _damage(path, how)
    try:
        integrity = dataset.verify(str(root))
        assert [(d.path, d.problem, d.games) for d in integrity.damaged] == \
            [(entry["path"], how, PER_SHARD)]
        assert integrity.games_not_counted == PER_SHARD
        kept = [e for e in manifest["shards"] if e is not entry]
        summary = pipelines.summary(str(root)).filter(pl.col("seat") == 0)
        expected = _counted(root, kept)
        assert summary.select("arm", "players", "games").sort("arm", "players").to_dicts() \
            == expected.to_dicts()
    finally:
        _restore(path, data, mtime)
    assert dataset.verify(str(root)).damaged == ()


def test_every_shard_bad_is_an_error_naming_them(tmp_path):
    manifest = write_experiment(tmp_path, shards=1, arms=("a",))
    (tmp_path / manifest["shards"][0]["path"]).write_bytes(b"")
    with pytest.raises(dataset.UnsoundData) as caught:
        pipelines.summary(str(tmp_path))
    assert [d.problem for d in caught.value.integrity.damaged] == ["empty"]


def test_a_shard_is_hashed_once_per_path_size_and_mtime(written, monkeypatch):
    root, _manifest = written
    dataset.verify(str(root))
    hashed = []
    real = hashlib.sha256
    monkeypatch.setattr(dataset.hashlib, "sha256", lambda *a: hashed.append(1) or real(*a))
    for _ in range(3):
        assert dataset.verify(str(root)).damaged == ()
    assert hashed == []  # verdicts kept: only a listing per read
    path = root / _manifest["shards"][0]["path"]
    os.utime(path, ns=(path.stat().st_mtime_ns + 1,) * 2)  # rewritten: verified again
    assert dataset.verify(str(root)).damaged == () and len(hashed) == 1


def test_a_reader_of_the_tables_reads_no_shard_left_as_written(tmp_path, monkeypatch):
    """verify(rows=False) (the figures that read the statistics tables only) hashes no
    shard whose size and mtime are those the manifest recorded, and hashes and names one
    changed since; a reader of rows (the default) hashes every shard once per process."""
    root, manifest = tmp_path, write_experiment(tmp_path, shards=2)
    hashed = []
    real = hashlib.sha256
    monkeypatch.setattr(dataset.hashlib, "sha256", lambda *a: hashed.append(1) or real(*a))
    monkeypatch.setattr(dataset, "_VERDICTS", {})  # a fresh process
    assert dataset.verify(str(root), rows=False).damaged == () and hashed == []
    assert dataset.verify(str(root)).damaged == () and len(hashed) == len(manifest["shards"])
    entry = manifest["shards"][2]
    path = root / entry["path"]
    mtime = path.stat().st_mtime_ns
    data = _damage(path, "damaged")
    try:
        found = dataset.verify(str(root), rows=False)
        assert [(d.path, d.problem) for d in found.damaged] == [(entry["path"], "damaged")]
        assert len(hashed) == len(manifest["shards"]) + 1
        # changed bytes under the written mtime (as `touch -d` could): taken as written by
        # a reader of tables (their own hashes stand for the figures), named by one of rows
        # in a new process (this one's verdict on those size and mtime is kept)
        os.utime(path, ns=(mtime, mtime))
        assert dataset.verify(str(root), rows=False).damaged == ()
        monkeypatch.setattr(dataset, "_VERDICTS", {})
        assert [d.path for d in dataset.verify(str(root)).damaged] == [entry["path"]]
    finally:
        _restore(path, data, mtime)


def test_an_old_manifest_without_write_times_is_hashed_by_every_reader(tmp_path, monkeypatch):
    manifest = write_experiment(tmp_path, shards=2, arms=("a",))
    for entry in manifest["shards"]:
        del entry["mtime_ns"]
    folder.write_manifest(str(tmp_path), manifest["shards"], "exp", 11)
    hashed = []
    real = hashlib.sha256
    monkeypatch.setattr(dataset.hashlib, "sha256", lambda *a: hashed.append(1) or real(*a))
    monkeypatch.setattr(dataset, "_VERDICTS", {})
    assert dataset.verify(str(tmp_path), rows=False).damaged == () and len(hashed) == 2


@settings(max_examples=25, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture])
@given(shard=st.integers(0, 7), where=st.floats(0, 1, exclude_max=True),
       flip=st.integers(1, 255), cut=st.booleans(), rows=st.booleans())
def test_any_single_damage_is_named_never_read_as_other_values(written, shard, where, flip,
                                                               cut, rows):
    """Any one byte changed, or any cut, in any shard: exactly that shard is named and the
    figures equal those of the other shards' rows (never silently different, never a panic)."""
    root, manifest = written
    entry = manifest["shards"][shard]
    path = root / entry["path"]
    mtime = path.stat().st_mtime_ns
    data = path.read_bytes()
    at = int(where * len(data))
    try:
        if cut:
            path.write_bytes(data[:at])
        else:
            changed = bytearray(data)
            changed[at] ^= flip
            path.write_bytes(bytes(changed))
        integrity = dataset.verify(str(root), rows)
        assert [d.path for d in integrity.damaged] == [entry["path"]]
        kept = [e for e in manifest["shards"] if e is not entry]
        games = pipelines.summary(str(root)).filter(pl.col("seat") == 0)
        assert games.select("arm", "players", "games").sort("arm", "players").to_dicts() == \
            _counted(root, kept).to_dicts()
    finally:
        _restore(path, data, mtime)
