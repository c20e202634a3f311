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
use super::softmax::softmax_rows;
use super::tiles::{block_product, with_tiles, Strip};
use super::{Aligned, Batch, Packed, BLOCK, STEP, TILE};

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
    /// The sequence's context in bf16, `padded` rows of `hidden` (zeros
    /// past its length): the output projection's inputs.
    rounded: Aligned<u16>,
    /// A 32 × 32 block of the output projection whose rows run past the
    /// batch's width.
    last: Aligned<f32>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Attention's half of a layer without its closing bias, in bf16: the
/// attention context of `x` (tokens × hidden) times `out`ᵀ, where the
/// fused QKV projection is `qkv` with `bias` (outputs: queries, keys then
/// values, heads side by side in each). Per sequence, the projection runs
/// here (the `heads` module), and the context, rounded to bf16 as it comes
/// out of each head, goes through `out` while it is in the core's cache.
/// Rows of padded positions are 0.
pub fn attention(x: &[f32], qkv: &Packed, bias: &[f32], out: &Packed, batch: Batch) -> Vec<f32> {
    assert!(super::available(), "amx::attention without the matrix unit");
    let Batch {
        lengths,
        width,
        heads,
        head_size,
    } = batch;
    let hidden = heads * head_size;
    let tokens = lengths.len() * width;
    assert!(
        head_size > 0
            && head_size.is_multiple_of(STEP)
            && qkv.inputs == hidden
            && qkv.outputs == 3 * hidden
            && bias.len() == 3 * hidden
            && out.inputs == hidden
            && out.outputs == hidden
            && x.len() == tokens * hidden
            && lengths.iter().all(|&l| l <= width),
        "amx attention: shapes"
    );
    let scale = 1.0 / (head_size as f32).sqrt();
    let mut projected = vec![0f32; tokens * hidden];
    // One task per sequence: its rows are read once, whole, in order, and
    // it writes its own rows of the output.
    projected
        .par_chunks_mut(width * hidden)
        .zip(x.par_chunks(width * hidden))
        .zip(lengths)
        .filter(|(_, &len)| len > 0)
        .for_each(|((projected, rows), &len)| {
            SCRATCH.with(|scratch| {
                let scratch = &mut *scratch.borrow_mut();
                let padded = len.next_multiple_of(BLOCK);
                scratch.scores.resize(BLOCK * padded);
                scratch.probs.resize(BLOCK * padded);
                scratch.context.resize(BLOCK * head_size);
                scratch.rounded.resize(padded * hidden);
                scratch.rounded[len * hidden..].fill(0);
                scratch.last.resize(BLOCK * BLOCK);
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
                            let rows = scratch.rounded[first * hidden..].chunks_exact_mut(hidden);
                            let from = scratch.context.chunks_exact(head_size);
                            let real = BLOCK.min(len - first);
                            for ((to, from), &inverse) in
                                rows.zip(from).zip(&scratch.inverse).take(real)
                            {
                                let to = &mut to[head * head_size..(head + 1) * head_size];
                                // SAFETY: `available` implies AVX-512F and
                                // BF16; `head_size` is a multiple of 32.
                                unsafe { divide_rounded(to, from, inverse) };
                            }
                        }
                    }
                    project_out(scratch, out, projected, len, width);
                });
            });
        });
    projected
}

/// The sequence's context (`scratch.rounded`) times `out`ᵀ into its rows
/// of `projected` (`width` rows of `out`'s outputs): blocks of 32 rows
/// whose rows run past `width` go through `scratch.last`, and only their
/// rows before `len` are copied. The tile configuration is loaded.
fn project_out(
    scratch: &mut Scratch,
    out: &Packed,
    projected: &mut [f32],
    len: usize,
    width: usize,
) {
    let (np, kp) = out.padded();
    let steps = kp / STEP;
    assert!(np == out.outputs && kp == out.inputs && projected.len() == width * np);
    for first in (0..len).step_by(BLOCK) {
        let inputs = scratch.rounded[first * kp..].as_ptr();
        let whole = first + BLOCK <= width;
        for output in (0..np).step_by(BLOCK) {
            let (sums, ld) = match whole {
                true => (projected[first * np + output..].as_mut_ptr(), np),
                false => (scratch.last.as_mut_ptr(), BLOCK),
            };
            // SAFETY: `rounded` holds `padded` rows of `kp` bf16, so rows
            // `first..first + 32` exist; `out`'s tiles of outputs
            // `output..output + 32` are `2 · steps` tiles from
            // `output / 16 · steps`; the block of sums is 32 rows of `ld`
            // floats, inside `projected` (rows `first..first + 32 <= width`)
            // or `last` (32 × 32).
            unsafe {
                block_product(
                    sums,
                    ld,
                    inputs,
                    kp,
                    Strip {
                        tiles: out.tiles.as_ptr().add(output / 16 * steps * TILE),
                        steps,
                        start: None,
                    },
                    |_| {},
                );
            }
            if !whole {
                let rows = projected[first * np..].chunks_exact_mut(np);
                for (to, from) in rows.zip(scratch.last.chunks_exact(BLOCK)).take(len - first) {
                    to[output..output + BLOCK].copy_from_slice(from);
                }
            }
        }
    }
}

/// `dst = bf16(src · inverse)`, both a multiple of 16 long.
#[target_feature(enable = "avx512f,avx512bf16")]
fn divide_rounded(dst: &mut [u16], src: &[f32], inverse: f32) {
    use std::arch::x86_64::*;
    let inverse = _mm512_set1_ps(inverse);
    for (to, from) in dst.chunks_exact_mut(16).zip(src.chunks_exact(16)) {
        // SAFETY: both chunks hold 16 values: 64 bytes read, 32 written.
        unsafe {
            let v = _mm512_mul_ps(_mm512_loadu_ps(from.as_ptr()), inverse);
            let rounded: __m256i = std::mem::transmute(_mm512_cvtneps_pbh(v));
            _mm256_storeu_si256(to.as_mut_ptr().cast(), rounded);
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
            BLOCK.min(len - first),
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
