// Shared helpers of the dashboard pages: JSON fetches, formatting, small DOM builders.
"use strict";
window.Meeple = window.Meeple || {};

(function (M) {
  // The service's bearer token (when it has tokens): asked once, on the first 401, and kept
  // for this browser session only (sessionStorage), then sent with every API request.
  const TOKEN_KEY = "meeplelab-token";
  M.authHeaders = function () {
    const token = sessionStorage.getItem(TOKEN_KEY);
    return token ? {Authorization: `Bearer ${token}`} : {};
  };

  // fetch() with the token; on a 401 ask for a token once and try again with it.
  M.fetch = async function (url, options) {
    const send = () => fetch(url, {...options,
                                   headers: {...(options?.headers || {}), ...M.authHeaders()}});
    let response = await send();
    if (response.status === 401) {
      const token = window.prompt("This meeplelab service needs a token (kept for this " +
                                  "browser session only):");
      if (token) {
        sessionStorage.setItem(TOKEN_KEY, token.trim());
        response = await send();
      }
    }
    return response;
  };

  M.getJSON = async function (url) {
    const response = await M.fetch(url, {headers: {Accept: "application/json"}});
    const body = await response.json().catch(() => null);
    if (!response.ok) {
      const error = new Error(M.errorText(body) || response.statusText);
      error.status = response.status;
      error.body = body;
      throw error;
    }
    return body;
  };

  M.postJSON = async function (url, data) {
    const response = await M.fetch(url, {method: "POST", body: JSON.stringify(data),
                                         headers: {"Content-Type": "application/json"}});
    const body = await response.json().catch(() => null);
    return {status: response.status, ok: response.ok, body};
  };

  // A download link that sends the token: fetched, then saved from a blob.
  M.downloadLink = function (anchor, url) {
    anchor.href = url;
    anchor.addEventListener("click", async (event) => {
      if (!sessionStorage.getItem(TOKEN_KEY)) return;  // plain link when no token is kept
      event.preventDefault();
      const response = await M.fetch(url, {});
      if (!response.ok) return;
      const link = document.createElement("a");
      link.href = URL.createObjectURL(await response.blob());
      link.download = url.split("/").pop();
      link.click();
      URL.revokeObjectURL(link.href);
    });
  };

  // The API's error detail as text: a string, or a list of {field, msg}.
  M.errorText = function (body) {
    if (!body || body.detail === undefined) return "";
    if (typeof body.detail === "string") return body.detail;
    return body.detail.map((e) => `${e.field}: ${e.msg}`).join("\n");
  };

  // Every mistake of a form at once, one line each: the form's words, the spec's field,
  // what to do.  items: [{field, label, msg}].
  M.showErrors = function (list, items) {
    list.replaceChildren(...items.map((e) => M.h("li", {class: "form-error",
      "data-field": e.field}, M.h("strong", {}, e.label), ` (${e.field}): ${e.msg}`)));
    list.hidden = items.length === 0;
  };

  // A rejected request's mistakes as showErrors items, labelled by labelOf(field).
  M.answerErrors = function (result, labelOf) {
    const detail = result.body && result.body.detail;
    if (Array.isArray(detail))
      return detail.map((e) => ({field: e.field, label: labelOf(e.field), msg: e.msg}));
    return [{field: "request", label: "The service",
             msg: M.errorText(result.body) || `answered ${result.status}`}];
  };

  M.h = function (tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v);
    }
    for (const c of children.flat())
      node.appendChild(c instanceof Node ? c : document.createTextNode(c ?? ""));
    return node;
  };

  M.num = function (v, digits) {
    if (v === null || v === undefined) return "–";
    if (typeof v !== "number") return String(v);
    if (Number.isInteger(v)) return v.toLocaleString("en");
    return v.toFixed(digits ?? 3);
  };

  // "1 game", "2 games", "1,000 games".
  M.plural = function (n, word, words) {
    return `${M.num(n)} ${n === 1 ? word : (words || word + "s")}`;
  };

  // A date and time nobody misreads: 2026-12-01 21:07 (local time).
  M.when = function (epochSeconds) {
    const d = new Date(epochSeconds * 1000), two = (v) => String(v).padStart(2, "0");
    return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ` +
           `${two(d.getHours())}:${two(d.getMinutes())}`;
  };

  M.duration = function (s) {
    if (s === null || s === undefined) return "–";
    s = Math.round(s);
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
    return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  };

  // A progress bar element for an experiment view.
  M.progressBar = function (exp) {
    const p = exp.progress, total = p.total || 0;
    const share = total ? Math.min(1, p.done / total) : 0;
    return M.h("div", {class: "progress", title: `${p.done} / ${total} games`},
               M.h("div", {class: `fill status-${exp.status}`,
                           style: `width:${(share * 100).toFixed(1)}%`}),
               M.h("span", {}, `${M.num(p.done)} / ${M.num(total)}`));
  };

  // A table from records and [key, header, formatter?] columns.
  M.table = function (rows, columns, rowClass) {
    return M.h("table", {class: "data"},
      M.h("thead", {}, M.h("tr", {}, columns.map(([, head]) => M.h("th", {}, head)))),
      M.h("tbody", {}, rows.map((row) => M.h("tr", {class: rowClass ? rowClass(row) : ""},
        columns.map(([key, , f]) => M.h("td", {}, f ? f(row[key], row) : M.num(row[key])))))));
  };
})(window.Meeple);
