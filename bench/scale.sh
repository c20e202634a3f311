#!/usr/bin/env bash
# How papers scales with the size of an index: synthetic collections of N
# records, every command timed as a user runs it (a cold process each time).
#
#   bench/scale.sh [N...]        default: 100000 1000000
#
# For each N, under $CARGO_TARGET_DIR/bench-scale/N (default target/...):
# - a collection: texts recombined from the sentences of the real arXiv
#   abstracts in ../shared/bench/arxiv/arxiv-74k.jsonl.gz (or
#   $PAPERS_BENCH/arxiv), titles from their titles; vectors synthetic but
#   clustered (N/100 random centres, each record a centre plus noise, unit
#   length), written as an `index --embeddings` file, and a dump of 100 new
#   abstracts made the same way;
# - the index, built with `papers index --embeddings FILE --no-verify`
#   (wall and peak RSS);
# - medians over RUNS (default 5) cold runs of: hybrid `search`, `search
#   --mode lexical`, `similar ID`, `show ID`, `info`; then adding the
#   100-abstract dump (embedded by the model, once) and `index` of it again
#   with nothing new;
# - recall@10 of `similar --graph` against `similar --exact` over 20 ids;
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

# Seconds and peak RSS (MB) of one command: "S MB".
measure() {
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || {
    cat "$work/stderr" >&2
    return 1
  }
  awk '{printf "%s %.0f\n", $1, $2 / 1024}' "$work/time"
}

# Median wall (ms) and the largest RSS (MB) over $runs runs.
median() {
  for _ in $(seq "$runs"); do measure "$@"; done |
    sort -n | awk '{t[NR] = $1; if ($2 > m) m = $2} END {printf "%.0f ms, %d MB\n", t[int((NR + 1) / 2)] * 1000, m}'
}

generate() { # N DIR
  python3 - "$1" "$2" "$arxiv" <<'EOF'
import gzip, json, math, random, sys
n, out, source = int(sys.argv[1]), sys.argv[2], sys.argv[3]
rng = random.Random(n)
sentences, titles = [], []
with gzip.open(source, "rt") as f:
    for line in f:
        r = json.loads(line)
        titles.append(" ".join(r["title"].split()))
        text = " ".join(r["summary"].split())
        sentences.extend(s.strip() + "." for s in text.split(". ") if len(s) > 30)
dim, centres = 384, max(1, n // 100)
def unit(v):
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v]
centre = [unit([rng.gauss(0, 1) for _ in range(dim)]) for _ in range(min(centres, 10000))]
def text():
    return " ".join(rng.choice(sentences) for _ in range(rng.randint(4, 8)))
with open(f"{out}/collection.jsonl", "w") as f:
    for i in range(n):
        c = centre[rng.randrange(len(centre))]
        v = unit([x + rng.gauss(0, 0.04) for x in c])
        f.write(json.dumps({"id": f"syn-{i}", "title": rng.choice(titles), "abstract": text(),
                            "embedding": [round(x, 5) for x in v]}) + "\n")
with open(f"{out}/new.txt", "w") as f:
    f.write("Daily Papers\n\n" + "\n\n".join(text() + " (new)" for _ in range(100)) + "\n")
EOF
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
  show="$(median "$papers" -q --index "$index" show "$id")"
  info="$(median "$papers" -q --index "$index" info)"
  added="$(measure "$papers" -q --index "$index" index "$work/new.txt")"
  noop="$(median "$papers" -q --index "$index" index "$work/new.txt")"
  echo "== $n: recall" >&2
  recall="$("$papers" --index "$index" list | head -n 20 | sed 's/.*"id":"\([0-9a-f]*\)".*/\1/' |
    while read -r one; do
      exact="$("$papers" -q --index "$index" similar --exact -k 10 "$one" | sed 's/.*"id":"\([0-9a-f]*\)".*/\1/' | sort)"
      graph="$("$papers" -q --index "$index" similar --graph -k 10 "$one" | sed 's/.*"id":"\([0-9a-f]*\)".*/\1/' | sort)"
      comm -12 <(echo "$exact") <(echo "$graph") | wc -l
    done | awk '{s += $1} END {printf "%.3f", s / (NR * 10)}')"
  disk="$(du -sm "$index" | cut -f1)"
  raw="$(python3 -c "
import json,sys
t=0
for l in open('$work/collection.jsonl'):
    r=json.loads(l); t+=len(r['title'])+len(r['abstract'])+4*len(r['embedding'])
print(round(t/2**20))")"
  rows+=("| $n | ${built% *} s, ${built#* } MB | $search | $lexical | $similar | $show | $info | ${added% *} s, ${added#* } MB | $noop | $recall | $disk MB / $raw MB |")
done

echo
echo "| records | build (index --embeddings) | search (hybrid) | search --mode lexical | similar ID | show ID | info | add 100 new | index, nothing new | recall@10 graph vs exact | disk / (texts + f32) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
