#!/usr/bin/env bash
# The distributed hand-off, run on a real engine: PySpark in local mode
# pipes shards of JSON Lines records through `papers embed --records` and
# writes Parquet with Spark's own writer, which `papers index --embeddings`
# then reads.
#
#   bench/spark.sh [RECORDS.jsonl[.gz]] [N]
#
# Defaults: the first 200 records of ../shared/bench/arxiv. Needs a JDK
# (17 or later: Debian's openjdk-17-jre-headless) and Python; pyspark goes
# into a throwaway venv under $CARGO_TARGET_DIR/spark (or
# $PAPERS_SPARK_PYTHON, a Python that has pyspark). Builds papers (release)
# unless $PAPERS_BIN names a binary. Prints each step's time.
set -euo pipefail
cd "$(dirname "$0")/.."

source_file="${1:-../shared/bench/arxiv/arxiv-74k.jsonl.gz}"
count="${2:-200}"
partitions="${PAPERS_SPARK_PARTITIONS:-2}"
work="${CARGO_TARGET_DIR:-target}/spark"
mkdir -p "$work"
work="$(cd "$work" && pwd)"

started=$(date +%s)
step() { echo "== [$(($(date +%s) - started)) s] $*"; }

command -v java >/dev/null || { echo "bench/spark.sh: no java; install a JDK (openjdk-17-jre-headless)" >&2; exit 1; }
python="${PAPERS_SPARK_PYTHON:-}"
if [ -z "$python" ]; then
  python="$work/venv/bin/python"
  if ! "$python" -c "import pyspark" 2>/dev/null; then
    step "pyspark into $work/venv"
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install -q pyspark
  fi
fi
"$python" -c "import pyspark; print('pyspark', pyspark.__version__)"
java -version 2>&1 | head -1

papers="${PAPERS_BIN:-}"
if [ -z "$papers" ]; then
  step "cargo build --release"
  cargo build --release --quiet
  papers="$(pwd)/${CARGO_TARGET_DIR:-target}/release/papers"
fi

step "input: $count records of $source_file"
input="$work/records.jsonl"
case "$source_file" in
  *.gz) { gzip -dc "$source_file" || true; } | head -n "$count" > "$input" ;;
  *) head -n "$count" "$source_file" > "$input" ;;
esac

step "spark: $partitions partitions through papers embed --records"
rm -rf "$work/parquet"
"$python" bench/spark_embed.py "$papers" "$input" "$work/parquet" "$partitions"
ls -la "$work/parquet" | grep -E "part-|_SUCCESS"

step "papers index --embeddings part-*.parquet"
rm -rf "$work/index"
"$papers" index --index "$work/index" --embeddings "$work/parquet"/part-*.parquet
"$papers" info --index "$work/index"
title=$(head -n 1 "$input" | "$python" -c "import json,sys; print(json.loads(sys.stdin.readline())['title'])")
step "search for the first record's title: $title"
"$papers" search --index "$work/index" -k 3 "$title"
step "done"
