"""Replays a recorded first request with other questions and other tool definitions, and counts
which tool the model calls first: a quick way to see what a description or a result shape
does to a small model's choice before spending a whole eval run on it.

    python3 first_tools.py http://127.0.0.1:18080 dumps/00000.json questions.json variants.json 20

questions.json is a list of questions; variants.json maps a variant's name to the changes it
makes to the recorded tools: {"tool_name": "new description", "tool_name": null (removed)};
{} keeps them as recorded. The server renders each request with its own template
(/apply-template); the model's answer is then started as the model starts a call (a json code
block, then `{`, a new line and `  "name": "`), so each sample is the name of the tool it would
call, drawn at the server's default temperature. It measures which tool, given that it calls
one. The prompt stays in the server's cache between samples; each new variant re-reads it from
the first tool it changes. Standard library only.
"""
import collections
import copy
import json
import sys
import urllib.request

SERVER, RECORDED, QUESTIONS, VARIANTS, SAMPLES = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
CALL_START = "```json\n{\n  \"name\": \""


def post(path, body):
    request = urllib.request.Request(SERVER + path, data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    return json.load(urllib.request.urlopen(request, timeout=900))


def with_changes(tools, changes):
    changed = []
    for tool in tools:
        name = tool["function"]["name"]
        if name in changes and changes[name] is None:
            continue
        tool = copy.deepcopy(tool)
        if name in changes:
            tool["function"]["description"] = changes[name]
        changed.append(tool)
    return changed


recorded = json.load(open(RECORDED))["request"]
# The recorded system turn (MCP's instructions), if any; the question replaces the person's.
messages = recorded["messages"][:1] if recorded["messages"][0]["role"] == "system" else []
questions = json.load(open(QUESTIONS))
variants = json.load(open(VARIANTS))
for question in questions:
    print(f"== {question}", flush=True)
    for name, changes in variants.items():
        tools = with_changes(recorded.get("tools") or [], changes)
        asked = messages + [{"role": "user", "content": question}]
        prompt = post("/apply-template", {"messages": asked, "tools": tools})["prompt"] + CALL_START
        counts = collections.Counter()
        for _ in range(SAMPLES):
            answer = post("/completion", {"prompt": prompt, "n_predict": 12, "stop": ['"'], "cache_prompt": True})
            counts[answer["content"]] += 1
        shown = ", ".join(f"{tool} {count}" for tool, count in counts.most_common())
        print(f"  {name}: {shown}", flush=True)
