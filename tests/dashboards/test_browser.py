"""The dashboard in a real headless Chromium (Debian's chromium + chromium-driver, installed by
tests/setup_browser.sh): load the pages, submit a small experiment through the form built
from the catalogue, and see its charts appear.  Never skipped: a missing browser fails."""
import re
import shutil
import time

import pytest
from service_support import GAME, INFO, _running, enum_option, small_spec

import core_cy
from core_cy.catalogue import presets
from services.app import create_app
from services.settings import Settings, owner_of

PRESETS = {name: presets(name) for name in core_cy.game_names()}  # each game's folder
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1300,1000"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    with _running(create_app(db=str(root / "r.db"), results=str(root / "results"))) as url:
        yield url


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    assert CHROMIUM and CHROMEDRIVER, ("chromium and chromedriver are required: run "
                                       "tests/setup_browser.sh (apt-get install chromium "
                                       "chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def _wait(driver, condition, timeout=45, message=""):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # The page re-renders while an experiment runs: an element found a moment ago may be
    # replaced before it is read, so a stale element means "look again", not a failure.
    return WebDriverWait(driver, timeout, poll_frequency=0.2,
                         ignored_exceptions=(StaleElementReferenceException,)
                         ).until(condition, message)


def _css(driver, selector):
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)


def _no_page_errors(driver):
    """No script error and no failed request except the API's expected answers: 409 (no
    results yet, while the page polls a running experiment) and 422 (a rejected spec)."""
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"
              and not (e["source"] == "network" and ("(Conflict)" in e["message"]
                                                     or "(Unprocessable" in e["message"]))]
    assert not errors, errors


def _open_form(browser, server):
    """The new-experiment page with GAME chosen (the catalogue lists games by name)."""
    from selenium.webdriver.support.ui import Select

    browser.get(f"{server}/new")
    _wait(browser, lambda d: _css(d, "fieldset.arm [data-option]"), 20, "form not built")
    Select(_css(browser, "#f-game")[0]).select_by_value(GAME)
    _wait(browser, lambda d: _css(d, "fieldset.arm [data-option='%s']" % next(iter(
        INFO["rules"]["properties"]))), 20, f"form not rebuilt for {GAME}")


def test_form_is_built_from_the_rule_schemas(server, browser):
    _open_form(browser, server)
    props = INFO["rules"]["properties"]
    for name, schema in props.items():
        (box,) = _css(browser, f"fieldset.arm [data-option='{name}']:is(div, details)")
        if "enum" in schema:
            assert box.find_element("css selector", "select").get_attribute("value") == \
                str(schema["default"])
        elif schema["type"] == "boolean":
            assert box.find_element("css selector", "input[type=checkbox]").is_selected() == \
                schema["default"]
        elif schema["type"] == "integer":
            assert box.find_element("css selector", "input[type=number]").get_attribute(
                "value") == str(schema["default"])
        elif schema.get("x-analysis"):  # a per-seat compensation: a number per seat
            assert box.find_elements("css selector", "span.seats input[type=number]")
        else:  # data values: a JSON text area, collapsed
            assert box.tag_name == "details" and box.get_attribute("open") is None
    counts = [int(c.get_attribute("value")) for c in _css(browser, "input.players")]
    assert counts == list(range(INFO["min_players"], INFO["max_players"] + 1))
    _no_page_errors(browser)


def test_form_shows_the_field_of_a_rejected_spec(server, browser):
    _open_form(browser, server)
    games = _css(browser, "#f-games")[0]
    games.clear()
    games.send_keys("0")
    _css(browser, "#submit")[0].click()
    error = _wait(browser, lambda d: (e := _css(d, "#form-errors")) and e[0].is_displayed()
                  and e[0], 20, "no error shown")
    assert "games_per_arm" in error.text
    assert browser.current_url.endswith("/new")


def test_plan_button_shows_the_games_and_time_the_spec_needs(server, browser, tmp_path):
    """The form's Plan button queues a plan job and shows its result: the games per arm are
    those the plan of the same spec gives (the pilot is seeded), with a wall time."""
    from services.plan import plan_experiment
    from services.runner import Player
    from services.spec import ExperimentSpec

    _open_form(browser, server)
    _css(browser, "input[name=preset][value=fast]")[0].click()
    for field, value in (("#f-games", "300"), ("#f-half-width", "5")):
        box = _css(browser, field)[0]
        box.clear()
        box.send_keys(value)
    _css(browser, "#plan")[0].click()
    games = _wait(browser, lambda d: (e := _css(d, "#plan-games")) and e[0].text and e[0],
                  60, "no plan shown")
    spec = ExperimentSpec.model_validate({
        "game": GAME, "players": PRESETS[GAME]["players"],
        "agents": PRESETS[GAME]["presets"]["fast"]["agent"],
        "arms": {"baseline": {}}, "games_per_arm": 300, "seed": 0})
    pilot = Player(spec.game, str(tmp_path), "pilot", seed=spec.seed)
    expected = plan_experiment(spec, pilot, half_width=0.05)["games_per_cell"]
    assert int(games.text.replace(",", "")) == expected
    assert _css(browser, "#plan-time")[0].text.endswith("s")
    assert _css(browser, "#plan-verdict")[0].text.startswith("About ")
    assert len(_css(browser, "#plan-result table.data tbody tr")) == 1
    assert browser.current_url.endswith("/new")  # planning submits nothing
    _no_page_errors(browser)


def test_submit_experiment_and_see_its_charts(server, browser):
    option, values = enum_option()
    _open_form(browser, server)
    _css(browser, "input[name=preset][value=fast]")[0].click()
    name = _css(browser, "#f-name")[0]
    name.clear()
    name.send_keys("from the browser")
    _css(browser, "#advanced summary")[0].click()  # seed and shard size are folded away
    for field, value in (("#f-games", "300"), ("#f-shard", "100"), ("#f-seed", "3")):
        box = _css(browser, field)[0]
        box.clear()
        box.send_keys(value)
    _css(browser, "#add-arm")[0].click()
    second = _css(browser, "fieldset.arm")[1]
    from selenium.webdriver.support.ui import Select

    Select(second.find_element("css selector", f"select[data-option='{option}']")) \
        .select_by_value(str(values[1]))
    _css(browser, "#submit")[0].click()
    _wait(browser, lambda d: "/experiments/" in d.current_url, 20, "not redirected")
    eid = browser.current_url.rsplit("/", 1)[1]

    # the win-share chart: one bar per seat per arm, each with an error bar
    players = PRESETS[GAME]["players"]
    _wait(browser, lambda d: len(_css(d, "section.players svg.chart rect.bar")) >= 2 * players,
          50, "no win-share chart appeared")
    _wait(browser, lambda d: _css(d, "#status")[0].text == "done" and not _css(d, "#interim")
          and _css(d, "section.players table.data"), 60, "not done")  # charts come while running too
    time.sleep(0.5)  # the final results are loaded once; let them settle
    (section,) = _css(browser, "section.players")
    assert section.get_attribute("data-players") == str(players)
    charts = section.find_elements("css selector", "svg.chart")
    # win share, the difference from the baseline, game length, a score histogram per seat
    assert len(charts) == 3 + players
    assert len(charts[0].find_elements("css selector", "rect.bar")) == 2 * players
    assert len(charts[0].find_elements("css selector", "line.errorbar")) == 3 * 2 * players
    assert len(charts[1].find_elements("css selector", "rect.bar")) == players
    assert len(charts[2].find_elements("css selector", "path.hist")) == 2
    headers = [h.text for h in section.find_elements("css selector", "h3")]
    assert headers[0] == "Seats" and headers[-1].startswith("Each arm against ")
    compare = section.find_element("css selector", "table[data-table$='-compare']")
    assert len(compare.find_elements("css selector", "tbody tr")) == players
    marked = compare.find_elements("css selector", "tbody tr.significant")
    assert all(" yes" in row.text for row in marked)
    _no_page_errors(browser)

    # the list shows it as done
    browser.get(server + "/")
    row = _wait(browser, lambda d: _css(d, f"tr[data-id='{eid}']"), 20)[0]
    assert "from the browser" in row.text and "done" in row.text and GAME


def test_cooperative_experiment_shows_one_team_result_per_game(server, browser):
    """Forbidden Desert: team win rate per arm, its difference from the baseline, how games
    end (stacked), team win rate per adventurer and game length; no per-seat bars, fair line, tie rate or score histograms."""
    import json
    import urllib.request

    spec = {"name": "desert in the browser", "game": "forbidden_desert", "players": 3,
            "agents": "planner", "arms": {"novice": {"difficulty": "novice"},
                                          "legendary": {"difficulty": "legendary"}},
            "games_per_arm": 200, "shard_size": 100, "seed": 1}
    request = urllib.request.Request(server + "/api/experiments", json.dumps(spec).encode(),
                                     {"Content-Type": "application/json"})
    eid = json.loads(urllib.request.urlopen(request).read())["id"]
    browser.get(f"{server}/experiments/{eid}")
    _wait(browser, lambda d: _css(d, "#status") and _css(d, "#status")[0].text == "done"
          and _css(d, "section.players svg.chart rect.segment") and not _css(d, "#interim")
          and _css(d, "section.players table.data"), 90, "no final cooperative charts")
    time.sleep(0.5)  # the final figures are drawn once; let that draw finish
    (section,) = _css(browser, "section.players")
    titles = _titles(section)
    assert titles[0].startswith("Team win rate per arm")
    assert titles[1].startswith("Difference from novice in team win rate")
    assert titles[2].startswith("How games end")
    assert any("per adventurer" in t for t in titles) and any("Game length" in t for t in titles)
    assert not any("seat" in t.lower() or "Score" in t for t in titles)
    team = section.find_elements("css selector", "svg.chart")[0]
    assert len(team.find_elements("css selector", "rect.bar")) == 2  # one bar per arm
    assert not team.find_elements("css selector", "line.reference")  # no fair line
    assert "tie rate" not in section.text
    assert len(section.find_elements("css selector", "ul.verdicts li")) == 2 + 1  # and the test
    compare_rows = section.find_element("css selector", "table[data-table$='-compare']") \
        .find_elements("css selector", "tbody tr")
    assert len(compare_rows) == 1  # the team result is one test
    _no_page_errors(browser)


def _titles(section) -> list[str]:
    """The figures' titles (each SVG's <title>: its visible title may wrap over lines)."""
    return [t.get_attribute("textContent") for t in
            section.find_elements("css selector", ".chart-box svg.chart > title")]


def _post(server, spec) -> str:
    import json
    import urllib.request

    request = urllib.request.Request(server + "/api/experiments", json.dumps(spec).encode(),
                                     {"Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(request).read())["id"]


def test_agent_parameters_come_from_the_agent_schema(server, browser):
    """Choosing the search agent shows its parameters with their defaults; the submitted spec
    names the values that differ from them."""
    import json
    import urllib.request

    from selenium.webdriver.support.ui import Select

    _open_form(browser, server)
    assert not _css(browser, "#f-custom")[0].is_displayed()  # presets come first
    _css(browser, "input[name=preset][value=custom]")[0].click()
    # random takes one parameter only, the restriction (forbid)
    assert list(INFO["agents"]["random"]["parameters"]["properties"]) == ["forbid"]
    assert {e.get_attribute("data-option")
            for e in _css(browser, "#f-agent-params [data-option]")} <= {"forbid"}
    Select(_css(browser, "#f-agent")[0]).select_by_value("mcts")
    props = INFO["agents"]["mcts"]["parameters"]["properties"]
    boxes = _wait(browser, lambda d: _css(d, "#f-agent-params div.option"), 10, "no fields")
    # every parameter but the lists of action kinds (forbid, light: set in a spec, not here)
    assert [b.get_attribute("data-option") for b in boxes] == \
        [p for p, schema in props.items() if "x-kinds" not in schema]
    assert {"forbid", "light"} <= set(props) - {b.get_attribute("data-option") for b in boxes}
    iterations = _css(browser, "#f-agent-params input[data-option='iterations']")[0]
    assert iterations.get_attribute("value") == str(props["iterations"]["default"])
    iterations.clear()
    iterations.send_keys("3")
    Select(_css(browser, "#f-agent-params select[data-option='rollout']")[0]) \
        .select_by_value("random")
    _css(browser, "#submit")[0].click()
    _wait(browser, lambda d: "/experiments/" in d.current_url, 20, "not redirected")
    eid = browser.current_url.rsplit("/", 1)[1]
    exp = json.loads(urllib.request.urlopen(f"{server}/api/experiments/{eid}").read())
    assert exp["spec"]["agents"] == "mcts(iterations=3, rollout=random)"
    urllib.request.urlopen(urllib.request.Request(f"{server}/api/experiments/{eid}/cancel",
                                                  method="POST"))


def test_a_ladder_experiment_charts_seat_advantage_per_rung(server, browser):
    rungs = ["random", "greedy"]
    eid = _post(server, {"name": "ladder in the browser", "game": GAME,
                         "players": INFO["min_players"], "ladder": rungs, "arms": {"base": {}},
                         "games_per_arm": 200, "shard_size": 100, "seed": 2})
    browser.get(f"{server}/experiments/{eid}")
    _wait(browser, lambda d: _css(d, "#status") and _css(d, "#status")[0].text == "done"
          and _css(d, "#ladder svg.chart") and not _css(d, "#interim"), 90, "no ladder chart")
    time.sleep(0.5)  # the final figures are drawn once; let that draw finish
    (chart,) = _css(browser, "#ladder svg.chart")
    labels = [t.text for t in chart.find_elements("css selector", "text.tick")]
    assert rungs[0] in labels and rungs[1] in labels  # rungs on the x axis, weakest first
    assert labels.index(rungs[0]) < labels.index(rungs[1])
    players = INFO["min_players"]
    assert len(chart.find_elements("css selector", "rect.bar")) == len(rungs) * players
    assert len(chart.find_elements("css selector", "line.errorbar")) == 3 * len(rungs) * players
    assert chart.find_elements("css selector", "line.reference")  # no advantage: 0
    agreement, verdict = _css(browser, "#ladder ul.verdicts li")
    assert re.search(r"the (stronger|weaker) rung (agrees|reverses|is undecided)", agreement.text)
    assert re.search(r"the seats' advantages are (not )?stable", verdict.text)
    assert f"between {rungs[0]} and {rungs[1]}" in verdict.text
    _no_page_errors(browser)


def test_api_docs_render_offline(server, browser):
    """Swagger UI from the local package renders the OpenAPI 3.1 document."""
    browser.get(f"{server}/docs")
    blocks = _wait(browser, lambda d: _css(d, ".opblock-summary-path"), 30, "docs not rendered")
    paths = {b.text.replace("\u200b", "") for b in blocks}
    assert {"/api/games", "/api/experiments", "/api/experiments/{eid}/compare"} <= paths
    _no_page_errors(browser)


def test_the_dashboard_asks_for_the_token_once_per_session(tmp_path, browser):
    """With tokens on reads and writes, the first API answer 401 makes the page ask; the
    token is then kept for the session: a reload and a cancel ask no more."""
    settings = Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"),
                        token="browser-secret-token", protect_reads=True)
    app = create_app(settings, run_worker=False)
    queued = app.state.registry.create(small_spec(), "queued one", GAME, games_total=10,
                                       owner=owner_of("browser-secret-token"))  # its own, to cancel
    with _running(app) as url:
        browser.get(url + "/")
        prompt = _wait(browser, lambda d: _alert(d), 20, "no token prompt")
        prompt.send_keys("browser-secret-token")
        prompt.accept()
        _wait(browser, lambda d: _css(d, f"tr[data-id='{queued}']"), 20, "list not loaded")
        browser.get(f"{url}/experiments/{queued}")
        _wait(browser, lambda d: _css(d, "#status") and _css(d, "#status")[0].text == "queued",
              20, "experiment page not loaded without a second prompt")
        _css(browser, "#cancel")[0].click()
        _wait(browser, lambda d: app.state.registry.get(queued)["status"] == "cancelled", 20,
              "the cancel did not carry the token")
        assert _alert(browser) is None
    browser.execute_script("sessionStorage.clear()")


def test_the_form_asks_before_an_experiment_above_the_cost_limit(tmp_path, browser):
    """Issue 51: above MEEPLELAB_CONFIRM_CPU_SECONDS the API refuses naming confirm_cost; the
    form shows its estimate in a question: no queues nothing, yes queues it."""
    settings = Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res"),
                        confirm_cpu_seconds=1)
    app = create_app(settings, run_worker=False)
    with _running(app) as url:
        _open_form(browser, url)
        _css(browser, "input[name=preset][value=strongest]")[0].click()
        for answer in ("dismiss", "accept"):
            _css(browser, "#submit")[0].click()
            question = _wait(browser, lambda d: _alert(d), 20, "no question")
            assert "estimated CPU cost" in question.text
            getattr(question, answer)()
            if answer == "dismiss":
                _wait(browser, lambda d: "CPU" in _css(d, "#form-errors")[0].text, 10,
                      "the refusal not shown")
                assert app.state.registry.count() == 0
        _wait(browser, lambda d: "/experiments/" in d.current_url, 20, "not redirected")
        [record] = app.state.registry.list(10, 0)
        assert record["spec"]["agents"] == PRESETS[GAME]["presets"]["strongest"]["agent"]


def _alert(driver):
    from selenium.common.exceptions import NoAlertPresentException

    try:
        alert = driver.switch_to.alert
        alert.text  # noqa: B018  (raises when there is none)
        return alert
    except NoAlertPresentException:
        return None


# ---- what a designer reads first: the headline, the list's verdicts, the report ----------------
ARTIFACTS = __import__("pathlib").Path(__file__).resolve().parents[2] / "build" / "artifacts"


def _fresh(browser) -> None:
    """Drop what earlier tests' pages logged (a page left polling a stopped server)."""
    browser.get("about:blank")
    browser.get_log("browser")


def _screenshot(browser, name: str) -> None:
    """Kept for a reviewer to look at (build/artifacts/, not committed)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / f"{name}.png"))


TWO_ARMS = {"name": "seats and coral", "game": "maori", "players": 3, "agents": "greedy",
            "arms": {"standard": {}, "coral": {"board_side": "coral_reef"}},
            "baseline": "standard", "games_per_arm": 300, "shard_size": 150, "seed": 8}


@pytest.fixture(scope="module")
def finished(server):
    """A finished two-arm experiment: (id, its headline from the API)."""
    import json
    import urllib.request

    eid = _post(server, TWO_ARMS)
    deadline = time.monotonic() + 120
    while json.loads(urllib.request.urlopen(f"{server}/api/experiments/{eid}").read())[
            "status"] != "done":
        assert time.monotonic() < deadline, "the experiment did not finish"
        time.sleep(0.3)
    head = json.loads(urllib.request.urlopen(f"{server}/api/experiments/{eid}/headline").read())
    return eid, head


def test_the_page_leads_with_the_headline_naming_the_arm(server, browser, finished):
    _fresh(browser)
    eid, head = finished
    browser.get(f"{server}/experiments/{eid}")
    _wait(browser, lambda d: _css(d, "#headline .headline-item[data-kind=arms]")
          and not _css(d, "#interim"), 60, "no final headline")
    time.sleep(0.5)
    first = _css(browser, "#results > *")[0]
    assert first.get_attribute("id") == "headline"  # the answer comes before the tables
    (item,) = _css(browser, "#headline .headline-item[data-kind=arms]")
    text = item.text
    assert "coral" in text and "standard" in text and "3 players" in text and "greedy" in text
    expected = head["blocks"][1]["items"][0]
    assert expected["status"] in text and expected["answer"] in text
    assert ("decided" if expected["decided"] else "not decided yet") in text
    assert "level:" in text
    seats = _css(browser, "#headline .headline-item[data-kind=seats]")
    assert len(seats) == 2 and "coral, 3 players, greedy" in seats[0].text + seats[1].text
    # the verdict of every seat's comparison, in its section
    section = _css(browser, "section.players[data-players='3']")[0].text
    assert all(s in section for s in expected["sentences"])
    # the comparison table: win share and mean score apart, each its own "significant"; the
    # level said once, under it
    (table,) = _css(browser, "section.players table[data-table='3p-compare']")
    heads = [h.text for h in table.find_elements("css selector", "th")]
    assert "win share change (points)" in heads and "mean score change" in heads
    assert heads.count("significant") == 2 and not any("[" in h for h in heads)
    assert "Intervals: " in table.find_element("xpath", "following-sibling::p[1]").text
    rows = pipelines_compare_rows(finished, server)
    for tr, row in zip(table.find_elements("css selector", "tbody tr"), rows):
        assert ("significant" in tr.get_attribute("class")) == row["win_significant"]
    # the agent is named once, above the seats' table
    assert "agents: greedy in every seat" in _css(browser, "section.players p.agents")[0].text
    _screenshot(browser, "experiment-headline")
    _no_page_errors(browser)


def pipelines_compare_rows(finished, server):
    import json
    import urllib.request

    eid, _ = finished
    return json.loads(urllib.request.urlopen(f"{server}/api/experiments/{eid}/compare").read())


def test_the_list_shows_each_experiments_verdict_and_an_unambiguous_date(server, browser,
                                                                         finished):
    _fresh(browser)

    eid, head = finished
    browser.get(server + "/")
    cell = _wait(browser, lambda d: (c := _css(d, f"tr[data-id='{eid}'] td.verdict"))
                 and c[0].text not in ("", "…", "–") and c[0], 30, "no verdict in the list")
    assert cell.text == head["verdict"]
    assert cell.text.startswith("coral against standard, 3 players, greedy: ")
    row = _css(browser, f"tr[data-id='{eid}']")[0]
    assert re.search(r"\b20\d\d-\d\d-\d\d \d\d:\d\d\b", row.text)
    _screenshot(browser, "experiment-list")
    _no_page_errors(browser)


def test_the_form_opens_on_defaults_that_make_sense_with_presets(server, browser):
    _fresh(browser)
    import json
    import urllib.request

    from selenium.webdriver.support.ui import Select

    table = PRESETS
    browser.get(f"{server}/new")
    _wait(browser, lambda d: _css(d, "input[name=preset]:checked"), 20, "no presets")
    game = _css(browser, "#f-game")[0].get_attribute("value")
    assert not __import__("core_cy").load(game).cooperative  # a seat question first
    for name in ("forbidden_desert", game):
        Select(_css(browser, "#f-game")[0]).select_by_value(name)
        entry = table[name]
        checked = _wait(browser, lambda d: (c := _css(d, "input[name=preset]:checked"))
                        and c[0].get_attribute("value") == entry["preset"] and c[0], 10,
                        f"{name}: not its default preset")
        assert checked.get_attribute("value") == entry["preset"]
        assert [c.get_attribute("value") for c in _css(browser, "input[name=preset]")] == \
            ["fast", "strong", "strongest", "custom"]
        assert [int(c.get_attribute("value")) for c in _css(browser, "input.players:checked")] \
            == [entry["players"]]
        help_text = _css(browser, "#preset-help")[0].text
        assert entry["presets"][entry["preset"]]["agent"] in help_text and "CPU" in help_text
        assert not _css(browser, "#f-custom")[0].is_displayed()  # raw parameters come after
        rate = entry["presets"][entry["preset"]]["games_per_cpu_second"]
        shard = int(_css(browser, "#f-shard")[0].get_attribute("value"))
        assert 100 <= shard <= 5000 and (shard in (100, 5000) or abs(shard - 10 * rate) <= 50)
    if True:  # the cooperative game's default is its team agent
        assert table["forbidden_desert"]["presets"][table["forbidden_desert"]["preset"]][
            "agent"] == "team_search"
    # options read as labels with one line of help, the spec reference behind a toggle
    info = __import__("core_cy").load(game).info()
    name, schema = next(iter(info["rules"]["properties"].items()))
    box = _css(browser, f"fieldset.arm [data-option='{name}']:is(div, details)")[0]
    assert schema["title"] in box.text and schema["x-help"] in box.text
    assert name not in box.text.split(schema["x-help"])[0]  # no snake_case before the help
    _screenshot(browser, "form-defaults")
    # submit with the "fast" preset: the spec names that agent
    _css(browser, "input[name=preset][value=fast]")[0].click()
    _css(browser, "#advanced summary")[0].click()
    for field, value in (("#f-games", "100"), ("#f-shard", "100")):
        box = _css(browser, field)[0]
        box.clear()
        box.send_keys(value)
    _css(browser, "#submit")[0].click()
    _wait(browser, lambda d: "/experiments/" in d.current_url, 20, "not redirected")
    eid = browser.current_url.rsplit("/", 1)[1]
    exp = json.loads(urllib.request.urlopen(f"{server}/api/experiments/{eid}").read())
    assert exp["spec"]["agents"] == table[game]["presets"]["fast"]["agent"]
    assert exp["spec"]["players"] == table[game]["players"]
    _no_page_errors(browser)


def test_the_report_opens_from_disk_with_the_network_off(server, browser, finished,
                                                         tmp_path):
    _fresh(browser)
    import urllib.request

    eid, head = finished
    answer = urllib.request.urlopen(f"{server}/api/experiments/{eid}/report.html")
    assert "attachment" in answer.headers["Content-Disposition"]
    path = tmp_path / "report.html"
    path.write_bytes(answer.read())
    browser.set_network_conditions(offline=True, latency=0, download_throughput=0,
                                   upload_throughput=0)
    try:
        browser.get(path.as_uri())
        charts = _wait(browser, lambda d: _css(d, "svg.chart"), 10, "no chart")
        # win share per seat, difference from the baseline, game length, score per seat
        assert len(charts) == 3 + 3
        assert len(charts[0].find_elements("css selector", "rect.bar")) == 2 * 3
        assert len(charts[1].find_elements("css selector", "rect.bar")) == 3
        assert len(charts[2].find_elements("css selector", "path.hist")) == 2
        for chart in charts:
            assert chart.size["width"] > 200 and chart.size["height"] > 100
        text = _css(browser, "body")[0].text
        assert head["question"] in text and "coral" in text and "Provenance" in text
        resources = browser.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)")
        assert resources == []  # nothing fetched
        _screenshot(browser, "report-offline")
        _no_page_errors(browser)
    finally:
        browser.set_network_conditions(offline=False, latency=0, download_throughput=-1,
                                       upload_throughput=-1)


FIGURES = """return [...document.querySelectorAll('.chart-box')].map((box) => ({
  key: box.dataset.figure,
  texts: [...box.querySelectorAll('svg text, svg title')].map((t) => t.textContent),
  marks: [...box.querySelectorAll('rect.bar, rect.segment, line.errorbar, path.hist')].map(
    (m) => [m.getAttribute('class'), m.getAttribute('y'), m.getAttribute('height'),
            m.getAttribute('y1'), m.getAttribute('y2'), m.getAttribute('d')]),
  width: box.querySelector('svg').getBoundingClientRect().width}));"""


def test_the_page_and_the_report_draw_the_same_figures(server, browser, finished, tmp_path):
    """One drawing path: every figure of the page is in the report, with the same labels,
    numbers and marks, and its numbers are the API's summary."""
    import json
    import urllib.request

    _fresh(browser)
    eid, _head = finished
    listed = json.loads(urllib.request.urlopen(f"{server}/api/experiments/{eid}/figures").read())
    browser.get(f"{server}/experiments/{eid}")
    _wait(browser, lambda d: len(_css(d, ".chart-box svg.chart")) == len(listed)
          and not _css(d, "#interim"), 60, "the page's figures did not appear")
    time.sleep(0.5)
    page = browser.execute_script(FIGURES)
    path = tmp_path / "report.html"
    path.write_bytes(urllib.request.urlopen(f"{server}/api/experiments/{eid}/report.html").read())
    browser.get(path.as_uri())
    _wait(browser, lambda d: _css(d, ".chart-box svg.chart"), 10, "no figure in the report")
    in_report = browser.execute_script(FIGURES)
    assert [f["key"] for f in page] == [f["key"] for f in listed] == [f["key"] for f in in_report]
    for shown, printed in zip(page, in_report):
        assert shown["texts"] == printed["texts"] and shown["marks"] == printed["marks"]
        assert shown["width"] > 300 and printed["width"] > 300
    # the numbers are the summary's, the labels name the axes, the arms and the interval
    rows = json.loads(urllib.request.urlopen(f"{server}/api/experiments/{eid}/summary").read())
    win = next(f for f in page if f["key"] == "3p-win-share")["texts"]
    for r in rows:
        assert (f"{r['arm']}, seat {r['seat'] + 1}: {100 * r['win_share']:.1f}% "
                f"[{100 * r['win_lo']:.1f}%, {100 * r['win_hi']:.1f}%]") in win
    for label in ("win share", "seat", "standard", "coral", "95% interval",
                  "fair share (33.3%)", "0%", "20%"):
        assert label in win, label
    _no_page_errors(browser)


def test_the_page_names_a_damaged_shard_and_offers_its_replay(tmp_path, browser):
    """A finished experiment with one truncated shard: the page says which, how many games
    are not counted and how to replay it, with a button that replays exactly it."""
    from service_support import write_finished

    app = create_app(Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res")),
                     run_worker=False)
    eid, root, manifest = write_finished(app.state.registry, tmp_path / "res", small_spec())
    shard = root / manifest["shards"][2]["path"]
    shard.write_bytes(shard.read_bytes()[:200])
    with _running(app) as url:
        _fresh(browser)
        browser.get(f"{url}/experiments/{eid}")
        _wait(browser, lambda d: _css(d, "#damage"), 60, "no damage notice")
        (notice,) = _css(browser, "#damage")
        assert (f"1 of {len(manifest['shards'])} shards is damaged ("
                f"{manifest['shards'][2]['path']} (truncated)): 100 of "
                f"{manifest['games']:,} games are not counted") in notice.text
        assert _css(browser, "#damage #replay")[0].text == "Replay the damaged shards"
        assert _css(browser, "#headline")  # the figures of the other shards are shown
        _no_page_errors(browser)


def _figure_legend(browser, key: str) -> list[str]:
    return browser.execute_script(
        "return [...document.querySelectorAll(`.chart-box[data-figure='${arguments[0]}'] "
        "text.legend-entry`)].map((t) => t.textContent)", key)


def test_the_fair_line_is_the_fair_share_the_sentence_names(server, browser):
    """The Golden Island with random agents: some games have no winner, so a fair seat wins
    less than 1/3; the chart's dashed line is the fair share its sentence judges against."""
    import json
    import urllib.request

    _fresh(browser)
    eid = _post(server, {"name": "no winner", "game": "golden_island", "players": 3,
                         "agents": "random", "games_per_arm": 200, "shard_size": 100,
                         "seed": 1})
    deadline = time.monotonic() + 120
    while json.loads(urllib.request.urlopen(f"{server}/api/experiments/{eid}").read())[
            "status"] != "done":
        assert time.monotonic() < deadline, "the experiment did not finish"
        time.sleep(0.3)
    browser.get(f"{server}/experiments/{eid}")
    _wait(browser, lambda d: _css(d, ".chart-box[data-figure='3p-win-share'] svg")
          and not _css(d, "#interim"), 60, "no final figure")
    time.sleep(0.5)
    (line,) = [t for t in _figure_legend(browser, "3p-win-share") if t.startswith("fair share")]
    drawn = re.search(r"\(([\d.]+%)\)", line).group(1)
    section = _css(browser, "section.players[data-players='3']")[0].text
    answer = _css(browser, "#headline .headline-item[data-kind=seats]")[0].text
    said = set(re.findall(r"a fair ([\d.]+%)", section + " " + answer))
    assert said == {drawn} and drawn != "33.3%", (said, drawn)
    assert "of the games have no winner" in section
    _no_page_errors(browser)


def test_a_cancelled_experiments_page_and_report_say_cancelled(tmp_path, browser):
    """A run cancelled after 100 games of each cell: its page and its report say it was
    cancelled and how many games it played, and their figures are interim."""
    import urllib.request

    from service_support import write_finished

    app = create_app(Settings(db=str(tmp_path / "r.db"), results=str(tmp_path / "res")),
                     run_worker=False)
    eid, _root, manifest = write_finished(app.state.registry, tmp_path / "res", small_spec(),
                                          status="cancelled", error="cancelled", games=100)
    said = f"This experiment was cancelled after {manifest['games']:,} games"
    with _running(app) as url:
        _fresh(browser)
        browser.get(f"{url}/experiments/{eid}")
        _wait(browser, lambda d: _css(d, "#ended"), 60, "the page does not say it ended")
        assert said in _css(browser, "#ended")[0].text and _css(browser, "#interim")
        assert _css(browser, "#status")[0].text == "cancelled"
        path = tmp_path / "report.html"
        path.write_bytes(urllib.request.urlopen(f"{url}/api/experiments/{eid}/report.html")
                         .read())
        browser.get(path.as_uri())
        _wait(browser, lambda d: _css(d, "#ended"), 10, "the report does not say it ended")
        assert said in _css(browser, "#ended")[0].text and _css(browser, "#interim")
        _no_page_errors(browser)
