"""The sensitivity chart of a fair-value search, as a self-contained SVG (no script, no CDN):
the fitted curve with its 95% band against the option's value, the observed means, the target
line with its +-delta strip, the window of values whose band lies inside the strip, the fair
value with its interval and the confirmed integers.  It takes one cell of
services.balance.run_fair_value's result, so the dashboard, the API
(GET /api/balance/{id}/chart.svg) and the shareable report draw the same picture."""
from __future__ import annotations

import math
from html import escape

W, H = 560, 320
LEFT, RIGHT, TOP, BOTTOM = 62, 16, 34, 46


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
        return TOP + (y_hi - 100 * y) / (y_hi - y_lo) * (H - TOP - BOTTOM)

    def pyp(points):      # y already in points
        return TOP + (y_hi - points) / (y_hi - y_lo) * (H - TOP - BOTTOM)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" '
           f'height="{H}" font-family="sans-serif" font-size="11" role="img">',
           f'<title>{escape(cell["sentence"])}</title>',
           f'<rect width="{W}" height="{H}" fill="white"/>']
    # the +-delta strip around the target, and the target line
    out.append(f'<rect x="{LEFT}" y="{_fmt(pyp(t + d))}" width="{W - LEFT - RIGHT}" '
               f'height="{_fmt(pyp(t - d) - pyp(t + d))}" fill="#e8f4e8"/>')
    out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{_fmt(pyp(t))}" y2="{_fmt(pyp(t))}" '
               'stroke="#2a7a2a" stroke-dasharray="4 3"/>')
    if c["window"]:
        a, b = c["window"]
        out.append(f'<rect class="window" x="{_fmt(px(a))}" y="{TOP}" '
                   f'width="{_fmt(max(px(b) - px(a), 1))}" height="{H - TOP - BOTTOM}" '
                   'fill="#2a7a2a" fill-opacity="0.12"/>')
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
                   f'fill="#1f4e9c"><title>{x:g}: {100 * y:+.1f} ({int(n):,} games)</title>'
                   '</circle>')
    if ans["status"] == "found" and ans["estimate"] is not None:
        e = min(max(ans["estimate"], lo_x), hi_x)
        a = max(ans["low"], lo_x) if ans["low"] is not None else lo_x
        b = min(ans["high"], hi_x) if ans["high"] is not None else hi_x
        y0 = H - BOTTOM - 8
        out.append(f'<line class="fair" x1="{_fmt(px(a))}" x2="{_fmt(px(b))}" y1="{y0}" '
                   f'y2="{y0}" stroke="#b3261e" stroke-width="3"/>')
        out.append(f'<circle cx="{_fmt(px(e))}" cy="{y0}" r="4" fill="#b3261e"/>')
    for conf in cell.get("confirmations", []):
        colour = {"fair": "#2a7a2a", "unfair": "#b3261e"}.get(conf["verdict"], "#888")
        x = px(conf["value"])
        out.append(f'<rect class="confirmed" x="{_fmt(x - 4)}" y="{TOP - 14}" width="8" '
                   f'height="8" fill="{colour}"><title>{escape(conf["sentence"])}</title>'
                   '</rect>')
    # axes
    out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{H - BOTTOM}" y2="{H - BOTTOM}" '
               'stroke="#333"/>')
    out.append(f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{H - BOTTOM}" stroke="#333"/>')
    step = max(1, round((hi_x - lo_x) / 10))
    v = math.ceil(lo_x)
    while v <= hi_x:
        out.append(f'<text x="{_fmt(px(v))}" y="{H - BOTTOM + 14}" text-anchor="middle">{v:g}'
                   '</text>')
        v += step
    for frac in (0, 0.25, 0.5, 0.75, 1):
        yv = y_lo + frac * (y_hi - y_lo)
        out.append(f'<text x="{LEFT - 6}" y="{_fmt(pyp(yv) + 4)}" text-anchor="end">'
                   f'{yv:+.1f}</text>')
    out.append(f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - 8}" text-anchor="middle">'
               f'{escape(option)} (seat {cell["seat"] + 1}, {cell["players"]} players)</text>')
    out.append(f'<text x="14" y="{(TOP + H - BOTTOM) / 2}" text-anchor="middle" '
               f'transform="rotate(-90 14 {(TOP + H - BOTTOM) / 2})">'
               f'{escape(c["figure"])} (points)</text>')
    out.append(f'<text x="{LEFT}" y="14">{escape(cell["agent"])}: fair at '
               + (f'{ans["estimate"]:.2f}' if ans["status"] == "found" else ans["status"])
               + '</text>')
    out.append("</svg>")
    return "\n".join(out)

