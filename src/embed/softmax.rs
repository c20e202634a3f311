//! The attention softmax, two ways. [`softmax_in_place`] is the CPU's:
//! one row of real keys (the fused attention and the mapped encoder never
//! hand it padding), in place, with a vectorisable exp. [`masked_softmax`]
//! is the tensor version that GPUs and half precision run: the most
//! negative f32 added to padded keys, as transformers does (their weights
//! come out exactly 0), then candle's `softmax_last_dim`.

use candle_core::{DType, Result, Tensor};

/// Softmax over the last dimension of `scores` (batch, heads, queries,
/// keys), with `mask` (batch, keys) 1 for real keys and 0 for padding.
pub fn masked_softmax(scores: &Tensor, mask: &Tensor) -> Result<Tensor> {
    // In half precision f32::MIN becomes -inf: still a weight of 0, and
    // every row has at least one real key.
    let (batch, _, _, keys) = scores.dims4()?;
    let mask = mask.to_dtype(DType::F32)?;
    let additive = ((mask.ones_like()? - mask)? * f64::from(f32::MIN))?
        .to_dtype(scores.dtype())?
        .reshape((batch, 1, 1, keys))?;
    candle_nn::ops::softmax_last_dim(&scores.broadcast_add(&additive)?)
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
    fn rows_match_candle_softmax_and_padding_gets_nothing() {
        let device = candle_core::Device::Cpu;
        let (batch, heads, length) = (3, 2, 37);
        let scores = Tensor::arange(0f32, (batch * heads * length * length) as f32, &device)
            .unwrap()
            .reshape((batch, heads, length, length))
            .unwrap();
        let scores = (scores.sin().unwrap() * 4.0).unwrap();
        let lengths = [37, 20, 1];
        let mask: Vec<u32> = lengths
            .iter()
            .flat_map(|&l| (0..length).map(move |j| u32::from(j < l)))
            .collect();
        let mask = Tensor::from_vec(mask, (batch, length), &device).unwrap();
        let want = masked_softmax(&scores, &mask).unwrap();
        let want = want.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let mut got = scores.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        for (i, row) in got.chunks_exact_mut(length).enumerate() {
            let real = lengths[i / (heads * length)];
            softmax_in_place(&mut row[..real]);
            row[real..].fill(0.0);
        }
        let worst = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(worst < 1e-6, "worst difference {worst}");
    }
}
