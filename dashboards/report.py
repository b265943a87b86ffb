"""The results' markup: the HTML fragment of an experiment's results view (services.view),
which the page shows as it is (GET /api/experiments/{eid}/view) and the shareable report
wraps in one file with the dashboard's stylesheet (dashboards/static/style.css) and the
figures' SVG inline, nothing fetched and no script, so it opens offline; and the balance
search's report (its chart: dashboards/balance_chart.py).  Every word and cell comes
formatted from services.view."""
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
    """A plain table (the balance report's waves)."""
    return _table({"head": head, "rows": [{"cells": r, "class": ""} for r in rows],
                   "title": "", "note": "", "agents": "", "key": ""}, caption=False)


def _td(cell) -> str:
    if not isinstance(cell, dict):
        return f"<td>{_e(cell)}</td>"
    return (f"<td><span class='agent' title='{_e(cell['title'])}'>{_e(cell['text'])}</span>"
            "</td>")


def _table(t: dict, caption: bool = True) -> str:
    """A table of the results view (services.view): its title, its agents named once, the
    rows as formatted, and its note (the level, said once)."""
    top = (f"<h3>{_e(t['title'])}</h3>" if caption and t["title"] else "") + (
        f"<p class='agents'>{_e(t['agents'])}</p>" if t["agents"] else "")
    rows = "".join((f"<tr class='{_e(r['class'])}'>" if r["class"] else "<tr>")
                   + "".join(_td(c) for c in r["cells"]) + "</tr>" for r in t["rows"])
    return (top + f"<table class='data' data-table='{_e(t['key'])}'><thead><tr>"
            + "".join(f"<th>{_e(h)}</th>" for h in t["head"]) + f"</tr></thead><tbody>{rows}"
            "</tbody></table>" + (f"<p class='help'>{_e(t['note'])}</p>" if t["note"] else ""))


def figures(items: list[dict]) -> str:
    """The figures side by side, each in its box."""
    return "<div class='charts'>" + "".join(
        f"<div class='chart-box' data-figure='{_e(f['key'])}'>{f['svg']}</div>"
        for f in items) + "</div>"


def headline(head: dict) -> str:
    """The question and its blocks: per item its status, title, answer and level (the
    verdict sentences behind it are in the sections)."""
    parts = ["<section class='headline' id='headline'><h2>The answer</h2>",
             f"<p class='question'>{_e(head['question'])}</p>"]
    for block in head["blocks"]:
        parts.append(f"<div class='headline-block' data-kind='{_e(block['kind'])}'>"
                     f"<h3>{_e(block['title'])}</h3>")
        for item in block["items"]:
            state = ("estimate" if item["decided"] is None
                     else "decided" if item["decided"] else "open")
            parts.append(
                f"<div class='headline-item {state}' data-kind='{_e(block['kind'])}' "
                f"data-arm='{_e(item['arm'])}' data-players='{_e(item['players'])}' "
                f"data-decided='{str(item['decided']).lower()}'>"
                f"<div class='headline-title'><span class='status'>{_e(item['status'])}</span>"
                f" · <span title='{_e(item['agent_full'])}'>{_e(item['title'])}</span></div>"
                f"<p class='answer'>{_e(item['answer'])}</p>"
                f"<p class='level'>level: {_e(item['level'])}</p></div>")
        parts.append("</div>")
    return "\n".join(parts + ["</section>"])


INTERIM = ("Interim figures: the run is not done, so every interval is a confidence sequence "
           "that holds at any look (wider than the final ones) and no p-values are shown.")


def results(view: dict, notice: str = "") -> str:
    """The results view (services.view.build) as the HTML fragment the page shows in its
    #results and the report in its body: how the run ended, the interim notice, `notice`
    (e.g. the damaged shards), the headline, the ladder and a section per player count."""
    body = []
    if view["ended"]:
        body.append(f"<p class='ended' id='ended' data-status='{_e(view['ended']['status'])}'>"
                    f"{_e(view['ended']['sentence'])}</p>")
    if view["interim"]:
        body.append(f"<p class='interim' id='interim'>{_e(INTERIM)}</p>")
    body.append(notice)
    body.append(headline(view["headline"]))
    for part, attrs, title in (
            [(view["ladder"], "class='ladder' id='ladder'", "Strength ladder")]
            if view["ladder"] else []) + [
            (s, f"class='players' data-players='{s['players']}'", s["title"])
            for s in view["sections"]]:
        body.append(f"<section {attrs}><h2>{_e(title)}</h2>"
                    "<ul class='verdicts'>" + "".join(f"<li>{_e(s)}</li>"
                                                      for s in part["sentences"]) + "</ul>"
                    + "".join(f"<p class='warning'>{_e(w)}</p>"
                              for w in part.get("warnings", []))
                    + figures(part["figures"]) + "".join(_table(t) for t in part["tables"])
                    + "</section>")
    return "\n".join(b for b in body if b)


def experiment_report(view: dict, title: str, made: str, command: str,
                      spec_json: str, damage: str | None = None) -> str:
    """The experiment's report: the results view (`results`, with the `damage` sentence
    naming the shards that do not verify), its provenance and the spec that reproduces it."""
    provenance = view["provenance"]
    body = [f"<h1>{_e(title)} ({_e(view['game'])})</h1><p class='help'>meeplelab report, "
            f"made {_e(made)}</p>", results(view, "" if damage is None else
                                            f"<p class='error' id='damage'>{_e(damage)}</p>"),
            "<h2>Provenance</h2>"
            f"<p>Game {_e(provenance['game'])}; meeplelab {_e(provenance['meeplelab'])}; "
            f"experiment seed {_e(provenance['seed'])} (game i of every arm is dealt from the "
            "seed and i alone).</p>" + _table(provenance, caption=False)
            + "<h2>Reproduce it</h2><p>Save this spec as <code>spec.json</code> and run:</p>"
            f"<pre>{escape(command, quote=False)}</pre>"
            f"<pre class='spec'>{escape(spec_json, quote=False)}</pre>"]
    return document(f"meeplelab report · {title}", body)


def balance_results(cells: list[dict], strength: list[dict]) -> str:
    """A balance search's answers as the page shows them (GET /api/balance/{id}/view) and
    the report in its body.  cells: per answer (a player count; a rung when asked per
    strength) {players, agent, rung, recommendation (or None), sentence, confirmations:
    [sentence], chart (an SVG or None), waves: (head, rows) or None, games}; strength: per
    player count {players, verdict, sentence}, said after its rungs."""
    body, said = [], {s["players"]: s for s in strength}
    for k, cell in enumerate(cells):
        if k == 0 or cells[k - 1]["players"] != cell["players"]:
            body.append(f"<h2>{_e(cell['players'])} players</h2>")
        rung = (f"<h3 class='rung'>under {_e(cell['rung'])}</h3>" if cell.get("rung") else "")
        lead = (f"<p class='recommendation'>{_e(cell['recommendation'])}</p>"
                if cell.get("recommendation") else "")
        body.append(f"<section class='balance-answer' data-players='{_e(cell['players'])}' "
                    f"data-agent='{_e(cell.get('agent') or '')}'>{rung}"
                    f"<div class='headline-item decided'>{lead}"
                    f"<p class='verdict answer'>{_e(cell['sentence'])}</p></div>")
        for sentence in cell["confirmations"]:
            body.append(f"<div class='headline-item'><p class='confirmation'>confirmation: "
                        f"{_e(sentence)}</p></div>")
        if cell["chart"]:
            body.append(f"<figure class='balance-chart'>{cell['chart']}</figure>")
        if cell["waves"]:
            body.append(table(*cell["waves"]))
        body.append(f"<p class='help'>{cell['games']:,} games</p></section>")
        last = k + 1 == len(cells) or cells[k + 1]["players"] != cell["players"]
        if last and cell["players"] in said:
            s = said[cell["players"]]
            body.append(f"<p class='strength' data-players='{_e(cell['players'])}' "
                        f"data-verdict='{_e(s['verdict'])}'>{_e(s['sentence'])}</p>")
    return "\n".join(body)


def balance_report(name: str, game: str, made: str, answers: str, version: str,
                   seed, spec_json: str) -> str:
    """A balance search's report: its answers (balance_results) and the spec that
    reproduces it."""
    body = [f"<h1>{_e(name)} ({_e(game)})</h1><p class='help'>meeplelab balance report, "
            f"made {_e(made)}</p>", answers,
            "<h2>Reproduce it</h2>"
            f"<p>meeplelab {_e(version)}, seed {_e(seed)} (the confirmation plays the next "
            "seed). Save this spec as <code>spec.json</code> and run:</p>"
            "<pre>meeplelab balance spec.json</pre>"
            f"<pre class='spec'>{escape(spec_json, quote=False)}</pre>"]
    return document(f"meeplelab balance report · {name}", body)
