#!/usr/bin/env bash
# Measures the release binary as a self-hoster runs it (DESIGN section 9): binary size, cold
# start to the first answered request, idle RSS, and RSS and throughput under 16 concurrent
# REST clients (wrk, from Debian's packages). Everything stays on 127.0.0.1.
# Usage: scripts/measure-serve.sh   (builds target/release/exhale first)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release -p exhale --quiet
bin=target/release/exhale
data=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$data"' EXIT

echo "binary: $(stat -c %s "$bin") bytes (stripped)"
"$bin" --data-dir "$data" demo --email owner@example.com >/dev/null 2>&1
token=$("$bin" --data-dir "$data" token create --member owner@example.com --scope read --name bench 2>/dev/null | tail -1)

start=$(date +%s%N)
# The load is one token at thousands of calls a second, on purpose: no rate limit here.
coproc SERVER { EXHALE_TOKEN_RATE_PER_SECOND=0 exec "$bin" --data-dir "$data" serve --listen 127.0.0.1:0 2>/dev/null; }
pid=$SERVER_PID
read -r line <&"${SERVER[0]}"
url=${line#Exhale is listening on }
curl -sf "$url/healthz" >/dev/null
end=$(date +%s%N)
echo "cold start to first answered request: $(( (end - start) / 1000000 )) ms"
curl -sf -X POST "$url/api/v1/ops/list_subscriptions" -H "Authorization: Bearer $token" >/dev/null
echo "idle RSS: $(awk '/VmRSS/ {print $2}' /proc/$pid/status) kB"

script=$(mktemp)
cat >"$script" <<LUA
wrk.method = "POST"
wrk.body = '{"limit": 500}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $token"
LUA
wrk -t2 -c16 -d10s --latency -s "$script" "$url/api/v1/ops/list_subscriptions" | grep -E "Requests/sec|50%|99%|Non-2xx"
echo "RSS after the load: $(awk '/VmHWM/ {print $2}' /proc/$pid/status) kB peak, $(awk '/VmRSS/ {print $2}' /proc/$pid/status) kB now"
rm -f "$script"
