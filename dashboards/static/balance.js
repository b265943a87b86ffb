// The balance page (static/balance.html): submit a spec with a `balance` section to
// POST /api/balance, follow the job, then show its sentences and, for a fair-value search,
// the sensitivity chart of every player count (GET /api/balance/{id}/chart.svg, drawn by
// dashboards/balance_chart.py: the same picture as the report's).
"use strict";

(function (M) {
  const $ = (id) => document.getElementById(id);

  M.balanceChart = async function (jobId, players, into) {
    const response = await M.fetch(`/api/balance/${encodeURIComponent(jobId)}/chart.svg` +
                                   `?players=${players}`);
    if (!response.ok) return;
    const holder = document.createElement("figure");
    holder.className = "balance-chart";
    holder.innerHTML = await response.text();   // our own SVG: no script inside
    into.appendChild(holder);
  };

  function line(text, into, cls) {
    const p = document.createElement("p");
    p.textContent = text;
    if (cls) p.className = cls;
    into.appendChild(p);
  }

  async function show(job) {
    const out = $("balance-result");
    out.replaceChildren();
    line(`status: ${job.status} (${job.games_played.toLocaleString()} games played)`, out);
    if (job.status === "failed") line(job.error, out, "error");
    if (job.status !== "done") return false;
    for (const cell of job.result.cells) {
      line(cell.sentence, out, "verdict");
      for (const c of cell.confirmations || []) line("confirmation: " + c.sentence, out);
      if (job.result.kind === "fair_value") await M.balanceChart(job.id, cell.players, out);
    }
    return true;
  }

  async function follow(jobId) {
    for (;;) {
      const job = await M.getJSON(`/api/balance/${encodeURIComponent(jobId)}`);
      if (await show(job) || job.status === "failed") return;
      await new Promise((r) => setTimeout(r, 2000));
    }
  }

  async function submit(event) {
    event.preventDefault();
    let spec;
    try {
      spec = JSON.parse($("balance-spec").value);
    } catch (err) {
      line(`the spec is not JSON: ${err.message}`, $("balance-result"), "error");
      return;
    }
    const response = await M.fetch("/api/balance", {
      method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(spec)});
    const body = await response.json().catch(() => null);
    if (!response.ok) {
      $("balance-result").replaceChildren();
      line(M.errorText(body) || response.statusText, $("balance-result"), "error");
      return;
    }
    history.replaceState(null, "", `?job=${body.id}`);
    follow(body.id);
  }

  document.addEventListener("DOMContentLoaded", () => {
    const form = $("balance-form");
    if (!form) return;
    form.addEventListener("submit", submit);
    const job = new URLSearchParams(location.search).get("job");
    if (job) follow(job);
  });
})(window.Meeple);
