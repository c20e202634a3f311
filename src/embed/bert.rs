//! A BERT-family sentence-transformer, reproducing what
//! sentence-transformers does: its tokenizer with truncation at the model's
//! `max_seq_length` ([`super::tokenize`]), the transformer (a
//! [`Backend`], chosen once here), the pooling named in the Pooling
//! module's config and L2 normalisation ([`super::pool`]). All of it is
//! loaded in [`BertEmbedder::load`], the one place that reads the model's
//! files.

use std::ops::ControlFlow;

use candle_core::Device;
use rayon::prelude::*;

use super::backend::{Backend, Precision, Workload};
use super::batched::BatchedBackend;
use super::config::ModelConfig;
use super::mapped::{MappedBackend, MappedEncoder};
use super::source::ModelFiles;
use super::tokenize::Tokens;
use super::{Embedder, RecordVectors};
use crate::error::{Error, Result};

/// Texts tokenised per step of a big call: the next step's are tokenised
/// on another thread while this one's run, so a GPU does not wait for them.
const TOKENISE_STEP: usize = 4096;

/// A loaded sentence-transformer.
pub struct BertEmbedder {
    tokens: Tokens,
    backend: Box<dyn Backend>,
    config: ModelConfig,
}

impl BertEmbedder {
    /// Loads the model in `files` onto `device`, with the forward pass that
    /// suits `workload` in `precision`: on the CPU in f32, queries run
    /// through the weights mapped in place and bulk work through candle's
    /// batched encoder; any other device or precision is the batched one.
    pub fn load(
        files: &ModelFiles,
        device: &Device,
        workload: Workload,
        precision: Precision,
    ) -> Result<Self> {
        let config = ModelConfig::read(files)?;
        // Parsing tokenizer.json takes tens of milliseconds, and so does
        // copying the weights to a GPU (or to the CPU for bulk work): the
        // two run side by side.
        let (tokens, backend) = std::thread::scope(|scope| {
            let tokens = scope.spawn(|| Tokens::load(&files.tokenizer, config.max_seq_length));
            let backend = open_backend(files, &config, device, workload, precision);
            let tokens = tokens
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (tokens, backend)
        });
        let (tokens, backend) = (tokens?, backend?);
        Ok(BertEmbedder {
            tokens,
            backend,
            config,
        })
    }

    /// The truncation length in word pieces, `[CLS]` and `[SEP]` included.
    pub fn max_seq_length(&self) -> usize {
        self.config.max_seq_length
    }

    /// What runs the model: device, forward pass, precision.
    pub fn describe(&self) -> String {
        self.backend.describe()
    }

    /// Token ids of `text` after truncation, special tokens included.
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>> {
        self.tokens.ids(text)
    }

    /// Embeds tokenised sequences: batches by length as the backend's plan
    /// says, `streams` of them at a time, results in the input's order.
    /// `Break` from `progress` stops the work with [`Error::Interrupted`].
    fn run(
        &self,
        ids: &[Vec<u32>],
        out: &mut Vec<Vec<f32>>,
        progress: &mut dyn FnMut(usize) -> ControlFlow<()>,
    ) -> Result<()> {
        let plan = self.backend.plan();
        let lengths: Vec<usize> = ids.iter().map(Vec::len).collect();
        let (order, batches) = plan.batches(&lengths);
        let first = out.len();
        out.resize(first + ids.len(), Vec::new());
        let mut done = 0;
        for wave in batches.chunks(plan.streams.max(1)) {
            let results: Vec<Result<Vec<Vec<f32>>>> = wave
                .par_iter()
                .map(|range| {
                    let batch: Vec<&[u32]> =
                        order[range.clone()].iter().map(|&i| &ids[i][..]).collect();
                    self.backend.embed_batch(&batch)
                })
                .collect();
            for (range, vectors) in wave.iter().zip(results) {
                for (&i, vector) in order[range.clone()].iter().zip(vectors?) {
                    out[first + i] = vector;
                }
                done += range.len();
            }
            if progress(done).is_break() {
                return Err(Error::Interrupted);
            }
        }
        Ok(())
    }

    /// Tokenises a group of records once, in parallel: each record's ids
    /// and its windows, whose ids follow all the records'.
    fn prepare(&self, texts: &[&str]) -> Result<Prepared> {
        let records = texts
            .par_iter()
            .map(|text| self.tokens.record(text))
            .collect::<Result<Vec<_>>>()?;
        let windows: Vec<usize> = records.iter().map(|(_, w)| w.len()).collect();
        let window_texts: Vec<&str> = records
            .iter()
            .flat_map(|(_, w)| w.iter().map(String::as_str))
            .collect();
        let window_ids = if window_texts.is_empty() {
            Vec::new()
        } else {
            self.tokens.ids_of(&window_texts)?
        };
        let mut ids: Vec<Vec<u32>> = records.into_iter().map(|(ids, _)| ids).collect();
        ids.extend(window_ids);
        Ok(Prepared { ids, windows })
    }
}

/// A group of records ready for the encoder.
struct Prepared {
    /// Word-piece ids: the records' (truncated), then every window's.
    ids: Vec<Vec<u32>>,
    /// How many windows each record has.
    windows: Vec<usize>,
}

/// The backend for this device, workload and precision, chosen once.
fn open_backend(
    files: &ModelFiles,
    config: &ModelConfig,
    device: &Device,
    workload: Workload,
    precision: Precision,
) -> Result<Box<dyn Backend>> {
    let batched = || BatchedBackend::load(&files.weights, config, device, precision);
    if !(device.is_cpu() && precision == Precision::F32 && workload == Workload::Queries) {
        return Ok(Box::new(batched()?));
    }
    let mapped = MappedEncoder::open(&files.weights, &config.encoder)
        .map_err(|e| Error::io(&files.weights, e))?;
    Ok(match mapped {
        Some(encoder) => Box::new(MappedBackend::new(encoder, config.pooling)),
        // Weights that cannot be read in place (another dtype, an odd
        // layout) are copied; `describe` says so.
        None => Box::new(batched()?.noting("weights not readable in place".into())),
    })
}

impl Embedder for BertEmbedder {
    fn windows(&self, text: &str) -> Result<Vec<String>> {
        self.tokens.windows(text)
    }

    fn knows_word(&self, word: &str) -> bool {
        self.tokens.is_token(word)
    }

    fn dimension(&self) -> usize {
        self.config.dimension
    }

    fn record_group(&self) -> usize {
        self.backend.plan().records
    }

    /// Tokenises each group once (a record's ids and windows from one
    /// pass), the next group on another thread while this one runs, and
    /// sorts each group's records and windows together by length.
    fn embed_records(
        &self,
        texts: &[&str],
        group: usize,
        progress: &mut dyn FnMut(usize) -> ControlFlow<()>,
        sink: &mut dyn FnMut(usize, Vec<RecordVectors>),
    ) -> Result<std::time::Duration> {
        let mut busy = std::time::Duration::ZERO;
        let groups: Vec<&[&str]> = texts.chunks(group.max(1)).collect();
        let Some(first) = groups.first() else {
            return Ok(busy);
        };
        let mut prepared = self.prepare(first)?;
        // Tokenising ahead helps a device that leaves the cores idle; on
        // the CPU the encoder has them all, and the two would only contend.
        let ahead = self.backend.plan().streams == 1;
        std::thread::scope(|scope| {
            let mut start = 0;
            for (i, records) in groups.iter().enumerate() {
                let next = groups
                    .get(i + 1)
                    .filter(|_| ahead)
                    .map(|group| scope.spawn(|| self.prepare(group)));
                let passages = prepared.ids.len().max(1);
                let mut out = Vec::with_capacity(prepared.ids.len());
                let started = std::time::Instant::now();
                self.run(&prepared.ids, &mut out, &mut |n| {
                    progress(start + records.len() * n / passages)
                })?;
                busy += started.elapsed();
                sink(start, RecordVectors::split(out, &prepared.windows));
                start += records.len();
                prepared = match (next, groups.get(i + 1)) {
                    (Some(next), _) => next
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?,
                    (None, Some(group)) => self.prepare(group)?,
                    (None, None) => break,
                };
            }
            Ok(busy)
        })
    }

    fn embed(
        &self,
        texts: &[&str],
        progress: &mut dyn FnMut(usize) -> ControlFlow<()>,
    ) -> Result<Vec<Vec<f32>>> {
        let steps: Vec<&[&str]> = texts.chunks(TOKENISE_STEP).collect();
        let mut out = Vec::with_capacity(texts.len());
        let Some(first) = steps.first() else {
            return Ok(out);
        };
        let mut ids = self.tokens.ids_of(first)?;
        std::thread::scope(|scope| {
            for (i, _) in steps.iter().enumerate() {
                let next = steps
                    .get(i + 1)
                    .map(|step| scope.spawn(|| self.tokens.ids_of(step)));
                let done = out.len();
                self.run(&ids, &mut out, &mut |n| progress(done + n))?;
                if let Some(next) = next {
                    ids = next
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
                }
            }
            Ok(out)
        })
    }
}
