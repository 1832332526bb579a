#!/usr/bin/env python3
"""Measures what issue 10 (hardening) changed, against a real `exhale serve` (use the release
binary), and prints one line per figure:

- sign-in time for a wrong password, known email vs unknown email (medians and their ratio);
- a burst of 16 concurrent sign-ins, 10 rounds: the server's peak RSS and median latency;
- N connections that send nothing, then /healthz: answered, latency, the server's RSS;
- 2,000 connections sending headers slowly (more than max_connections), then /healthz;
- a household at its subscription cap: 16 clients listing pages; latency and peak RSS.

Usage: scripts/measure-hardening.py --exhale target/release/exhale [--idle 19000]
Standard library only; Linux (reads /proc). Starts and stops its own servers on 127.0.0.1.
"""
import argparse, http.client, json, os, re, resource, socket, statistics, subprocess, tempfile
import threading, time, urllib.parse

PASSWORD = "a long enough password"


class Server:
    def __init__(self, exhale, data, env=None):
        self.process = subprocess.Popen(
            [exhale, "--data-dir", data, "serve", "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env={**os.environ, **(env or {})})
        first = self.process.stdout.readline()
        self.host, port = first.rsplit("http://", 1)[1].strip().split(":")
        self.port = int(port)
        threading.Thread(target=self.process.stdout.read, daemon=True).start()

    def rss_mb(self):
        with open(f"/proc/{self.process.pid}/status") as status:
            return next(int(l.split()[1]) for l in status if l.startswith("VmRSS")) // 1024

    def connection(self, timeout=30):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def healthz_ms(self, times=50):
        taken = []
        for _ in range(times):
            c = self.connection(10)
            start = time.perf_counter()
            c.request("GET", "/healthz")
            r = c.getresponse()
            r.read()
            assert r.status == 200, r.status
            taken.append((time.perf_counter() - start) * 1000)
        return statistics.median(taken), max(taken)

    def stop(self):
        self.process.terminate()
        self.process.wait()


def sign_in(server, email, password):
    c = server.connection()
    c.request("GET", "/sign-in")
    r = c.getresponse()
    body = r.read().decode()
    cookie = r.getheader("set-cookie").split(";")[0]
    token = re.search(r'name="form_token" value="([^"]+)"', body).group(1)
    form = urllib.parse.urlencode({"form_token": token, "email": email, "password": password})
    c = server.connection()
    start = time.perf_counter()
    c.request("POST", "/sign-in", form,
              {"content-type": "application/x-www-form-urlencoded", "cookie": cookie})
    r = c.getresponse()
    r.read()
    return (time.perf_counter() - start) * 1000, r.status


def measure_sign_in(server):
    known, unknown = [], []
    for i in range(40):
        for j in range(4):
            taken, status = sign_in(server, "ana@a.test", "wrong wrong wrong")
            assert status == 401, status
            known.append(taken)
            taken, status = sign_in(server, f"nobody{i}-{j}@a.test", "wrong wrong wrong")
            assert status == 401, status
            unknown.append(taken)
        assert sign_in(server, "ana@a.test", PASSWORD)[1] == 303  # clears the delay
    k, u = statistics.median(known), statistics.median(unknown)
    print(f"sign-in, wrong password: known email median {k:.1f} ms, unknown email {u:.1f} ms, "
          f"ratio {u / k:.2f} ({len(known)} each)")


def measure_burst(server):
    before, peak, taken = server.rss_mb(), 0, []
    for round in range(10):
        threads = [threading.Thread(target=lambda n=n: taken.append(
            sign_in(server, f"burst{round}-{n}@a.test", "wrong wrong wrong")[0]))
            for n in range(16)]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            peak = max(peak, server.rss_mb())
            time.sleep(0.005)
    print(f"16 concurrent sign-ins x 10: RSS {before} MB before, peak {peak} MB; "
          f"latency median {statistics.median(taken):.0f} ms, max {max(taken):.0f} ms")


def measure_connections(server, idle):
    held = []
    for _ in range(idle):
        held.append(socket.create_connection((server.host, server.port), timeout=5))
    median, worst = server.healthz_ms()
    print(f"{idle} connections that send nothing: /healthz answered 50/50, median {median:.2f} ms, "
          f"max {worst:.2f} ms; server RSS {server.rss_mb()} MB")
    for s in held:
        s.close()
    slow = []
    for _ in range(2000):
        s = socket.create_connection((server.host, server.port), timeout=5)
        s.send(b"GET /healthz HTTP/1.1\r\nhost: x\r\n")
        slow.append(s)
    median, worst = server.healthz_ms()
    closed = 0
    for s in slow:
        s.setblocking(False)
        try:
            closed += s.recv(1) == b""
        except BlockingIOError:
            pass
        except ConnectionError:
            closed += 1
        s.close()
    print(f"2000 slow-header connections: /healthz answered 50/50, median {median:.2f} ms, "
          f"max {worst:.2f} ms; {closed} slow ones closed to make room")


def measure_list(server, token):
    def post(c, op, body):
        c.request("POST", f"/api/v1/ops/{op}", json.dumps(body),
                  {"authorization": "Bearer " + token, "content-type": "application/json"})
        r = c.getresponse()
        return r.status, r.read()
    c = server.connection()
    count = 0
    while True:
        status, _ = post(c, "create_subscription", {
            "name": f"Service {count:05d}", "amount": "9.99", "cycle": "monthly",
            "next_charge_on": "2026-12-20", "notes": "x" * 200})
        if status != 200:
            break  # the household's cap
        count += 1
    taken, peak = [], [0]
    def client(sort):
        cc = server.connection()
        for i in range(40):
            start = time.perf_counter()
            status, body = post(cc, "list_subscriptions",
                                {"limit": 100, "sort": sort, "cursor": f"o{(i * 100) % 1900}"})
            assert status == 200, body[:200]
            taken.append((time.perf_counter() - start) * 1000)
            peak[0] = max(peak[0], server.rss_mb())
    threads = [threading.Thread(target=client, args=(("name", "next_charge", "price")[k % 3],))
               for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    taken.sort()
    print(f"16 clients x 40 pages of 100 over {count} subscriptions (the cap): median "
          f"{statistics.median(taken):.1f} ms, p90 {taken[int(len(taken) * 0.9)]:.1f} ms; "
          f"peak RSS {peak[0]} MB")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--exhale", required=True)
    parser.add_argument("--idle", type=int, default=19000)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, args.idle + 1000)), hard))
    with tempfile.TemporaryDirectory() as data:
        run = lambda *a, **k: subprocess.run([args.exhale, "--data-dir", data, *a], check=True,
                                              capture_output=True, text=True, **k)
        run("member", "create-owner", "--email", "ana@a.test", "--name", "Ana",
            "--password-stdin", input=PASSWORD + "\n")
        token = run("token", "create", "--member", "ana@a.test", "--scope", "trusted",
                    "--name", "load").stdout.strip().splitlines()[-1]
        for measure in (measure_sign_in, measure_burst):
            server = Server(args.exhale, data)
            measure(server)
            server.stop()
        server = Server(args.exhale, data)
        measure_connections(server, args.idle)
        server.stop()
        server = Server(args.exhale, data, {"EXHALE_TOKEN_RATE_PER_SECOND": "0"})
        measure_list(server, token)
        server.stop()


if __name__ == "__main__":
    main()
