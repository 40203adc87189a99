// The operator page (GET /ops): reads the service's JSON every few seconds and draws it. No framework, no build.
//
// Access: every call carries `Authorization: Bearer <token>` when the tab holds an operator token. The token is
// asked for once when the service answers 401 (INBOX_HEALTH_TOKEN is set), or taken from the address
// (`/ops#token=...`, removed from the address bar at once), and kept in this tab's sessionStorage only.
// On this machine without INBOX_HEALTH_TOKEN no token is needed. Text from the service is only ever set as
// text (textContent), never parsed as markup: actor keys and errors can hold anything.
"use strict";

(() => {
  const TOKEN_KEY = "inbox-actors-ops-token";
  const BUSIEST = 10;
  // The nodes are read twice a second whatever `refresh` says: a node's loss shows within 2 s even when an answer
  // is slow (docs/operating.md).
  const NODES_SECONDS = 0.5;
  const LEASES_SHOWN = 100;
  const params = new URLSearchParams(location.search);
  const intervalSeconds = Math.min(60, Math.max(1, Number(params.get("refresh")) || 5));

  const KIND_COLUMNS = [
    ["live", "Live"], ["failed", "Failed"], ["mailbox_used", "Mailbox"], ["mailbox_max", "Deepest"],
    ["messages_handled", "Handled"], ["restarts", "Restarts"], ["recent_failures", "Recent failures"],
    ["failed_total", "Failures"], ["activated", "Activated"], ["passivated", "Passivated"],
    ["circuit_open", "Circuit"],
  ];
  const ENDPOINT_COLUMNS = [
    ["workspace_id", "Workspace"], ["url", "URL"], ["last_error", "Last error"], ["last_attempt_at", "Last attempt"],
  ];

  const state = {
    paused: false,
    busy: false,
    timer: null,
    previous: null, // {at: seconds, requests: {...}, sends: {...}, deliveries: {...}}
    selected: null, // {kind, key}
    refreshes: 0,
    nodesTimer: null,
    nodesBusy: false,
    nodesRefreshes: 0,
  };

  class NeedsToken extends Error {}
  class HttpError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  const $ = (id) => document.getElementById(id);

  // -- the token ------------------------------------------------------------------------------------------

  let memoryToken = null; // where the token lives when sessionStorage is refused

  function token() {
    try {
      return sessionStorage.getItem(TOKEN_KEY);
    } catch (err) {
      return null;
    }
  }

  function keepToken(value) {
    try {
      if (value) sessionStorage.setItem(TOKEN_KEY, value);
      else sessionStorage.removeItem(TOKEN_KEY);
    } catch (err) {
      // sessionStorage refused (private mode): the token then lasts as long as this page.
    }
    memoryToken = value || null;
    $("sign-out").hidden = !value;
  }

  function currentToken() {
    return token() || memoryToken;
  }

  function takeTokenFromAddress() {
    if (!location.hash.startsWith("#token=")) return;
    keepToken(decodeURIComponent(location.hash.slice("#token=".length)));
    history.replaceState(null, "", location.pathname + location.search);
  }

  async function getJson(path) {
    const headers = { Accept: "application/json" };
    const bearer = currentToken();
    if (bearer) headers.Authorization = `Bearer ${bearer}`;
    const response = await fetch(path, { headers, cache: "no-store", credentials: "omit" });
    if (response.status === 401) throw new NeedsToken("the operator token is needed");
    if (!response.ok) {
      let message = `HTTP ${response.status}`;
      try {
        const body = await response.json();
        message = body.message || body.error || message;
      } catch (err) {
        // not JSON: keep the status
      }
      throw new HttpError(response.status, message);
    }
    return response.json();
  }

  // -- formatting -----------------------------------------------------------------------------------------

  const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d/;

  function number(value) {
    if (typeof value !== "number" || !Number.isFinite(value)) return value == null ? "—" : String(value);
    return Number.isInteger(value) ? value.toLocaleString("en-US") : value.toLocaleString("en-US", {
      maximumFractionDigits: 2,
    });
  }

  function duration(seconds) {
    if (typeof seconds !== "number" || !Number.isFinite(seconds)) return "—";
    const s = Math.max(0, seconds);
    if (s < 1) return `${s.toFixed(1)} s`;
    if (s < 90) return `${Math.round(s)} s`;
    if (s < 5400) return `${Math.round(s / 60)} min`;
    if (s < 129600) return `${Math.round(s / 3600)} h`;
    return `${Math.round(s / 86400)} d`;
  }

  function agoText(seconds) {
    if (typeof seconds !== "number" || !Number.isFinite(seconds)) return "—";
    return seconds < 1 ? "just now" : `${duration(seconds)} ago`;
  }

  function secondsSince(iso) {
    const at = Date.parse(iso);
    return Number.isNaN(at) ? null : (Date.now() - at) / 1000;
  }

  // How long ago `base` (e.g. "last_activity") happened, from whichever field the service gives: a seconds-ago
  // number, or an ISO 8601 time. A bare number `<base>_at` is the service's monotonic clock: no use to a person.
  function ago(record, base) {
    for (const name of [`${base}_seconds_ago`, `${base}_ago_seconds`, `${base}_ago`, `seconds_since_${base}`]) {
      if (typeof record[name] === "number") return agoText(record[name]);
    }
    for (const name of [`${base}_at`, `${base}_at_wall`, `${base}_at_utc`, `${base}_at_iso`]) {
      const value = record[name];
      if (typeof value === "string" && ISO.test(value)) {
        const seconds = secondsSince(value);
        return seconds == null ? value : agoText(seconds);
      }
    }
    return "—";
  }

  const LABELS = {
    oldest_message_seconds: "Oldest message waiting", last_activity_at: "Last activity", started_at: "Started",
    last_error_at: "Last error at", mailbox_used: "Mailbox", messages_handled: "Handled",
    messages_dropped: "Dropped",
  };

  function labelOf(name) {
    if (LABELS[name]) return LABELS[name];
    const text = name.replace(/_/g, " ");
    return text.charAt(0).toUpperCase() + text.slice(1);
  }

  // One field of a record as a person reads it. A time comes with how long ago it was, as the service counted
  // it (`<base>_seconds_ago`) when it says, else by this browser's clock.
  function fieldValue(name, value, record = {}) {
    if (value == null) return "—";
    if (typeof value === "boolean") return value ? "yes" : "no";
    if (typeof value === "number") {
      if (/(^|_)ago(_|$)/.test(name)) return agoText(value);
      if (/(^|_)(age|seconds)$/.test(name)) return duration(value);
      if (/_at$/.test(name)) return `${value.toFixed(2)} (service clock)`;
      return number(value);
    }
    if (typeof value === "string" && ISO.test(value)) {
      const base = name.replace(/_at$/, "");
      const told = record[`${base}_seconds_ago`];
      const seconds = typeof told === "number" ? told : secondsSince(value);
      const local = new Date(value).toLocaleString();
      return seconds == null ? value : `${local} (${agoText(seconds)})`;
    }
    if (typeof value === "object") return JSON.stringify(value);
    return String(value);
  }

  // -- drawing helpers ------------------------------------------------------------------------------------

  function cell(tag, text, field, label) {
    const element = document.createElement(tag);
    element.textContent = text;
    if (field) element.dataset.field = field;
    if (label) element.dataset.label = label; // a phone shows a row as a card of label: value lines
    if (text === "—") element.classList.add("none"); // ...leaving out the ones with nothing to say
    return element;
  }

  function header(table, labels) {
    const row = document.createElement("tr");
    for (const label of labels) row.appendChild(cell("th", label));
    const head = table.tHead;
    head.replaceChildren(row);
  }

  function showEmpty(id, empty) {
    const table = $(id);
    table.hidden = empty;
    $(`${id}-empty`).hidden = !empty;
  }

  function showProblem(element, text) {
    element.textContent = text || "";
    element.hidden = !text;
  }

  // -- actor health ---------------------------------------------------------------------------------------

  function drawKinds(kinds) {
    const names = Object.keys(kinds).sort();
    const rows = names.map((name) => kinds[name] || {});
    const known = KIND_COLUMNS.filter(([field]) => rows.some((row) => field in row));
    const extra = [...new Set(rows.flatMap((row) => Object.keys(row)))]
      .filter((field) => !KIND_COLUMNS.some(([name]) => name === field))
      .filter((field) => rows.every((row) => row[field] == null || typeof row[field] !== "object"));
    const columns = [...known, ...extra.map((field) => [field, labelOf(field)])];
    const table = $("kinds");
    header(table, ["Kind", ...columns.map(([, label]) => label)]);
    const body = document.createElement("tbody");
    let live = 0;
    names.forEach((name, index) => {
      const counts = rows[index];
      const row = document.createElement("tr");
      row.dataset.kind = name;
      row.appendChild(cell("th", name, "kind"));
      for (const [field] of columns) {
        const value = counts[field];
        const text = field === "circuit_open" ? (value ? "open" : "closed") : number(value);
        row.appendChild(cell("td", text, field));
      }
      if (counts.failed > 0 || counts.circuit_open || counts.recent_failures > 0) row.classList.add("bad");
      else if (!counts.live) row.classList.add("idle");
      live += typeof counts.live === "number" ? counts.live : 0;
      body.appendChild(row);
    });
    table.tBodies[0].replaceWith(body);
    $("kinds-title").textContent = `Actors per kind · ${number(live)} live`;
  }

  function actorRow(actor, fields) {
    const row = document.createElement("tr");
    row.dataset.kind = actor.kind;
    row.dataset.key = actor.key;
    row.tabIndex = 0;
    row.className = "actor";
    row.title = "Show this actor's statistics";
    for (const [field, label, text] of fields) row.appendChild(cell("td", text, field, label));
    if (actor.status === "failed") row.classList.add("bad");
    row.addEventListener("click", () => openDetail(actor.kind, actor.key));
    row.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        openDetail(actor.kind, actor.key);
      }
    });
    return row;
  }

  function mailbox(actor) {
    if (typeof actor.mailbox_used !== "number") return "—";
    return typeof actor.mailbox_capacity === "number"
      ? `${number(actor.mailbox_used)} / ${number(actor.mailbox_capacity)}` : number(actor.mailbox_used);
  }

  function drawBusiest(actors) {
    const waiting = actors.some((actor) => "oldest_message_seconds" in actor);
    const columns = (actor) => [
      ["kind", "Kind", actor.kind], ["key", "Key", actor.key], ["status", "Status", actor.status || "—"],
      ["mailbox", "Mailbox", mailbox(actor)],
      ...(waiting ? [["oldest_message_seconds", "Oldest waiting", actor.oldest_message_seconds == null ? "—"
        : duration(actor.oldest_message_seconds)]] : []),
      ["messages_handled", "Handled", number(actor.messages_handled)],
      ["restarts", "Restarts", number(actor.restarts)],
      ["last_activity", "Last active", ago(actor, "last_activity")],
      ["last_error", "Last error", actor.last_error || "—"],
    ];
    const table = $("busiest");
    header(table, columns({}).map(([, label]) => label));
    const body = document.createElement("tbody");
    for (const actor of actors) body.appendChild(actorRow(actor, columns(actor)));
    table.tBodies[0].replaceWith(body);
    showEmpty("busiest", actors.length === 0);
  }

  function drawFailing(actors, total) {
    const table = $("failing");
    header(table, ["Kind", "Key", "Status", "Restarts", "Failed", "Last error"]);
    const body = document.createElement("tbody");
    for (const actor of actors) {
      body.appendChild(actorRow(actor, [
        ["kind", "Kind", actor.kind], ["key", "Key", actor.key], ["status", "Status", actor.status || "—"],
        ["restarts", "Restarts", number(actor.restarts)], ["last_error_at", "Failed", ago(actor, "last_error")],
        ["last_error", "Last error", actor.last_error || "—"],
      ]));
    }
    table.tBodies[0].replaceWith(body);
    showEmpty("failing", actors.length === 0);
    const count = typeof total === "number" && total > actors.length ? total : actors.length;
    $("failing-count").textContent = count ? `· ${number(count)}` : "";
  }

  function drawActors(summary) {
    drawKinds(summary.kinds || {});
    drawBusiest(Array.isArray(summary.busiest) ? summary.busiest : []);
    drawFailing(Array.isArray(summary.failing) ? summary.failing : [], summary.failing_count);
    const accepting = $("accepting");
    if (summary.accepting === false) {
      accepting.textContent = "draining";
      accepting.className = "badge bad";
    } else {
      accepting.textContent = "accepting";
      accepting.className = "badge good";
    }
  }

  // -- the overview (requests, sends, webhooks) -------------------------------------------------------------

  function sampleTime(overview) {
    const at = typeof overview.generated_at === "string" ? Date.parse(overview.generated_at) : NaN;
    return Number.isNaN(at) ? performance.now() / 1000 : at / 1000;
  }

  function delta(now, before, name) {
    const a = now && typeof now[name] === "number" ? now[name] : null;
    const b = before && typeof before[name] === "number" ? before[name] : null;
    return a == null || b == null ? null : a - b;
  }

  function drawRates(overview) {
    const requests = overview.requests || {};
    const now = { at: sampleTime(overview), requests, sends: overview.sends || {},
      deliveries: (overview.webhooks || {}).deliveries || {} };
    const before = state.previous;
    state.previous = now;
    $("request-total").textContent = `${number(requests.total)} since start`;
    const seconds = before ? now.at - before.at : 0;
    const total = delta(requests, before && before.requests, "total");
    if (!before || seconds <= 0 || total == null || total < 0) {
      $("request-rate").textContent = "—";
      $("error-rate").textContent = "—";
      $("error-split").textContent = "measuring…";
      return { before: null, seconds: 0 };
    }
    $("request-rate").textContent = `${number(Math.round((total / seconds) * 10) / 10)} /s`;
    const client = delta(requests, before.requests, "client_errors") || 0;
    const server = delta(requests, before.requests, "server_errors") || 0;
    if (total === 0) {
      $("error-rate").textContent = "—";
      $("error-split").textContent = `no requests in the last ${duration(seconds)}`;
    } else {
      const percent = (part) => `${((100 * part) / total).toFixed(1)}%`;
      $("error-rate").textContent = percent(client + server);
      $("error-split").textContent = `5xx ${percent(server)} · 4xx ${percent(client)}`;
    }
    return { before, seconds };
  }

  function drawCounts(id, counts, previous, seconds) {
    const names = Object.keys(counts || {}).sort((a, b) => (counts[b] || 0) - (counts[a] || 0));
    const table = $(id);
    header(table, ["Outcome", "Since start", "Per second"]);
    const body = document.createElement("tbody");
    for (const name of names) {
      const row = document.createElement("tr");
      row.dataset.outcome = name;
      row.appendChild(cell("th", name, "outcome"));
      row.appendChild(cell("td", number(counts[name]), "total"));
      const change = delta(counts, previous, name);
      const rate = seconds > 0 && change != null && change >= 0 ? number(Math.round((change / seconds) * 10) / 10)
        : "—";
      row.appendChild(cell("td", rate, "rate"));
      if (/fail|error|refus|reject|unreach|timeout|dead/i.test(name) && counts[name] > 0) row.classList.add("bad");
      body.appendChild(row);
    }
    table.tBodies[0].replaceWith(body);
    showEmpty(id, names.length === 0);
  }

  function drawEndpoints(endpoints) {
    const table = $("endpoints");
    const extra = [...new Set(endpoints.flatMap((endpoint) => Object.keys(endpoint)))]
      .filter((field) => !ENDPOINT_COLUMNS.some(([name]) => name === field))
      .filter((field) => endpoints.every((e) => e[field] == null || typeof e[field] !== "object"));
    const columns = [...ENDPOINT_COLUMNS, ...extra.map((field) => [field, labelOf(field)])];
    header(table, columns.map(([, label]) => label));
    const body = document.createElement("tbody");
    for (const endpoint of endpoints) {
      const row = document.createElement("tr");
      row.classList.add("bad");
      for (const [field, label] of columns) {
        const text = field === "last_attempt_at" ? ago(endpoint, "last_attempt")
          : field === "workspace_id" ? String(endpoint[field] ?? "—") : fieldValue(field, endpoint[field], endpoint);
        row.appendChild(cell("td", text, field, label));
      }
      body.appendChild(row);
    }
    table.tBodies[0].replaceWith(body);
    showEmpty("endpoints", endpoints.length === 0);
  }

  function drawOverview(overview) {
    const { before, seconds } = drawRates(overview);
    const webhooks = overview.webhooks || {};
    drawCounts("sends", overview.sends || {}, before && before.sends, seconds);
    drawCounts("deliveries", webhooks.deliveries || {}, before && before.deliveries, seconds);
    const endpoints = Array.isArray(webhooks.failing_endpoints) ? webhooks.failing_endpoints : [];
    drawEndpoints(endpoints);
    $("webhook-backlog").textContent = number(webhooks.backlog);
    $("webhook-failing-count").textContent = `${number(endpoints.length)} failing endpoint${
      endpoints.length === 1 ? "" : "s"}`;
    $("rate-limited").textContent = number(overview.rate_limited);
    const dropped = (overview.activity_log || {}).dropped;
    $("activity-dropped").textContent = dropped == null ? "" : `activity records dropped: ${number(dropped)}`;
    document.body.classList.remove("no-overview");
  }

  function overviewUnavailable(reason) {
    state.previous = null;
    for (const id of ["request-rate", "error-rate", "webhook-backlog", "rate-limited"]) $(id).textContent = "—";
    for (const id of ["request-total", "webhook-failing-count", "activity-dropped"]) $(id).textContent = "";
    $("error-split").textContent = `overview unavailable: ${reason}`;
    for (const id of ["sends", "deliveries", "endpoints"]) {
      $(id).hidden = true;
      const empty = $(`${id}-empty`);
      empty.hidden = false;
      empty.textContent = `Overview unavailable: ${reason}`;
    }
    document.body.classList.add("no-overview");
  }

  // -- one actor ------------------------------------------------------------------------------------------

  const DETAIL_ORDER = ["kind", "key", "status", "mailbox_used", "mailbox_capacity", "oldest_message_seconds",
    "messages_handled", "messages_dropped", "restarts", "last_error", "last_error_at", "last_activity_at",
    "started_at"];

  function actorPath(kind, key) {
    return `/health/actors/${encodeURIComponent(kind)}/${key.split("/").map(encodeURIComponent).join("/")}`;
  }

  function drawDetail(stats) {
    const list = document.createElement("dl");
    list.id = "detail-fields";
    // A time's "<base>_seconds_ago" is shown with its "<base>_at"; not on a line of its own.
    const shownWithItsTime = (name) => /_seconds_ago$/.test(name) && name.replace(/_seconds_ago$/, "_at") in stats;
    const names = [...DETAIL_ORDER.filter((name) => name in stats),
      ...Object.keys(stats).filter((name) => !DETAIL_ORDER.includes(name) && !shownWithItsTime(name))];
    for (const name of names) {
      const term = cell("dt", labelOf(name));
      const value = cell("dd", fieldValue(name, stats[name], stats), name);
      list.append(term, value);
    }
    $("detail-fields").replaceWith(list);
  }

  async function refreshDetail() {
    const selected = state.selected;
    if (!selected) return;
    try {
      const stats = await getJson(actorPath(selected.kind, selected.key));
      if (state.selected !== selected) return;
      drawDetail(stats);
      showProblem($("detail-problem"), "");
      $("detail").classList.remove("stale");
    } catch (err) {
      if (err instanceof NeedsToken) throw err;
      if (state.selected !== selected) return;
      const gone = err instanceof HttpError && err.status === 404;
      showProblem($("detail-problem"), gone
        ? "This actor is no longer in memory (it left after its idle time, or its failure cooled down)."
        : `Could not read this actor: ${err.message}`);
      $("detail").classList.add("stale");
    }
  }

  function openDetail(kind, key) {
    state.selected = { kind, key };
    $("detail-title").textContent = `${kind} · ${key}`;
    $("detail-fields").replaceChildren();
    showProblem($("detail-problem"), "loading…");
    $("detail").hidden = false;
    document.body.classList.add("detail-open");
    refreshDetail().catch(needToken);
  }

  function closeDetail() {
    state.selected = null;
    $("detail").hidden = true;
    document.body.classList.remove("detail-open");
  }

  // -- the nodes (nodes.js draws them) ----------------------------------------------------------------------

  const TOOLS = { number, duration, agoText, cell, header };

  async function refreshNodes() {
    if (state.nodesBusy || !$("sign-in").hidden || !window.opsNodes) return;
    state.nodesBusy = true;
    try {
      window.opsNodes.draw(await getJson(`/ops/cluster?leases=${LEASES_SHOWN}`), TOOLS);
    } catch (err) {
      if (err instanceof NeedsToken) {
        needToken(err);
        return;
      }
      window.opsNodes.unavailable(err instanceof HttpError && err.status === 404
        ? "this service has no /ops/cluster" : err.message);
    } finally {
      state.nodesBusy = false;
    }
    state.nodesRefreshes += 1;
    document.body.dataset.nodesRefreshes = String(state.nodesRefreshes);
  }

  // -- the refresh loop -----------------------------------------------------------------------------------

  function needToken(err) {
    if (!(err instanceof NeedsToken)) return;
    // Two reads under way (actors, nodes) meet the same refusal: the second finds the token dropped and the question
    // asked already, and leaves what the first said.
    if (!$("sign-in").hidden && !currentToken()) return;
    const hadOne = Boolean(currentToken());
    keepToken(null);
    $("board").hidden = true;
    $("sign-in").hidden = false;
    showProblem($("sign-in-error"), hadOne ? "That token was refused." : "");
    $("token").focus();
  }

  async function refresh() {
    if (state.busy || !$("sign-in").hidden) return;
    state.busy = true;
    try {
      const [actors, overview] = await Promise.allSettled([
        getJson(`/health/actors?busiest=${BUSIEST}`), getJson("/metrics/overview"), refreshDetail()]);
      const refused = [actors, overview].find((result) => result.status === "rejected"
        && result.reason instanceof NeedsToken);
      if (refused) {
        needToken(refused.reason);
        return;
      }
      if (actors.status === "fulfilled") {
        drawActors(actors.value);
        showProblem($("problem"), "");
      } else {
        showProblem($("problem"), `Actor health unavailable: ${actors.reason.message}`);
      }
      if (overview.status === "fulfilled") drawOverview(overview.value);
      else {
        const reason = overview.reason;
        overviewUnavailable(reason instanceof HttpError && reason.status === 404
          ? "this service has no /metrics/overview" : reason.message);
      }
      $("refreshed").textContent = `updated ${new Date().toLocaleTimeString()}`;
      state.refreshes += 1;
      document.body.dataset.refreshes = String(state.refreshes);
    } finally {
      state.busy = false;
    }
  }

  function schedule() {
    clearInterval(state.timer);
    state.timer = setInterval(() => {
      if (!state.paused && !document.hidden) refresh();
    }, intervalSeconds * 1000);
    nodesRound();
  }

  // Each round starts NODES_SECONDS after the last one started, or as soon as it ends when it took longer: a slow
  // answer never costs a whole round.
  function nodesRound() {
    clearTimeout(state.nodesTimer);
    const began = performance.now();
    const next = () => {
      state.nodesTimer = setTimeout(nodesRound, Math.max(0, NODES_SECONDS * 1000 - (performance.now() - began)));
    };
    if (state.paused || document.hidden) next();
    else refreshNodes().finally(next);
  }

  function start() {
    $("interval").textContent = String(intervalSeconds);
    takeTokenFromAddress();
    $("sign-out").hidden = !currentToken();
    $("sign-in").addEventListener("submit", (event) => {
      event.preventDefault();
      keepToken($("token").value.trim());
      $("token").value = "";
      $("sign-in").hidden = true;
      $("board").hidden = false;
      refresh();
      refreshNodes();
    });
    $("sign-out").addEventListener("click", () => {
      keepToken(null);
      location.reload();
    });
    $("pause").addEventListener("click", () => {
      state.paused = !state.paused;
      $("pause").textContent = state.paused ? "Resume" : "Pause";
      if (!state.paused) {
        refresh();
        refreshNodes();
      }
    });
    $("detail-close").addEventListener("click", closeDetail);
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape") closeDetail();
    });
    document.addEventListener("visibilitychange", () => {
      if (!document.hidden && !state.paused) {
        refresh();
        refreshNodes();
      }
    });
    refresh();
    schedule();
  }

  start();
})();
