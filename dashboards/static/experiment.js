// One experiment: status and live progress (polling), then per player count the verdicts,
// the figures and the tables.  The figures are the service's (GET .../figures: SVG drawn
// once by dashboards/charts.py, the same the shareable report inlines), shown as they come;
// while the run goes on they are reloaded with the tables and are interim (always-valid
// confidence sequences, no p-values) and say so; the fixed-n figures replace them when it is
// done.  A competitive game's tables: the summary per seat and the comparison with the
// baseline; a cooperative game's: one team result per arm; no seats, ties or fair line.
"use strict";
(function (M) {
  const POLL_MS = 1000;
  const RESULTS_EVERY = 5;  // while running, reload the (partial) results every 5 polls
  const FINISHED = ["done", "failed", "cancelled"];
  const TRUNCATION_WARNING = 0.01;  // warn when more than 1% of a cell's games were truncated
  const id = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop());
  const api = `/api/experiments/${encodeURIComponent(id)}`;
  const $ = (x) => document.getElementById(x);
  let polls = 0, shownFinal = false;

  // A figure as the service drew it (its SVG holds no script and fetches nothing).
  function figureBox(figure) {
    const box = M.h("div", {class: "chart-box", "data-figure": figure.key});
    box.innerHTML = figure.svg;
    return box;
  }

  const charts = (figures) => M.h("div", {class: "charts"}, figures.map(figureBox));

  const unique = (values) => [...new Set(values)];
  const pct = (v) => (v === null || v === undefined ? "–" : `${(100 * v).toFixed(1)}%`);
  const interval = (lo, hi, f) => (v, r) => `${(f || M.num)(v)} [${(f || M.num)(r[lo])}, ` +
                                            `${(f || M.num)(r[hi])}]`;
  const pval = (v) => (v === null || v === undefined ? "–" : v < 1e-4 ? "<0.0001" : v.toFixed(4));
  const points = (v) => (v === null || v === undefined ? "–" : `${(100 * v).toFixed(2)} pts`);
  // Seats as a designer counts them, from 1 (the data's seat index is 0-based).
  const seatNo = (s) => (s === null || s === undefined ? "team" : String(s + 1));
  const yesNo = (v) => (v === null || v === undefined ? "–" : v ? "★ yes" : "no");

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

  function truncationWarning(cells) {
    const over = cells.filter((c) => c.truncated_share > TRUNCATION_WARNING);
    if (!over.length) return [];
    return M.h("p", {class: "warning"}, "Truncated games (ended by a simulator safety, left " +
      "out of every figure): " + over.map((c) => `${c.arm} ${pct(c.truncated_share)} ` +
      `(${M.num(c.truncated)} games)`).join(", ") + ". The agents may stall in these rules.");
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
  function summaryTable(rows) {
    return M.table(rows, [["arm", "arm", String], ["seat", "seat", seatNo],
      ["agent", "agent", agentCell],
      ["games", "games"], ["win_share", "win share (95% interval)", interval("win_lo", "win_hi", pct)],
      ["score_mean", "mean score (95% interval)", interval("score_lo", "score_hi")],
      ["seat_p_adjusted", "seat balance p (adjusted)", pval], ["tie_rate", "tie rate", pct],
      ["truncated", "truncated"], ["length_p50", "median length"]]);
  }

  function competitiveSection(rows, players, arms, figures, compare) {
    const cells = arms.map((arm) => rows.find((r) => r.arm === arm)).filter(Boolean);
    return [verdicts(cells), truncationWarning(cells), charts(figures),
      M.h("h3", {}, "Summary"), summaryTable(rows),
      M.h("p", {class: "help"}, cells.length ? `${cells[0].p_adjust || ""}; engine ` +
          `${cells[0].engine_version}` : ""),
      comparison(compare, players, false)];
  }

  // ---- cooperative games -----------------------------------------------------------------------
  function teamTable(cells) {
    return M.table(cells, [["arm", "arm", String], ["agent", "agents", agentCell],
      ["games", "games"],
      ["team_win_rate", "team win rate (95% interval)", interval("team_win_lo", "team_win_hi", pct)],
      ["truncated", "truncated"], ["length_p50", "median length"]]);
  }

  function cooperativeSection(rows, players, arms, figures, compare) {
    const cells = arms.map((arm) => rows.find((r) => r.arm === arm)).filter(Boolean);
    return [verdicts(cells), truncationWarning(cells), charts(figures),
      M.h("h3", {}, "Summary"), teamTable(cells),
      M.h("p", {class: "help"}, cells.length ? `engine ${cells[0].engine_version}` : ""),
      comparison(compare, players, true)];
  }

  // ---- the strength ladder: per cell, whether the seat verdict is stable; the figures ------
  function ladderSection(head, figures) {
    const out = [M.h("h2", {}, "Strength ladder")];
    const block = head.blocks.find((b) => b.kind === "ladder");
    for (const item of (block ? block.items : []))
      out.push(M.h("p", {class: "ladder-verdict", "data-stable": String(item.stable),
                         title: item.agent_full}, item.sentences.join(" ")));
    out.push(charts(figures.filter((f) => f.section === "ladder")));
    return M.h("section", {class: "ladder", id: "ladder"}, out);
  }

  // A finished experiment's shards that do not verify against its manifest (the figures
  // leave them out): the sentence naming them, and a button that replays exactly them.
  function damageNotice(integrity) {
    if (!integrity) return [];
    const replay = M.h("button", {type: "button", id: "replay"}, "Replay the damaged shards");
    replay.addEventListener("click", async () => {
      replay.disabled = true;
      await M.fetch(`${api}/replay`, {method: "POST"});
      location.reload();
    });
    return M.h("p", {class: "error", id: "damage"}, integrity.notice, " ", replay);
  }

  // ---- loading -----------------------------------------------------------------------------------
  async function loadResults(exp) {
    let summary, figures, head, compare = [];
    try {
      [summary, figures, head] = await Promise.all([M.getJSON(`${api}/summary`),
                                                    M.getJSON(`${api}/figures`),
                                                    M.getJSON(`${api}/headline`)]);
    } catch (e) {
      // no shard written yet; or, once finished, none that verifies (the detail names them)
      if (e.status === 409 && !FINISHED.includes(exp.status)) return false;
      throw e;
    }
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
      : [], damageNotice(summary[0] && summary[0].integrity), headline(head)];
    if (exp.spec.ladder) out.push(ladderSection(head, figures));
    for (const players of unique(summary.map((r) => r.players)).sort((a, b) => a - b)) {
      const rows = summary.filter((r) => r.players === players);
      const mine = figures.filter((f) => f.section === "players" && f.players === players);
      const body = (cooperative ? cooperativeSection : competitiveSection)(
        rows, players, arms, mine, compare);
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
