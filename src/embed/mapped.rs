//! The encoder's forward pass for a few short texts on the CPU, computed
//! straight from the memory-mapped weights file.
//!
//! A query is a dozen word pieces: running it through [`super::encoder`]
//! first copies 45 MB of weights into candle tensors, and that copy with
//! its page faults took most of a cold `papers search`. Here the weights
//! are read in place (the operating system pages them in from its cache),
//! one sequence at a time, so there is no padding and no mask. The
//! arithmetic is the encoder's: the same layer order, the same erf GELU and
//! softmax (`super::gelu`, `super::softmax`), gemm for every product.
//! Results agree with the batched encoder to float rounding (a test checks).

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use candle_core::{DType, Device, Result, Tensor};
use rayon::prelude::*;
use safetensors::{Dtype, SafeTensors};

use super::backend::{Backend, Plan};
use super::encoder::EncoderConfig;
use super::gelu::bias_gelu_rows;
use super::pool::Pooling;
use super::product::{linear, matmul, product, Matrix};
use super::softmax::softmax_in_place;

/// A BERT encoder whose weights stay in the mapped safetensors file.
pub struct MappedEncoder {
    map: memmap2::Mmap,
    /// Byte ranges in `map` of the f32 weights, by name without `bert.`.
    tensors: HashMap<String, Range<usize>>,
    config: EncoderConfig,
}

impl MappedEncoder {
    /// Maps `weights` and checks that every weight the forward pass reads
    /// is there as f32 of the right size, aligned so that it can be read in
    /// place. `Ok(None)` when it is not (another dtype, an odd layout): the
    /// caller then uses the copying encoder, which reports what is wrong.
    pub fn open(weights: &Path, config: &EncoderConfig) -> std::io::Result<Option<MappedEncoder>> {
        let file = std::fs::File::open(weights)?;
        // SAFETY: the file is mapped read-only; papers never writes model
        // files, and the slices handed out borrow from the mapping.
        let map = unsafe { memmap2::Mmap::map(&file)? };
        Ok(MappedEncoder::from_map(map, config))
    }

    fn from_map(map: memmap2::Mmap, config: &EncoderConfig) -> Option<MappedEncoder> {
        if config.hidden_act != "gelu"
            || config.position_embedding_type != "absolute"
            || config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
            || cfg!(target_endian = "big")
        {
            return None;
        }
        let (header, metadata) = SafeTensors::read_metadata(&map).ok()?;
        let data_start = 8 + header;
        let tensors: HashMap<String, Range<usize>> = metadata
            .tensors()
            .into_iter()
            .filter(|(_, info)| info.dtype == Dtype::F32)
            .map(|(name, info)| {
                let (from, to) = info.data_offsets;
                let name = name.strip_prefix("bert.").unwrap_or(&name).to_string();
                (name, data_start + from..data_start + to)
            })
            .collect();
        let encoder = MappedEncoder {
            map,
            tensors,
            config: config.clone(),
        };
        let (h, inner) = (config.hidden_size, config.intermediate_size);
        let mut expected = vec![
            (
                "embeddings.word_embeddings.weight".to_string(),
                config.vocab_size * h,
            ),
            (
                "embeddings.position_embeddings.weight".to_string(),
                config.max_position_embeddings * h,
            ),
            (
                "embeddings.token_type_embeddings.weight".to_string(),
                config.type_vocab_size * h,
            ),
            ("embeddings.LayerNorm.weight".to_string(), h),
            ("embeddings.LayerNorm.bias".to_string(), h),
        ];
        for i in 0..config.num_hidden_layers {
            for (name, size) in layer_tensors(h, inner) {
                expected.push((format!("encoder.layer.{i}.{name}"), size));
            }
        }
        if !expected
            .iter()
            .all(|(name, size)| encoder.tensor(name).is_ok_and(|t| t.len() == *size))
        {
            return None;
        }
        Some(encoder)
    }

    /// The weight `name` (without the `bert.` prefix) as f32 values.
    fn tensor(&self, name: &str) -> Result<&[f32]> {
        let bytes = self
            .tensors
            .get(name)
            .and_then(|range| self.map.get(range.clone()))
            .ok_or_else(|| candle_core::Error::Msg(format!("no f32 weight {name}")))?;
        bytemuck::try_cast_slice(bytes).map_err(|e| candle_core::Error::Msg(format!("{name}: {e}")))
    }

    /// Hidden states (tokens × hidden, row-major) for one sequence of
    /// token ids, `[CLS]` and `[SEP]` included.
    pub fn forward(&self, ids: &[u32]) -> Result<Vec<f32>> {
        let c = &self.config;
        let (h, t) = (c.hidden_size, ids.len());
        if t == 0 || t > c.max_position_embeddings {
            candle_core::bail!("{t} tokens for {} positions", c.max_position_embeddings);
        }
        let words = self.tensor("embeddings.word_embeddings.weight")?;
        let positions = self.tensor("embeddings.position_embeddings.weight")?;
        // Every token is of type 0, as sentence-transformers passes it.
        let token_type = &self.tensor("embeddings.token_type_embeddings.weight")?[..h];
        let mut x = vec![0f32; t * h];
        for (pos, (row, &id)) in x.chunks_exact_mut(h).zip(ids).enumerate() {
            let id = id as usize;
            if id >= c.vocab_size {
                candle_core::bail!("token id {id} outside the vocabulary of {}", c.vocab_size);
            }
            let word = &words[id * h..(id + 1) * h];
            let position = &positions[pos * h..(pos + 1) * h];
            for (((o, &w), &p), &ty) in row.iter_mut().zip(word).zip(position).zip(token_type) {
                *o = w + p + ty;
            }
        }
        self.layer_norm(&mut x, "embeddings.LayerNorm")?;
        for layer in 0..c.num_hidden_layers {
            self.layer(&mut x, t, &format!("encoder.layer.{layer}."))?;
        }
        Ok(x)
    }

    /// One transformer layer over `x` (t × hidden), in place.
    fn layer(&self, x: &mut [f32], t: usize, at: &str) -> Result<()> {
        let c = &self.config;
        let (h, heads) = (c.hidden_size, c.num_attention_heads);
        let head = h / heads;
        let w = |name: &str| self.tensor(&format!("{at}{name}"));
        let dense = |input: &[f32], name: &str| -> Result<Vec<f32>> {
            linear(
                input,
                w(&format!("{name}.weight"))?,
                w(&format!("{name}.bias"))?,
            )
        };

        // The query scaled after its bias, before QKᵀ, as the encoder does.
        let mut q = dense(x, "attention.self.query")?;
        let scale = 1.0 / (head as f32).sqrt();
        q.iter_mut().for_each(|v| *v *= scale);
        let k = dense(x, "attention.self.key")?;
        let v = dense(x, "attention.self.value")?;
        let mut context = vec![0f32; t * h];
        let mut scores = vec![0f32; t * t];
        for hd in 0..heads {
            let cols = hd * head..(hd + 1) * head;
            let (qh, kh, vh) = (
                Matrix::new(&q, t, h).column_range(cols.clone()),
                Matrix::new(&k, t, h).column_range(cols.clone()),
                Matrix::new(&v, t, h).column_range(cols.clone()),
            );
            matmul(&mut scores, t, qh, kh.transposed());
            scores.chunks_exact_mut(t).for_each(softmax_in_place);
            let mut out = vec![0f32; t * head];
            matmul(&mut out, head, Matrix::new(&scores, t, t), vh);
            for (ctx, o) in context.chunks_exact_mut(h).zip(out.chunks_exact(head)) {
                ctx[cols.clone()].copy_from_slice(o);
            }
        }
        let attended = dense(&context, "attention.output.dense")?;
        x.iter_mut().zip(&attended).for_each(|(x, a)| *x += a);
        self.layer_norm(x, &format!("{at}attention.output.LayerNorm"))?;

        let bias = w("intermediate.dense.bias")?;
        let mut inner = product(x, w("intermediate.dense.weight")?, bias.len())?;
        bias_gelu_rows(&mut inner, bias);
        let out = dense(&inner, "output.dense")?;
        x.iter_mut().zip(&out).for_each(|(x, o)| *x += o);
        self.layer_norm(x, &format!("{at}output.LayerNorm"))
    }

    /// Layer norm over each row of `x`, in place, with the weight and bias
    /// under `name` (mean and biased variance in f32, as candle computes).
    fn layer_norm(&self, x: &mut [f32], name: &str) -> Result<()> {
        let gamma = self.tensor(&format!("{name}.weight"))?;
        let beta = self.tensor(&format!("{name}.bias"))?;
        let eps = self.config.layer_norm_eps as f32;
        let n = gamma.len() as f32;
        for row in x.chunks_exact_mut(gamma.len()) {
            let mean = row.iter().sum::<f32>() / n;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
            let inv = 1.0 / (var + eps).sqrt();
            for ((v, &g), &b) in row.iter_mut().zip(gamma).zip(beta) {
                *v = (*v - mean) * inv * g + b;
            }
        }
        Ok(())
    }

    /// Hidden states for several sequences, side by side.
    pub fn forward_all(&self, sequences: &[&[u32]]) -> Result<Vec<Vec<f32>>> {
        sequences.par_iter().map(|ids| self.forward(ids)).collect()
    }
}

/// The names and sizes of one layer's weights.
fn layer_tensors(h: usize, inner: usize) -> [(&'static str, usize); 16] {
    [
        ("attention.self.query.weight", h * h),
        ("attention.self.query.bias", h),
        ("attention.self.key.weight", h * h),
        ("attention.self.key.bias", h),
        ("attention.self.value.weight", h * h),
        ("attention.self.value.bias", h),
        ("attention.output.dense.weight", h * h),
        ("attention.output.dense.bias", h),
        ("attention.output.LayerNorm.weight", h),
        ("attention.output.LayerNorm.bias", h),
        ("intermediate.dense.weight", inner * h),
        ("intermediate.dense.bias", inner),
        ("output.dense.weight", h * inner),
        ("output.dense.bias", h),
        ("output.LayerNorm.weight", h),
        ("output.LayerNorm.bias", h),
    ]
}

/// The mapped encoder as a [`Backend`]: sequences one by one (no padding),
/// several side by side, each pooled on its own.
pub struct MappedBackend {
    encoder: MappedEncoder,
    pooling: Pooling,
}

impl MappedBackend {
    /// The backend over `encoder`, pooling as `pooling` says.
    pub fn new(encoder: MappedEncoder, pooling: Pooling) -> MappedBackend {
        MappedBackend { encoder, pooling }
    }
}

impl Backend for MappedBackend {
    fn describe(&self) -> String {
        "cpu mapped f32".into()
    }

    fn plan(&self) -> Plan {
        // No padding to avoid: batches only bound how much runs between
        // two progress reports.
        Plan {
            tokens: 4096,
            max_batch: 64,
            streams: 1,
            records: super::backend::CPU_RECORDS,
        }
    }

    fn embed_batch(&self, batch: &[&[u32]]) -> crate::Result<Vec<Vec<f32>>> {
        let run = || -> Result<Vec<Vec<f32>>> {
            let mut out = Vec::with_capacity(batch.len());
            for (ids, hidden) in batch.iter().zip(self.encoder.forward_all(batch)?) {
                let hidden = Tensor::from_vec(
                    hidden,
                    (1, ids.len(), self.encoder.config.hidden_size),
                    &Device::Cpu,
                )?;
                let mask = Tensor::ones((1, ids.len()), DType::U32, &Device::Cpu)?;
                out.extend(self.pooling.pool(&hidden, &mask)?);
            }
            Ok(out)
        };
        run().map_err(|e| crate::Error::Embed(crate::error::candle_message(e)))
    }
}
