// The experiment list: polls the API and redraws status and progress.
"use strict";
(function (M) {
  const POLL_MS = 1000;
  const body = document.querySelector("#experiments tbody");

  function row(exp) {
    const when = new Date(exp.created_at * 1000).toLocaleString("en-GB");
    return M.h("tr", {"data-id": exp.id, class: `status-${exp.status}`},
      M.h("td", {}, M.h("a", {href: `/experiments/${exp.id}`}, exp.name || exp.id)),
      M.h("td", {}, exp.game),
      M.h("td", {class: "status"}, exp.status),
      M.h("td", {}, M.progressBar(exp)),
      M.h("td", {}, exp.progress.games_per_second ? M.num(exp.progress.games_per_second, 0) : "–"),
      M.h("td", {}, exp.status === "running" ? M.duration(exp.progress.eta_seconds) : "–"),
      M.h("td", {}, when),
      M.h("td", {}, exp.error ? M.h("span", {class: "error", title: exp.error}, "error") : ""));
  }

  async function refresh() {
    const error = document.getElementById("list-error");
    try {
      const experiments = await M.getJSON("/api/experiments");
      body.replaceChildren(...experiments.map(row));
      document.getElementById("empty").hidden = experiments.length > 0;
      error.hidden = true;
    } catch (e) {
      error.textContent = `Cannot load experiments: ${e.message}`;
      error.hidden = false;
    }
    setTimeout(refresh, POLL_MS);
  }
  refresh();
})(window.Meeple);
