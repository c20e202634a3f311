//! From token vectors to one sentence vector: the pooling modes of
//! sentence-transformers' Pooling module, then its Normalize module. Runs
//! where the hidden states are (a GPU pools there and copies back one
//! vector per text), always in f32.

use candle_core::{DType, Result, Tensor, D};

/// The pooling strategies sentence-transformers' Pooling module offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pooling {
    /// Mean of the token vectors under the attention mask.
    Mean,
    /// The `[CLS]` token's vector.
    Cls,
    /// Element-wise maximum over the unmasked tokens.
    Max,
    /// Sum of the unmasked token vectors divided by the square root of their number.
    MeanSqrtLen,
}

impl Pooling {
    /// Pools hidden states (batch, length, hidden), of any float type,
    /// under the attention mask (batch, length) of 1s and 0s, and
    /// normalises to unit length.
    pub fn pool(self, hidden: &Tensor, mask: &Tensor) -> Result<Vec<Vec<f32>>> {
        let hidden = hidden.to_dtype(DType::F32)?;
        let flat = mask.to_dtype(DType::F32)?;
        let mask = flat.unsqueeze(2)?;
        let pooled = match self {
            Pooling::Cls => hidden.narrow(1, 0, 1)?.squeeze(1)?,
            Pooling::Mean | Pooling::MeanSqrtLen => {
                let cpu = hidden.device().is_cpu() && hidden.is_contiguous();
                let sum = match cpu && hidden.elem_count() > 0 {
                    true => masked_sum(&hidden, &flat)?,
                    false => hidden.broadcast_mul(&mask)?.sum(1)?,
                };
                let count = mask.sum(1)?.clamp(1e-9, f64::INFINITY)?;
                let count = match self {
                    Pooling::Mean => count,
                    _ => count.sqrt()?,
                };
                sum.broadcast_div(&count)?
            }
            Pooling::Max => {
                let masked_out = ((mask.ones_like()? - &mask)? * -1e9)?;
                hidden.broadcast_add(&masked_out)?.max(1)?
            }
        };
        // torch.nn.functional.normalize(p=2, eps=1e-12), as the Normalize module does.
        let norm = pooled
            .sqr()?
            .sum_keepdim(D::Minus1)?
            .sqrt()?
            .clamp(1e-12, f64::INFINITY)?;
        pooled.broadcast_div(&norm)?.to_vec2()
    }
}

/// `Σ_p hidden[b, p, :] · mask[b, p]` for contiguous f32 `hidden` (batch,
/// length, hidden) on the CPU: the same sums in the same order as
/// candle's broadcast multiply and sum over positions (from 0, positions
/// ascending), without the masked positions, whose ±0 terms change no sum.
/// Candle's ops copy and add one value at a time with an index computed
/// for each (4% of bf16 indexing time in `perf`).
fn masked_sum(hidden: &Tensor, mask: &Tensor) -> Result<Tensor> {
    let (batch, length, size) = hidden.dims3()?;
    let mask = mask.to_vec2::<f32>()?;
    let (storage, layout) = hidden.storage_and_layout();
    let values = super::product::cpu_values(&storage, layout, "pooling")?;
    let mut out = vec![0f32; batch * size];
    for ((sum, weights), rows) in out
        .chunks_exact_mut(size)
        .zip(&mask)
        .zip(values.chunks_exact(length * size))
    {
        for (&weight, row) in weights.iter().zip(rows.chunks_exact(size)) {
            if weight != 0.0 {
                for (s, x) in sum.iter_mut().zip(row) {
                    *s += x * weight;
                }
            }
        }
    }
    drop(storage);
    Tensor::from_vec(out, (batch, size), hidden.device())
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    fn hidden() -> (Tensor, Tensor) {
        // Two sequences of three positions, two features; the second has
        // one padded position holding a value that must not count.
        let h = Tensor::new(
            &[
                [[1f32, 0.], [3., 0.], [2., 2.]],
                [[0f32, 1.], [0., 3.], [100., 100.]],
            ],
            &Device::Cpu,
        )
        .unwrap();
        let mask = Tensor::new(&[[1u32, 1, 1], [1, 1, 0]], &Device::Cpu).unwrap();
        (h, mask)
    }

    /// The CPU's masked sum gives candle's sums bit for bit, on values
    /// whose sums round differently in another order.
    #[test]
    fn masked_sums_are_candles() {
        let (batch, length, size) = (3, 7, 5);
        let values: Vec<f32> = (0..batch * length * size)
            .map(|i| ((i as f32) * 0.77).sin() * 10f32.powi(i as i32 % 5 - 2))
            .collect();
        let hidden = Tensor::from_vec(values, (batch, length, size), &Device::Cpu).unwrap();
        let mask: Vec<f32> = (0..batch * length)
            .map(|i| f32::from(u8::from(i % length < [7, 4, 1][i / length])))
            .collect();
        let mask = Tensor::from_vec(mask, (batch, length), &Device::Cpu).unwrap();
        let want = hidden
            .broadcast_mul(&mask.unsqueeze(2).unwrap())
            .unwrap()
            .sum(1)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        let got = masked_sum(&hidden, &mask)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        assert_eq!(got, want);
    }

    fn unit(v: [f32; 2]) -> Vec<f32> {
        let n = (v[0] * v[0] + v[1] * v[1]).sqrt();
        vec![v[0] / n, v[1] / n]
    }

    #[test]
    fn modes_follow_sentence_transformers() {
        let (h, mask) = hidden();
        let close = |a: &[Vec<f32>], b: &[Vec<f32>]| {
            a.iter()
                .flatten()
                .zip(b.iter().flatten())
                .all(|(x, y)| (x - y).abs() < 1e-6)
        };
        let mean = Pooling::Mean.pool(&h, &mask).unwrap();
        assert!(close(&mean, &[unit([2., 2. / 3.]), unit([0., 2.])]));
        let cls = Pooling::Cls.pool(&h, &mask).unwrap();
        assert!(close(&cls, &[unit([1., 0.]), unit([0., 1.])]));
        let max = Pooling::Max.pool(&h, &mask).unwrap();
        assert!(close(&max, &[unit([3., 2.]), unit([0., 3.])]));
        // Mean and mean-sqrt-len differ only in length, gone after normalising.
        let sqrt = Pooling::MeanSqrtLen.pool(&h, &mask).unwrap();
        assert!(close(&sqrt, &mean));
    }
}
