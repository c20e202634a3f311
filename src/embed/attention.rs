//! Self-attention on the CPU in f32, fused per sequence and head: the
//! scores of one head of one sequence (at most 512 × 512 floats) are
//! computed, softmaxed and multiplied by the values while they sit in the
//! core's cache, instead of writing a whole batch's scores tensor (tens of
//! MB) to memory and reading it back twice. Queries, keys and values are
//! read in place from the fused QKV projection; padded positions are never
//! touched (their context rows stay 0: nothing real attends to them, and
//! pooling leaves them out). The arithmetic is the unfused encoder's:
//! QKᵀ scaled by 1/sqrt(head size), the same softmax, then ·V.

use candle_core::{Result, Tensor};
use rayon::prelude::*;

use super::dense::Dense;
use super::product::cpu_values;
use super::softmax::softmax_in_place;

/// The attention context (tokens × hidden) of `qkv` (tokens × 3·hidden,
/// queries then keys then values, heads side by side in each), for a batch
/// of `lengths.len()` sequences padded to `width` positions.
pub fn fused_attention(
    qkv: &Tensor,
    lengths: &[usize],
    width: usize,
    heads: usize,
    head_size: usize,
) -> Result<Tensor> {
    let hidden = heads * head_size;
    let tokens = lengths.len() * width;
    if qkv.dims() != [tokens, 3 * hidden] || lengths.iter().any(|&l| l > width) {
        candle_core::bail!("attention: qkv {:?} for {lengths:?} x {width}", qkv.dims());
    }
    let (storage, layout) = qkv.storage_and_layout();
    let qkv = cpu_values(&storage, layout, "attention")?;
    let scale = 1.0 / (head_size as f32).sqrt();

    // One task per sequence and head. Each writes its own rows × columns
    // block of `context` (its sequence's real positions, its head's
    // columns): disjoint blocks of one buffer, written through its address.
    let mut context = vec![0f32; tokens * hidden];
    let at = context.as_mut_ptr() as usize;
    (0..lengths.len() * heads).into_par_iter().for_each(|task| {
        let (seq, head) = (task / heads, task % heads);
        let len = lengths[seq];
        let rows = &qkv[seq * width * 3 * hidden..];
        let column = head * head_size;
        SCORES.with(|scores| {
            let mut scores = scores.borrow_mut();
            scores.resize(len * len, 0.0);
            let scores = &mut scores[..len * len];
            // scores = scale · Q Kᵀ (len × len).
            product(
                scores.as_mut_ptr(),
                len,
                (len, len, head_size),
                (&rows[column..], 3 * hidden, 1),
                (&rows[hidden + column..], 1, 3 * hidden),
                scale,
            );
            scores.chunks_exact_mut(len).for_each(softmax_in_place);
            // context rows of this sequence, this head's columns = scores · V.
            let first = (seq * width) * hidden + column;
            assert!(len == 0 || first + (len - 1) * hidden + head_size <= tokens * hidden);
            product(
                (at as *mut f32).wrapping_add(first),
                hidden,
                (len, head_size, len),
                (scores, len, 1),
                (&rows[2 * hidden + column..], 3 * hidden, 1),
                1.0,
            );
        });
    });
    drop(storage);
    Tensor::from_vec(context, (tokens, hidden), &candle_core::Device::Cpu)
}

/// Attention's half of a layer without its closing bias, `context ·
/// outᵀ`, in bf16 on the matrix unit from the layer's input `x` (tokens ×
/// hidden), where its fused QKV projection `qkv` and its output
/// projection `out` are packed for the unit ([`super::amx::attention`],
/// which runs both projections; heads of a multiple of 32 dimensions);
/// `None` elsewhere, for the caller to project, call [`fused_attention`]
/// and project again.
pub fn attention_on_tiles(
    qkv: &Dense,
    out: &Dense,
    x: &Tensor,
    lengths: &[usize],
    width: usize,
    heads: usize,
    head_size: usize,
) -> Result<Option<Tensor>> {
    let (Some((packed, bias)), Some((out, _))) = (qkv.packed(), out.packed()) else {
        return Ok(None);
    };
    let hidden = heads * head_size;
    let tokens = lengths.len() * width;
    if x.dims() != [tokens, hidden]
        || lengths.iter().any(|&l| l > width)
        || !head_size.is_multiple_of(32)
        || packed.inputs() != hidden
        || packed.outputs() != 3 * hidden
        || out.inputs() != hidden
        || out.outputs() != hidden
    {
        candle_core::bail!("attention: input {:?} for {lengths:?} x {width}", x.dims());
    }
    let (storage, layout) = x.storage_and_layout();
    let input = cpu_values(&storage, layout, "attention")?;
    let batch = super::amx::Batch {
        lengths,
        width,
        heads,
        head_size,
    };
    let projected = super::amx::attention(input, packed, bias, out, batch);
    drop(storage);
    Tensor::from_vec(projected, (tokens, hidden), &candle_core::Device::Cpu).map(Some)
}

thread_local! {
    /// Each worker's scores buffer, kept between tasks: a fresh one per
    /// head (up to 1 MB) would be mapped and faulted in every time.
    static SCORES: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `dst (m × n, row stride `dst_stride`) = scale · lhs (m × k) · rhs (k × n)`
/// on this thread, the operands given as (slice, row stride, column stride).
/// The caller owns the m × n block at `dst` and no one else writes it.
fn product(
    dst: *mut f32,
    dst_stride: usize,
    (m, n, k): (usize, usize, usize),
    lhs: (&[f32], usize, usize),
    rhs: (&[f32], usize, usize),
    scale: f32,
) {
    let fits = |(data, rows, cols): (&[f32], usize, usize), r: usize, c: usize| {
        r == 0 || c == 0 || (r - 1) * rows + (c - 1) * cols < data.len()
    };
    assert!(fits(lhs, m, k) && fits(rhs, k, n) && n <= dst_stride.max(1));
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    // SAFETY: the assertion bounds every element gemm reads through `lhs`
    // and `rhs`; the caller guarantees the m × n block at `dst` (row
    // stride `dst_stride`) is in bounds and written by this call alone.
    // With `read_dst` false its old contents are not read.
    unsafe {
        super::product::gemm_here(
            (m, n, k),
            (dst, 1, dst_stride as isize),
            (lhs.0.as_ptr(), lhs.2 as isize, lhs.1 as isize),
            (rhs.0.as_ptr(), rhs.2 as isize, rhs.1 as isize),
            scale,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::softmax::masked_softmax;
    use candle_core::Device;

    /// The fused pass against the tensor ops the GPU runs, on every real
    /// position; padded positions are left 0.
    #[test]
    fn fused_attention_matches_the_tensor_ops() {
        let device = Device::Cpu;
        let (heads, head_size, width) = (3, 8, 11);
        let lengths = [11, 6, 1];
        let (batch, hidden) = (lengths.len(), heads * head_size);
        let tokens = batch * width;
        let qkv = Tensor::arange(0f32, (tokens * 3 * hidden) as f32, &device)
            .unwrap()
            .affine(0.013, 0.2)
            .unwrap()
            .sin()
            .unwrap()
            .reshape((tokens, 3 * hidden))
            .unwrap();
        let got = fused_attention(&qkv, &lengths, width, heads, head_size).unwrap();

        let mask: Vec<u32> = lengths
            .iter()
            .flat_map(|&l| (0..width).map(move |j| u32::from(j < l)))
            .collect();
        let mask = Tensor::from_vec(mask, (batch, width), &device).unwrap();
        let parts = qkv
            .reshape((batch, width, 3, heads, head_size))
            .unwrap()
            .permute((2, 0, 3, 1, 4))
            .unwrap();
        let part = |i| parts.get(i).unwrap().contiguous().unwrap();
        let q = (part(0) * (1.0 / (head_size as f64).sqrt())).unwrap();
        let scores = q.matmul(&part(1).t().unwrap()).unwrap();
        let want = masked_softmax(&scores, &mask)
            .unwrap()
            .matmul(&part(2))
            .unwrap()
            .transpose(1, 2)
            .unwrap()
            .contiguous()
            .unwrap()
            .reshape((tokens, hidden))
            .unwrap();

        let (got, want) = (
            got.to_vec2::<f32>().unwrap(),
            want.to_vec2::<f32>().unwrap(),
        );
        for (row, (g, w)) in got.iter().zip(&want).enumerate() {
            let (seq, position) = (row / width, row % width);
            if position < lengths[seq] {
                let worst = g
                    .iter()
                    .zip(w)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0f32, f32::max);
                assert!(worst < 1e-5, "row {row}: worst difference {worst}");
            } else {
                assert!(g.iter().all(|&v| v == 0.0), "padded row {row} written");
            }
        }
    }

    /// The attention on AMX tiles (`amx::attention`), against this one.
    mod tiles {
        use crate::embed::amx;

        /// Against the f32 projections and attention of the encoder over the
        /// bf16-rounded input and weights, on ragged lengths (one past a
        /// multiple of 32, and the batch's width not one) and two head sizes:
        /// the projections' and attention's operands are rounded to bf16 too,
        /// so agreement to about 1%.
        #[test]
        fn attention_on_tiles_matches_the_f32_attention() {
            if !amx::available() {
                eprintln!("skipped: this processor or system offers no AMX bf16 tiles");
                return;
            }
            let widen = |v: f32| f64::from(f32::from_bits(u32::from(amx::bf16(v)) << 16));
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
                let out: Vec<f32> = (0..hidden * hidden)
                    .map(|i| ((i as f32) * 0.53).sin() * 0.1)
                    .collect();
                let batch = amx::Batch {
                    lengths: &lengths,
                    width,
                    heads,
                    head_size,
                };
                let got = amx::attention(
                    &x,
                    &amx::Packed::new(&weight, 3 * hidden, hidden),
                    &bias,
                    &amx::Packed::new(&out, hidden, hidden),
                    batch,
                );
                let qkv: Vec<f32> = (0..tokens * 3 * hidden)
                    .map(|i| {
                        let (t, o) = (i / (3 * hidden), i % (3 * hidden));
                        let dot: f64 = (0..hidden)
                            .map(|j| widen(x[t * hidden + j]) * widen(weight[o * hidden + j]))
                            .sum();
                        (f64::from(bias[o]) + dot) as f32
                    })
                    .collect();
                let tensor = candle_core::Tensor::from_vec(
                    qkv,
                    (tokens, 3 * hidden),
                    &candle_core::Device::Cpu,
                )
                .unwrap();
                let want = super::fused_attention(&tensor, &lengths, width, heads, head_size)
                    .unwrap()
                    .flatten_all()
                    .unwrap()
                    .to_vec1::<f32>()
                    .unwrap();
                // The context times `out`ᵀ, over the bf16-rounded context.
                let want: Vec<f32> = (0..tokens * hidden)
                    .map(|i| {
                        let (t, o) = (i / hidden, i % hidden);
                        let dot: f64 = (0..hidden)
                            .map(|j| widen(want[t * hidden + j]) * widen(out[o * hidden + j]))
                            .sum();
                        dot as f32
                    })
                    .collect();
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
}
