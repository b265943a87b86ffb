"""The dashboard as a designer's workbench, in a real headless Chromium (as test_browser.py):
the experiment form asks every question a spec can (until decided, restricted play, a
strength ladder, seat compensation) in a designer's words, and lists every mistake at once."""
import json
import time
import urllib.request

import core_cy
from test_browser import _css, _no_page_errors, _wait, browser, server  # noqa: F401 (fixtures)

SCREENS = __import__("pathlib").Path("/work/screens")
GOLDEN = "golden_island"  # a competitive game whose greedy agent can forbid its action kinds


def _open(browser, server, game=GOLDEN):
    from selenium.webdriver.support.ui import Select

    browser.get("about:blank")
    browser.get_log("browser")
    browser.get(f"{server}/new")
    _wait(browser, lambda d: _css(d, "fieldset.arm [data-option]"), 20, "form not built")
    Select(_css(browser, "#f-game")[0]).select_by_value(game)
    _wait(browser, lambda d: _css(d, "#f-restrict .restrict-seat")
          and _css(d, "#game-help")[0].text.startswith(core_cy.load(game).info()["title"]),
          20, f"form not rebuilt for {game}")


def _type(browser, selector, value):
    box = _css(browser, selector)[0]
    box.clear()
    box.send_keys(value)


def _experiment(server, eid):
    return json.loads(urllib.request.urlopen(f"{server}/api/experiments/{eid}").read())


def test_the_form_reads_in_a_designers_words(server, browser):
    """Values as words, seats from 1, an ASSUMPTION said once in its help, per-seat
    compensation as numbers in the game's currency, seed and shard size folded away."""
    _open(browser, server)
    info = core_cy.load(GOLDEN).info()["rules"]["properties"]
    first = _css(browser, "fieldset.arm select[data-option='first_player']")[0]
    shown = [o.text for o in first.find_elements("css selector", "option")]
    assert shown == ["seat 1", "random"]  # the spec's seat_0, counted from 1
    for select in _css(browser, "fieldset.arm select[data-option]"):
        for option in select.find_elements("css selector", "option"):
            assert "_" not in option.text, option.text
    for name, schema in info.items():
        (box,) = _css(browser, f"fieldset.arm [data-option='{name}']:is(div, details)")
        text = box.get_attribute("textContent")
        assert text.count("assumption") == (1 if schema.get("x-assumption") else 0), name
    seats = _css(browser, "fieldset.arm span.seats[data-option='seat_bonus_gold'] input")
    assert len(seats) == 3  # the preset's 3 players
    assert "Seat compensation (gold)" in _css(
        browser, "fieldset.arm div[data-option='seat_bonus_gold']")[0].text
    form = _css(browser, "#experiment-form")[0].text  # what shows (the spec reference folded)
    assert "seat 0" not in form.lower() and "seat_0" not in form  # seats count from 1
    assert not _css(browser, "#f-seed")[0].is_displayed()
    assert not _css(browser, "#f-shard")[0].is_displayed()
    labels = [e.text for e in _css(browser, ".restrict-seat .label")]
    assert labels == ["Seat 1 does not play:", "Seat 2 does not play:", "Seat 3 does not play:"]
    kinds = [e.get_attribute("value") for e in
             _css(browser, ".restrict-seat[data-seat='0'] input.forbid")]
    assert kinds == core_cy.load(GOLDEN).info()["agents"]["greedy"]["parameters"][
        "properties"]["forbid"]["x-kinds"]
    SCREENS.mkdir(exist_ok=True)
    browser.execute_script("document.getElementById('f-stop-decided').click()")
    browser.set_window_size(1300, browser.execute_script(
        "return document.documentElement.scrollHeight") + 100)
    browser.save_screenshot(str(SCREENS / "form.png"))
    browser.set_window_size(1300, 1000)
    _no_page_errors(browser)


def test_an_until_decided_experiment_with_restricted_play_built_from_the_form(server, browser):
    _open(browser, server)
    _css(browser, "input[name=preset][value=fast]")[0].click()  # greedy
    _type(browser, "#f-name", "no stealing for seat 1")
    _css(browser, "#f-stop-decided")[0].click()
    assert _css(browser, "#f-margin")[0].is_displayed()
    for field, value in (("#f-games", "200"), ("#f-margin", "10"), ("#f-cap", "4000")):
        _type(browser, field, value)
    assert "12,000 games" not in _css(browser, "#cap-help")[0].text
    assert "4,000 games" in _css(browser, "#cap-help")[0].text  # one arm, one player count
    _css(browser, "#advanced summary")[0].click()
    _type(browser, "#f-shard", "100")
    _css(browser, ".restrict-seat[data-seat='0'] input.forbid[value='steal']")[0].click()
    _css(browser, "#submit")[0].click()
    _wait(browser, lambda d: "/experiments/" in d.current_url, 20, "not redirected")
    eid = browser.current_url.rsplit("/", 1)[1]
    spec = _experiment(server, eid)["spec"]
    assert spec["stop_when"] == {"max_games": 4000, "delta": 0.1}
    assert spec["agents"] == ["greedy(forbid=steal)", "greedy", "greedy"]
    assert spec["games_per_arm"] == 200 and spec["shard_size"] == 100
    item = _wait(browser, lambda d: _css(d, "#status")[0].text == "done"
                 and (i := _css(d, "#headline .headline-item.decided")) and i[0], 120,
                 "the run did not end decided")
    assert "decided" in item.text
    exp = _experiment(server, eid)
    assert exp["progress"]["done"] < 3 * 4000  # it stopped before the cap
    _no_page_errors(browser)


def test_four_mistakes_give_four_messages_naming_their_fields(server, browser):
    _open(browser, server)
    _type(browser, "#f-name", " ")
    _css(browser, "#f-name")[0].clear()
    _css(browser, "#f-stop-decided")[0].click()
    for field, value in (("#f-games", "0"), ("#f-margin", "150"), ("#f-cap", "-3")):
        _type(browser, field, value)
    _css(browser, "#submit")[0].click()
    items = _wait(browser, lambda d: len(_css(d, "#form-errors li")) >= 4
                  and _css(d, "#form-errors li"), 10, "no messages")
    fields = [i.get_attribute("data-field") for i in items]
    assert fields == ["name", "games_per_arm", "stop_when.delta", "stop_when.max_games"]
    texts = [i.text for i in items]
    assert texts[1].startswith("Games per wave (games_per_arm): must be a whole number")
    assert "below 100 points" in texts[2] and "at least 1" in texts[3]
    assert browser.current_url.endswith("/new")
    _no_page_errors(browser)


def test_the_services_mistakes_are_listed_one_a_line_in_the_forms_words(server, browser):
    """Mistakes only the service can see (against the game) come back all at once, each on
    its line with the form's label."""
    _open(browser, server)
    _css(browser, "input[name=preset][value=fast]")[0].click()
    for seat in ("1", "2"):
        _css(browser, f".restrict-seat[data-seat='{seat}'] input.forbid[value='steal']")[0].click()
    _css(browser, "input.players[value='3']")[0].click()
    _css(browser, "input.players[value='4']")[0].click()  # seat 4 appears, unrestricted
    assert len(_css(browser, ".restrict-seat")) == 4
    _css(browser, "input.players[value='2']")[0].click()  # two counts: restrictions need one
    _css(browser, "#submit")[0].click()
    (item,) = _wait(browser, lambda d: _css(d, "#form-errors li"), 10, "no message")
    assert item.get_attribute("data-field") == "agents" and "one player count" in item.text
    _no_page_errors(browser)


LEGENDS = """return [...document.querySelectorAll('.chart-box')].map((box) => ({
  key: box.dataset.figure,
  width: box.querySelector('svg').getBoundingClientRect().width,
  legend: [...box.querySelectorAll('text.legend-entry')].map((t) => {
    const mark = t.previousElementSibling;
    return [t.textContent, mark.getAttribute('fill') || mark.getAttribute('stroke')];
  }),
  bars: [...box.querySelectorAll('rect.bar, rect.segment, path.hist')].map(
    (m) => m.getAttribute('fill'))}));"""


def _colours_of(figures, arms):
    """arm -> every colour its legend entries have, over the figures; outcome colours."""
    seen, others = {a: set() for a in arms}, set()
    for f in figures:
        for text, colour in f["legend"]:
            if text in seen:
                seen[text].add(colour)
            elif not text.startswith(("95%", "fair", "no ", "confidence")):
                others.add(colour)
    return seen, others


def test_one_arm_has_one_colour_in_every_chart_of_its_page_and_report(server, browser,
                                                                      tmp_path):
    """Three difficulties of the Forbidden Desert: the team win rate, the difference, how
    games end, per adventurer and game length all give an arm one colour, the endings
    colours of their own; the answer's figures are wide; the ended run shows no rate."""
    arms = ["novice", "normal", "elite"]
    spec = {"name": "three difficulties", "game": "forbidden_desert", "players": 3,
            "agents": "planner", "arms": {a: {"difficulty": a} for a in arms},
            "games_per_arm": 200, "shard_size": 100, "seed": 5}
    request = urllib.request.Request(server + "/api/experiments", json.dumps(spec).encode(),
                                     {"Content-Type": "application/json"})
    eid = json.loads(urllib.request.urlopen(request).read())["id"]
    browser.get("about:blank")
    browser.get_log("browser")
    browser.get(f"{server}/experiments/{eid}")
    _wait(browser, lambda d: _css(d, "#status") and _css(d, "#status")[0].text == "done"
          and len(_css(d, ".chart-box svg.chart")) >= 5 and not _css(d, "#interim"), 120,
          "no final figures")
    time.sleep(0.5)
    page = browser.execute_script(LEGENDS)
    seen, outcomes = _colours_of(page, arms)
    assert all(len(c) == 1 for c in seen.values()), seen  # one colour per arm, everywhere
    arm_colours = {next(iter(c)) for c in seen.values()}
    assert len(arm_colours) == 3 and outcomes and not outcomes & arm_colours
    keys = [f["key"] for f in page]
    assert sum(len([1 for t, _ in f["legend"] if t in arms]) > 0 for f in page) >= 4, keys
    for f in page:  # every bar and curve of an arm's chart in an arm's colour
        if f["key"].endswith(("team", "difference", "length", "adventurer")):
            assert set(f["bars"]) <= arm_colours, f["key"]
    wide = {f["key"]: f["width"] for f in page}
    assert wide["3p-team"] > 900 and wide["3p-length"] < 600  # the answer full width
    browser.set_window_size(1300, browser.execute_script(
        "return document.documentElement.scrollHeight") + 60)
    browser.save_screenshot(str(SCREENS / "experiment-colours.png"))
    browser.set_window_size(1300, 1000)
    status = _css(browser, "#status-line")[0].text
    assert "/s" not in status and "ETA" not in status  # an ended run: no live rate
    path = tmp_path / "report.html"
    path.write_bytes(urllib.request.urlopen(f"{server}/api/experiments/{eid}/report.html").read())
    browser.get(path.as_uri())
    _wait(browser, lambda d: _css(d, ".chart-box svg.chart"), 10, "no figure in the report")
    in_report, _ = _colours_of(browser.execute_script(LEGENDS), arms)
    assert in_report == seen
    browser.get(server + "/")
    row = _wait(browser, lambda d: _css(d, f"tr[data-id='{eid}']"), 20, "not listed")[0]
    assert row.find_element("css selector", "td.rate").text == "–"
    assert row.find_element("css selector", "td.eta").text == "–"
    _no_page_errors(browser)


def test_the_plan_of_an_until_decided_question_is_beside_its_cap(server, browser):
    """Until decided: the cap's cost at the preset's measured speed, and Plan simulates the
    stopping rule itself (its expected games), with nothing submitted."""
    _open(browser, server)
    _css(browser, "input[name=preset][value=fast]")[0].click()
    _css(browser, "#f-stop-decided")[0].click()
    for field, value in (("#f-games", "100"), ("#f-margin", "10"), ("#f-cap", "2000")):
        _type(browser, field, value)
    cost = _css(browser, "#cap-help")[0].text
    assert "At most 2,000 games in all (1 arm × 1 player count)" in cost
    assert "of one core at the preset's measured speed" in cost
    assert not _css(browser, "#f-half-width")[0].is_displayed()  # the run's own rule is planned
    _css(browser, "#plan")[0].click()
    verdict = _wait(browser, lambda d: (e := _css(d, "#plan-verdict")) and e[0].text and e[0],
                    90, "no plan shown")
    assert "stop_when.delta" in verdict.text and "±10 points" in verdict.text
    assert _css(browser, "#plan-games")[0].text.replace(",", "").isdigit()
    assert browser.current_url.endswith("/new")
    _no_page_errors(browser)
