// The operator page's Nodes section: draws what GET /ops/cluster answers (every node PostgreSQL knows of, alive or
// not). ops.js reads it twice a second and calls `opsNodes.draw(view, tools)`, `tools` being its formatting and
// drawing helpers; this file reads nothing itself. Text from the service is only ever set as text (textContent).
// Each node's row carries its state and when this page first drew it (`data-state`, `data-state-since`, ms since
// the epoch by this browser's clock), and says so in the state's tooltip.
"use strict";

window.opsNodes = (() => {
  const $ = (id) => document.getElementById(id);
  const GOOD = new Set(["alive"]);
  const BAD = new Set(["lost", "silent"]);
  // A node gone has no actors now: its last published figures are in the JSON, not shown as if live.
  const GONE = new Set(["lost", "stopped"]);
  const SKEW_WARN_SECONDS = 1; // the bound past which a node logs a warning (monitoring/clock_skew.py)
  const seen = new Map(); // node -> {state, since}: when this page first drew the node in its state

  // A node's name is the address the others reach it at: shown without the scheme, which every node shares.
  function shortName(node) {
    return node.replace(/^https?:\/\//, "");
  }

  function since(tools, seconds) {
    return typeof seconds === "number" ? tools.agoText(seconds) : "—";
  }

  function skewText(seconds) {
    if (typeof seconds !== "number") return "—";
    const sign = seconds > 0 ? "+" : seconds < 0 ? "−" : "";
    const size = Math.abs(seconds);
    return `${sign}${size < 0.1 ? (size * 1000).toFixed(1) + " ms" : size.toFixed(2) + " s"}`;
  }

  const STATE_TEXT = {
    alive: "alive", draining: "draining", silent: "silent (lock held, not heard from)",
    lost: "lost (lock free)", stopping: "stopping", stopped: "stopped",
  };

  function drawNodes(view, tools) {
    const { cell, header, number } = tools;
    const table = $("nodes");
    const columns = ["Node", "State", "Liveness lock", "Started", "Last seen", "Workspaces", "Relayed out",
      "Relayed in", "Unreachable", "Live actors", "Clock skew", "Figures as of", "PID"];
    header(table, columns);
    const body = document.createElement("tbody");
    for (const node of view.nodes) {
      const row = document.createElement("tr");
      row.dataset.node = node.node;
      row.dataset.state = node.state;
      let known = seen.get(node.node);
      if (!known || known.state !== node.state) {
        known = { state: node.state, since: Date.now() };
        seen.set(node.node, known);
      }
      row.dataset.stateSince = String(known.since);
      const name = cell("th", shortName(node.node) + (node.this_node ? " (this node)" : ""), "node", "Node");
      name.scope = "row";
      row.appendChild(name);
      const requests = node.requests || {};
      const actors = (!GONE.has(node.state) && node.actors) || {};
      const live = actors.failed ? `${number(actors.live)} (${number(actors.failed)} failed)` : number(actors.live);
      const lock = node.liveness_lock == null ? "—" : node.liveness_lock ? "held" : "free";
      const skew = cell("td", skewText(node.clock_skew_seconds), "clock_skew", "Clock skew");
      if (typeof node.clock_skew_seconds === "number") {
        skew.title = `measured ${since(tools, node.clock_skew_measured_seconds_ago)}`;
        if (Math.abs(node.clock_skew_seconds) > SKEW_WARN_SECONDS) skew.classList.add("warn");
      }
      const cells = [
        cell("td", STATE_TEXT[node.state] || node.state, "state", "State"),
        cell("td", lock, "liveness_lock", "Liveness lock"),
        cell("td", since(tools, node.started_seconds_ago), "started", "Started"),
        cell("td", since(tools, node.last_seen_seconds_ago), "last_seen", "Last seen"),
        cell("td", number((node.workspaces || {}).held), "workspaces", "Workspaces"),
        cell("td", number(requests.relayed), "relayed", "Relayed out"),
        cell("td", number(requests.taken), "taken", "Relayed in"),
        cell("td", number(requests.unreachable), "unreachable", "Unreachable"),
        cell("td", live, "live", "Live actors"),
        skew,
        cell("td", node.this_node ? "now" : since(tools, node.figures_seconds_ago), "figures", "Figures as of"),
        cell("td", node.pid == null ? "—" : String(node.pid), "pid", "PID"),
      ];
      for (const each of cells) row.appendChild(each);
      cells[0].title = `${node.state} since ${new Date(known.since).toLocaleTimeString()} (as this page saw it)`;
      if (node.started_at) cells[2].title = new Date(node.started_at).toLocaleString();
      if (node.last_seen_at) cells[3].title = new Date(node.last_seen_at).toLocaleString();
      if (GOOD.has(node.state)) cells[0].classList.add("good");
      if (BAD.has(node.state) || actors.failed > 0) row.classList.add("bad");
      else if (!GOOD.has(node.state)) row.classList.add("idle");
      body.appendChild(row);
    }
    table.tBodies[0].replaceWith(body);
  }

  function drawLeases(view, tools) {
    const { cell, header, number } = tools;
    const table = $("node-leases");
    header(table, ["Workspace", "Node", "Epoch", "Lease runs out in"]);
    const body = document.createElement("tbody");
    let held = 0;
    let shown = 0;
    const cut = [];
    for (const node of view.nodes) {
      const workspaces = node.workspaces || { held: 0, leases: [] };
      held += workspaces.held;
      shown += workspaces.leases.length;
      if (workspaces.leases.length < workspaces.held) {
        cut.push(`${shortName(node.node)}: ${number(workspaces.leases.length)} of ${number(workspaces.held)}`);
      }
      for (const lease of workspaces.leases) {
        const row = document.createElement("tr");
        row.dataset.workspace = String(lease.workspace_id);
        row.dataset.node = node.node;
        const workspace = cell("th", String(lease.workspace_id), "workspace_id", "Workspace");
        workspace.scope = "row";
        row.append(workspace, cell("td", shortName(node.node), "node", "Node"),
          cell("td", number(lease.epoch), "epoch", "Epoch"),
          cell("td", tools.duration(lease.expires_in_seconds), "expires_in", "Lease runs out in"));
        body.appendChild(row);
      }
    }
    table.tBodies[0].replaceWith(body);
    table.hidden = shown === 0;
    $("node-leases-empty").hidden = shown !== 0;
    $("leases-title").textContent = `Workspaces and their leases · ${number(held)} held`;
    const note = $("node-leases-cut");
    note.textContent = cut.length ? `Showing the first of each node's leases: ${cut.join("; ")}.` : "";
    note.hidden = cut.length === 0;
  }

  function drawKinds(view, tools) {
    const { cell, header, number } = tools;
    const table = $("node-kinds");
    const nodes = view.nodes.filter((node) => !GONE.has(node.state));
    header(table, ["Kind", ...nodes.map((node) => shortName(node.node))]);
    const kinds = [...new Set(nodes.flatMap((node) => Object.keys((node.actors || {}).kinds || {})))].sort();
    const body = document.createElement("tbody");
    for (const kind of kinds) {
      const row = document.createElement("tr");
      row.dataset.kind = kind;
      const name = cell("th", kind, "kind");
      name.scope = "row";
      row.appendChild(name);
      for (const node of nodes) {
        const counts = ((node.actors || {}).kinds || {})[kind];
        const text = !node.actors ? "—" : !counts ? "0"
          : counts.failed ? `${number(counts.live)} (${number(counts.failed)} failed)` : number(counts.live);
        const each = cell("td", text, "live", shortName(node.node));
        each.dataset.node = node.node;
        if (counts && counts.failed) each.classList.add("warn");
        row.appendChild(each);
      }
      body.appendChild(row);
    }
    table.tBodies[0].replaceWith(body);
  }

  function draw(view, tools) {
    const nodes = Array.isArray(view.nodes) ? view.nodes : [];
    const shown = { ...view, nodes };
    drawNodes(shown, tools);
    drawLeases(shown, tools);
    drawKinds(shown, tools);
    const states = view.states || {};
    const parts = Object.keys(states).filter((state) => states[state] > 0)
      .map((state) => `${tools.number(states[state])} ${state}`);
    $("nodes-title").textContent = view.clustered === false ? "Nodes · this node alone"
      : `Nodes · ${parts.join(", ") || "none"}`;
    $("nodes-problem").hidden = true;
    $("nodes-panel").classList.remove("stale");
  }

  // The last view stays, marked stale, with why it could not be read again.
  function unavailable(reason) {
    const problem = $("nodes-problem");
    problem.textContent = `Nodes unavailable: ${reason}`;
    problem.hidden = false;
    $("nodes-panel").classList.add("stale");
  }

  return { draw, unavailable };
})();
