"""The `meeplelab` command line: the game catalogue, experiments on the Ray runner, a demo.

    meeplelab games                         # every game: players, rule options, agents
    meeplelab run SPEC [--out DIR] [--workers N] [--interim-every SECONDS]
    meeplelab plan SPEC [--half-width H] [--delta D]   # games and time needed, from a pilot
    meeplelab balance SPEC [--json]         # what to change: a fair value, or a kind's value
    meeplelab demo [--host H] [--port P]     # the service with the demo experiment queued
    meeplelab demo --table [--out DIR] [--workers N] [--interim-every SECONDS]
    meeplelab report EXPERIMENT_OR_RESULTS_DIR [-o report.html] [--spec SPEC]
    meeplelab serve [--host H] [--port P] [--insecure]  # API + dashboard, loopback by default

`run` and the API service use the same runner (services.runner.run_experiment).  The results
of a spec go to <out>/<name>-<hash of the spec>/, so running the same spec again resumes it
(written shards are skipped) and a changed spec never mixes with older rows.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from pydantic import ValidationError

import core_cy

from services.api.errors import message

SPEC_FILE = "spec.json"  # a run writes its spec beside its results, for `meeplelab report`


# ---- output --------------------------------------------------------------------------------
def _options_text(schema: dict) -> list[str]:
    lines = []
    for name, opt in schema["properties"].items():
        allowed = ""
        if "enum" in opt:
            allowed = " (" + " | ".join(map(str, opt["enum"])) + ")"
        elif opt.get("type") in ("integer", "number"):
            allowed = f" ({opt.get('minimum', '')}..{opt.get('maximum', '')})"
        elif "x-kinds" in opt:  # restricted play: action kinds joined by '+'
            allowed = " (action kinds, '+'-joined: " + " | ".join(opt["x-kinds"]) + ")"
        default = opt["default"]
        if "x-kinds" in opt and default == "":
            default = "(none)"
        if isinstance(default, (list, dict)):
            default = "<data>"
        lines.append(f"    {name} = {default}{allowed}")
    return lines


def print_catalogue(out=None) -> None:
    out = out or sys.stdout
    from core_cy.engine.contract import BUILD
    from core_cy.engine.game import PACKAGE_VERSION

    print(f"meeplelab {PACKAGE_VERSION}, {BUILD} build of the engines\n", file=out)
    for name in core_cy.game_names():
        info = core_cy.load(name).info()
        kind = ", cooperative" if info["cooperative"] else ""
        print(f"{name}: {info['title']} ({info['min_players']}-{info['max_players']} players"
              f"{kind})", file=out)
        print("  rule options (default, allowed):", file=out)
        for line in _options_text(info["rules"]):
            print(line, file=out)
        print("  agents: " + ", ".join(sorted(info["agents"])), file=out)
        for agent, about in sorted(info["agents"].items()):
            params = about["parameters"]["properties"]
            if params:
                print(f"  {agent}(key=value, ...) parameters (default, allowed):", file=out)
                for line in _options_text(about["parameters"]):
                    print(line, file=out)
        print(file=out)


def print_results(path: str, spec, out=None, status: str | None = None,
                  games: int | None = None, error: str | None = None) -> None:
    """The results view of an experiment (services.view): its answer, then per player count
    its sentences and tables, within 100 columns; interim figures when the run ended early
    (status/games/error: the registry's record, else the folder's manifest says)."""
    from services import view

    out = out or sys.stdout
    _print_damage(path, f"`meeplelab replay {path}`", out)
    early = view.ended(path, status, games, error) is not None
    model = view.build(spec, path, spec.look(interim=early), status=status, games=games,
                       error=error, drawn=False)
    print(view.text(model), file=out)


def interim_lines(path: str, spec) -> list[str]:
    """One line per cell of a run in progress: its win shares (a cooperative game: the team
    win rate) with confidence-sequence intervals, which hold however often they are looked
    at (pipelines.Look(interim=True)); labelled interim."""
    import pipelines
    from services.report import interval

    table = pipelines.summary(path, look=spec.look(interim=True))
    lines = []
    for (arm, players), part in table.group_by(["arm", "players"], maintain_order=True):
        cell = part.row(0, named=True)
        if cell["cooperative"]:
            figures = "team " + interval(cell["team_win_rate"], cell["team_win_lo"],
                                         cell["team_win_hi"])
        else:
            figures = ", ".join(f"seat {s['seat'] + 1} "
                                + interval(s["win_share"], s["win_lo"], s["win_hi"])
                                for s in part.sort("seat").iter_rows(named=True))
        lines.append(f"interim (valid at any look) arm {arm!r}, {players} players, "
                     f"{cell['games']:,} games: {figures}")
    return lines


# ---- commands ----------------------------------------------------------------------------
def _spec_error(path, exc: Exception) -> int:
    if isinstance(exc, ValidationError):
        print(f"error: invalid experiment spec {path}:", file=sys.stderr)
        for e in exc.errors():
            where = ".".join(str(p) for p in e["loc"]) or "(spec)"
            print(f"  {where}: {message(e)}", file=sys.stderr)
    else:
        print(f"error: {exc}", file=sys.stderr)
    return 2


def _flag_errors(errors: list[dict], values: dict) -> int:
    """Every bad command-line flag at once, each named as it was typed (--delta 5)."""
    print("error: invalid arguments:", file=sys.stderr)
    for e in errors:
        name = str(e["loc"][0]) if e["loc"] else ""
        text = message(e).removeprefix(f"{name} is ")
        print(f"  --{name.replace('_', '-')} {values.get(name)}: {text}", file=sys.stderr)
    return 2


def experiment_id(spec) -> str:
    """<name>-<first 8 hex digits of the spec's hash>: stable for one spec."""
    digest = hashlib.sha256(spec.model_dump_json().encode()).hexdigest()[:8]
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in spec.name)
    return f"{safe}-{digest}"


def run_spec_file(path, out_dir: str, workers: int | None, interim_every: float = 10.0,
                  yes: bool = False) -> int:
    from services.settings import Settings
    from services.spec import ExperimentSpec

    try:
        spec = ExperimentSpec.from_file(path, Settings.without_tokens().spec_limits())
    except (ValidationError, ValueError) as exc:
        return _spec_error(path, exc)
    warning = spec.spread_warning()
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    if not cost_confirmed(spec, Settings.without_tokens().confirm_cpu_seconds, yes):
        return 2
    return run_spec(spec, out_dir, workers, interim_every)


def cost_confirmed(spec, limit: int, yes: bool, answer=input) -> bool:
    """States the spec's estimated CPU cost (services.spec.cost_statement); above `limit`
    (MEEPLELAB_CONFIRM_CPU_SECONDS) the run needs --yes, or yes at the question when stdin
    is a terminal."""
    from services.spec import cost_statement

    seconds, text = cost_statement(spec, spec.cpu_seconds)
    print(text[0].upper() + text[1:], file=sys.stderr)
    if seconds <= limit or yes:
        return True
    question = (f"that is above {limit:,} CPU-seconds (MEEPLELAB_CONFIRM_CPU_SECONDS)")
    if sys.stdin.isatty():
        return answer(f"{question}: play it? [y/N] ").strip().lower() in ("y", "yes")
    print(f"error: {question}: run it with --yes to play it anyway", file=sys.stderr)
    return False


def run_spec(spec, out_dir: str, workers: int | None, interim_every: float = 10.0) -> int:
    """Plays `spec` with a progress bar and, every `interim_every` seconds while it runs,
    the interim figures of every cell (interim_lines); then prints the final tables."""
    import time

    from tqdm import tqdm

    from services.runner import Budget, experiment_path, init_ray, run_experiment
    from services.settings import Settings
    from pipelines.folder import has_results

    from services.demo import duration
    from services.report import VerdictLog

    settings = Settings.without_tokens()
    exp_id = experiment_id(spec)
    path = experiment_path(out_dir, exp_id)
    _write_spec(spec, path)
    init_ray(num_cpus=workers, address=settings.ray_address)
    print(f"experiment {exp_id}: {len(spec.cells())} cell(s), up to {spec.total_games():,} "
          f"games -> {path}", file=sys.stderr)
    if not spec.stop_when:
        print(f"  {spec.games_per_arm:,} games per arm and player count (games_per_arm"
              f"{'' if 'games_per_arm' in spec.model_fields_set else ', the default'})",
              file=sys.stderr)
    # The bar's own ETA would count down to total (with stop_when: the max_games bound);
    # the runner's (Progress.eta_s: None while unknown) is the one shown.
    bar = tqdm(total=spec.total_games(), unit="games", file=sys.stderr, dynamic_ncols=True,
               bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}, {rate_fmt}"
                          "{postfix}]", postfix="ETA –")
    last = {"shown": time.monotonic()}
    verdicts = VerdictLog(spec, path)
    looks = LookLines(spec)

    def progress(p):
        bar.total = p.total
        bar.set_postfix_str(f"ETA {duration(p.eta_s)}", refresh=False)
        bar.update(p.done - bar.n)
        last["p"] = p
        now = time.monotonic()
        if p.status == "running" and now - last["shown"] >= interim_every \
                and has_results(path):
            last["shown"] = now
            for line in looks.lines(p, interim_lines(path, spec), verdicts):
                bar.write(line, file=sys.stderr)

    status = run_experiment(spec, out_dir, exp_id, progress=progress,
                            max_in_flight=2 * workers if workers else None,
                            nice=settings.worker_nice, budget=Budget(spec.cpu_seconds))
    bar.close()
    if status != "done":
        error = last["p"].error if "p" in last and last["p"].error else status
        print(f"error: experiment {status}: {error}", file=sys.stderr)
        if has_results(path):  # what it played, saying that it ended early
            print_results(path, spec, status=status, error=error)
        return 1
    print_results(path, spec)
    return 0


class LookLines:
    """What the terminal prints at a look of a running experiment: the games played, the
    rate and the ETA ('–' until known), then each cell's interim line and each new verdict,
    only when something changed since the last look; and once, for a stop-when-decided run
    whose cap is too small for what its open questions need, that it will likely end
    undecided at its cap."""

    def __init__(self, spec):
        self.spec, self.shown, self.warned = spec, {}, False

    def lines(self, p, cells: list[str], verdicts) -> list[str]:
        from services.demo import duration
        from services.report import games_per_second

        changed = [line for line in cells if self.shown.get(line.split(":", 1)[0]) != line]
        self.shown.update((line.split(":", 1)[0], line) for line in changed)
        out = changed + verdicts.new_lines()
        rule = self.spec.stop_when
        more = verdicts.most_more_games
        cells_n = max(len(self.spec.cells()), 1)
        if rule is not None and rule.delta and more and not self.warned \
                and p.done / cells_n + more > rule.max_games:
            self.warned = True
            out.append(f"this run will likely end undecided at its cap: its open questions "
                       f"need about {more:,} more games per cell, stop_when.max_games allows "
                       f"{max(rule.max_games - p.done // cells_n, 0):,} more")
        if not out:
            return []
        speed = games_per_second(p.games_per_s) if p.games_per_s else "– games/s"
        return [f"look: {p.done:,} of {p.total:,} games, {speed}, ETA {duration(p.eta_s)}"] + out


def _write_spec(spec, path: str) -> None:
    """The spec as JSON in the results folder (a local one), so that a report of that folder
    knows what was asked."""
    if "://" in str(path):
        return
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / SPEC_FILE).write_text(spec.model_dump_json(exclude_unset=True, indent=2))


def spec_mismatch(spec, root: str) -> str | None:
    """Where the rows of a results folder contradict a spec (their game, an arm or a player
    count the spec does not have), in one sentence; None when the spec describes them."""
    import polars as pl

    import pipelines

    try:
        seen = (pipelines.scan(root).select("game", "arm", "players").unique()
                .collect())
    except Exception as exc:  # a damaged shard or a foreign file: the report cannot trust it
        return f"its rows cannot be read ({type(exc).__name__})"
    games = sorted(set(seen["game"].cast(pl.String).to_list()))
    if games != [spec.game]:
        return f"the rows are games of {', '.join(map(repr, games))}, the spec's is " \
               f"{spec.game!r}"
    arms = sorted(set(seen["arm"].cast(pl.String).to_list()) - set(spec.result_arms()))
    if arms:
        return f"the rows have arms the spec has not: {', '.join(map(repr, arms[:5]))}"
    counts = sorted(set(seen["players"].to_list()) - set(spec.player_counts()))
    if counts:
        return f"the rows have player counts the spec has not: {counts[:5]}"
    return None


def _folder_spec(target: str, spec_path: str | None):
    """The spec of a results folder of `meeplelab run` (its spec.json, or `spec_path`), or
    the exit code after saying why there is none."""
    import os

    from services.spec import ExperimentSpec

    source = spec_path or os.path.join(target, SPEC_FILE)
    if not os.path.exists(source):
        print(f"error: {target} has no {SPEC_FILE}: give the spec it was run from with "
              "--spec SPEC", file=sys.stderr)
        return 2
    try:
        return ExperimentSpec.from_file(source)
    except (ValidationError, ValueError) as exc:
        return _spec_error(source, exc)


def _print_damage(root: str, replay: str, out) -> bool:
    """Says which shards of a finished run do not verify against its manifest, the games
    not counted and how to replay them (services.datasets.damage_notice); True if any."""
    from services import datasets

    found = datasets.integrity(root)
    if found is not None:
        print(f"warning: {datasets.damage_notice(found, replay)}", file=out)
    return found is not None


def replay_command(target: str, spec_path: str | None, workers: int | None) -> int:
    """`meeplelab replay FOLDER`: plays again exactly the shards of a run that has ended (a
    results folder of `meeplelab run`) that are missing or do not verify against its
    manifest, with their seeds and games: 0 when every one comes back with the bytes the
    manifest holds (then the figures), 1 otherwise, 2 when there is nothing to replay."""
    import os

    from pipelines.dataset import read_manifest, verify
    from services.runner import init_ray, run_experiment
    from services.settings import Settings

    spec = _folder_spec(target, spec_path)
    if isinstance(spec, int):
        return spec
    found = verify(target)
    if found.sound is None:
        print(f"error: {target} has no manifest: only a run that has ended can be replayed "
              "(an interrupted one resumes with `meeplelab run`)", file=sys.stderr)
        return 2
    if not _print_damage(target, f"`meeplelab replay {target}`", sys.stderr):
        print(f"every shard of {target} verifies against its manifest: nothing to replay",
              file=sys.stderr)
        return 0
    folder = os.path.abspath(target)
    init_ray(num_cpus=workers, address=Settings.without_tokens().ray_address)
    seen = []
    ended = read_manifest(target)  # a run that ended early replays into its own end
    status = run_experiment(spec, os.path.dirname(folder), os.path.basename(folder),
                            progress=seen.append, nice=Settings.without_tokens().worker_nice, play_on=False)
    if (status, seen[-1].error if seen else None) != (ended.get("status", "done"),
                                                      ended.get("error")):
        print(f"error: the replay {status}: {seen[-1].error if seen else ''}", file=sys.stderr)
        return 1
    print(f"replayed {len(found.damaged)} shards: every one has the bytes its manifest "
          "holds", file=sys.stderr)
    print_results(target, spec)
    return 0


def report_command(target: str, out: str, spec_path: str | None,
                   svg: str | None = None) -> int:
    """`meeplelab report`: an experiment id of the service's registry (MEEPLELAB_DB,
    MEEPLELAB_RESULTS), or a results folder of `meeplelab run` (its spec.json, or --spec);
    with `svg`, every figure also as its own SVG file in that folder."""
    import os

    from services import report
    from services.settings import Settings
    from services.spec import ExperimentSpec
    from pipelines.folder import experiment_path, has_results

    name, command = None, "meeplelab run spec.json"
    if os.path.isdir(target) or "://" in target:
        root, replay = target, f"`meeplelab replay {target}`"
        spec = _folder_spec(target, spec_path)
        if isinstance(spec, int):
            return spec
        done = True
    else:
        from services.registry import Registry

        settings = Settings.without_tokens()
        registry = Registry(settings.db)
        record = registry.get(target)
        registry.close()
        if record is None:
            print(f"error: {target} is neither a results folder nor an experiment of the "
                  f"registry {settings.db}", file=sys.stderr)
            return 2
        spec = ExperimentSpec.model_validate(record["spec"])
        root, name, done = experiment_path(settings.results, target), record["name"], \
            record["status"] == "done"
        replay = f"POST /api/experiments/{target}/replay"
    if not has_results(root):
        print(f"error: {root} holds no results yet", file=sys.stderr)
        return 2
    _print_damage(root, replay, sys.stderr)
    mismatch = spec_mismatch(spec, root)
    if mismatch:
        print(f"error: the spec does not describe the rows of {root}: {mismatch}",
              file=sys.stderr)
        return 2
    look = spec.look(interim=not done)
    drawn = report.experiment_figure_list(spec, root, look)
    text = report.render(spec, root, look, name, command, drawn)
    Path(out).write_text(text, encoding="utf-8")
    print(f"report written to {out} ({len(text.encode()) // 1024:,} KiB, one file, works "
          "offline)")
    if svg:
        folder = Path(svg)
        folder.mkdir(parents=True, exist_ok=True)
        for figure in drawn:
            (folder / f"{figure['key']}.svg").write_text(figure["svg"], encoding="utf-8")
        print(f"{len(drawn)} figures written to {folder}/ as SVG")
    return 0


def plan_spec_file(path, half_width, delta, pilot_games, workers, seconds: float = 120.0
                   ) -> int:
    """`meeplelab plan SPEC`: the pilot plays as shard tasks (on every core, or the cluster
    of RAY_ADDRESS) in a temporary results folder, deleted afterwards, within `seconds`;
    its progress goes to stderr."""
    import shutil
    import tempfile

    from services.plan import PilotTooSlow, PilotUnfinished, PlanRequest, plan_experiment
    from services.runner import Player, init_ray
    from services.settings import Settings
    from services.spec import ExperimentSpec

    flags = {"half_width": half_width, "delta": delta, "pilot_games": pilot_games}
    try:  # the flags on their own, so that their mistakes name the flag, not the spec
        game = core_cy.load(core_cy.game_names()[0])
        PlanRequest.model_validate({"spec": {"game": game.name, "players": game.min_players},
                                    **flags})
        flag_errors = []
    except ValidationError as exc:
        flag_errors = exc.errors()
    try:
        spec = ExperimentSpec.from_file(path)
    except (ValidationError, ValueError) as exc:
        if flag_errors:
            _flag_errors(flag_errors, flags)
        return _spec_error(path, exc)
    if flag_errors:
        return _flag_errors(flag_errors, flags)
    request = PlanRequest(spec=spec, **flags)
    settings = Settings.without_tokens()
    init_ray(num_cpus=workers, address=settings.ray_address)
    folder = tempfile.mkdtemp(prefix="meeplelab-plan-")
    try:
        player = Player(request.spec.game, folder, "pilot", seed=request.spec.seed,
                        progress=_job_progress(sys.stderr), nice=settings.worker_nice)
        result = plan_experiment(request.spec, player, half_width=request.half_width,
                                 delta=request.delta, pilot_games=request.pilot_games,
                                 workers=workers, seconds=seconds)
        player.finish("done")
    except (PilotUnfinished, PilotTooSlow) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(result["verdict"])
    if "games_per_arm" not in request.spec.model_fields_set:
        print(f"  (the spec sets no games_per_arm: it would play the default "
              f"{request.spec.games_per_arm:,} per arm and player count)")
    for c in result["cells"]:
        needs = ", ".join(f"{what} {c[key]:,}" for what, key in
                          (("for the half-width", "games_for_half_width"),
                           ("for the difference" if result["rule"] != "stop_when.delta"
                            else "at a fixed n for the difference (80% power)",
                            "games_for_delta")) if key in c)
        print(f"  {c['arm']}, {c['players']} players: {c['games_per_cpu_second']:.0f} games per "
              f"CPU-second; games needed {needs}")
    return 0


def balance_spec_file(path, as_json: bool = False, out=None, out_dir: str = "results",
                      workers: int | None = None) -> int:
    """`meeplelab balance SPEC`: the spec's balance question (services/balance.py), its games
    played as shard tasks (every core, or the cluster of RAY_ADDRESS) into
    <out_dir>/<name>-<hash>/ (run again, it resumes from the games written, with the same
    answer); prints its sentences (or the whole result as JSON)."""
    import json

    from services.balance import answer_lines, run_balance
    from services.runner import Budget, Player, Stopped, experiment_path, init_ray
    from services.settings import Settings
    from services.spec import ExperimentSpec

    out = out or sys.stdout
    settings = Settings.without_tokens()
    try:
        spec = ExperimentSpec.from_file(path, settings.spec_limits())
    except (ValidationError, ValueError) as exc:
        return _spec_error(path, exc)
    if spec.balance is None:
        print(f"error: spec {path} has no balance section (services/spec.py Balance)",
              file=sys.stderr)
        return 2
    init_ray(num_cpus=workers, address=settings.ray_address)
    job = experiment_id(spec)
    _write_spec(spec, experiment_path(out_dir, job))
    print(f"balance {job}: its games -> {experiment_path(out_dir, job)}", file=sys.stderr)
    player = Player(spec.game, out_dir, job, seed=spec.seed, progress=_job_progress(sys.stderr),
                    budget=Budget(spec.cpu_seconds), nice=settings.worker_nice)
    try:
        result = run_balance(spec, player)
    except Stopped as exc:
        player.finish(exc.status, exc.error)
        print(f"error: the balance search {exc.status}: {exc.error or exc.status}",
              file=sys.stderr)
        return 1
    player.finish("done")
    if as_json:
        print(json.dumps(result, indent=1), file=out)
        return 0
    for line in answer_lines(result):
        print(line, file=out)
    return 0


def _job_progress(out, every: float = 2.0):
    """A plan's or a balance search's progress callback (services.runner.Progress) printing
    a line when where it stands changes, and otherwise at most one every `every` seconds:
    where it stands, the games played, their rate and an ETA from the games it still
    expects ("ETA -" until that is known)."""
    import time

    from services.demo import duration
    from services.report import games_per_second

    last = {"at": 0.0, "detail": None}

    def progress(p) -> None:
        now = time.monotonic()
        if p.status == "running" and p.detail == last["detail"] and \
                now - last["at"] < every:
            return
        last.update(at=now, detail=p.detail)
        speed = f", {games_per_second(p.games_per_s)}" if p.games_per_s else ""
        eta = f"ETA {duration(p.eta_s)}" if p.eta_s is not None else "ETA -"
        print(f"  {p.detail or p.status}: {p.done:,} games{speed}; {eta}", file=out,
              flush=True)
    return progress


def _eta(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def _serve_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default=None, help="interface to listen on (default "
                   "MEEPLELAB_HOST or 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=None,
                   help="port (default MEEPLELAB_PORT or 8000)")
    p.add_argument("--insecure", action="store_true", help="listen on a non-loopback "
                   "address without a token (anyone who reaches the port may write)")


def _add_play_commands(sub) -> None:
    """`run SPEC` and `demo`: the same output flags (demo: with --table only)."""
    from services.demo import DEMO_QUESTION

    for name, text in (("run", "play an experiment spec (JSON or TOML)"),
                       ("demo", f"start the service with the demo experiment ({DEMO_QUESTION})"
                        ", print its progress and verdicts, and the dashboard URL")):
        p = sub.add_parser(name, help=text)
        if name == "run":
            p.add_argument("spec", help="experiment spec file (.json or .toml)")
            p.add_argument("--yes", action="store_true", help="play it even when its estimated "
                           "CPU cost is above MEEPLELAB_CONFIRM_CPU_SECONDS (without it: "
                           "asked on a terminal, refused otherwise)")
        else:
            p.add_argument("--table", action="store_true",
                           help="play the demo here and print its table instead of serving it")
            _serve_arguments(p)
        only = " (demo: with --table only)" if name == "demo" else ""
        p.add_argument("--out", default=None, help="results folder or pyarrow.fs URI "
                       "(default ./results)" + only)
        p.add_argument("--workers", type=int, default=None,
                       help="local Ray worker processes (default: every core)" + only)
        p.add_argument("--interim-every", type=float, default=None, metavar="SECONDS",
                       help="while the run goes, print every cell's interim figures (valid "
                       "at any look) at most this often (default 10; 0: after every shard)"
                       + only)


def _add_other_commands(sub) -> None:
    """`plan`, `balance`, `report` and `serve`."""
    p = sub.add_parser("plan", help="estimate the games and wall time a spec needs, from a "
                       "short pilot run")
    p.add_argument("spec", help="experiment spec file (.json or .toml)")
    p.add_argument("--half-width", type=float, default=None,
                   help="target half-width on win shares (of the interval at the level 1 - "
                   "stop_when.alpha, 95%% by default), a fraction: 0.01 is 1 point "
                   "(default: the spec's stop_when.half_width, else 0.01)")
    p.add_argument("--delta", type=float, default=None,
                   help="difference from the baseline to detect with 80%% power, a fraction: "
                   "0.05 is 5 points")
    p.add_argument("--pilot-games", type=int, default=200, help="pilot games per cell")
    p.add_argument("--workers", type=int, default=None, help="cores the run will use, and "
                   "the local Ray worker processes the pilot plays on (default: every core)")
    p.add_argument("--seconds", type=float, default=120.0, help="the most the pilot may play, "
                   "in seconds (default 120): a cell that cannot play enough games in it is "
                   "named")
    p = sub.add_parser("balance", help="answer a spec's balance question: the fair value of a "
                       "rule option, or the value of an action kind")
    p.add_argument("spec", help="experiment spec file with a balance section")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")
    p.add_argument("--out", default="results", help="results folder or pyarrow.fs URI for "
                   "its games (default ./results); run again, it resumes from them")
    p.add_argument("--workers", type=int, default=None,
                   help="local Ray worker processes (default: every core)")
    p = sub.add_parser("report", help="write one self-contained HTML report (verdicts, "
                       "figures, provenance, the command that reproduces it) of an experiment")
    p.add_argument("target", help="an experiment id of the service (MEEPLELAB_DB) or a "
                   "results folder written by `meeplelab run`")
    p.add_argument("-o", "--output", default="report.html", help="the file to write "
                   "(default report.html)")
    p.add_argument("--spec", default=None, help="the spec of a results folder that has no "
                   "spec.json")
    p.add_argument("--svg", default=None, metavar="FOLDER", help="also write every figure "
                   "of the report as its own SVG file in FOLDER (<key>.svg)")
    p = sub.add_parser("replay", help="play again exactly the shards of a finished run "
                       "that are missing or damaged (checked against its manifest)")
    p.add_argument("target", help="a results folder written by `meeplelab run`")
    p.add_argument("--spec", default=None, help="the spec of a results folder that has no "
                   "spec.json")
    p.add_argument("--workers", type=int, default=None,
                   help="local Ray worker processes (default: every core)")
    p = sub.add_parser("serve", help="run the API and dashboard (settings: MEEPLELAB_* and "
                       "RAY_ADDRESS, see services/settings.py)")
    _serve_arguments(p)


def parser() -> argparse.ArgumentParser:
    out = argparse.ArgumentParser(prog="meeplelab",
                                  description="Monte Carlo balance analysis of tabletop games")
    sub = out.add_subparsers(dest="command", required=True)
    sub.add_parser("games", help="print the game catalogue")
    _add_play_commands(sub)
    _add_other_commands(sub)
    return out


def serve_command(args) -> int:
    """`meeplelab serve`, and `meeplelab demo` (the service with the demo queued): 0 once
    stopped, 1 when a demo experiment failed (the demo then stops the service itself)."""
    from services import app, demo

    try:
        app.serve(args.host, args.port, demo=args.command == "demo", insecure=args.insecure)
    except (app.RefusedStart, app.PortInUse) as exc:
        print(exc, file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C after a clean stop (uvicorn re-raises it)
        pass
    return 1 if args.command == "demo" and demo.failures() else 0


def main(argv: list[str] | None = None) -> int:
    """The command line; Ctrl-C ends any command with a line saying so, no traceback (a run
    keeps the shards it has written: the same command resumes it)."""
    try:
        return _command(argv)
    except KeyboardInterrupt:
        print("\ninterrupted (Ctrl-C): a run keeps the shards it has written, and the same "
              "command resumes it", file=sys.stderr)
        return 130


def _command(argv: list[str] | None) -> int:
    p = parser()
    args = p.parse_args(argv)
    if args.command == "report":
        return report_command(args.target, args.output, args.spec, args.svg)
    if args.command == "demo" and not args.table:
        given = [flag for flag, value in (("--out", args.out), ("--workers", args.workers),
                                          ("--interim-every", args.interim_every))
                 if value is not None]
        if given:
            p.error(f"{', '.join(given)} only apply to `meeplelab demo --table` (the "
                    "served demo uses the service's settings: MEEPLELAB_RESULTS, "
                    "every core)")
    if args.command == "serve" or (args.command == "demo" and not args.table):
        return serve_command(args)
    if getattr(args, "workers", None) is not None and args.workers < 1:
        p.error("--workers must be >= 1")
    if args.command == "plan":
        if args.seconds <= 0:
            p.error("--seconds must be > 0")
        return plan_spec_file(args.spec, args.half_width, args.delta, args.pilot_games,
                              args.workers, args.seconds)
    if args.command == "games":
        print_catalogue()
        return 0
    if args.command == "balance":  # the answer alone on stdout: Ray's driver prints a
        import contextlib  # cluster's events there (a node lost), which would break --json

        answer = sys.stdout
        with contextlib.redirect_stdout(sys.stderr):
            return balance_spec_file(args.spec, args.json, answer, args.out, args.workers)
    if args.command == "replay":
        return replay_command(args.target, args.spec, args.workers)
    every = 10.0 if args.interim_every is None else args.interim_every
    if args.command == "run":
        return run_spec_file(args.spec, args.out or "results", args.workers, every, args.yes)
    return run_demo_table(args.out or "results", args.workers, every)


def run_demo_table(out_dir: str, workers: int | None, every: float) -> int:
    """`meeplelab demo --table`: the demo's experiments here, one after the other."""
    import time

    from services.demo import DEMO_QUESTION, demo_specs
    from services.spec import ExperimentSpec

    print(f"demo: {DEMO_QUESTION}", file=sys.stderr)
    start = time.monotonic()
    for n, raw in enumerate(demo_specs(), 1):
        spec = ExperimentSpec.model_validate(raw)
        print(f"\n[{n}] {spec.name}: {spec.agents} in every seat", file=sys.stderr)
        code = run_spec(spec, out_dir, workers, every)
        print(f"[{n}] finished {time.monotonic() - start:.0f} s after the start", file=sys.stderr)
        if code:
            return code
    return 0

if __name__ == "__main__":
    sys.exit(main())
