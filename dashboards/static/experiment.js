// One experiment: status and live progress (polling), then per player count the win share
// per seat per arm with 95% intervals, score histograms per seat, the game-length histogram,
// the summary table and the comparison against the baseline with significant rows marked.
"use strict";
(function (M) {
  const POLL_MS = 1000;
  const RESULTS_EVERY = 5;  // while running, reload the (partial) results every 5 polls
  const FINISHED = ["done", "failed", "cancelled"];
  const id = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop());
  const api = `/api/experiments/${encodeURIComponent(id)}`;
  const $ = (x) => document.getElementById(x);
  let polls = 0, shownFinal = false;

  function chartBox(title, draw) {
    const box = M.h("div", {class: "chart-box"}, M.h("h4", {}, title));
    draw(box);
    return box;
  }

  const unique = (values) => [...new Set(values)];

  function winShareChart(rows, players, arms) {
    const seats = unique(rows.map((r) => r.seat)).sort((a, b) => a - b);
    const series = arms.map((arm) => ({name: arm, points: seats.map((s) => {
      const r = rows.find((x) => x.arm === arm && x.seat === s);
      return r ? {y: r.win_share, lo: r.win_lo, hi: r.win_hi} : null;
    })}));
    return chartBox(`Win share per seat, ${players} players (95% intervals)`, (box) =>
      M.barChart(box, seats.map((s) => `seat ${s}`), series,
                 {yLabel: "win share", yMin: 0, reference: 1 / players,
                  title: `win share per seat, ${players} players`}));
  }

  function scoreCharts(hist, players, arms) {
    if (!hist.score.series.length) return [];
    const mine = hist.score.series.filter((s) => s.players === players);
    const seats = unique(mine.map((s) => s.seat)).sort((a, b) => a - b);
    return seats.map((seat) => chartBox(`Score distribution, seat ${seat}, ${players} players`,
      (box) => M.histogram(box, hist.score.edges,
        arms.map((arm) => mine.find((s) => s.arm === arm && s.seat === seat))
            .filter(Boolean).map((s) => ({name: s.arm, counts: s.counts})),
        {xLabel: "score"})));
  }

  function lengthChart(hist, players, arms) {
    const mine = hist.length.series.filter((s) => s.players === players);
    return chartBox(`Game length, ${players} players`, (box) =>
      M.histogram(box, hist.length.edges,
        arms.map((arm) => mine.find((s) => s.arm === arm)).filter(Boolean)
            .map((s) => ({name: s.arm, counts: s.counts})), {xLabel: "game length (moves)"}));
  }

  const interval = (lo, hi) => (v, r) => `${M.num(v)} [${M.num(r[lo])}, ${M.num(r[hi])}]`;
  const pval = (v) => (v === null || v === undefined ? "–" : v < 1e-4 ? "<0.0001" : v.toFixed(4));

  function summaryTable(rows) {
    return M.table(rows, [["arm", "arm", String], ["seat", "seat"], ["agent", "agent", String],
      ["games", "games"], ["win_share", "win share [95%]", interval("win_lo", "win_hi")],
      ["score_mean", "mean score [95%]", interval("score_lo", "score_hi")],
      ["seat_p_value", "seat balance p", pval], ["tie_rate", "tie rate"],
      ["length_p50", "median length"]]);
  }

  function compareTable(rows) {
    return M.table(rows, [["arm", "arm", String], ["seat", "seat"], ["pairs", "paired games"],
      ["win_share_diff", "Δ win share [95%]", interval("win_diff_lo", "win_diff_hi")],
      ["win_p_holm", "p (Holm)", pval],
      ["score_diff", "Δ mean score [95%]", interval("score_diff_lo", "score_diff_hi")],
      ["score_p_holm", "p (Holm)", pval],
      ["significant", "significant", (v) => (v ? "★ yes" : "no")]],
      (r) => (r.significant ? "significant" : ""));
  }

  async function loadResults(exp) {
    let summary, hist, compare = [];
    try {
      [summary, hist] = await Promise.all([M.getJSON(`${api}/summary`), M.getJSON(`${api}/histograms`)]);
    } catch (e) {
      if (e.status === 409) return false;  // no shard written yet
      throw e;
    }
    const arms = unique(summary.map((r) => r.arm));
    if (arms.length > 1) compare = await M.getJSON(`${api}/compare`);
    const out = [];
    for (const players of unique(summary.map((r) => r.players)).sort((a, b) => a - b)) {
      const rows = summary.filter((r) => r.players === players);
      out.push(M.h("section", {class: "players", "data-players": players},
        M.h("h2", {}, `${players} players`),
        M.h("div", {class: "charts"}, winShareChart(rows, players, arms),
            lengthChart(hist, players, arms), scoreCharts(hist, players, arms)),
        M.h("h3", {}, "Summary"), summaryTable(rows),
        compare.length ? [M.h("h3", {}, `Comparison with the baseline (${compare[0].baseline})`),
                          compareTable(compare.filter((r) => r.players === players))] : []));
    }
    $("results").replaceChildren(...out);
    $("downloads").hidden = false;
    return true;
  }

  async function poll() {
    let exp;
    try {
      exp = await M.getJSON(api);
    } catch (e) {
      $("page-error").textContent = e.status === 404 ? `No experiment ${id}.` : e.message;
      $("page-error").hidden = false;
      if (e.status !== 404) setTimeout(poll, POLL_MS);
      return;
    }
    document.title = `meeplelab · ${exp.name}`;
    $("title").textContent = `${exp.name} (${exp.game})`;
    $("spec").textContent = JSON.stringify(exp.spec, null, 2);
    const p = exp.progress;
    $("status-line").replaceChildren(M.h("span", {id: "status", class: `status-${exp.status}`},
      exp.status), " ", M.progressBar(exp), " ",
      p.games_per_second ? `${M.num(p.games_per_second, 0)} games/s` : "",
      exp.status === "running" ? ` · ETA ${M.duration(p.eta_seconds)}` : "",
      exp.error ? M.h("span", {class: "error"}, ` ${exp.error}`) : "");
    $("cancel").hidden = FINISHED.includes(exp.status);
    const finished = FINISHED.includes(exp.status);
    try {
      if (finished && !shownFinal) shownFinal = await loadResults(exp) || true;
      else if (!finished && polls % RESULTS_EVERY === 0) await loadResults(exp);
    } catch (e) {
      $("page-error").textContent = `Cannot load results: ${e.message}`;
      $("page-error").hidden = false;
    }
    polls++;
    if (!finished) setTimeout(poll, POLL_MS);
  }

  for (const [a, path] of [["dl-csv", "summary.csv"], ["dl-parquet", "results.parquet"],
                           ["dl-zip", "results.zip"]])
    M.downloadLink($(a), `${api}/download/${path}`);
  $("cancel").addEventListener("click", async () => {
    await M.fetch(`${api}/cancel`, {method: "POST"});
  });
  poll();
})(window.Meeple);
