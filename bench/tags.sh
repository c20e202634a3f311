#!/usr/bin/env bash
# What a reader with thousands of tags pays: the seeds indexed once, then
# N tags (default 5,000) of three liked papers each written into the
# index's database, trained once by a first `papers tag`, then timed as a
# user runs them (a cold process each time, wall seconds and peak RSS):
#
# - `papers tag` of one paper into an existing tag;
# - `papers index` of a file of 3 new records (arXiv abstracts from
#   ../shared/bench/arxiv, a different three each run);
# - `papers feed TAG --since 2000-01-01` of one tag (every paper ranked).
#
#   bench/tags.sh [N]          RUNS (default 3) runs of each, every figure
#
# The index and papers' cache (the model's copy, the profiles) live under $CARGO_TARGET_DIR/bench-tags (default
# target/...); the seeds' index is kept between runs, the tags written anew.
# Benchmarks are not tests: nothing fails on a slow figure.
set -euo pipefail
cd "$(dirname "$0")/.."

tags="${1:-5000}"
runs="${RUNS:-3}"
shared="${PAPERS_SHARED:-../shared}"
arxiv="$shared/bench/arxiv/arxiv-74k.jsonl.gz"
test -d "$shared/seeds" && test -f "$arxiv" || {
  echo "bench/tags.sh: $shared/seeds or $arxiv not found (set PAPERS_SHARED)" >&2
  exit 1
}
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet
papers="$(pwd)/$target/release/papers"
work="$target/bench-tags"
seeds="$work/seeds-index"
mkdir -p "$work"
if [ ! -f "$seeds/manifest.json" ]; then
  "$papers" index "$shared/seeds" --index "$seeds" --quiet
fi
index="$work/index"
# The profiles trained anew; the model (fetched into this cache) kept.
rm -rf "$index" "$work/cache/profiles"
cp -r "$seeds" "$index"
export PAPERS_CACHE_DIR="$work/cache"
db=$(ls -d "$index"/data-*/papers.sqlite | head -1)

python3 - "$db" "$tags" <<'EOF'
import random, sqlite3, sys, time
db, n = sys.argv[1], int(sys.argv[2])
conn = sqlite3.connect(db)
ids = [r[0] for r in conn.execute("SELECT id FROM papers ORDER BY row")]
rng = random.Random(7)
now = int(time.time())
conn.execute("DELETE FROM tags")
conn.executemany(
    "INSERT INTO tags(tag, id, liked, at) VALUES (?, ?, 1, ?)",
    [(f"t{t:05}", i, now) for t in range(n) for i in rng.sample(ids, 3)],
)
conn.commit()
EOF

# What one command costs: wall seconds and peak RSS in MB.
measure() {
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || {
    cat "$work/stderr" >&2
    exit 1
  }
  awk '{ printf "%.2f s, %.0f MB", $1, $2 / 1024 }' "$work/time"
}

ids=($("$papers" list --index "$index" --json | python3 -c '
import json, sys
print(" ".join(json.loads(l)["id"] for l in sys.stdin))'))
echo "index: the seeds (${#ids[@]} records), $tags tags of 3 liked papers"
echo "first papers tag (trains every tag): $(measure "$papers" tag t00000 "${ids[0]}" --index "$index" --quiet)"
echo
echo "| run | tag of one paper | index of 3 records | feed of one tag |"
echo "|---|---|---|---|"
for run in $(seq 1 "$runs"); do
  new="$work/new-$run.jsonl"
  zcat "$arxiv" | sed -n "$((run * 3 + 1)),$((run * 3 + 3))p" >"$new"
  tag=$(measure "$papers" tag "t0000$run" "${ids[$((run * 7))]}" --index "$index" --quiet)
  added=$(measure "$papers" index "$new" --index "$index" --quiet)
  feed=$(measure "$papers" feed "t0001$run" --since 2000-01-01 --json --index "$index" --quiet)
  echo "| $run | $tag | $added | $feed |"
done
