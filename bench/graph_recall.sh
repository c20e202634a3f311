#!/usr/bin/env bash
# Recall@10 of the stored HNSW graphs against the exact scan, on an index's
# own (real) vectors, through the server as a user meets them:
#
#   bench/graph_recall.sh INDEX [STEP]
#
# Copies INDEX, adds the shipped sample dump data/daily-2024-05-01.txt with
# PAPERS_GRAPH_FROM=1 (so that commit stores graphs over every row, as an
# index past 50,000 records gets), starts `papers serve` on the copy, and for
# every STEP-th record (default 1) compares `/api/similar?id=ID&k=10` (the
# graphs) with `papers similar --exact -k 10 ID` (the f32 scan).
set -euo pipefail
cd "$(dirname "$0")/.."
index="$1"; step="${2:-1}"
cargo build --release --quiet
papers="${CARGO_TARGET_DIR:-target}/release/papers"
copy=$(mktemp -d); log=$(mktemp)
cp -r "$index"/. "$copy"/
PAPERS_GRAPH_FROM=1 "$papers" -q --index "$copy" index data/daily-2024-05-01.txt
ls "$copy"/data-*/ | grep -c '\.hnsw$' | sed 's/^/stored graphs: /'
"$papers" --index "$copy" serve --addr 127.0.0.1:0 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$copy" "$log"' EXIT
until grep -q "on http://" "$log"; do sleep 0.2; done
base=$(grep -o 'http://[0-9.:]*' "$log" | head -1)
"$papers" --index "$copy" list --json | python3 -c '
import json, subprocess, sys, urllib.request
papers, copy, base, step = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
ids = [json.loads(l)["id"] for l in sys.stdin][::step]
found = wanted = 0
for i in ids:
    graph = [h["id"] for h in json.load(urllib.request.urlopen(f"{base}/api/similar?id={i}&k=10"))]
    out = subprocess.run([papers, "--index", copy, "similar", "--json", "--exact", "-k", "10", i],
                         capture_output=True, text=True, check=True).stdout
    exact = [json.loads(l)["id"] for l in out.splitlines()]
    wanted += len(exact); found += len(set(exact) & set(graph))
print(f"{len(ids)} queries, recall@10 of the graphs against the exact scan: {found / wanted:.4f}")
' "$papers" "$copy" "$base" "$step"
