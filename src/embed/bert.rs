//! A BERT-family sentence-transformer run with candle, reproducing what
//! sentence-transformers does: its tokenizer with truncation at the model's
//! `max_seq_length` (word pieces, [CLS] and [SEP] included), the transformer,
//! the pooling named in the Pooling module's config, and L2 normalisation.
//! All of this is loaded in [`BertEmbedder::load`], the one place that reads
//! the model's files.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use candle_core::{DType, Device, Tensor, D};
use candle_nn::VarBuilder;
use rayon::prelude::*;
use serde::Deserialize;
use tokenizers::models::wordpiece::WordPiece;
use tokenizers::{
    DecoderWrapper, NormalizerWrapper, PostProcessorWrapper, PreTokenizerWrapper, Tokenizer,
    TokenizerImpl, TruncationDirection, TruncationParams, TruncationStrategy,
};

use super::device;
use super::encoder::{Encoder, EncoderConfig};
use super::mapped::MappedEncoder;
use super::source::ModelFiles;
use super::Embedder;
use crate::error::{Error, Result};

/// Word pieces per batch: sequences are sorted by length and grouped until a
/// batch would hold more than this many (padded) tokens.
const TOKENS_PER_BATCH: usize = 2048;
/// Most sequences in one batch, whatever their length.
const MAX_BATCH: usize = 64;
/// On a GPU: one batch at a time, as big as memory comfortably allows (256
/// sequences of 256 pieces take ~0.6 GB of activations for MiniLM).
const GPU_TOKENS_PER_BATCH: usize = 65536;
const GPU_MAX_BATCH: usize = 256;
/// Calls with at most this many word pieces in all run on the CPU through
/// [`MappedEncoder`], which needs no weights copied; bigger ones load the
/// batched [`Encoder`] once and use it.
pub const MAPPED_TOKENS: usize = 1024;

/// Which CPU forward pass a call uses. Both compute the same vectors (a
/// test holds them to 1e-6 per component); they differ in speed, measured
/// by `cargo bench --bench embed -- encoders`: the mapped one starts a
/// query four times sooner, the batched one indexes about a fifth faster.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// The mapped encoder for calls of at most [`MAPPED_TOKENS`] word
    /// pieces, the batched one for bigger calls.
    #[default]
    Auto,
    /// Always the batched encoder.
    Batched,
    /// The mapped encoder whenever the weights can be read in place.
    Mapped,
}

/// The pooling strategies sentence-transformers' Pooling module offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pooling {
    /// Mean of the token vectors under the attention mask.
    Mean,
    /// The [CLS] token's vector.
    Cls,
    /// Element-wise maximum over the unmasked tokens.
    Max,
    /// Sum of the unmasked token vectors divided by the square root of their number.
    MeanSqrtLen,
}

/// The fields of the Pooling module's config.json that choose the mode.
#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
}

#[derive(Deserialize)]
struct SentenceConfig {
    max_seq_length: Option<usize>,
}

/// Word pieces shared by consecutive windows of a long text.
pub const WINDOW_OVERLAP: usize = 32;

/// A loaded sentence-transformer.
pub struct BertEmbedder {
    /// The batched encoder: loaded with the model on a GPU; on the CPU
    /// only when a call first needs it (see [`MAPPED_TOKENS`]).
    encoder: OnceLock<Encoder>,
    /// On the CPU, the encoder that reads the mapped weights in place.
    mapped: Option<MappedEncoder>,
    weights: PathBuf,
    config: EncoderConfig,
    tokenizer: Tokenizer,
    pooling: Pooling,
    max_seq_length: usize,
    dimension: usize,
    pad_id: u32,
    device: Device,
    model_id: String,
    tokens_per_batch: usize,
    backend: Backend,
}

impl BertEmbedder {
    /// Loads the model in `files` onto `device`.
    pub fn load(files: &ModelFiles, device: &Device) -> Result<Self> {
        let fail = |what: &std::path::Path, reason: String| Error::ModelLoad {
            model: what.display().to_string(),
            reason,
        };
        let read_json = |path: &std::path::Path| -> Result<String> {
            std::fs::read_to_string(path).map_err(|e| Error::io(path, e))
        };

        let raw: serde_json::Value = serde_json::from_str(&read_json(&files.config)?)
            .map_err(|e| fail(&files.config, e.to_string()))?;
        let field = |name: &str| raw.get(name).and_then(serde_json::Value::as_u64);
        let dimension = field("hidden_size")
            .ok_or_else(|| fail(&files.config, "no hidden_size".into()))?
            as usize;
        let max_positions = field("max_position_embeddings").unwrap_or(512) as usize;
        let config: EncoderConfig = serde_json::from_value(raw.clone())
            .map_err(|e| fail(&files.config, format!("not a BERT config: {e}")))?;

        // sentence-transformers truncates to max_seq_length from
        // sentence_bert_config.json; without it, to the position table's size.
        let max_seq_length = match &files.sentence_config {
            Some(path) => serde_json::from_str::<SentenceConfig>(&read_json(path)?)
                .map_err(|e| fail(path, e.to_string()))?
                .max_seq_length
                .unwrap_or(max_positions),
            None => max_positions,
        }
        .min(max_positions);

        let pooling = match &files.pooling_config {
            Some(path) => {
                let c: PoolingConfig = serde_json::from_str(&read_json(path)?)
                    .map_err(|e| fail(path, e.to_string()))?;
                match (
                    c.pooling_mode_mean_tokens,
                    c.pooling_mode_cls_token,
                    c.pooling_mode_max_tokens,
                    c.pooling_mode_mean_sqrt_len_tokens,
                ) {
                    (true, false, false, false) => Pooling::Mean,
                    (false, true, false, false) => Pooling::Cls,
                    (false, false, true, false) => Pooling::Max,
                    (false, false, false, true) => Pooling::MeanSqrtLen,
                    _ => {
                        return Err(fail(
                            path,
                            "unsupported combination of pooling modes".into(),
                        ))
                    }
                }
            }
            None => Pooling::Mean,
        };

        // Parsing tokenizer.json takes tens of milliseconds, and so does
        // copying the weights to a GPU (or to the CPU when they cannot be
        // read in place): the two run side by side.
        let load_tokenizer = || -> Result<Tokenizer> {
            let mut tokenizer = read_tokenizer(&files.tokenizer)?;
            // all-MiniLM-L6-v2's tokenizer.json ships with truncation at 128
            // and fixed padding to 128; sentence-transformers overrides both.
            tokenizer
                .with_truncation(Some(TruncationParams {
                    max_length: max_seq_length,
                    strategy: TruncationStrategy::LongestFirst,
                    stride: 0,
                    direction: TruncationDirection::Right,
                }))
                .map_err(|e| fail(&files.tokenizer, e.to_string()))?;
            tokenizer.with_padding(None);
            Ok(tokenizer)
        };
        // On the CPU the weights are only mapped (the batched encoder is
        // loaded when a call needs it); on a GPU they are copied over now.
        let load_model = || -> Result<(OnceLock<Encoder>, Option<MappedEncoder>)> {
            let encoder = OnceLock::new();
            let loaded = if device.is_cpu() {
                let mapped = MappedEncoder::open(&files.weights, &config)
                    .map_err(|e| Error::io(&files.weights, e))?;
                if let Some(mapped) = mapped {
                    return Ok((encoder, Some(mapped)));
                }
                load_cpu(&files.weights, &config)
            } else {
                // SAFETY: the weights file is mapped read-only; papers never
                // writes model files, and the mapping lives as long as the model.
                unsafe {
                    VarBuilder::from_mmaped_safetensors(&[&files.weights], DType::F32, device)
                }
                .and_then(|vb| Encoder::load(vb, &config))
            };
            let _ = encoder.set(loaded.map_err(|e| fail(&files.weights, candle_message(e)))?);
            Ok((encoder, None))
        };
        let (tokenizer, model) = std::thread::scope(|scope| {
            let tokenizer = scope.spawn(load_tokenizer);
            let model = load_model();
            let tokenizer = tokenizer
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (tokenizer, model)
        });
        let (tokenizer, (encoder, mapped)) = (tokenizer?, model?);
        let pad_id = tokenizer.token_to_id("[PAD]").unwrap_or(0);

        Ok(BertEmbedder {
            encoder,
            mapped,
            weights: files.weights.clone(),
            config,
            tokenizer,
            pooling,
            max_seq_length,
            dimension,
            pad_id,
            device: device.clone(),
            model_id: files.model.clone(),
            // A knob for benchmarks; the default suits a laptop CPU.
            tokens_per_batch: std::env::var("PAPERS_BATCH_TOKENS")
                .ok()
                .and_then(|v| v.parse().ok())
                .filter(|&v: &usize| v > 0)
                .unwrap_or(if device.is_cpu() {
                    TOKENS_PER_BATCH
                } else {
                    GPU_TOKENS_PER_BATCH
                }),
            backend: Backend::Auto,
        })
    }

    /// Picks the CPU forward pass (for tests and benchmarks; on a GPU
    /// there is only the batched one).
    pub fn with_backend(mut self, backend: Backend) -> Self {
        self.backend = backend;
        self
    }

    /// The truncation length in word pieces, [CLS] and [SEP] included.
    pub fn max_seq_length(&self) -> usize {
        self.max_seq_length
    }

    /// The device the model runs on.
    pub fn device_name(&self) -> &'static str {
        device::name(&self.device)
    }

    /// Token ids of `text` after truncation, special tokens included.
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>> {
        let encoding = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| Error::Embed(e.to_string()))?;
        Ok(encoding.get_ids().to_vec())
    }

    /// See [`Embedder::windows`]: windows of `max_seq_length - 2` word
    /// pieces, the first starting [`WINDOW_OVERLAP`] pieces before the
    /// truncation point and each next one as far before the previous end.
    fn text_windows(&self, text: &str) -> Result<Vec<String>> {
        let encoding = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| Error::Embed(e.to_string()))?;
        // Byte offsets of every word piece, the overflowing parts included.
        fn collect(encoding: &tokenizers::Encoding, offsets: &mut Vec<(usize, usize)>) {
            let special = encoding.get_special_tokens_mask();
            for (i, &offset) in encoding.get_offsets().iter().enumerate() {
                if special.get(i) == Some(&0) {
                    offsets.push(offset);
                }
            }
            for overflow in encoding.get_overflowing() {
                collect(overflow, offsets);
            }
        }
        let mut offsets = Vec::new();
        collect(&encoding, &mut offsets);
        let size = self.max_seq_length.saturating_sub(2).max(1);
        let step = size.saturating_sub(WINDOW_OVERLAP).max(1);
        let mut windows = Vec::new();
        let mut start = step;
        while offsets.len() > size && start < offsets.len() {
            let end = (start + size).min(offsets.len());
            let (from, to) = (offsets[start].0, offsets[end - 1].1);
            if let Some(window) = text.get(from..to) {
                windows.push(window.to_string());
            }
            if end == offsets.len() {
                break;
            }
            start += step;
        }
        Ok(windows)
    }

    /// The batched encoder, loaded from the weights file on first use.
    fn encoder(&self) -> Result<&Encoder> {
        if let Some(encoder) = self.encoder.get() {
            return Ok(encoder);
        }
        let loaded = load_cpu(&self.weights, &self.config).map_err(|e| Error::ModelLoad {
            model: self.weights.display().to_string(),
            reason: candle_message(e),
        })?;
        Ok(self.encoder.get_or_init(|| loaded))
    }

    /// Runs one batch of token-id sequences through `encoder` and pooling.
    fn embed_batch(
        &self,
        encoder: &Encoder,
        batch: &[&[u32]],
    ) -> candle_core::Result<Vec<Vec<f32>>> {
        let width = batch.iter().map(|ids| ids.len()).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(batch.len() * width);
        let mut mask = Vec::with_capacity(batch.len() * width);
        for seq in batch {
            ids.extend_from_slice(seq);
            ids.extend(std::iter::repeat_n(self.pad_id, width - seq.len()));
            mask.extend(std::iter::repeat_n(1u32, seq.len()));
            mask.extend(std::iter::repeat_n(0u32, width - seq.len()));
        }
        let shape = (batch.len(), width);
        let ids = Tensor::from_vec(ids, shape, &self.device)?;
        let mask = Tensor::from_vec(mask, shape, &self.device)?;
        let lengths: Vec<usize> = batch.iter().map(|seq| seq.len()).collect();
        let hidden = encoder.forward(&ids, &mask, &lengths)?;
        self.pool(&hidden, &mask)
    }

    /// Sequences one by one through the mapped encoder, then pooling.
    fn embed_mapped(
        &self,
        mapped: &MappedEncoder,
        sequences: &[&[u32]],
    ) -> candle_core::Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(sequences.len());
        for (ids, hidden) in sequences.iter().zip(mapped.forward_all(sequences)?) {
            let hidden = Tensor::from_vec(hidden, (1, ids.len(), self.dimension), &Device::Cpu)?;
            let mask = Tensor::ones((1, ids.len()), DType::U32, &Device::Cpu)?;
            out.extend(self.pool(&hidden, &mask)?);
        }
        Ok(out)
    }

    /// Pools hidden states (batch, length, hidden) under the attention
    /// mask (batch, length) of 1s and 0s, and normalises.
    fn pool(&self, hidden: &Tensor, mask: &Tensor) -> candle_core::Result<Vec<Vec<f32>>> {
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;

        // The pooling rules of sentence_transformers.models.Pooling.
        let pooled = match self.pooling {
            Pooling::Cls => hidden.narrow(1, 0, 1)?.squeeze(1)?,
            Pooling::Mean | Pooling::MeanSqrtLen => {
                let sum = hidden.broadcast_mul(&mask)?.sum(1)?;
                let count = mask.sum(1)?.clamp(1e-9, f64::INFINITY)?;
                let count = match self.pooling {
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
        pooled.broadcast_div(&norm)?.to_dtype(DType::F32)?.to_vec2()
    }
}

/// Reads tokenizer.json. tokenizers' own loader reads the model through an
/// enum of every model kind, buffering BERT's 30,000-word vocabulary on the
/// way; reading a WordPiece model as WordPiece builds the same tokenizer in
/// about a third of the time (a test compares the two). Other models take
/// the general path.
pub fn read_tokenizer(path: &Path) -> Result<Tokenizer> {
    type WordPieceTokenizer = TokenizerImpl<
        WordPiece,
        NormalizerWrapper,
        PreTokenizerWrapper,
        PostProcessorWrapper,
        DecoderWrapper,
    >;
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    match serde_json::from_str::<WordPieceTokenizer>(&text) {
        Ok(tokenizer) => Ok(Tokenizer::from(tokenizer)),
        Err(_) => text.parse::<Tokenizer>().map_err(|e| Error::ModelLoad {
            model: path.display().to_string(),
            reason: e.to_string(),
        }),
    }
}

/// A candle error as one line: candle appends a backtrace to its message
/// when `RUST_BACKTRACE` is set, which papers never prints.
pub(crate) fn candle_message(err: candle_core::Error) -> String {
    let inner = match err {
        candle_core::Error::WithBacktrace { inner, .. } => *inner,
        other => other,
    };
    inner
        .to_string()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Loads the batched encoder on the CPU: every tensor but the word
/// embeddings is copied out of the mapped file in parallel (tens of
/// milliseconds, which is why queries use [`MappedEncoder`] instead), and
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

impl Embedder for BertEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn windows(&self, text: &str) -> Result<Vec<String>> {
        self.text_windows(text)
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn embed(
        &self,
        texts: &[&str],
        progress: &mut dyn FnMut(usize) -> ControlFlow<()>,
    ) -> Result<Vec<Vec<f32>>> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| Error::Embed(e.to_string()))?;
        let ids: Vec<&[u32]> = encodings.iter().map(|e| e.get_ids()).collect();

        let tokens: usize = ids.iter().map(|seq| seq.len()).sum();
        let limit = match self.backend {
            Backend::Auto => MAPPED_TOKENS,
            Backend::Mapped => usize::MAX,
            Backend::Batched => 0,
        };
        if let Some(mapped) = self.mapped.as_ref().filter(|_| tokens <= limit) {
            let vectors = self
                .embed_mapped(mapped, &ids)
                .map_err(|e| Error::Embed(candle_message(e)))?;
            return match progress(texts.len()) {
                ControlFlow::Break(()) => Err(Error::Interrupted),
                ControlFlow::Continue(()) => Ok(vectors),
            };
        }
        let encoder = self.encoder()?;

        // Longest first, so padding within a batch is small and the batch
        // size can grow as sequences get shorter.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(ids[i].len()));

        // Batches as ranges of `order`, each up to the token budget.
        let mut batches = Vec::new();
        let mut start = 0;
        while start < order.len() {
            let width = ids[order[start]].len().max(1);
            let most = if self.device.is_cpu() {
                MAX_BATCH
            } else {
                GPU_MAX_BATCH
            };
            let size = (self.tokens_per_batch / width).clamp(1, most);
            let end = (start + size).min(order.len());
            batches.push(start..end);
            start = end;
        }

        // Much of a forward pass (softmax, GELU, layer norm, copies) runs on
        // one thread in candle, so on the CPU batches run side by side, one
        // per worker, in waves; the matmuls inside still share the rayon
        // pool. A GPU takes one batch at a time.
        let workers = if self.device.is_cpu() {
            rayon::current_num_threads().max(1)
        } else {
            1
        };
        let mut out = vec![Vec::new(); texts.len()];
        let mut done = 0;
        for wave in batches.chunks(workers) {
            let results: Vec<candle_core::Result<Vec<Vec<f32>>>> = wave
                .par_iter()
                .map(|range| {
                    let batch: Vec<&[u32]> = order[range.clone()].iter().map(|&i| ids[i]).collect();
                    self.embed_batch(encoder, &batch)
                })
                .collect();
            for (range, vectors) in wave.iter().zip(results) {
                let vectors = vectors.map_err(|e| Error::Embed(candle_message(e)))?;
                for (&i, vector) in order[range.clone()].iter().zip(vectors) {
                    out[i] = vector;
                }
                done += range.len();
            }
            if progress(done).is_break() {
                return Err(Error::Interrupted);
            }
        }
        Ok(out)
    }
}
