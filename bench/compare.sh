#!/usr/bin/env bash
# papers against sentence-transformers on this machine, side by side.
#
#   bench/compare.sh [--install] [--runs N] [--quick-runs M] [--seeds DIR]
#
# Builds release, then measures (medians over N runs, default 3; the
# commands that take milliseconds over M runs, default 21, as one run of
# those is at the mercy of the machine's noise):
#   - indexing the seed dumps from scratch: abstracts/s, wall, peak RSS, in
#     f32 (--precision f32) and, where the processor has AMX, in bf16 (the
#     default there), alternating;
#   - sentence-transformers encoding the same unique abstracts (CPU, as many
#     torch threads as cores) from the same model folder, in f32 and with
#     the model in bf16, alternating: abstracts/s, and PyTorch's f32 and bf16
#     matrix products on the same shape as papers' product rates;
#   - a cold `papers search` and a cold Python process that loads the model,
#     embeds one query and ranks the corpus: wall and peak RSS;
#   - `papers similar` and a no-op re-index: wall and peak RSS;
#   - the encoder's GFLOP/s against the matrix products measured in this run
#     (candle's f32 matmul, papers' bf16 tile product).
# Prints both ratios: papers f32 / ST f32 and papers bf16 / ST bf16.
#
# --install creates a throwaway venv (under the cargo target dir) and installs
# sentence-transformers into it from PyPI. Without it, `python3` must already
# import sentence_transformers, or set PAPERS_BENCH_PYTHON to one that does;
# when none does, the Python columns are left out.
# Benchmarks are not tests: nothing here fails on a slow figure.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
quick=21
install=0
seeds=../shared/seeds
while [ $# -gt 0 ]; do
  case "$1" in
    --install) install=1 ;;
    --runs) runs="$2"; shift ;;
    --quick-runs) quick="$2"; shift ;;
    --seeds) seeds="$2"; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "compare.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
[ -d "$seeds" ] || { echo "compare.sh: seed folder '$seeds' not found" >&2; exit 1; }

target="${CARGO_TARGET_DIR:-target}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
query="positional encoding length generalization"

echo "== building release" >&2
cargo build --release --quiet
cargo bench --bench embed --no-run --quiet 2>/dev/null
papers="$target/release/papers"

python="${PAPERS_BENCH_PYTHON:-python3}"
if [ "$install" = 1 ]; then
  venv="$target/bench-venv"
  if [ ! -x "$venv/bin/python" ]; then
    echo "== installing sentence-transformers into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet sentence-transformers
  fi
  python="$venv/bin/python"
fi
have_st=0
"$python" -c 'import sentence_transformers' 2>/dev/null && have_st=1

# Wall time (nanosecond clock; time -v rounds to 10 ms) and peak RSS (from
# time -v) of a command: prints "wall_seconds peak_rss_kb".
measure() {
  local start end
  start="$(date +%s%N)"
  /usr/bin/time -v -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || {
    echo "compare.sh: '$*' failed:" >&2; cat "$work/stderr" >&2; exit 1; }
  end="$(date +%s%N)"
  awk -v ns="$((end - start))" '/Maximum resident set size/ { rss = $NF }
    END { printf "%.4f %d\n", ns / 1e9, rss }' "$work/time"
}
# Median of the first field and the largest second field over N lines.
summarise() { sort -n | awk '{ w[NR] = $1; if ($2 > r) r = $2 }
  END { printf "%.3f %d\n", w[int((NR + 1) / 2)], r }'; }

model_dir="$("$papers" -q model --json | jq -r .dir)"
index="$work/index"

# Whether bulk work runs in bf16 on AMX here (the default where it can).
amx=0
seq 20 | sed 's/^/probe text /' | "$papers" -v embed 2>&1 >/dev/null | grep -q "bf16 on AMX" && amx=1

echo "== papers: index $seeds from scratch x$runs (f32$([ "$amx" = 1 ] && echo ", bf16"))" >&2
: >"$work/index-bf16.raw"
for _ in $(seq "$runs"); do
  measure "$papers" -q --index "$index" index --rebuild --precision f32 "$seeds" >>"$work/index-f32.raw"
  if [ "$amx" = 1 ]; then
    measure "$papers" -q --index "$work/index-bf16" index --rebuild --precision bf16 "$seeds" \
      >>"$work/index-bf16.raw"
  fi
done
summarise <"$work/index-f32.raw" >"$work/index.txt"
read -r index_wall index_rss <"$work/index.txt"
bf16_wall="" bf16_rss=""
if [ "$amx" = 1 ]; then
  summarise <"$work/index-bf16.raw" >"$work/index-bf16.txt"
  read -r bf16_wall bf16_rss <"$work/index-bf16.txt"
fi
records="$("$papers" --index "$index" info --json | jq .records)"

echo "== papers: cold search, similar, no-op re-index x$quick" >&2
# The rebuilds above leave dirty pages; flushing them now keeps writeback
# from running under the millisecond measurements.
sync
some_id="$("$papers" --index "$index" search "$query" -k 1 | jq -r .id)"
"$papers" -q --index "$index" search "$query" >/dev/null # page cache warm, as for Python
for _ in $(seq "$quick"); do measure "$papers" -q --index "$index" search "$query"; done \
  | summarise >"$work/search.txt"
for _ in $(seq "$quick"); do measure "$papers" -q --index "$index" search --mode lexical "$query"; done \
  | summarise >"$work/lexical.txt"
for _ in $(seq "$quick"); do measure "$papers" -q --index "$index" similar "$some_id"; done \
  | summarise >"$work/similar.txt"
for _ in $(seq "$quick"); do measure "$papers" -q --index "$index" index "$seeds"; done \
  | summarise >"$work/noop.txt"
read -r search_wall search_rss <"$work/search.txt"
read -r similar_wall similar_rss <"$work/similar.txt"
read -r lexical_wall lexical_rss <"$work/lexical.txt"
read -r noop_wall noop_rss <"$work/noop.txt"

echo "== encoder work and matmul ceiling" >&2
# The seeds as given (a clean clone has no ../shared), and a failure said,
# not swallowed: set -e stops the script with the bench's own error.
PAPERS_SEEDS="$(cd "$seeds" && pwd)" cargo bench --quiet --bench embed -- flops >"$work/flops.txt" \
  || { echo "compare.sh: cargo bench --bench embed -- flops failed (above)" >&2; exit 1; }
cargo bench --quiet --bench embed -- matmul >"$work/matmul.txt" \
  || { echo "compare.sh: cargo bench --bench embed -- matmul failed (above)" >&2; exit 1; }
gflop="$(awk '/encoder_gflop/ { print $2 }' "$work/flops.txt")"
window_gflop="$(awk '/window_gflop/ { print $2 }' "$work/flops.txt")"
windows="$(awk '/^windows/ { print $2 }' "$work/flops.txt")"
pieces="$(awk '/word_pieces/ { print $2 }' "$work/flops.txt")"
ceiling="$(awk '/^matmul_gflops/ { print $2 }' "$work/matmul.txt")"
bf16_ceiling="$(awk '/^matmul_bf16_gflops/ { print $2 }' "$work/matmul.txt")"

st_rate="" st_bf16_rate="" st_bf16_cosine="" torch_f32="" torch_bf16=""
st_query_wall="" st_query_rss=""
if [ "$have_st" = 1 ]; then
  # The same unique abstracts papers indexed, in its order.
  "$papers" --index "$index" list | jq -r '.text | @json' >"$work/texts.jsonl"
  cat >"$work/st_encode.py" <<'EOF'
import json, os, sys, time
import numpy as np, torch
from sentence_transformers import SentenceTransformer
torch.set_num_threads(os.cpu_count())
model_dir, texts_path, runs, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
texts = [json.loads(line) for line in open(texts_path)]
models = {
    "f32": SentenceTransformer(model_dir, device="cpu"),
    "bf16": SentenceTransformer(model_dir, device="cpu", model_kwargs={"torch_dtype": torch.bfloat16}),
}
times, vectors = {name: [] for name in models}, {}
for model in models.values():
    model.encode(texts[:32])
for _ in range(runs):
    for name, model in models.items():
        start = time.perf_counter()
        vectors[name] = model.encode(texts, batch_size=32, normalize_embeddings=True)
        times[name].append(time.perf_counter() - start)
np.save(out, vectors["f32"])
median = {name: sorted(t)[len(t) // 2] for name, t in times.items()}
cosine = (vectors["f32"] * vectors["bf16"].astype(np.float32)).sum(axis=1).min()
# PyTorch's own matrix products on the shape papers' rates use.
a, b = torch.randn(2048, 384), torch.randn(384, 1536)
rates = {}
for name, dtype in (("f32", torch.float32), ("bf16", torch.bfloat16)):
    x, y = a.to(dtype), b.to(dtype)
    x @ y
    best = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(10):
            x @ y
        best.append(2 * 2048 * 384 * 1536 * 10 / (time.perf_counter() - start) / 1e9)
    rates[name] = sorted(best)[2]
print(f"{len(texts) / median['f32']:.2f} {len(texts) / median['bf16']:.2f} {cosine:.6f}"
      f" {rates['f32']:.1f} {rates['bf16']:.1f}")
EOF
  cat >"$work/st_query.py" <<'EOF'
import os, sys
import numpy as np, torch
from sentence_transformers import SentenceTransformer
torch.set_num_threads(os.cpu_count())
model_dir, vectors_path, query = sys.argv[1], sys.argv[2], sys.argv[3]
corpus = np.load(vectors_path)
model = SentenceTransformer(model_dir, device="cpu")
q = model.encode([query], normalize_embeddings=True)[0]
print(np.argsort(-(corpus @ q))[:10])
EOF
  echo "== sentence-transformers: encode $records abstracts x$runs, f32 and bf16" >&2
  read -r st_rate st_bf16_rate st_bf16_cosine torch_f32 torch_bf16 < <("$python" \
    "$work/st_encode.py" "$model_dir" "$work/texts.jsonl" "$runs" "$work/st.npy" 2>/dev/null)
  echo "== sentence-transformers: cold query x$runs" >&2
  for _ in $(seq "$runs"); do
    measure "$python" "$work/st_query.py" "$model_dir" "$work/st.npy" "$query"
  done | summarise >"$work/st_query.txt"
  read -r st_query_wall st_query_rss <"$work/st_query.txt"
fi

awk -v runs="$runs" -v records="$records" -v pieces="$pieces" -v gflop="$gflop" \
  -v wgflop="$window_gflop" -v windows="$windows" -v lw="$lexical_wall" -v lr="$lexical_rss" \
  -v ceiling="$ceiling" -v iw="$index_wall" -v ir="$index_rss" \
  -v sw="$search_wall" -v sr="$search_rss" -v mw="$similar_wall" -v mr="$similar_rss" \
  -v nw="$noop_wall" -v nr="$noop_rss" -v st="$st_rate" \
  -v qw="$st_query_wall" -v qr="$st_query_rss" -v cores="$(nproc)" -v quick="$quick" \
  -v bw="$bf16_wall" -v br="$bf16_rss" -v bceiling="$bf16_ceiling" -v stb="$st_bf16_rate" \
  -v stc="$st_bf16_cosine" -v tf="$torch_f32" -v tb="$torch_bf16" \
  -v cpu="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)" 'BEGIN {
  rate = records / iw; gfs = (gflop + wgflop) / iw
  printf "machine: %d cores of %s, %s; medians of %d runs (search, similar, re-index: %d)\n", cores, cpu, "'"$(uname -m)"'", runs, quick
  printf "seeds: %d abstracts, %d word pieces, %.0f GFLOP of encoder work", records, pieces, gflop
  printf " (papers also embeds %d windows of long abstracts: %.0f GFLOP more)\n\n", windows, wgflop
  printf "| measure | papers | sentence-transformers | target |\n|---|---|---|---|\n"
  printf "| index seeds from scratch, f32 | %.1f abstracts/s (%.1f s, %d MB peak) | %s | >= 2x ST, RSS < 600 MB |\n", \
    rate, iw, ir / 1024, st == "" ? "not run" : sprintf("%.1f abstracts/s", st)
  if (bw != "") printf "| index seeds from scratch, bf16 | %.1f abstracts/s (%.1f s, %d MB peak) | %s | |\n", \
    records / bw, bw, br / 1024, stb == "" ? "not run" : sprintf("%.1f abstracts/s (least cosine to f32 %s)", stb, stc)
  if (st != "") printf "| ratio papers f32 / ST f32 | %.2fx | | >= 2x |\n", rate / st
  if (st != "" && bw != "") printf "| ratio papers bf16 / ST bf16 | %.2fx | | >= 1.5x |\n", records / bw / stb
  if (st != "" && bw != "") printf "| ratio papers bf16 / ST f32 | %.2fx | | |\n", records / bw / st
  printf "| encoder GFLOP/s, f32, vs candle f32 matmul | %.1f of %.1f (%.0f%%) | %s | >= 50%% |\n", gfs, ceiling, \
    100 * gfs / ceiling, tf == "" ? "" : sprintf("PyTorch f32 matmul %.1f", tf)
  if (bw != "") printf "| encoder GFLOP/s, bf16, vs the bf16 tile product | %.1f of %.1f (%.0f%%) | %s | |\n", \
    (gflop + wgflop) / bw, bceiling, 100 * (gflop + wgflop) / bw / bceiling, \
    tb == "" ? "" : sprintf("PyTorch bf16 matmul %.1f", tb)
  printf "| cold search, whole process | %.0f ms, %d MB | %s | < 50 ms, < 150 MB |\n", \
    sw * 1000, sr / 1024, qw == "" ? "not run" : sprintf("%.0f ms, %d MB", qw * 1000, qr / 1024)
  printf "| search --mode lexical | %.0f ms, %d MB | | |\n", lw * 1000, lr / 1024
  printf "| similar ID | %.0f ms, %d MB | | < 20 ms |\n", mw * 1000, mr / 1024
  printf "| re-index, nothing new | %.0f ms, %d MB | | < 500 ms |\n", nw * 1000, nr / 1024
}'
