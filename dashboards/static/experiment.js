// One experiment: status and live progress (polling), and its results as the service renders
// them (GET .../view: an HTML fragment of services.view, the same words, tables and figures
// as the shareable report and `meeplelab report`).  While the run goes the fragment is
// reloaded and is interim (it says so); once the run has ended it is loaded once more.
// This script keeps behaviour only: polling, cancel, downloads, the replay of damaged shards.
"use strict";
(function (M) {
  const POLL_MS = 1000;
  const RESULTS_EVERY = 2;  // while running, reload the (partial) results every 2 polls
  const id = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop());
  const api = `/api/experiments/${encodeURIComponent(id)}`;
  const $ = (x) => document.getElementById(x);
  let polls = 0, shownFinal = false;

  // A finished experiment's shards that do not verify against its manifest (the figures
  // leave them out): the service's sentence naming them, and a button that replays them.
  function damageNotice(integrity) {
    if (!integrity) return [];
    const replay = M.h("button", {type: "button", id: "replay"}, "Replay the damaged shards");
    replay.addEventListener("click", async () => {
      replay.disabled = true;
      await M.fetch(`${api}/replay`, {method: "POST"});
      location.reload();
    });
    return [M.h("p", {class: "error", id: "damage"}, integrity.notice, " ", replay)];
  }

  async function loadResults(exp) {
    let view;
    try {
      view = await M.getJSON(`${api}/view`);
    } catch (e) {
      // no shard written yet; or, once finished, none that verifies (the detail names them)
      if (e.status === 409 && !exp.finished) return false;
      throw e;
    }
    const box = M.h("div", {});
    box.innerHTML = view.html;  // the service's markup: text escaped, SVG without script
    $("results").replaceChildren(...damageNotice(view.integrity), ...box.childNodes);
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
      // a live rate and an ETA while it runs only: an ended run has neither
      exp.status === "running" && p.games_per_second
        ? `${M.plural(Math.round(p.games_per_second), "game")}/s` : "",
      exp.status === "running" ? ` · ETA ${M.duration(p.eta_seconds)}` : "",
      exp.error ? M.h("span", {class: "error"}, ` ${exp.error}`) : "");
    const finished = exp.finished;  // the service's statuses (services/registry.py)
    $("cancel").hidden = finished;
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
