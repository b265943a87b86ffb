"""Reading an experiment's dataset: the scan, the rows the figures use (truncated games
left out), the units (a game, or with pairing 'rotations' a complete deal), and the facts about
the game the figures need (cooperative, its safety end reasons), which every file carries in
its Parquet schema metadata: never from an engine import.  The folder's format (paths,
manifest, facts key) is pipelines.folder's."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from pipelines.folder import FACTS_KEY, filesystem, read_manifest, shard_infos

CELL = ["arm", "players"]
SEAT = ["arm", "players", "seat"]
# The facts of the catalogue's games for datasets written before shards carried them: data,
# so that reading an old dataset imports no engine (a test holds it to the catalogue).
CATALOGUE_FACTS = Path(__file__).with_name("catalogue_facts.json")


@dataclass(frozen=True)
class GameFacts:
    """What the figures need to know about a game beyond its rows: whether it is cooperative
    (one team result per game) and which end reasons are simulator safeties (truncated games,
    left out of the figures)."""

    cooperative: bool = False
    safety_end_reasons: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, data: dict) -> "GameFacts":
        return cls(bool(data["cooperative"]), tuple(data["safety_end_reasons"]))

    def merged(self, other: "GameFacts") -> "GameFacts":
        return GameFacts(self.cooperative or other.cooperative,
                         tuple(sorted({*self.safety_end_reasons, *other.safety_end_reasons})))


UNKNOWN_GAME = GameFacts()  # a game nobody describes: competitive, no safeties


# ---- reading -----------------------------------------------------------------------------
def scan(path: str) -> pl.LazyFrame:
    """A lazy scan of every shard of an experiment (a local folder or a URI such as
    s3://bucket/results/<id>): with a manifest (a finished experiment) only the shards that
    verify against it (verify); FileNotFoundError when no shard is written yet, or none
    verifies (UnsoundData)."""
    path = _local(path)
    integrity = verify(path)
    if integrity.sound is not None:
        if not integrity.sound:
            raise UnsoundData(integrity)
        return pl.scan_parquet(list(integrity.sound), hive_partitioning=False)
    if "://" not in path:
        import glob
        if not glob.glob(f"{path}/**/*.parquet", recursive=True):
            raise FileNotFoundError(f"no result files under {path}")
    return pl.scan_parquet(f"{path}/**/*.parquet", hive_partitioning=False)


def _local(path) -> str:
    path = str(path).rstrip("/")
    return path[len("file://"):] if path.startswith("file://") else path


# ---- the manifest: what a finished experiment wrote, and what its files hold now ----------


@dataclass(frozen=True)
class Damage:
    """A shard of the manifest that is not read: `problem` is missing (no file), empty (0
    bytes), truncated (fewer bytes than written), longer (more bytes than written) or
    damaged (as many bytes as written, other ones); `games` are not counted."""

    path: str  # under the experiment's folder
    problem: str
    games: int
    arm: str
    players: int


@dataclass(frozen=True)
class Integrity:
    """An experiment's files against its manifest (verify).  Without a manifest (a run not
    finished, or results written before manifests) `sound` is None: every file is read."""

    shards: int = 0  # the manifest's shards
    games: int = 0  # the manifest's games
    damaged: tuple[Damage, ...] = ()
    sound: tuple[str, ...] | None = None  # the files that verify (paths or URIs to scan)

    @property
    def games_not_counted(self) -> int:
        return sum(d.games for d in self.damaged)


class UnsoundData(FileNotFoundError):
    """No shard of a finished experiment verifies against its manifest."""

    def __init__(self, integrity: Integrity):
        super().__init__(f"none of the {integrity.shards} shards verifies against the "
                         "experiment's manifest")
        self.integrity = integrity


_VERDICTS: dict[tuple, bool] = {}  # (path, size, mtime_ns, sha256 expected) -> verified
MAX_VERDICTS = 200_000
_SUSPECT: set[str] = set()  # files a reader could not read: hashed at every check from then


def suspect(path: str) -> None:
    """A reader of the experiment at `path` failed on one of its files (changed in place,
    its size and mtime kept): every file of its manifest is unverified, hashed again at the
    next check and at every one after (verify), so the damaged one is named."""
    path = _local(path)
    manifest = read_manifest(path)
    if manifest is None:
        return
    _, base = filesystem(path)
    names = {f"{base}/{f['path']}" for e in manifest["shards"]
             for f in [e, *(v for v in e.values() if isinstance(v, dict) and "sha256" in v)]}
    _SUSPECT.update(names)
    for key in [k for k in _VERDICTS if k[0] in names]:
        del _VERDICTS[key]


def _same_bytes(fs: pafs.FileSystem, info: pafs.FileInfo, sha256: str) -> bool:
    """Whether the file's bytes hash to `sha256`: read and hashed once per (path, size,
    mtime), since a written shard never changes (a rewrite changes its mtime)."""
    key = (info.path, info.size, info.mtime_ns, sha256)
    if key not in _VERDICTS or info.path in _SUSPECT:
        if len(_VERDICTS) >= MAX_VERDICTS:
            _VERDICTS.clear()
        digest = hashlib.sha256()
        with fs.open_input_stream(info.path) as src:
            while chunk := src.read(1 << 20):
                digest.update(chunk)
        _VERDICTS[key] = digest.hexdigest() == sha256
    return _VERDICTS[key]


def _problem(fs: pafs.FileSystem, info: pafs.FileInfo, entry: dict, as_written: bool = False
             ) -> str | None:
    """What is wrong with a file against its manifest entry (Damage.problem), or None.
    `as_written`: a file whose size and modification time are those its writer recorded
    (the entry's mtime_ns) is taken as written, without reading it."""
    if info.type != pafs.FileType.File:
        return "missing"
    if info.size != entry["bytes"]:
        return "empty" if info.size == 0 else (
            "truncated" if info.size < entry["bytes"] else "longer")
    if as_written and entry.get("mtime_ns") is not None and info.mtime_ns == entry["mtime_ns"] \
            and info.path not in _SUSPECT:
        return None
    return None if _same_bytes(fs, info, entry["sha256"]) else "damaged"


def verify(path: str, rows: bool = True) -> Integrity:
    """The experiment's files against its manifest: each shard (and each companion file an
    entry names: a nested {"path", "bytes", "sha256"}) must have its written byte size and
    SHA-256; one listing of the files per call, each file's bytes hashed once per (path,
    size, mtime).  `rows=False` is for a reader that reads the companions (the statistics
    tables), not the shards' rows: a shard whose size and modification time are those its
    writer recorded in the manifest is taken as written without being read (the premise of
    the cache above: a file is never changed without its mtime changing), and only shards
    changed since (damaged, replayed, or copied without their times) are hashed; the
    companions are always hashed, as every reader of rows hashes the shards."""
    path = _local(path)
    manifest = read_manifest(path)
    if manifest is None:
        return Integrity()
    fs, base = filesystem(path)
    found = {i.path: i for i in fs.get_file_info(
        pafs.FileSelector(base, recursive=True, allow_not_found=True))}
    scheme = path.split("://")[0] + "://" if "://" in path else ""
    sound, damaged = [], []
    for entry in manifest["shards"]:
        companions = [v for v in entry.values() if isinstance(v, dict) and "sha256" in v]
        problem = None
        for file in [entry, *companions]:
            full = f"{base}/{file['path']}"
            problem = problem or _problem(fs, found.get(full) or fs.get_file_info(full), file,
                                          as_written=not rows and file is entry)
        if problem:
            damaged.append(Damage(entry["path"], problem, entry["games"], entry["arm"],
                                  entry["players"]))
        else:
            sound.append(scheme + f"{base}/{entry['path']}")
    return Integrity(len(manifest["shards"]), manifest["games"], tuple(damaged), tuple(sound))


_FOOTERS: dict[tuple, dict | None] = {}  # (path, size, mtime) -> the facts a file carries
MAX_FOOTERS = 200_000


def _file_facts(fs: pafs.FileSystem, info: pafs.FileInfo) -> dict | None:
    """The facts one file carries (None: a file written before files carried them); a
    written shard never changes, so each is read once."""
    key = (info.path, info.size, info.mtime_ns)
    if key not in _FOOTERS:
        if len(_FOOTERS) >= MAX_FOOTERS:
            _FOOTERS.clear()
        metadata = pq.read_schema(info.path, filesystem=fs).metadata or {}
        _FOOTERS[key] = json.loads(metadata[FACTS_KEY]) if FACTS_KEY in metadata else None
    return _FOOTERS[key]


def stored_facts(path: str) -> dict[str, GameFacts]:
    """Game name -> its facts, as the dataset's files carry them (FACTS_KEY): those that
    verify against the manifest, when there is one."""
    path = _local(path)
    fs, base = filesystem(path)
    sound = verify(path).sound
    sound = None if sound is None else {s.split("://")[-1] for s in sound}
    found: dict[str, GameFacts] = {}
    for info, _ in shard_infos(fs, base):
        if sound is not None and info.path not in sound:
            continue
        facts = _file_facts(fs, info)
        if facts is not None:
            mine = GameFacts.from_json(facts)
            found[facts["game"]] = found[facts["game"]].merged(mine) \
                if facts["game"] in found else mine
    return found


def catalogue_facts() -> dict[str, GameFacts]:
    """Game name -> its facts for datasets written before files carried them."""
    table = json.loads(CATALOGUE_FACTS.read_text())
    return {name: GameFacts.from_json(facts) for name, facts in table.items()}


def game_facts(path: str, names) -> dict[str, GameFacts]:
    """The facts of each game of `names` in the dataset at `path`: as its files carry them,
    else (a dataset written before files carried them) the catalogue's table, else
    UNKNOWN_GAME (competitive, no safeties)."""
    stored, old = stored_facts(path), None
    out = {}
    for name in names:
        if name not in stored and old is None:
            old = catalogue_facts()
        out[name] = stored.get(name) or old.get(name, UNKNOWN_GAME)
    return out


def _games_in(path: str, lf: pl.LazyFrame) -> list[GameFacts]:
    """The facts of every game named in the rows."""
    names = lf.select(pl.col("game").unique()).collect()["game"].to_list()
    return list(game_facts(path, names).values())


def _truncated(reasons) -> pl.Expr:
    """Whether a game ended at one of the end reasons `reasons` (a simulator safety)."""
    return pl.col("end_reason").cast(pl.String).is_in(sorted(set(reasons)))


def _complete_deals(lf: pl.LazyFrame) -> pl.LazyFrame:
    """The rows of deals played in every seat rotation (k games for k seats)."""
    return lf.filter(pl.len().over(*CELL, "deal") == pl.col("players").cast(pl.UInt32))


def _deal_units(lf: pl.LazyFrame) -> pl.LazyFrame:
    """One row per complete deal: seat shares and scores the means over its games (seat by
    seat), game_index the deal, seat_agent 'rotated' (each agent sat in every seat once)."""
    seats = (_complete_deals(lf)
             .select(*CELL, "deal", share=pl.col("seat_win_share").cast(pl.List(pl.Float64)),
                     score=pl.col("seat_score").cast(pl.List(pl.Float64)))
             .with_columns(seat=pl.int_ranges(0, pl.col("share").list.len()))
             .explode("seat", "share", "score")
             .group_by(*CELL, "deal", "seat").agg(pl.col("share").mean(),
                                                  pl.col("score").mean())
             .sort(*CELL, "deal", "seat"))
    return (seats.group_by(*CELL, "deal", maintain_order=True)
            .agg(seat_win_share="share", seat_score="score")
            .select(*CELL, game_index="deal", seat_agent=pl.col("seat_win_share").list.eval(
                        pl.lit("rotated")), seat_win_share="seat_win_share",
                    seat_score="seat_score", unit_games=pl.col("players").cast(pl.UInt32)))


def units(games: pl.LazyFrame | pl.DataFrame, safety_end_reasons=()
          ) -> pl.LazyFrame | pl.DataFrame:
    """The units the figures rest on, from rows of games (a frame of the results schema;
    the same kind of frame back), the one rule for the dataset, the plan's pilot and the
    balance search: games that ended at one of `safety_end_reasons` (truncated) left out;
    with a `deal` column (pairing 'rotations') one row per complete deal, its seat shares and
    scores the means over its games and game_index the deal; else one row per game.  Every
    unit has unit_games, the games it stands for."""
    rows = games.lazy().filter(~_truncated(safety_end_reasons))
    out = (_deal_units(rows) if "deal" in rows.collect_schema().names()
           else rows.with_columns(unit_games=pl.lit(1, pl.UInt32)))
    return out.collect() if isinstance(games, pl.DataFrame) else out


def results(path: str, include_truncated: bool = False) -> pl.LazyFrame:
    """The rows every figure uses: truncated games (ended at a game's simulator safety) left
    out unless include_truncated."""
    lf = scan(path)
    safeties = sorted({r for g in _games_in(path, lf) for r in g.safety_end_reasons})
    lf = lf.with_columns(truncated=_truncated(safeties))
    return lf if include_truncated else lf.filter(~pl.col("truncated"))
