//! One sequence's queries, keys and values, in the layouts attention's
//! tile products read, straight from the layer's input rows: the fused QKV
//! projection runs on the tiles one 32 × 32 block of sums at a time, and
//! each block is rounded to bf16 and written where attention will read it.
//! The projection's f32 output (4.6 KB a token for MiniLM) never reaches
//! memory, and nothing reads it back to round it. Each block of sums is
//! placed while the matrix unit computes the next one.
//!
//! With heads of a multiple of 32 dimensions, a block of 32 outputs is 32
//! dimensions of one head of one of the three. Per head, for `padded`
//! positions (the sequence's length rounded up to 32):
//!
//! - queries: `padded` rows of the head's dimensions (the inputs of Q·Kᵀ);
//! - keys, packed as the weight of a product whose outputs are the keys:
//!   for each 16 keys and 32 dimensions one tile, whose row `r` holds
//!   dimensions `2r` and `2r + 1` of each key side by side;
//! - values, packed as the weight of a product whose outputs are the
//!   dimensions and whose inputs are the keys: for each 16 dimensions and
//!   32 keys one tile, whose row `r` holds keys `2r` and `2r + 1` of each
//!   dimension side by side.
//!
//! Positions past the sequence's length hold the projection of a zero row
//! (the bias): finite keys whose scores softmax masks, and values that
//! probability 0 multiplies.

use super::tiles::{block_product, round_avx512, round_blocks, Strip};
use super::{Aligned, Packed, BLOCK, STEP, TILE};

/// A worker's buffers for one sequence.
#[derive(Default)]
pub(super) struct Heads {
    /// Queries, keys and values in bf16, every head's `padded · head_size`
    /// values after the other's.
    pub queries: Aligned<u16>,
    pub keys: Aligned<u16>,
    pub values: Aligned<u16>,
    /// 32 input rows in bf16.
    input: Aligned<u16>,
    /// Two 32 × 32 blocks of the projection's sums: one being written, one
    /// being placed.
    sums: Aligned<f32>,
}

/// Which of the three a block of the projection's outputs is, its head and
/// its first dimension there.
#[derive(Clone, Copy)]
struct Place {
    part: usize,
    head: usize,
    dim: usize,
    /// The block's first position.
    first: usize,
}

impl Heads {
    /// Projects the sequence's `rows` (its real positions, `weight.inputs`
    /// values each) through `weight` (queries, keys then values, heads
    /// side by side in each), its sums starting from `start`, for `heads`
    /// heads of `head_size` dimensions and `padded` positions. The tile
    /// configuration must be loaded.
    pub fn project(
        &mut self,
        rows: &[f32],
        weight: &Packed,
        start: &[f32],
        padded: usize,
        heads: usize,
        head_size: usize,
    ) {
        let hidden = heads * head_size;
        let (np, kp) = weight.padded();
        let k = weight.inputs;
        assert!(
            weight.outputs == 3 * hidden
                && np == 3 * hidden
                && start.len() == np
                && head_size.is_multiple_of(STEP)
                && rows.len().is_multiple_of(k)
                && rows.len() / k <= padded
                && padded.is_multiple_of(BLOCK),
            "amx heads: shapes"
        );
        for buffer in [&mut self.queries, &mut self.keys, &mut self.values] {
            buffer.resize(heads * padded * head_size);
        }
        self.input.resize(BLOCK * kp);
        self.sums.resize(2 * BLOCK * BLOCK);
        // SAFETY: `available` (checked by the caller) implies AVX-512F and
        // BF16.
        unsafe { self.run(rows, weight, start, padded, head_size) };
    }

    #[target_feature(enable = "avx512f,avx512bf16")]
    fn run(
        &mut self,
        rows: &[f32],
        weight: &Packed,
        start: &[f32],
        padded: usize,
        head_size: usize,
    ) {
        let (np, kp) = weight.padded();
        let (k, steps) = (weight.inputs, kp / STEP);
        let hidden = np / 3;
        let Heads {
            queries,
            keys,
            values,
            input,
            sums,
        } = self;
        let (one, other) = sums.split_at_mut(BLOCK * BLOCK);
        let mut sums = [one, other];
        let mut pending: Option<Place> = None;
        let mut placer = Placer {
            queries,
            keys,
            values,
            padded,
            head_size,
        };
        for first in (0..padded).step_by(BLOCK) {
            round_blocks(input, rows.get(first * k..).unwrap_or(&[]), 1, k, kp);
            for output in (0..np).step_by(BLOCK) {
                let [target, previous] = &mut sums;
                let previous = &**previous;
                // SAFETY: `input` is 32 rows of `kp` bf16; the weight's
                // tiles of outputs `output..output + 32` are `2 · steps`
                // tiles from `output / 16 · steps`, inside its `np · kp`
                // values; `target` is 32 × 32 floats and `start` holds `np`.
                unsafe {
                    block_product(
                        target.as_mut_ptr(),
                        BLOCK,
                        input.as_ptr(),
                        kp,
                        Strip {
                            tiles: weight.tiles.as_ptr().add(output / 16 * steps * TILE),
                            steps,
                            start: Some(start.as_ptr().add(output)),
                        },
                        |step| {
                            if let Some(place) = pending {
                                // Whole pairs of rows: values take two.
                                let pairs =
                                    step * BLOCK / 2 / steps..(step + 1) * BLOCK / 2 / steps;
                                let rows = 2 * pairs.start..2 * pairs.end;
                                placer.place(previous, place, rows);
                            }
                        },
                    );
                }
                pending = Some(Place {
                    part: output / hidden,
                    head: output % hidden / head_size,
                    dim: output % head_size,
                    first,
                });
                sums.swap(0, 1);
            }
        }
        if let Some(place) = pending {
            placer.place(sums[1], place, 0..BLOCK);
        }
    }
}

/// Writes blocks of the projection where attention reads them.
struct Placer<'a> {
    queries: &'a mut [u16],
    keys: &'a mut [u16],
    values: &'a mut [u16],
    padded: usize,
    head_size: usize,
}

impl Placer<'_> {
    /// Rounds rows `rows` of the 32 × 32 block `sums` (its outputs at
    /// `place`) to bf16 into their places. Values go two rows at a time:
    /// `rows` starts and ends on even rows.
    #[target_feature(enable = "avx512f,avx512bf16")]
    #[inline]
    fn place(&mut self, sums: &[f32], place: Place, rows: std::ops::Range<usize>) {
        let (padded, head_size) = (self.padded, self.head_size);
        let base = place.head * padded * head_size;
        let mut rounded = [[0u16; BLOCK]; 2];
        // AVX-512F and BF16 are enabled here (and in the closure); 32
        // values each.
        let round = |to: &mut [u16; BLOCK], r: usize| {
            round_avx512(&mut to[..], &sums[r * BLOCK..(r + 1) * BLOCK])
        };
        match place.part {
            0 => {
                for r in rows {
                    let at = base + (place.first + r) * head_size + place.dim;
                    round(&mut rounded[0], r);
                    self.queries[at..at + BLOCK].copy_from_slice(&rounded[0]);
                }
            }
            1 => {
                let steps = head_size / STEP;
                for r in rows {
                    // Key i is output i % 16 of strip i / 16; its dimension
                    // pair p (of this block's 16) is row p of the strip's
                    // tile for these 32 dimensions, slots 2 (i % 16) and
                    // 2 (i % 16) + 1.
                    let i = place.first + r;
                    let at = base + i / 16 * steps * TILE + place.dim / STEP * TILE + 2 * (i % 16);
                    round(&mut rounded[0], r);
                    for (p, pair) in rounded[0].chunks_exact(2).enumerate() {
                        self.keys[at + p * 32..at + p * 32 + 2].copy_from_slice(pair);
                    }
                }
            }
            _ => {
                let key_steps = padded / STEP;
                for r in rows.step_by(2) {
                    // Dimension d is output d % 16 of strip d / 16; keys i
                    // and i + 1 (i even) are one row of the strip's tile for
                    // keys 32 (i / 32)..: slots 2 (d % 16) and 2 (d % 16) + 1.
                    let i = place.first + r;
                    let [this, next] = &mut rounded;
                    round(this, r);
                    round(next, r + 1);
                    for half in 0..2 {
                        let d = place.dim + 16 * half;
                        let at =
                            base + d / 16 * key_steps * TILE + i / STEP * TILE + i % STEP / 2 * 32;
                        let row = &mut self.values[at..at + 32];
                        for (c, slot) in row.chunks_exact_mut(2).enumerate() {
                            slot[0] = this[16 * half + c];
                            slot[1] = next[16 * half + c];
                        }
                    }
                }
            }
        }
    }
}
