// The "new experiment" form, built from the catalogue's rule-option JSON schemas:
// enum -> select, boolean -> checkbox, integer/number -> number input, data values (arrays,
// objects) -> a JSON text area collapsed by default.  Only options that differ from the
// game's defaults are sent, so a spec stays as short as one written by hand.  "Plan" asks the
// service (a background plan job) how many games and how long the spec needs.
"use strict";
(function (M) {
  let games = {};
  const $ = (id) => document.getElementById(id);

  // One rule option (or agent parameter): its label and one-line help first; the spec's
  // reference and ASSUMPTION note behind a details toggle.
  function optionInput(name, schema) {
    const label = schema.title || name;
    const help = M.h("span", {class: "help"}, " " + (schema["x-help"] || schema.description || ""));
    // the ASSUMPTION mark shows inline only where there is no reference toggle to hold it
    const mark = schema["x-assumption"] && !schema["x-help"] ? M.h("span", {class: "assumption",
      title: "the rule spec marks this value as an assumption"}, "assumption") : "";
    const reference = schema["x-help"] && schema.description ? M.h("details", {class: "reference"},
      M.h("summary", {}, schema["x-assumption"] ? "rule reference (an assumption)" : "rule reference"), M.h("p", {class: "help"}, `${name}: ${schema.description}`),
      schema["x-assumption"] ? M.h("p", {class: "help"}, "The rule spec marks this value as an " +
        "ASSUMPTION: the rulebook leaves it open, and the default is the spec's reading.") : "")
      : "";
    let input;
    if (schema.enum) {
      input = M.h("select", {}, schema.enum.map((v) => M.h("option", {value: v}, String(v))));
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
                 M.h("summary", {}, `${label} (data)`, mark), help, reference, input);
    }
    input.dataset.option = name;
    input.dataset.kind = schema.enum ? "enum" : schema.type;
    return M.h("div", {class: "option", "data-option": name},
               M.h("label", {class: "inline"}, `${label} `, input), mark, help, reference);
  }

  // ---- agent presets (dashboards/static/presets.json): fast / strong / strongest, each with
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

  function choosePreset() {
    const chosen = document.querySelector("input[name=preset]:checked");
    const entry = presets[$("f-game").value] || {presets: {}};
    const custom = !chosen || chosen.value === "custom";
    if (!custom) suggestShard(entry.presets[chosen.value]);
    $("f-custom").hidden = !custom;
    $("preset-help").textContent = custom ? "Any agent of the catalogue, with its parameters."
      : presetText(entry.presets[chosen.value]);
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
    choosePreset();
  }

  function armFieldset(index) {
    const game = games[$("f-game").value];
    const props = game.rules.properties || {};
    const name = M.h("input", {class: "arm-name", value: index === 0 ? "baseline" : `arm${index + 1}`,
                               oninput: updateBaseline});
    const remove = M.h("button", {type: "button", class: "remove-arm",
                                  onclick: (e) => { e.target.closest("fieldset").remove(); updateBaseline(); }},
                       "Remove arm");
    return M.h("fieldset", {class: "arm"}, M.h("legend", {}, "Arm"),
               M.h("label", {}, "Arm name ", name),
               Object.entries(props).map(([n, s]) => optionInput(n, s)), remove);
  }

  // ---- the agent's parameters (from its JSON schema in the catalogue) -----------------------
  // The same inputs as rule options; the agent string names only the values that differ from
  // the defaults, e.g. "mcts(iterations=100, rollout=random)".
  function agentSchema() {
    const agent = games[$("f-game").value].agents[$("f-agent").value];
    return (agent && agent.parameters && agent.parameters.properties) || {};
  }

  function selectAgent() {
    const props = agentSchema();
    $("f-agent-params").replaceChildren(...Object.entries(props).map(([n, s]) => optionInput(n, s)));
    $("f-agent-params").hidden = Object.keys(props).length === 0;
  }

  function agentString() {
    const chosen = document.querySelector("input[name=preset]:checked");
    if (chosen && chosen.value !== "custom")
      return presets[$("f-game").value].presets[chosen.value].agent;
    const name = $("f-agent").value;
    let values;
    try { values = armRules($("f-agent-params"), agentSchema()); }
    catch (e) { throw new Error(`agents.${name}.${e.message}`); }
    const pairs = Object.entries(values).map(([k, v]) => `${k}=${v}`);
    return pairs.length ? `${name}(${pairs.join(", ")})` : name;
  }

  function updateBaseline() {
    const select = $("f-baseline"), previous = select.value;
    const names = [...document.querySelectorAll(".arm-name")].map((i) => i.value);
    select.replaceChildren(...names.map((n) => M.h("option", {value: n}, n)));
    if (names.includes(previous)) select.value = previous;
  }

  function selectGame() {
    const game = games[$("f-game").value];
    $("game-help").textContent = `${game.title}: ${game.min_players}-${game.max_players} players` +
      (game.cooperative ? ", cooperative" : "");
    const counts = [];
    for (let n = game.min_players; n <= game.max_players; n++) counts.push(n);
    const usual = (presets[game.name] || {}).players ?? game.min_players;
    $("f-players").replaceChildren(...counts.map((n) => M.h("label", {class: "inline"},
      M.h("input", {type: "checkbox", class: "players", value: n, ...(n === usual ? {checked: ""} : {})}),
      ` ${n}`)));
    $("f-agent").replaceChildren(...Object.entries(game.agents).map(([n, d]) =>
      M.h("option", {value: n, title: d.description}, n)));
    selectAgent();
    presetChoices(game);
    $("arms").replaceChildren(armFieldset(0));
    updateBaseline();
  }

  // The rule options of one arm that differ from the defaults; throws naming a bad JSON field.
  function armRules(fieldset, props) {
    const rules = {};
    for (const input of fieldset.querySelectorAll("[data-option]:is(input,select,textarea)")) {
      const name = input.dataset.option, schema = props[name];
      let value;
      if (input.dataset.kind === "boolean") value = input.checked;
      else if (input.dataset.kind === "integer" || input.dataset.kind === "number") {
        if (input.value === "") throw new Error(`${name}: a number is required`);
        value = Number(input.value);
      } else if (input.dataset.kind === "data") {
        if (!input.dataset.edited) continue;
        try { value = JSON.parse(input.value); } catch (e) { throw new Error(`${name}: not valid JSON (${e.message})`); }
      } else value = input.value;
      if (JSON.stringify(value) !== JSON.stringify(schema.default)) rules[name] = value;
    }
    return rules;
  }

  function buildSpec() {
    const game = games[$("f-game").value];
    const props = game.rules.properties || {};
    const players = [...document.querySelectorAll(".players:checked")].map((c) => Number(c.value));
    const spec = {name: $("f-name").value, game: game.name,
                  players: players.length === 1 ? players[0] : players,
                  games_per_arm: Number($("f-games").value), seed: Number($("f-seed").value),
                  shard_size: Number($("f-shard").value)};
    const custom = !$("f-custom").hidden;
    const perSeat = !custom ? [] :
      $("f-agents").value.split(",").map((s) => s.trim()).filter(Boolean);
    spec.agents = perSeat.length ? perSeat : agentString();
    if ($("f-rotate").checked) spec.rotate_agents = true;
    spec.arms = {};
    for (const fs of document.querySelectorAll("fieldset.arm")) {
      const name = fs.querySelector(".arm-name").value;
      try { spec.arms[name] = armRules(fs, props); }
      catch (e) { throw new Error(`arms.${name}.${e.message}`); }
    }
    if ($("f-baseline").value) spec.baseline = $("f-baseline").value;
    return spec;
  }

  async function submit(event) {
    event.preventDefault();
    const errors = $("form-errors");
    errors.hidden = true;
    let spec;
    try { spec = buildSpec(); } catch (e) { errors.textContent = e.message; errors.hidden = false; return; }
    $("submit").disabled = true;
    const result = await M.postJSON("/api/experiments", spec);
    $("submit").disabled = false;
    if (result.status === 201) { window.location.href = `/experiments/${result.body.id}`; return; }
    errors.textContent = M.errorText(result.body) || `the server answered ${result.status}`;
    errors.hidden = false;
  }

  // Planning: POST /api/plans, then follow the job until its result (or error) is there.
  const PLAN_POLL_MS = 400;

  function planRequest() {
    const request = {spec: buildSpec()};
    const halfWidth = $("f-half-width").value, delta = $("f-delta").value;
    if (halfWidth !== "") request.half_width = Number(halfWidth) / 100;
    if (delta !== "") request.delta = Number(delta) / 100;
    return request;
  }

  function showPlan(plan) {
    const needed = (c) => Math.max(c.games_for_half_width || 0, c.games_for_delta || 0);
    $("plan-result").replaceChildren(
      M.h("p", {id: "plan-verdict"}, plan.verdict),
      M.h("p", {}, `Games per arm: `, M.h("strong", {id: "plan-games"}, M.num(plan.games_per_cell)),
          `; wall time: `, M.h("strong", {id: "plan-time"}, M.duration(plan.wall_seconds)),
          ` on ${plan.workers} core${plan.workers === 1 ? "" : "s"}.`),
      M.table(plan.cells, [["arm", "arm", String], ["players", "players"],
                           ["pilot_games", "pilot games"],
                           ["games_per_cpu_second", "games per CPU-second", (v) => M.num(v, 0)],
                           ["needed", "games needed", (v, c) => M.num(needed(c))]]));
  }

  async function plan() {
    const errors = $("form-errors"), status = $("plan-status");
    errors.hidden = true;
    $("plan-result").replaceChildren();
    let request;
    try { request = planRequest(); } catch (e) { errors.textContent = e.message; errors.hidden = false; return; }
    $("plan").disabled = true;
    try {
      status.textContent = "Planning: playing a short pilot…";
      const answer = await M.postJSON("/api/plans", request);
      if (answer.status !== 202) {
        errors.textContent = M.errorText(answer.body) || `the server answered ${answer.status}`;
        errors.hidden = false;
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
      errors.textContent = `Planning failed: ${e.message}`;
      errors.hidden = false;
    } finally {
      status.textContent = "";
      $("plan").disabled = false;
    }
  }

  async function init() {
    try {
      const [list, table] = await Promise.all([M.getJSON("/api/games"),
                                               M.getJSON("/static/presets.json")]);
      games = Object.fromEntries(list.map((g) => [g.name, g]));
      presets = table.games;
      $("f-game").replaceChildren(...list.map((g) => M.h("option", {value: g.name}, g.title || g.name)));
      // a competitive game first: a seat question is the usual first one
      const first = list.find((g) => !g.cooperative && presets[g.name]) || list[0];
      $("f-game").value = first.name;
      $("f-game").addEventListener("change", selectGame);
      $("f-agent").addEventListener("change", selectAgent);
      $("add-arm").addEventListener("click", () => {
        $("arms").appendChild(armFieldset(document.querySelectorAll("fieldset.arm").length));
        updateBaseline();
      });
      $("f-shard").addEventListener("input", () => { $("f-shard").dataset.edited = "1"; });
      $("experiment-form").addEventListener("submit", submit);
      $("plan").addEventListener("click", plan);
      selectGame();
    } catch (e) {
      $("form-errors").textContent = `Cannot load the game catalogue: ${e.message}`;
      $("form-errors").hidden = false;
    }
  }
  init();
})(window.Meeple);
