//! Turning text into vectors. [`Embedder`] is the small trait the rest of the
//! crate sees; [`BertEmbedder`] implements it: [`config`] reads what the
//! model's folder says, [`tokenize`] turns text into word pieces, a
//! [`backend::Backend`] runs the encoder ([`mapped`] or [`batched`], chosen
//! once at load) and [`pool`] makes one vector of a text's. Where the
//! model's files come from is [`source`]'s business, which device runs it
//! is [`device`]'s.

pub mod amx;
mod attention;
pub mod backend;
pub mod background;
pub mod batched;
pub mod bert;
pub mod config;
mod dense;
pub mod device;
pub mod encoder;
mod gelu;
mod heap;
#[cfg(feature = "cuda")]
mod kernels;
pub mod mapped;
mod pip;
pub mod pool;
mod product;
mod residual;
mod softmax;
pub mod source;
pub mod tokenize;

pub use backend::{Precision, Workload};
pub use bert::BertEmbedder;
pub use device::DeviceChoice;
pub use source::{ModelFiles, ModelSpec, Origin, DEFAULT_MODEL};

use std::ops::ControlFlow;

use crate::error::Result;

/// A sentence-embedding model.
pub trait Embedder {
    /// Length of the vectors it returns.
    fn dimension(&self) -> usize;

    /// Embeds `texts`, returning one unit-length vector per text, in order.
    /// `progress` is called after each batch with the number of texts
    /// finished so far; returning `Break` stops the work with
    /// [`Error::Interrupted`](crate::Error::Interrupted).
    fn embed(
        &self,
        texts: &[&str],
        progress: &mut dyn FnMut(usize) -> ControlFlow<()>,
    ) -> Result<Vec<Vec<f32>>>;

    /// Whether `word` (lower-case) is a word of the model's vocabulary
    /// whole, so a real word rather than a typo; false when it cannot say.
    fn knows_word(&self, word: &str) -> bool {
        let _ = word;
        false
    }

    /// The passages past the truncation point of a text too long for the
    /// model, overlapping a little, to be embedded separately so that the
    /// end of a long abstract is searchable too; empty for texts that fit.
    fn windows(&self, text: &str) -> Result<Vec<String>> {
        let _ = text;
        Ok(Vec::new())
    }

    /// Records per group of [`Embedder::embed_records`] when the caller
    /// names none: the work a stop keeps, and how far ahead texts are
    /// tokenised and sorted by length.
    fn record_group(&self) -> usize {
        256
    }

    /// Embeds records with their windows, `group` records at a time, and
    /// hands each finished group to `sink` in order: the index of its first
    /// record and one [`RecordVectors`] per record. `progress` hears how
    /// many records are finished (a group's share counted as its batches
    /// finish); `Break` stops the work with
    /// [`Error::Interrupted`](crate::Error::Interrupted), and the group
    /// under way is not handed over. Every group handed over is whole.
    /// Returns how long the encoder ran (the rest was tokenising and
    /// waiting).
    fn embed_records(
        &self,
        texts: &[&str],
        group: usize,
        progress: &mut dyn FnMut(usize) -> ControlFlow<()>,
        sink: &mut dyn FnMut(usize, Vec<RecordVectors>),
    ) -> Result<std::time::Duration> {
        let mut busy = std::time::Duration::ZERO;
        let mut first = 0;
        for chunk in texts.chunks(group.max(1)) {
            let windows = chunk
                .iter()
                .map(|text| self.windows(text))
                .collect::<Result<Vec<_>>>()?;
            let mut refs = chunk.to_vec();
            refs.extend(windows.iter().flatten().map(String::as_str));
            let passages = refs.len();
            let started = std::time::Instant::now();
            let vectors = self.embed(&refs, &mut |n| {
                progress(first + chunk.len() * n / passages.max(1))
            })?;
            busy += started.elapsed();
            sink(
                first,
                RecordVectors::split(vectors, &windows_counts(&windows)),
            );
            first += chunk.len();
        }
        Ok(busy)
    }

    /// Embeds one text.
    fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        let mut vectors = self.embed(&[text], &mut |_| ControlFlow::Continue(()))?;
        Ok(vectors.remove(0))
    }
}

/// The vectors of one record: its own, then its windows', in the order
/// [`Embedder::windows`] gives them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecordVectors {
    /// The vector of the record's text, truncated as the model does.
    pub vector: Vec<f32>,
    /// One vector per window past the truncation point.
    pub windows: Vec<Vec<f32>>,
}

impl RecordVectors {
    /// Splits the vectors of a group embedded as its records' texts, then
    /// all their windows (`windows[i]` of record `i`), into records.
    pub fn split(vectors: Vec<Vec<f32>>, windows: &[usize]) -> Vec<RecordVectors> {
        let mut vectors = vectors.into_iter();
        let own: Vec<Vec<f32>> = vectors.by_ref().take(windows.len()).collect();
        own.into_iter()
            .zip(windows)
            .map(|(vector, &n)| RecordVectors {
                vector,
                windows: vectors.by_ref().take(n).collect(),
            })
            .collect()
    }
}

fn windows_counts(windows: &[Vec<String>]) -> Vec<usize> {
    windows.iter().map(Vec::len).collect()
}

/// What a command asked for: a model id (else the index's, else the
/// default), a local folder, and a device.
#[derive(Clone, Debug, Default)]
pub struct ModelChoice {
    /// `--model`: a hub id; `None` takes the index's model or [`DEFAULT_MODEL`].
    pub model: Option<String>,
    /// `--model-dir`: load from this folder instead.
    pub model_dir: Option<std::path::PathBuf>,
    /// `--device`.
    pub device: DeviceChoice,
    /// `--precision`; `None` picks [`Precision::default_for`] the device
    /// and workload.
    pub precision: Option<Precision>,
    /// What the process embeds, which picks the CPU's forward pass.
    pub workload: Workload,
    /// Say which model was loaded and from where even when nothing was
    /// fetched (`-v`); a fetch is always told.
    pub announce: bool,
}

/// The model an index was built with, which a model loaded for it must
/// match: the index's directory (for the error), its model id and the
/// SHA-256 of its weights.
#[derive(Clone, Copy, Debug)]
pub struct BuiltWith<'a> {
    /// The index directory.
    pub dir: &'a std::path::Path,
    /// The model id it was built with.
    pub model: &'a str,
    /// The SHA-256 of those weights.
    pub weights_sha256: &'a str,
}

/// A model ready to embed, with the files it came from and what it stamps
/// on an index.
pub struct LoadedModel {
    /// The files it was loaded from.
    pub files: ModelFiles,
    /// SHA-256 of its weights.
    pub weights_sha256: String,
    /// The model.
    pub embedder: BertEmbedder,
}

impl ModelChoice {
    /// The model to resolve: the one asked for, else `index_model`, else
    /// the default.
    pub fn spec(&self, index_model: Option<&str>) -> ModelSpec {
        ModelSpec {
            model: self
                .model
                .clone()
                .or_else(|| index_model.map(str::to_string))
                .unwrap_or_else(|| DEFAULT_MODEL.to_string()),
            model_dir: self.model_dir.clone(),
        }
    }

    /// Resolves the model's files (telling `note` where they came from),
    /// checks them against the index's manifest when there is one, and
    /// loads the model. `rebuild` is the command that re-embeds the index,
    /// for the hint of a mismatch.
    pub fn load(
        &self,
        index: Option<BuiltWith<'_>>,
        rebuild: &dyn Fn(&str) -> String,
        note: &dyn Fn(&str),
    ) -> Result<LoadedModel> {
        let files = source::resolve(&self.spec(index.as_ref().map(|i| i.model)))?;
        if self.announce || files.origin.fetched() {
            note(&files.describe());
        }
        let weights_sha256 = files.weights_sha256()?;
        if let Some(index) = index {
            if index.weights_sha256 != weights_sha256 {
                return Err(crate::Error::model_mismatch(
                    index.dir,
                    (index.model, index.weights_sha256),
                    &files.model,
                    &weights_sha256,
                    rebuild,
                ));
            }
        }
        let device = device::select(self.device, note)?;
        let precision = self
            .precision
            .unwrap_or_else(|| Precision::default_for(&device, self.workload));
        let embedder = BertEmbedder::load(&files, &device, self.workload, precision)?;
        if self.announce {
            note(&format!("encoder: {}", embedder.describe()));
        }
        Ok(LoadedModel {
            files,
            weights_sha256,
            embedder,
        })
    }
}

/// What the vectors of an index mean.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelStamp {
    /// Model id.
    pub model: String,
    /// SHA-256 of its weights.
    pub weights_sha256: String,
    /// Vector length.
    pub dimension: usize,
    /// Truncation length in word pieces.
    pub max_seq_length: usize,
}

impl LoadedModel {
    /// What this model stamps on an index it writes.
    pub fn stamp(&self) -> ModelStamp {
        ModelStamp {
            model: self.files.model.clone(),
            weights_sha256: self.weights_sha256.clone(),
            dimension: self.embedder.dimension(),
            max_seq_length: self.embedder.max_seq_length(),
        }
    }
}

/// The largest absolute difference between two tensors of one shape (for
/// the kernels' tests against candle's own operations).
#[cfg(test)]
fn max_difference(a: &candle_core::Tensor, b: &candle_core::Tensor) -> f32 {
    (a - b)
        .and_then(|d| d.abs())
        .and_then(|d| d.flatten_all())
        .and_then(|d| d.max(0))
        .and_then(|d| d.to_scalar::<f32>())
        .expect("two tensors of one shape")
}
