// Progressive enhancement only: every page works without this file.
// - The custom-cycle fields show only when "Custom…" is chosen.
// - "Test connection" calls /mcp with a token just created.
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

  // A Copy button on every configuration.
  for (const pre of document.querySelectorAll(".configs pre")) {
    if (!navigator.clipboard) break;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "secondary copy";
    button.textContent = "Copy";
    button.addEventListener("click", async () => {
      await navigator.clipboard.writeText(pre.innerText);
      button.textContent = "Copied";
    });
    pre.before(button);
  }

  // "Test connection": a real MCP call to /mcp with the new token, and what came back.
  for (const button of document.querySelectorAll("[data-test-connection]")) {
    button.hidden = false;
    button.addEventListener("click", async () => {
      const output = document.getElementById(button.dataset.output);
      output.dataset.state = "";
      output.textContent = "Calling /mcp…";
      const meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { name: "Exhale web: test connection", version: "1" },
      };
      try {
        const response = await fetch("/mcp", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/list",
            authorization: `Bearer ${button.dataset.token}`,
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: meta } }),
        });
        const body = await response.json().catch(() => ({}));
        if (!response.ok || body.error) throw new Error(body.error?.message || `HTTP ${response.status}`);
        const names = body.result.tools.map((tool) => tool.name);
        output.textContent = `Connected. /mcp answered with the ${names.length} tools this token may use, such as ${names.slice(0, 4).join(", ")}.`;
        output.dataset.state = "ok";
      } catch (error) {
        output.textContent = `The test failed: ${error.message}`;
        output.dataset.state = "failed";
      }
    });
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
