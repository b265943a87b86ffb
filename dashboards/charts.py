"""The report's charts as inline SVG text (no script, nothing fetched): grouped bars with
error bars, and overlaid step histograms whose tails beyond the clipped range are counted
in the caption.  The same look as dashboards/static/charts.js (class names and palette), so
the report and the page read alike."""
from __future__ import annotations

import html
import math

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
           "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
W, H = 560, 300
PAD_L, PAD_R, PAD_T, PAD_B = 52, 12, 14, 46
CLIP = 0.01  # histograms span the 1%-99% quantiles; the tails are counted apart


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    span = hi - lo or 1.0
    raw = span / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next((m * mag for m in (1, 2, 2.5, 5, 10) if span / (m * mag) <= count), raw)
    out, v = [], math.ceil(lo / step) * step
    while v <= hi + 1e-9:
        out.append(round(v, 10))
        v += step
    return out


def _fmt(v: float) -> str:
    return str(round(v)) if abs(v) >= 1000 or float(v).is_integer() else f"{v:.3g}"


def _legend(names: list[str]) -> str:
    return "<div class='legend'>" + "".join(
        f"<span><i style='background:{PALETTE[i % len(PALETTE)]}'></i>{_e(n)}</span>"
        for i, n in enumerate(names)) + "</div>"


def _percent(v: float) -> str:
    """A share or a rate as a designer reads it: 0.25 -> '25%'."""
    return f"{100 * v:.3g}%"


def _y_axis(lo: float, hi: float, label: str, fmt=_fmt) -> tuple[list[str], callable]:
    def y(v):
        return PAD_T + (H - PAD_T - PAD_B) * (1 - (v - lo) / ((hi - lo) or 1))

    parts = []
    for t in _ticks(lo, hi):
        parts.append(f"<line class='grid' x1='{PAD_L}' x2='{W - PAD_R}' y1='{y(t):.1f}' "
                     f"y2='{y(t):.1f}'/><text class='tick' x='{PAD_L - 6}' y='{y(t) + 4:.1f}' "
                     f"text-anchor='end'>{fmt(t)}</text>")
    mid = PAD_T + (H - PAD_T - PAD_B) / 2
    parts.append(f"<text class='axis-label' x='12' y='{mid}' text-anchor='middle' "
                 f"transform='rotate(-90 12 {mid})'>{_e(label)}</text>")
    return parts, y


def bars(groups: list[str], series: list[dict], y_label: str = "", y_min: float | None = None,
         reference: float | None = None, percent: bool = False) -> str:
    """Grouped bars: series [{name, points: [(y, lo, hi) | None per group]}]; percent: the
    values are shares, labelled in percent."""
    values = [v for s in series for p in s["points"] if p for v in p if v is not None]
    lo = y_min if y_min is not None else min([0.0] + values)
    hi = max(values + ([reference] if reference is not None else []) + [lo + 1e-9])
    hi = hi + 0.1 * (hi - lo or 1)
    fmt = _percent if percent else _fmt
    parts, y = _y_axis(lo, hi, y_label, fmt)
    gw = (W - PAD_L - PAD_R) / max(len(groups), 1)
    bw = gw * 0.8 / max(len(series), 1)
    base = y(max(lo, 0.0)) if lo <= 0 <= hi else y(lo)
    for gi, g in enumerate(groups):
        parts.append(f"<text class='tick' x='{PAD_L + gw * (gi + .5):.1f}' y='{H - PAD_B + 16}' "
                     f"text-anchor='middle'>{_e(g)}</text>")
        for si, s in enumerate(series):
            p = s["points"][gi]
            if not p or p[0] is None:
                continue
            v, plo, phi = p
            x = PAD_L + gw * gi + gw * 0.1 + bw * si
            top, height = min(y(v), base), abs(base - y(v))
            tip = f"{s['name']}, {g}: {fmt(v)}" + (
                f" [{fmt(plo)}, {fmt(phi)}]" if plo is not None else "")
            parts.append(f"<rect class='bar' x='{x:.1f}' y='{top:.1f}' "
                         f"width='{max(bw - 2, 1):.1f}' height='{height:.1f}' "
                         f"fill='{PALETTE[si % len(PALETTE)]}'><title>{_e(tip)}</title></rect>")
            if plo is not None and phi is not None:
                cx = x + (bw - 2) / 2
                parts.append(f"<line class='errorbar' x1='{cx:.1f}' x2='{cx:.1f}' "
                             f"y1='{y(plo):.1f}' y2='{y(phi):.1f}'/>")
                for w in (plo, phi):
                    parts.append(f"<line class='errorbar' x1='{cx - 4:.1f}' x2='{cx + 4:.1f}' "
                                 f"y1='{y(w):.1f}' y2='{y(w):.1f}'/>")
    if reference is not None:
        parts.append(f"<line class='reference' x1='{PAD_L}' x2='{W - PAD_R}' "
                     f"y1='{y(reference):.1f}' y2='{y(reference):.1f}'/>")
    return _svg(parts) + _legend([s["name"] for s in series])


def histogram(edges: list[float], series: list[dict], x_label: str = "") -> str:
    """Step histograms of shares of each series' games; `below`/`above` (values outside the
    clipped range) are named under the chart."""
    shares = []
    for s in series:
        total = (sum(s["counts"]) + s.get("below", 0) + s.get("above", 0)) or 1
        shares.append([c / total for c in s["counts"]])
    hi = max([v for row in shares for v in row] + [0.01]) * 1.1
    parts, y = _y_axis(0.0, hi, "share of games")
    x0, x1 = edges[0], edges[-1]

    def x(v):
        return PAD_L + (W - PAD_L - PAD_R) * (v - x0) / ((x1 - x0) or 1)

    for t in _ticks(x0, x1, 8):
        parts.append(f"<text class='tick' x='{x(t):.1f}' y='{H - PAD_B + 16}' "
                     f"text-anchor='middle'>{_fmt(t)}</text>")
    parts.append(f"<text class='axis-label' x='{(PAD_L + W - PAD_R) / 2}' y='{H - 8}' "
                 f"text-anchor='middle'>{_e(x_label)}</text>")
    for si, row in enumerate(shares):
        d = f"M {x(edges[0]):.1f} {y(0):.1f}"
        for i, v in enumerate(row):
            d += f" L {x(edges[i]):.1f} {y(v):.1f} L {x(edges[i + 1]):.1f} {y(v):.1f}"
        d += f" L {x(x1):.1f} {y(0):.1f}"
        color = PALETTE[si % len(PALETTE)]
        parts.append(f"<path class='hist' d='{d}' stroke='{color}' fill='{color}'/>")
    return _svg(parts) + _legend([s["arm"] for s in series]) + tail_note(series, edges)


def tail_note(series: list[dict], edges: list[float]) -> str:
    below = sum(s.get("below", 0) for s in series)
    above = sum(s.get("above", 0) for s in series)
    if not below and not above:
        return ""
    words = []
    if below:
        words.append(f"{below:,} game{'s' if below != 1 else ''} below {_fmt(edges[0])}")
    if above:
        words.append(f"{above:,} game{'s' if above != 1 else ''} above {_fmt(edges[-1])}")
    return f"<p class='tail'>Not drawn: {' and '.join(words)}.</p>"


def _svg(parts: list[str]) -> str:
    return (f"<svg class='chart' viewBox='0 0 {W} {H}' role='img'>" + "".join(parts) + "</svg>")


def figure(title: str, body: str) -> str:
    return f"<figure class='chart'><figcaption>{_e(title)}</figcaption>{body}</figure>"
