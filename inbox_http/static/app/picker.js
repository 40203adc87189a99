// A list to choose from while typing in a text box: the canned responses "/" opens in the reply box (app.js) and
// the members "@" opens in the note box (mentions.js). The box keeps the focus and names the active option
// (aria-controls, aria-autocomplete, aria-activedescendant: a screen reader announces it); ↑ ↓ choose, Enter
// inserts, Esc closes and leaves what was typed, Tab closes and moves on as it would. It takes no key held with Ctrl,
// Alt or ⌘, none while an input method composes, and none at all while the list is closed. A pointer chooses an
// option without taking the focus from the box. Its list is an empty <ul role="listbox" hidden> of the page beside
// the box, and a polite live region says what it shows; both come back empty and hidden when the part of the page
// holding them is swapped in, which the picker notices.
"use strict";

window.InboxPicker = function (options) {
  // options: box, list, said (element ids); query(box): what follows the trigger up to the caret, or null when the
  // box is not being picked in; load(): a promise of every item; matching(items, words); option(item): the
  // option's id and its parts [[class, text], …]; insert(box, item); name(item): how an inserted item is said;
  // nouns: [one, many]; none(words, items): what to say when nothing matches; limit: most options shown.
  let shown = [];
  let active = -1;

  function byId(id) {
    return document.getElementById(id);
  }

  function say(sentence) {
    const place = byId(options.said);
    if (place) place.textContent = sentence;
  }

  function close() {
    const list = byId(options.list);
    const box = byId(options.box);
    if (list) {
      list.hidden = true;
      list.replaceChildren();
    }
    if (box) {
      box.removeAttribute("aria-activedescendant");
      box.removeAttribute("aria-controls");
      box.removeAttribute("aria-autocomplete");
    }
    shown = [];
    active = -1;
  }

  function highlight(index) {
    const list = byId(options.list);
    const box = byId(options.box);
    if (!list || !box || !shown.length) return;
    active = (index + shown.length) % shown.length;
    list.querySelectorAll("[role=option]").forEach((option, at) => {
      option.setAttribute("aria-selected", at === active ? "true" : "false");
      if (at === active) {
        box.setAttribute("aria-activedescendant", option.id);
        option.scrollIntoView({ block: "nearest" });
      }
    });
  }

  function open(box, words) {
    options.load().then((all) => {
      if (options.query(box) !== words) return; // typed on meanwhile: a later input opens the list
      const list = byId(options.list);
      if (!list) return;
      shown = options.matching(all, words).slice(0, options.limit || 20);
      if (!shown.length) {
        close();
        say(options.none(words, all));
        return;
      }
      list.replaceChildren(...shown.map((item) => {
        const made = options.option(item);
        const option = document.createElement("li");
        option.id = made.id;
        option.setAttribute("role", "option");
        made.parts.forEach(([className, text]) => {
          const part = document.createElement("span");
          if (className) part.className = className;
          part.textContent = text;
          option.appendChild(part);
        });
        return option;
      }));
      list.hidden = false;
      box.setAttribute("aria-controls", options.list);
      box.setAttribute("aria-autocomplete", "list");
      highlight(0);
      say(shown.length + " " + options.nouns[shown.length === 1 ? 0 : 1] +
        ": up and down arrows to choose, Enter to insert, Escape to close.");
    });
  }

  function choose(box, item) {
    close();
    options.insert(box, item);
    box.focus();
    box.dispatchEvent(new Event("input", { bubbles: true }));
    say("Inserted " + options.name(item) + ".");
  }

  document.addEventListener("input", (event) => {
    const box = event.target;
    if (!(box instanceof HTMLTextAreaElement) || box.id !== options.box) return;
    const words = options.query(box);
    if (words === null) close();
    else open(box, words);
  });

  document.addEventListener("keydown", (event) => {
    const box = event.target;
    if (!(box instanceof HTMLTextAreaElement) || box.id !== options.box || !shown.length) return;
    if (event.isComposing || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      highlight(active + (event.key === "ArrowDown" ? 1 : -1));
    } else if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      choose(box, shown[active]);
    } else if (event.key === "Escape") {
      event.preventDefault();
      close();
      say(options.nouns[1].charAt(0).toUpperCase() + options.nouns[1].slice(1) + " closed.");
    } else if (event.key === "Tab") {
      close();
    }
  });

  document.addEventListener("mousedown", (event) => {
    if (event.target instanceof Element && event.target.closest("#" + options.list)) event.preventDefault();
  });
  document.addEventListener("click", (event) => {
    const option = event.target instanceof Element && event.target.closest("#" + options.list + " [role=option]");
    const box = byId(options.box);
    if (!option || !box) return;
    const at = Array.from(option.parentNode.children).indexOf(option);
    if (shown[at]) choose(box, shown[at]);
  });

  // A part swapped in brings its list closed and empty: forget what the old one showed.
  ["htmx:afterSettle", "htmx:oobAfterSwap", "htmx:historyRestore"].forEach((name) => {
    document.addEventListener(name, () => {
      const list = byId(options.list);
      if (!list || list.hidden) {
        shown = [];
        active = -1;
      }
    });
  });

  return { close: close, say: say };
};
