"""Faults of the results location: an unwritable one (the experiment fails with a clear
error, nothing half-written visible), a write that fails midway, and temporary files of
interrupted shard writes removed when a run resumes or finishes, and a results disk that
really fills up.  (A host lost mid-experiment: tests/services/test_cluster.py.)"""
import contextlib
import errno
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from ray_support import ray_local  # noqa: F401  (session fixture)
from service_support import small_spec

from pipelines import folder
from services.runner import run_experiment
from services.spec import ExperimentSpec
from pipelines.folder import cell_dir, experiment_path

def _rows(root: str) -> list[dict]:
    rows = []
    for path in sorted(Path(root).rglob("shard-*.parquet")):
        rows += pq.read_table(path).to_pylist()
    return sorted(rows, key=lambda r: (r["arm"], r["players"], r["game_index"]))


def test_an_unwritable_results_location_fails_cleanly(ray_local, tmp_path):  # noqa: F811
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the results folder should be")
    seen = []
    status = run_experiment(ExperimentSpec.model_validate(small_spec()),
                            str(blocker / "results"), "exp", progress=seen.append)
    assert status == "failed"
    assert seen[-1].status == "failed" and "NotADirectoryError" in seen[-1].error
    assert blocker.read_text().startswith("a file")  # nothing written anywhere


def test_a_write_that_fails_midway_leaves_no_file(tmp_path, monkeypatch):
    """A shard write that fails midway (as on a full disk) leaves neither the shard nor its
    temporary file; the error reaches the caller (the task is retried, then fails)."""
    local, root = folder.filesystem(str(tmp_path))

    class FullDisk:  # the local filesystem, whose disk fills up after a few bytes
        def __getattr__(self, name):
            return getattr(local, name)

        def open_output_stream(self, where):
            out = local.open_output_stream(where)
            out.write(b"PAR1 partial")
            out.close()
            raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        folder.write_atomically(pa.table({"x": [1]}), FullDisk(),
                                 f"{root}/a/shard-000000000000.parquet")
    assert [p.name for p in tmp_path.rglob("*")] == ["a"]


def test_stale_temporary_files_are_removed_on_resume(ray_local, tmp_path):  # noqa: F811
    spec = ExperimentSpec.model_validate(small_spec())
    cell = spec.cells()[0]
    folder = Path(cell_dir(experiment_path(str(tmp_path), "exp"), cell.arm, cell.players))
    folder.mkdir(parents=True)
    stale = folder / ".shard-000000000000.parquet.0123abcd.tmp"
    stale.write_bytes(b"PAR1 interrupted write")
    assert run_experiment(spec, str(tmp_path), "exp") == "done"
    assert not stale.exists()
    assert not list(Path(tmp_path).rglob("*.tmp"))
    assert len(_rows(str(tmp_path / "exp"))) == spec.total_games()


def test_a_write_cut_off_during_the_run_leaves_no_temporary_file(ray_local, tmp_path):  # noqa: F811
    """A worker that dies mid-write (its node killed) leaves its temporary file while the run
    goes on (the retry writes the shard); a run that finishes removes it."""
    spec = ExperimentSpec.model_validate(small_spec())
    cell = spec.cells()[0]
    folder = Path(cell_dir(experiment_path(str(tmp_path), "exp"), cell.arm, cell.players))
    cut = folder / ".shard-000000000100.parquet.0123abcd.tmp"

    def a_worker_dies_writing(p):
        if p.done and not cut.exists() and p.status == "running":
            folder.mkdir(parents=True, exist_ok=True)
            cut.write_bytes(b"PAR1 cut off")

    assert run_experiment(spec, str(tmp_path), "exp", progress=a_worker_dies_writing) == "done"
    assert not list(Path(tmp_path).rglob("*.tmp"))
    assert len(_rows(str(tmp_path / "exp"))) == spec.total_games()


@contextlib.contextmanager
def _small_disk(folder: Path, size: str):
    """A real, size-limited file system at `folder` (a tmpfs of `size`): mounting one needs
    root with CAP_SYS_ADMIN, as on this project's machines and CI."""
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                              str(folder)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a size-limited tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "--lazy", str(folder)], check=True)


def test_a_full_results_disk_fails_cleanly(ray_local, tmp_path):  # noqa: F811
    """A results location that fills up mid-run (a real full file system, not a mock): the
    experiment ends failed naming the full disk, every shard file visible is complete, and no
    temporary file is left."""
    spec = ExperimentSpec.model_validate(small_spec(games_per_arm=4000, shard_size=100))
    with _small_disk(tmp_path / "disk", "96k") as disk:
        seen = []
        status = run_experiment(spec, str(disk), "exp", progress=seen.append)
        assert status == "failed"
        assert "No space left on device" in seen[-1].error, seen[-1].error
        shards = sorted(disk.rglob("shard-*.parquet"))
        assert 0 < len(shards) < len(spec.cells()) * 40  # some fitted, then the disk was full
        for path in shards:  # complete files: every row of its shard
            assert pq.read_metadata(path).num_rows == 100
        assert not list(disk.rglob("*.tmp"))
