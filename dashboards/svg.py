"""What every SVG figure shares (the experiment's figures in dashboards/charts.py and the
balance search's in dashboards/balance_chart.py): round ticks, a tick's text, the legend's
marks and their layout, and the standalone document around a figure (no script, no CDN, so
one file opens anywhere and inlines into a report)."""
from __future__ import annotations

import math
from html import escape

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
           "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
# Outcomes (how games end) and seats (the ladder's series) in hues of their own, so that on
# one page a colour names one arm, one outcome or one seat, never two things.
OUTCOME_PALETTE = ["#bdb76b", "#708090", "#deb887", "#66cdaa", "#d8bfd8", "#2f4f4f",
                   "#f0e68c", "#a9a9a9"]
SEAT_PALETTE = ["#5b5b5b", "#a0a0a0", "#8c6d31", "#d6c7a1", "#3b3b3b", "#c8c8c8",
                "#6b4f1d", "#e8dcc0"]
FONT = 11          # px, the figures' text
CHAR = 0.6 * FONT  # a character's width, about (sans-serif), for layout without a renderer
ROW = 16           # a legend row's height


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def fmt(v: float) -> str:
    """A coordinate with one decimal (the figures' resolution)."""
    return f"{v:.1f}"


def nice_ticks(lo: float, hi: float, most: int = 6, integer: bool = False) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten; integers on an integer axis)
    covering [lo, hi], at most `most` + 1 of them."""
    span = max(hi - lo, 1e-9)
    raw = span / most
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw * (1 - 1e-9))
    if integer:
        step = max(1, round(step))
    first = math.ceil(lo / step - 1e-9) * step
    ticks, v = [], first
    while v <= hi + 1e-9 * span:
        ticks.append(round(v, 10))
        v += step
    return ticks


def tick_text(v: float, signed: bool = False, percent: bool = False) -> str:
    """A tick's label: '5', '+5' (signed), '25%' (percent: v is a share), with a true minus."""
    if percent:
        v = round(100 * v, 8)
    text = f"{v:+g}" if signed and v else f"{v:g}"
    return text.replace("-", "\u2212") + ("%" if percent else "")


def text_width(text: str) -> float:
    return CHAR * len(text)


def legend_mark(mark: str, colour_: str, x: float, y: float) -> str:
    """A legend's swatch, 14 px wide, its text's baseline at y: a line, a dashed line, an
    interval (a capped vertical line), a dot, a thick bar, a small square, a faint block (a
    window) or a block (a bar's or an area's fill)."""
    if mark in ("line", "bar"):
        return (f'<line x1="{fmt(x)}" x2="{fmt(x + 14)}" y1="{fmt(y - 4)}" y2="{fmt(y - 4)}" '
                f'stroke="{colour_}" stroke-width="{2 if mark == "line" else 3}"/>')
    if mark == "dash":
        return (f'<line x1="{fmt(x)}" x2="{fmt(x + 14)}" y1="{fmt(y - 4)}" y2="{fmt(y - 4)}" '
                f'stroke="{colour_}" stroke-dasharray="4 3"/>')
    if mark == "interval":
        return "".join(f'<line x1="{fmt(a)}" x2="{fmt(b)}" y1="{fmt(c)}" y2="{fmt(d)}" '
                       f'stroke="{colour_}" stroke-width="1.3"/>' for a, b, c, d in (
                           (x + 7, x + 7, y - 10, y + 2), (x + 3, x + 11, y - 10, y - 10),
                           (x + 3, x + 11, y + 2, y + 2)))
    if mark == "dot":
        return f'<circle cx="{fmt(x + 7)}" cy="{fmt(y - 4)}" r="3.5" fill="{colour_}"/>'
    opacity = ' fill-opacity="0.3"' if mark == "window" else ""
    side = 8 if mark == "square" else 14
    return (f'<rect x="{fmt(x + (14 - side) / 2)}" y="{fmt(y - 4 - side / 2)}" width="{side}" '
            f'height="{side}" fill="{colour_}"{opacity}/>')


def legend(entries: list[tuple[str, str, str]], left: float, top: float,
           width: float) -> tuple[list[str], float]:
    """The legend's entries (mark, colour, text) flowing left to right in rows from `top`
    inside `width`: the SVG parts and the height they take."""
    out, x, y = ['<g class="legend">'], left, top + FONT
    for mark, colour_, text in entries:
        need = 20 + text_width(text) + 14
        if x > left and x + need > left + width:
            x, y = left, y + ROW
        out.append(legend_mark(mark, colour_, x, y))
        out.append(f'<text class="legend-entry" x="{fmt(x + 20)}" y="{fmt(y)}">'
                   f'{escape(text)}</text>')
        x += need
    out.append("</g>")
    return out, (y - top + 5) if entries else 0


def document(width: float, height: float, title: str, parts: list[str],
             css_class: str = "chart") -> str:
    """A standalone SVG: its title (read by a screen reader, shown on hover), a white ground
    and the parts."""
    return "\n".join([
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{css_class}" viewBox="0 0 {fmt(width)} '
        f'{fmt(height)}" width="{fmt(width)}" height="{fmt(height)}" font-family="sans-serif" '
        f'font-size="{FONT}" role="img">', f"<title>{escape(title)}</title>",
        f'<rect class="ground" width="{fmt(width)}" height="{fmt(height)}" fill="white"/>',
        *parts, "</svg>"])
