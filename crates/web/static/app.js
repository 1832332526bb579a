// Progressive enhancement only: every page works without this file.
// - The custom-cycle fields show only when "Custom…" is chosen.
// - Pages marked data-live refresh their content when something changes anywhere (an agent,
//   another person), from the server-sent events of /events.
"use strict";
document.documentElement.classList.add("js");

document.addEventListener("DOMContentLoaded", () => {
  for (const select of document.querySelectorAll("select[data-custom-cycle]")) {
    const fields = select.form.querySelector(".custom-cycle");
    const sync = () => fields.classList.toggle("shown", select.value === "custom");
    select.addEventListener("change", sync);
    sync();
  }

  const main = document.querySelector("main[data-live]");
  if (!main || !window.EventSource) return;
  const announcer = document.createElement("div");
  announcer.className = "visually-hidden";
  announcer.setAttribute("aria-live", "polite");
  document.body.append(announcer);
  let timer;
  const refresh = async () => {
    // Never swap out a form someone is filling in.
    const focused = document.activeElement;
    if (focused && main.contains(focused) && focused.matches("input, select, textarea")) return;
    const response = await fetch(location.href, { credentials: "same-origin" });
    if (!response.ok || response.redirected) return;
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const fresh = page.querySelector("main");
    if (!fresh) return;
    main.innerHTML = fresh.innerHTML;
    announcer.textContent = "Updated just now.";
  };
  // `since` lets the server tell about a change made while this page was on its way.
  const source = new EventSource(`/events?since=${encodeURIComponent(main.dataset.liveSince || "0")}`);
  source.addEventListener("ready", () => { main.dataset.liveState = "ready"; });
  source.addEventListener("change", () => {
    // A burst of changes (a batch) refreshes once.
    clearTimeout(timer);
    timer = setTimeout(refresh, 150);
  });
});
