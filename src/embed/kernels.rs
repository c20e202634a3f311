//! candle's CUDA kernels compiled for the card before the first batch.
//!
//! candle ships its kernels as PTX, which the driver compiles for the card
//! the first time a module is loaded: the first CUDA call on a fresh H200
//! took 15.8 s. candle loads a module on the first use of one of its kernels,
//! one module after another and under one lock, so that compilation runs on
//! one core. Here every module the encoder uses is loaded at once, one
//! thread each, as soon as the device opens: the driver compiles them side
//! by side and keeps the results in its compute cache (`~/.nv/ComputeCache`,
//! or `CUDA_CACHE_PATH`), where candle's own loads then find them. Where the
//! cache is off (`CUDA_CACHE_DISABLE=1`) this only costs the compilation
//! once more, so `PAPERS_CUDA_PRECOMPILE=0` turns it off.

use candle_core::cuda_backend::cudarc::nvrtc::Ptx;
use candle_core::cuda_backend::{kernels, CudaDevice};

/// The kernel modules a BERT forward pass uses, in any precision: scaling,
/// element-wise arithmetic, casts, fills, the embedding lookup, reductions
/// (softmax, layer norm, pooling), selections and unary functions (GELU).
const ENCODER: [&kernels::Module; 8] = [
    &kernels::AFFINE,
    &kernels::BINARY,
    &kernels::CAST,
    &kernels::FILL,
    &kernels::INDEXING,
    &kernels::REDUCE,
    &kernels::TERNARY,
    &kernels::UNARY,
];

/// Compiles [`ENCODER`]'s modules on `device`'s card side by side and waits
/// for them. A module that fails here is left to candle's own load, which
/// reports the failure if it recurs.
pub fn precompile(device: &CudaDevice) {
    if std::env::var("PAPERS_CUDA_PRECOMPILE").is_ok_and(|v| v == "0") {
        return;
    }
    let context = device.cuda_stream().context().clone();
    std::thread::scope(|scope| {
        for module in ENCODER {
            let context = &context;
            scope.spawn(move || context.load_module(Ptx::from_src(module.ptx())).map(drop));
        }
    });
}
