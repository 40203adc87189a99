// The agent inbox's one script. Pages are whole without it: every action is a plain form. With htmx (fetched at
// set-up, inbox_http/web/vendor_assets.py) the agent workspace (the list and the open chat on one screen) swaps
// only the parts an action or a live event changed, morphing them (idiomorph) so that focus and scroll stay where
// they were. Its parts, each in its own function below:
// - times: in the member's time zone, "3 min ago" and "waiting" counted on every 30 s (every page);
// - the settings menu: the time zone, notifications and their sound (every page);
// - the workspace: live events routed to the parts they change, drafts kept in this browser until sent, a send
//   in flight shown, what was typed kept when the session has ended;
// - canned responses: "/" at the start of the reply box searches them, Enter inserts one; Ctrl/⌘+Enter sends;
// - keyboard shortcuts and their help;
// - notifications of a chat handed or transferred to the member (mentions.js tells of a note mentioning them).
// No inline handler, no eval: the pages' Content-Security-Policy allows neither.
"use strict";

function byId(id) {
  return document.getElementById(id);
}

// Each live event (of `type`, or of every type when it is null) once, whatever a reconnect replays, with its data
// parsed: handler(data, message). Each caller hears every event for itself.
function onLiveEvent(type, handler) {
  const heard = new Set();
  document.addEventListener("htmx:sseMessage", (event) => {
    const message = event.detail;
    if (!message || !message.type || (type && message.type !== type)) return;
    if (message.lastEventId) {
      if (heard.has(message.lastEventId)) return;
      heard.add(message.lastEventId);
      if (heard.size > 5000) heard.clear();
    }
    let data;
    try {
      data = JSON.parse(message.data);
    } catch (err) {
      return;
    }
    handler(data || {}, message);
  });
}

// Something to do after each swap of the workspace's parts, and once now.
function afterEachSwap(work) {
  ["htmx:afterSettle", "htmx:oobAfterSwap", "htmx:historyRestore"].forEach((name) => {
    document.addEventListener(name, () => work());
  });
  work();
}

// -- times ----------------------------------------------------------------------------------------------------
// The service renders each time as <time datetime="…UTC…"> (inbox_http/web/member_time.py): a clock time in the
// member's zone once it knows it, "3 min ago" (data-ago) and a wait (data-waiting) as of when it rendered them.
// Here the relative ones are counted on from the service's clock (data-now of the settings menu: the browser's own
// may be off). A clock time is written here only when the service could not: before the member's zone is stored
// (then in the browser's zone, from Date's own fields) and after the member chose another in the menu (Intl). The
// page's first pass so uses no Intl: its first use starts ICU, tens of milliseconds of a fresh page's load.
const memberTime = (function () {
  const menu = byId("settings-menu");
  const skew = menu && menu.dataset.now ? Date.parse(menu.dataset.now) - Date.now() : 0;
  const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const CLOCK = /^\d{2} [A-Z][a-z]{2} \d{2}:\d{2}$/; // what the service's clock times look like
  const stored = (menu && menu.dataset.timeZone) || "";
  // The zone shown: a name (Intl writes it), or null for the browser's own (Date's local fields write it).
  let zone = stored || null;
  // Whether clock times are written here; not while the service writes them in the zone shown.
  let clocks = !stored;

  function browserZone() {
    try {
      return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
    } catch (err) {
      return "UTC";
    }
  }

  function two(n) {
    return (n < 10 ? "0" : "") + n;
  }

  function parts(at, options) {
    const found = {};
    new Intl.DateTimeFormat("en-GB", Object.assign({ timeZone: zone }, options)).formatToParts(at)
      .forEach((part) => { found[part.type] = part.value; });
    return found;
  }

  // "28 Nov 14:05", as Python's "%d %b %H:%M" writes it.
  function clock(at) {
    if (zone === null) {
      const local = new Date(at);
      return two(local.getDate()) + " " + MONTHS[local.getMonth()] + " " + two(local.getHours()) + ":" +
        two(local.getMinutes());
    }
    const p = parts(at, { day: "2-digit", month: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
    return p.day + " " + MONTHS[Number(p.month) - 1] + " " + p.hour + ":" + p.minute;
  }

  // "UTC" or "UTC+05:30", as member_time.zone_label writes it.
  function zoneLabel(at) {
    if (zone === null) {
      const east = -Math.round(new Date(at).getTimezoneOffset());
      const minutes = Math.abs(east);
      return east ? "UTC" + (east < 0 ? "-" : "+") + two(Math.floor(minutes / 60)) + ":" + two(minutes % 60) : "UTC";
    }
    const offset = parts(at, { timeZoneName: "longOffset" }).timeZoneName || "GMT";
    return offset === "GMT" ? "UTC" : offset.replace("GMT", "UTC");
  }

  // As the service's pages.duration writes it.
  function duration(seconds) {
    const sign = seconds < 0 ? "-" : "";
    seconds = Math.abs(seconds);
    if (seconds < 60) return sign + seconds + " s";
    if (seconds < 3600) return sign + Math.floor(seconds / 60) + " min";
    if (seconds < 86400) return sign + Math.floor(seconds / 3600) + " h " + Math.floor(seconds % 3600 / 60) + " min";
    return sign + Math.floor(seconds / 86400) + " d";
  }

  function write(element, counting) {
    const at = Date.parse(element.getAttribute("datetime"));
    if (Number.isNaN(at)) return;
    const seconds = Math.max(0, Math.floor((Date.now() + skew - at) / 1000));
    let text = null;
    if (element.hasAttribute("data-ago")) text = seconds >= 60 ? duration(seconds) + " ago" : "just now";
    else if (element.hasAttribute("data-waiting")) text = duration(seconds);
    else if (counting || !clocks) return;
    else if (element.hasAttribute("data-zoned")) text = clock(at) + " " + zoneLabel(at);
    else if (CLOCK.test(element.textContent.trim())) text = clock(at);
    if (text !== null && element.textContent !== text) element.textContent = text;
  }

  // `counting`: only the relative times (the 30-second tick).
  function rewrite(counting) {
    try {
      document.querySelectorAll("time[datetime]").forEach((element) => write(element, counting));
    } catch (err) {
      // A zone this browser's Intl does not know: the service's text stays.
    }
  }

  afterEachSwap(() => rewrite(false));
  window.setInterval(() => rewrite(true), 30000);

  return {
    browserZone: browserZone,
    // The member chose a zone in the menu: every clock time is written in it here from now on.
    use(name) {
      zone = name;
      clocks = true;
      rewrite(false);
    },
  };
})();

// -- the settings menu: the time zone, notifications and their sound -------------------------------------------

// A form of the page sent by the script: the answer's status and text.
function sendForm(url, fields) {
  const csrf = document.querySelector("input[name=csrf]");
  return fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "X-Requested-With": "fetch", "X-CSRF-Token": csrf ? csrf.value : "" },
    body: new URLSearchParams(fields),
  }).then((answer) => answer.text().then((text) => ({ status: answer.status, text: text })));
}

(function settingsMenu() {
  const menu = byId("settings-menu");
  if (!menu) return;
  const form = byId("time-zone-form");
  const field = byId("member-time-zone");
  const said = byId("time-zone-said");

  // `chosen`: by the member in the menu (the page's times move to it), not the browser's own zone saved.
  function saveZone(name, chosen) {
    return sendForm(form.action, { time_zone: name }).then((answer) => {
      if (answer.status === 204) {
        menu.dataset.timeZone = name;
        field.value = name;
        said.textContent = "Times show in " + name + ".";
        if (chosen) memberTime.use(name);
      } else {
        said.textContent = answer.status === 401 ? "Your session has ended; sign in again." : answer.text;
      }
      return answer.status;
    }, () => {
      said.textContent = "No connection to the service; the time zone was not saved.";
    });
  }

  if (form && field) {
    // The first page a member opens tells the service the browser's zone, once the page is idle (naming the zone
    // starts Intl); after that it is theirs to change.
    if (!menu.dataset.timeZone && menu.dataset.zoneSaves === "true") {
      (window.requestIdleCallback || window.setTimeout)(() => saveZone(memberTime.browserZone(), false));
    }
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const name = field.value.trim();
      if (name) saveZone(name, true);
    });
    menu.addEventListener("toggle", () => {
      const list = byId("time-zones");
      if (!menu.open || !list || list.children.length || !Intl.supportedValuesOf) return;
      Intl.supportedValuesOf("timeZone").concat(["UTC"]).forEach((name) => {
        const option = document.createElement("option");
        option.value = name;
        list.appendChild(option);
      });
    });
  }

  // Esc closes the menu and gives the focus back to its summary.
  menu.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && menu.open) {
      menu.open = false;
      menu.querySelector("summary").focus();
    }
  });
})();

(function workspace() {
  if (!byId("workspace") || !window.htmx) return;

  // A morph keeps a <details> the member opened open; the server may still open one (a refused contact edit).
  if (window.Idiomorph) {
    Idiomorph.defaults.callbacks.beforeAttributeUpdated = function (name, node, change) {
      return !(name === "open" && change === "remove" && node instanceof HTMLDetailsElement);
    };
    // A choice the member made in a list and has not sent stays theirs: a live update of its part (a label another
    // member took off, the customer writing) renders the form again, and would put the list back to its first
    // option under their hand (a snooze chosen "until the customer writes" sent as one hour).
    Idiomorph.defaults.callbacks.beforeNodeMorphed = function (node) {
      if (!(node instanceof HTMLSelectElement)) return true;
      const chosen = node.selectedOptions[0];
      return !chosen || chosen.defaultSelected;
    };
  }

  // The stream's connection, kept so that an ended session can close it (htmx's SSE extension makes it).
  const makeSource = htmx.createEventSource;
  let source = null;
  if (makeSource) {
    htmx.createEventSource = function (url) {
      source = makeSource(url);
      return source;
    };
  }

  function openPhone() {
    const pane = byId("chat-pane");
    return pane && pane.dataset.phone ? pane.dataset.phone : null;
  }

  // -- drafts: per workspace, member and chat, in localStorage (a reload, a sign-out, a second tab keep them) --

  function draftKey(kind, phone) {
    const owner = (byId("workspace") || document.body).dataset.drafts || "";
    return ["inbox-draft", owner, phone, kind].join(":");
  }

  function withStorage(use) {
    try {
      return use(window.localStorage);
    } catch (err) {
      return null; // storage refused (a private window's quota): drafts are then this page's only
    }
  }

  function saveDraft(box) {
    const phone = openPhone();
    if (!phone || !box.dataset.draft) return;
    const key = draftKey(box.dataset.draft, phone);
    withStorage((storage) => (box.value ? storage.setItem(key, box.value) : storage.removeItem(key)));
  }

  function restoreDrafts() {
    const phone = openPhone();
    if (!phone) return;
    document.querySelectorAll("textarea[data-draft]").forEach((box) => {
      if (box.value) return; // a refused message came back with its text: that is the draft
      const kept = withStorage((storage) => storage.getItem(draftKey(box.dataset.draft, phone)));
      if (!kept) return;
      box.value = kept;
      const details = box.closest("details");
      if (details) details.open = true;
    });
  }

  document.addEventListener("input", (event) => {
    if (event.target instanceof HTMLTextAreaElement) saveDraft(event.target);
  });

  // Another tab of this member wrote (or sent) a draft of the open chat: show it, unless this box is being typed in.
  window.addEventListener("storage", (event) => {
    const phone = openPhone();
    if (!phone || !event.key) return;
    document.querySelectorAll("textarea[data-draft]").forEach((box) => {
      if (event.key === draftKey(box.dataset.draft, phone) && box !== document.activeElement) {
        box.value = event.newValue || "";
      }
    });
  });

  // The server says a composed message went (HX-Trigger, before the fresh composer is swapped in).
  document.addEventListener("inbox:sent", (event) => {
    const phone = openPhone();
    const kind = event.detail && event.detail.draft;
    if (phone && kind) withStorage((storage) => storage.removeItem(draftKey(kind, phone)));
  });

  // -- sending: the button says so, the text stays put until the answer, refusals stay beside the box --

  // What had the focus when a form was sent: its button, disabled while the request is in flight, loses it.
  let sentFrom = null;

  document.addEventListener("htmx:beforeRequest", (event) => {
    const form = event.detail.elt;
    if (!(form instanceof HTMLFormElement)) return;
    sentFrom = document.activeElement;
    const inComposer = Boolean(form.closest("#composer"));
    const chat = form.closest("#chat-pane") ? openPhone() : null;
    const button = form.querySelector("button[data-sending]");
    if (button) {
      button.dataset.label = button.textContent;
      button.textContent = button.dataset.sending;
    }
    form.querySelectorAll("textarea").forEach((box) => { box.readOnly = true; });
    // Heard on the form itself: an answer that replaces the form (Claim once claimed) detaches it, and an event on
    // a detached element never reaches the document.
    form.addEventListener("htmx:afterRequest", (done) => {
      if (button && button.dataset.label) button.textContent = button.dataset.label;
      form.querySelectorAll("textarea").forEach((box) => { box.readOnly = false; });
      if (done.detail.successful) afterSent(form, inComposer);
      // The answer shows the chat as it was when the action was written; a status that came meanwhile (a reply
      // delivered before its own answer reached the screen) may have been shown already and would be undone by it.
      // One more read of the chat's parts puts the newest back.
      if (done.detail.successful && chat && chat === openPhone()) refresh("chat", () => readChat(chat));
    }, { once: true });
  });

  function afterSent(form, inComposer) {
    const active = document.activeElement;
    if (active && active !== document.body && !form.contains(active)) return; // the member has moved on
    // A message sent: the member stays in the box to write the next one. Anything else: back to the control
    // that sent it, if the answer kept it; if it took it away, on to what comes next in the chat.
    const box = inComposer && byId(form.id === "note-form" ? "note-text" : "reply-text");
    const back = box || (sentFrom && sentFrom.isConnected && !sentFrom.disabled ? sentFrom : null);
    if (back) back.focus();
    else if (!form.isConnected) landInChat();
  }

  // The reply box when the answer has one (Claim: the next thing is to reply), else the chat's title (Resolve).
  function landInChat() {
    const reply = byId("reply-text");
    if (reply && !reply.disabled && !reply.readOnly) {
      reply.focus();
      return;
    }
    const title = byId("chat-title");   // tabindex -1: the script may focus it; Tab passes it by
    if (title) title.focus();
  }

  function showProblem(elt, sentence) {
    const form = elt instanceof HTMLFormElement ? elt : null;
    const place = form && form.querySelector(".field-error");
    if (place) {
      place.textContent = sentence;
      place.hidden = false;
      const box = form.querySelector("textarea");
      if (box) box.setAttribute("aria-invalid", "true");
      return;
    }
    const notice = byId("notice");
    if (form && notice) {
      const alert = document.createElement("p");
      alert.className = "refusal";
      alert.setAttribute("role", "alert");
      alert.textContent = sentence;
      notice.replaceChildren(alert);
    }
  }

  document.addEventListener("htmx:responseError", (event) => {
    const status = event.detail.xhr.status;
    if (status === 401) {
      sessionEnded();
      return;
    }
    showProblem(event.detail.elt, "The service could not answer (" + status + "); nothing typed was lost. Try again: " +
      "a message is never sent twice.");
  });

  document.addEventListener("htmx:sendError", (event) => {
    showProblem(event.detail.elt, "No connection to the service; nothing typed was lost. Try again: a message is " +
      "never sent twice.");
  });

  // -- an ended session: keep the page and its drafts, offer to sign in again and come back here --

  function sessionEnded() {
    const banner = byId("session-ended");
    if (!banner) return;
    byId("sign-in-again").href = "/app/sign-in?next=" + encodeURIComponent(location.pathname + location.search);
    banner.hidden = false;
    const workspace = byId("workspace");
    if (workspace) workspace.removeAttribute("sse-connect"); // the stream's reconnects would only fail again
    if (source) source.close();
    document.body.removeAttribute("data-live-connected");
  }

  // -- live updates: the stream names the chat that changed; read again only what shows it --

  const runs = {};

  // At most one read of a part at a time, and one more after it if events arrived meanwhile.
  function refresh(name, read) {
    const run = runs[name] || (runs[name] = { busy: false, again: false });
    if (run.busy) {
      run.again = true;
      return;
    }
    run.busy = true;
    const done = () => {
      run.busy = false;
      if (run.again) {
        run.again = false;
        refresh(name, read);
      }
    };
    const reading = read();
    if (reading) reading.then(done, done);
    else done();
  }

  function listUrl() {
    const body = byId("list-body");
    if (!body) return null;
    const url = new URL(body.dataset.refresh, location.href);
    const phone = openPhone();
    if (phone) url.searchParams.set("chat", phone);
    else url.searchParams.delete("chat");
    return url.pathname + url.search;
  }

  function readList() {
    const url = listUrl();
    if (!url) return null;
    // The chat open when the answer lands is the one to mark (another may have been chosen meanwhile).
    return htmx.ajax("GET", url, { source: "#list-body", target: "#list-body", swap: "morph:innerHTML" })
      .then(markOpenRow);
  }

  function readChat(phone) {
    if (openPhone() !== phone) return null;
    const parts = { source: "#chat-pane", target: "#chat-pane", swap: "none" };
    return htmx.ajax("GET", "/app/chats/" + phone + "/live", parts)
      .then(() => {
        // The customer's window opened or closed: the composer offers a reply or templates.
        const head = byId("chat-head");
        const composer = byId("composer");
        if (head && composer && head.dataset.window !== composer.dataset.window && openPhone() === phone) {
          return htmx.ajax("GET", "/app/chats/" + phone + "/composer", parts);
        }
        return null;
      });
  }

  onLiveEvent(null, (data, message) => {
    if (message.lastEventId) {
      // A reconnect the extension makes itself starts after the last event heard, as Last-Event-ID would.
      const workspace = byId("workspace");
      if (workspace && workspace.hasAttribute("sse-connect")) {
        workspace.setAttribute("sse-connect", "/app/events?since=" + encodeURIComponent(message.lastEventId));
      }
    }
    if (message.type !== "message_status") refresh("list", readList); // a status changes no row of the list
    const phone = data.phone;
    if (phone && phone === openPhone()) refresh("chat", () => readChat(phone));
  });

  document.addEventListener("htmx:sseOpen", () => document.body.setAttribute("data-live-connected", "true"));
  document.addEventListener("htmx:sseError", (event) => {
    document.body.removeAttribute("data-live-connected");
    // Refused for good (a 401 closes an EventSource): find out whether the session has ended.
    const failed = event.detail && event.detail.source;
    if (failed && failed.readyState === EventSource.CLOSED) refresh("list", readList);
  });

  // -- scroll: the thread stays at its end only if it was there; a chat opens at its end --

  function scroller() {
    const thread = byId("thread");
    if (thread && thread.scrollHeight > thread.clientHeight + 1 && getComputedStyle(thread).overflowY !== "visible") {
      return thread;
    }
    return document.scrollingElement;
  }

  function atEnd(element) {
    return element.scrollHeight - element.scrollTop - element.clientHeight < 40;
  }

  function toEnd() {
    const element = scroller();
    element.scrollTop = element.scrollHeight;
  }

  // "Earlier messages" followed: the thread holds more than the first screen's (data-shown), and every later read
  // of the open chat (a live update, an action's answer) asks for as many, or they would be taken away again.
  document.addEventListener("htmx:configRequest", (event) => {
    const thread = byId("thread");
    const phone = openPhone();
    if (!phone || !thread || !thread.dataset.shown) return;
    const url = new URL(event.detail.path, location.href);
    const chat = "/app/chats/" + phone;
    if (url.origin !== location.origin || url.searchParams.has("thread") ||
        (url.pathname !== chat && !url.pathname.startsWith(chat + "/"))) return;
    url.searchParams.set("thread", thread.dataset.shown);
    event.detail.path = url.pathname + url.search + url.hash;
  });

  let threadAtEnd = true;
  let earlierAsked = false;   // "Earlier messages" asked, its answer not yet swapped
  document.addEventListener("htmx:beforeRequest", (event) => {
    if (event.detail.elt.id === "earlier-link") earlierAsked = true;
  });
  document.addEventListener("htmx:afterRequest", (event) => {
    if (event.detail.elt && event.detail.elt.id === "earlier-link") earlierAsked = false;
  });
  document.addEventListener("htmx:oobBeforeSwap", (event) => {
    const target = event.detail.target;
    if (!target || target.id !== "thread") return;
    // A read sent before more were shown answers with fewer: not swapped, the chat read again as it is now.
    const fragment = event.detail.fragment;
    const incoming = fragment && (fragment.id === "thread" ? fragment : fragment.querySelector("#thread"));
    if (incoming && Number(incoming.dataset.shown || 0) < Number(target.dataset.shown || 0)) {
      event.detail.shouldSwap = false;
      const phone = openPhone();
      if (phone) refresh("chat", () => readChat(phone));
      return;
    }
    threadAtEnd = atEnd(scroller());
    // The earlier messages come in below "Earlier messages", which keeps the focus (the next ones to ask for); once
    // there are no more, the thread itself has it. After the swap, which happens before this task ends (htmx tells
    // of it on the element that asked, detached with the control when that was the control).
    if (earlierAsked && document.activeElement && document.activeElement.id === "earlier-link") {
      queueMicrotask(() => {
        const link = byId("earlier-link");
        if (link) link.scrollIntoView({ block: "nearest" });
        else if (byId("thread")) byId("thread").focus({ preventScroll: true });
      });
    }
  });
  document.addEventListener("htmx:oobAfterSwap", (event) => {
    if (event.detail.target && event.detail.target.id === "thread" && threadAtEnd) toEnd();
  });

  function markOpenRow() {
    const phone = openPhone();
    document.querySelectorAll(".chat-row a").forEach((link) => {
      if (link.id === "link-" + phone) link.setAttribute("aria-current", "true");
      else link.removeAttribute("aria-current");
    });
  }

  function settled() {
    markOpenRow();
    restoreDrafts();
  }

  document.addEventListener("htmx:afterSettle", (event) => {
    const target = event.detail.target;
    // A pane replaced whole (a chat or a view chosen); the parts a live update reads are swapped inside it.
    if (!target || target.isConnected) return;
    if (target.id === "chat-pane") {
      toEnd();
      settled();
    } else if (target.id === "list-pane") {
      markOpenRow();
    }
  });
  document.addEventListener("htmx:oobAfterSwap", (event) => {
    if (event.detail.target && event.detail.target.id === "composer") restoreDrafts();
  });
  // The Back button brought a whole page back.
  document.addEventListener("htmx:historyRestore", () => {
    toEnd();
    settled();
  });

  settled();
  // A chat opens at its end (unless the address names "Earlier messages", followed without the script): in the
  // frame's own layout, which the page lays out before its first paint anyway, not one forced before
  // DOMContentLoaded.
  if (location.hash !== "#earlier") window.requestAnimationFrame(toEnd);
})();

// -- canned responses, and Ctrl/⌘+Enter, in the composer ------------------------------------------------------
// "/" at the start of the reply box opens a list of the workspace's canned responses (fetched once from
// /app/canned/choices, a few minutes at most), narrowed by what follows the "/" (shortcut or title): picker.js's
// list, ↑ ↓ choose, Enter inserts, Esc closes. The inserted text has its placeholders filled from the values the
// composer carries (data-fill-*). The Insert button beside Send inserts the chosen one at the caret (without the
// script, it asks the service to).
(function cannedResponses() {
  if (!byId("workspace")) return;
  const PLACEHOLDER = /\{\{\s*(name|first_name|agent)\s*\}\}/g;
  const FRESH_FOR_MS = 5 * 60 * 1000;
  let choices = null;
  let fetchedAt = 0;
  let fetching = null;

  function load() {
    const composer = byId("composer");
    if (!composer || !composer.dataset.canned) return Promise.resolve([]);
    if (choices && Date.now() - fetchedAt < FRESH_FOR_MS) return Promise.resolve(choices);
    if (!fetching) {
      const asked = { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } };
      fetching = fetch(composer.dataset.canned, asked)
        .then((answer) => (answer.ok ? answer.json() : []))
        .then((found) => {
          choices = found;
          fetchedAt = Date.now();
          return found;
        }, () => choices || [])
        .finally(() => { fetching = null; });
    }
    return fetching;
  }

  function filled(text) {
    const composer = byId("composer");
    const values = composer ? { name: composer.dataset.fillName, first_name: composer.dataset.fillFirstName,
      agent: composer.dataset.fillAgent } : {};
    return text.replace(PLACEHOLDER, (all, key) => (values[key] === undefined ? all : values[key]));
  }

  // What follows a "/" that begins the box, up to the caret; null when the box does not begin so.
  function query(box) {
    const found = /^\/([^\s/]*)$/.exec(box.value.slice(0, box.selectionStart));
    return found && box.selectionStart === box.selectionEnd ? found[1].toLowerCase() : null;
  }

  function matching(all, words) {
    const starts = all.filter((c) => c.shortcut.toLowerCase().startsWith(words));
    const contains = all.filter((c) => !starts.includes(c) &&
      (c.shortcut.toLowerCase().includes(words) || c.title.toLowerCase().includes(words)));
    return starts.concat(contains);
  }

  const picker = window.InboxPicker ? window.InboxPicker({
    box: "reply-text", list: "canned-list", said: "canned-said", limit: 20,
    nouns: ["canned response", "canned responses"],
    load: load, query: query, matching: matching,
    option: (choice) => ({ id: "canned-option-" + choice.id,
      parts: [["shortcut", "/" + choice.shortcut], ["", choice.title]] }),
    none: (words, all) => (all.length ? "No canned response matches /" + words + "." : ""),
    name: (choice) => "/" + choice.shortcut,
    // The "/…" before the caret becomes the response's text, placeholders filled; the draft keeps it.
    insert: (box, choice) => {
      const text = filled(choice.text);
      box.value = text + box.value.slice(box.selectionStart);
      box.setSelectionRange(text.length, text.length);
    },
  }) : null;

  // The Insert button beside Send: the chosen one at the caret, without replacing what was typed.
  function insertChosen(box, choice) {
    const text = filled(choice.text);
    box.setRangeText(text, box.selectionStart, box.selectionEnd, "end");
    box.focus();
    box.dispatchEvent(new Event("input", { bubbles: true }));
    if (picker) picker.say("Inserted /" + choice.shortcut + ".");
  }

  // Ctrl/⌘+Enter sends the reply or the note being written, as its button would.
  document.addEventListener("keydown", (event) => {
    const box = event.target;
    if (!(box instanceof HTMLTextAreaElement) || !box.dataset.draft || event.isComposing) return;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && !event.altKey) {
      event.preventDefault();
      const button = box.form && box.form.querySelector("button[data-sending]");
      if (button && !button.disabled) box.form.requestSubmit(button);
    }
  });

  // Before htmx hears the form's submit: with the script the Insert button inserts here, sending nothing.
  document.addEventListener("click", (event) => {
    const button = event.target instanceof Element && event.target.closest("#canned-insert");
    const box = byId("reply-text");
    const select = byId("canned-choice");
    if (!button || !box || !select) return;
    event.preventDefault();
    event.stopPropagation();
    load().then((all) => {
      const choice = all.find((c) => String(c.id) === select.value);
      if (choice) insertChosen(box, choice);
      else if (picker) picker.say("That canned response is no longer there; reload the page to see the current ones.");
    });
  }, true);

  // A composer swapped in (a message sent, the window opened or closed) says what the keyboard does once the
  // script is here to do it.
  afterEachSwap(() => {
    const keys = byId("reply-keys");
    const box = byId("reply-text");
    if (keys && box && keys.hidden) {
      keys.hidden = false;
      const described = (box.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
      if (!described.includes("reply-keys")) {
        box.setAttribute("aria-describedby", described.concat("reply-keys").join(" "));
      }
    }
  });
})();

// -- keyboard shortcuts and their help ------------------------------------------------------------------------
// j / k the next / previous chat in the list, c claim, e resolve, / search, ? this help. A shortcut never takes a
// key from a field being typed in (a text box, a select, something editable), nor a key held with Ctrl, Alt or
// ⌘, and acts only while the focus is on the page itself or on a control that takes no text. (A screen reader's
// browse mode keeps such keys for itself and never passes them on.)
(function shortcuts() {
  const help = byId("shortcuts-help");
  if (!byId("workspace") || !help) return;
  const TEXT_INPUTS = /^(text|search|email|url|tel|password|number|date|datetime-local|month|week|time)$/;
  let opener = null;

  function typingIn(element) {
    if (!(element instanceof Element)) return false;
    if (element.isContentEditable || element.closest("[contenteditable]:not([contenteditable=false])")) return true;
    if (element instanceof HTMLTextAreaElement || element instanceof HTMLSelectElement) return true;
    if (element instanceof HTMLInputElement) return TEXT_INPUTS.test(element.type || "text");
    return /^(textbox|searchbox|combobox|listbox|spinbutton|slider|menu|menubar|grid|tree)$/
      .test(element.getAttribute("role") || "");
  }

  function chatLinks() {
    return Array.from(document.querySelectorAll("#list-body .chat-row a"));
  }

  function step(by) {
    const links = chatLinks();
    if (!links.length) return;
    const focused = links.indexOf(document.activeElement);
    const current = focused >= 0 ? focused : links.findIndex((a) => a.getAttribute("aria-current") === "true");
    const next = links[current < 0 ? (by > 0 ? 0 : links.length - 1) : Math.min(links.length - 1,
      Math.max(0, current + by))];
    next.focus();
    if (next.getAttribute("aria-current") !== "true") next.click();
  }

  function press(id) {
    const button = byId(id);
    if (button && !button.disabled) button.click();
  }

  function resolve() {
    const form = document.querySelector("#resolve-box form");
    const button = form && form.querySelector("button[type=submit]");
    if (form && button && !button.disabled) form.requestSubmit(button);
  }

  function search() {
    const box = byId("q");
    if (!box) return;
    box.focus();
    box.select();
  }

  function openHelp() {
    if (help.open) return;
    opener = document.activeElement;
    help.showModal();
    byId("shortcuts-close").focus();
  }

  const ACTIONS = { j: () => step(1), k: () => step(-1), c: () => press("claim-button"), e: resolve, "/": search,
    "?": openHelp };

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.isComposing || event.ctrlKey || event.metaKey || event.altKey) return;
    if (help.open || typingIn(event.target)) return;
    const action = ACTIONS[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  });

  // The help keeps the focus inside it (Tab and Shift+Tab go round its controls); Esc or Close ends it and the
  // focus goes back to where it was.
  help.addEventListener("keydown", (event) => {
    if (event.key !== "Tab") return;
    const inside = Array.from(help.querySelectorAll("button, [href], input, select, textarea, [tabindex]"))
      .filter((element) => element.tabIndex >= 0 && !element.disabled);
    if (!inside.length) return;
    const first = inside[0];
    const last = inside[inside.length - 1];
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  });
  byId("shortcuts-close").addEventListener("click", () => help.close());
  help.addEventListener("close", () => {
    const back = opener && opener.isConnected ? opener : null;
    opener = null;
    if (back && back !== document.body) back.focus();
  });

  const button = byId("shortcuts-open");
  if (button) {
    button.hidden = false;
    button.addEventListener("click", () => {
      const menu = byId("settings-menu");
      if (menu) menu.open = false;
      openHelp();
      opener = menu ? menu.querySelector("summary") : opener;
    });
  }
})();

// -- notifications: a chat handed or transferred to the member (and a note mentioning them: mentions.js) -------
// The live stream's conversation_assigned says to whom and by whom (inbox_http/web/live_stream.py). A chat given
// to this member by someone else shows a notification (once they allowed them: the settings menu asks, never the
// page on its own), plays a short beep they can switch off, and counts in the tab's title ("(2) Asha · Inbox
// Actors") until they open it.
(function notifications() {
  const menu = byId("settings-menu");
  const panel = byId("alert-settings");
  if (!byId("workspace") || !menu || !panel) return;
  const me = Number(menu.dataset.member);
  const SOUND_KEY = "inbox-sound";
  const COUNTED = /^\(\d+\) /;
  const waiting = new Set();
  const turnOn = byId("notifications-on");
  const said = byId("notifications-said");
  const sound = byId("sound-on");
  let audio = null;
  panel.hidden = false;

  function stored(use) {
    try {
      return use(window.localStorage);
    } catch (err) {
      return null;
    }
  }

  function showPermission() {
    if (!("Notification" in window)) {
      turnOn.hidden = true;
      said.textContent = "This browser cannot show notifications.";
    } else if (Notification.permission === "granted") {
      turnOn.hidden = true;
      said.textContent = "Notifications are on.";
    } else if (Notification.permission === "denied") {
      turnOn.hidden = true;
      said.textContent = "Notifications are blocked in this browser's settings for this site.";
    } else {
      turnOn.hidden = false;
      said.textContent = "";
    }
  }

  turnOn.addEventListener("click", () => {
    Notification.requestPermission().then(showPermission, showPermission);
  });
  showPermission();

  sound.checked = stored((storage) => storage.getItem(SOUND_KEY)) !== "off";
  sound.addEventListener("change", () => {
    stored((storage) => storage.setItem(SOUND_KEY, sound.checked ? "on" : "off"));
  });

  // A browser plays sound only after the member has used the page: the audio is made ready at their first press.
  function readyAudio() {
    const Context = window.AudioContext || window.webkitAudioContext;
    if (!audio && Context) audio = new Context();
    if (audio && audio.state === "suspended") audio.resume();
  }
  document.addEventListener("pointerdown", readyAudio, { once: true });
  document.addEventListener("keydown", readyAudio, { once: true });

  function beep() {
    if (!sound.checked) return;
    readyAudio();
    if (!audio) return;
    const start = audio.currentTime;
    const tone = audio.createOscillator();
    const volume = audio.createGain();
    tone.frequency.value = 880;
    volume.gain.setValueAtTime(0.0001, start);
    volume.gain.exponentialRampToValueAtTime(0.2, start + 0.02);
    volume.gain.exponentialRampToValueAtTime(0.0001, start + 0.25);
    tone.connect(volume).connect(audio.destination);
    tone.start(start);
    tone.stop(start + 0.3);
  }

  function openPhone() {
    const pane = byId("chat-pane");
    return pane && pane.dataset.phone ? pane.dataset.phone : null;
  }

  function showCount() {
    const title = document.title.replace(COUNTED, "");
    const counted = waiting.size ? "(" + waiting.size + ") " + title : title;
    if (document.title !== counted) document.title = counted;
  }

  function openChat(phone) {
    window.focus();
    const link = byId("link-" + phone);
    if (link) link.click();
    else window.location.assign("/app/chats/" + encodeURIComponent(phone));
  }

  function contactName(phone) {
    const row = byId("row-" + phone);
    return row && row.querySelector(".name") ? row.querySelector(".name").textContent : "+" + phone;
  }

  // Something about a chat for this member (handed to them, a note mentioning them: mentions.js): counted in the
  // title until they open the chat, a beep, and a notification that opens the chat.
  function alert(phone, title, body, tag) {
    if (!(openPhone() === phone && document.hasFocus())) waiting.add(phone);
    showCount();
    beep();
    if (!("Notification" in window) || Notification.permission !== "granted") return;
    const shown = new Notification(title, { body: body, tag: tag });
    shown.addEventListener("click", () => {
      openChat(phone);
      shown.close();
    });
  }
  window.InboxAlerts = { alert: alert, contactName: contactName, openChat: openChat };

  function tell(data) {
    const title = data.event === "transferred" ? "Chat transferred to you" : "Chat handed to you";
    const by = data.by_name ? data.by_name + ": " : "";
    alert(data.phone, title, by + contactName(data.phone) + (data.reason ? " — " + data.reason : ""),
      "inbox-assigned-" + data.phone);
  }

  onLiveEvent("conversation_assigned", (data) => {
    if (data.to === me && data.by !== me && data.phone) tell(data);
  });

  // Opening a chat counts it as seen; htmx's swaps set the title anew, which keeps its count.
  afterEachSwap(() => {
    const phone = openPhone();
    if (phone) waiting.delete(phone);
    showCount();
  });
})();
