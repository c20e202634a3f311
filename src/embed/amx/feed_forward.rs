//! The feed-forward half of a layer on the tiles, one block of 32 rows at
//! a time: the up-projection into a per-thread buffer (32 rows of its
//! outputs, in L2), GELU over it, rounded to bf16 in the layout the
//! down-projection's tiles read, then the down-projection into the output.
//! See [`super::feed_forward`].

use std::cell::RefCell;

use super::tiles::{block_product, round_block, with_tiles, ZEROS};
use super::{Aligned, Packed, BLOCK, STEP, TILE};
use crate::embed::gelu::{ERF_P, ERF_Q};

/// Each worker's buffers: the block's inputs in bf16, its activations in
/// f32, then in bf16.
#[derive(Default)]
struct Scratch {
    inputs: Aligned<u16>,
    wide: Aligned<f32>,
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
    let (steps, down_steps) = (kp / STEP, down_kp / STEP);
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
        scratch.inputs.resize(BLOCK * kp);
        scratch.wide.resize(BLOCK * wide);
        scratch.rounded.resize(BLOCK * wide);
        // `enable` was true: `feed_forward` checks it.
        with_tiles(|| {
            for (block, sums) in out.chunks_exact_mut(BLOCK * np).enumerate() {
                let rows = input.get(block * BLOCK * k..).unwrap_or(&[]);
                round_block(
                    &mut scratch.inputs,
                    &rows[..rows.len().min(BLOCK * k)],
                    k,
                    kp,
                );
                for first in (0..wide).step_by(BLOCK) {
                    // SAFETY: as in `tiles::run`: 32 rows of `kp` inputs,
                    // the weight's tiles of outputs `first..first + 32`,
                    // and 32 rows of `wide` sums and `start` values.
                    unsafe {
                        block_product(
                            scratch.wide.as_mut_ptr().add(first),
                            wide,
                            scratch.inputs.as_ptr(),
                            kp,
                            up.tiles.as_ptr().add(first / 16 * steps * TILE),
                            steps,
                            start.as_ptr().add(first),
                        );
                    }
                }
                // SAFETY: `enable` checked AVX-512F and BF16; both buffers
                // are 32 rows of `wide`, a multiple of 32.
                unsafe { gelu_rounded(&mut scratch.rounded, &scratch.wide) };
                for first in (0..np).step_by(BLOCK) {
                    // SAFETY: 32 rows of `down_kp` (= `wide`) bf16
                    // activations, the down-projection's tiles of outputs
                    // `first..first + 32`, 32 rows of `np` sums, 32 zeros
                    // (its bias is added by the layer's close).
                    unsafe {
                        block_product(
                            sums.as_mut_ptr().add(first),
                            np,
                            scratch.rounded.as_ptr(),
                            down_kp,
                            down.tiles.as_ptr().add(first / 16 * down_steps * TILE),
                            down_steps,
                            ZEROS.0.as_ptr(),
                        );
                    }
                }
            }
        });
    });
}

/// `dst = bf16(gelu(src))`, 16 values at a time: GELU as the f32 path
/// computes it ([`crate::embed::gelu`]: erf as Eigen's rational function),
/// except that the division is a 14-bit reciprocal estimate and a
/// multiply. The estimate's error (below 2^-14 relative) is a thirtieth of
/// bf16's rounding of the result; the division took longer than the rest
/// of GELU together. Padded columns hold 0 (zero weights, zero bias), and
/// GELU(0) is 0.
#[target_feature(enable = "avx512f,avx512bf16")]
fn gelu_rounded(dst: &mut [u16], src: &[f32]) {
    use std::arch::x86_64::*;
    assert!(dst.len() == src.len() && src.len().is_multiple_of(16));
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
