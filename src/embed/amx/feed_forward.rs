//! The feed-forward half of a layer on the tiles, four blocks of 32 rows
//! at a time: the up-projection one 32 × 32 block of sums at a time, GELU
//! over the block while it is in L1, rounded to bf16 into a per-thread
//! buffer (the group's rows of activations, in L2) in the layout the
//! down-projection's tiles read, then the down-projection into the output.
//! See [`super::feed_forward`].

use std::cell::RefCell;

use super::tiles::{block_product, round_blocks, with_tiles, Strip};
use super::{Aligned, Packed, BLOCK, GROUP, STEP, TILE};
use crate::embed::gelu::{ERF_P, ERF_Q};

/// Each worker's buffers: the group's inputs in bf16, two 32 × 32 blocks
/// of the up-projection's sums (one being written, one read by GELU), and
/// the group's activations in bf16.
#[derive(Default)]
struct Scratch {
    inputs: Aligned<u16>,
    sums: Aligned<f32>,
    rounded: Aligned<u16>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Writes `out` (whole blocks of 32 rows of `down`'s padded outputs) for
/// the rows of `input` (at most as many; missing rows count as zeros), the
/// up-projection's sums starting from `start` (its padded outputs long).
pub(super) fn run(out: &mut [f32], input: &[f32], up: &Packed, start: &[f32], down: &Packed) {
    let (wide, kp) = up.padded();
    let (np, down_kp) = down.padded();
    let k = up.inputs;
    let down_steps = down_kp / STEP;
    assert!(
        out.len().is_multiple_of(BLOCK * np)
            && input.len() <= out.len() / np * k
            && start.len() == wide
            && down_kp == wide
            && up.tiles.len() == wide * kp
            && down.tiles.len() == np * down_kp,
        "amx feed-forward: shapes"
    );
    SCRATCH.with(|scratch| {
        let scratch = &mut *scratch.borrow_mut();
        scratch.inputs.resize(GROUP * BLOCK * kp);
        scratch.sums.resize(2 * BLOCK * BLOCK);
        scratch.rounded.resize(GROUP * BLOCK * wide);
        // `enable` was true: `feed_forward` checks it.
        with_tiles(|| {
            for (group, sums) in out.chunks_mut(GROUP * BLOCK * np).enumerate() {
                let blocks = sums.len() / (BLOCK * np);
                let rows = input.get(group * GROUP * BLOCK * k..).unwrap_or(&[]);
                round_blocks(&mut scratch.inputs, rows, blocks, k, kp);
                // SAFETY: `enable` checked AVX-512F and BF16.
                unsafe { up_pass(scratch, blocks, up, start, kp) };
                for first in (0..np).step_by(BLOCK) {
                    for b in 0..blocks {
                        // SAFETY: 32 rows of `down_kp` (= `wide`) bf16
                        // activations of block `b`, the down-projection's
                        // tiles of outputs `first..first + 32`, block `b`'s
                        // 32 rows of `np` sums, starting from zeros (its
                        // bias is added by the layer's close).
                        unsafe {
                            block_product(
                                sums.as_mut_ptr().add(b * BLOCK * np + first),
                                np,
                                scratch.rounded.as_ptr().add(b * BLOCK * wide),
                                down_kp,
                                Strip {
                                    tiles: down.tiles.as_ptr().add(first / 16 * down_steps * TILE),
                                    steps: down_steps,
                                    start: None,
                                },
                                |_| {},
                            );
                        }
                    }
                }
            }
        });
    });
}

/// The up-projection and GELU of `blocks` blocks of 32 rows (rounded in
/// `scratch.inputs`) into `scratch.rounded`, one 32 × 32 block of sums at
/// a time. GELU of each block runs while the matrix unit computes the
/// next one, a few rows after each step of its products: the vector work
/// and the tile products then overlap instead of taking turns.
#[target_feature(enable = "avx512f,avx512bf16")]
fn up_pass(scratch: &mut Scratch, blocks: usize, up: &Packed, start: &[f32], kp: usize) {
    let (wide, steps) = (up.padded().0, kp / STEP);
    let (first_sums, second_sums) = scratch.sums.split_at_mut(BLOCK * BLOCK);
    let mut sums = [first_sums, second_sums];
    let rounded = &mut scratch.rounded[..];
    // Where the block whose sums wait in `sums[1]` goes: each block is
    // computed into `sums[0]`, and the two swap after it.
    let mut pending: Option<usize> = None;
    for first in (0..wide).step_by(BLOCK) {
        for b in 0..blocks {
            let [target, previous] = &mut sums;
            let previous = &**previous;
            // SAFETY: as in `tiles::run`: block `b`'s 32 rows of `kp`
            // inputs, the weight's tiles of outputs `first..first + 32`, a
            // 32 × 32 block of sums and `start`'s values from `first`.
            unsafe {
                block_product(
                    target.as_mut_ptr(),
                    BLOCK,
                    scratch.inputs.as_ptr().add(b * BLOCK * kp),
                    kp,
                    Strip {
                        tiles: up.tiles.as_ptr().add(first / 16 * steps * TILE),
                        steps,
                        start: Some(start.as_ptr().add(first)),
                    },
                    |step| {
                        if let Some(at) = pending {
                            let rows = step * BLOCK / steps..(step + 1) * BLOCK / steps;
                            gelu_rows(&mut rounded[at..], wide, previous, rows);
                        }
                    },
                );
            }
            pending = Some(b * BLOCK * wide + first);
            sums.swap(0, 1);
        }
    }
    if let Some(at) = pending {
        gelu_rows(&mut rounded[at..], wide, sums[1], 0..BLOCK);
    }
}

/// `dst = bf16(gelu(src))` for rows `rows` of a 32 × 32 block `src`, into
/// `dst` (row stride `ld`), 16 values at a time: GELU as the f32 path
/// computes it ([`crate::embed::gelu`]: erf as Eigen's rational function),
/// except that the division is a 14-bit reciprocal estimate and a
/// multiply. The estimate's error (below 2^-14 relative) is a thirtieth of
/// bf16's rounding of the result; the division took longer than the rest
/// of GELU together. Padded columns hold 0 (zero weights, zero bias), and
/// GELU(0) is 0.
#[target_feature(enable = "avx512f,avx512bf16")]
#[inline]
fn gelu_rows(dst: &mut [u16], ld: usize, src: &[f32], rows: std::ops::Range<usize>) {
    assert!(src.len() == BLOCK * BLOCK && rows.end <= BLOCK && ld >= BLOCK);
    for r in rows {
        gelu_row(
            &mut dst[r * ld..r * ld + BLOCK],
            &src[r * BLOCK..(r + 1) * BLOCK],
        );
    }
}

/// [`gelu_rows`]' 32 values of one row.
#[target_feature(enable = "avx512f,avx512bf16")]
#[inline]
fn gelu_row(dst: &mut [u16], src: &[f32]) {
    use std::arch::x86_64::*;
    for (to, from) in dst.chunks_exact_mut(16).zip(src.chunks_exact(16)) {
        // SAFETY: both chunks hold 16 values: 64 bytes read, 32 written.
        unsafe {
            let v = _mm512_loadu_ps(from.as_ptr());
            let x = _mm512_mul_ps(v, _mm512_set1_ps(std::f32::consts::FRAC_1_SQRT_2));
            let x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-4.0)), _mm512_set1_ps(4.0));
            let x2 = _mm512_mul_ps(x, x);
            let mut p = _mm512_set1_ps(ERF_P[0]);
            for c in &ERF_P[1..] {
                p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(*c));
            }
            let mut q = _mm512_set1_ps(ERF_Q[0]);
            for c in &ERF_Q[1..] {
                q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(*c));
            }
            let erf = _mm512_mul_ps(_mm512_mul_ps(p, x), _mm512_rcp14_ps(q));
            // 0.5 v (1 + erf) = 0.5 v + 0.5 v erf.
            let half = _mm512_mul_ps(v, _mm512_set1_ps(0.5));
            let gelu = _mm512_fmadd_ps(half, erf, half);
            let rounded: __m256i = std::mem::transmute(_mm512_cvtneps_pbh(gelu));
            _mm256_storeu_si256(to.as_mut_ptr().cast(), rounded);
        }
    }
}
