#!/usr/bin/env bash
# The GPU check, run where the GPU is, from the folder bench/gpu-check.sh
# prepared (nothing else needed: no network, no Rust). Prints one table:
# parity with sentence-transformers on the same device and weights,
# abstracts/s of `papers embed` and `papers index` beside
# sentence-transformers fp32 and fp16, and the first call's time.
#
#   ./run.sh [--device cuda|cpu] [--texts N] [--records N] [--precisions "f32 f16 bf16"]
#
# --device cpu is the dry run (any machine). Defaults: cuda, 60,000 texts,
# every record in records.jsonl.gz, papers in f32, f16 and bf16 (on a CPU:
# f32 and f16; `index` runs in f32 and f16 only). Keeps to a few minutes on
# an H200.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
device=cuda texts=60000 records=0 precisions=""
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device="$2"; shift ;;
    --precisions) precisions="$2"; shift ;;
    --texts) texts="$2"; shift ;;
    --records) records="$2"; shift ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export PAPERS_MODEL_DIR="$here/model" HF_HUB_OFFLINE=1 PAPERS_CACHE_DIR="$work/cache"
papers="$here/papers"
python="${PYTHON:-python3}"
say() { echo "== $*" >&2; }

if [ "$device" = cuda ]; then
  # The CUDA runtime libraries wherever this machine keeps them (a PyTorch
  # environment's nvidia/cu13/lib, or a toolkit), and the driver's libcuda.
  libs="$(find / -xdev \( -name 'libcublas.so.1[23]*' -o -name 'libcudart.so.1[23]*' -o -name 'libcurand.so.10*' -o -name 'libnvrtc.so.1[23]*' \) 2>/dev/null | xargs -r -n1 dirname | sort -u | tr '\n' ':')"
  export LD_LIBRARY_PATH="${libs}${LD_LIBRARY_PATH:-}"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >&2
fi

# The inputs: the parity texts (the seed abstracts), the speed texts
# (title + abstract of arXiv records, as `papers index` embeds them), and
# the records to index.
{ gzip -dc "$here/texts.txt.gz" || true; } | head -n "$texts" >"$work/texts.txt"
if [ "$records" -gt 0 ]; then
  { gzip -dc "$here/records.jsonl.gz" || true; } | head -n "$records" >"$work/records.jsonl"
else
  gzip -dc "$here/records.jsonl.gz" >"$work/records.jsonl"
fi
[ -n "$precisions" ] || { [ "$device" = cpu ] && precisions="f32 f16" || precisions="f32 f16 bf16"; }
n_texts=$(wc -l <"$work/texts.txt")
n_records=$(wc -l <"$work/records.jsonl")

clock() { date +%s.%N; }
# The first call, three ways, each a fresh process (load, kernels, one
# text): with an empty driver cache and candle compiling its kernel modules
# one at a time as it first uses them (PAPERS_CUDA_PRECOMPILE=0); with an
# empty cache and papers compiling them side by side at the device's start
# (the default); then again with that cache warm. Every later run uses it.
first_call() {
  local t0
  t0=$(clock)
  "$papers" -q embed --device "$device" "first call" >/dev/null
  echo "$(clock) - $t0" | bc
}
say "first call on $device, empty driver cache, kernels compiled as candle uses them"
first_serial=$(CUDA_CACHE_PATH="$work/jit-serial" PAPERS_CUDA_PRECOMPILE=0 first_call)
say "first call on $device, empty driver cache, kernels compiled side by side"
export CUDA_CACHE_PATH="$work/jit"
first=$(first_call)
say "first call on $device, driver cache warm"
first_warm=$(first_call)

rows="$work/rows.txt"
: >"$rows"
pairs=()
for p in $precisions; do
  say "$p: parity, papers embed of $(wc -l <"$here/parity.txt") seed abstracts"
  "$papers" -q embed --device "$device" --precision "$p" <"$here/parity.txt" >"$work/parity-$p.jsonl"
  pairs+=("$p=$work/parity-$p.jsonl")

  say "$p: papers embed, $n_texts texts"
  t0=$(clock)
  "$papers" -q embed --device "$device" --precision "$p" <"$work/texts.txt" >/dev/null
  embed_s=$(echo "$(clock) - $t0" | bc)

  index_s=0 windows=0
  if [ "$p" != bf16 ]; then
    say "$p: papers index, $n_records records"
    t0=$(clock)
    "$papers" -q index --device "$device" --precision "$p" --index "$work/index-$p" "$work/records.jsonl" >/dev/null
    index_s=$(echo "$(clock) - $t0" | bc)
    windows=$("$papers" info --json --index "$work/index-$p" | "$python" -c 'import json,sys; print(json.load(sys.stdin)["windows"])')
  fi
  echo "$p $embed_s $index_s $windows" >>"$rows"
done

say "sentence-transformers on $device (when installed)"
"$python" "$here/compare.py" "$here/model" "$device" "$here/parity.txt" \
  "$here/fixtures.jsonl" "$work/texts.txt" "${pairs[@]}" >"$work/st.json"

"$python" - "$work/st.json" "$device" "$first_serial" "$first" "$first_warm" "$n_texts" "$n_records" "$rows" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
device, first_serial, first, first_warm, n_texts, n_records, rows = sys.argv[2:]
n_texts, n_records = int(n_texts), int(n_records)
first_serial, first, first_warm = float(first_serial), float(first), float(first_warm)
rate = lambda n, s: f"{n / s:,.0f}/s" if s > 0 else "n/a"
print(f"| measure ({device}) | precision | papers | sentence-transformers {st.get('version', '(not installed)')} |")
print("|---|---|---|---|")
for line in open(rows):
    p, embed_s, index_s, windows = line.split()
    embed_s, index_s, windows = float(embed_s), float(index_s), int(windows)
    print(f"| parity, {st['parity_texts']} seed abstracts, same weights | {p} | min cosine {st['min_cosine'][p]:.8f} to {st['against']} | — |")
    print(f"| `embed`, {n_texts:,} title + abstract texts, whole process | {p} | {embed_s:.1f} s = {rate(n_texts, embed_s)} | "
          f"fp32 batch 256: {st.get('fp32', 'n/a')}; fp16 batch 256: {st.get('fp16', 'n/a')} (encode only) |")
    if index_s > 0:
        print(f"| `index`, {n_records:,} records (+{windows:,} windows), whole process | {p} | {index_s:.1f} s = {rate(n_records, index_s)} | — |")
print(f"| first call, fresh process (load + one text), empty driver cache, kernels compiled as used (PAPERS_CUDA_PRECOMPILE=0) | f32 | {first_serial:.2f} s | — |")
print(f"| first call, fresh process, empty driver cache, kernels compiled side by side (default) | f32 | {first:.2f} s | — |")
print(f"| first call, fresh process, driver cache warm | f32 | {first_warm:.2f} s | — |")
PY
