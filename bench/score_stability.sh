#!/usr/bin/env bash
# Does a right hit's score hold when unrelated papers join the index, or
# when words are added to the query? For each labelled query of
# eval/queries.jsonl, prints the score of its relevant paper (its best
# one, hybrid, --min-score 0 -k 10):
#   - on an index of the seeds alone (SEEDS_INDEX) and on one of the seeds
#     plus an unrelated collection (MIXED_INDEX, e.g. SciFact's abstracts);
#   - for the query, and for the query with WORDS appended.
# Then the median and largest changes.
#   bench/score_stability.sh SEEDS_INDEX MIXED_INDEX [WORDS]
set -euo pipefail
seeds=$1 mixed=$2 words=${3:-"for large language models"}
papers=${PAPERS:-target/release/papers}
score() { # index query relevant-prefixes...
  local index=$1 query=$2; shift 2
  "$papers" search --index "$index" --json --min-score 0 -k 10 -q "$query" |
    jq -r --argjson rel "$(printf '%s\n' "$@" | jq -R . | jq -s .)" \
      'select(.id as $id | any($rel[]; . as $p | $id | startswith($p))) | .score' | head -1
}
while IFS= read -r line; do
  query=$(jq -r .query <<<"$line")
  mapfile -t rel < <(jq -r '.relevant[]' <<<"$line")
  a=$(score "$seeds" "$query" "${rel[@]}")
  b=$(score "$mixed" "$query" "${rel[@]}")
  c=$(score "$seeds" "$query $words" "${rel[@]}")
  printf '%s\t%s\t%s\t%s\n' "${a:-NA}" "${b:-NA}" "${c:-NA}" "$query"
done < eval/queries.jsonl | tee /dev/stderr | python3 -c '
import sys, statistics as st
rows = [l.rstrip("\n").split("\t") for l in sys.stdin]
for i, name in [(1, "unrelated papers added"), (2, "words added")]:
    d = [float(r[i]) - float(r[0]) for r in rows if "NA" not in (r[0], r[i])]
    strong = [r for r in rows if r[0] != "NA" and float(r[0]) >= 0.5]
    kept = sum(1 for r in strong if r[i] != "NA" and float(r[i]) >= 0.5)
    print(f"{name}: {len(d)} queries, median change {st.median(d):+.3f}, "
          f"largest fall {min(d):+.3f}, largest rise {max(d):+.3f}; "
          f"{kept} of {len(strong)} right hits scored 0.5 or more stay there")
'
