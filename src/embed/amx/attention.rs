//! Self-attention with its products on the tiles, for the bf16 encoder,
//! one task per sequence: the fused QKV projection of the sequence's rows
//! straight into the layouts the next products read ([`super::heads`]),
//! then per head and 32 query rows Q·Kᵀ and P·V as bf16 tile products with
//! f32 sums, and the softmax between them while the 32 rows of scores sit
//! in L1, writing P in bf16 straight into the layout P·V reads. The f32
//! path ([`crate::embed`]'s fused attention) computes the same thing with
//! gemm in f32.
//!
//! - P is left unnormalised (its rows sum to `sum`, not 1), and the context
//!   rows are divided by `sum` once they are out: one multiply per output
//!   value instead of one per score.
//! - Keys and queries are padded to multiples of 32 positions; padded keys
//!   get probability 0 (masked before the exponential), padded query rows
//!   are computed and dropped. Padded positions of the batch are never
//!   read, and their context rows stay 0, as on the f32 path.

use std::cell::RefCell;

use rayon::prelude::*;

use super::heads::Heads;
use super::tiles::{block_product, with_tiles, Strip};
use super::{Aligned, Packed, BLOCK, STEP, TILE};

/// Each worker's buffers, kept between tasks.
#[derive(Default)]
struct Scratch {
    /// The sequence's queries, keys and values in the tiles' layouts.
    heads: Heads,
    /// Scores of 32 queries, 32 rows of `padded`.
    scores: Aligned<f32>,
    /// Unnormalised probabilities of 32 queries in bf16.
    probs: Aligned<u16>,
    /// 1 / (sum of each row's probabilities).
    inverse: [f32; BLOCK],
    /// 32 context rows of `head_size`.
    context: Aligned<f32>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// The attention context (tokens × hidden) of a layer whose input is `x`
/// (tokens × hidden) and whose fused QKV projection is `qkv` with `bias`
/// (outputs: queries, keys then values, heads side by side in each), for
/// `lengths.len()` sequences padded to `width` positions, with `heads`
/// heads of `head_size` (a multiple of 32) dimensions. The projection
/// runs here, per sequence ([`Heads::project`]).
pub fn attention(
    x: &[f32],
    qkv: &Packed,
    bias: &[f32],
    lengths: &[usize],
    width: usize,
    heads: usize,
    head_size: usize,
) -> Vec<f32> {
    assert!(super::available(), "amx::attention without the matrix unit");
    let hidden = heads * head_size;
    let tokens = lengths.len() * width;
    assert!(
        head_size > 0
            && head_size.is_multiple_of(STEP)
            && qkv.inputs == hidden
            && qkv.outputs == 3 * hidden
            && bias.len() == 3 * hidden
            && x.len() == tokens * hidden
            && lengths.iter().all(|&l| l <= width),
        "amx attention: shapes"
    );
    let scale = 1.0 / (head_size as f32).sqrt();
    let mut context = vec![0f32; tokens * hidden];
    // One task per sequence: its rows are read once, whole, in order, and
    // it writes its own rows of the context.
    context
        .par_chunks_mut(width * hidden)
        .zip(x.par_chunks(width * hidden))
        .zip(lengths)
        .filter(|(_, &len)| len > 0)
        .for_each(|((out, rows), &len)| {
            SCRATCH.with(|scratch| {
                let scratch = &mut *scratch.borrow_mut();
                let padded = len.next_multiple_of(BLOCK);
                scratch.scores.resize(BLOCK * padded);
                scratch.probs.resize(BLOCK * padded);
                scratch.context.resize(BLOCK * head_size);
                with_tiles(|| {
                    let rows = &rows[..len * hidden];
                    scratch
                        .heads
                        .project(rows, qkv, bias, padded, heads, head_size);
                    for head in 0..heads {
                        for first in (0..len).step_by(BLOCK) {
                            let base = head * padded * head_size;
                            block(scratch, base, first, len, padded, head_size, scale);
                            // Rows `first..` of this sequence, this head's
                            // columns, divided by their rows' sums.
                            let rows = out[first * hidden..].chunks_exact_mut(hidden);
                            let from = scratch.context.chunks_exact(head_size);
                            let real = BLOCK.min(len - first);
                            for ((to, from), inverse) in
                                rows.zip(from).zip(scratch.inverse).take(real)
                            {
                                let to = &mut to[head * head_size..(head + 1) * head_size];
                                for (t, f) in to.iter_mut().zip(from) {
                                    *t = f * inverse;
                                }
                            }
                        }
                    }
                });
            });
        });
    context
}

/// The context of queries `first..first + 32` of the head whose packed
/// values start at `base` (unnormalised) into `scratch.context`, and
/// their rows' 1 / sum into `scratch.inverse`. The tile configuration is
/// loaded and `scratch` packed for `padded` positions.
fn block(
    scratch: &mut Scratch,
    base: usize,
    first: usize,
    len: usize,
    padded: usize,
    head_size: usize,
    scale: f32,
) {
    let steps = head_size / STEP;
    let key_steps = padded / STEP;
    for keys in (0..padded).step_by(BLOCK) {
        // SAFETY: the queries are `padded` rows of `head_size` bf16, so
        // rows `first..first + 32` exist; the keys' strips for keys
        // `keys..keys + 32` are `2 · steps` tiles from `keys / 16 · steps`,
        // inside `padded · head_size` values; the scores block at column
        // `keys` is inside 32 rows of `padded`.
        unsafe {
            block_product(
                scratch.scores.as_mut_ptr().add(keys),
                padded,
                scratch.heads.queries.as_ptr().add(base + first * head_size),
                head_size,
                Strip {
                    tiles: scratch
                        .heads
                        .keys
                        .as_ptr()
                        .add(base + keys / 16 * steps * TILE),
                    steps,
                    start: None,
                },
                |_| {},
            );
        }
    }
    // SAFETY: `available` implies AVX-512F and BF16; the buffers are 32
    // rows of `padded`, and `len <= padded`.
    unsafe {
        softmax_rows(
            &scratch.scores,
            &mut scratch.probs,
            &mut scratch.inverse,
            padded,
            len,
            scale,
        )
    };
    for dims in (0..head_size).step_by(BLOCK) {
        // SAFETY: the probabilities are 32 rows of `padded` bf16 (`kp`);
        // the values' strips for dimensions `dims..dims + 32` are
        // `2 · key_steps` tiles from `dims / 16 · key_steps`, inside
        // `padded · head_size` values; the context block is 32 rows of
        // `head_size` floats.
        unsafe {
            block_product(
                scratch.context.as_mut_ptr().add(dims),
                head_size,
                scratch.probs.as_ptr(),
                padded,
                Strip {
                    tiles: scratch
                        .heads
                        .values
                        .as_ptr()
                        .add(base + dims / 16 * key_steps * TILE),
                    steps: key_steps,
                    start: None,
                },
                |_| {},
            );
        }
    }
}

/// For each of 32 rows of `scores` (row stride `padded`), the
/// exponentials of `scale · (score − max)` over the first `len` columns,
/// in bf16 into `probs` (0 past `len`), and 1 / their sum into `inverse`.
/// The exponential is computed as a power of two, `scale · log2(e)`
/// folded into the one multiply-add that shifts the scores: see [`exp2`].
#[target_feature(enable = "avx512f,avx512bf16")]
fn softmax_rows(
    scores: &[f32],
    probs: &mut [u16],
    inverse: &mut [f32; BLOCK],
    padded: usize,
    len: usize,
    scale: f32,
) {
    use std::arch::x86_64::*;
    assert!(scores.len() >= BLOCK * padded && probs.len() >= BLOCK * padded && len <= padded);
    // Whole chunks of 16 real columns, then one partial chunk (its real
    // lanes), then zeros to `padded`.
    let whole = len / 16 * 16;
    let tail = ((1u32 << (len - whole)) - 1) as __mmask16;
    let factor = scale * std::f32::consts::LOG2_E;
    for (r, inverse) in inverse.iter_mut().enumerate() {
        let row = &scores[r * padded..(r + 1) * padded];
        let out = &mut probs[r * padded..(r + 1) * padded];
        // SAFETY: every load and store below is of 16 values at a column
        // `at < padded`, a multiple of 16, inside the row (`padded` is a
        // multiple of 32).
        unsafe {
            let mut max = _mm512_set1_ps(f32::NEG_INFINITY);
            for at in (0..whole).step_by(16) {
                max = _mm512_max_ps(max, _mm512_loadu_ps(row.as_ptr().add(at)));
            }
            if whole < len {
                let v = _mm512_mask_loadu_ps(max, tail, row.as_ptr().add(whole));
                max = _mm512_max_ps(max, v);
            }
            let shift = _mm512_set1_ps(-_mm512_reduce_max_ps(max) * factor);
            let factor = _mm512_set1_ps(factor);
            let mut sum = _mm512_setzero_ps();
            let mut put = |at: usize, e: __m512| {
                let rounded: __m256i = std::mem::transmute(_mm512_cvtneps_pbh(e));
                _mm256_storeu_si256(out.as_mut_ptr().add(at).cast(), rounded);
            };
            for at in (0..whole).step_by(16) {
                let x = _mm512_fmadd_ps(_mm512_loadu_ps(row.as_ptr().add(at)), factor, shift);
                let e = exp2(x);
                sum = _mm512_add_ps(sum, e);
                put(at, e);
            }
            let mut at = whole;
            if whole < len {
                let x = _mm512_fmadd_ps(_mm512_loadu_ps(row.as_ptr().add(at)), factor, shift);
                let e = _mm512_maskz_mov_ps(tail, exp2(x));
                sum = _mm512_add_ps(sum, e);
                put(at, e);
                at += 16;
            }
            while at < padded {
                put(at, _mm512_setzero_ps());
                at += 16;
            }
            *inverse = 1.0 / _mm512_reduce_add_ps(sum);
        }
    }
}

/// 2^x for x <= 0 in 16 lanes: x = n + r with n an integer and |r| <= 1/2
/// (exact), 2^r a degree-4 polynomial (coefficients fitted here to the
/// least maximum relative error on [−1/2, 1/2]: 2.6e-6, far below bf16's
/// 2^-9 rounding of the result), and `vscalefps` for 2^n, which gives 0
/// where 2^x is below the smallest float.
#[target_feature(enable = "avx512f")]
fn exp2(x: std::arch::x86_64::__m512) -> std::arch::x86_64::__m512 {
    use std::arch::x86_64::*;
    // Round to nearest, exceptions suppressed.
    let n = _mm512_roundscale_ps::<0x08>(x);
    let r = _mm512_sub_ps(x, n);
    let mut p = _mm512_set1_ps(EXP2[0]);
    for c in &EXP2[1..] {
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(*c));
    }
    _mm512_scalef_ps(p, n)
}

/// [`exp2`]'s polynomial, highest power first.
const EXP2: [f32; 5] = [
    0.009_570_069,
    0.055_917_807,
    0.240_247_44,
    0.693_121_85,
    0.999_999_3,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The power of two against f64's over the range softmax uses, down
    /// through the subnormals to where the result is 0.
    #[test]
    fn exp2_is_within_its_stated_error() {
        if !super::super::available() {
            eprintln!("skipped: this processor or system offers no AMX bf16 tiles");
            return;
        }
        let xs: Vec<f32> = (0..16 * 4000).map(|i| -(i as f32) * 0.002_1).collect();
        for chunk in xs.chunks_exact(16) {
            let mut got = [0f32; 16];
            // SAFETY: `available` implies AVX-512F; 16 values each way.
            unsafe {
                use std::arch::x86_64::*;
                _mm512_storeu_ps(got.as_mut_ptr(), exp2(_mm512_loadu_ps(chunk.as_ptr())));
            }
            for (&x, &g) in chunk.iter().zip(&got) {
                let want = f64::from(x).exp2();
                // Below 2^-126 the floats are subnormal: fewer digits.
                let error = (f64::from(g) - want).abs() / want;
                let bound = if x > -126.0 { 4e-6 } else { 1e-2 };
                assert!(error < bound, "2^{x}: {g} vs {want}");
            }
        }
        let mut tiny = [0f32; 16];
        // SAFETY: as above.
        unsafe {
            use std::arch::x86_64::*;
            _mm512_storeu_ps(tiny.as_mut_ptr(), exp2(_mm512_set1_ps(-200.0)));
        }
        assert!(tiny.iter().all(|&t| t == 0.0));
    }

    /// Against the f32 projection and attention of the encoder over the
    /// bf16-rounded input and weight, on ragged lengths and two head sizes:
    /// the projection and attention's operands are rounded to bf16 too, so
    /// agreement to about 1%.
    #[test]
    fn attention_on_tiles_matches_the_f32_attention() {
        if !super::super::available() {
            eprintln!("skipped: this processor or system offers no AMX bf16 tiles");
            return;
        }
        let widen = |v: f32| f64::from(f32::from_bits(u32::from(super::super::bf16(v)) << 16));
        for (heads, head_size, width, lengths) in [
            (3usize, 32usize, 70usize, vec![70usize, 33, 1]),
            (2, 64, 40, vec![40, 17]),
        ] {
            let hidden = heads * head_size;
            let tokens = lengths.len() * width;
            let x: Vec<f32> = (0..tokens * hidden)
                .map(|i| ((i as f32) * 0.013 + 0.2).sin() * 1.5)
                .collect();
            let weight: Vec<f32> = (0..3 * hidden * hidden)
                .map(|i| ((i as f32) * 0.37).sin() * 0.3)
                .collect();
            let bias: Vec<f32> = (0..3 * hidden)
                .map(|i| (i as f32 * 0.1).cos() * 0.5)
                .collect();
            let packed = Packed::new(&weight, 3 * hidden, hidden);
            let got = attention(&x, &packed, &bias, &lengths, width, heads, head_size);
            let qkv: Vec<f32> = (0..tokens * 3 * hidden)
                .map(|i| {
                    let (t, o) = (i / (3 * hidden), i % (3 * hidden));
                    let dot: f64 = (0..hidden)
                        .map(|j| widen(x[t * hidden + j]) * widen(weight[o * hidden + j]))
                        .sum();
                    (f64::from(bias[o]) + dot) as f32
                })
                .collect();
            let tensor =
                candle_core::Tensor::from_vec(qkv, (tokens, 3 * hidden), &candle_core::Device::Cpu)
                    .unwrap();
            let want = crate::embed::attention::fused_attention(
                &tensor, &lengths, width, heads, head_size,
            )
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                let (seq, position) = (i / hidden / width, i / hidden % width);
                if position >= lengths[seq] {
                    assert_eq!(*g, 0.0, "padded value {i} written");
                } else {
                    assert!((g - w).abs() < 0.02, "value {i}: {g} vs {w}");
                }
            }
        }
    }
}
