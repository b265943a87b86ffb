// Past balance searches (/balance/searches): GET /api/balance as a table, one row per answer
// (a player count, or a rung), with who asked, the status, the answer in short and its cost.
// Ticking two answers of one option shows them side by side (?answer=<id>:<cell>, twice or
// more): each answer's sentence and one chart with every curve
// (GET /api/balance/compare.svg, drawn by dashboards/charts.py).
"use strict";
(function (M) {
  const $ = (id) => document.getElementById(id);
  let listed = [];

  const ref = (s, a) => `${s.id}:${a.cell}`;

  function cost(s) {
    const cpu = s.cpu_seconds ? `, ${M.duration(s.cpu_seconds)} CPU` : "";
    return `${M.plural(s.games_played, "game")}${cpu}`;
  }

  function rows(s) {
    const answers = s.answers.length ? s.answers : [null];
    return answers.map((a) => M.h("tr", {"data-id": s.id, class: `status-${s.status}`},
      M.h("td", {}, a && s.kind === "fair_value" ? M.h("input", {type: "checkbox",
        class: "pick", value: ref(s, a), "data-option": s.question, onchange: picked}) : ""),
      M.h("td", {}, M.h("a", {href: `/balance?job=${encodeURIComponent(s.id)}`}, s.name)),
      M.h("td", {}, s.game),
      M.h("td", {}, a ? `${s.question}, seat ${a.seat ?? "team"}, ${a.players} players, ${a.agent}`
                      : `${s.question}, ${s.players.join("/")} players`),
      M.h("td", {class: "owner"}, s.owner || "–"),
      M.h("td", {class: "status"}, s.status),
      M.h("td", {class: "answer"}, a ? a.short : s.status === "done" ? "–" : "…"),
      M.h("td", {}, cost(s)),
      M.h("td", {}, M.when(s.created_at))));
  }

  function picked() {
    const boxes = [...document.querySelectorAll("input.pick:checked")];
    const options = new Set(boxes.map((b) => b.dataset.option));
    const ok = boxes.length >= 2 && options.size === 1;
    $("compare-button").disabled = !ok;
    $("compare-help").textContent = boxes.length >= 2 && options.size > 1
      ? "Answers of different options cannot share a chart: tick answers of one option."
      : boxes.length < 2 ? "Tick two answers." : "";
  }

  async function showCompare(refs) {
    $("compare").hidden = false;
    const shown = [];
    for (const r of refs) {
      const [id, cell] = [r.slice(0, r.lastIndexOf(":")), Number(r.slice(r.lastIndexOf(":") + 1))];
      const job = await M.getJSON(`/api/balance/${encodeURIComponent(id)}`);
      const c = job.result && job.result.cells[cell];
      shown.push(M.h("div", {class: "answer-box"}, M.h("h3", {}, job.name),
        M.h("p", {class: "verdict answer"}, c ? c.sentence : `${job.status}: no answer ${cell}`),
        ...((c && c.confirmations) || []).map((k) => M.h("p", {class: "confirmation"},
          "confirmation: " + k.sentence))));
    }
    $("compare-answers").replaceChildren(...shown);
    const query = refs.map((r) => `answer=${encodeURIComponent(r)}`).join("&");
    const response = await M.fetch(`/api/balance/compare.svg?${query}`, {});
    if (response.ok) $("compare-chart").innerHTML = await response.text();  // our own SVG
    else $("compare-chart").replaceChildren(M.h("p", {class: "error"},
      M.errorText(await response.json().catch(() => null)) || `error ${response.status}`));
  }

  async function refresh() {
    try {
      listed = await M.getJSON("/api/balance");
      $("searches").querySelector("tbody").replaceChildren(...listed.flatMap(rows));
      $("empty").hidden = listed.length > 0;
      $("list-error").hidden = true;
    } catch (e) {
      $("list-error").textContent = `Cannot load the searches: ${e.message}`;
      $("list-error").hidden = false;
    }
  }

  document.addEventListener("DOMContentLoaded", async () => {
    $("compare-button").addEventListener("click", () => {
      const refs = [...document.querySelectorAll("input.pick:checked")].map((b) => b.value);
      history.replaceState(null, "", "?" + refs.map((r) => `answer=${encodeURIComponent(r)}`).join("&"));
      showCompare(refs);
    });
    await refresh();
    const refs = new URLSearchParams(location.search).getAll("answer");
    if (refs.length >= 2) showCompare(refs);
  });
})(window.Meeple);
