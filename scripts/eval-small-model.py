#!/usr/bin/env python3
"""Opt-in eval: a real model drives Exhale's MCP tools on a fresh demo household.

Not part of CI. It needs an OpenAI-compatible chat server (llama-server, Ollama, LM Studio,
vLLM or a cloud key; see the "real local model" section of the LLM reference notes) and an
`exhale` binary. For each task it creates a demo household in a temporary directory, serves
it on 127.0.0.1, lets the model call tools over MCP (the 2025-11-25 wire, as desktop clients
do, with the server's instructions as the system prompt), then checks the household's state
or the model's answer. It prints each task's result, the pass rate, the size of tools/list
and, when the server has llama-server's /tokenize, the prompt tokens the tool definitions
take.

    scripts/eval-small-model.py --exhale target/debug/exhale --llm http://127.0.0.1:8091 \\
        [--tools full|compact] [--only TASK] [--model NAME] [--api-key KEY]

Python's standard library only.
"""

import argparse
import datetime
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

PROTOCOL = "2025-11-25"
MAX_ROUNDS = 6
# What a tool result may take of a small model's window.
MAX_RESULT_CHARS = 6000


def post(url, body, headers=None, timeout=600):
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read().decode()


class Mcp:
    """A minimal Streamable HTTP client: initialize, then calls in the session."""

    def __init__(self, url, token):
        self.url, self.token, self.session, self.next_id = url, token, None, 1
        result = self.request("initialize", {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "eval-small-model", "version": "1"},
        })
        self.instructions = result.get("instructions", "")
        self.notify("notifications/initialized")

    def headers(self):
        headers = {
            "Authorization": f"Bearer {self.token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL,
        }
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        return headers

    def request(self, method, params):
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.next_id += 1
        status, headers, text = post(self.url, body, self.headers())
        session = {k.lower(): v for k, v in headers.items()}.get("mcp-session-id")
        if session:
            self.session = session
        if text.lstrip().startswith("event:") or text.lstrip().startswith("data:"):
            text = [line[5:] for line in text.splitlines() if line.startswith("data:")][-1]
        reply = json.loads(text)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    def notify(self, method):
        post(self.url, {"jsonrpc": "2.0", "method": method}, self.headers())

    def tools(self):
        return self.request("tools/list", {})["tools"]

    def call(self, name, arguments):
        return self.request("tools/call", {"name": name, "arguments": arguments})


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Household:
    """A fresh demo household served by `exhale serve`, with a trusted token."""

    def __init__(self, exhale):
        self.dir = tempfile.mkdtemp(prefix="exhale-eval-")
        env = {**os.environ, "EXHALE_DATA_DIR": self.dir, "EXHALE_LOG": "warn"}
        subprocess.run([exhale, "demo"], env=env, check=True, capture_output=True)
        made = subprocess.run(
            [exhale, "token", "create", "--member", "demo@example.com", "--scope", "trusted", "--name", "eval"],
            env=env, check=True, capture_output=True, text=True)
        self.token = made.stdout.strip()
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.server = subprocess.Popen(
            [exhale, "serve"], env={**env, "EXHALE_LISTEN": f"127.0.0.1:{port}"},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while True:
            try:
                with urllib.request.urlopen(f"{self.base}/healthz", timeout=1):
                    break
            except OSError:
                if time.time() > deadline or self.server.poll() is not None:
                    raise RuntimeError("exhale serve did not start")
                time.sleep(0.05)

    def mcp(self, tools):
        suffix = "?tools=compact" if tools == "compact" else ""
        return Mcp(f"{self.base}/mcp{suffix}", self.token)

    def close(self):
        self.server.terminate()
        self.server.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


def structured(result):
    """A tool result's JSON: structured content, else the text parsed."""
    if result.get("structuredContent") is not None:
        return result["structuredContent"]
    for block in result.get("content", []):
        if block.get("type") == "text":
            try:
                return json.loads(block["text"])
            except ValueError:
                return {"text": block["text"]}
    return {}


def subscription(mcp, name):
    """The subscription with this exact name, or {} when the model renamed or deleted it."""
    page = structured(mcp.call("list_subscriptions", {"limit": 50}))
    found = [s for s in page.get("items", []) if s["name"] == name]
    return structured(mcp.call("get_subscription", {"id": found[0]["id"]})) if found else {}


def categories(mcp):
    return structured(mcp.call("list_categories", {})).get("items", [])


def today():
    return datetime.date.today()


def end_of_month(date, months_ahead=0):
    year, month = date.year + (date.month - 1 + months_ahead) // 12, (date.month - 1 + months_ahead) % 12 + 1
    first_next = datetime.date(year + month // 12, month % 12 + 1, 1)
    return first_next - datetime.timedelta(days=1)


def dates_read(transcript, tool, field):
    """The dates a tool was called with for `field`, as Exhale read them (its echo) or as written."""
    out = []
    for call in transcript:
        if call["name"] != tool or field not in call["arguments"]:
            continue
        written = str(call["arguments"][field])
        echoed = [r.get("date") for r in call["result"].get("resolved", []) if r.get("given") == written]
        out.append(echoed[0] if echoed and echoed[0] else written)
    return out


# Each task: (name, prompt, check(mcp, transcript, answer) -> (passed, why)).
def check_price(mcp, transcript, answer):
    return "17.99" in answer, "wants 17.99"


def check_pause(mcp, transcript, answer):
    sub = subscription(mcp, "Disney+")
    want = end_of_month(today(), 1).isoformat()
    return sub.get("paused_until") == want, f"paused_until {sub.get('paused_until')}, want {want}"


def check_resume(mcp, transcript, answer):
    sub = subscription(mcp, "Gym membership")
    return sub.get("status") == "active", f"status {sub.get('status')}"


def check_cancel(mcp, transcript, answer):
    sub = subscription(mcp, "Netflix")
    want = end_of_month(today()).isoformat()
    return sub.get("ends_on") == want, f"ends_on {sub.get('ends_on')}, want {want}"


def check_category(mcp, transcript, answer):
    sub = subscription(mcp, "GitHub Copilot")
    got = (sub.get("category") or {}).get("name")
    return got == "Education", f"category {got}"


def check_activity(mcp, transcript, answer):
    asked = dates_read(transcript, "list_activity", "from")
    window = {(today() - datetime.timedelta(days=d)).isoformat() for d in range(0, 5)}
    return any(a in window for a in asked), f"list_activity from {asked}"


def check_rename(mcp, transcript, answer):
    names = [c["name"] for c in categories(mcp)]
    return "Press" in names and "News & magazines" not in names, f"categories {names}"


def check_upcoming(mcp, transcript, answer):
    coming = structured(mcp.call("list_upcoming_charges", {"days": 7})).get("items", [])
    names = {c["subscription"]["name"] for c in coming if c.get("subscription")}
    hit = [n for n in names if n.lower() in answer.lower()]
    return bool(hit) or (not names and "no" in answer.lower()), f"due {sorted(names)}, named {hit}"


TASKS = [
    ("price", "How much does Spotify Family cost per month?", check_price),
    ("pause", "Pause Disney+ until the end of next month.", check_pause),
    ("resume", "Resume the gym membership.", check_resume),
    ("cancel", "Cancel Netflix at the end of this month.", check_cancel),
    ("category", "Move GitHub Copilot to the Education category.", check_category),
    ("activity", "What changed in the household in the last 3 days?", check_activity),
    ("rename", "Rename the category News & magazines to Press.", check_rename),
    ("upcoming", "Which subscriptions charge in the next 7 days?", check_upcoming),
]


def openai_tools(tools):
    return [{"type": "function", "function": {
        "name": t["name"], "description": t.get("description", ""), "parameters": t["inputSchema"]}}
        for t in tools]


def chat(args, messages, tools):
    body = {"model": args.model, "messages": messages, "tools": tools, "temperature": 0, "max_tokens": 512}
    headers = {"Authorization": f"Bearer {args.api_key}"} if args.api_key else {}
    status, _, text = post(f"{args.llm}/v1/chat/completions", body, headers)
    if status != 200:
        raise RuntimeError(f"model server {status}: {text[:200]}")
    return json.loads(text)


def prompt_tokens(args, system, tools):
    """Prompt tokens of the system message with and without the tool definitions, counted by
    the model server itself (usage.prompt_tokens of a one-token completion)."""
    counts = []
    for with_tools in (tools, None):
        body = {"model": args.model, "messages": [{"role": "system", "content": system},
                {"role": "user", "content": "hi"}], "max_tokens": 1, "temperature": 0}
        if with_tools:
            body["tools"] = with_tools
        try:
            status, _, text = post(f"{args.llm}/v1/chat/completions", body)
        except OSError:
            return None
        if status != 200:
            return None
        counts.append(json.loads(text).get("usage", {}).get("prompt_tokens"))
    return counts


def run_task(args, task):
    name, prompt, check = task
    household = Household(args.exhale)
    try:
        mcp = household.mcp(args.tools)
        tools = openai_tools(mcp.tools())
        messages = [{"role": "system", "content": mcp.instructions}, {"role": "user", "content": prompt}]
        transcript, answer, error = [], "", None
        try:
            for _ in range(MAX_ROUNDS):
                reply = chat(args, messages, tools)["choices"][0]["message"]
                calls = reply.get("tool_calls") or []
                messages.append({"role": "assistant", "content": reply.get("content") or "", "tool_calls": calls} if calls
                                else {"role": "assistant", "content": reply.get("content") or ""})
                if not calls:
                    answer = reply.get("content") or ""
                    break
                for call in calls:
                    try:
                        arguments = json.loads(call["function"].get("arguments") or "{}")
                    except ValueError:
                        arguments = {}
                    result = mcp.call(call["function"]["name"], arguments) if isinstance(arguments, dict) else {}
                    transcript.append({"name": call["function"]["name"], "arguments": arguments,
                                       "result": structured(result), "error": result.get("isError")})
                    text = "".join(b.get("text", "") for b in result.get("content", []))[:MAX_RESULT_CHARS]
                    messages.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": text})
        except (RuntimeError, OSError) as err:
            error = str(err)
        passed, why = check(mcp, transcript, answer)
        if error:
            why = f"{why}; stopped: {error}"
        calls = ", ".join(f"{c['name']}({json.dumps(c['arguments'], ensure_ascii=False)})"
                          + (" ERR" if c["error"] else "") for c in transcript)
        return passed, f"{why}; answer: {answer[:160]!r}", calls
    finally:
        household.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exhale", required=True)
    parser.add_argument("--llm", required=True, help="base URL of an OpenAI-compatible server")
    parser.add_argument("--model", default="local")
    parser.add_argument("--api-key", default=os.environ.get("EVAL_API_KEY"))
    parser.add_argument("--tools", choices=["full", "compact"], default="full")
    parser.add_argument("--only")
    args = parser.parse_args()

    household = Household(args.exhale)
    try:
        mcp = household.mcp(args.tools)
        listed = mcp.tools()
        status, _, raw = post(mcp.url, {"jsonrpc": "2.0", "id": 99, "method": "tools/list", "params": {}}, mcp.headers())
        tokens = prompt_tokens(args, mcp.instructions, openai_tools(listed))
    finally:
        household.close()
    print(f"tools/list ({args.tools}): {len(listed)} tools, {len(raw.encode())} bytes")
    if tokens and None not in tokens:
        print(f"prompt tokens (model server's count): {tokens[0]} with the tools, {tokens[1]} without: "
              f"the definitions take {tokens[0] - tokens[1]}")

    started, passed = time.time(), 0
    tasks = [t for t in TASKS if not args.only or t[0] == args.only]
    for task in tasks:
        ok, why, calls = run_task(args, task)
        passed += ok
        print(f"{'PASS' if ok else 'FAIL'} {task[0]:<9} {why}\n     calls: {calls or '(none)'}")
        sys.stdout.flush()
    print(f"{passed}/{len(tasks)} passed in {time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
