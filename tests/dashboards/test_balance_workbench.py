"""The balance pages as a designer's workbench, in a real headless Chromium: every mistake of
a question at once, the list of past fair-value searches and two answers side by side."""
import json
import time
import urllib.request

from test_balance_page import SEARCH, server  # noqa: F401  (fixture: balance jobs)
from test_browser import _css, _no_page_errors, _wait, browser  # noqa: F401  (fixture)

SCREENS = __import__("pathlib").Path("/work/screens")


def _fresh(browser):
    browser.get("about:blank")
    browser.get_log("browser")


def _type(browser, selector, value):
    box = _css(browser, selector)[0]
    box.clear()
    box.send_keys(value)


def test_four_mistakes_in_a_balance_question_give_four_messages(server, browser):
    from selenium.webdriver.support.ui import Select

    _fresh(browser)
    browser.get(f"{server}/balance")
    _wait(browser, lambda d: _css(d, "#b-option option"), 20, "form not built")
    Select(_css(browser, "#b-game")[0]).select_by_value("golden_island")
    Select(_css(browser, "#b-option")[0]).select_by_value("seat_bonus_gold")
    _type(browser, "#b-low", "10")
    _type(browser, "#b-high", "2")
    Select(_css(browser, "#b-target")[0]).select_by_value("rate")
    _type(browser, "#b-rate", "150")
    _css(browser, "#balance-form details summary")[0].click()
    _type(browser, "#b-precision", "0")
    _type(browser, "#b-max-games", "5")
    _css(browser, "#b-submit")[0].click()
    items = _wait(browser, lambda d: len(_css(d, "#b-errors li")) >= 4 and _css(d, "#b-errors li"),
                  20, "no messages")
    assert sorted(i.get_attribute("data-field") for i in items) == [
        "balance.max_games", "balance.precision", "balance.range", "balance.target"]
    texts = {i.get_attribute("data-field"): i.text for i in items}
    assert texts["balance.range"].startswith("Values from … to (balance.range): ")
    assert "low < high" in texts["balance.range"]
    assert "win rate above 0 and below 1" in texts["balance.target"]
    assert "?job=" not in browser.current_url  # nothing was queued
    _no_page_errors(browser)


def _queue(server, spec) -> str:
    request = urllib.request.Request(f"{server}/api/balance", json.dumps(spec).encode(),
                                     {"Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(request).read())["id"]


def _done(server, bid):
    deadline = time.monotonic() + 120
    while True:
        job = json.loads(urllib.request.urlopen(f"{server}/api/balance/{bid}").read())
        if job["status"] not in ("queued", "running"):
            return job
        assert time.monotonic() < deadline, "the search did not finish"
        time.sleep(0.3)


def _shot(browser, name):
    SCREENS.mkdir(exist_ok=True)
    browser.set_window_size(1300, browser.execute_script(
        "return document.documentElement.scrollHeight") + 60)
    browser.save_screenshot(str(SCREENS / name))
    browser.set_window_size(1300, 1000)


def test_past_searches_are_listed_and_two_answers_are_shown_side_by_side(server, browser):
    greedy = _queue(server, SEARCH)
    random_ = _queue(server, {**SEARCH, "name": "gi random", "agents": "random"})
    jobs = [_done(server, bid) for bid in (greedy, random_)]
    assert [j["status"] for j in jobs] == ["done", "done"]
    listed = json.loads(urllib.request.urlopen(f"{server}/api/balance").read())
    mine = {s["id"]: s for s in listed}
    for job in jobs:
        s = mine[job["id"]]
        assert s["status"] == "done" and s["question"] == "seat_bonus_gold"
        assert s["games_played"] == job["games_played"] and s["cpu_seconds"] > 0
        (answer,) = s["answers"]
        assert answer["seat"] == 1 and answer["players"] == 2
        assert answer["short"].startswith("seat_bonus_gold")

    _fresh(browser)
    browser.get(f"{server}/balance/searches")
    _wait(browser, lambda d: len(_css(d, "input.pick")) >= 2, 20, "no searches listed")
    row = _css(browser, f"tr[data-id='{greedy}']")[0]
    assert mine[greedy]["answers"][0]["short"] in row.text and "done" in row.text
    _shot(browser, "searches.png")
    assert _css(browser, "#compare-button")[0].get_attribute("disabled")
    for bid in (greedy, random_):
        _css(browser, f"input.pick[value='{bid}:0']")[0].click()
    _css(browser, "#compare-button")[0].click()
    chart = _wait(browser, lambda d: (c := _css(d, "#compare-chart svg")) and c[0], 20,
                  "no chart side by side")
    curves = chart.find_elements("css selector", "polyline.curve")
    assert len(curves) == 2
    assert curves[0].get_attribute("stroke") != curves[1].get_attribute("stroke")
    legend = [t.text for t in chart.find_elements("css selector", "text.legend-entry")]
    assert any("greedy" in t for t in legend) and any("random" in t for t in legend)
    boxes = _css(browser, "#compare-answers .answer-box")
    shown = {b.find_element("css selector", "h3").text: b.text for b in boxes}
    assert sorted(shown) == ["gi", "gi random"]
    for job in jobs:
        assert job["result"]["cells"][0]["sentence"] in shown[job["name"]]
    assert f"answer={greedy}%3A0" in browser.current_url  # the view has its own address
    _shot(browser, "side-by-side.png")
    _no_page_errors(browser)


def test_answers_of_different_options_do_not_share_a_chart(server):
    import urllib.error

    one = _queue(server, SEARCH)
    other = _queue(server, {**SEARCH, "balance": {**SEARCH["balance"], "option": "max_rounds",
                                                   "range": [20, 40], "seat": -1}})
    for bid in (one, other):
        _done(server, bid)
    try:
        urllib.request.urlopen(f"{server}/api/balance/compare.svg?answer={one}:0&answer={other}:0")
        raise AssertionError("two options shared a chart")
    except urllib.error.HTTPError as error:
        assert error.code == 409 and "one option" in json.loads(error.read())["detail"]
    try:
        urllib.request.urlopen(f"{server}/api/balance/compare.svg?answer={one}:0&answer={one}:7")
        raise AssertionError("a missing answer was drawn")
    except urllib.error.HTTPError as error:
        assert error.code == 404


def test_two_answers_of_one_search_open_side_by_side_from_their_address(server, browser):
    """A search's answers (here its two player counts; a rung each once a search asks per
    rung) side by side by address: both sentences and both curves on one chart."""
    bid = _queue(server, {**SEARCH, "name": "gi 2-3", "players": [2, 3]})
    job = _done(server, bid)
    assert job["status"] == "done" and len(job["result"]["cells"]) == 2
    _fresh(browser)
    browser.get(f"{server}/balance/searches?answer={bid}:0&answer={bid}:1")
    chart = _wait(browser, lambda d: (c := _css(d, "#compare-chart svg")) and c[0], 30,
                  "no chart side by side")
    assert len(chart.find_elements("css selector", "polyline.curve")) == 2
    legend = [t.text for t in chart.find_elements("css selector", "text.legend-entry")]
    assert any(t.startswith("2 players, greedy") for t in legend), legend
    assert any(t.startswith("3 players, greedy") for t in legend), legend
    texts = [b.text for b in _css(browser, "#compare-answers .answer-box")]
    for cell, text in zip(job["result"]["cells"], texts):
        assert cell["sentence"] in text
    _no_page_errors(browser)
