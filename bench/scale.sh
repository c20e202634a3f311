#!/usr/bin/env bash
# How papers scales with the size of an index: synthetic collections of N
# records, every command timed as a user runs it (a cold process each time).
#
#   bench/scale.sh [N...]        default: 100000 1000000
#
# For each N, under $CARGO_TARGET_DIR/bench-scale/N (default target/...):
# - a collection (`cargo bench --bench scale -- N DIR`, see benches/scale.rs):
#   texts recombined from the sentences of the real arXiv abstracts in
#   ../shared/bench/arxiv/arxiv-74k.jsonl.gz (or $PAPERS_BENCH/arxiv),
#   titles from their titles; vectors synthetic but clustered, written as an
#   `index --embeddings` file, and a dump of 100 new abstracts;
# - the index, built with `papers index --embeddings FILE --no-verify`
#   (wall and peak RSS);
# - medians over RUNS (default 5) cold runs of: hybrid `search`, `search
#   --mode lexical`, `similar ID`, `show ID`, `info`; then adding the
#   100-abstract dump (embedded by the model, once) and `index` of it again
#   with nothing new;
# - `similar --exact` (the f32 scan) beside `similar` (what auto picks:
#   the int8 scan with f32 rescoring from 50,000 records) and `similar
#   --strategy binary`, and recall@10 of auto and of binary against --exact
#   over 20 ids; then `papers check` (the full check);
# - size on disk against texts + f32 vectors.
# It prints one markdown table. Benchmarks are not tests: nothing fails on
# a slow figure.
set -euo pipefail
cd "$(dirname "$0")/.."

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100000 1000000)
runs="${RUNS:-5}"
bench="${PAPERS_BENCH:-../shared/bench}"
arxiv="$bench/arxiv/arxiv-74k.jsonl.gz"
test -f "$arxiv" || {
  echo "bench/scale.sh: $arxiv not found (set PAPERS_BENCH)" >&2
  exit 1
}
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet
papers="$target/release/papers"

# Seconds (to the millisecond) and peak RSS (MB) of one command: "S MB".
measure() {
  local start end
  start="$(date +%s%N)"
  /usr/bin/time -f '%M' -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || {
    cat "$work/stderr" >&2
    return 1
  }
  end="$(date +%s%N)"
  awk -v ns="$((end - start))" '{printf "%.3f %.0f\n", ns / 1e9, $1 / 1024}' "$work/time"
}

# Median wall (ms) and the largest RSS (MB) over $runs runs.
median() {
  for _ in $(seq "$runs"); do measure "$@"; done |
    sort -n | awk '{t[NR] = $1; if ($2 > m) m = $2} END {printf "%.0f ms, %d MB\n", t[int((NR + 1) / 2)] * 1000, m}'
}

generate() { # N DIR
  cargo bench --quiet --bench scale -- "$1" "$2"
}

rows=()
for n in "${sizes[@]}"; do
  work="$(mkdir -p "$target/bench-scale/$n" && cd "$target/bench-scale/$n" && pwd)"
  index="$work/index"
  if [ ! -f "$work/collection.jsonl" ]; then
    echo "== $n: generating the collection" >&2
    generate "$n" "$work"
  fi
  rm -rf "$index"
  echo "== $n: index --embeddings" >&2
  built="$(measure "$papers" -q --index "$index" index --embeddings "$work/collection.jsonl" --no-verify)"
  id="$("$papers" --index "$index" list | head -n 1 | sed 's/.*"id":"\([0-9a-f]*\)".*/\1/')"
  echo "== $n: commands" >&2
  search="$(median "$papers" -q --index "$index" search "positional encoding length generalization")"
  lexical="$(median "$papers" -q --index "$index" search --mode lexical "positional encoding")"
  similar="$(median "$papers" -q --index "$index" similar "$id")"
  exact="$(median "$papers" -q --index "$index" similar --exact "$id")"
  binary="$(median "$papers" -q --index "$index" similar --strategy binary "$id")"
  show="$(median "$papers" -q --index "$index" show "$id")"
  info="$(median "$papers" -q --index "$index" info)"
  added="$(measure "$papers" -q --index "$index" index "$work/new.txt")"
  noop="$(median "$papers" -q --index "$index" index "$work/new.txt")"
  echo "== $n: recall" >&2
  recall() { # STRATEGY: recall@10 against --exact over the first 20 ids
    "$papers" --index "$index" list | head -n 20 | sed 's/.*"id":"\([0-9a-f]*\)".*/\1/' |
      while read -r one; do
        exact="$("$papers" -q --index "$index" similar --exact -k 10 "$one" | sed 's/.*"id":"\([0-9a-f]*\)".*/\1/' | sort)"
        other="$("$papers" -q --index "$index" similar --strategy "$1" -k 10 "$one" | sed 's/.*"id":"\([0-9a-f]*\)".*/\1/' | sort)"
        comm -12 <(echo "$exact") <(echo "$other") | wc -l
      done | awk '{s += $1} END {printf "%.3f", s / (NR * 10)}'
  }
  recall="$(recall auto) auto, $(recall binary) binary"
  disk="$(du -sm "$index" | cut -f1)"
  raw="$(python3 -c "
import json,sys
t=0
for l in open('$work/collection.jsonl'):
    r=json.loads(l); t+=len(r['title'])+len(r['abstract'])+4*len(r['embedding'])
print(round(t/2**20))")"
  strategy="$("$papers" --index "$index" info | sed 's/.*"search":"\([a-z0-9]*\)".*/\1/')"
  "$papers" -q --index "$index" check
  rows+=("| $n | ${built% *} s, ${built#* } MB | $search | $lexical | $similar ($strategy) | $exact | $binary | $show | $info | ${added% *} s, ${added#* } MB | $noop | $recall | $disk MB / $raw MB |")
done

echo
echo "| records | build (index --embeddings) | search (hybrid) | search --mode lexical | similar ID (auto) | similar --exact ID | similar --strategy binary ID | show ID | info | add 100 new | index, nothing new | recall@10 vs exact | disk / (texts + f32) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
