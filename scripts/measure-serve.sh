#!/usr/bin/env bash
# Measures the release binary as a self-hoster runs it (DESIGN section 9): binary size, cold
# start to the first answered request, idle RSS, and RSS and throughput under 16 concurrent
# clients (wrk, from Debian's packages): REST list_subscriptions, then MCP tools/call
# get_subscription over the 2026 stateless wire. Everything stays on 127.0.0.1.
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
echo "REST list_subscriptions, 16 connections:"
wrk -t2 -c16 -d10s --latency -s "$script" "$url/api/v1/ops/list_subscriptions" | grep -E "Requests/sec|50%|99%|Non-2xx"
echo "RSS after the load: $(awk '/VmHWM/ {print $2}' /proc/$pid/status) kB peak, $(awk '/VmRSS/ {print $2}' /proc/$pid/status) kB now"

id=$(curl -sf -X POST "$url/api/v1/ops/list_subscriptions" -H "Authorization: Bearer $token" -H "Content-Type: application/json" -d '{"limit": 1}' | sed -E 's/.*"id":([0-9]+).*/\1/')
cat >"$script" <<LUA
wrk.method = "POST"
wrk.body = '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_subscription", "arguments": {"id": $id}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "get_subscription"
wrk.headers["Authorization"] = "Bearer $token"
LUA
echo "MCP tools/call get_subscription, 16 connections:"
wrk -t2 -c16 -d10s --latency -s "$script" "$url/mcp" | grep -E "Requests/sec|50%|99%|Non-2xx"
echo "RSS after both loads: $(awk '/VmHWM/ {print $2}' /proc/$pid/status) kB peak, $(awk '/VmRSS/ {print $2}' /proc/$pid/status) kB now"
rm -f "$script"
