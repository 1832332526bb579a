"""Records the chat requests an eval run sends to llama-server, and forwards each unchanged.

    python3 record.py 18081 http://127.0.0.1:18080 dumps/

Point the eval at the recorder (EXHALE_EVAL_BASE_URL=http://127.0.0.1:18081/v1); each POST is
kept as dumps/NNNNN.json ({"path", "request", "response"}), in the order it was sent, so
closing_turns.py can replay a real prompt with another closing turn. Standard library only.
"""
import http.server
import itertools
import json
import os
import sys
import threading
import urllib.error
import urllib.request

PORT, UPSTREAM, OUT = int(sys.argv[1]), sys.argv[2].rstrip("/"), sys.argv[3]
os.makedirs(OUT, exist_ok=True)
numbers = itertools.count()
lock = threading.Lock()


class Forward(http.server.BaseHTTPRequestHandler):
    # One response per connection: the body streams through with no length to announce.
    protocol_version = "HTTP/1.0"

    def forward(self, body=None):
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
        request = urllib.request.Request(UPSTREAM + self.path, data=body, method=self.command, headers=headers)
        try:
            response = urllib.request.urlopen(request, timeout=3600)
        except urllib.error.HTTPError as refused:
            response = refused
        self.send_response(response.status)
        for key, value in response.headers.items():
            if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(key, value)
        self.send_header("Connection", "close")
        self.end_headers()
        chunks = []
        while chunk := response.read1(4096):
            chunks.append(chunk)
            self.wfile.write(chunk)
            self.wfile.flush()
        return b"".join(chunks)

    def do_GET(self):
        self.forward()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        with lock:
            number = next(numbers)
        answer = self.forward(body)
        with open(os.path.join(OUT, f"{number:05d}.json"), "w") as file:
            json.dump({"path": self.path, "request": json.loads(body or b"null"),
                       "response": answer.decode("utf-8", "replace")}, file)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Forward).serve_forever()
