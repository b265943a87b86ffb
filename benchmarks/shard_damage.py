"""Figures verify their data (issue 38, Deliver 2): a finished experiment of 20 shards
(2,000 games, played by the service's job queue on a local Ray) gets a 0-byte shard, a
truncated shard and 200 single-page damages (one at a time: a few bytes changed inside one
data page of a random shard, the size kept); each time the figures' JSON must name exactly
that shard (the page shows its notice) and count the other shards' games only, with figures
equal to those computed another way (the other 19 shards read directly, no manifest).  The
same damages read without verification (plain Polars, as before manifests) are counted as
the probe counted them: read back as other values, an error, or a panic.  Then a 0-byte, a
truncated and 5 damaged shards at once are replayed through POST .../replay and compared
byte for byte with what was written.  Last, the per-figure read cost: a request of a
finished experiment's summary (kept answer; each shard's verdict kept), a cold verify
(every shard hashed; for a reader of the statistics tables: the tables hashed, the shards
as written not read) and a verify of 1,000 shards.

    nice -n 19 python -m benchmarks.shard_damage [--damages 200] [--seed 38]

Results: docs/lab/2026-12-03-shard-damage.md (dated, with the commit).
"""
from __future__ import annotations

import argparse
import math
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from services.registry import FINISHED

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "shard-damage-benchmark-token"
SPEC = {"name": "damage", "game": "maori", "players": 3, "arms": {"a": {}, "b": {}},
        "baseline": "a", "games_per_arm": 1000, "shard_size": 100, "seed": 38}


def _wait_done(client, eid: str, auth: dict, timeout: float = 600) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        exp = client.get(f"/api/experiments/{eid}", headers=auth).json()
        if exp["status"] in FINISHED:
            return exp
        assert time.monotonic() < deadline, exp
        time.sleep(0.2)


def _figures(rows: list[dict]) -> list[tuple]:
    return sorted((r["arm"], r["players"], r["seat"], r["games"], r["win_share"],
                   r["score_mean"]) for r in rows)


def _same(got: list[tuple], truth: list[tuple]) -> bool:
    """The same cells and games, and the same shares and means up to the last bits of a
    floating-point sum (Polars' summation order is not fixed)."""
    return len(got) == len(truth) and all(
        a[:4] == b[:4] and all(math.isclose(x, y, rel_tol=1e-12) for x, y in zip(a[4:], b[4:]))
        for a, b in zip(got, truth))


def _leave_one_out(root: Path, shards: list[dict]) -> dict[str, list[tuple]]:
    """Per shard, the summary of the other shards: a copy of the folder without it and
    without the manifest (read as before manifests: every file)."""
    import pipelines

    out = {}
    for entry in shards:
        with tempfile.TemporaryDirectory() as tmp:
            for other in shards:
                if other is not entry:
                    target = Path(tmp) / other["path"]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(root / other["path"], target)
            rows = pipelines.summary(tmp).to_dicts()
        out[entry["path"]] = _figures(rows)
    return out


def _page_damage(path: Path, rng: random.Random) -> tuple[bytes, str]:
    """A few bytes changed inside one data page of the shard (a random column chunk of a
    random row group, a random offset within it); returns the bytes before and where."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    group = meta.row_group(rng.randrange(meta.num_row_groups))
    column = group.column(rng.randrange(group.num_columns))
    start = column.data_page_offset
    at = start + rng.randrange(column.total_compressed_size - (start - (
        column.dictionary_page_offset or start)))
    data = path.read_bytes()
    changed = bytearray(data)
    for k in range(rng.randint(1, 4)):
        if at + k < len(changed):
            changed[at + k] ^= rng.randrange(1, 256)
    path.write_bytes(bytes(changed))
    return data, f"{column.path_in_schema}@{at}"


def _unverified(path: Path, expected: list[dict]) -> str:
    """How the damaged file reads without verification (plain Polars): same, other values,
    error or panic."""
    import polars as pl

    try:
        rows = pl.read_parquet(path).to_dicts()
    except Exception:  # noqa: BLE001
        return "error"
    except BaseException:  # noqa: BLE001  (a Polars panic is no Exception)
        return "panic"
    return "same" if rows == expected else "other values"


def damages(client, eid: str, root: Path, manifest: dict, count: int, seed: int) -> dict:
    import polars as pl

    auth = {"Authorization": f"Bearer {TOKEN}"}
    truth = _leave_one_out(root, manifest["shards"])
    rng, tally = random.Random(seed), {"named": 0, "silently different": 0, "errors": 0}
    plain = {"same": 0, "other values": 0, "error": 0, "panic": 0}
    for k in range(count):
        entry = rng.choice(manifest["shards"])
        path = root / entry["path"]
        mtime = path.stat().st_mtime_ns
        original = pl.read_parquet(path).to_dicts()
        data, _where = _page_damage(path, rng)
        plain[_unverified(path, original)] += 1
        answer = client.get(f"/api/experiments/{eid}/summary", headers=auth)
        if answer.status_code != 200:
            tally["errors"] += 1
        else:
            rows = answer.json()
            named = [d["path"] for d in rows[0].get("integrity", {}).get("damaged", [])]
            tally["named"] += named == [entry["path"]] and \
                rows[0]["integrity"]["notice"].startswith("1 of 20 shards is damaged")
            tally["silently different"] += not _same(_figures(rows), truth[entry["path"]])
        path.write_bytes(data)
        os.utime(path, ns=(mtime, mtime))  # put back as written (cp -p)
    return {"damages": count, **tally, "unverified": plain}


def replay(client, eid: str, root: Path, manifest: dict, seed: int) -> dict:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    rng = random.Random(seed + 1)
    before = {e["path"]: (root / e["path"]).read_bytes() for e in manifest["shards"]}
    chosen = rng.sample(manifest["shards"], 7)
    (root / chosen[0]["path"]).write_bytes(b"")
    (root / chosen[1]["path"]).write_bytes(before[chosen[1]["path"]][:1000])
    for entry in chosen[2:]:
        _page_damage(root / entry["path"], rng)
    named = client.get(f"/api/experiments/{eid}/summary", headers=auth).json()[0]["integrity"]
    began = time.monotonic()
    queued = client.post(f"/api/experiments/{eid}/replay", headers=auth)
    assert queued.status_code == 202, queued.text
    time.sleep(0.1)
    status = _wait_done(client, eid, auth)["status"]
    seconds = time.monotonic() - began
    after = {p: (root / p).read_bytes() for p in before}
    rows = client.get(f"/api/experiments/{eid}/summary", headers=auth).json()
    return {"bad": sorted(d["problem"] for d in named["damaged"]), "status": status,
            "seconds": round(seconds, 1), "identical bytes": after == before,
            "integrity after": rows[0].get("integrity"), "games": sum(
                r["games"] for r in rows if r["seat"] == 0)}


def read_cost(client, eid: str, root: Path) -> dict:
    """Seconds per summary request of the finished experiment (kept answer, kept verdicts),
    per cold verify (every shard hashed) and per warm verify of 1,000 shards."""
    from pipelines import dataset
    from pipelines import folder

    auth = {"Authorization": f"Bearer {TOKEN}"}
    client.get(f"/api/experiments/{eid}/summary", headers=auth)
    n = 200
    began = time.perf_counter()
    for _ in range(n):
        client.get(f"/api/experiments/{eid}/summary", headers=auth)
    request = (time.perf_counter() - began) / n
    from services.api import results

    async def unverified(record, root, rows=True):  # the request as before manifests
        return None

    verified, results.integrity = results.integrity, unverified
    try:
        client.get(f"/api/experiments/{eid}/summary", headers=auth)
        began = time.perf_counter()
        for _ in range(n):
            client.get(f"/api/experiments/{eid}/summary", headers=auth)
        before = (time.perf_counter() - began) / n
    finally:
        results.integrity = verified
    dataset._VERDICTS.clear()
    began = time.perf_counter()
    dataset.verify(str(root), rows=False)
    cold_tables = time.perf_counter() - began
    dataset._VERDICTS.clear()
    began = time.perf_counter()
    dataset.verify(str(root))
    cold = time.perf_counter() - began
    began = time.perf_counter()
    for _ in range(n):
        dataset.verify(str(root))
    warm = (time.perf_counter() - began) / n
    with tempfile.TemporaryDirectory() as tmp:  # 1,000 shards: 50 copies of the 20
        manifest = folder.read_manifest(str(root))
        entries = []
        for copy in range(50):
            for e in manifest["shards"]:
                entry = {**e, "statistics": dict(e["statistics"])}
                for file in (entry, entry["statistics"]):
                    rel = file["path"].replace("shard-", f"shard-{copy:03d}")
                    (Path(tmp) / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(root / file["path"], Path(tmp) / rel)  # times kept (cp -p)
                    file["path"] = rel
                entries.append(entry)
        folder.write_manifest(tmp, entries, "copy", 0)
        dataset._VERDICTS.clear()
        began = time.perf_counter()
        dataset.verify(tmp, rows=False)
        cold_1000_tables = time.perf_counter() - began
        dataset._VERDICTS.clear()
        began = time.perf_counter()
        dataset.verify(tmp)
        cold_1000 = time.perf_counter() - began
        began = time.perf_counter()
        for _ in range(20):
            dataset.verify(tmp)
        warm_1000 = (time.perf_counter() - began) / 20
    return {"summary request (kept) ms": round(request * 1000, 2),
            "summary request unverified (as before) ms": round(before * 1000, 2),
            "verify 20 shards cold ms": round(cold * 1000, 2),
            "verify 20 shards cold, reader of tables ms": round(cold_tables * 1000, 2),
            "verify 20 shards warm ms": round(warm * 1000, 3),
            "verify 1000 shards cold ms": round(cold_1000 * 1000, 1),
            "verify 1000 shards cold, reader of tables ms": round(cold_1000_tables * 1000, 1),
            "verify 1000 shards warm ms": round(warm_1000 * 1000, 2),
            "shard bytes": sum(e["bytes"] for e in manifest["shards"]) // 20}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--damages", type=int, default=200)
    p.add_argument("--seed", type=int, default=38)
    args = p.parse_args(argv)
    from fastapi.testclient import TestClient

    from services.app import create_app
    from services.settings import Settings

    auth = {"Authorization": f"Bearer {TOKEN}"}
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(db=f"{tmp}/r.db", results=f"{tmp}/res", token=TOKEN * 1)
        with TestClient(create_app(settings)) as client:
            eid = client.post("/api/experiments", json=SPEC, headers=auth).json()["id"]
            assert _wait_done(client, eid, auth)["status"] == "done"
            root = Path(tmp) / "res" / eid
            from pipelines.folder import read_manifest
            manifest = read_manifest(str(root))
            for how in ("empty", "truncated"):
                entry = manifest["shards"][3]
                path = root / entry["path"]
                data, mtime = path.read_bytes(), path.stat().st_mtime_ns
                path.write_bytes(b"" if how == "empty" else data[: len(data) // 2])
                rows = client.get(f"/api/experiments/{eid}/summary", headers=auth).json()
                print(f"{how}: {rows[0]['integrity']['notice']}")
                print(f"  games counted: {sum(r['games'] for r in rows if r['seat'] == 0)}")
                path.write_bytes(data)
                os.utime(path, ns=(mtime, mtime))
            print(damages(client, eid, root, manifest, args.damages, args.seed))
            print(replay(client, eid, root, manifest, args.seed))
            print(read_cost(client, eid, root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
