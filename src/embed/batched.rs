//! The batched backend: candle's [`Encoder`] over padded batches, on the
//! CPU, a CUDA GPU or Metal, in f32 or half precision. On the CPU in f32
//! the word table stays in the mapped file and the fused softmax and GELU
//! run, and in bf16 the same with the dense products on the matrix unit
//! ([`super::amx`]); elsewhere the plain candle ops do (tensor cores take
//! f16 and bf16 products on a GPU). Pooling is always in f32.

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use rayon::prelude::*;

use super::backend::{Backend, Plan, Precision};
use super::config::ModelConfig;
use super::device;
use super::encoder::{Encoder, EncoderConfig};
use super::pool::Pooling;
use crate::error::{candle_message, Error, Result};

/// Word pieces per batch on the CPU, and most sequences per batch.
const CPU_TOKENS: usize = 2048;
const CPU_MAX_BATCH: usize = 64;
/// On a GPU: one batch at a time, as big as memory comfortably allows (256
/// sequences of 256 pieces take ~0.6 GB of activations for MiniLM).
const GPU_TOKENS: usize = 65536;
const GPU_MAX_BATCH: usize = 256;
/// Records per group on a GPU: 4,096 abstracts and their windows sort into
/// full batches of like length, and take well under a second.
const GPU_RECORDS: usize = 4096;

/// What `describe` adds for bf16 on the CPU.
const AMX: &str = " on AMX tiles (f32 outside the matrix products)";

/// What bulk work on this machine's CPU runs when no precision is asked
/// for, as `describe` would name it, without loading a model.
pub fn cpu_default() -> String {
    let cpu = Device::Cpu;
    name(&cpu, Precision::default_for(&cpu, super::Workload::Bulk))
}

/// The batched encoder on `device` in `precision`, as `-v` names it.
fn name(device: &Device, precision: Precision) -> String {
    let amx = if device.is_cpu() && precision == Precision::Bf16 {
        AMX
    } else {
        ""
    };
    format!("{} batched {}{amx}", device::name(device), precision.name())
}

/// candle's encoder with the weights copied onto its device.
pub struct BatchedBackend {
    encoder: Encoder,
    device: Device,
    precision: Precision,
    pooling: Pooling,
    plan: Plan,
    /// Why this backend runs where the mapped one was asked for.
    note: Option<String>,
}

impl BatchedBackend {
    /// Loads the weights in `weights` onto `device` in `precision`.
    pub fn load(
        weights: &std::path::Path,
        config: &ModelConfig,
        device: &Device,
        precision: Precision,
    ) -> Result<BatchedBackend> {
        let matrix_unit = device.is_cpu() && precision == Precision::Bf16;
        if matrix_unit && !super::amx::available() {
            // candle has no fast bf16 matrix product on the CPU.
            return Err(Error::InvalidArgument {
                name: "--precision".into(),
                reason: "bf16 on the CPU needs a processor with AMX \
                         (amx_bf16, amx_tile, avx512_bf16), which this one lacks; use f32 (or a GPU)"
                    .into(),
            });
        }
        let encoder = if matrix_unit {
            load_cpu(weights, &config.encoder).and_then(|mut encoder| {
                encoder.pack_bf16()?;
                Ok(encoder)
            })
        } else if device.is_cpu() && precision == Precision::F32 {
            load_cpu(weights, &config.encoder)
        } else {
            // SAFETY: the weights file is mapped read-only; papers never
            // writes model files, and the mapping lives as long as the model.
            unsafe { VarBuilder::from_mmaped_safetensors(&[weights], precision.dtype(), device) }
                .and_then(|vb| Encoder::load(vb, &config.encoder))
        }
        .map_err(|e| super::config::fail(weights, candle_message(e)))?;
        let cpu = device.is_cpu();
        if cpu {
            super::heap::tune_for_bulk_work();
        }
        let plan = Plan {
            // A knob for benchmarks; the default suits a laptop CPU.
            tokens: std::env::var("PAPERS_BATCH_TOKENS")
                .ok()
                .and_then(|v| v.parse().ok())
                .filter(|&v: &usize| v > 0)
                .unwrap_or(if cpu { CPU_TOKENS } else { GPU_TOKENS }),
            max_batch: if cpu { CPU_MAX_BATCH } else { GPU_MAX_BATCH },
            // Much of a forward pass (softmax, GELU, layer norm, copies)
            // runs on one thread in candle, so on the CPU batches run side
            // by side, one per worker; the products inside still share the
            // rayon pool. A GPU takes one batch at a time.
            streams: if cpu {
                rayon::current_num_threads().max(1)
            } else {
                1
            },
            records: if cpu {
                super::backend::CPU_RECORDS
            } else {
                GPU_RECORDS
            },
        };
        Ok(BatchedBackend {
            encoder,
            device: device.clone(),
            precision,
            pooling: config.pooling,
            plan,
            note: None,
        })
    }

    /// Records why this backend stands in for the one asked for.
    pub fn noting(mut self, why: String) -> BatchedBackend {
        self.note = Some(why);
        self
    }
}

impl Backend for BatchedBackend {
    fn describe(&self) -> String {
        let mut text = name(&self.device, self.precision);
        if let Some(note) = &self.note {
            text.push_str(&format!(" ({note})"));
        }
        text
    }

    fn plan(&self) -> Plan {
        self.plan
    }

    fn embed_batch(&self, batch: &[&[u32]]) -> Result<Vec<Vec<f32>>> {
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let width = batch.iter().map(|ids| ids.len()).max().unwrap_or(0);
            let mut ids = Vec::with_capacity(batch.len() * width);
            let mut mask = Vec::with_capacity(batch.len() * width);
            for seq in batch {
                ids.extend_from_slice(seq);
                // Padded positions are masked out of attention and pooling,
                // so the id they hold changes nothing; 0 is in every vocabulary.
                ids.extend(std::iter::repeat_n(0, width - seq.len()));
                mask.extend(std::iter::repeat_n(1u32, seq.len()));
                mask.extend(std::iter::repeat_n(0u32, width - seq.len()));
            }
            let shape = (batch.len(), width);
            let ids = Tensor::from_vec(ids, shape, &self.device)?;
            let mask = Tensor::from_vec(mask, shape, &self.device)?;
            let lengths: Vec<usize> = batch.iter().map(|seq| seq.len()).collect();
            let hidden = self.encoder.forward(&ids, &mask, &lengths)?;
            self.pooling.pool(&hidden, &mask)
        };
        run().map_err(|e| Error::Embed(candle_message(e)))
    }
}

/// Loads the encoder on the CPU in f32: every tensor but the word
/// embeddings is copied out of the mapped file in parallel (tens of
/// milliseconds, which is why queries use the mapped backend instead), and
/// the mapping is kept for the word embedding rows.
fn load_cpu(weights: &std::path::Path, config: &EncoderConfig) -> candle_core::Result<Encoder> {
    use candle_core::safetensors::{Load, MmapedSafetensors};
    // SAFETY: the weights file is mapped read-only; papers never writes
    // model files, and the mapping lives as long as the model.
    let file = unsafe { MmapedSafetensors::new(weights)? };
    let tensors = file
        .tensors()
        .into_par_iter()
        .filter(|(name, _)| !name.ends_with("word_embeddings.weight"))
        .map(|(name, view)| Ok((name, view.load(&Device::Cpu)?)))
        .collect::<candle_core::Result<std::collections::HashMap<_, _>>>()?;
    let vb = VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
    Encoder::load_mapped(vb, config, file)
}
