"""Replays recorded requests whose last message is a tool result with other closing turns, and
counts what the model does after each: calls a tool (confirm_change apart), repeats the turn,
says the words the result gives for the person, or something else.

    python3 closing_turns.py http://127.0.0.1:18080 dumps/ turns.json 6 [waiting|words]

turns.json maps a name to the text of a system turn ("" for none); "{w}" in it stands for the
words the result gives after `Say to them:`. `waiting` replays results that begin
`confirmation_required:`; `words` those of refusals and previews that give words to say. The
server renders each request with its own template (/apply-template), the template's last
system turn is swapped for each candidate, and /completion samples at the server's default
temperature. Standard library only.
"""
import glob
import json
import os
import sys
import urllib.request

SERVER, DUMPS, TURNS, SAMPLES = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3], int(sys.argv[4])
KIND = sys.argv[5] if len(sys.argv) > 5 else "waiting"
SAY = 'Say to them: "'
# Words of the shipped template's turns and of earlier candidates: an answer holding them
# repeats the turn.
TURN_WORDS = ["tell them so now", "waits for the person's yes", "never say it is done",
              "ask the person now", "tell the person so now", "do not call a tool",
              "answer the person's question now", "the call above was refused"]


def post(path, body):
    request = urllib.request.Request(SERVER + path, data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    return json.load(urllib.request.urlopen(request, timeout=600))


def text_of(message):
    content = message.get("content") or ""
    if isinstance(content, list):
        content = "\n".join(part.get("text", "") for part in content)
    return content


def wanted(result):
    if KIND == "waiting":
        return result.startswith("confirmation_required:")
    return SAY in result and not result.startswith("confirmation_required:")


def verdict(answer, words):
    lower = answer.lower()
    if "confirm_change" in lower:
        return "CONFIRM"
    if "```json" in lower or '"name"' in lower:
        return "CALL"
    if any(turn in lower for turn in TURN_WORDS):
        return "ECHO"
    if words and words[:25].lower() in lower:
        return "WORDS"
    return "other: " + answer[:40].replace("\n", " ")


turns = json.load(open(TURNS))
for path in sorted(glob.glob(os.path.join(DUMPS, "*.json"))):
    request = json.load(open(path))["request"]
    if not request or not request.get("messages") or request["messages"][-1].get("role") != "tool":
        continue
    result = text_of(request["messages"][-1])
    if not wanted(result):
        continue
    prompt = post("/apply-template", {"messages": request["messages"], "tools": request.get("tools")})["prompt"]
    cut = prompt.rfind("<|im_start|>system\n")
    if not prompt.endswith("<|im_start|>assistant\n") or cut <= 0:
        continue
    head = prompt[:cut]
    words = result.split(SAY)[1].split('?"')[0] + "?" if SAY in result else ""
    asked = next(text_of(m) for m in request["messages"] if m["role"] == "user")
    print(f"== {os.path.basename(path)} {asked[:60]!r} | {words[:70]}")
    for name, turn in turns.items():
        turn = turn.replace("{w}", words)
        closing = f"<|im_start|>system\n{turn}<|im_end|>\n" if turn else ""
        answers = [post("/completion", {"prompt": head + closing + "<|im_start|>assistant\n", "n_predict": 80})["content"]
                   for _ in range(SAMPLES)]
        print(f"  {name}: {[verdict(answer, words) for answer in answers]}")
