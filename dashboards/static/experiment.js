// One experiment: status and live progress (polling), then per player count the verdicts,
// the charts and tables of the API's figures.  While the run goes on the figures are interim
// (always-valid confidence sequences, no p-values) and say so; the fixed-n figures replace
// them when it is done.  A competitive game: win share per seat per arm against the fair
// share, score and length histograms, the summary and the comparison with the baseline.  A
// cooperative game is one team result per game: team win rate per arm, how games end per arm
// (stacked), team win rate per role or team make-up, game length; no seats, ties or fair line.
"use strict";
(function (M) {
  const POLL_MS = 1000;
  const RESULTS_EVERY = 5;  // while running, reload the (partial) results every 5 polls
  const FINISHED = ["done", "failed", "cancelled"];
  const TRUNCATION_WARNING = 0.01;  // warn when more than 1% of a cell's games were truncated
  const id = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop());
  const api = `/api/experiments/${encodeURIComponent(id)}`;
  const $ = (x) => document.getElementById(x);
  let polls = 0, shownFinal = false, gameInfo = null;

  function chartBox(title, draw) {
    const box = M.h("div", {class: "chart-box"}, M.h("h4", {}, title));
    draw(box);
    return box;
  }

  const unique = (values) => [...new Set(values)];
  const pct = (v) => (v === null || v === undefined ? "–" : `${(100 * v).toFixed(1)}%`);
  const interval = (lo, hi, f) => (v, r) => `${(f || M.num)(v)} [${(f || M.num)(r[lo])}, ` +
                                            `${(f || M.num)(r[hi])}]`;
  const pval = (v) => (v === null || v === undefined ? "–" : v < 1e-4 ? "<0.0001" : v.toFixed(4));
  const points = (v) => (v === null || v === undefined ? "–" : `${(100 * v).toFixed(2)} pts`);
  // Seats as a designer counts them, from 1 (the data's seat index is 0-based).
  const seatNo = (s) => (s === null || s === undefined ? "team" : String(s + 1));
  const yesNo = (v) => (v === null || v === undefined ? "–" : v ? "★ yes" : "no");
  const CLIP = 0.01;  // histograms span the 1%-99% quantiles; the tails are counted apart

  // An agent string shown by its name, the full string on hover.
  function agentCell(full) {
    const text = String(full ?? "");
    const names = unique(text.split(/\s*[+\/]\s*(?![^(]*\))/).map((a) => a.split("(")[0].trim()));
    return M.h("span", {class: "agent", title: text}, names.join(" / "));
  }

  // ---- the headline: what the experiment concluded, from GET /headline ---------------------
  // One block per question (seat balance or the team's rate, each arm against the baseline,
  // the ladder), one item per cell; the sentences are the service's, shown as they are.
  function headlineItem(block, item) {
    const state = item.decided === null ? "estimate" : item.decided ? "decided" : "open";
    return M.h("div", {class: `headline-item ${state}`, "data-kind": block.kind,
                       "data-arm": item.arm, "data-players": item.players,
                       "data-decided": String(item.decided)},
      M.h("div", {class: "headline-title"}, M.h("span", {class: "status"}, item.status), " · ",
          M.h("span", {title: item.agent_full}, item.title)),
      item.sentences.filter(Boolean).map((s) => M.h("p", {class: "sentence"}, s)),
      M.h("p", {class: "level"}, `level: ${item.level}`));
  }

  function headlineBlock(block) {
    return M.h("div", {class: "headline-block", "data-kind": block.kind},
               M.h("h3", {}, block.title), block.items.map((i) => headlineItem(block, i)));
  }

  function headline(head) {
    return M.h("section", {class: "headline", id: "headline"},
               M.h("h2", {}, "The answer"), M.h("p", {class: "question"}, head.question),
               head.blocks.map(headlineBlock));
  }

  // ---- shared pieces ------------------------------------------------------------------------
  function verdicts(rows) {
    return M.h("ul", {class: "verdicts"}, rows.filter((r) => r.verdict).map((r) =>
      M.h("li", {}, M.h("strong", {}, `${r.arm}: `), r.verdict)));
  }

  function tailNote(series, edges) {
    const below = series.reduce((a, s) => a + (s.below || 0), 0);
    const above = series.reduce((a, s) => a + (s.above || 0), 0);
    if (!below && !above) return [];
    const parts = [];
    if (below) parts.push(`${M.plural(below, "game")} below ${M.num(edges[0], 1)}`);
    if (above) parts.push(`${M.plural(above, "game")} above ${M.num(edges[edges.length - 1], 1)}`);
    return M.h("p", {class: "help tail"}, `Not drawn (outside the 1%-99% range): ${parts.join(" and ")}.`);
  }

  function truncationWarning(cells) {
    const over = cells.filter((c) => c.truncated_share > TRUNCATION_WARNING);
    if (!over.length) return [];
    return M.h("p", {class: "warning"}, "Truncated games (ended by a simulator safety, left " +
      "out of every figure): " + over.map((c) => `${c.arm} ${pct(c.truncated_share)} ` +
      `(${M.num(c.truncated)} games)`).join(", ") + ". The agents may stall in these rules.");
  }

  function lengthChart(hist, players, arms) {
    const mine = arms.map((arm) => hist.length.series.find((s) => s.players === players &&
                                                             s.arm === arm)).filter(Boolean);
    return chartBox(`Game length, ${players} players`, (box) => {
      M.histogram(box, hist.length.edges, mine.map((s) => ({name: s.arm, counts: s.counts,
        total: s.counts.reduce((a, b) => a + b, 0) + (s.below || 0) + (s.above || 0)})),
        {xLabel: "game length (moves)"});
      box.append(...[tailNote(mine, hist.length.edges)].flat());
    });
  }

  // Each arm against the baseline: the win share (team win rate) and the mean score in their
  // own columns, each with its own "significant"; the row's colour follows the win share,
  // which is what its verdict sentence is about.
  function compareTable(rows, cooperative) {
    const level = rows.length ? rows[0].interval_level : 0.95;
    const head = `(${(100 * level).toFixed(1)}% interval)`;
    const columns = [["arm", "arm", String]];
    if (!cooperative) columns.push(["seat", "seat", seatNo]);
    columns.push(["pairs", "paired games"],
      ["win_share_diff", `Δ ${cooperative ? "team win rate" : "win share"} ${head}`,
       interval("win_diff_lo", "win_diff_hi", points)],
      ["win_p_adjusted", "p (adjusted)", pval],
      ["win_significant", `${cooperative ? "team win rate" : "win share"}: significant`, yesNo]);
    const scoreLevel = rows.length ? rows[0].score_interval_level : 0.95;
    if (!cooperative)
      columns.push(["score_diff", `Δ mean score (${(100 * scoreLevel).toFixed(1)}% interval)`, interval("score_diff_lo", "score_diff_hi")],
                   ["score_p_adjusted", "p (adjusted)", pval],
                   ["score_significant", "mean score: significant", yesNo]);
    columns.push(["verdict", "verdict", String]);
    const note = !rows.length ? "" : rows[0].interim
      ? `Interim: ${rows[0].p_adjust}. The verdicts and the stars use these intervals.`
      : `The intervals are at the ${(100 * level).toFixed(1)}% level: 95% adjusted for the ` +
        `tests of this experiment (${rows[0].p_adjust}). The verdicts and the stars use ` +
        "this level.";
    return [M.table(rows, columns, (r) => (r.win_significant ? "significant" : "")),
            M.h("p", {class: "help"}, note)];
  }

  function comparison(compare, players, cooperative) {
    const rows = compare.filter((r) => r.players === players);
    if (!rows.length) return [];
    return [M.h("h3", {}, `Comparison with the baseline (${rows[0].baseline})`),
            compareTable(rows, cooperative)];
  }

  // ---- competitive games ----------------------------------------------------------------------
  function winShareChart(rows, players, arms) {
    const seats = unique(rows.map((r) => r.seat)).sort((a, b) => a - b);
    const series = arms.map((arm) => ({name: arm, points: seats.map((s) => {
      const r = rows.find((x) => x.arm === arm && x.seat === s);
      return r ? {y: r.win_share, lo: r.win_lo, hi: r.win_hi} : null;
    })}));
    return chartBox(`Win share per seat, ${players} players (95% intervals; dashed: fair)`,
      (box) => M.barChart(box, seats.map((s) => `seat ${seatNo(s)}`), series,
                          {yLabel: "win share", yMin: 0, reference: 1 / players, percent: true,
                           title: `win share per seat, ${players} players`}));
  }

  function scoreCharts(hist, players, arms) {
    if (!hist.score.series.length) return [];
    const mine = hist.score.series.filter((s) => s.players === players);
    const seats = unique(mine.map((s) => s.seat)).sort((a, b) => a - b);
    return seats.map((seat) => chartBox(
      `Score distribution, seat ${seatNo(seat)}, ${players} players`,
      (box) => {
        const series = arms.map((arm) => mine.find((s) => s.arm === arm && s.seat === seat))
          .filter(Boolean);
        M.histogram(box, hist.score.edges, series.map((s) => ({name: s.arm, counts: s.counts,
          total: s.counts.reduce((a, b) => a + b, 0) + (s.below || 0) + (s.above || 0)})),
          {xLabel: "score"});
        box.append(...[tailNote(series, hist.score.edges)].flat());
      }));
  }

  function summaryTable(rows) {
    return M.table(rows, [["arm", "arm", String], ["seat", "seat", seatNo],
      ["agent", "agent", agentCell],
      ["games", "games"], ["win_share", "win share (95% interval)", interval("win_lo", "win_hi", pct)],
      ["score_mean", "mean score (95% interval)", interval("score_lo", "score_hi")],
      ["seat_p_adjusted", "seat balance p (adjusted)", pval], ["tie_rate", "tie rate", pct],
      ["truncated", "truncated"], ["length_p50", "median length"]]);
  }

  function competitiveSection(rows, players, arms, hist, compare) {
    const cells = arms.map((arm) => rows.find((r) => r.arm === arm)).filter(Boolean);
    return [verdicts(cells), truncationWarning(cells),
      M.h("div", {class: "charts"}, winShareChart(rows, players, arms),
          lengthChart(hist, players, arms), scoreCharts(hist, players, arms)),
      M.h("h3", {}, "Summary"), summaryTable(rows),
      M.h("p", {class: "help"}, cells.length ? `${cells[0].p_adjust || ""}; engine ` +
          `${cells[0].engine_version}` : ""),
      comparison(compare, players, false)];
  }

  // ---- cooperative games -----------------------------------------------------------------------
  function teamChart(cells, players) {
    return chartBox(`Team win rate per arm, ${players} players (95% intervals)`, (box) =>
      M.barChart(box, cells.map((c) => c.arm), [{name: "team win rate", points: cells.map(
        (c) => ({y: c.team_win_rate, lo: c.team_win_lo, hi: c.team_win_hi}))}],
        {yLabel: "team win rate", yMin: 0, percent: true,
         title: `team win rate, ${players} players`}));
  }

  function endingChart(cells, players) {
    const reasons = unique(cells.flatMap((c) => Object.keys(c).filter(
      (k) => k.startsWith("end_") && c[k] > 0))).sort();
    return chartBox(`How games end per arm, ${players} players`, (box) =>
      M.stackedBars(box, cells.map((c) => c.arm), reasons.map((k) => ({
        name: k.slice(4).replaceAll("_", " "), values: cells.map((c) => c[k] || 0)})),
        {title: `end reasons per arm, ${players} players`}));
  }

  function breakdownChart(rows, players, arms, label, team) {
    const values = unique(rows.map((r) => r.value)).sort();
    const series = arms.map((arm) => ({name: arm, points: values.map((v) => {
      const r = rows.find((x) => x.arm === arm && x.value === v);
      return r ? {y: r.win_rate, lo: r.win_lo, hi: r.win_hi} : null;
    })}));
    const what = team ? `team make-up (${label})` : label;
    return chartBox(`Team win rate per ${what}, ${players} players (95% intervals)`, (box) =>
      M.barChart(box, values, series, {yLabel: "team win rate", yMin: 0, percent: true,
                                       title: `team win rate per ${what}`}));
  }

  async function roleCharts(players, arms) {
    const labels = Object.keys(gameInfo.outcome_labels || {})
      .filter((name) => (gameInfo.seat_outcomes || []).includes(name));
    const charts = [];
    for (const label of labels) {
      const rows = (await M.getJSON(`${api}/breakdown?by=seat_${encodeURIComponent(label)}`))
        .filter((r) => r.players === players);
      charts.push(breakdownChart(rows, players, arms, label, false));
    }
    return charts;
  }

  function teamTable(cells) {
    return M.table(cells, [["arm", "arm", String], ["agent", "agents", agentCell],
      ["games", "games"],
      ["team_win_rate", "team win rate (95% interval)", interval("team_win_lo", "team_win_hi", pct)],
      ["truncated", "truncated"], ["length_p50", "median length"]]);
  }

  async function cooperativeSection(rows, players, arms, hist, compare) {
    const cells = arms.map((arm) => rows.find((r) => r.arm === arm)).filter(Boolean);
    return [verdicts(cells), truncationWarning(cells),
      M.h("div", {class: "charts"}, teamChart(cells, players), endingChart(cells, players),
          await roleCharts(players, arms), lengthChart(hist, players, arms)),
      M.h("h3", {}, "Summary"), teamTable(cells),
      M.h("p", {class: "help"}, cells.length ? `engine ${cells[0].engine_version}` : ""),
      comparison(compare, players, true)];
  }

  // ---- the strength ladder: seat advantage against agent strength ----------------------------
  // Per cell a chart with the rungs (weakest first) on the x axis and one bar per seat: its
  // win share minus the cell's mean share, with the 95% interval of the share around it.
  function ladderChart(rows, title) {
    const rungs = unique(rows.map((r) => r.rung));
    const seats = unique(rows.map((r) => r.seat)).sort((a, b) => a - b);
    const series = seats.map((seat) => ({name: `seat ${seatNo(seat)}`, points: rungs.map((rung) => {
      const r = rows.find((x) => x.rung === rung && x.seat === seat);
      return r ? {y: r.advantage, lo: r.advantage - (r.win_share - r.win_lo),
                  hi: r.advantage + (r.win_hi - r.win_share)} : null;
    })}));
    return chartBox(title, (box) => M.barChart(box, rungs, series, {
      yLabel: "seat advantage (win share - mean)", reference: 0, percent: true,
      title: "seat advantage per agent strength, weakest first"}));
  }

  async function ladderSection(head) {
    const ladder = await M.getJSON(`${api}/ladder`);
    const out = [M.h("h2", {}, "Strength ladder")];
    const block = head.blocks.find((b) => b.kind === "ladder");
    for (const item of (block ? block.items : []))
      out.push(M.h("p", {class: "ladder-verdict", "data-stable": String(item.stable),
                         title: item.agent_full}, item.sentences.join(" ")));
    const cells = unique(ladder.seats.map((r) => `${r.base}|${r.players}`));
    out.push(M.h("div", {class: "charts"}, cells.map((cell) => {
      const [base, players] = cell.split("|");
      return ladderChart(ladder.seats.filter((r) => r.base === base &&
                                                    String(r.players) === players),
                         `${base}, ${players} players`);
    })));
    return M.h("section", {class: "ladder", id: "ladder"}, out);
  }

  // ---- loading -----------------------------------------------------------------------------------
  async function loadResults(exp) {
    let summary, hist, head, compare = [];
    try {
      [summary, hist, head] = await Promise.all([M.getJSON(`${api}/summary`),
                                                 M.getJSON(`${api}/histograms?clip=${CLIP}`),
                                                 M.getJSON(`${api}/headline`)]);
    } catch (e) {
      if (e.status === 409) return false;  // no shard written yet
      throw e;
    }
    if (!gameInfo) gameInfo = (await M.getJSON("/api/games")).find((g) => g.name === exp.game);
    // the arms in the spec's order (the headline's), not the tables' alphabetical one
    const arms = unique([...head.blocks.flatMap((b) => b.kind === "ladder" ? []
                                                 : b.items.map((i) => i.arm)),
                         ...summary.map((r) => r.arm)]);
    if (arms.length > 1) compare = await M.getJSON(`${api}/compare`);
    const cooperative = summary.length > 0 && summary[0].cooperative;
    const interim = summary.some((r) => r.interim);
    const out = [interim ? M.h("p", {class: "interim", id: "interim"}, "Interim figures: the run " +
      "is not done, so every interval is a confidence sequence that holds at any look (wider " +
      "than the final ones) and no p-values are shown. The final figures appear when it is done.")
      : [], headline(head)];
    if (exp.spec.ladder) out.push(await ladderSection(head));
    for (const players of unique(summary.map((r) => r.players)).sort((a, b) => a - b)) {
      const rows = summary.filter((r) => r.players === players);
      const body = cooperative ? await cooperativeSection(rows, players, arms, hist, compare)
        : competitiveSection(rows, players, arms, hist, compare);
      out.push(M.h("section", {class: "players", "data-players": players},
                   M.h("h2", {}, `${players} players`), body.flat(Infinity)));
    }
    $("results").replaceChildren(...out.flat());
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
      p.games_per_second ? `${M.plural(Math.round(p.games_per_second), "game")}/s` : "",
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

  for (const [a, path] of [["dl-csv", "download/summary.csv"],
                           ["dl-parquet", "download/results.parquet"],
                           ["dl-zip", "download/results.zip"], ["dl-report", "report.html"]])
    M.downloadLink($(a), `${api}/${path}`);
  $("cancel").addEventListener("click", async () => {
    await M.fetch(`${api}/cancel`, {method: "POST"});
  });
  poll();
})(window.Meeple);
