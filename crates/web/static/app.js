// Progressive enhancement only: every page works without this file.
// - The custom-cycle fields show only when "Custom…" is chosen.
// - "Test connection" calls /mcp with a token just created.
// - Pages marked data-live refresh their content when something changes anywhere (an agent,
//   another person), from the server-sent events of /events.
// - "Ask Exhale": Ctrl/Cmd+K or the Ask link opens a panel; a question (there, or in the box
//   on Overview) streams its answer from /assistant/stream, and its cards get Confirm, Discard
//   and Undo. The model's words are set as text, never as markup.
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


  // "Ask Exhale": the panel, its streamed answers and its cards.
  const panel = document.getElementById("ask-panel");
  if (panel && panel.showModal) {
    const log = panel.querySelector("[data-ask-log]");
    const panelForm = panel.querySelector("form[data-ask]");
    const csrf = panelForm.elements.csrf.value;
    const open = () => {
      if (!panel.open) panel.showModal();
      panelForm.elements.message.focus();
    };
    document.addEventListener("keydown", (event) => {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "k") {
        event.preventDefault();
        open();
      }
    });
    for (const link of document.querySelectorAll("[data-ask-open]")) {
      link.addEventListener("click", (event) => {
        event.preventDefault();
        open();
      });
    }
    panel.querySelector("[data-ask-close]").addEventListener("click", () => panel.close());

    const element = (tag, className, text) => {
      const node = document.createElement(tag);
      if (className) node.className = className;
      if (text !== undefined) node.textContent = text;
      return node;
    };
    const drawCard = (card) => {
      const box = element("article", `card proposal${card.destructive ? " destructive" : ""}`);
      box.dataset.proposal = card.id;
      box.dataset.status = card.status;
      const title = element("h3");
      if (card.destructive) {
        title.append(element("span", "badge danger-badge", "Deletes or ends something"), " ");
      }
      title.append(card.title);
      box.append(title);
      const lines = element("ul");
      for (const line of card.lines) lines.append(element("li", "", line));
      box.append(lines);
      if (card.said) box.append(element("p", "muted said-beside", `The assistant said: ${card.said}`));
      const actions = element("div", "actions");
      const act = async (action) => {
        actions.querySelectorAll("button").forEach((b) => { b.disabled = true; });
        const response = await fetch(`/assistant/proposals/${encodeURIComponent(card.id)}`, {
          method: "POST",
          headers: { accept: "application/json" },
          body: new URLSearchParams({ csrf, action }),
        });
        const body = await response.json().catch(() => ({}));
        if (body.card) {
          box.replaceWith(drawCard(body.card));
        } else {
          actions.append(element("p", "error", body.message || `HTTP ${response.status}`));
        }
      };
      const button = (label, action, className) => {
        const b = element("button", className, label);
        b.type = "button";
        b.dataset.action = action;
        b.addEventListener("click", () => act(action));
        actions.append(b);
      };
      if (card.status === "pending") {
        button("Confirm", "confirm", card.destructive ? "danger" : "");
        button("Discard", "discard", "secondary");
      } else if (card.status === "applied") {
        actions.append(element("span", "status", "Applied"));
        button("Undo", "undo", "secondary");
      } else {
        actions.append(element("span", "status", card.status));
      }
      box.append(actions);
      return box;
    };

    const ask = async (message) => {
      open();
      log.append(element("p", "said question", message));
      const answer = element("p", "said answer", "…");
      answer.dataset.streaming = "";
      log.append(answer);
      let text = "";
      const response = await fetch("/assistant/stream", {
        method: "POST",
        headers: { accept: "application/x-ndjson" },
        body: new URLSearchParams({ csrf, message }),
      });
      if (!response.ok || !response.body) {
        answer.textContent = `The assistant could not answer (HTTP ${response.status}).`;
        return;
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffered = "";
      const handle = (event) => {
        if (event.event === "delta") {
          text += event.text;
          answer.textContent = text;
        } else if (event.event === "restart") {
          text = "";
          answer.textContent = "…";
        } else if (event.event === "answer") {
          answer.textContent = event.answer.text || (event.answer.cards.length ? "" : "…");
          delete answer.dataset.streaming;
          if (event.answer.notice) log.append(element("p", "warning", event.answer.notice));
          // Screens come drawn by the server from Exhale's own records, escaped there.
          for (const html of event.answer.screens) {
            const screen = new DOMParser().parseFromString(html, "text/html").body.firstElementChild;
            if (screen) log.append(screen);
          }
          for (const card of event.answer.cards) log.append(drawCard(card));
        } else if (event.event === "error") {
          delete answer.dataset.streaming;
          answer.replaceWith(element("p", "error", event.message));
        }
      };
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered += value;
        let newline;
        while ((newline = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          if (line.trim()) handle(JSON.parse(line));
        }
      }
    };
    for (const form of document.querySelectorAll("form[data-ask]")) {
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        const field = form.elements.message;
        const message = field.value.trim();
        if (!message) return;
        field.value = "";
        ask(message);
      });
    }
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
