"""The experiment's charts, drawn once, server-side, as standalone SVG (the page shows them
inline, the report inlines them, `GET /api/experiments/{id}/figures/{key}.svg` and
`meeplelab report --svg` give them as files): grouped bars with their intervals, stacked
shares, and overlaid step histograms whose tails beyond the clipped range are counted under
the chart.  Each has its title, round ticks, labelled axes and a legend naming every mark;
colours and lines are attributes of the SVG itself, so a file needs no stylesheet."""
from __future__ import annotations

from html import escape

from dashboards.svg import ROW, colour, document, fmt, legend, nice_ticks, text_width, \
    tick_text

W = 560
WIDE = 1000  # a figure that carries the answer: the page's full width
LEFT, RIGHT = 60, 14
PLOT_H = 210
TITLE_LINE = 15
SLANTED = 150  # px at most of a slanted x label
AXIS = "#333"


def value_text(v: float | None, percent: bool = False, signed: bool = False) -> str:
    """A figure's value as a tooltip and the report's tables give it: '31.0%', '+7.5'."""
    if v is None:
        return "–"
    sign = "+" if signed else ""
    if percent:
        return f"{100 * v:{sign}.1f}%".replace("-", "\u2212")
    text = f"{v:{sign}.0f}" if abs(v) >= 100 else f"{v:{sign}.3g}"
    return text.replace("-", "\u2212")


def _wrap(text: str, width: float) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and text_width(f"{line} {word}") * 1.1 > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return lines + [line]


def _fit(text: str, width: float) -> str:
    """A label cut in its middle to `width` (its start and end stay: 'a very l…d, seat 1');
    the full text is the label's tooltip."""
    if text_width(text) <= width:
        return text
    keep = max(2, int(width / text_width("m")) - 1)
    return text[:(keep + 1) // 2] + "\u2026" + text[len(text) - keep // 2:]


class _Frame:
    """One chart's geometry: the title's lines on top, the plot, then the x axis's ticks and
    label, the legend and the notes (a histogram's tails)."""

    def __init__(self, title: str, width: float = W):
        self.title = title
        self.w = width
        self.lines = _wrap(title, width - 20)
        self.top = 10 + TITLE_LINE * len(self.lines) + 10
        self.bottom = self.top + PLOT_H
        self.under = 0.0  # what slanted x labels need under the axis
        self.parts: list[str] = [
            f'<text class="chart-title" x="10" y="{fmt(10 + TITLE_LINE * (k + 1) - 3)}" '
            f'font-size="12.5" fill="#222">{escape(line)}</text>'
            for k, line in enumerate(self.lines)]

    def y_axis(self, lo: float, hi: float, label: str, percent: bool = False,
               signed: bool = False):
        """Round ticks covering [lo, hi] (the axis ends on a tick), their grid lines and the
        label; the y of a value."""
        ticks = nice_ticks(lo, hi, 5)
        step = ticks[1] - ticks[0] if len(ticks) > 1 else (hi - lo or 1.0)
        if ticks[0] > lo + 1e-12:
            ticks.insert(0, round(ticks[0] - step, 10))
        if ticks[-1] < hi - 1e-12:
            ticks.append(round(ticks[-1] + step, 10))
        lo, hi = ticks[0], ticks[-1]

        def y(v: float) -> float:
            return self.bottom - (v - lo) / ((hi - lo) or 1.0) * PLOT_H

        for t in ticks:
            self.parts.append(
                f'<line class="grid" x1="{LEFT}" x2="{self.w - RIGHT}" y1="{fmt(y(t))}" '
                f'y2="{fmt(y(t))}" stroke="#e6e6e6"/><text class="tick ytick" x="{LEFT - 6}" '
                f'y="{fmt(y(t) + 4)}" text-anchor="end" fill="#555">'
                f'{tick_text(t, signed, percent)}</text>')
        mid = (self.top + self.bottom) / 2
        self.parts.append(f'<text class="axis-label ylabel" x="14" y="{fmt(mid)}" '
                          f'text-anchor="middle" transform="rotate(-90 14 {fmt(mid)})" '
                          f'fill="#333">{escape(label)}</text>')
        self.lo, self.hi = lo, hi
        return y

    def x_ticks(self, ticks: list[tuple[float, str]], room: float) -> None:
        """The x axis's labels at their x, each in `room` px; when one is wider, all are
        slanted (and cut to SLANTED px), and the chart grows under them."""
        slant = any(text_width(text) > room for _, text in ticks)
        for x, text in ticks:  # a slanted label ends at its tick, inside the chart's left
            shown = _fit(text, min(SLANTED, (x - 2) / 0.82) if slant else room)
            tip = f"<title>{escape(text)}</title>" if shown != text else ""
            place = (f'x="{fmt(x + 4)}" y="{self.bottom + 12}" text-anchor="end" '
                     f'transform="rotate(-35 {fmt(x + 4)} {self.bottom + 12})"' if slant else
                     f'x="{fmt(x)}" y="{self.bottom + 15}" text-anchor="middle"')
            self.parts.append(f'<text class="tick xtick" {place} fill="#555">{tip}'
                              f'{escape(shown)}</text>')
            if slant:  # sin(35 degrees) of the label's length, below the axis
                self.under = max(self.under, 0.58 * text_width(shown))

    def finish(self, x_label: str, entries: list[tuple[str, str, str]],
               notes: list[str] = ()) -> str:
        out = self.parts + [
            f'<line class="axis" x1="{LEFT}" x2="{self.w - RIGHT}" y1="{self.bottom}" '
            f'y2="{self.bottom}" stroke="{AXIS}"/>',
            f'<line class="axis" x1="{LEFT}" x2="{LEFT}" y1="{self.top}" y2="{self.bottom}" '
            f'stroke="{AXIS}"/>']
        below = self.bottom + 24 + self.under
        if x_label:
            out.append(f'<text class="axis-label xlabel" x="{fmt((LEFT + self.w - RIGHT) / 2)}" '
                       f'y="{below + 9}" text-anchor="middle" fill="#333">'
                       f'{escape(x_label)}</text>')
            below += 16
        parts, height = legend(entries, LEFT, below, self.w - LEFT - RIGHT)
        out += parts
        below += height + 4
        for note in notes:
            below += ROW
            out.append(f'<text class="note" x="{LEFT}" y="{below - 4}" fill="#555">'
                       f'{escape(note)}</text>')
        return document(self.w, below + 8, self.title, out,
                        "chart wide" if self.w > W else "chart")


def bars(title: str, groups: list[str], series: list[dict], y_label: str,
         x_label: str = "", y_min: float | None = None,
         reference: tuple[float, str] | None = None, percent: bool = False,
         signed: bool = False, interval: str = "95% interval", width: float = W,
         group_colours: list[tuple[str, str]] | None = None) -> str:
    """Grouped bars, each with its interval: series [{name, points: [(y, lo, hi) | None per
    group], colour (optional: the palette's in order)}]; `reference` (value, its legend
    text): a dashed horizontal line; percent: the values are shares; signed: they are
    differences (a sign on every tick).  `group_colours` [(colour, legend text)] per group:
    a one-series chart whose groups are arms coloured as the arms are everywhere else (the
    legend then names each colour once)."""
    values = [v for s in series for p in s["points"] if p for v in p if v is not None]
    lo = y_min if y_min is not None else min([0.0] + values)
    hi = max(values + ([reference[0]] if reference else []) + [lo + 1e-9])
    hi += 0.05 * (hi - lo or 1.0)
    if percent and not signed and max(values + [0.0]) <= 1.0:
        hi = min(hi, 1.0)  # a share's axis ends at 100%
    frame = _Frame(title, width)
    y = frame.y_axis(lo, hi, y_label, percent, signed)
    base = y(min(max(0.0, frame.lo), frame.hi))
    gw = (frame.w - LEFT - RIGHT) / max(len(groups), 1)
    bw = gw * 0.8 / max(len(series), 1)
    frame.x_ticks([(LEFT + gw * (gi + 0.5), group) for gi, group in enumerate(groups)], gw - 4)
    for gi, group in enumerate(groups):
        for si, s in enumerate(series):
            p = s["points"][gi]
            if not p or p[0] is None:
                continue
            v, plo, phi = p
            x = LEFT + gw * gi + gw * 0.1 + bw * si
            tip = f"{s['name']}, {group}: {value_text(v, percent, signed)}" + (
                f" [{value_text(plo, percent, signed)}, {value_text(phi, percent, signed)}]"
                if plo is not None else "")
            frame.parts.append(
                f'<rect class="bar" x="{fmt(x)}" y="{fmt(min(y(v), base))}" '
                f'width="{fmt(max(bw - 2, 1))}" height="{fmt(abs(base - y(v)))}" '
                f'fill="{group_colours[gi][0] if group_colours else s.get("colour", colour(si))}">'
                f'<title>{escape(tip)}</title></rect>')
            if plo is not None and phi is not None:
                cx = x + (bw - 2) / 2
                for x1, x2, y1, y2 in ((cx, cx, y(plo), y(phi)), (cx - 4, cx + 4, y(plo), y(plo)),
                                       (cx - 4, cx + 4, y(phi), y(phi))):
                    frame.parts.append(
                        f'<line class="errorbar" x1="{fmt(x1)}" x2="{fmt(x2)}" y1="{fmt(y1)}" '
                        f'y2="{fmt(y2)}" stroke="#111" stroke-width="1.3"/>')
    entries = ([("block", c, text) for c, text in dict.fromkeys(group_colours)]
               if group_colours else
               [("block", s.get("colour", colour(i)), s["name"]) for i, s in enumerate(series)])
    entries.append(("interval", "#111", interval))
    if reference:
        frame.parts.append(f'<line class="reference" x1="{LEFT}" x2="{frame.w - RIGHT}" '
                           f'y1="{fmt(y(reference[0]))}" y2="{fmt(y(reference[0]))}" '
                           'stroke="#777" stroke-dasharray="5 4"/>')
        entries.append(("dash", "#777", reference[1]))
    return frame.finish(x_label, entries)


def stacked_bars(title: str, groups: list[str], segments: list[dict],
                 y_label: str = "share of games", x_label: str = "") -> str:
    """Shares stacked per group from 0 up to 1: segments [{name, values: [share per group],
    colour (optional)}]."""
    frame = _Frame(title)
    y = frame.y_axis(0.0, 1.0, y_label, percent=True)
    gw = (frame.w - LEFT - RIGHT) / max(len(groups), 1)
    bw = min(gw * 0.6, 90)
    frame.x_ticks([(LEFT + gw * (gi + 0.5), group) for gi, group in enumerate(groups)], gw - 4)
    for gi, group in enumerate(groups):
        x = LEFT + gw * (gi + 0.5) - bw / 2
        base = 0.0
        for si, s in enumerate(segments):
            v = s["values"][gi] or 0.0
            if v <= 0:
                continue
            frame.parts.append(
                f'<rect class="segment" x="{fmt(x)}" y="{fmt(y(base + v))}" width="{fmt(bw)}" '
                f'height="{fmt(y(base) - y(base + v))}" fill="{s.get("colour", colour(si))}"><title>'
                f'{escape(group)}, {escape(s["name"])}: {value_text(v, percent=True)}</title></rect>')
            base += v
    return frame.finish(x_label, [("block", s.get("colour", colour(i)), s["name"])
                                  for i, s in enumerate(segments)])


def histogram(title: str, edges: list[float], series: list[dict], x_label: str,
              clip_words: str = "") -> str:
    """Overlaid step histograms as shares of each series' games: series [{name, counts,
    below, above, colour (optional)}] on shared edges; the games outside the edges (`below`,
    `above`, left out by clipping, named by `clip_words`) are counted in a note under the
    chart.  A series equal to an earlier one is drawn dashed over it and said under the
    chart (its legend entry alone would name a curve nobody can see)."""
    shares = []
    for s in series:
        total = (sum(s["counts"]) + s.get("below", 0) + s.get("above", 0)) or 1
        shares.append([c / total for c in s["counts"]])
    frame = _Frame(title)
    y = frame.y_axis(0.0, min(1.0, max([v for row in shares for v in row] + [0.01]) * 1.05),
                     "share of games", percent=True)
    x0, x1 = edges[0], edges[-1]

    def x(v: float) -> float:
        return LEFT + (frame.w - LEFT - RIGHT) * (v - x0) / ((x1 - x0) or 1.0)

    frame.x_ticks([(x(t), tick_text(t)) for t in nice_ticks(x0, x1, 8)], 60)
    colours = [s.get("colour", colour(i)) for i, s in enumerate(series)]
    over = coinciding(shares, 1e-12)
    for si, (s, row) in enumerate(zip(series, shares)):
        d = f"M {fmt(x(x0))} {fmt(y(0))}"
        for i, v in enumerate(row):
            d += f" L {fmt(x(edges[i]))} {fmt(y(v))} L {fmt(x(edges[i + 1]))} {fmt(y(v))}"
        d += f" L {fmt(x(x1))} {fmt(y(0))}"
        dash = ' stroke-dasharray="6 4" stroke-width="2"' if si in over else \
            ' stroke-width="1.5"'
        frame.parts.append(f'<path class="hist" d="{d}" stroke="{colours[si]}"{dash} '
                           f'fill="{colours[si]}" fill-opacity="{0 if si in over else 0.15}">'
                           f'<title>{escape(s["name"])}</title></path>')
    notes = [f"{series[k]['name']} is the same as {series[j]['name']}: drawn dashed over it."
             for k, j in over.items()]
    return frame.finish(x_label, [("dash" if i in over else "block", colours[i], s["name"])
                                  for i, s in enumerate(series)],
                        notes + tail_notes(series, edges, clip_words))


def tail_notes(series: list[dict], edges: list[float], clip_words: str = "") -> list[str]:
    """'Not drawn (outside the 1%-99% range): 3 games below 40.5 and 1 game above 210.5.'"""
    below = sum(s.get("below", 0) for s in series)
    above = sum(s.get("above", 0) for s in series)
    words = []
    for n, side, edge in ((below, "below", edges[0]), (above, "above", edges[-1])):
        if n:
            words.append(f"{n:,} game{'s' if n != 1 else ''} {side} {tick_text(edge)}")
    if not words:
        return []
    return [f"Not drawn{f' ({clip_words})' if clip_words else ''}: {' and '.join(words)}."]


def _same(a: list[float], b: list[float], tolerance: float) -> bool:
    return len(a) == len(b) and all(abs(u - v) <= tolerance for u, v in zip(a, b))


def coinciding(series: list[list[float]], tolerance: float) -> dict[int, int]:
    """Series drawn over an earlier equal one (index -> the earlier index): they are drawn
    dashed, so that both stay visible, and named under the chart."""
    over = {}
    for k, values in enumerate(series):
        for j in range(k):
            if j not in over and _same(values, series[j], tolerance):
                over[k] = j
                break
    return over


def curves(title: str, series: list[dict], x_label: str, y_label: str,
           reference: tuple[float, str] | None = None, strip: float | None = None,
           colours: list[str] | None = None) -> str:
    """Curves with their 95% bands on one chart (answers side by side): series [{name, x, y,
    low, high, points: {x, y} (observed, optional), mark: x (a vertical tick, optional)}];
    `reference` (y, its legend text): a dashed line, with a +-`strip` band around it;
    `colours`: one per series (default: the palette in order).  A curve equal to an earlier
    one is drawn dashed over it and said under the chart."""
    colours = colours or [colour(k) for k in range(len(series))]
    xs = [x for s in series for x in s["x"]]
    ys = [v for s in series for v in s["low"] + s["high"] + s["y"]]
    if reference:
        ys += [reference[0] - (strip or 0), reference[0] + (strip or 0)]
    lo_y, hi_y = min(ys + [0.0]), max(ys + [0.0])
    pad = 0.05 * (hi_y - lo_y or 1.0)
    frame = _Frame(title)
    y = frame.y_axis(lo_y - pad, hi_y + pad, y_label, signed=True)
    x0, x1 = min(xs), max(xs)

    def x(v: float) -> float:
        return LEFT + (frame.w - LEFT - RIGHT) * (v - x0) / ((x1 - x0) or 1.0)

    frame.x_ticks([(x(t), tick_text(t)) for t in nice_ticks(x0, x1, 10)], 40)
    entries = []
    if reference:
        if strip:
            frame.parts.append(f'<rect class="strip" x="{LEFT}" y="{fmt(y(reference[0] + strip))}"'
                               f' width="{frame.w - LEFT - RIGHT}" height="'
                               f'{fmt(y(reference[0] - strip) - y(reference[0] + strip))}" '
                               'fill="#eeeeee"/>')
        frame.parts.append(f'<line class="reference" x1="{LEFT}" x2="{frame.w - RIGHT}" '
                           f'y1="{fmt(y(reference[0]))}" y2="{fmt(y(reference[0]))}" '
                           'stroke="#777" stroke-dasharray="5 4"/>')
        entries.append(("dash", "#777", reference[1]))
    over = coinciding([s["y"] for s in series], 1e-9 + 0.002 * (hi_y - lo_y))
    for k, s in enumerate(series):
        c = colours[k]
        band = [f"{fmt(x(a))},{fmt(y(v))}" for a, v in zip(s["x"], s["high"])]
        band += [f"{fmt(x(a))},{fmt(y(v))}" for a, v in reversed(list(zip(s["x"], s["low"])))]
        frame.parts.append(f'<polygon class="band" points="{" ".join(band)}" fill="{c}" '
                           f'fill-opacity="0.15"><title>{escape(s["name"])}</title></polygon>')
        dash = ' stroke-dasharray="6 4"' if k in over else ""
        line = " ".join(f"{fmt(x(a))},{fmt(y(v))}" for a, v in zip(s["x"], s["y"]))
        frame.parts.append(f'<polyline class="curve" points="{line}" fill="none" stroke="{c}" '
                           f'stroke-width="2"{dash}><title>{escape(s["name"])}</title>'
                           '</polyline>')
        points = s.get("points") or {"x": [], "y": []}
        for a, v in zip(points["x"], points["y"]):
            frame.parts.append(f'<circle class="point" cx="{fmt(x(a))}" cy="{fmt(y(v))}" r="3" '
                               f'fill="{c}"><title>{escape(s["name"])}: {tick_text(a)}, '
                               f'{value_text(v, signed=True)}</title></circle>')
        if s.get("mark") is not None and x0 <= s["mark"] <= x1:
            frame.parts.append(f'<line class="mark" x1="{fmt(x(s["mark"]))}" '
                               f'x2="{fmt(x(s["mark"]))}" y1="{frame.top}" y2="{frame.bottom}" '
                               f'stroke="{c}" stroke-dasharray="2 3"/>')
        entries.append(("dash" if k in over else "line", c, s["name"]))
    notes = [f"{series[k]['name']} equals {series[j]['name']}: drawn dashed over it."
             for k, j in over.items()]
    return frame.finish(x_label, entries, notes)
