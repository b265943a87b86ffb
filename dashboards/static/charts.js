// Small SVG charts drawn from the API's JSON: no chart library, nothing fetched from outside.
// Meeple.barChart: grouped bars with error bars; Meeple.stackedBars: shares stacked per group;
// Meeple.histogram: overlaid step histograms.
"use strict";
window.Meeple = window.Meeple || {};

(function (M) {
  const NS = "http://www.w3.org/2000/svg";
  const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                   "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  const W = 560, H = 300, PAD = {l: 52, r: 12, t: 14, b: 46};

  function el(tag, attrs, parent, text) {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }
  M.color = (i) => PALETTE[i % PALETTE.length];

  // "Nice" tick values covering [lo, hi].
  function ticks(lo, hi, count) {
    const span = hi - lo || 1;
    const raw = span / count, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => span / s <= count) || raw;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(+v.toFixed(10));
    return out;
  }
  const fmt = (v) => (Math.abs(v) >= 1000 || Number.isInteger(v) ? String(Math.round(v))
                                                                  : v.toPrecision(3));
  // A share or a rate as a designer reads it: 0.25 -> "25%" (opts.percent).
  const percent = (v) => `${+(100 * v).toFixed(1)}%`;

  function frame(container, title) {
    const svg = el("svg", {viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img"});
    if (title) el("title", {}, svg, title);
    container.appendChild(svg);
    return svg;
  }

  function yAxis(svg, lo, hi, label, f) {
    const y = (v) => PAD.t + (H - PAD.t - PAD.b) * (1 - (v - lo) / (hi - lo || 1));
    for (const t of ticks(lo, hi, 5)) {
      el("line", {x1: PAD.l, x2: W - PAD.r, y1: y(t), y2: y(t), class: "grid"}, svg);
      el("text", {x: PAD.l - 6, y: y(t) + 4, "text-anchor": "end", class: "tick"}, svg,
         (f || fmt)(t));
    }
    if (label) el("text", {x: 12, y: PAD.t + (H - PAD.t - PAD.b) / 2, class: "axis-label",
                           transform: `rotate(-90 12 ${PAD.t + (H - PAD.t - PAD.b) / 2})`,
                           "text-anchor": "middle"}, svg, label);
    return y;
  }

  function legend(container, names) {
    const box = document.createElement("div");
    box.className = "legend";
    names.forEach((name, i) => {
      const item = document.createElement("span");
      item.innerHTML = `<i style="background:${M.color(i)}"></i>`;
      item.appendChild(document.createTextNode(name));
      box.appendChild(item);
    });
    container.appendChild(box);
  }

  // groups: x labels; series: [{name, points: [{y, lo, hi} | null per group]}];
  // opts: {yLabel, yMin, yMax, reference (a horizontal line), title, percent (y is a share)}
  M.barChart = function (container, groups, series, opts) {
    opts = opts || {};
    const svg = frame(container, opts.title);
    const all = series.flatMap((s) => s.points.filter(Boolean).flatMap((p) => [p.y, p.lo ?? p.y,
                                                                               p.hi ?? p.y]));
    const lo = opts.yMin ?? Math.min(0, ...all);
    const hi = opts.yMax ?? Math.max(...all, opts.reference ?? -Infinity) * 1.1;
    const f = opts.percent ? percent : fmt;
    const y = yAxis(svg, lo, hi, opts.yLabel, f);
    const gw = (W - PAD.l - PAD.r) / groups.length, bw = gw * 0.8 / series.length;
    groups.forEach((g, gi) => {
      el("text", {x: PAD.l + gw * (gi + 0.5), y: H - PAD.b + 16, "text-anchor": "middle",
                  class: "tick"}, svg, g);
      series.forEach((s, si) => {
        const p = s.points[gi];
        if (!p || p.y === null || p.y === undefined) return;
        const x = PAD.l + gw * gi + gw * 0.1 + bw * si;
        const bar = el("rect", {x, y: Math.min(y(p.y), y(0)), width: Math.max(bw - 2, 1),
                                height: Math.abs(y(0) - y(p.y)), fill: M.color(si),
                                class: "bar"}, svg);
        el("title", {}, bar, `${s.name}, ${g}: ${f(p.y)}` +
           (p.lo !== undefined && p.lo !== null ? ` [${f(p.lo)}, ${f(p.hi)}]` : ""));
        if (p.lo !== undefined && p.lo !== null) {
          const cx = x + (bw - 2) / 2;
          el("line", {x1: cx, x2: cx, y1: y(p.lo), y2: y(p.hi), class: "errorbar"}, svg);
          for (const v of [p.lo, p.hi])
            el("line", {x1: cx - 4, x2: cx + 4, y1: y(v), y2: y(v), class: "errorbar"}, svg);
        }
      });
    });
    if (opts.reference !== undefined)
      el("line", {x1: PAD.l, x2: W - PAD.r, y1: y(opts.reference), y2: y(opts.reference),
                  class: "reference"}, svg);
    legend(container, series.map((s) => s.name));
    return svg;
  };

  // groups: x labels; segments: [{name, values: [share per group]}] stacked from 0 up to 1.
  M.stackedBars = function (container, groups, segments, opts) {
    opts = opts || {};
    const svg = frame(container, opts.title);
    const y = yAxis(svg, 0, 1, opts.yLabel || "share of games");
    const gw = (W - PAD.l - PAD.r) / groups.length, bw = Math.min(gw * 0.6, 90);
    groups.forEach((g, gi) => {
      const x = PAD.l + gw * (gi + 0.5) - bw / 2;
      el("text", {x: x + bw / 2, y: H - PAD.b + 16, "text-anchor": "middle", class: "tick"},
         svg, g);
      let base = 0;
      segments.forEach((s, si) => {
        const v = s.values[gi] || 0;
        if (v <= 0) return;
        const part = el("rect", {x, y: y(base + v), width: bw, height: y(base) - y(base + v),
                                 fill: M.color(si), class: "segment"}, svg);
        el("title", {}, part, `${g}, ${s.name}: ${(100 * v).toFixed(1)}%`);
        base += v;
      });
    });
    legend(container, segments.map((s) => s.name));
    return svg;
  };

  // edges: n+1 bin edges; series: [{name, counts: n, total?}]; drawn as shares of each
  // series' total (`total` when the counts leave out clipped tails, else their sum).
  M.histogram = function (container, edges, series, opts) {
    opts = opts || {};
    const svg = frame(container, opts.title);
    const shares = series.map((s) => {
      const total = s.total || s.counts.reduce((a, b) => a + b, 0) || 1;
      return s.counts.map((c) => c / total);
    });
    const hi = Math.max(...shares.flat(), 0.01) * 1.1;
    const y = yAxis(svg, 0, hi, opts.yLabel || "share of games");
    const x0 = edges[0], x1 = edges[edges.length - 1];
    const x = (v) => PAD.l + (W - PAD.l - PAD.r) * (v - x0) / (x1 - x0 || 1);
    for (const t of ticks(x0, x1, 8))
      el("text", {x: x(t), y: H - PAD.b + 16, "text-anchor": "middle", class: "tick"}, svg, fmt(t));
    if (opts.xLabel) el("text", {x: (PAD.l + W - PAD.r) / 2, y: H - 8, "text-anchor": "middle",
                                 class: "axis-label"}, svg, opts.xLabel);
    shares.forEach((values, si) => {
      let d = `M ${x(edges[0])} ${y(0)}`;
      values.forEach((v, i) => { d += ` L ${x(edges[i])} ${y(v)} L ${x(edges[i + 1])} ${y(v)}`; });
      d += ` L ${x(x1)} ${y(0)}`;
      el("path", {d, stroke: M.color(si), fill: M.color(si), class: "hist"}, svg);
    });
    legend(container, series.map((s) => s.name));
    return svg;
  };
})(window.Meeple);
