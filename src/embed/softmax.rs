//! Attention softmax with the padding mask folded in. Adding the most
//! negative f32 to padded keys before softmax, as transformers does, makes
//! their weights exactly 0; here padded keys are skipped outright, so the
//! mask is never materialised or added, and no exponential is spent on
//! them. Rows run in parallel with a vectorisable exp, in place: the scores
//! of a batch are its largest activation, and a fresh buffer for them costs
//! page faults on every layer. On GPUs and in half precision the plain
//! candle ops (additive mask, `softmax_last_dim`) are used.

use candle_core::{CpuStorage, DType, InplaceOp1, Layout, Result, Tensor};
use rayon::prelude::*;

/// Softmax over the last dimension of `scores` (batch, heads, queries,
/// keys), where batch item `i` has `lengths[i]` real keys followed by padding.
/// On the CPU the result is written over `scores` (contiguous ones), which
/// is why it is taken by value: nothing else should hold its storage.
pub fn masked_softmax(scores: Tensor, mask: &Tensor, lengths: &[usize]) -> Result<Tensor> {
    if !scores.device().is_cpu() || scores.dtype() != DType::F32 {
        // In half precision f32::MIN becomes -inf: still a weight of 0,
        // and every row has at least one real key.
        let (batch, _, _, keys) = scores.dims4()?;
        let mask = mask.to_dtype(DType::F32)?;
        let additive = ((mask.ones_like()? - mask)? * f64::from(f32::MIN))?
            .to_dtype(scores.dtype())?
            .reshape((batch, 1, 1, keys))?;
        return candle_nn::ops::softmax_last_dim(&scores.broadcast_add(&additive)?);
    }
    let scores = if scores.is_contiguous() {
        scores
    } else {
        scores.contiguous()?
    };
    scores.inplace_op1(&MaskedSoftmax {
        lengths: lengths.to_vec(),
    })?;
    Ok(scores)
}

struct MaskedSoftmax {
    lengths: Vec<usize>,
}

impl InplaceOp1 for MaskedSoftmax {
    fn name(&self) -> &'static str {
        "masked-softmax"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> Result<()> {
        let CpuStorage::F32(data) = storage else {
            candle_core::bail!("masked-softmax: f32 only");
        };
        let Some((start, end)) = layout.contiguous_offsets() else {
            candle_core::bail!("masked-softmax: contiguous input only");
        };
        let (batch, heads, queries, keys) = layout.shape().dims4()?;
        if self.lengths.len() != batch || self.lengths.iter().any(|&l| l == 0 || l > keys) {
            candle_core::bail!(
                "masked-softmax: lengths {:?} for {batch}x{keys}",
                self.lengths
            );
        }
        let rows_per_item = heads * queries;
        data[start..end]
            .par_chunks_mut(keys)
            .enumerate()
            .with_min_len(64)
            .for_each(|(row, scores)| {
                let (real, padded) = scores.split_at_mut(self.lengths[row / rows_per_item]);
                softmax_in_place(real);
                padded.fill(0.0);
            });
        Ok(())
    }
}

/// Replaces `row` by its softmax. Compiled for several SIMD levels, the
/// best the CPU has chosen at run time (the exponentials are most of the
/// softmax's time, and the baseline x86-64 target has 4-wide vectors only);
/// without fused multiply-adds every level gives the same bits.
#[multiversion::multiversion(targets = "simd")]
pub(super) fn softmax_in_place(row: &mut [f32]) {
    // A compare and select: `f32::max`'s NaN rule costs a blend per lane,
    // which made the whole softmax several times slower.
    let max = in_lanes(row, f32::NEG_INFINITY, |a, b| if a > b { a } else { b });
    // The exponentials and their sum in one pass, the sum kept in 16
    // independent lanes (one running sum must be added in order, which
    // would keep the loop from being vectorised); the lanes are then
    // folded as `in_lanes` folds them.
    let mut lanes = [0f32; 16];
    let mut chunks = row.chunks_exact_mut(16);
    for chunk in &mut chunks {
        for (lane, v) in lanes.iter_mut().zip(chunk.iter_mut()) {
            *v = exp_nonpositive(*v - max);
            *lane += *v;
        }
    }
    let mut sum = lanes.into_iter().fold(0.0, |a, b| a + b);
    for v in chunks.into_remainder() {
        *v = exp_nonpositive(*v - max);
        sum += *v;
    }
    let scale = 1.0 / sum;
    row.iter_mut().for_each(|v| *v *= scale);
}

/// Folds `values` with `op` in 16 independent lanes, then folds the lanes:
/// a reduction the compiler can vectorise, unlike one accumulator.
#[inline(always)]
fn in_lanes(values: &[f32], init: f32, op: impl Fn(f32, f32) -> f32) -> f32 {
    let mut lanes = [init; 16];
    let chunks = values.chunks_exact(16);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, &v) in lanes.iter_mut().zip(chunk) {
            *lane = op(*lane, v);
        }
    }
    rest.iter()
        .fold(lanes.into_iter().fold(init, &op), |acc, &v| op(acc, v))
}

/// e^x for x <= 0, to about 1e-7 relative: x = n·ln2 + r with |r| <= ln2/2,
/// e^r by its Taylor series to degree 7, 2^n through the exponent bits.
/// Written without library calls so that loops over it vectorise.
#[inline(always)]
fn exp_nonpositive(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    // Adding and subtracting 1.5·2^23 rounds to the nearest integer.
    const ROUND: f32 = 12_582_912.0;
    // A compare and select, not `f32::max` (whose NaN rule costs a blend).
    let x = if x < -87.0 { -87.0 } else { x };
    let shifted = x * std::f32::consts::LOG2_E + ROUND;
    let n = shifted - ROUND;
    // n as an integer, read from the mantissa of `shifted` rather than
    // converted (a saturating float-to-int conversion does not vectorise
    // as cheaply).
    let n_int = shifted.to_bits().wrapping_sub(ROUND.to_bits()) as i32;
    let r = x - n * LN2_HI - n * LN2_LO;
    let mut p = 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    f32::from_bits((n_int.wrapping_add(127) as u32) << 23) * p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_accurate_on_the_non_positive_range() {
        let mut worst = 0f64;
        for i in 0..=870_000 {
            let x = -(i as f32) / 10_000.0;
            let want = f64::from(x).exp();
            let rel = (f64::from(exp_nonpositive(x)) - want).abs() / want;
            worst = worst.max(rel);
        }
        assert!(worst < 5e-7, "worst relative error {worst}");
    }

    #[test]
    fn matches_additive_mask_and_candle_softmax() {
        let device = candle_core::Device::Cpu;
        let (batch, heads, length) = (3, 2, 5);
        let scores = Tensor::arange(0f32, (batch * heads * length * length) as f32, &device)
            .unwrap()
            .reshape((batch, heads, length, length))
            .unwrap();
        let scores = (scores.sin().unwrap() * 4.0).unwrap();
        let lengths = [5, 3, 1];
        let mask: Vec<u32> = lengths
            .iter()
            .flat_map(|&l| (0..length).map(move |j| u32::from(j < l)))
            .collect();
        let mask = Tensor::from_vec(mask, (batch, length), &device).unwrap();
        let additive = ((mask.ones_like().unwrap().to_dtype(DType::F32).unwrap()
            - mask.to_dtype(DType::F32).unwrap())
        .unwrap()
            * f64::from(f32::MIN))
        .unwrap()
        .reshape((batch, 1, 1, length))
        .unwrap();
        let want =
            candle_nn::ops::softmax_last_dim(&scores.broadcast_add(&additive).unwrap()).unwrap();
        let got = masked_softmax(scores.copy().unwrap(), &mask, &lengths).unwrap();
        let diff = (got - want)
            .unwrap()
            .abs()
            .unwrap()
            .flatten_all()
            .unwrap()
            .max(0)
            .unwrap();
        assert!(diff.to_scalar::<f32>().unwrap() < 1e-6);
    }
}
