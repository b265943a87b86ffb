// The balance page (/balance): a form built from the catalogue (game, option, one seat or
// every seat at once, range, target, player counts, agents or an answer per strength from the
// game's presets) that queues a fair-value search (POST /api/balance), then follows the job: its progress and
// ETA while it runs, a Cancel button, and once done its answers as the service renders them
// (GET /api/balance/{id}/view: per answer the recommendation, the sentences and the
// sensitivity chart, per strength whether the fair value moves; the report's markup).
// ?job=<id> opens a job.
"use strict";

(function (M) {
  const $ = (id) => document.getElementById(id);
  let games = [], following = null;

  // Options a fair value can be searched for: integers, and per-seat compensations.
  function searchable(info) {
    return Object.entries(info.rules.properties).filter(([, s]) =>
      s.type === "integer" || (s.type === "array" && s["x-analysis"] &&
                               s.items && s.items.type === "integer"));
  }

  function fillGame() {
    const info = games.find((g) => g.name === $("b-game").value);
    const options = searchable(info);
    const pick = options.find(([, s]) => s.type === "array") || options[0];
    $("b-option").replaceChildren(...options.map(([name, s]) =>
      M.h("option", {value: name}, `${s.title || name} (${name})`)));
    if (pick) $("b-option").value = pick[0];
    $("b-players").replaceChildren();
    for (let n = info.min_players; n <= info.max_players; n++) {
      const box = M.h("input", {type: "checkbox", class: "b-players", value: String(n)});
      box.checked = n === info.max_players;
      $("b-players").appendChild(M.h("label", {class: "inline"}, box, ` ${n}`));
    }
    $("b-agent-list").replaceChildren(...Object.keys(info.agents).map((a) =>
      M.h("option", {value: a})));
    $("b-rungs").replaceChildren(...Object.entries(info.presets.presets).map(([name, p]) =>
      M.h("label", {class: "inline", title: p.agent},
          M.h("input", {type: "checkbox", class: "b-rung", value: name}), ` ${name} `)));
    $("b-seat").replaceChildren(M.h("option", {value: "-1"}, "the last seat"),
      ...Array.from({length: info.max_players}, (_, k) =>
        M.h("option", {value: String(k + 1)}, `seat ${k + 1}`)),
      M.h("option", {value: "all"}, "every seat at once (seat 1 as the book has it)"));
    fillOption();
  }

  function fillOption() {
    const info = games.find((g) => g.name === $("b-game").value);
    const schema = info.rules.properties[$("b-option").value];
    if (!schema) return;
    const bounds = schema.type === "array" ? schema.items : schema;
    const low = bounds.minimum ?? 0;
    $("b-low").value = String(low);
    $("b-high").value = String(Math.min(bounds.maximum ?? low + 10, low + 10));
    $("b-option-help").textContent = schema["x-help"] || schema.description || "";
    $("b-seat").disabled = schema.type !== "array";
    fillSeat();
  }

  // Every seat at once makes every seat fair: no win rate to aim at.
  function fillSeat() {
    const all = $("b-seat").value === "all" && !$("b-seat").disabled;
    if (all) $("b-target").value = "equal";
    $("b-target").disabled = all;
    $("b-rate-box").style.display = $("b-target").value === "equal" ? "none" : "";
  }

  function spec() {
    const players = [...document.querySelectorAll("input.b-players:checked")]
      .map((b) => Number(b.value));
    const agents = $("b-agents").value.trim();
    const rungs = [...document.querySelectorAll("input.b-rung:checked")].map((b) => b.value);
    const balance = {
      option: $("b-option").value,
      seat: $("b-seat").value === "all" ? "all" : Number($("b-seat").value),  // every seat
      range: [Number($("b-low").value), Number($("b-high").value)],
      target: $("b-target").value === "equal" ? "equal" : Number($("b-rate").value) / 100,
      precision: Number($("b-precision").value), max_games: Number($("b-max-games").value),
      confirm_games: Number($("b-confirm").value)};
    const asked = {name: `${$("b-game").value} ${balance.option}`, game: $("b-game").value,
                   players: players.length === 1 ? players[0] : players,
                   seed: Number($("b-seed").value), balance};
    if (rungs.length) balance.agents = rungs;   // every seat that agent, one answer each
    else asked.agents = agents.includes(",") ? agents.split(",").map((a) => a.trim()) : agents;
    return asked;
  }

  async function show(job) {
    $("balance-job").hidden = false;
    $("b-title").textContent = job.name;
    $("b-status").textContent = job.status;
    $("b-status").className = `status status-${job.status}`;
    $("b-cancel").hidden = job.finished;
    const p = job.progress, eta = p.eta_seconds;
    $("b-progress").replaceChildren(p.total ? M.progressBar(job) : M.h("div", {class: "progress"},
      M.h("span", {}, M.plural(p.done, "game"))));
    $("b-detail").textContent = job.status === "running"
      ? `${job.detail || "starting"}; ${M.plural(p.done, "game")} played` +
        (p.games_per_second ? `, ${M.num(Math.round(p.games_per_second))} games/s` : "") +
        `; ETA ${eta === null ? "– (not known yet)" : M.duration(eta)}`
      : job.status === "queued" ? "waiting for a place" : "";
    const out = $("balance-result");
    out.replaceChildren();
    if (job.status === "failed") out.appendChild(M.h("p", {class: "error"}, job.error));
    if (job.status !== "done") return;
    const link = M.h("a", {id: "b-report"}, "Download the report (one HTML file)");
    M.downloadLink(link, `/api/balance/${encodeURIComponent(job.id)}/report.html`);
    out.appendChild(M.h("p", {}, link));
    const answers = M.h("div", {id: "b-answers"});
    // the service's own markup (escaped there; the charts are our SVG, no script inside)
    answers.innerHTML = (await M.getJSON(`/api/balance/${encodeURIComponent(job.id)}/view`)).html;
    out.appendChild(answers);
  }

  // The form as a job's spec asked it (a job opened by its link shows its own question).
  function fromSpec(asked) {
    const b = asked.balance || {};
    if (!games.some((g) => g.name === asked.game) || !b.option) return;
    $("b-game").value = asked.game;
    fillGame();
    $("b-option").value = b.option;
    fillOption();
    const players = [].concat(asked.players || []).map(String);
    for (const box of document.querySelectorAll("input.b-players"))
      box.checked = players.includes(box.value);
    $("b-seat").value = String(b.seat ?? -1);
    fillSeat();
    if (b.range) [$("b-low").value, $("b-high").value] = b.range.map(String);
    $("b-target").value = b.target === undefined || b.target === "equal" ? "equal" : "rate";
    $("b-rate-box").style.display = $("b-target").value === "equal" ? "none" : "";
    if ($("b-target").value === "rate") $("b-rate").value = String(100 * b.target);
    $("b-agents").value = [].concat(asked.agents || "greedy").join(", ");
    const rungs = [].concat(b.agents || []);
    const presets = (games.find((g) => g.name === asked.game).presets || {}).presets || {};
    for (const box of document.querySelectorAll("input.b-rung"))
      box.checked = rungs.includes(presets[box.value].agent) || rungs.includes(box.value);
    for (const [id, key] of [["b-precision", "precision"], ["b-max-games", "max_games"],
                             ["b-confirm", "confirm_games"]])
      if (b[key] !== undefined) $(id).value = String(b[key]);
    $("b-seed").value = String(asked.seed ?? 0);
  }

  async function follow(jobId, fill) {
    following = jobId;
    for (;;) {
      let job;
      try {
        job = await M.getJSON(`/api/balance/${encodeURIComponent(jobId)}`);
      } catch (err) {
        M.showErrors($("b-errors"), [{field: "job", label: "The search", msg: err.message}]);
        return;
      }
      if (following !== jobId) return;
      if (fill) {
        fromSpec(job.spec);
        fill = false;
      }
      await show(job);
      if (job.finished) return;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  // The spec's fields as the form calls them (the service's mistakes name spec fields).
  const LABELS = {"balance.option": "Option", "balance.seat": "Seat",
    "balance.range": "Values from … to", "balance.range.0": "Values from",
    "balance.range.1": "to", "balance.target": "Target", "balance.precision": "Precision",
    "balance.max_games": "Games of the search, at most",
    "balance.confirm_games": "Confirmation games per value", "balance.wave_games":
    "Games per value in the first wave", "balance.agents": "Answer per strength",
    players: "Player counts", agents: "Agents",
    seed: "Seed", balance: "Question"};
  const labelOf = (field) => LABELS[field] || LABELS[field.split(".").slice(0, 2).join(".")]
    || LABELS[field.split(".")[0]] || field;

  // Mistakes the page sees before asking: an empty box, no player count.
  function formErrors() {
    const errors = [];
    for (const [id, field] of [["b-low", "balance.range.0"], ["b-high", "balance.range.1"],
                               ["b-precision", "balance.precision"],
                               ["b-max-games", "balance.max_games"],
                               ["b-confirm", "balance.confirm_games"], ["b-seed", "seed"],
                               ...($("b-target").value === "rate" ? [["b-rate", "balance.target"]] : [])])
      if ($(id).value.trim() === "")
        errors.push({field, label: labelOf(field), msg: "is empty: give a number"});
    if (!document.querySelector("input.b-players:checked"))
      errors.push({field: "players", label: labelOf("players"), msg: "tick at least one"});
    if (!$("b-agents").value.trim() && !document.querySelector("input.b-rung:checked"))
      errors.push({field: "agents", label: labelOf("agents"), msg: "name an agent, e.g. greedy"});
    return errors;
  }

  async function submit(event) {
    event.preventDefault();
    const mistakes = formErrors();
    M.showErrors($("b-errors"), mistakes);
    if (mistakes.length) return;
    const sent = await M.postJSON("/api/balance", spec());
    if (!sent.ok) {
      M.showErrors($("b-errors"), M.answerErrors(sent, labelOf));
      return;
    }
    history.replaceState(null, "", `?job=${sent.body.id}`);
    follow(sent.body.id);
  }

  async function cancel() {
    if (!following) return;
    const sent = await M.postJSON(`/api/balance/${encodeURIComponent(following)}/cancel`, {});
    if (!sent.ok) M.showErrors($("b-errors"), M.answerErrors(sent, labelOf));
  }

  document.addEventListener("DOMContentLoaded", async () => {
    games = (await M.getJSON("/api/games")).filter((g) => searchable(g).length);
    $("b-game").replaceChildren(...games.map((g) => M.h("option", {value: g.name}, g.title)));
    $("b-game").addEventListener("change", fillGame);
    $("b-option").addEventListener("change", fillOption);
    $("b-seat").addEventListener("change", fillSeat);
    $("b-target").addEventListener("change", () => {
      $("b-rate-box").style.display = $("b-target").value === "equal" ? "none" : "";
    });
    $("balance-form").addEventListener("submit", submit);
    $("b-cancel").addEventListener("click", cancel);
    // first the games whose seats can be compensated (the question most designers ask)
    const seats = games.find((g) => searchable(g).some(([, s]) => s.type === "array"));
    if (seats) $("b-game").value = seats.name;
    fillGame();
    const job = new URLSearchParams(location.search).get("job");
    if (job) follow(job, true);
  });
})(window.Meeple);
