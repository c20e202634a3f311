#!/usr/bin/env bash
# Build papers with CUDA from the CUDA toolkit's Python wheels, and check it.
#
#   bench/cuda.sh build    toolkit into a throwaway venv, then
#                          `cargo build --release --features cuda` and
#                          `cargo clippy --features cuda`; needs no GPU
#   bench/cuda.sh check    build, then on this machine's GPU: parity with
#                          sentence-transformers' fixture vectors, and
#                          abstracts/s over the first 20,000 arXiv records,
#                          printed as one table
#
# Everything lands under $CARGO_TARGET_DIR/cuda (default target/cuda): the
# venv, the unversioned library links, the libcuda link stub and a cargo
# target directory of its own. Nothing else on the machine is touched.
#
# Why each step (see docs/design.md, "Devices"):
# - nvidia-cuda-nvcc and nvidia-cuda-runtime 13.5 put nvcc, its headers and
#   libcudart in one tree, site-packages/nvidia/cu13: CUDA_ROOT points there.
#   cuda_fp16.h includes <nv/target>, which is CCCL's and in neither wheel:
#   nvidia-cuda-cccl (the newest, 13.3.5.0.6 when this was written; none is
#   numbered 13.5) puts it in include/cccl, where nvcc.profile looks.
# - cudarc 0.19.10 (candle 0.9.2's) knows CUDA up to 13.4 and panics on
#   13.5's `nvcc --version`; CUDARC_CUDA_VERSION=13040 selects the 13.4 API,
#   which 13.5's libraries still serve.
# - candle's kernels are compiled for CUDA_COMPUTE_CAP (default 90: H100 and
#   H200) when there is no nvidia-smi to ask.
# - candle asks cudarc for dynamic linking, so the link wants libcublas,
#   libcublasLt, libcurand, libnvrtc and libcudart by their unversioned names
#   (the wheels ship only lib*.so.N), and libcuda.so, which comes with the
#   GPU driver and is in no wheel. A stub with the driver's soname and one
#   function per `cu*` symbol cudarc declares serves the link, as the
#   toolkit's own stubs/libcuda.so does; each returns
#   CUDA_ERROR_STUB_LIBRARY (34). At run time the driver's libcuda.so.1 is
#   loaded instead, so the binary starts only where a driver is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

what="${1:-build}"
case "$what" in
  build | check) ;;
  *)
    echo "usage: bench/cuda.sh build|check" >&2
    exit 2
    ;;
esac

work="${CARGO_TARGET_DIR:-target}/cuda"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
# A target directory of its own: the CUDA binary must not replace the CPU one.
export CARGO_TARGET_DIR="$work/target"
python="${PAPERS_BENCH_PYTHON:-python3}"
nvcc_version="${PAPERS_CUDA_NVCC:-13.5.37}"
# A 13.0 build (what a CUDA 13.0 driver runs: it refuses PTX ISA 9.5, which
# 13.5's NVVM writes) pins the compiler's other parts to 13.0 as well.
pins=""
case "$nvcc_version" in
  13.0.*) pins="nvidia-nvvm==$nvcc_version nvidia-cuda-crt==$nvcc_version nvidia-cuda-nvrtc==$nvcc_version nvidia-cuda-cccl==13.0.85" ;;
esac

started=$(date +%s)
step() { echo "== [$(($(date +%s) - started)) s] $*"; }

# 1. The toolkit, from wheels, into a venv of our own.
venv="$work/venv"
if [ ! -x "$venv/bin/python" ]; then
  step "venv at $venv"
  "$python" -m venv "$venv"
fi
if [ ! -x "$venv/lib/python"*/site-packages/nvidia/cu13/bin/nvcc ] ||
  [ ! -d "$venv/lib/python"*/site-packages/nvidia/cu13/include/cccl ]; then
  step "installing the CUDA wheels"
  # pip's download cache too stays under $work.
  PIP_CACHE_DIR="$work/pip-cache" "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "nvidia-cuda-nvcc==$nvcc_version" "nvidia-cuda-runtime==$nvcc_version" \
    nvidia-cublas nvidia-curand nvidia-cuda-nvrtc nvidia-cuda-cccl $pins
fi
cuda_root="$(echo "$venv"/lib/python*/site-packages/nvidia/cu13)"
test -x "$cuda_root/bin/nvcc" || {
  echo "bench/cuda.sh: no nvcc under $cuda_root after installing the wheels" >&2
  exit 1
}

# 2. Link names: unversioned links to every library the wheels ship.
links="$work/lib"
mkdir -p "$links"
for lib in "$cuda_root"/lib/lib*.so.*; do
  base="$(basename "$lib")"
  ln -sf "$lib" "$links/${base%%.so.*}.so"
done

# 3. The driver stub, from the symbols cudarc's driver bindings declare.
cudarc="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cudarc-0.19.* 2>/dev/null | tail -n 1 || true)"
if [ -z "$cudarc" ]; then
  cargo fetch --quiet
  cudarc="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cudarc-0.19.* | tail -n 1)"
fi
stubs="$work/stubs"
mkdir -p "$stubs"
if [ ! -f "$stubs/libcuda.so" ] || [ "$cudarc/src/driver/sys/mod.rs" -nt "$stubs/libcuda.so" ]; then
  step "libcuda link stub from $(basename "$cudarc")"
  grep -ohE 'pub unsafe fn cu[A-Za-z0-9_]+' "$cudarc"/src/driver/sys/*.rs |
    sed 's/pub unsafe fn //' | sort -u |
    sed 's/.*/int &(void) { return 34; }/' >"$stubs/libcuda.c"
  cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$stubs/libcuda.so" "$stubs/libcuda.c"
  echo "   $(wc -l <"$stubs/libcuda.c") symbols"
fi

export CUDA_ROOT="$cuda_root" CUDA_PATH="$cuda_root"
export PATH="$cuda_root/bin:$PATH"
export CUDARC_CUDA_VERSION="${CUDARC_CUDA_VERSION:-13040}"
export CUDA_COMPUTE_CAP="${CUDA_COMPUTE_CAP:-90}"
export LIBRARY_PATH="$links:$stubs${LIBRARY_PATH:+:$LIBRARY_PATH}"
# At run time: the wheels' libraries; the driver's libcuda.so.1 from the system.
export LD_LIBRARY_PATH="$cuda_root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

step "nvcc: $(nvcc --version | grep -o 'release [0-9.]*'), CUDARC_CUDA_VERSION=$CUDARC_CUDA_VERSION, CUDA_COMPUTE_CAP=$CUDA_COMPUTE_CAP"
step "cargo build --release --features cuda"
cargo build --release --features cuda
step "cargo clippy --features cuda --all-targets -- -D warnings"
cargo clippy --release --features cuda --all-targets -- -D warnings
bin="$CARGO_TARGET_DIR/release/papers"
step "built $bin"
if ldd "$bin" | grep -q 'libcuda.so.1 => not found'; then
  echo "   (no GPU driver here: the binary needs libcuda.so.1 to start)"
fi

[ "$what" = check ] || exit 0

# 4. On a GPU: parity, then speed, as one table.
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
# The model comes from the cache (PAPERS_CACHE_DIR), fetched if missing.
"$bin" model >/dev/null
step "parity and speed on the GPU"
cargo bench --features cuda --bench embed -- gpu "${PAPERS_GPU_RECORDS:-20000}"
