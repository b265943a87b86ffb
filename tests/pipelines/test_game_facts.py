"""The facts of a game travel in its data: every shard carries them (Parquet schema metadata),
the statistics read them from the dataset in any interpreter (no engine, no services import),
and a dataset written before shards carried them reads with the catalogue's table."""
import json
import posixpath
import subprocess
import sys

import polars as pl
import pyarrow.parquet as pq
import pytest
from product import PRODUCT, product_env

import core_cy
import pipelines
from core_cy.play import batch
from core_cy.play.schema import FACTS_KEY
from pipelines import dataset, folder
from pipelines.folder import cell_dir, filesystem, shard_name, storage_table, write_atomically

# Per game: players and rules whose random games end at a safety limit now and then, so the
# truncated games are there to be left out.
CUT_SHORT = {"maori": (3, {"mode": "pro", "max_turns": 120}),
             "forbidden_desert": (4, {}), "golden_island": (2, {}),
             "mondo": (2, {}), "reef_encounter": (2, {})}
AGENTS = {"maori": ["greedy", "greedy", "greedy"]}


def _write(root, name: str, players: int, rules: dict, count: int = 40, strip=False):
    """`count` games of `name` in the service's layout; strip: without the game's facts (a
    dataset written before shards carried them)."""
    game = core_cy.load(name)
    fs, base = filesystem(str(root))
    for start in (0, count // 2):
        rows = batch.play(game, players, rules, AGENTS.get(name, "random"), seed=3, start=start,
                          count=count // 2, experiment="t", arm="a")
        table = storage_table(rows)
        if strip:
            table = table.replace_schema_metadata(None)
        write_atomically(table, fs, posixpath.join(cell_dir(base, "a", players),
                                                   shard_name(start)))


def _fresh_summaries(paths) -> tuple[list[list[dict]], list[str]]:
    """pipelines.summary of every path in one fresh interpreter that imports nothing else,
    and the core_cy and services modules it had loaded by then."""
    probe = ("import json, sys, pipelines; s = [pipelines.summary(p).to_dicts() "
             "for p in sys.argv[1:]]; print(json.dumps([s, sorted(m for m in sys.modules "
             "if m.split('.')[0] in ('core_cy', 'services'))], default=str))")
    out = subprocess.run([sys.executable, "-c", probe, *map(str, paths)], capture_output=True,
                         text=True, cwd=PRODUCT, env=product_env(), check=True).stdout
    return json.loads(out)


def test_a_fresh_interpreter_reads_every_game_right(tmp_path):
    """pipelines.summary in a fresh interpreter (no services, no engine imported) gives the
    figures this process gives, for datasets of every game written now and written before
    shards carried their facts: a cooperative game one team row per cell, truncated games
    (ended at the game's safety end reasons) reported and left out of the games counted."""
    cases = [(name, strip) for name in sorted(CUT_SHORT) for strip in (False, True)]
    paths = [tmp_path / f"{name}-{'old' if strip else 'new'}" for name, strip in cases]
    for (name, strip), path in zip(cases, paths):
        _write(path, name, *CUT_SHORT[name], strip=strip)
    summaries, loaded = _fresh_summaries(paths)
    assert loaded == []   # neither an engine nor the services
    for (name, strip), path, rows in zip(cases, paths, summaries):
        game, players = core_cy.load(name), CUT_SHORT[name][0]
        here = json.loads(json.dumps(pipelines.summary(path).to_dicts(), default=str))
        assert rows == here, (name, strip)
        games = pipelines.scan(path).collect()
        cut = int(games["end_reason"].is_in(list(game.safety_end_reasons)).sum())
        assert len(rows) == (1 if game.cooperative else players), (name, strip)
        for row in rows:
            assert row["cooperative"] == game.cooperative
            assert row["truncated"] == cut and row["games"] == len(games) - cut
        if name == "maori":
            assert 0 < cut < len(games)


def test_every_shard_carries_its_games_facts(tmp_path):
    """A shard's schema metadata holds the game, whether it is cooperative, its safety end
    reasons and the seats, as the engine tells them; a batch without them is not stored."""
    _write(tmp_path, "forbidden_desert", 3, {})
    (path, _), *_ = dataset_files(tmp_path)
    facts = json.loads(pq.read_schema(path).metadata[FACTS_KEY])
    game = core_cy.load("forbidden_desert")
    assert facts == {"game": game.name, "cooperative": True, "players": 3,
                     "safety_end_reasons": list(game.safety_end_reasons)}
    rows = batch.play(game, 3, None, "random", seed=1, count=2)
    with pytest.raises(ValueError, match="facts"):
        storage_table(rows.replace_schema_metadata(None))


def dataset_files(root):
    from pipelines.folder import shard_files
    return shard_files(str(root))


def test_the_readers_key_is_the_writers():
    """The engines' batches carry the facts under the key the results folder's format reads
    (two layers that import neither the other)."""
    assert folder.FACTS_KEY == FACTS_KEY


def test_the_catalogue_table_holds_every_games_facts():
    """The table an old dataset is read with says what the engines say, for every game."""
    table = dataset.catalogue_facts()
    assert sorted(table) == core_cy.game_names()
    for name, facts in table.items():
        game = core_cy.load(name)
        assert facts == pipelines.GameFacts(bool(game.cooperative),
                                            tuple(game.safety_end_reasons)), name


def test_a_game_no_one_knows_is_competitive_without_safeties(tmp_path):
    _write(tmp_path, "maori", 3, CUT_SHORT["maori"][1], strip=True)
    lf = pipelines.scan(tmp_path).with_columns(game=pl.lit("unknown-game"))
    assert dataset.game_facts(tmp_path, ["unknown-game"]) == {
        "unknown-game": dataset.UNKNOWN_GAME}
    assert lf.collect()["game"].unique().to_list() == ["unknown-game"]


def test_the_shard_task_imports_neither_polars_nor_scipy():
    """A Ray worker imports the shard task's module and the writer of its statistics table:
    it needs the engines, numpy and pyarrow only."""
    probe = ("import sys, services.shard, pipelines.shard_tables; "
             "print(sorted(m for m in ('polars', 'scipy', 'pydantic', 'pipelines.dataset') "
             "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=PRODUCT, env=product_env(), check=True).stdout
    assert out.strip() == "[]"
