"""The balance page (/balance) in a real headless Chromium, and its chart
(dashboards/balance_chart.py): the form built from the catalogue starts a fair-value search,
the page shows its progress, then the answer sentence and a chart with round ticks, labelled
axes and a legend that names the confirmation marks; a running search is cancelled from the
page.  The chart's ticks and legend are also checked on a search played here."""
import html
import re
import time
import urllib.request

import pytest
from service_support import _running
from test_browser import _css, _no_page_errors, _wait, browser  # noqa: F401  (fixture)

from dashboards.balance_chart import chart_svg
from dashboards.svg import nice_ticks
from services.app import create_app
from services.balance import run_balance
from services.runner import Player
from services.spec import ExperimentSpec

SEARCH = {"name": "gi", "game": "golden_island", "players": 2, "agents": "greedy", "seed": 3,
          "balance": {"option": "seat_bonus_gold", "seat": 1, "range": [0, 20],
                      "wave_games": 40, "max_games": 600, "confirm_games": 60}}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A served app whose worker answers balance searches (their games: shard tasks)."""
    root = tmp_path_factory.mktemp("balance-page")
    with _running(create_app(db=str(root / "r.db"), results=str(root / "res"))) as url:
        yield url


@pytest.mark.parametrize("lo, hi, integer, expected", [
    (0, 20, True, [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20]),
    (-8.04, 16.5, False, [-5, 0, 5, 10, 15]),
    (-1.3, 2.2, False, [-1, 0, 1, 2]),
    (-0.8, 0.4, False, [-0.8, -0.6, -0.4, -0.2, 0, 0.2, 0.4]),
    (0, 3, True, [0, 1, 2, 3])])
def test_the_ticks_are_round(lo, hi, integer, expected):
    assert nice_ticks(lo, hi, 10 if integer else 6, integer=integer) == expected


def test_the_chart_has_round_ticks_labelled_axes_and_a_legend_for_every_mark(tmp_path):
    spec = ExperimentSpec.model_validate(SEARCH)
    result = run_balance(spec, Player(spec.game, str(tmp_path), "b", seed=spec.seed))
    (cell,) = result["cells"]
    svg = chart_svg(cell, result["option"])
    for tick in re.findall(r'class="ytick"[^>]*>([^<]*)<', svg):
        value = float(tick.replace("\u2212", "-"))
        assert value * 2 == round(value * 2) or value * 10 == round(value * 10), tick
    assert re.findall(r'class="xtick"[^>]*>([^<]*)<', svg)[:3] == ["0", "2", "4"]
    assert 'class="xlabel"' in svg and "seat_bonus_gold (seat 1, 2 players)" in svg
    assert 'class="ylabel"' in svg and "(points)" in svg
    legend = re.findall(r'class="legend-entry"[^>]*>([^<]*)<', svg)
    assert "fitted curve with its 95% band" in legend
    for verdict in {c["verdict"] for c in cell["confirmations"]}:
        assert f"confirmation on fresh deals: {verdict}" in legend
    assert ("fair window: values whose band lies inside" in legend) == bool(
        cell["chart"]["window"])


def _fill(browser, server, agents: str, max_games: int, confirm: int,  # noqa: F811
          seat: str = "1", players: str = "2"):
    from selenium.webdriver.support.ui import Select

    browser.get(f"{server}/balance")
    _wait(browser, lambda d: _css(d, "#b-option option"), 30, "the form was not built")
    Select(_css(browser, "#b-game")[0]).select_by_value("golden_island")
    Select(_css(browser, "#b-option")[0]).select_by_value("seat_bonus_gold")
    Select(_css(browser, "#b-seat")[0]).select_by_value(seat)
    for box in _css(browser, "input.b-players"):
        if box.is_selected() != (box.get_attribute("value") == players):
            box.click()
    _css(browser, "details summary")[0].click()
    for field, value in (("#b-low", "0"), ("#b-high", "20"), ("#b-agents", agents),
                         ("#b-max-games", str(max_games)), ("#b-confirm", str(confirm)),
                         ("#b-seed", "3")):
        box = _css(browser, field)[0]
        box.clear()
        box.send_keys(value)
    _css(browser, "#b-submit")[0].click()
    _wait(browser, lambda d: "job=" in d.current_url, 20, "no job started")
    return browser.current_url.rsplit("job=", 1)[1]


def test_the_form_starts_a_search_that_shows_progress_then_the_answer(server, browser):  # noqa: F811
    """The page is in the navigation; the form (game, option, seat, range, players, agents)
    starts a search; the page shows its progress while it runs, then the answer sentence
    and the chart with its legend."""
    browser.get(f"{server}/")
    assert _css(browser, "nav a[href='/balance']")
    _fill(browser, server, "greedy", 3000, 400)
    running = _wait(browser, lambda d: _css(d, "#b-status")[0].text == "running"
                    and "searching seat_bonus_gold" in _css(d, "#b-detail")[0].text
                    and re.search(r"[1-9][0-9,]* games played", _css(d, "#b-detail")[0].text)
                    and _css(d, "#b-detail")[0].text, 120, "no games shown while it runs")
    assert "ETA" in running, running
    _wait(browser, lambda d: _css(d, "#b-status")[0].text == "done", 240, "not done")
    answer = _wait(browser, lambda d: _css(d, "p.answer"), 20)[0].text
    assert answer.startswith("seat 1 of 2 under greedy"), answer
    legend = _wait(browser, lambda d: _css(d, "figure.balance-chart .legend-entry"), 20)
    texts = [e.text for e in legend]
    assert "fitted curve with its 95% band" in texts
    assert any(t.startswith("confirmation on fresh deals: ") for t in texts), texts
    assert _css(browser, "#b-cancel")[0].is_displayed() is False
    # the shareable report: the same answer and chart, self-contained
    link = _css(browser, "#b-report")[0].get_attribute("href")
    with urllib.request.urlopen(link) as sent:
        assert "attachment" in sent.headers["Content-Disposition"]
        page = sent.read().decode()
    assert answer in html.unescape(page) and "confirmation on fresh deals: " in page
    assert "<script" not in page and "meeplelab balance spec.json" in page
    _no_page_errors(browser)


def test_a_running_search_is_cancelled_from_the_page(server, browser):  # noqa: F811
    jid = _fill(browser, server, "mcts(iterations=100000)", 40000, 4000)
    _wait(browser, lambda d: _css(d, "#b-status")[0].text == "running", 120, "not running")
    _css(browser, "#b-cancel")[0].click()
    began = time.monotonic()
    _wait(browser, lambda d: _css(d, "#b-status")[0].text == "cancelled", 20, "not cancelled")
    assert time.monotonic() - began < 5  # the page polls every second
    with urllib.request.urlopen(f"{server}/api/balance/{jid}") as answer:
        assert b'"status":"cancelled"' in answer.read()
    # the job's link shows its own question in the form
    browser.get(f"{server}/balance?job={jid}")
    _wait(browser, lambda d: _css(d, "#b-status")[0].text == "cancelled", 20, "not shown")
    assert _css(browser, "#b-agents")[0].get_attribute("value") == "mcts(iterations=100000)"
    assert _css(browser, "#b-game")[0].get_attribute("value") == "golden_island"
    assert _css(browser, "#b-high")[0].get_attribute("value") == "20"
    _no_page_errors(browser)


def test_the_form_asks_every_seat_at_once(server, browser):  # noqa: F811
    """The seat list offers every seat at once: the request carries seat 'all' (the job's
    spec), the target is fair (no win rate for every seat), and the page shows the answer
    that says what to give each seat; the job's link shows the choice again."""
    import json
    from selenium.webdriver.support.ui import Select

    browser.get(f"{server}/balance")
    _wait(browser, lambda d: _css(d, "#b-seat option"), 30, "the form was not built")
    Select(_css(browser, "#b-game")[0]).select_by_value("golden_island")
    Select(_css(browser, "#b-target")[0]).select_by_value("rate")
    Select(_css(browser, "#b-seat")[0]).select_by_value("all")
    target = _css(browser, "#b-target")[0]
    assert target.get_attribute("value") == "equal" and not target.is_enabled()
    jid = _fill(browser, server, "greedy", 900, 80, seat="all", players="3")
    with urllib.request.urlopen(f"{server}/api/balance/{jid}") as sent:
        job = json.loads(sent.read())
    assert job["spec"]["balance"]["seat"] == "all" and job["spec"]["players"] == 3
    assert job["spec"]["balance"]["target"] == "equal"
    _wait(browser, lambda d: _css(d, "#b-status")[0].text == "done", 240, "not done")
    lead = _wait(browser, lambda d: _css(d, "p.recommendation"), 20)[0].text
    assert lead.startswith(("Give ", "Probably give ", "Not decided", "No values")), lead
    assert "seat_bonus_gold for every seat at once, 3 players" in _css(browser, "p.answer")[0].text
    browser.get(f"{server}/balance?job={jid}")
    _wait(browser, lambda d: _css(d, "#b-status")[0].text == "done", 20, "not shown")
    assert Select(_css(browser, "#b-seat")[0]).first_selected_option.get_attribute(
        "value") == "all"
    _no_page_errors(browser)


def test_a_search_per_strength_shows_each_rung_then_the_strength_sentence(server, browser):  # noqa: F811
    """A question asked per strength (balance.agents): the page shows the service's answers,
    one section per rung leading with its recommendation, then the sentence on strength;
    the job opened by its link ticks the presets it asked."""
    import json

    spec = {**SEARCH, "balance": {**SEARCH["balance"], "agents": ["random", "greedy"]}}
    del spec["agents"]
    request = urllib.request.Request(f"{server}/api/balance", json.dumps(spec).encode(),
                                     {"Content-Type": "application/json"})
    jid = json.loads(urllib.request.urlopen(request).read())["id"]
    browser.get(f"{server}/balance?job={jid}")
    _wait(browser, lambda d: _css(d, "#b-status")[0].text == "done", 240, "not done")
    sections = _wait(browser, lambda d: _css(d, "section.balance-answer"), 20)
    assert [s.get_attribute("data-agent") for s in sections] == ["random", "greedy"]
    for section in sections:
        lead = section.find_element("css selector", "p.recommendation").text
        assert re.match(r"(Give|Take|No |Cannot yet decide)", lead), lead
    strength = _css(browser, "p.strength")[0]
    assert strength.get_attribute("data-verdict") in ("moves", "holds", "undecided")
    assert "strength" in strength.text and "inf" not in strength.text
    # the form shows the job's question: the rung that is a preset (greedy: fast) ticked
    assert [b.get_attribute("value") for b in _css(browser, "input.b-rung")
            if b.is_selected()] == ["fast"]
    _no_page_errors(browser)
