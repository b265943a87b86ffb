// The "new experiment" form, built from the catalogue's rule-option JSON schemas:
// enum -> select (its values shown as words), boolean -> checkbox, integer/number -> number
// input, a per-seat compensation -> one number per seat, other data values (arrays,
// objects) -> a JSON text area collapsed by default.  Only options that differ from the
// game's defaults are sent, so a spec stays as short as one written by hand.  The form asks
// every question a spec can: a fixed number of games or until decided (stop_when), restricted
// play per seat (an agent's forbid), a strength ladder from the presets, seat compensation.
// Every mistake is listed at once, each naming its field.  "Plan" asks the service (a
// background plan job) how many games and how long the experiment needs.  Seats count from 1.
"use strict";
(function (M) {
  let games = {};
  const $ = (id) => document.getElementById(id);

  // A value as a designer reads it: "seat_0" -> "seat 1", "no_winner" -> "no winner".
  M.words = function (value) {
    if (typeof value !== "string") return String(value);
    return value.replace(/^seat_?(\d+)$/, (_, d) => `seat ${Number(d) + 1}`).replace(/_/g, " ");
  };

  const ASSUMPTION = " (An assumption: the rulebook leaves this open.)";

  // A per-seat compensation (an analysis option: an integer per seat, in the game's currency).
  function perSeat(schema) {
    return schema.type === "array" && schema["x-analysis"] && schema.items &&
      schema.items.type === "integer";
  }

  function playerCounts() {
    return [...document.querySelectorAll(".players:checked")].map((c) => Number(c.value));
  }

  // Seats of the per-seat fields: the one player count chosen (else the largest).
  function seatCount() {
    const counts = playerCounts();
    const game = games[$("f-game").value];
    return counts.length ? Math.max(...counts) : game.min_players;
  }

  function seatInputs(name, schema, box) {
    const n = seatCount();
    const old = [...box.querySelectorAll("input")].map((i) => i.value);
    box.replaceChildren(...Array.from({length: n}, (_, k) => M.h("label", {class: "inline"},
      `seat ${k + 1} `, Object.assign(M.h("input", {type: "number", step: "1", class: "seat-value",
        "data-seat": String(k), min: String(schema.items.minimum ?? ""),
        max: String(schema.items.maximum ?? "")}), {value: old[k] ?? "0"}))));
  }

  // One rule option (or agent parameter): its label and one line of help (an ASSUMPTION says
  // so there, once); the spec's reference (its field name and wording) behind a toggle.
  function optionInput(name, schema) {
    const label = schema.title || M.words(name);
    const helpText = (schema["x-help"] || schema.description || "") +
      (schema["x-assumption"] ? ASSUMPTION : "");
    const help = M.h("span", {class: "help"}, " " + helpText);
    const reference = schema["x-help"] && schema.description ? M.h("details", {class: "reference"},
      M.h("summary", {}, "rule reference"), M.h("p", {class: "help"}, `${name}: ${schema.description}`))
      : "";
    let input;
    if (perSeat(schema)) {
      const box = M.h("span", {class: "seats", "data-option": name, "data-kind": "seats"});
      seatInputs(name, schema, box);
      return M.h("div", {class: "option", "data-option": name},
                 M.h("span", {class: "label"}, `${label} `), box, help, reference);
    }
    if (schema.enum) {
      input = M.h("select", {}, schema.enum.map((v) => M.h("option", {value: v}, M.words(v))));
      input.value = schema.default;
    } else if (schema.type === "boolean") {
      input = M.h("input", {type: "checkbox"});
      input.checked = !!schema.default;
    } else if (schema.type === "integer" || schema.type === "number") {
      input = M.h("input", {type: "number", step: schema.type === "integer" ? "1" : "any"});
      if (schema.minimum !== undefined) input.min = schema.minimum;
      if (schema.maximum !== undefined) input.max = schema.maximum;
      input.value = schema.default;
    } else {
      // Data values (tile lists, boards...): JSON text, sent only when edited.
      input = M.h("textarea", {spellcheck: "false"});
      input.value = JSON.stringify(schema.default, null, 1);
      input.addEventListener("input", () => { input.dataset.edited = "1"; });
      input.dataset.option = name;
      input.dataset.kind = "data";
      return M.h("details", {class: "option", "data-option": name},
                 M.h("summary", {}, `${label} (component data)`), help, reference, input);
    }
    input.dataset.option = name;
    input.dataset.kind = schema.enum ? "enum" : schema.type;
    return M.h("div", {class: "option", "data-option": name},
               M.h("label", {class: "inline"}, `${label} `, input), help, reference);
  }

  // ---- agent presets (each game's presets, GET /api/games): fast / strong / strongest, each with
  // its measured cost; "custom" opens the raw agent and its parameters.
  let presets = {};

  function presetText(p) {
    const rate = p.games_per_cpu_second;
    const cost = rate === undefined ? "" : rate >= 10
      ? ` · about ${M.num(Math.round(rate))} games per CPU-second`
      : ` · about ${(1 / rate).toFixed(rate >= 1 ? 2 : 1)} CPU-seconds a game`;
    return `${p.agent}: ${p.note}${cost}`;
  }

  // A shard of about SHARD_SECONDS of one core at the preset's measured rate, so that the
  // first figures come soon whatever the agent costs (unless the shard size was typed in).
  const SHARD_SECONDS = 10;

  function suggestShard(preset) {
    const box = $("f-shard");
    if (box.dataset.edited || !preset || !preset.games_per_cpu_second) return;
    const games = Math.round(preset.games_per_cpu_second * SHARD_SECONDS / 100) * 100;
    box.value = Math.min(5000, Math.max(100, games));
  }

  function chosenPreset() {
    const chosen = document.querySelector("input[name=preset]:checked");
    const entry = presets[$("f-game").value] || {presets: {}};
    return chosen && chosen.value !== "custom" ? entry.presets[chosen.value] : null;
  }

  function choosePreset() {
    const preset = chosenPreset();
    if (preset) suggestShard(preset);
    $("f-custom").hidden = !!preset;
    $("preset-help").textContent = preset ? presetText(preset)
      : "Any agent of the catalogue, with its parameters.";
    restrictBoxes();
    showCost();
  }

  function presetChoices(game) {
    const entry = presets[game.name];
    const names = entry ? Object.keys(entry.presets) : [];
    const initial = entry ? entry.preset : "custom";
    $("f-presets").replaceChildren(...[...names, "custom"].map((n) => M.h("label",
      {class: "inline", title: n === "custom" ? "choose the agent and its parameters"
                                              : presetText(entry.presets[n])},
      M.h("input", {type: "radio", name: "preset", value: n, onchange: choosePreset,
                    ...(n === initial ? {checked: ""} : {})}), ` ${n}`)));
    $("f-ladder").replaceChildren(...names.map((n) => M.h("label", {class: "inline",
      title: presetText(entry.presets[n])}, M.h("input", {type: "checkbox", class: "rung",
      value: n, checked: "", onchange: showCost}), ` ${n}`)));
    $("f-ladder-on").disabled = names.length < 2;
    choosePreset();
  }

  function armFieldset(index) {
    const game = games[$("f-game").value];
    const props = game.rules.properties || {};
    const name = M.h("input", {class: "arm-name", value: index === 0 ? "baseline" : `arm${index + 1}`,
                               oninput: updateBaseline});
    const remove = M.h("button", {type: "button", class: "remove-arm",
                                  onclick: (e) => { e.target.closest("fieldset").remove(); updateBaseline(); showCost(); }},
                       "Remove arm");
    // the options a designer changes first (the rules, then compensation), data last
    const order = Object.entries(props).sort(([, a], [, b]) => kindRank(a) - kindRank(b));
    return M.h("fieldset", {class: "arm"}, M.h("legend", {}, "Arm"),
               M.h("label", {}, "Arm name ", name),
               order.map(([n, s]) => optionInput(n, s)), remove);
  }

  function kindRank(schema) {
    if (perSeat(schema)) return 1;
    return ["array", "object"].includes(schema.type) ? 2 : 0;
  }

  // ---- the agent's parameters (from its JSON schema in the catalogue) -----------------------
  // The same inputs as rule options; the agent string names only the values that differ from
  // the defaults, e.g. "mcts(iterations=100, rollout=random)".
  function agentSchema() {
    const agent = games[$("f-game").value].agents[$("f-agent").value];
    return (agent && agent.parameters && agent.parameters.properties) || {};
  }

  function selectAgent() {
    const props = Object.fromEntries(Object.entries(agentSchema())
      .filter(([, s]) => !s["x-kinds"]));  // action kinds: under "Restricted play"
    $("f-agent-params").replaceChildren(...Object.entries(props).map(([n, s]) => optionInput(n, s)));
    $("f-agent-params").hidden = Object.keys(props).length === 0;
    restrictBoxes();
  }

  function customAgent(errors) {
    const name = $("f-agent").value;
    const values = optionValues($("f-agent-params"), agentSchema(), `agent ${name}`,
                                `agents.${name}`, errors);
    const pairs = Object.entries(values).map(([k, v]) => `${k}=${v}`);
    return pairs.length ? `${name}(${pairs.join(", ")})` : name;
  }

  // The agent string with `forbid` added: "greedy" -> "greedy(forbid=steal+pass)".
  function withForbid(agent, kinds) {
    if (!kinds.length) return agent;
    const open = agent.indexOf("(");
    return open < 0 ? `${agent}(forbid=${kinds.join("+")})`
      : `${agent.slice(0, -1)}, forbid=${kinds.join("+")})`;
  }

  function agentName(agent) { return agent.split("(")[0].trim(); }

  function forbidKinds(agent) {
    const about = games[$("f-game").value].agents[agentName(agent)];
    const forbid = about && about.parameters && about.parameters.properties &&
      about.parameters.properties.forbid;
    return forbid ? forbid["x-kinds"] || [] : [];
  }

  function baseAgent() {
    const preset = chosenPreset();
    return preset ? preset.agent : $("f-agent").value;
  }

  // Restricted play: per seat, the action kinds of the game (words), as the agent can forbid.
  function restrictBoxes() {
    const kinds = forbidKinds(baseAgent());
    const was = restrictions();
    const n = seatCount();
    if (!kinds.length) {
      $("f-restrict").replaceChildren(M.h("p", {class: "help"},
        `The agent ${agentName(baseAgent())} cannot be restricted; choose another.`));
      return;
    }
    $("f-restrict").replaceChildren(...Array.from({length: n}, (_, k) =>
      M.h("div", {class: "field restrict-seat", "data-seat": String(k)},
        M.h("span", {class: "label"}, `Seat ${k + 1} does not play: `),
        kinds.map((kind) => M.h("label", {class: "inline"}, Object.assign(
          M.h("input", {type: "checkbox", class: "forbid", value: kind}),
          {checked: (was[k] || []).includes(kind)}), ` ${M.words(kind)}`)))));
  }

  function restrictions() {
    return [...document.querySelectorAll(".restrict-seat")].map((row) =>
      [...row.querySelectorAll("input.forbid:checked")].map((b) => b.value));
  }

  function updateBaseline() {
    const select = $("f-baseline"), previous = select.value;
    const names = [...document.querySelectorAll(".arm-name")].map((i) => i.value);
    select.replaceChildren(...names.map((n) => M.h("option", {value: n}, n)));
    if (names.includes(previous)) select.value = previous;
  }

  function playersChanged() {
    const game = games[$("f-game").value];
    for (const box of document.querySelectorAll("span.seats[data-kind=seats]"))
      seatInputs(box.dataset.option, game.rules.properties[box.dataset.option], box);
    restrictBoxes();
    showCost();
  }

  function selectGame() {
    const game = games[$("f-game").value];
    $("game-help").textContent = `${game.title}: ${game.min_players}-${game.max_players} players` +
      (game.cooperative ? ", cooperative" : "");
    const counts = [];
    for (let n = game.min_players; n <= game.max_players; n++) counts.push(n);
    const usual = (presets[game.name] || {}).players ?? game.min_players;
    $("f-players").replaceChildren(...counts.map((n) => M.h("label", {class: "inline"},
      M.h("input", {type: "checkbox", class: "players", value: n, onchange: playersChanged,
                    ...(n === usual ? {checked: ""} : {})}), ` ${n}`)));
    $("f-agent").replaceChildren(...Object.entries(game.agents).map(([n, d]) =>
      M.h("option", {value: n, title: d.description}, n)));
    $("arms").replaceChildren(armFieldset(0));
    selectAgent();
    presetChoices(game);
    updateBaseline();
  }

  // ---- reading the form: every mistake at once ----------------------------------------------
  // Each mistake is {field, label, msg}: the spec's field, the form's words, what to do.
  function mistake(errors, field, label, msg) { errors.push({field, label, msg}); }

  function wholeNumber(id, field, label, errors, min) {
    const text = $(id).value;
    const value = Number(text);
    if (text === "" || !Number.isInteger(value) || value < min) {
      mistake(errors, field, label, `must be a whole number of at least ${M.num(min)}` +
              (text === "" ? ": it is empty" : `, got ${text}`));
      return null;
    }
    return value;
  }

  function points(id, field, label, errors, below, required) {
    const text = $(id).value;
    if (text === "") {
      if (required) mistake(errors, field, label, "is empty: give a number of points, e.g. 2");
      return null;
    }
    const value = Number(text);
    if (!(value > 0 && value < below)) {
      mistake(errors, field, label, `must be above 0 and below ${below} points, got ${text}`);
      return null;
    }
    return value / 100;
  }

  // The values of option inputs that differ from the defaults.
  function optionValues(box, props, where, field, errors) {
    const rules = {};
    for (const input of box.querySelectorAll("[data-option]:is(input,select,textarea,span.seats)")) {
      const name = input.dataset.option, schema = props[name];
      const label = `${where}: ${schema.title || M.words(name)}`;
      let value;
      if (input.dataset.kind === "boolean") value = input.checked;
      else if (input.dataset.kind === "integer" || input.dataset.kind === "number") {
        value = Number(input.value);
        if (input.value === "" || !Number.isFinite(value) ||
            (input.dataset.kind === "integer" && !Number.isInteger(value))) {
          mistake(errors, `${field}.${name}`, label, input.value === "" ? "is empty: give a number"
                  : `must be a ${input.dataset.kind === "integer" ? "whole " : ""}number, got ${input.value}`);
          continue;
        }
      } else if (input.dataset.kind === "seats") {
        value = [...input.querySelectorAll("input.seat-value")].map((i) => Number(i.value));
        if (value.some((v) => !Number.isInteger(v))) {
          mistake(errors, `${field}.${name}`, label, "give a whole number for every seat");
          continue;
        }
        if (value.every((v) => v === 0)) continue;  // no compensation: the default []
        if (playerCounts().length > 1) {
          mistake(errors, `${field}.${name}`, label, "seat compensation is given per seat of " +
                  "one player count: tick one player count, or set every seat to 0");
          continue;
        }
      } else if (input.dataset.kind === "data") {
        if (!input.dataset.edited) continue;
        try { value = JSON.parse(input.value); } catch (e) {
          mistake(errors, `${field}.${name}`, label, `is not valid JSON (${e.message})`);
          continue;
        }
      } else value = input.value;
      if (JSON.stringify(value) !== JSON.stringify(schema.default)) rules[name] = value;
    }
    return rules;
  }

  // The spec the form describes, and every mistake found in it before the service is asked.
  function readForm() {
    const errors = [];
    const game = games[$("f-game").value];
    const props = game.rules.properties || {};
    const players = playerCounts();
    if (!players.length) mistake(errors, "players", "Player counts", "tick at least one");
    const spec = {name: $("f-name").value, game: game.name,
                  players: players.length === 1 ? players[0] : players};
    if (!spec.name.trim()) mistake(errors, "name", "Name", "give the experiment a name");
    const decided = $("f-stop-decided").checked;
    const games_ = wholeNumber("f-games", "games_per_arm",
                               decided ? "Games per wave" : "Games per arm", errors, 1);
    if (games_ !== null) spec.games_per_arm = games_;
    if (decided) {
      const delta = points("f-margin", "stop_when.delta", "Decide at a margin of", errors, 100,
                           false);
      const half = points("f-precision", "stop_when.half_width", "Known to ±", errors, 50, false);
      const cap = wholeNumber("f-cap", "stop_when.max_games", "At most … games per arm", errors, 1);
      if (delta === null && half === null && $("f-margin").value === "" && $("f-precision").value === "")
        mistake(errors, "stop_when.delta", "Decide at a margin of",
                "give a margin (e.g. 2 points) or a precision to stop at");
      spec.stop_when = {max_games: cap ?? 1};
      if (delta !== null) spec.stop_when.delta = delta;
      if (half !== null) spec.stop_when.half_width = half;
      if (cap !== null && games_ !== null && cap < games_)
        mistake(errors, "stop_when.max_games", "At most … games per arm",
                `must be at least the games per wave (${M.num(games_)})`);
    }
    const seed = wholeNumber("f-seed", "seed", "Seed (advanced)", errors, 0);
    if (seed !== null) spec.seed = seed;
    const shard = wholeNumber("f-shard", "shard_size", "Shard size (advanced)", errors, 100);
    if (shard !== null) spec.shard_size = shard;

    const preset = chosenPreset();
    let agent = preset ? preset.agent : customAgent(errors);
    const perSeatAgents = preset ? [] :
      $("f-agents").value.split(",").map((s) => s.trim()).filter(Boolean);
    const forbidden = restrictions();
    const restricted = forbidden.some((k) => k.length);
    if ($("f-ladder-on").checked) {
      const rungs = [...document.querySelectorAll("input.rung:checked")].map((b) =>
        presets[game.name].presets[b.value].agent);
      if (rungs.length < 2)
        mistake(errors, "ladder", "Compare player strengths", "tick at least two presets");
      if (restricted)
        mistake(errors, "ladder", "Compare player strengths", "a ladder plays every seat with " +
                "the same agent: untick restricted play, or the ladder");
      spec.ladder = rungs;
    } else if (restricted) {
      if (players.length !== 1)
        mistake(errors, "agents", "Restricted play", "restrictions are per seat of one player " +
                "count: tick one player count");
      const seats = perSeatAgents.length ? perSeatAgents : Array(seatCount()).fill(agent);
      spec.agents = seats.map((a, k) => withForbid(a, forbidden[k] || []));
    } else {
      spec.agents = perSeatAgents.length ? perSeatAgents : agent;
    }
    if ($("f-rotate").checked) {
      spec.rotate_agents = true;
      if (typeof spec.agents === "string" || !spec.agents)
        mistake(errors, "rotate_agents", "Rotate the agents", "needs an agent per seat (or " +
                "restricted play) to rotate; untick it");
    }
    spec.arms = {};
    for (const fs of document.querySelectorAll("fieldset.arm")) {
      const name = fs.querySelector(".arm-name").value;
      if (name in spec.arms) mistake(errors, `arms.${name}`, "Arm name", `${name} is named twice`);
      spec.arms[name] = optionValues(fs, props, `arm ${name}`, `arms.${name}`, errors);
    }
    if ($("f-baseline").value) spec.baseline = $("f-baseline").value;
    return {spec, errors};
  }

  // The spec's field names as the form calls them (server errors name spec fields).
  const LABELS = {name: "Name", players: "Player counts", games_per_arm: "Games per arm",
    seed: "Seed (advanced)", shard_size: "Shard size (advanced)", agents: "Player strength",
    ladder: "Compare player strengths", rotate_agents: "Rotate the agents",
    baseline: "Baseline arm", "stop_when.delta": "Decide at a margin of",
    "stop_when.half_width": "Known to ±", "stop_when.max_games": "At most … games per arm",
    half_width: "Half-width", delta: "Difference to detect", arms: "Arms"};

  function labelOf(field) {
    if (LABELS[field]) return LABELS[field];
    const parts = field.split(".");
    if (parts[0] === "arms" && parts.length >= 2) {
      const option = games[$("f-game").value].rules.properties[parts[2]];
      return `arm ${parts[1]}` + (option ? `: ${option.title || M.words(parts[2])}` : "");
    }
    if (parts[0] === "spec") return labelOf(parts.slice(1).join("."));
    return LABELS[parts[0]] || field;
  }

  function serverErrors(result) { return M.answerErrors(result, labelOf); }

  async function submit(event) {
    event.preventDefault();
    const {spec, errors} = readForm();
    M.showErrors($("form-errors"), errors);
    if (errors.length) return;
    $("submit").disabled = true;
    let result = await M.postJSON("/api/experiments", spec);
    // above the service's cost limit: its estimate, and the choice to play it all the same
    const detail = result.status === 422 && Array.isArray(result.body.detail) ? result.body.detail : [];
    const cost = detail.length === 1 && detail[0].field === "confirm_cost" ? detail[0] : null;
    if (cost && window.confirm(`${cost.msg}\n\nPlay it all the same?`)) {
      result = await M.postJSON("/api/experiments?confirm_cost=true", spec);
    }
    $("submit").disabled = false;
    if (result.status === 201) { window.location.href = `/experiments/${result.body.id}`; return; }
    M.showErrors($("form-errors"), serverErrors(result));
  }

  // ---- cost: the cap's games at the preset's measured speed, and the plan ------------------
  function cells() {
    const arms = document.querySelectorAll("fieldset.arm").length;
    const rungs = $("f-ladder-on").checked ? document.querySelectorAll("input.rung:checked").length : 1;
    return arms * Math.max(playerCounts().length, 1) * Math.max(rungs, 1);
  }

  function showCost() {
    const decided = $("f-stop-decided").checked;
    $("f-until").hidden = !decided;
    $("plan-fixed").hidden = decided;
    $("games-label").textContent = decided ? "Games per wave" : "Games per arm";
    $("games-help").textContent = decided
      ? "The run looks after every wave of this many games per arm and stops once decided."
      : "Each arm plays this many games at each player count.";
    $("f-ladder").hidden = $("ladder-help").hidden = !$("f-ladder-on").checked;
    const preset = chosenPreset(), cap = Number($("f-cap").value);
    const most = cells() * (Number.isInteger(cap) && cap > 0 ? cap : 0);
    const rate = preset && preset.games_per_cpu_second;
    const arms = document.querySelectorAll("fieldset.arm").length;
    const rungs = $("f-ladder-on").checked ? document.querySelectorAll("input.rung:checked").length : 0;
    $("cap-help").textContent = `At most ${M.plural(most, "game")} in all (` +
      [M.plural(arms, "arm"), M.plural(Math.max(playerCounts().length, 1), "player count"),
       ...(rungs ? [M.plural(rungs, "strength")] : [])].join(" × ") + ")" +
      (rate ? `, about ${M.duration(most / rate)} of one core at the preset's measured speed` : "") +
      "; Plan below says how many it is likely to need.";
  }

  // Planning: POST /api/plans, then follow the job until its result (or error) is there.
  const PLAN_POLL_MS = 400;

  function planRequest() {
    const {spec, errors} = readForm();
    const request = {spec};
    if (!spec.stop_when) {
      const half = points("f-half-width", "half_width", "Half-width", errors, 50, false);
      const delta = points("f-delta", "delta", "Difference to detect", errors, 100, false);
      if (half !== null) request.half_width = half;
      if (delta !== null) request.delta = delta;
    }
    return {request, errors};
  }

  function showPlan(plan) {
    const needed = (c) => Math.max(c.games_for_half_width || 0, c.games_for_delta || 0);
    const decided = plan.rule === "stop_when.delta";
    $("plan-result").replaceChildren(
      M.h("p", {id: "plan-verdict"}, plan.verdict),
      M.h("p", {}, decided ? `Expected games per arm: ` : `Games per arm: `,
          M.h("strong", {id: "plan-games"}, M.num(plan.games_per_cell)),
          `; wall time: `, M.h("strong", {id: "plan-time"}, M.duration(plan.wall_seconds)),
          ` on ${plan.workers} core${plan.workers === 1 ? "" : "s"}.`),
      M.table(plan.cells, [["arm", "arm", String], ["players", "players"],
                           ["pilot_games", "pilot games"],
                           ["games_per_cpu_second", "games per CPU-second", (v) => M.num(v, 0)],
                           ...(decided ? [] : [["needed", "games needed", (v, c) => M.num(needed(c))]])]));
  }

  async function plan() {
    const errors = $("form-errors"), status = $("plan-status");
    $("plan-result").replaceChildren();
    const {request, errors: mistakes} = planRequest();
    M.showErrors(errors, mistakes);
    if (mistakes.length) return;
    $("plan").disabled = true;
    try {
      status.textContent = "Planning: playing a short pilot…";
      const answer = await M.postJSON("/api/plans", request);
      if (answer.status !== 202) {
        M.showErrors(errors, serverErrors(answer));
        return;
      }
      let job = answer.body;
      while (job.status === "queued" || job.status === "running") {
        await new Promise((done) => setTimeout(done, PLAN_POLL_MS));
        job = await M.getJSON(`/api/plans/${job.id}`);
      }
      if (job.status === "done") showPlan(job.result);
      else $("plan-result").replaceChildren(M.h("p", {class: "error", id: "plan-error"}, job.error));
    } catch (e) {
      M.showErrors(errors, [{field: "plan", label: "Plan", msg: `failed: ${e.message}`}]);
    } finally {
      status.textContent = "";
      $("plan").disabled = false;
    }
  }

  async function init() {
    try {
      const list = await M.getJSON("/api/games");
      games = Object.fromEntries(list.map((g) => [g.name, g]));
      presets = Object.fromEntries(list.map((g) => [g.name, g.presets]));
      $("f-game").replaceChildren(...list.map((g) => M.h("option", {value: g.name}, g.title || g.name)));
      // a competitive game first: a seat question is the usual first one
      const first = list.find((g) => !g.cooperative && presets[g.name]) || list[0];
      $("f-game").value = first.name;
      $("f-game").addEventListener("change", selectGame);
      $("f-agent").addEventListener("change", selectAgent);
      $("add-arm").addEventListener("click", () => {
        $("arms").appendChild(armFieldset(document.querySelectorAll("fieldset.arm").length));
        updateBaseline();
        showCost();
      });
      for (const id of ["f-stop-fixed", "f-stop-decided", "f-ladder-on", "f-cap"])
        $(id).addEventListener(id === "f-cap" ? "input" : "change", showCost);
      $("f-shard").addEventListener("input", () => { $("f-shard").dataset.edited = "1"; });
      $("experiment-form").addEventListener("submit", submit);
      $("plan").addEventListener("click", plan);
      selectGame();
    } catch (e) {
      M.showErrors($("form-errors"), [{field: "games", label: "Game catalogue",
                                       msg: `cannot be loaded: ${e.message}`}]);
    }
  }
  init();
})(window.Meeple);
