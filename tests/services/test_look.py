"""One rule builds the figures' Look from a spec (ExperimentSpec.look), and the runner's
stopping decision, the API and the CLI all use it: a stop_when level or margin reaches every
one of them."""
import pipelines
from service_support import small_spec

from services import cli, runner
from services.api import results
from services.spec import ExperimentSpec

RULE = {"delta": 0.03, "alpha": 0.01, "min_games": 100, "max_games": 1000}


def test_the_look_follows_stop_when():
    spec = ExperimentSpec.model_validate(small_spec(stop_when=RULE))
    look = spec.look(interim=True)
    assert (look.interim, look.alpha, look.delta, look.planned_games) == (True, 0.01, 0.03,
                                                                           1000)
    assert spec.look(interim=False, delta=0.05).delta == 0.05
    plain = ExperimentSpec.model_validate(small_spec())
    assert plain.look(interim=False) == pipelines.Look(planned_games=200)
    assert look.spread is None and not look.triangle("comparisons")  # the sequences
    stored = ExperimentSpec.model_validate(small_spec(stop_when={**RULE, "spread": 0.4}))
    look = stored.look(interim=True)  # a stored spread: the triangle, looks one wave apart
    assert (look.spread, look.wave_games, look.spread_rows) == (0.4, 200, "comparisons")
    assert look.triangle("comparisons") and not look.triangle("seats")
    assert not stored.look(interim=False).triangle("comparisons")
    one_arm = ExperimentSpec.model_validate(small_spec(stop_when={**RULE, "spread": 0.4},
                                                       arms=None, baseline=None))
    assert one_arm.look(interim=True).triangle("seats")  # one arm: the seats decide


def _capture(monkeypatch, name):
    seen = []

    def fake(*args, look=None, **kw):
        seen.append(look)
        raise StopIteration

    monkeypatch.setattr(pipelines, name, fake)
    return seen


def test_runner_cli_and_api_use_the_same_look(monkeypatch):
    spec = ExperimentSpec.model_validate(small_spec(stop_when=RULE))
    expected = spec.look(interim=True)
    seen = []

    def decided(root, baseline, look):
        seen.append(look)
        return False

    monkeypatch.setattr(pipelines, "decided", decided)
    assert runner._stop_check(spec, "unused", 100)[0] is False
    shown = _capture(monkeypatch, "summary")
    try:
        cli.interim_lines("unused", spec)
    except StopIteration:
        pass
    record = {"spec": spec.model_dump(mode="json", exclude_unset=True), "status": "running"}
    import asyncio

    api_look = asyncio.run(results.look(delta=None, record=record))
    assert seen == [expected] and shown == [expected] and api_look == expected


def test_the_precision_stop_judges_at_the_runs_alpha(monkeypatch):
    """stop_when.half_width with stop_when.alpha: the precision rule (and its estimate of the
    games still needed, the ETA's) judge the intervals at the run's one Look, the fixed-n one
    its finished page shows."""
    spec = ExperimentSpec.model_validate(small_spec(stop_when={
        "half_width": 0.04, "alpha": 0.01, "min_games": 100, "max_games": 1000}))
    seen = []

    def precise(root, half_width, look):
        seen.append(("precise", half_width, look))
        return False

    def games_for_precision(root, half_width, look):
        seen.append(("need", half_width, look))
        return 450

    monkeypatch.setattr(pipelines, "precise", precise)
    monkeypatch.setattr(pipelines, "games_for_precision", games_for_precision)
    stop, end = runner._stop_check(spec, "unused", 100)
    look = spec.look(interim=False)
    assert look.alpha == 0.01 and not look.interim
    assert seen == [("precise", 0.04, look), ("need", 0.04, look)]
    per = spec.games_per_arm  # the rule is checked after each wave: the need rounds up to one
    assert stop is False and end == min(1000, -(-450 // per) * per)
