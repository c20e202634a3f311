//! A dense (linear) layer, `x · Wᵀ + b`, as the encoder uses them. On the
//! CPU in f32 the product goes straight to gemm: candle's matmul zeroes
//! its output before gemm overwrites it (6% of indexing time in `perf`),
//! and a bias added afterwards is one more tensor allocated and walked.
//! Here the output is either left unwritten for gemm to fill, or filled
//! with the bias rows for gemm to add the product to. A layer packed for
//! the matrix unit ([`Dense::pack_bf16`]) computes the same in bf16 there
//! ([`super::amx`]). Elsewhere (GPUs, half precision) candle's ops run.

use candle_core::{DType, Result, Tensor};
use candle_nn::VarBuilder;

use super::product::cpu_values;

/// A dense layer: the weight as PyTorch stores it (outputs × inputs) and
/// the bias.
pub struct Dense {
    weight: Tensor,
    bias: Tensor,
    /// The bias as values, for the CPU path.
    bias_values: Option<Vec<f32>>,
    /// The weight in bf16 for the matrix unit, once packed.
    packed: Option<super::amx::Packed>,
}

impl Dense {
    /// Loads `weight` and `bias` under `vb`.
    pub fn load(vb: VarBuilder, inputs: usize, outputs: usize) -> Result<Dense> {
        let weight = vb.get((outputs, inputs), "weight")?;
        let bias = vb.get(outputs, "bias")?;
        Dense::new(weight, bias)
    }

    /// Several dense layers over the same input as one: weights stacked.
    pub fn load_fused(vbs: &[VarBuilder], inputs: usize, outputs: usize) -> Result<Dense> {
        let mut weights = Vec::new();
        let mut biases = Vec::new();
        for vb in vbs {
            weights.push(vb.get((outputs, inputs), "weight")?);
            biases.push(vb.get(outputs, "bias")?);
        }
        Dense::new(Tensor::cat(&weights, 0)?, Tensor::cat(&biases, 0)?)
    }

    fn new(weight: Tensor, bias: Tensor) -> Result<Dense> {
        let cpu = weight.device().is_cpu() && weight.dtype() == DType::F32;
        Ok(Dense {
            weight: weight.contiguous()?,
            bias_values: if cpu { Some(bias.to_vec1()?) } else { None },
            bias,
            packed: None,
        })
    }

    /// Runs this layer's CPU products in bf16 on the matrix unit from now
    /// on. Only for f32 weights on the CPU where [`super::amx::available`].
    pub fn pack_bf16(&mut self) -> Result<()> {
        if self.bias_values.is_none() || !super::amx::available() {
            candle_core::bail!("dense: bf16 products need f32 weights on a CPU with AMX");
        }
        let (outputs, inputs) = self.weight.dims2()?;
        let weight = self.weight.flatten_all()?.to_vec1::<f32>()?;
        self.packed = Some(super::amx::Packed::new(&weight, outputs, inputs));
        Ok(())
    }

    /// The bias.
    pub fn bias(&self) -> &Tensor {
        &self.bias
    }

    /// The weight packed for the matrix unit and the bias as values, once
    /// [`Dense::pack_bf16`] ran.
    pub fn packed(&self) -> Option<(&super::amx::Packed, &[f32])> {
        self.packed.as_ref().zip(self.bias_values.as_deref())
    }

    /// `x · Wᵀ + b` for `x` of shape (rows, inputs).
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match &self.bias_values {
            Some(bias) if fast(x) => self.gemm(x, Some(bias)),
            _ => x.matmul(&self.weight.t()?)?.broadcast_add(&self.bias),
        }
    }

    /// `x · Wᵀ` without the bias, for a caller that adds it in a pass of
    /// its own.
    pub fn product(&self, x: &Tensor) -> Result<Tensor> {
        if self.bias_values.is_some() && fast(x) {
            return self.gemm(x, None);
        }
        x.matmul(&self.weight.t()?)
    }

    /// `gelu(x · upᵀ + up_bias) · downᵀ` (without `down`'s bias, which
    /// the layer's close adds), fused on the matrix unit where both layers
    /// are packed for it ([`super::amx::feed_forward`]); `None` elsewhere,
    /// for the caller to run the three steps.
    pub fn feed_forward(up: &Dense, down: &Dense, x: &Tensor) -> Result<Option<Tensor>> {
        let (Some(up_packed), Some(down_packed), Some(bias)) =
            (&up.packed, &down.packed, &up.bias_values)
        else {
            return Ok(None);
        };
        let (rows, inputs) = x.dims2()?;
        if !fast(x) || inputs != up_packed.inputs() {
            candle_core::bail!("dense: input {:?} for a feed-forward of {inputs}", x.dims());
        }
        let (storage, layout) = x.storage_and_layout();
        let input = cpu_values(&storage, layout, "dense")?;
        let out = super::amx::feed_forward(input, up_packed, bias, down_packed);
        drop(storage);
        Tensor::from_vec(out, (rows, down_packed.outputs()), x.device()).map(Some)
    }

    /// The CPU path: gemm into a fresh buffer, which starts as the bias
    /// rows when there is a bias and is otherwise written whole by gemm.
    fn gemm(&self, x: &Tensor, bias: Option<&[f32]>) -> Result<Tensor> {
        let (outputs, inputs) = self.weight.dims2()?;
        let rows = x.dims2()?.0;
        if x.dims2()?.1 != inputs {
            candle_core::bail!(
                "dense: input {:?} for a weight {outputs}x{inputs}",
                x.dims()
            );
        }
        let (xs, xl) = x.storage_and_layout();
        let (ws, wl) = self.weight.storage_and_layout();
        let input = cpu_values(&xs, xl, "dense")?;
        let weight = cpu_values(&ws, wl, "dense")?;
        assert!(input.len() == rows * inputs && weight.len() == outputs * inputs);
        if let Some(packed) = &self.packed {
            let out = super::amx::product(input, packed, bias);
            drop((xs, ws));
            return Tensor::from_vec(out, (rows, outputs), x.device());
        }
        let mut out = match bias {
            Some(bias) => {
                let mut out = Vec::with_capacity(rows * outputs);
                for _ in 0..rows {
                    out.extend_from_slice(bias);
                }
                out
            }
            None => Vec::with_capacity(rows * outputs),
        };
        // SAFETY: `input` is rows × inputs and `weight` outputs × inputs,
        // both row-major (asserted above), and `out` has room for the rows ×
        // outputs values gemm writes (row stride `outputs`); when it starts
        // empty, `read_dst` is false, so gemm reads none of it, and every
        // element is written before the length is set.
        unsafe {
            gemm::gemm(
                rows,
                outputs,
                inputs,
                out.as_mut_ptr(),
                1,
                outputs as isize,
                bias.is_some(),
                input.as_ptr(),
                1,
                inputs as isize,
                weight.as_ptr(),
                inputs as isize,
                1,
                1.0,
                1.0,
                false,
                false,
                false,
                gemm::Parallelism::Rayon(0),
            );
            out.set_len(rows * outputs);
        }
        drop((xs, ws));
        Tensor::from_vec(out, (rows, outputs), x.device())
    }
}

/// Whether `x` can take the CPU f32 paths (here and in the encoder).
pub(super) fn fast(x: &Tensor) -> bool {
    x.device().is_cpu() && x.dtype() == DType::F32 && x.rank() == 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    #[test]
    fn the_cpu_path_matches_candle() {
        let device = Device::Cpu;
        let ramp = |n: usize, a: f64, b: f64| {
            Tensor::arange(0f32, n as f32, &device)
                .unwrap()
                .affine(a, b)
                .unwrap()
                .sin()
                .unwrap()
        };
        let (rows, inputs, outputs) = (37, 48, 40);
        let x = ramp(rows * inputs, 0.3, 0.1)
            .reshape((rows, inputs))
            .unwrap();
        let weight = ramp(outputs * inputs, 0.7, 0.2)
            .reshape((outputs, inputs))
            .unwrap();
        let bias = ramp(outputs, 1.1, 0.3);
        let dense = Dense::new(weight.clone(), bias.clone()).unwrap();
        let want = x.matmul(&weight.t().unwrap()).unwrap();
        let close = |got: Tensor, want: Tensor| {
            let diff = super::super::max_difference(&got, &want);
            assert!(diff < 1e-4, "max difference {diff}");
        };
        close(dense.product(&x).unwrap(), want.clone());
        close(
            dense.forward(&x).unwrap(),
            want.broadcast_add(&bias).unwrap(),
        );
    }
}
