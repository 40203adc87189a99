// The agent inbox's one script: live updates. Pages are whole without it (every action is a plain form); with it,
// the part of the page a chat's events change is read again from the server, which renders it escaped.
"use strict";

(function () {
  const live = document.body.dataset.live;
  const part = document.getElementById("live-part");
  if (!live || !part) return;
  const phone = document.body.dataset.phone || null;
  const seen = new Set();
  let pending = false;
  let running = false;

  function atBottom() {
    return window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
  }

  function keepFocus(refresh) {
    // A refresh replaces the part's elements; keep the focus on the same control when it is still there.
    const active = document.activeElement;
    const id = active && part.contains(active) ? active.id || active.getAttribute("action") : null;
    refresh();
    if (id) {
      const again = document.getElementById(id);
      if (again) again.focus();
    }
  }

  async function refresh() {
    if (running) { pending = true; return; }
    running = true;
    try {
      do {
        pending = false;
        const stay = live === "chat" && atBottom();
        const answer = await fetch(part.dataset.refresh, {
          headers: { "X-Requested-With": "fetch" }, credentials: "same-origin", cache: "no-store",
        });
        if (answer.status === 401) { window.location.reload(); return; }
        if (!answer.ok) continue;
        const html = await answer.text();
        // A details element the member opened stays open across the refresh.
        const open = Array.from(part.querySelectorAll("details[open] summary")).map((s) => s.textContent);
        keepFocus(() => { part.innerHTML = html; });
        part.querySelectorAll("details summary").forEach((s) => {
          if (open.includes(s.textContent)) s.parentElement.open = true;
        });
        if (stay) window.scrollTo(0, document.body.scrollHeight);
        document.dispatchEvent(new CustomEvent("inbox:refreshed"));
      } while (pending);
    } finally {
      running = false;
    }
  }

  function heard(message) {
    if (message.lastEventId) {
      if (seen.has(message.lastEventId)) return;
      seen.add(message.lastEventId);
      if (seen.size > 5000) seen.clear();
    }
    let data = {};
    try { data = JSON.parse(message.data); } catch (err) { return; }
    if (live === "chat" && data.phone !== phone) return;
    refresh();
  }

  // The stream starts where it stood before the server read this page, so nothing that changed since is missed.
  const since = document.body.dataset.liveSince;
  const events = new EventSource("/app/events" + (since ? "?since=" + encodeURIComponent(since) : ""));
  ["message_received", "message_sent", "message_status", "handoff", "conversation_assigned",
   "conversation_resolved", "conversation_seen"].forEach((name) => events.addEventListener(name, heard));
  events.addEventListener("open", () => document.body.setAttribute("data-live-connected", "true"));
  events.addEventListener("error", () => document.body.removeAttribute("data-live-connected"));

  if (live === "chat") window.scrollTo(0, document.body.scrollHeight);
})();
