"""The sensitivity chart of a fair-value search, as a self-contained SVG (no script, no CDN):
the fitted curve with its 95% band against the option's value, the observed means, the target
line with its +-delta strip, the window of values whose band lies inside the strip, the fair
value with its interval and the confirmed integers; round ticks on both axes, both axes
labelled, and a legend naming every mark.  It takes one cell of
services.balance.run_fair_value's result, so the dashboard, the API
(GET /api/balance/{id}/chart.svg) and the shareable report draw the same picture."""
from __future__ import annotations

import math
from html import escape

from dashboards.svg import legend_mark, nice_ticks, tick_text

W, H = 600, 380
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 34, 108  # the bottom holds the x axis's label and the legend
PLOT_BOTTOM = H - BOTTOM
COLOURS = {"fair": "#2a7a2a", "unfair": "#b3261e", "not decided": "#888"}


def _fmt(v: float) -> str:
    return f"{v:.1f}"


def chart_svg(cell: dict, option: str) -> str:
    """An SVG of one player count's search (a cell of a fair_value result)."""
    c = cell["chart"]
    ans = cell["answer"]
    xs, lo_x, hi_x = c["x"], c["x"][0], c["x"][-1]
    ys = [100 * v for v in c["low"] + c["high"] + c["points"]["y"]]
    t, d = 100 * c["target"], 100 * c["delta"]
    y_lo = min(ys + [t - 2 * d])
    y_hi = max(ys + [t + 2 * d])
    pad = (y_hi - y_lo) * 0.05 or 1.0
    y_lo, y_hi = y_lo - pad, y_hi + pad

    def px(x):
        return LEFT + (x - lo_x) / (hi_x - lo_x) * (W - LEFT - RIGHT)

    def py(y):
        return TOP + (y_hi - 100 * y) / (y_hi - y_lo) * (PLOT_BOTTOM - TOP)

    def pyp(points):      # y already in points
        return TOP + (y_hi - points) / (y_hi - y_lo) * (PLOT_BOTTOM - TOP)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" '
           f'height="{H}" font-family="sans-serif" font-size="11" role="img">',
           f'<title>{escape(cell["sentence"])}</title>',
           f'<rect width="{W}" height="{H}" fill="white"/>']
    # the +-delta strip around the target, and the target line
    out.append(f'<rect class="strip" x="{LEFT}" y="{_fmt(pyp(t + d))}" '
               f'width="{W - LEFT - RIGHT}" height="{_fmt(pyp(t - d) - pyp(t + d))}" '
               'fill="#e8f4e8"/>')
    out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{_fmt(pyp(t))}" y2="{_fmt(pyp(t))}" '
               'stroke="#2a7a2a" stroke-dasharray="4 3"/>')
    if c["window"]:
        a, b = c["window"]
        out.append(f'<rect class="window" x="{_fmt(px(a))}" y="{TOP}" '
                   f'width="{_fmt(max(px(b) - px(a), 1))}" height="{PLOT_BOTTOM - TOP}" '
                   'fill="#2a7a2a" fill-opacity="0.15"/>')
    band = [f"{_fmt(px(x))},{_fmt(py(v))}" for x, v in zip(xs, c["high"])]
    band += [f"{_fmt(px(x))},{_fmt(py(v))}" for x, v in reversed(list(zip(xs, c["low"])))]
    out.append(f'<polygon class="band" points="{" ".join(band)}" fill="#4a78c2" '
               'fill-opacity="0.25"/>')
    line = " ".join(f"{_fmt(px(x))},{_fmt(py(v))}" for x, v in zip(xs, c["curve"]))
    out.append(f'<polyline class="curve" points="{line}" fill="none" stroke="#1f4e9c" '
               'stroke-width="2"/>')
    for x, y, n in zip(c["points"]["x"], c["points"]["y"], c["points"]["games"]):
        r = 2 + min(4, math.log10(max(n, 1)))
        out.append(f'<circle class="point" cx="{_fmt(px(x))}" cy="{_fmt(py(y))}" r="{r:.1f}" '
                   f'fill="#1f4e9c"><title>{x:g}: {100 * y:+.1f} points ({int(n):,} games)'
                   '</title></circle>')
    if ans["status"] == "found" and ans["estimate"] is not None:
        e = min(max(ans["estimate"], lo_x), hi_x)
        a = max(ans["low"], lo_x) if ans["low"] is not None else lo_x
        b = min(ans["high"], hi_x) if ans["high"] is not None else hi_x
        y0 = PLOT_BOTTOM - 8
        out.append(f'<line class="fair" x1="{_fmt(px(a))}" x2="{_fmt(px(b))}" y1="{y0}" '
                   f'y2="{y0}" stroke="#b3261e" stroke-width="3"/>')
        out.append(f'<circle cx="{_fmt(px(e))}" cy="{y0}" r="4" fill="#b3261e"/>')
    for conf in cell.get("confirmations", []):
        x = px(conf["value"])
        out.append(f'<rect class="confirmed" x="{_fmt(x - 4)}" y="{TOP - 14}" width="8" '
                   f'height="8" fill="{COLOURS.get(conf["verdict"], "#888")}"><title>'
                   f'{escape(conf["sentence"])}</title></rect>')
    out += _axes(option, cell, c, lo_x, hi_x, y_lo, y_hi, px, pyp)
    out += _legend(cell, c, ans)
    out.append(f'<text x="{LEFT}" y="14">{escape(cell["agent"])}: fair at '
               + (f'{ans["estimate"]:.2f}' if ans["status"] == "found" else ans["status"])
               + '</text>')
    out.append("</svg>")
    return "\n".join(out)


def _axes(option, cell, c, lo_x, hi_x, y_lo, y_hi, px, pyp) -> list[str]:
    """Both axes with round ticks and their labels (the option and its seat; the figure)."""
    out = [f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{PLOT_BOTTOM}" y2="{PLOT_BOTTOM}" '
           'stroke="#333"/>',
           f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{PLOT_BOTTOM}" stroke="#333"/>']
    for v in nice_ticks(lo_x, hi_x, 10, integer=True):
        out.append(f'<text class="xtick" x="{_fmt(px(v))}" y="{PLOT_BOTTOM + 14}" '
                   f'text-anchor="middle">{tick_text(v)}</text>')
    for v in nice_ticks(y_lo, y_hi, 6):
        out.append(f'<line x1="{LEFT - 4}" x2="{LEFT}" y1="{_fmt(pyp(v))}" '
                   f'y2="{_fmt(pyp(v))}" stroke="#333"/>')
        out.append(f'<text class="ytick" x="{LEFT - 6}" y="{_fmt(pyp(v) + 4)}" '
                   f'text-anchor="end">{tick_text(v, signed=True)}</text>')
    out.append(f'<text class="xlabel" x="{(LEFT + W - RIGHT) / 2}" y="{PLOT_BOTTOM + 30}" '
               f'text-anchor="middle">{escape(option)} (seat {cell["seat"] + 1}, '
               f'{cell["players"]} players)</text>')
    mid = (TOP + PLOT_BOTTOM) / 2
    out.append(f'<text class="ylabel" x="14" y="{mid}" text-anchor="middle" '
               f'transform="rotate(-90 14 {mid})">{escape(c["figure"])} (points)</text>')
    return out


def _legend(cell, c, ans) -> list[str]:
    """What every mark means, under the x axis: one entry a mark the chart shows."""
    entries = [("line", "#1f4e9c", "fitted curve with its 95% band"),
               ("dot", "#1f4e9c", "observed mean of a value (size: games)"),
               ("strip", "#e8f4e8", f"within \u00b1{100 * c['delta']:g} points of the target "
                                    "(dashed)")]
    if c["window"]:
        entries.append(("window", "#2a7a2a", "fair window: values whose band lies inside"))
    if ans["status"] == "found":
        entries.append(("bar", "#b3261e", "fair value with its 95% interval"))
    shown = sorted({conf["verdict"] for conf in cell.get("confirmations", [])})
    for verdict in shown:
        entries.append(("square", COLOURS.get(verdict, "#888"),
                        f"confirmation on fresh deals: {verdict}"))
    out = ['<g class="legend">']
    for k, (mark, colour, text) in enumerate(entries):
        x = LEFT + (k % 2) * 270
        y = PLOT_BOTTOM + 48 + (k // 2) * 16
        out.append(legend_mark(mark, colour, x, y))
        out.append(f'<text class="legend-entry" x="{x + 20}" y="{y}">{escape(text)}</text>')
    out.append("</g>")
    return out



def compare_svg(answers: list[tuple[dict, dict, str]]) -> str:
    """Answers of one option side by side, drawn by dashboards/charts.py: each (result, cell,
    the search's name) a curve with its 95% band, its observed means and its fair value (a
    dotted vertical line), against the target and its +-delta strip (the first answer's)."""
    from dashboards import charts

    option = answers[0][0]["option"]
    first = answers[0][1]["chart"]
    names = [_answer_name(name, cell, [a[2] for a in answers]) for _, cell, name in answers]
    series = []
    for (_, cell, _), name in zip(answers, names):
        c, ans = cell["chart"], cell["answer"]
        fair = ans["estimate"] if ans["status"] == "found" else None
        series.append({"name": name + (f": fair at {fair:.2f}" if fair is not None
                                       else f": {ans['status'].replace('_', ' ')}"),
                       "x": c["x"], "y": [100 * v for v in c["curve"]],
                       "low": [100 * v for v in c["low"]], "high": [100 * v for v in c["high"]],
                       "points": {"x": c["points"]["x"],
                                  "y": [100 * v for v in c["points"]["y"]]},
                       "mark": fair})
    seats = sorted({cell["seat"] + 1 for _, cell, _ in answers})
    title = (f"{option} side by side: {first['figure']} against the value "
             f"(seat {', '.join(map(str, seats))}; 95% bands)")
    return charts.curves(title, series, f"{option} (the searched value)",
                         f"{first['figure']} (points)",
                         reference=(100 * first["target"], f"target (\u00b1{100 * first['delta']:g}"
                                                           " points shaded)"),
                         strip=100 * first["delta"])


def _answer_name(name: str, cell: dict, names: list[str]) -> str:
    """What tells one answer from the others: its search's name when the searches differ,
    then its players and agent."""
    own = [name] if len(set(names)) > 1 else []
    return ", ".join(own + [f"{cell['players']} players", cell["agent"]])
