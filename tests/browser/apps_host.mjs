// A headless MCP Apps host in Chromium, driven by Playwright, against the real server the Rust
// test started (crates/exhale/tests/it/browser.rs). It does what ChatGPT or Claude do with
// Exhale's confirmation card: it speaks MCP to /mcp (the 2026-07-28 stateless wire, declaring
// the io.modelcontextprotocol/ui extension), makes the model's call (a delete, which waits for
// the person), reads the card's document, renders it in a sandboxed frame and plays the host
// side of the view's postMessage bridge, passing the view's tools/call on to /mcp.
//
// It checks: each read with a view (subscriptions, one subscription, upcoming charges,
// spending) renders the model's result, passes axe and its CSP, and reads again through the
// host when its filter changes; the model's text has no confirmation id; the card renders the
// change; Confirm applies it once; a second press of the same confirmation, a replay with
// another token and a press after the offer ended (EXHALE_STALE_RESULT, a card asked for
// before the Rust test moved the clock) apply nothing; Undo (confirmed on the card too) brings
// it back.
// Screenshots go to EXHALE_SCREENSHOTS (apps-*.png).
//
// With EXHALE_SPANISH (for a person who reads Spanish: the words to expect), it checks the
// list and the card are in Spanish while the model's text stays English, and confirms once.
//
// Environment: EXHALE_URL, EXHALE_TOKEN (a write token), EXHALE_OTHER_TOKEN (another write
// token of the same person), EXHALE_SUBSCRIPTION (the id to delete), EXHALE_STALE_RESULT,
// EXHALE_SPANISH, EXHALE_SCREENSHOTS, NODE_MODULES, CHROMIUM.

import { createRequire } from "node:module";
import assert from "node:assert/strict";
import path from "node:path";
import fs from "node:fs";

const require = createRequire(path.join(process.env.NODE_MODULES, "noop.js"));
const { chromium } = require("playwright-core");
const axeSource = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

const endpoint = `${process.env.EXHALE_URL}/mcp`;
const shots = process.env.EXHALE_SCREENSHOTS;
const capabilities = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } };
let nextId = 1;

// One MCP request on the 2026-07-28 wire, as the host's client sends it.
async function mcp(token, method, params) {
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${token}`,
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
  };
  const name = params.name || params.uri;
  if (name) headers["mcp-name"] = name;
  const _meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": capabilities,
    "io.modelcontextprotocol/clientInfo": { name: "headless MCP Apps host", version: "1" },
  };
  const response = await fetch(endpoint, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params: { ...params, _meta } }),
  });
  const body = await response.json();
  assert.ok(!body.error, `${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

const token = process.env.EXHALE_TOKEN;
const tools = (await mcp(token, "tools/list", {})).tools;
const tool = (name) => tools.find((t) => t.name === name);
const seenBy = (t) => (t._meta && t._meta.ui && t._meta.ui.visibility) || ["model", "app"];
// What this host hands its model: never a tool for views only.
const forTheModel = tools.filter((t) => seenBy(t).includes("model")).map((t) => t.name);
assert.ok(!forTheModel.includes("confirm_change"), "the model never sees confirm_change");
assert.deepEqual(seenBy(tool("confirm_change")), ["app"]);

// The model asks to delete; the result waits for the person.
const deleting = tool("delete_subscription");
const uri = deleting._meta.ui.resourceUri;
const args = { id: Number(process.env.EXHALE_SUBSCRIPTION) };
const result = await mcp(token, "tools/call", { name: "delete_subscription", arguments: args });
const modelReads = result.content.map((c) => c.text).join("\n");
assert.match(modelReads, /^confirmation_required: the person confirms or leaves this change on the card[^\n]*Deleted Netflix/);
assert.doesNotMatch(modelReads, /cf_/, "the model's text holds no confirmation id");

const cardDocument = await mcp(token, "resources/read", { uri });
assert.equal(cardDocument.contents[0].mimeType, "text/html;profile=mcp-app");

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});
try {
  const context = await browser.newContext({ viewport: { width: 720, height: 560 } });
  context.setDefaultTimeout(5000);
  await context.addInitScript(() => {
    window.cspViolations = [];
    document.addEventListener("securitypolicyviolation", (e) =>
      window.cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"}`));
  });
  const errors = [];
  // The view's calls, passed on to the server by the host, for tools the view may call.
  const calls = [];
  // Opens a page that hosts the view at `uri` with the result of the model's call.
  const host = async (uri, args, result, theme = "light") => {
    const page = await context.newPage();
    page.on("pageerror", (error) => { errors.push(String(error)); console.error(`page error: ${error}`); });
    const html = (await mcp(token, "resources/read", { uri })).contents[0].text;
    await page.exposeFunction("hostCallTool", async (name, toolArgs) => {
      const called = tool(name);
      if (!called || !seenBy(called).includes("app")) return { isError: true, content: [{ type: "text", text: `no tool ${name} for views` }] };
      calls.push({ name, arguments: toolArgs });
      return mcp(token, "tools/call", { name, arguments: toolArgs });
    });
    await page.setContent(`<!doctype html><html lang="en"><head><title>Host</title></head><body>
      <main><h1>A conversation</h1><iframe id="view" title="Exhale" sandbox="allow-scripts" style="width:100%;height:420px;border:0"></iframe></main></body></html>`);
    await page.evaluate(({ html, args, result, theme }) => {
      const frame = document.getElementById("view");
      const reply = (message) => frame.contentWindow.postMessage(message, "*");
      window.hostSays = reply;
      window.addEventListener("message", async (event) => {
        if (event.source !== frame.contentWindow) return;
        const message = event.data;
        if (message.method === "ui/initialize") {
          reply({ jsonrpc: "2.0", id: message.id, result: {
            protocolVersion: "2026-01-26",
            hostInfo: { name: "headless host", version: "1" },
            hostCapabilities: { serverTools: {} },
            hostContext: { theme, locale: "en-US", displayMode: "inline" },
          } });
        } else if (message.method === "ui/notifications/initialized") {
          reply({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: args } });
          reply({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: result });
        } else if (message.method === "ui/notifications/size-changed") {
          frame.style.height = `${Math.max(120, message.params.height)}px`;
        } else if (message.method === "tools/call") {
          const answer = await window.hostCallTool(message.params.name, message.params.arguments);
          reply({ jsonrpc: "2.0", id: message.id, result: answer });
        }
      });
      frame.srcdoc = html;
    }, { html, args, result, theme });
    const inside = page.frameLocator("#view");
    const check = async (name) => {
      const frame = page.frames().find((f) => f !== page.mainFrame());
      await page.screenshot({ path: path.join(shots, `apps-${name}.png`), fullPage: true });
      await frame.evaluate(axeSource);
      const { passed, violations } = await frame.evaluate(async () => {
        const found = await window.axe.run(document, { runOnly: ["wcag2a", "wcag2aa"] });
        return { passed: found.passes.length, violations: found.violations.map((v) => `${v.id}: ${v.help}`) };
      });
      assert.ok(passed > 5, `axe checked ${name} (${passed} rules passed)`);
      assert.deepEqual(violations, [], `${name} passes WCAG 2 A and AA`);
      assert.deepEqual(await frame.evaluate(() => window.cspViolations), [], `${name} keeps its CSP`);
    };
    return { page, view: inside.locator("#view"), at: async (status) => {
      try {
        await inside.locator(`#view[data-status=${status}]`).waitFor();
      } catch (error) {
        throw new Error(`${uri} never showed ${status}: it shows ${await inside.locator("#view").innerText()}`);
      }
    }, inside, check };
  };

  // In Spanish (EXHALE_SPANISH: the words the Rust test expects, from the catalogue): the
  // person's language, not the agent's, whatever the model reads.
  if (process.env.EXHALE_SPANISH) {
    const words = JSON.parse(process.env.EXHALE_SPANISH);
    const list = await host(tool("list_subscriptions")._meta.ui.resourceUri, {}, await mcp(token, "tools/call", { name: "list_subscriptions", arguments: {} }));
    await list.at("listed");
    assert.equal(await list.page.frames()[1].evaluate(() => document.documentElement.lang), "es");
    assert.match(await list.view.innerText(), new RegExp(`${words.subscriptions}[\\s\\S]*${words.active}[\\s\\S]*12,99`));
    await list.check("es-subscriptions");
    assert.doesNotMatch(modelReads, new RegExp(words.deleted), "the model reads English");
    const shown = await host(uri, args, result);
    await shown.at("pending");
    const text = await shown.view.innerText();
    assert.ok(text.includes(words.title) && text.includes(words.deleted), text);
    await shown.check("es-card");
    await shown.view.getByRole("button", { name: words.confirm }).click();
    await shown.at("applied");
    assert.deepEqual(errors, [], "no script error in the host or the views");
    console.log("MCP Apps host: the views and the card in Spanish");
    process.exit(0);
  }

  // The model's reads, each shown in its own view, with what the view does through the host.
  const read = async (name, readArgs) => {
    const viewed = tool(name);
    assert.ok(viewed._meta.ui.resourceUri.startsWith("ui://exhale/"), `${name} has a view`);
    const answer = await mcp(token, "tools/call", { name, arguments: readArgs });
    assert.ok(answer.content[0].text.startsWith("{"), `${name} keeps its text for hosts without views`);
    return host(viewed._meta.ui.resourceUri, readArgs, answer);
  };
  const list = await read("list_subscriptions", {});
  await list.at("listed");
  assert.match(await list.view.innerText(), /Netflix[\s\S]*Spotify/);
  assert.doesNotMatch(await list.view.innerText(), /gym/, "another member's private subscription stays out");
  await list.inside.locator(".totals strong").first().waitFor();
  await list.check("subscriptions");
  await list.inside.getByLabel("Show").selectOption("paused");
  await list.inside.getByText("Subscriptions: 0").waitFor();
  // A host that hands the view only the text block (Claude Desktop does for local servers):
  // the text is the same JSON, and the view reads it.
  const answer = await mcp(token, "tools/call", { name: "list_subscriptions", arguments: {} });
  // In a dark host too, whatever the system's setting, and readable there (axe's contrast).
  const textOnly = await host(tool("list_subscriptions")._meta.ui.resourceUri, {}, { content: answer.content }, "dark");
  await textOnly.at("listed");
  assert.match(await textOnly.view.innerText(), /Netflix[\s\S]*Spotify/);
  const background = () => textOnly.page.frames()[1].evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(await background(), "rgb(21, 24, 28)", "the host's dark theme");
  await textOnly.check("subscriptions-dark");
  await textOnly.page.evaluate(() => window.hostSays({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { theme: "light" } }));
  await textOnly.page.frames()[1].waitForFunction(() => getComputedStyle(document.body).backgroundColor === "rgb(255, 255, 255)");
  const one = await read("get_subscription", args);
  await one.at("shown");
  assert.match(await one.view.innerText(), /Netflix[\s\S]*Next charges[\s\S]*Price history[\s\S]*Recent charges/);
  await one.check("subscription");
  const upcoming = await read("list_upcoming_charges", {});
  await upcoming.at("listed");
  await upcoming.check("upcoming-charges");
  const before = await upcoming.inside.locator("caption").innerText();
  await upcoming.inside.getByLabel("Over").selectOption("365");
  await upcoming.inside.locator("caption", { hasNotText: before }).waitFor();
  const spending = await read("get_spending_summary", {});
  await spending.at("shown");
  assert.match(await spending.view.innerText(), /Streaming/);
  await spending.check("spending");
  await spending.inside.getByLabel("By").selectOption("member");
  await spending.inside.getByRole("cell", { name: "Home owner" }).waitFor();

  // The card, with the result of the model's delete.
  const shown = await host(uri, args, result);
  const card = shown.view;
  await shown.at("pending");
  assert.match(await card.innerText(), /Confirm: Delete a subscription[\s\S]*Deleted Netflix[\s\S]*by \d/);

  const check = (name) => shown.check(`card-${name}`);
  await check("pending");

  // The person confirms: applied once, with Undo.
  await card.getByRole("button", { name: "Confirm" }).click();
  await shown.at("applied");
  assert.match(await card.innerText(), /Done[\s\S]*Netflix/);
  await check("applied");
  const confirmed = calls.find((c) => c.name === "confirm_change");
  assert.ok(confirmed, "the press went through the host");

  // A second press of the same confirmation, and a replay with another token, apply nothing.
  const again = await mcp(token, "tools/call", { name: "confirm_change", arguments: confirmed.arguments });
  assert.equal(again.isError, true, JSON.stringify(again));
  const replay = await mcp(process.env.EXHALE_OTHER_TOKEN, "tools/call", { name: "confirm_change", arguments: confirmed.arguments });
  assert.equal(replay.isError, true, JSON.stringify(replay));

  // Undo: an agent's undo waits for the person too, so the card asks again.
  await card.getByRole("button", { name: "Undo" }).click();
  await shown.at("pending");
  await card.getByRole("button", { name: "Confirm" }).click();
  await shown.at("undone");
  await check("undone");
  // A press after the offer ended applies nothing, and the card says so.
  const stale = await host(uri, {}, JSON.parse(process.env.EXHALE_STALE_RESULT));
  await stale.at("pending");
  await stale.view.getByRole("button", { name: "Confirm" }).click();
  await stale.at("refused");
  assert.match(await stale.view.innerText(), /Not done/);
  assert.deepEqual(errors, [], "no script error in the host or the card");
  console.log(`MCP Apps host: the card confirmed and undid a change through ${calls.length} view calls`);
} finally {
  await browser.close();
}
