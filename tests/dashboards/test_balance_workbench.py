"""The balance pages as a designer's workbench, in a real headless Chromium: every mistake of
a question at once, the list of past fair-value searches and two answers side by side."""
import json
import time
import urllib.request

from test_balance_page import SEARCH, server  # noqa: F401  (fixture: balance jobs, no Ray)
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
