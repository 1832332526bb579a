"use strict";
// The host side of every Exhale view, over postMessage (JSON-RPC, MCP Apps 2026-01-26): the
// handshake, the tool result the host hands over, and tools/call through the host. A view
// defines `render(result)`, which draws a tool result into #view; it reads and acts only
// through `call`, and sets every name as text, never as markup.
const view = document.getElementById("view");
const pending = new Map();
let nextId = 1;
// The view's language (the person's, chosen by Exhale) and its sentences, which Exhale wrote
// into the document; `{name}` is where an argument goes.
const language = document.documentElement.lang || "en";
const words = JSON.parse(document.getElementById("words").textContent || "{}");
const said = (english, args = {}) =>
  (words[english] || english).replace(/\{(\w+)\}/g, (all, name) => (name in args ? String(args[name]) : all));
// An op's amount ({amount, currency, display}) and day (YYYY-MM-DD) as the view's language
// writes them; English keeps Exhale's own display.
const money = (amount) => {
  if (!amount) return "";
  if (language === "en") return amount.display;
  try {
    return new Intl.NumberFormat(language, { style: "currency", currency: amount.currency }).format(Number(amount.amount));
  } catch {
    return amount.display;
  }
};
const day = (iso) => {
  if (!iso) return "";
  try {
    return new Intl.DateTimeFormat(language, { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" }).format(new Date(`${iso}T00:00:00Z`));
  } catch {
    return iso;
  }
};
const post = (message) => window.parent.postMessage(message, "*");
const request = (method, params) => new Promise((resolve, reject) => {
  const id = nextId++;
  pending.set(id, { resolve, reject });
  post({ jsonrpc: "2.0", id, method, params });
});
const element = (tag, text, className) => {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
};
// The view's height as its content needs it (not the frame's), so the host can shrink it too.
let reported = 0;
const resize = () => {
  const height = Math.ceil(view.getBoundingClientRect().height);
  if (height === reported) return;
  reported = height;
  post({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height } });
};
if (window.ResizeObserver) new ResizeObserver(resize).observe(view);
const textOf = (result) => (result.content || []).filter((block) => block.type === "text").map((block) => block.text).join("\n");
// A result's data: its structured content, else its text block, which holds the same JSON
// (for hosts that hand a view only the text).
const dataOf = (result) => {
  if (result.structuredContent) return result.structuredContent;
  try {
    return JSON.parse(textOf(result));
  } catch {
    return undefined;
  }
};
// The arguments the model called the tool with: a view's own controls change one of them and
// keep the rest.
let toolArguments = {};
const time = (instant) => {
  try {
    return new Intl.DateTimeFormat(language, { hour: "numeric", minute: "2-digit" }).format(new Date(instant));
  } catch {
    return instant;
  }
};
// A table of `rows`, each a list of cells (text, or [text, "amount"] for a right-aligned one).
const table = (caption, headings, rows) => {
  const node = element("table");
  node.append(element("caption", caption));
  const head = element("tr");
  for (const heading of headings) {
    const [text, className] = Array.isArray(heading) ? heading : [heading];
    const cell = element("th", text, className);
    cell.scope = "col";
    head.append(cell);
  }
  node.append(head);
  for (const row of rows) {
    const line = element("tr");
    for (const cell of row) {
      const [text, className] = Array.isArray(cell) ? cell : [cell];
      line.append(element("td", text === undefined || text === null ? "" : String(text), className));
    }
    node.append(line);
  }
  return node;
};
// Figures side by side: each a label over its value, such as ["A month", "€21.24"].
const figures = (pairs) => {
  const box = element("div", undefined, "totals");
  for (const [label, value] of pairs) {
    const figure = element("div", label, "muted");
    figure.append(element("strong", value));
    box.append(figure);
  }
  return box;
};
// A labelled choice that calls `pick(value)` when it changes.
const choice = (label, options, chosen, pick) => {
  const wrapper = element("label", label);
  const select = element("select");
  for (const [value, text] of options) {
    const option = element("option", text);
    option.value = value;
    option.selected = value === chosen;
    select.append(option);
  }
  select.addEventListener("change", () => pick(select.value));
  wrapper.append(select);
  return wrapper;
};
// Calls a tool through the host and draws its result; a refusal is said beside the view.
const call = async (name, args, controls = []) => {
  for (const control of controls) control.disabled = true;
  try {
    show(await request("tools/call", { name, arguments: args }));
  } catch (error) {
    const why = error && error.message ? error.message : said("the host refused the call");
    view.append(element("p", said("Not done: {why}.", { why }), "error"));
    for (const control of controls) control.disabled = false;
    resize();
  }
};
function show(result) {
  view.replaceChildren();
  if (result.isError && !render.takesRefusals) {
    view.dataset.status = "refused";
    view.append(element("h1", said("Not done")), element("p", textOf(result), "error"));
  } else {
    render(result);
  }
  resize();
}

window.addEventListener("message", (event) => {
  if (event.source !== window.parent) return;
  const message = event.data;
  if (!message || message.jsonrpc !== "2.0") return;
  if (message.id !== undefined && !message.method) {
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    if (message.error) waiting.reject(message.error);
    else waiting.resolve(message.result);
  } else if (message.id !== undefined) {
    // The host's requests: going away, or are you there. Nothing else is asked of a view.
    const known = message.method === "ui/resource-teardown" || message.method === "ping";
    post(known
      ? { jsonrpc: "2.0", id: message.id, result: {} }
      : { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } });
  } else if (message.method === "ui/notifications/tool-input") {
    toolArguments = (message.params && message.params.arguments) || {};
  } else if (message.method === "ui/notifications/tool-result") {
    show(message.params || {});
  } else if (message.method === "ui/notifications/host-context-changed") {
    followTheme(message.params);
  } else if (message.method === "ui/notifications/tool-cancelled") {
    view.replaceChildren(element("p", said("Cancelled."), "muted"));
    resize();
  }
});

// The host's theme, when it says one, wins over the system's: a view in a dark conversation is
// dark whatever the computer's setting.
function followTheme(context) {
  const theme = context && context.theme;
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
}

request("ui/initialize", {
  protocolVersion: "2026-01-26",
  appInfo: { name: `Exhale: ${document.title}`, version: "1" },
  appCapabilities: {},
}).then(
  (result) => {
    followTheme(result && result.hostContext);
    post({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
  },
  () => view.replaceChildren(element("p", said("This host did not open the view."), "error")),
);
