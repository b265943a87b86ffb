"""The shareable reports' markup: one HTML file with the dashboard's stylesheet
(dashboards/static/style.css) and the figures' SVG inline, nothing fetched and no script, so
it opens offline.  The words and the tables' cells come from services.report; the figures
from dashboards/experiment_figures.py (the page's), or the balance search's chart
(dashboards/balance_chart.py).  The headline is marked up as the page marks it up (the same
classes), so one stylesheet serves both."""
from __future__ import annotations

from functools import lru_cache
from html import escape
from pathlib import Path

STYLESHEET = Path(__file__).resolve().parent / "static" / "style.css"


@lru_cache(maxsize=1)
def style() -> str:
    return STYLESHEET.read_text(encoding="utf-8")


def _e(text) -> str:
    return escape(str(text), quote=True)


def document(title: str, body: list[str]) -> str:
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{_e(title)}</title><style>{style()}</style></head>"
            "<body class='report'><main>" + "\n".join(body) + "</main></body></html>")


def table(head: list[str], rows: list[list]) -> str:
    return ("<table class='data'><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head)
            + "</tr></thead><tbody>" + "".join(
                "<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>" for r in rows)
            + "</tbody></table>")


def figures(items: list[dict]) -> str:
    """The figures side by side, each in its box (the page's markup)."""
    return "<div class='charts'>" + "".join(
        f"<div class='chart-box' data-figure='{_e(f['key'])}'>{f['svg']}</div>"
        for f in items) + "</div>"


def headline(head: dict) -> str:
    """The question and its blocks, as the page shows them (experiment.js's headline)."""
    parts = ["<section class='headline' id='headline'><h2>The answer</h2>",
             f"<p class='question'>{_e(head['question'])}</p>"]
    for block in head["blocks"]:
        parts.append(f"<div class='headline-block' data-kind='{_e(block['kind'])}'>"
                     f"<h3>{_e(block['title'])}</h3>")
        for item in block["items"]:
            state = ("estimate" if item["decided"] is None
                     else "decided" if item["decided"] else "open")
            parts.append(
                f"<div class='headline-item {state}' data-kind='{_e(block['kind'])}'>"
                f"<div class='headline-title'><span class='status'>{_e(item['status'])}</span>"
                f" · <span title='{_e(item['agent_full'])}'>{_e(item['title'])}</span></div>"
                + "".join(f"<p class='sentence'>{_e(s)}</p>" for s in item["sentences"] if s)
                + f"<p class='level'>level: {_e(item['level'])}</p></div>")
        parts.append("</div>")
    return "\n".join(parts + ["</section>"])


INTERIM = ("Interim figures: the run is not done, so every interval is a confidence sequence "
           "that holds at any look (wider than the final ones) and no p-values are shown.")


def experiment_report(title: str, game: str, made: str, head: dict, ladder: list[dict],
                      sections: list[dict], provenance: dict, command: str,
                      spec_json: str) -> str:
    """The experiment's report.  sections: per player count {players, figures, tables:
    [(head, rows)]}; provenance: {game, meeplelab, seed, head, rows}."""
    body = [f"<h1>{_e(title)} ({_e(game)})</h1><p class='help'>meeplelab report, made "
            f"{_e(made)}</p>"]
    if head["interim"]:
        body.append(f"<p class='interim' id='interim'>{_e(INTERIM)}</p>")
    body.append(headline(head))
    if ladder:
        body.append("<section class='ladder' id='ladder'><h2>Strength ladder</h2>"
                    + figures(ladder) + "</section>")
    for section in sections:
        body.append(f"<section class='players' data-players='{section['players']}'>"
                    f"<h2>{section['players']} players</h2>" + figures(section["figures"])
                    + "".join(table(h, rows) for h, rows in section["tables"]) + "</section>")
    body.append(
        "<h2>Provenance</h2>"
        f"<p>Game {_e(provenance['game'])}; meeplelab {_e(provenance['meeplelab'])}; "
        f"experiment seed {_e(provenance['seed'])} (game i of every arm is dealt from the "
        "seed and i alone).</p>" + table(provenance["head"], provenance["rows"])
        + "<h2>Reproduce it</h2><p>Save this spec as <code>spec.json</code> and run:</p>"
        f"<pre>{escape(command, quote=False)}</pre>"
        f"<pre class='spec'>{escape(spec_json, quote=False)}</pre>")
    return document(f"meeplelab report · {title}", body)


def balance_report(name: str, game: str, made: str, cells: list[dict], version: str,
                   seed, spec_json: str) -> str:
    """A balance search's report.  cells: per player count {players, sentence,
    confirmations: [sentence], chart (an SVG or None), waves: (head, rows) or None, games}."""
    body = [f"<h1>{_e(name)} ({_e(game)})</h1><p class='help'>meeplelab balance report, "
            f"made {_e(made)}</p>"]
    for cell in cells:
        body.append(f"<h2>{_e(cell['players'])} players</h2><div class='headline-item "
                    f"decided'><p class='sentence'>{_e(cell['sentence'])}</p></div>")
        for sentence in cell["confirmations"]:
            body.append(f"<div class='headline-item'><p class='sentence'>confirmation: "
                        f"{_e(sentence)}</p></div>")
        if cell["chart"]:
            body.append(f"<figure class='balance-chart'>{cell['chart']}</figure>")
        if cell["waves"]:
            body.append(table(*cell["waves"]))
        body.append(f"<p class='help'>{cell['games']:,} games</p>")
    body.append("<h2>Reproduce it</h2>"
                f"<p>meeplelab {_e(version)}, seed {_e(seed)} (the confirmation plays the next "
                "seed). Save this spec as <code>spec.json</code> and run:</p>"
                "<pre>meeplelab balance spec.json</pre>"
                f"<pre class='spec'>{escape(spec_json, quote=False)}</pre>")
    return document(f"meeplelab balance report · {name}", body)
