// Progressive enhancement only: every page works without this file.
// - The custom-cycle fields show only when "Custom…" is chosen.
"use strict";
document.documentElement.classList.add("js");
document.addEventListener("DOMContentLoaded", () => {
  for (const select of document.querySelectorAll("select[data-custom-cycle]")) {
    const fields = select.form.querySelector(".custom-cycle");
    const sync = () => fields.classList.toggle("shown", select.value === "custom");
    select.addEventListener("change", sync);
    sync();
  }
});
