//! Self-attention with its two products on the tiles, for the bf16
//! encoder: per sequence and head, Q·Kᵀ and P·V run as bf16 tile products
//! with f32 sums, and the softmax between them runs 32 query rows at a
//! time while their scores sit in L1, writing P in bf16 straight into the
//! layout the second product reads. The f32 path ([`crate::embed`]'s
//! fused attention) computes the same thing with gemm in f32; on the
//! seeds it took about a third of bf16 indexing time (`perf`), as much as
//! all the dense products on the tiles together.
//!
//! - Q is rounded row by row (one 64-byte tile row per 32 dimensions).
//! - K is packed as the weight of a product whose outputs are the keys:
//!   for each 16 keys and 32 dimensions, one tile whose row `r` holds
//!   dimensions `2r` and `2r + 1` of each key side by side.
//! - V is packed as the weight of a product whose outputs are the
//!   dimensions and whose inputs are the keys.
//! - P is left unnormalised (its rows sum to `sum`, not 1), and the context
//!   rows are divided by `sum` once they are out: one multiply per output
//!   value instead of one per score.
//!
//! Keys and queries are padded with zeros to multiples of 32; padded keys
//! get probability 0 (masked before the exponential), padded query rows
//! are computed and dropped. Padded positions of the batch are never read,
//! and their context rows stay 0, as on the f32 path.

use std::cell::RefCell;

use rayon::prelude::*;

use super::tiles::{block_product, round_avx512, with_tiles, Strip};
use super::{Aligned, BLOCK, STEP, TILE};

/// Each worker's buffers, kept between tasks.
#[derive(Default)]
struct Scratch {
    /// Queries in bf16, `padded` rows of `head_size` per head.
    queries: Aligned<u16>,
    /// Keys packed as tiles (outputs: keys; inputs: dimensions).
    keys: Aligned<u16>,
    /// Values packed as tiles (outputs: dimensions; inputs: keys).
    values: Aligned<u16>,
    /// Two rows of the fused projection in bf16 (a token and the next).
    row: Vec<u16>,
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

/// The attention context (tokens × hidden) of `qkv` (tokens × 3·hidden,
/// queries then keys then values, heads side by side in each) for
/// `lengths.len()` sequences padded to `width` positions, with `heads`
/// heads of `head_size` (a multiple of 32) dimensions.
pub fn attention(
    qkv: &[f32],
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
            && qkv.len() == tokens * 3 * hidden
            && lengths.iter().all(|&l| l <= width),
        "amx attention: shapes"
    );
    let scale = 1.0 / (head_size as f32).sqrt();
    let mut context = vec![0f32; tokens * hidden];
    // One task per sequence: its rows are read once, whole, in order (a
    // task per head read 3 × 128 bytes of each 4.6 KB row, and waited on
    // memory for most of its time), and it writes its own rows of the
    // context.
    context
        .par_chunks_mut(width * hidden)
        .zip(qkv.par_chunks(width * 3 * hidden))
        .zip(lengths)
        .filter(|(_, &len)| len > 0)
        .for_each(|((out, rows), &len)| {
            SCRATCH.with(|scratch| {
                let scratch = &mut *scratch.borrow_mut();
                let padded = len.next_multiple_of(BLOCK);
                pack(scratch, &rows[..len * 3 * hidden], padded, heads, head_size);
                with_tiles(|| {
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

/// Rounds a sequence's queries and packs its keys and values into
/// `scratch`, every head's `padded · head_size` values after the other's,
/// zero-padded to `padded` positions, and sizes the per-block buffers. `rows` are the sequence's real
/// positions of the fused projection (3 · hidden each).
fn pack(scratch: &mut Scratch, rows: &[f32], padded: usize, heads: usize, head_size: usize) {
    let hidden = heads * head_size;
    let (steps, key_steps, per_head) = (head_size / STEP, padded / STEP, padded * head_size);
    for buffer in [&mut scratch.queries, &mut scratch.keys, &mut scratch.values] {
        buffer.resize(0);
        buffer.resize(heads * per_head);
    }
    scratch.row.resize(2 * 3 * hidden, 0);
    scratch.scores.resize(BLOCK * padded);
    scratch.probs.resize(BLOCK * padded);
    scratch.context.resize(BLOCK * head_size);
    // Two tokens at a time: token 2j's and 2j + 1's values of one
    // dimension sit side by side in the values' tiles, so 16 dimensions of
    // the pair fill one 64-byte tile row.
    for (j, pair) in rows.chunks(2 * 3 * hidden).enumerate() {
        let i = 2 * j;
        let both = pair.len() == 2 * 3 * hidden;
        // SAFETY: `available` (asserted by `attention`) implies AVX-512
        // BF16; both slices are a multiple of 16 long (3 · hidden each).
        unsafe { round_avx512(&mut scratch.row[..pair.len()], pair) };
        let (this, next) = scratch.row.split_at(3 * hidden);
        for (t, row) in [this, next].into_iter().enumerate().take(1 + both as usize) {
            let i = i + t;
            let (queries, rest) = row.split_at(hidden);
            let keys = &rest[..hidden];
            for head in 0..heads {
                let (at, base) = (head * head_size, head * per_head);
                scratch.queries[base + i * head_size..base + (i + 1) * head_size]
                    .copy_from_slice(&queries[at..at + head_size]);
                // Key i is output i % 16 of strip i / 16: in that strip's
                // tile for dimensions 32s..32s+32, row r holds its
                // dimensions 32s + 2r and 32s + 2r + 1 at slots 2 (i % 16)
                // and 2 (i % 16) + 1: one pair per tile row.
                let strip = base + i / 16 * steps * TILE + 2 * (i % 16);
                for (p, two) in keys[at..at + head_size].chunks_exact(2).enumerate() {
                    let to = strip + p / 16 * TILE + p % 16 * 32;
                    scratch.keys[to..to + 2].copy_from_slice(two);
                }
            }
        }
        // Value dimension d is output d % 16 of strip d / 16; key i is
        // input i of the product: tile i / 32 of the strip, row (i % 32) / 2,
        // slot 2 (d % 16) + i % 2. For an even i and its successor, the 16
        // dimensions of one strip are one tile row, the two tokens'
        // values interleaved.
        let within = i / STEP * TILE + i % STEP / 2 * 32;
        let values = &this[2 * hidden..];
        let following = both.then(|| &next[2 * hidden..3 * hidden]);
        for head in 0..heads {
            let (at, base) = (head * head_size, head * per_head);
            for strip in 0..head_size / 16 {
                let to = base + strip * key_steps * TILE + within;
                let row = &mut scratch.values[to..to + 32];
                let from = &values[at + strip * 16..at + strip * 16 + 16];
                match following {
                    Some(next) => {
                        let after = &next[at + strip * 16..at + strip * 16 + 16];
                        for ((slot, &a), &b) in row.chunks_exact_mut(2).zip(from).zip(after) {
                            slot[0] = a;
                            slot[1] = b;
                        }
                    }
                    None => {
                        for (slot, &a) in row.chunks_exact_mut(2).zip(from) {
                            slot[0] = a;
                        }
                    }
                }
            }
        }
    }
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
                scratch.queries.as_ptr().add(base + first * head_size),
                head_size,
                Strip {
                    tiles: scratch.keys.as_ptr().add(base + keys / 16 * steps * TILE),
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

    /// Against the f32 attention of the encoder, on ragged lengths and two
    /// head sizes: bf16 operands, so agreement to about 1%.
    #[test]
    fn attention_on_tiles_matches_the_f32_attention() {
        if !super::super::available() {
            eprintln!("skipped: this processor or system offers no AMX bf16 tiles");
            return;
        }
        for (heads, head_size, width, lengths) in [
            (3usize, 32usize, 70usize, vec![70usize, 33, 1]),
            (2, 64, 40, vec![40, 17]),
        ] {
            let hidden = heads * head_size;
            let tokens = lengths.len() * width;
            let qkv: Vec<f32> = (0..tokens * 3 * hidden)
                .map(|i| ((i as f32) * 0.013 + 0.2).sin() * 1.5)
                .collect();
            let got = attention(&qkv, &lengths, width, heads, head_size);
            let tensor =
                candle_core::Tensor::from_vec(qkv, (tokens, 3 * hidden), &candle_core::Device::Cpu)
                    .unwrap();
            let want = crate::embed::attention::fused_attention(
                &tensor, &lengths, width, heads, head_size, false,
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
