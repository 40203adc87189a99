// Mentions of members in internal notes (docs/inbox-app.md, "Mentions"). Three parts:
// - the picker: "@" typed in the note box, at its start or after a space or a bracket, opens a list of the
//   workspace's members (read once from /app/mentions/members, again after 5 minutes), narrowed by the name typed
//   after it; Enter puts in what the service finds that member by (`@Name`, or `@[Name](member:ID)` where the name
//   alone would not name them) and a space (the keys are picker.js's);
// - the alert: a note mentioning this member, heard on the live stream (`chat_changed` with `mentioned: true`),
//   counts in the tab's title, beeps and shows a notification as a chat handed to them does (app.js), and says so
//   on the page; if the chat is open in front of them, it is seen at once;
// - the count: the header's Mentions link carries how many they have not seen, read again after a mention arrives
//   and after a chat is opened (which marks its mentions seen).
"use strict";

(function mentions() {
  function byId(id) {
    return document.getElementById(id);
  }

  const menu = byId("settings-menu");
  const me = menu ? Number(menu.dataset.member) : 0;
  const asked = { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } };

  // -- the picker ---------------------------------------------------------------------------------------------

  const FRESH_FOR_MS = 5 * 60 * 1000;
  // "@" at the start or after a character no name or address goes on from, then up to three words of a name.
  const TYPED = /(?:^|[^\p{L}\p{N}_@])@([^\s@[\]()]{0,40}(?: [^\s@[\]()]{1,40}){0,2})$/u;
  let members = null;
  let fetchedAt = 0;
  let fetching = null;

  function load() {
    const box = byId("note-text");
    if (!box || !box.dataset.mentions) return Promise.resolve([]);
    if (members && Date.now() - fetchedAt < FRESH_FOR_MS) return Promise.resolve(members);
    if (!fetching) {
      fetching = fetch(box.dataset.mentions, asked)
        .then((answer) => (answer.ok ? answer.json() : []))
        .then((found) => {
          members = found.filter((member) => member.user_id !== me);
          fetchedAt = Date.now();
          return members;
        }, () => members || [])
        .finally(() => { fetching = null; });
    }
    return fetching;
  }

  function query(box) {
    if (box.selectionStart !== box.selectionEnd) return null;
    const found = TYPED.exec(box.value.slice(0, box.selectionStart));
    return found ? found[1].toLowerCase() : null;
  }

  // Names beginning with what was typed first, then names with a word beginning with it, then any containing it.
  function matching(all, words) {
    const name = (member) => member.name.toLowerCase();
    const starts = all.filter((member) => name(member).startsWith(words));
    const word = all.filter((member) => !starts.includes(member) && name(member).split(/\s+/)
      .some((part) => part.startsWith(words)));
    const contains = all.filter((member) => !starts.includes(member) && !word.includes(member) &&
      name(member).includes(words));
    return starts.concat(word, contains);
  }

  if (window.InboxPicker && byId("workspace")) {
    window.InboxPicker({
      box: "note-text", list: "mention-list", said: "mention-said", limit: 8,
      nouns: ["member", "members"],
      load: load, query: query, matching: matching,
      option: (member) => ({ id: "mention-option-" + member.user_id, parts: [["", member.name]] }),
      // Only a bare "@" or a single word is worth a sentence: a space after a name is writing on.
      none: (words, all) => (all.length && words && !words.includes(" ") ? "No member matches @" + words + "." : ""),
      name: (member) => member.name,
      insert: (box, member) => {
        const caret = box.selectionStart;
        const typed = TYPED.exec(box.value.slice(0, caret));
        const start = caret - (typed ? typed[1].length + 1 : 0);
        box.setRangeText(member.insert + " ", start, caret, "end");
      },
    });
  }

  // -- the count on the header's Mentions link ----------------------------------------------------------------

  const link = document.querySelector(".top .sections a[href='/app/mentions']");
  let counting = false;
  let again = false;

  function showCount(unseen) {
    let badge = link.querySelector(".badge");
    if (!unseen) {
      if (badge) badge.remove();
      return;
    }
    if (!badge) {
      badge = document.createElement("span");
      badge.className = "badge mentions-badge";
      link.append(" ", badge);
    }
    const hidden = (text) => {
      const part = document.createElement("span");
      part.className = "visually-hidden";
      part.textContent = text;
      return part;
    };
    badge.replaceChildren(hidden("(not seen: "), String(unseen > 99 ? "99+" : unseen), hidden(")"));
  }

  // One read at a time, and one more after it if asked meanwhile.
  function readCount() {
    if (!link) return;
    if (counting) {
      again = true;
      return;
    }
    counting = true;
    fetch("/app/mentions/count", asked)
      .then((answer) => (answer.ok ? answer.json() : null))
      .then((counted) => { if (counted) showCount(counted.unseen); }, () => null)
      .finally(() => {
        counting = false;
        if (again) {
          again = false;
          readCount();
        }
      });
  }

  // Once the page is idle: the badge can wait, the page's first load should not (a first fetch takes a fresh
  // page several milliseconds).
  (window.requestIdleCallback || window.setTimeout)(() => readCount());
  // A chat opened (its mentions seen) or the Back button: read the count again.
  document.addEventListener("htmx:afterSettle", (event) => {
    const target = event.detail && event.detail.target;
    if (target && target.id === "chat-pane") readCount();
  });
  document.addEventListener("htmx:historyRestore", readCount);

  // -- the alert ----------------------------------------------------------------------------------------------

  if (!byId("workspace")) return;
  const toast = document.createElement("div");
  toast.id = "mention-toast";
  toast.className = "mention-toast";
  toast.setAttribute("role", "status");
  (byId("main") || document.body).appendChild(toast);

  function openPhone() {
    const pane = byId("chat-pane");
    return pane && pane.dataset.phone ? pane.dataset.phone : null;
  }

  function markSeen(phone) {
    const csrf = document.querySelector("input[name=csrf]");
    fetch("/app/mentions/seen", {
      method: "POST", credentials: "same-origin",
      headers: { "X-Requested-With": "fetch", "X-CSRF-Token": csrf ? csrf.value : "" },
      body: new URLSearchParams({ phone: phone }),
    }).then(readCount, () => null);
  }

  function say(data, chat) {
    const text = document.createElement("p");
    text.textContent = (data.by_name || "A member") + " mentioned you in a note in " + chat + "'s chat.";
    const open = document.createElement("a");
    open.href = "/app/chats/" + encodeURIComponent(data.phone);
    open.textContent = "Open the chat";
    open.addEventListener("click", (event) => {
      event.preventDefault();
      toast.replaceChildren();
      window.InboxAlerts.openChat(data.phone);
    });
    const dismiss = document.createElement("button");
    dismiss.type = "button";
    dismiss.className = "secondary";
    dismiss.textContent = "Dismiss";
    dismiss.addEventListener("click", () => toast.replaceChildren());
    toast.replaceChildren(text, open, dismiss);
  }

  onLiveEvent("chat_changed", (data) => {
    if (!data.mentioned || !data.phone || data.by === me) return;
    const alerts = window.InboxAlerts;
    const chat = alerts ? alerts.contactName(data.phone) : "+" + data.phone;
    say(data, chat);
    if (alerts) alerts.alert(data.phone, "You were mentioned", (data.by_name || "A member") + " in " + chat,
      "inbox-mention-" + data.note);
    if (openPhone() === data.phone && document.hasFocus()) markSeen(data.phone);
    else readCount();
  });
})();
