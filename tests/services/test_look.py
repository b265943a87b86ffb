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
    assert runner._should_stop(spec, "unused", 100) is False
    shown = _capture(monkeypatch, "summary")
    try:
        cli.interim_lines("unused", spec)
    except StopIteration:
        pass
    record = {"spec": spec.model_dump(mode="json", exclude_unset=True), "status": "running"}
    import asyncio

    api_look = asyncio.run(results.look(delta=None, record=record))
    assert seen == [expected] and shown == [expected] and api_look == expected
