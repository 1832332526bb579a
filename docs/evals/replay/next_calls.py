"""Replays a recorded request whose last message is a tool result with that result reworded,
and counts what the model does next: which tool it calls, with which first argument, or that it
answers in text. A quick way to see what a refusal's words do before a whole eval run.

    python3 next_calls.py http://127.0.0.1:18080 dumps/00001.json results.json 10 ["143.52|1,722.26"]

With a fifth argument, the answer is written out in full and counted by whether it says one of
the |-separated strings, as the eval's checks do, rather than by how it starts.

results.json maps a variant's name to the whole text of the tool result ("" keeps the recorded
one). The server renders each request with its own template (/apply-template, so the shipped
closing turns follow the result as in a run), and /completion samples at the server's default
temperature. Standard library only.
"""
import collections
import json
import re
import sys
import urllib.request

SERVER, RECORDED, RESULTS, SAMPLES = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3], int(sys.argv[4])
EXPECTED = sys.argv[5].split("|") if len(sys.argv) > 5 else None


def post(path, body):
    request = urllib.request.Request(SERVER + path, data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    return json.load(urllib.request.urlopen(request, timeout=900))


def next_step(answer):
    """The tool called and its arguments as far as they were written, or the answer's start."""
    call = re.search(r'"name":\s*"([^"]+)"(.*)', answer, re.S)
    if "```json" in answer and call:
        arguments = re.sub(r"\s+", " ", call.group(2)).strip(' ,}\n`')
        return f"{call.group(1)} {arguments[:70]}"
    return "text: " + answer[:60].replace("\n", " ")


request = json.load(open(RECORDED))["request"]
assert request["messages"][-1]["role"] == "tool", "the recorded request does not end with a result"
variants = json.load(open(RESULTS))
for name, result in variants.items():
    messages = [dict(m) for m in request["messages"]]
    if result:
        messages[-1]["content"] = result
    prompt = post("/apply-template", {"messages": messages, "tools": request.get("tools")})["prompt"]
    steps = collections.Counter()
    for _ in range(SAMPLES):
        answer = post("/completion", {"prompt": prompt, "n_predict": 200 if EXPECTED else 60,
                                      "cache_prompt": True})["content"]
        if EXPECTED:
            said = any(expected in answer for expected in EXPECTED)
            steps[("says it: " if said else "misses: ") + answer[:90].replace("\n", " ")] += 1
        else:
            steps[next_step(answer)] += 1
    if EXPECTED:
        said = sum(count for step, count in steps.items() if step.startswith("says it"))
        print(f"== {name}: {said} of {SAMPLES} say {' or '.join(EXPECTED)}", flush=True)
    else:
        print(f"== {name}", flush=True)
    for step, count in steps.most_common():
        print(f"  {count}  {step}", flush=True)
