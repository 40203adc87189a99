// Availability (docs/team.md#availability): the settings menu's switch sent without leaving the page, and the
// roster's and the teams' availability kept current. Without this script the switch is a plain form that posts and
// comes back, and the pages show availability as it was when they were rendered.
(function availability() {
  "use strict";
  // The settings menu and a page of its own may both load this script: it runs once.
  if (document.documentElement.dataset.availabilityScript === "on") return;
  document.documentElement.dataset.availabilityScript = "on";
  const POLL_MILLISECONDS = 15000;

  function csrf() {
    const field = document.querySelector("input[name=csrf]");
    return field ? field.value : "";
  }

  function start() {
    const form = document.getElementById("availability-form");
    const said = document.getElementById("availability-said");
    if (form && said) {
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        const chosen = form.querySelector("input[name=status]:checked");
        if (!chosen) return;
        fetch(form.action, {
          method: "POST",
          credentials: "same-origin",
          headers: { "X-Requested-With": "fetch", "X-CSRF-Token": csrf() },
          body: new URLSearchParams({ status: chosen.value }),
        }).then((answer) => answer.text().then((text) => {
          said.textContent = answer.status === 401 ? "Your session has ended; sign in again." : text;
          if (answer.ok) {
            said.dataset.status = chosen.value;
            refresh();
          }
        }), () => {
          said.textContent = "No connection to the service; your availability was not changed.";
        });
      });
    }
    if (document.querySelector("[data-availability-of]")) {
      window.setInterval(() => {
        if (!document.hidden) refresh();
      }, POLL_MILLISECONDS);
    }
  }

  // Everyone's availability written into the page's rows that show it.
  function refresh() {
    const shown = document.querySelectorAll("[data-availability-of]");
    if (!shown.length) return;
    fetch("/app/availability/team", { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } })
      .then((answer) => (answer.ok ? answer.json() : null))
      .then((everyone) => {
        if (!everyone) return;
        shown.forEach((element) => {
          const one = everyone[element.dataset.availabilityOf];
          if (!one) return;
          // The roster says why a member is offline; the teams say only what each is.
          const text = element.dataset.detail === "full" ? one.title : one.label;
          if (element.textContent !== text) element.textContent = text;
          element.dataset.status = one.status;
        });
      }, () => {});
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
