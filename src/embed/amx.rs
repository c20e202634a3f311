//! Dense products in bf16 on the CPU's matrix unit (Intel AMX), for bulk
//! embedding where the processor has one.
//!
//! AMX adds eight tile registers (up to 16 rows of 64 bytes each) and one
//! instruction that matters here, `tdpbf16ps`: a 16 × 32 tile of bf16 times
//! a 32 × 16 one, accumulated into 16 × 16 f32. One such instruction is
//! 16,384 multiply-adds; on one core of the Xeons this was written on the
//! kernel below ran an 8192 × 384 by 384 × 1536 product at 560-665 GFLOP/s,
//! where gemm's f32 AVX-512 kernels reach about 160.
//!
//! - Weights are packed once, at load, into the layout the instruction
//!   reads (pairs of neighbouring inputs side by side, 16 outputs per tile
//!   row), rounded to bf16 to nearest even: [`Packed`].
//! - Inputs are rounded to bf16 32 rows at a time (AVX-512 BF16's
//!   `vcvtneps2bf16`, 16 values per instruction), into a per-thread
//!   buffer, right before their tiles are loaded.
//! - Products accumulate in f32, starting from the bias (a tile loaded with
//!   row stride 0 repeats the bias row), and are written out as f32.
//! - The weights' tiles and every per-thread buffer the tiles load from or
//!   store to start on a cache line (`aligned`), so that a 64-byte tile
//!   row is one line; the products' outputs (vectors handed on to candle)
//!   start where the allocator puts them.
//! - Attention's half of a layer runs per sequence ([`attention`]): the
//!   QKV projection straight into the layouts Q·Kᵀ and P·V read, both of
//!   those, and the output projection, all on the tiles. The
//!   feed-forward's two products run fused per four blocks of 32 rows
//!   ([`feed_forward`]). What surrounds the products (softmax, GELU, layer
//!   norm, pooling) computes in f32, and where it can, between the matrix
//!   unit's steps (the vector units and the tiles run side by side).
//!
//! The unit is found at run time ([`available`]): the CPU must report
//! `amx_tile`, `amx_bf16` and `avx512_bf16` (every processor with AMX so
//! far has the last), and Linux must grant the process the tile
//! state (`arch_prctl(ARCH_REQ_XCOMP_PERM)`), which it does once per
//! process. Anywhere else (other processors, other systems) `available` is
//! false and nothing here runs. The instructions are written in inline
//! assembly: Rust's AMX intrinsics are not stable.

use rayon::prelude::*;

use aligned::Aligned;

/// Rows and columns of one output block: 2 × 2 tiles of 16 × 16.
const BLOCK: usize = 32;
/// Inputs per tile step: 32 bf16 values make a 64-byte tile row.
const STEP: usize = 32;
/// bf16 values in one packed weight tile: 16 rows of 16 output pairs.
const TILE: usize = 16 * STEP;
/// Blocks of 32 rows that share one pass over a weight: each 32-output
/// strip of it (24 KB for 384 inputs) is read into L1 once and used for
/// four blocks. One pass per block read the feed-forward's two weights
/// (2.4 MB in bf16 for MiniLM, more than a core's 2 MB L2) from L3 for
/// every 32 rows.
const GROUP: usize = 4;

/// Whether this process can run [`product`]: the CPU has AMX with bf16 and
/// the system lets the process use its tiles. Checked once.
pub fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(tiles::enable)
}

/// A weight matrix (outputs × inputs, as PyTorch stores it) in bf16,
/// packed for the tile instructions: for each 16 outputs and each 32
/// inputs, one 1 KiB tile whose row `r` holds, for every output, inputs
/// `2r` and `2r + 1` side by side. Outputs and inputs are padded with
/// zeros to multiples of 32.
pub struct Packed {
    tiles: Aligned<u16>,
    outputs: usize,
    inputs: usize,
}

impl Packed {
    /// Packs `weight` (outputs × inputs, row-major f32).
    pub fn new(weight: &[f32], outputs: usize, inputs: usize) -> Packed {
        assert_eq!(
            weight.len(),
            outputs * inputs,
            "weight of {outputs}x{inputs}"
        );
        let (np, kp) = (
            outputs.next_multiple_of(BLOCK),
            inputs.next_multiple_of(STEP),
        );
        let mut tiles = Aligned::zeroed(np * kp);
        let steps = kp / STEP;
        tiles
            .par_chunks_mut(steps * TILE)
            .enumerate()
            .for_each(|(group, chunk)| {
                for output in 0..16 {
                    let n = group * 16 + output;
                    let Some(row) = weight.get(n * inputs..(n + 1) * inputs) else {
                        continue;
                    };
                    // Input k of this output goes to tile k / 32, row
                    // (k % 32) / 2, slot 2 · output + k % 2.
                    for (k, &value) in row.iter().enumerate() {
                        let (tile, within) = (k / STEP, k % STEP);
                        chunk[tile * TILE + within / 2 * 32 + 2 * output + within % 2] =
                            bf16(value);
                    }
                }
            });
        Packed {
            tiles,
            outputs,
            inputs,
        }
    }

    /// Outputs (rows of the weight).
    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// Inputs (columns of the weight).
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    fn padded(&self) -> (usize, usize) {
        (
            self.outputs.next_multiple_of(BLOCK),
            self.inputs.next_multiple_of(STEP),
        )
    }
}

/// `input · weightᵀ (+ bias)` for row-major `input` (rows × inputs), in
/// bf16 with f32 sums, as row-major f32 (rows × outputs). Splits the rows
/// over rayon's pool. Panics when the unit is not [`available`] or a shape
/// is wrong; callers check both.
pub fn product(input: &[f32], weight: &Packed, bias: Option<&[f32]>) -> Vec<f32> {
    assert!(available(), "amx::product without the matrix unit");
    let (n, k) = (weight.outputs, weight.inputs);
    assert!(
        k > 0 && input.len().is_multiple_of(k),
        "input for {k} features"
    );
    assert!(bias.is_none_or(|b| b.len() == n), "bias for {n} outputs");
    let (np, _) = weight.padded();
    let start = starting_sums(bias.unwrap_or(&[]), np);
    by_blocks(input, k, n, np, |out, input| {
        tiles::run(out, input, weight, &start)
    })
}

/// The feed-forward half of a layer without its closing bias:
/// `gelu(input · upᵀ + up_bias) · downᵀ`, fused per block of 32 rows so
/// that the wide activations (32 × `up`'s outputs) stay in the core's
/// cache, rounded to bf16 between the products. Unfused, a batch of 2,048
/// tokens wrote 12.6 MB of activations, then read and wrote them for GELU
/// and read them again to round them: memory traffic that took longer
/// than the products themselves. Panics as [`product`] does, or when
/// `down` does not take `up`'s outputs.
pub fn feed_forward(input: &[f32], up: &Packed, up_bias: &[f32], down: &Packed) -> Vec<f32> {
    assert!(available(), "amx::feed_forward without the matrix unit");
    let k = up.inputs;
    assert!(
        k > 0 && input.len().is_multiple_of(k),
        "input for {k} features"
    );
    assert!(
        up_bias.len() == up.outputs,
        "bias for {} outputs",
        up.outputs
    );
    assert!(
        down.inputs == up.outputs,
        "down-projection of {} inputs",
        down.inputs
    );
    let start = starting_sums(up_bias, up.padded().0);
    let (np, n) = (down.padded().0, down.outputs);
    by_blocks(input, k, n, np, |out, input| {
        feed_forward::run(out, input, up, &start, down)
    })
}

/// A block's starting row of sums: `bias`, then zeros up to `padded`.
fn starting_sums(bias: &[f32], padded: usize) -> Vec<f32> {
    let mut start = vec![0f32; padded];
    start[..bias.len()].copy_from_slice(bias);
    start
}

/// Splits `input` (rows of `k`) into whole blocks of 32 rows, about four
/// tasks per thread, and has `run` write each task's blocks of the output
/// (32 rows of `np` per block); returns the output's rows of `n`.
fn by_blocks(
    input: &[f32],
    k: usize,
    n: usize,
    np: usize,
    run: impl Fn(&mut [f32], &[f32]) + Sync,
) -> Vec<f32> {
    let rows = input.len() / k;
    let blocks = rows.div_ceil(BLOCK);
    let mut out: Vec<f32> = Vec::with_capacity(blocks * BLOCK * np);
    // Each task writes every value of its blocks (the tiles store whole
    // 32 × 32 blocks), so the buffer is not zeroed first: it is written
    // through its address, one disjoint range per task.
    let per_task = blocks.div_ceil(4 * rayon::current_num_threads()).max(1);
    let at = out.as_mut_ptr() as usize;
    input
        .par_chunks(per_task * BLOCK * k)
        .enumerate()
        .for_each(|(task, input)| {
            let first = task * per_task;
            let count = per_task.min(blocks - first);
            // SAFETY: blocks `first..first + count` lie inside the buffer's
            // capacity (`blocks` blocks of BLOCK × np) and no other task
            // touches them.
            let out = unsafe {
                std::slice::from_raw_parts_mut(
                    (at as *mut f32).add(first * BLOCK * np),
                    count * BLOCK * np,
                )
            };
            run(out, input);
        });
    // SAFETY: the tasks above wrote all `blocks` blocks (`run` stores
    // every value of the blocks it is given).
    unsafe { out.set_len(blocks * BLOCK * np) };
    if np == n {
        out.truncate(rows * n);
        return out;
    }
    let mut exact = Vec::with_capacity(rows * n);
    for row in out.chunks_exact(np).take(rows) {
        exact.extend_from_slice(&row[..n]);
    }
    exact
}

/// A batch as [`attention`] sees it.
#[derive(Clone, Copy)]
pub struct Batch<'a> {
    /// Each sequence's length.
    pub lengths: &'a [usize],
    /// Positions per sequence, padding included.
    pub width: usize,
    /// Attention heads.
    pub heads: usize,
    /// Dimensions per head, a multiple of 32.
    pub head_size: usize,
}

/// `x` rounded to bf16, to nearest even (NaN stays NaN).
pub(crate) fn bf16(x: f32) -> u16 {
    if x.is_nan() {
        return 0x7fc0;
    }
    let bits = x.to_bits();
    ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) as u16
}

mod aligned;
#[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
mod attention;
#[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
mod feed_forward;
#[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
mod heads;
#[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
mod softmax;
#[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
mod tiles;
#[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
pub use attention::attention;

/// Elsewhere the unit is never available.
#[cfg(not(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu")))]
mod feed_forward {
    pub(super) fn run(_: &mut [f32], _: &[f32], _: &super::Packed, _: &[f32], _: &super::Packed) {
        unreachable!("the matrix unit is never available here")
    }
}

/// Elsewhere the unit is never available.
#[cfg(not(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu")))]
pub fn attention(_: &[f32], _: &Packed, _: &[f32], _: &Packed, _: Batch) -> Vec<f32> {
    unreachable!("the matrix unit is never available here")
}

/// Elsewhere the unit is never available.
#[cfg(not(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu")))]
mod tiles {
    pub(super) fn enable() -> bool {
        false
    }

    pub(super) fn run(_: &mut [f32], _: &[f32], _: &super::Packed, _: &[f32]) {
        unreachable!("the matrix unit is never available here")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_to_bf16_is_to_nearest_even() {
        assert_eq!(bf16(1.0), 0x3f80);
        // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to even.
        assert_eq!(bf16(1.0 + 1.0 / 256.0), 0x3f80);
        assert_eq!(bf16(1.0 + 3.0 / 256.0), 0x3f82);
        assert_eq!(bf16(-2.5), 0xc020);
        assert!(f32::from_bits(u32::from(bf16(f32::NAN)) << 16).is_nan());
    }

    /// Against the same product in f64 over the bf16-rounded operands, on
    /// shapes with ragged rows, outputs and inputs.
    #[test]
    fn products_match_the_rounded_operands() {
        if !available() {
            eprintln!("skipped: this processor or system offers no AMX bf16 tiles");
            return;
        }
        let widen = |x: f32| f64::from(f32::from_bits(u32::from(bf16(x)) << 16));
        for (rows, outputs, inputs) in [(1, 32, 32), (37, 40, 70), (100, 96, 384)] {
            let input: Vec<f32> = (0..rows * inputs)
                .map(|i| ((i * 37 % 101) as f32 / 50.0 - 1.0) * 1.7)
                .collect();
            let weight: Vec<f32> = (0..outputs * inputs)
                .map(|i| ((i * 13 % 97) as f32 / 48.0 - 1.0) * 0.3)
                .collect();
            let bias: Vec<f32> = (0..outputs).map(|i| i as f32 * 0.25 - 3.0).collect();
            let packed = Packed::new(&weight, outputs, inputs);
            let got = product(&input, &packed, Some(&bias));
            assert_eq!(got.len(), rows * outputs);
            for r in 0..rows {
                for c in 0..outputs {
                    let want: f64 = f64::from(bias[c])
                        + (0..inputs)
                            .map(|i| widen(input[r * inputs + i]) * widen(weight[c * inputs + i]))
                            .sum::<f64>();
                    let got = f64::from(got[r * outputs + c]);
                    assert!(
                        (got - want).abs() < 1e-3 * (1.0 + want.abs()),
                        "{rows}x{outputs}x{inputs} at ({r}, {c}): {got} vs {want}"
                    );
                }
            }
            let plain = product(&input, &packed, None);
            assert!((plain[0] - (got[0] - bias[0])).abs() < 1e-3);
        }
    }

    /// The fused feed-forward against its three steps in f64 over the
    /// bf16-rounded weights: GELU's input rounded too, so agreement to
    /// about bf16's precision.
    #[test]
    fn feed_forward_matches_its_steps() {
        if !available() {
            eprintln!("skipped: this processor or system offers no AMX bf16 tiles");
            return;
        }
        let widen = |x: f32| f64::from(f32::from_bits(u32::from(bf16(x)) << 16));
        let (rows, hidden, wide) = (45, 64, 96);
        let input: Vec<f32> = (0..rows * hidden)
            .map(|i| ((i * 37 % 101) as f32 / 50.0 - 1.0) * 1.3)
            .collect();
        let up: Vec<f32> = (0..wide * hidden)
            .map(|i| ((i * 13 % 97) as f32 / 48.0 - 1.0) * 0.2)
            .collect();
        let down: Vec<f32> = (0..hidden * wide)
            .map(|i| ((i * 29 % 89) as f32 / 44.0 - 1.0) * 0.2)
            .collect();
        let bias: Vec<f32> = (0..wide).map(|i| i as f32 * 0.05 - 2.0).collect();
        let got = feed_forward(
            &input,
            &Packed::new(&up, wide, hidden),
            &bias,
            &Packed::new(&down, hidden, wide),
        );
        assert_eq!(got.len(), rows * hidden);
        for r in 0..rows {
            let inner: Vec<f64> = (0..wide)
                .map(|c| {
                    let x = f64::from(bias[c])
                        + (0..hidden)
                            .map(|i| widen(input[r * hidden + i]) * widen(up[c * hidden + i]))
                            .sum::<f64>();
                    widen(crate::embed::gelu::gelu(x as f32))
                })
                .collect();
            for c in 0..hidden {
                let want: f64 = (0..wide)
                    .map(|i| inner[i] * widen(down[c * wide + i]))
                    .sum();
                let got = f64::from(got[r * hidden + c]);
                assert!(
                    (got - want).abs() < 2e-2 * (1.0 + want.abs()),
                    "({r}, {c}): {got} vs {want}"
                );
            }
        }
    }
}
