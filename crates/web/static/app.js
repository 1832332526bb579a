// Progressive enhancement only: every page works without this file.
// - The custom-cycle fields show only when "Custom…" is chosen.
// - "Test connection" calls /mcp with a token just created.
// - Pages marked data-live refresh their content when something changes anywhere (an agent,
//   another person), from the server-sent events of /events.
// - "Ask Exhale": Ctrl/Cmd+K or the Ask link opens a panel; a question (there, or in the box
//   on Overview) streams its answer from /assistant/stream, and its cards get Confirm, Discard
//   and Undo. The model's words are set as text, never as markup; cards and screens come
//   drawn by the server.
// - Where the browser offers it, the service worker (`/sw.js`) that shows a page of its own
//   when the server cannot be reached, so Exhale installed on a phone opens like an app.
// Its own sentences are the catalogue's, handed over by base.html (#script-words), so this
// file writes no words of its own.
"use strict";
document.documentElement.classList.add("js");

if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("/sw.js").catch(() => {});
}

document.addEventListener("DOMContentLoaded", () => {
  // This script's sentences, in the page's language: base.html writes them from the
  // catalogue, with `{name}` where an argument goes.
  const words = JSON.parse(document.getElementById("script-words")?.textContent || "{}");
  const said = (english, args = {}) =>
    (words[english] || english).replace(/\{(\w+)\}/g, (all, name) => (name in args ? String(args[name]) : all));

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
    button.textContent = said("Copy");
    button.addEventListener("click", async () => {
      await navigator.clipboard.writeText(pre.innerText);
      button.textContent = said("Copied");
    });
    pre.before(button);
  }

  // "Test connection": a real MCP call to /mcp with the new token, and what came back.
  for (const button of document.querySelectorAll("[data-test-connection]")) {
    button.hidden = false;
    button.addEventListener("click", async () => {
      const output = document.getElementById(button.dataset.output);
      output.dataset.state = "";
      output.textContent = said("Calling /mcp…");
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
        output.textContent = said("Connected: /mcp answered with the tools this token lists, {count} in all, such as {names}.", { count: names.length, names: names.slice(0, 4).join(", ") });
        output.dataset.state = "ok";
      } catch (error) {
        output.textContent = said("The test failed: {error}", { error: error.message });
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
    // A card comes drawn by the server (the conversation page's own drawing, in the reader's
    // language); its buttons post here without leaving the panel.
    const html = (markup) => new DOMParser().parseFromString(markup, "text/html").body.firstElementChild;
    log.addEventListener("submit", async (event) => {
      const form = event.target;
      const box = form.closest("[data-proposal]");
      if (!box) return;
      event.preventDefault();
      const action = event.submitter ? event.submitter.value : "";
      form.querySelectorAll("button").forEach((b) => { b.disabled = true; });
      // `form.action` would be its buttons, which are named "action".
      const response = await fetch(form.getAttribute("action"), {
        method: "POST",
        headers: { accept: "application/json" },
        body: new URLSearchParams({ csrf: form.elements.csrf.value, action }),
      });
      const body = await response.json().catch(() => ({}));
      const card = body.html && html(body.html);
      if (card) {
        box.replaceWith(card);
      } else {
        form.append(element("p", "error", body.message || said("The change could not be made (HTTP {status}).", { status: response.status })));
      }
    });

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
        answer.textContent = said("The assistant could not answer (HTTP {status}).", { status: response.status });
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
          // Screens and cards come drawn by the server from Exhale's own records, escaped there.
          for (const markup of [...event.answer.screens, ...event.answer.cards]) {
            const drawn = html(markup);
            if (drawn) log.append(drawn);
          }
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
    announcer.textContent = said("Updated just now.");
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
