// The reply form's attachment (inbox_http/web/attachments.py). Without this script the "Attach" field is the
// browser's own and the form posts the file with the reply. With it:
// - the chosen file shows as a chip, its name and size, with a Remove button; the field itself stays the control
//   the keyboard reaches (its label looks like a button);
// - a file WhatsApp would not take (its type, or over the size the composer states) is refused at once with the
//   service's own sentence beside the box (rendered on the field: data-too-large, data-unsupported), the text kept;
// - the file goes with the next Send and is cleared once the service says the reply went, or when another chat is
//   opened (a swapped composer keeps a file field's file: it must never follow the member to another customer).
// Drafts keep only the text: a browser cannot put a file back into a file field.
"use strict";

(function () {
  const field = () => document.getElementById("reply-file");
  const attach = () => document.getElementById("reply-attach");
  let chosenFor = null; // the chat the file was chosen in

  function openPhone() {
    const pane = document.getElementById("chat-pane");
    return pane && pane.dataset.phone ? pane.dataset.phone : null;
  }

  function sizeText(n) {
    if (n < 1000) return n + " bytes";
    if (n < 1000000) return (n / 1000).toFixed(1) + " KB";
    return (n / 1000000).toFixed(1) + " MB";
  }

  function accepted(file, accept) {
    const name = file.name.toLowerCase();
    const type = (file.type || "").toLowerCase();
    return accept.split(",").some((entry) => (entry.startsWith(".") ? name.endsWith(entry) : type === entry));
  }

  function say(sentence) {
    const place = document.getElementById("reply-error");
    const input = field();
    if (!place) return;
    place.textContent = sentence || "";
    place.hidden = !sentence;
    if (input) {
      if (sentence) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    }
  }

  // The chip says what the field holds, after every change and every swap of the composer.
  function show() {
    const input = field();
    const chip = document.getElementById("reply-file-chip");
    const name = document.getElementById("reply-file-name");
    const box = attach();
    if (!input || !chip || !name || !box) return;
    box.classList.add("enhanced");
    const file = input.files && input.files[0];
    chip.hidden = !file;
    name.textContent = file ? file.name + " (" + sizeText(file.size) + ")" : "";
  }

  function clear() {
    const input = field();
    if (input) input.value = "";
    chosenFor = null;
    show();
  }

  document.addEventListener("change", (event) => {
    const input = event.target;
    if (!(input instanceof HTMLInputElement) || input.id !== "reply-file") return;
    const box = attach();
    const file = input.files && input.files[0];
    if (!file || !box) {
      clear();
      return;
    }
    const rules = box.dataset;
    let refusal = null;
    if (!accepted(file, input.accept)) {
      refusal = rules.unsupported + "; " + file.name + " is none of these.";
    } else if (file.size > (file.type.startsWith("image/") ? Number(rules.maxImage) : Number(rules.maxBytes))) {
      refusal = rules.tooLarge;
    }
    if (refusal) {
      input.value = "";
      say(refusal);
    } else {
      chosenFor = openPhone();
      say("");
    }
    show();
  });

  document.addEventListener("click", (event) => {
    if (!(event.target instanceof Element) || !event.target.closest("#reply-file-remove")) return;
    event.preventDefault();
    clear();
    say("");
    const input = field();
    if (input) input.focus();
  });

  // The service says the reply went (HX-Trigger, before the fresh composer is swapped in): its file went with it.
  document.addEventListener("inbox:sent", (event) => {
    if (event.detail && event.detail.draft === "reply") clear();
  });

  function afterSwap() {
    const input = field();
    if (input && input.files && input.files.length && chosenFor !== openPhone()) input.value = "";
    show();
  }
  ["htmx:afterSettle", "htmx:oobAfterSwap", "htmx:historyRestore"].forEach((name) => {
    document.addEventListener(name, afterSwap);
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", afterSwap);
  else afterSwap();
})();
