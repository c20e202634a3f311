#!/usr/bin/env bash
# Prepares the GPU check: a self-contained folder to carry to the GPU
# machine (no network, no Rust there), and runs its CPU dry run here.
#
#   bench/gpu-check.sh prepare [--cpu] [DIR]   build and fill DIR
#                                              (default target/gpu-check)
#   bench/gpu-check.sh dry-run [DIR]           prepare --cpu, then run the
#                                              folder's check on this CPU,
#                                              small, as a test of the folder
#
# The folder: `papers` (stripped; built with --features cuda by
# bench/cuda.sh with the CUDA 13.0 toolkit pinned, see ../shared/GPU.md, or
# the CPU build with --cpu), `model/` (the sentence-transformers folder
# papers uses), `parity.txt` (the seed abstracts, one per line) with
# `fixtures.jsonl` (sentence-transformers' stored vectors of them, for a
# machine without it), `texts.txt.gz` (title + abstract of the arXiv
# records, the `embed` input), `records.jsonl.gz` (the arXiv records, the
# `index` input), and `run.sh` + `compare.py`. There, one command:
#
#   ./run.sh                        # --device cuda, 60,000 texts, all records
set -euo pipefail
cd "$(dirname "$0")/.."

what="${1:-}"
shift || true
cpu=0
if [ "${1:-}" = "--cpu" ]; then cpu=1; shift; fi
dir="${1:-${CARGO_TARGET_DIR:-target}/gpu-check}"
case "$what" in
  prepare) ;;
  dry-run) cpu=1 ;;
  *) echo "usage: bench/gpu-check.sh prepare [--cpu] [DIR] | dry-run [DIR]" >&2; exit 2 ;;
esac
shared=../shared
[ -d "$shared/seeds" ] || { echo "gpu-check.sh: needs ../shared (seeds, fixtures, bench/arxiv)" >&2; exit 1; }

if [ "$cpu" = 1 ]; then
  cargo build --release --quiet
  bin="${CARGO_TARGET_DIR:-target}/release/papers"
else
  # The driver there takes PTX up to ISA 9.0: the 13.0 toolkit (GPU.md).
  PAPERS_CUDA_NVCC="${PAPERS_CUDA_NVCC:-13.0.88}" CUDARC_CUDA_VERSION="${CUDARC_CUDA_VERSION:-13000}" \
    bench/cuda.sh build
  bin="${CARGO_TARGET_DIR:-target}/cuda/target/release/papers"
fi

rm -rf "$dir"
mkdir -p "$dir"
cp "$bin" "$dir/papers"
strip "$dir/papers" 2>/dev/null || true
model="$("$dir/papers" model --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["dir"])')"
cp -r "$model" "$dir/model"
cp bench/gpu/run.sh bench/gpu/compare.py "$dir/"
chmod +x "$dir/run.sh"
python3 - "$shared" "$dir" <<'PY'
import gzip, hashlib, json, os, sys
shared, out = sys.argv[1], sys.argv[2]
# The seed abstracts, one per line, and the stored vectors keyed by line.
stored = {}
for line in open(os.path.join(shared, "fixtures", "reference_embeddings.jsonl"), encoding="utf-8"):
    r = json.loads(line)
    if r.get("sha256"):
        stored[r["sha256"]] = r["embedding"]
seen, parity, fixtures = set(), [], []
for name in sorted(os.listdir(os.path.join(shared, "seeds"))):
    text = open(os.path.join(shared, "seeds", name), encoding="utf-8").read()
    for p in (p.strip() for p in text.split("\n\n")[1:]):
        if not p or p in seen:
            continue
        seen.add(p)
        line = " ".join(l.strip() for l in p.splitlines())
        parity.append(line)
        key = hashlib.sha256(p.encode()).hexdigest()
        if key in stored:
            fixtures.append({"sha256": hashlib.sha256(line.encode()).hexdigest(), "embedding": stored[key]})
open(os.path.join(out, "parity.txt"), "w", encoding="utf-8").write("\n".join(parity) + "\n")
with open(os.path.join(out, "fixtures.jsonl"), "w", encoding="utf-8") as f:
    for r in fixtures:
        f.write(json.dumps(r) + "\n")
# The arXiv records (id, title, summary only) and their texts as papers
# embeds them: title, a space, abstract (the check's embed input).
records = [json.loads(l) for l in gzip.open(os.path.join(shared, "bench", "arxiv", "arxiv-74k.jsonl.gz"), "rt", encoding="utf-8")]
with gzip.open(os.path.join(out, "records.jsonl.gz"), "wt", encoding="utf-8") as f:
    for r in records:
        f.write(json.dumps({"id": r["id"], "title": r["title"], "summary": r["summary"]}) + "\n")
with gzip.open(os.path.join(out, "texts.txt.gz"), "wt", encoding="utf-8") as f:
    for r in records:
        title = " ".join(r["title"].split())
        f.write(f"{title} {' '.join(r['summary'].split())}\n")
print(f"{len(parity)} parity texts ({len(fixtures)} with stored vectors), {len(records)} records", file=sys.stderr)
PY
du -sh "$dir" >&2
echo "prepared $dir: carry it to the GPU machine and run ./run.sh there" >&2

if [ "$what" = dry-run ]; then
  echo "== dry run on this CPU: 100 texts, 100 records" >&2
  "$dir/run.sh" --device cpu --texts 100 --records 100
fi
