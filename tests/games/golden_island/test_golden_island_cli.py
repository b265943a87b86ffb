"""The Golden Island in `meeplelab run`'s tables: the game's own outcome columns (eliminated
players, gold by source, ...) are printed per seat, from the game's outcome names, with
truncated games (round_limit, a simulator safety) left out."""
import re

import pyarrow.parquet as pq

import core_cy
from core_cy.play import batch
from services import cli
from services.spec import ExperimentSpec
from pipelines.folder import storage_table

GAME = core_cy.load("golden_island")


def test_run_table_prints_the_seat_outcome_columns(tmp_path, capsys):
    spec = ExperimentSpec.model_validate({
        "name": "gi", "game": "golden_island", "players": 2, "agents": "random",
        "games_per_arm": 60, "seed": 5, "arms": {"short": {"max_rounds": 150}}})
    rb = batch.play(GAME, 2, {"max_rounds": 150}, "random", seed=5, count=60, arm="short",
                    experiment="gi")
    (tmp_path / "arm=short" / "players=2").mkdir(parents=True)
    pq.write_table(storage_table(rb), tmp_path / "arm=short" / "players=2" / "0.parquet")
    cli.print_results(str(tmp_path), spec)
    printed = capsys.readouterr().out
    d = rb.to_pydict()
    kept = [i for i, r in enumerate(d["end_reason"]) if r != "round_limit"]
    assert 0 < len(kept) < 60      # some random games hit the 150-round safety
    assert f"short {60 - len(kept)} games" in printed and "Truncated games" in printed
    lines = {m[0]: m[1:] for m in re.findall(
        r"^  short +(\w+) +(-?[\d.]+) +(-?[\d.]+)$", printed, re.M)}
    for name in ("eliminated", "gold_total", "gold_chests", "gold_coins", "gold_relic"):
        means = [sum(d["seat_" + name][i][k] for i in kept) / len(kept) for k in range(2)]
        assert [float(x) for x in lines[name]] == [round(m, 2) for m in means], name
    assert "relic" not in lines          # a labelled code: the breakdowns' to show
    assert "Outcomes (mean per game):" in printed
    assert re.search(r"^  rounds +[\d.]+$", printed, re.M)
    assert "survivors" in printed
