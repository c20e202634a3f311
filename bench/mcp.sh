#!/usr/bin/env bash
# MCP over HTTP: starts `papers serve` on an index, then times a warm
# `search` tool call through the official Python SDK and as a bare POST,
# and measures the answers' sizes (bench/mcp_latency.py).
#
# Usage: bench/mcp.sh [INDEX] [ROUNDS]
#   INDEX   an index folder (default: a fresh one of ../shared/seeds in
#           target/bench-mcp)
#   PAPERS  the binary (default: target/release/papers, built if missing)
#   PYTHON  a python with the MCP SDK v2 (default: python3)
set -euo pipefail
cd "$(dirname "$0")/.."
PAPERS=${PAPERS:-target/release/papers}
PYTHON=${PYTHON:-python3}
ROUNDS=${2:-3}
[ -x "$PAPERS" ] || cargo build --release
INDEX=${1:-target/bench-mcp/index}
if [ ! -e "$INDEX/manifest.json" ]; then
  "$PAPERS" --index "$INDEX" index ../shared/seeds
fi
log=$(mktemp)
"$PAPERS" --index "$INDEX" serve --addr 127.0.0.1:0 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 600); do
  grep -q 'on http://' "$log" && break
  sleep 0.1
done
base=$(grep -o 'http://[0-9.:]*' "$log" | head -1)
echo "papers serve at $base ($(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
"$PYTHON" bench/mcp_latency.py "$base/mcp" eval/queries.jsonl "$ROUNDS"
