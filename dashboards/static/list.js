// The experiment list: polls the API and redraws status and progress; each experiment with
// results shows its headline verdict (GET /headline, fetched again only when its status or
// its games change, at most every HEADLINE_MS while it runs).
"use strict";
(function (M) {
  const POLL_MS = 1000;
  const HEADLINE_MS = 10000;
  const body = document.querySelector("#experiments tbody");
  const verdicts = {};  // id -> {key, at, text, decided}

  function verdictCell(exp) {
    const v = verdicts[exp.id];
    if (!v) return M.h("td", {class: "verdict"}, exp.progress.done ? "…" : "–");
    return M.h("td", {class: `verdict ${v.decided ? "decided" : "open"}`, title: v.text},
               v.text);
  }

  async function refreshVerdict(exp) {
    if (!exp.progress.done) return;
    const key = `${exp.status}|${exp.progress.done}`, known = verdicts[exp.id];
    if (known && (known.key === key || (exp.status === "running" &&
                                        Date.now() - known.at < HEADLINE_MS))) return;
    verdicts[exp.id] = {...(known || {text: "…"}), key, at: Date.now()};
    try {
      const head = await M.getJSON(`/api/experiments/${encodeURIComponent(exp.id)}/headline`);
      verdicts[exp.id] = {key, at: Date.now(), text: head.verdict || "–", decided: head.decided};
    } catch (e) {
      if (e.status !== 409) verdicts[exp.id] = {key, at: Date.now(), text: "–"};
    }
  }

  function row(exp) {
    return M.h("tr", {"data-id": exp.id, class: `status-${exp.status}`},
      M.h("td", {}, M.h("a", {href: `/experiments/${exp.id}`}, exp.name || exp.id)),
      M.h("td", {}, exp.game),
      M.h("td", {class: "status"}, exp.status),
      M.h("td", {}, M.progressBar(exp)),
      verdictCell(exp),
      M.h("td", {class: "rate"}, exp.status === "running" && exp.progress.games_per_second
        ? M.num(exp.progress.games_per_second, 0) : "–"),  // live figures of a running job only
      M.h("td", {class: "eta"}, exp.status === "running" ? M.duration(exp.progress.eta_seconds) : "–"),
      M.h("td", {}, M.when(exp.created_at)),
      M.h("td", {}, exp.error ? M.h("span", {class: "error", title: exp.error}, "error") : ""));
  }

  async function refresh() {
    const error = document.getElementById("list-error");
    try {
      const experiments = await M.getJSON("/api/experiments");
      body.replaceChildren(...experiments.map(row));
      document.getElementById("empty").hidden = experiments.length > 0;
      error.hidden = true;
      experiments.forEach((exp) => refreshVerdict(exp).then(() => {
        const tr = body.querySelector(`tr[data-id="${CSS.escape(exp.id)}"]`);
        if (tr) tr.replaceChild(verdictCell(exp), tr.querySelector("td.verdict"));
      }));
    } catch (e) {
      error.textContent = `Cannot load experiments: ${e.message}`;
      error.hidden = false;
    }
    setTimeout(refresh, POLL_MS);
  }
  refresh();
})(window.Meeple);
