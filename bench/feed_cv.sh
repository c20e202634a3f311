#!/usr/bin/env bash
# The feed rankers, cross-validated over arXiv categories (bench/feed_cv.py).
#
# Usage: bench/feed_cv.sh [SEEDS]
#   PAPERS  the binary (default: target/release/papers, built if missing)
#   PYTHON  a python with numpy, scipy and scikit-learn (default: python3)
#   PAPERS_BENCH  the data (default: ../shared/bench)
# Writes target/feed-cv/{collection.jsonl,meta.json,index} once (the index
# embeds 15,580 abstracts: 4 to 15 minutes on 2 cores, by processor), then prints the
# nested cross-validation and the table, papers' own rankers in it.
set -euo pipefail
cd "$(dirname "$0")/.."
PAPERS=${PAPERS:-target/release/papers}
PYTHON=${PYTHON:-python3}
BENCH=${PAPERS_BENCH:-../shared/bench}
SEEDS=${1:-3}
WORK=target/feed-cv
[ -x "$PAPERS" ] || cargo build --release
mkdir -p "$WORK"
if [ ! -e "$WORK/meta.json" ]; then
  "$PYTHON" - "$BENCH/arxiv/arxiv-74k.jsonl.gz" "$WORK" <<'PY'
import gzip, json, sys
source, work = sys.argv[1], sys.argv[2]
rows = sorted((json.loads(l) for l in gzip.open(source, "rt")), key=lambda r: r["id"])
pool = [r for r in rows if r["id"][:4] in ("2603", "2604")]
later = [r for r in rows if r["id"] >= "2605"]
DAY, DAYS = 300, 10
days = [later[d * (len(later) - DAY) // (DAYS - 1):][:DAY] for d in range(DAYS)]
keep = {r["id"]: r for r in pool + [r for d in days for r in d]}
labels = {}
with open(f"{work}/collection.jsonl", "w") as out:
    for i, r in keep.items():
        labels[i] = r.get("categories", [])
        out.write(json.dumps({k: v for k, v in r.items() if k != "categories"}) + "\n")
json.dump({"labels": labels, "pool": [r["id"] for r in pool],
           "days": [[r["id"] for r in d] for d in days]}, open(f"{work}/meta.json", "w"))
PY
fi
if [ ! -e "$WORK/index/manifest.json" ]; then
  "$PAPERS" --index "$WORK/index" index "$WORK/collection.jsonl"
fi
# papers' own rankers on the same draws (benches/feed_cv.rs), then the
# cross-validation over everything.
"$PYTHON" bench/feed_cv.py "$WORK/index" "$WORK/meta.json" "$SEEDS" --draws "$WORK/draws.json"
cargo bench --bench feed_cv -- "$WORK/index" "$WORK/draws.json" "$WORK/papers.json"
"$PYTHON" bench/feed_cv.py "$WORK/index" "$WORK/meta.json" "$SEEDS" --papers "$WORK/papers.json"
