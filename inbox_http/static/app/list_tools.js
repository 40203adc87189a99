// The workspace list's tools (inbox_http/web/templates/workspace_list_macros.html): ticking chats for a bulk
// action. Without this script the list works as forms: a "Tick all shown" link renders every box ticked, and the
// bulk form posts and redirects. With it:
// - "Tick all shown" is a checkbox that ticks (or unticks) every chat of the list;
// - the bulk box says how many chats are ticked, and opens at the first one;
// - ticks survive the list's live updates (a morph would otherwise set each box as the server rendered it).
// No inline handler, no eval: the pages' Content-Security-Policy allows neither.
"use strict";

(function listTools() {
  if (!document.getElementById("workspace")) return;

  // A live update morphs the list's body (idiomorph): a row's box keeps what the member ticked.
  if (window.Idiomorph) {
    const callbacks = Idiomorph.defaults.callbacks;
    const before = callbacks.beforeAttributeUpdated;
    callbacks.beforeAttributeUpdated = function (name, node, change) {
      if (name === "checked" && node instanceof HTMLInputElement && node.classList.contains("bulk-pick")) return false;
      return before ? before.call(this, name, node, change) : true;
    };
  }

  function picks() {
    return Array.from(document.querySelectorAll("#list-body input.bulk-pick"));
  }

  function show() {
    const all = picks();
    const ticked = all.filter((box) => box.checked).length;
    const count = document.getElementById("bulk-count");
    if (count) count.textContent = ticked ? "(" + ticked + " ticked)" : "";
    const selectAll = document.getElementById("select-all");
    if (selectAll) {
      selectAll.checked = all.length > 0 && ticked === all.length;
      selectAll.indeterminate = ticked > 0 && ticked < all.length;
    }
  }

  // The script's own "Tick all shown" replaces the link that renders the page with every box ticked.
  function ready() {
    const box = document.getElementById("select-all-box");
    const link = document.getElementById("select-all-link");
    if (box && box.hidden) box.hidden = false;
    if (link && !link.hidden) link.hidden = true;
    show();
  }

  document.addEventListener("change", (event) => {
    const target = event.target;
    if (!(target instanceof HTMLInputElement)) return;
    if (target.id === "select-all") {
      picks().forEach((box) => { box.checked = target.checked; });
    } else if (!target.classList.contains("bulk-pick")) {
      return;
    }
    const bulk = document.getElementById("bulk-box");
    if (bulk && target.checked && !bulk.open) bulk.open = true;
    show();
  });

  ["htmx:afterSettle", "htmx:oobAfterSwap", "htmx:historyRestore"].forEach((name) => {
    document.addEventListener(name, ready);
  });
  ready();
})();
