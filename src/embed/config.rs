//! What a sentence-transformer's folder says about the model: the
//! encoder's shape (config.json), where sentence-transformers truncates
//! (sentence_bert_config.json) and how it pools (1_Pooling/config.json).
//! Read once, at load, before any backend is chosen.

use serde::Deserialize;

use super::encoder::EncoderConfig;
use super::pool::Pooling;
use super::source::ModelFiles;
use crate::error::{Error, Result};

/// The model as its config files describe it.
#[derive(Clone, Debug)]
pub struct ModelConfig {
    /// The encoder's shape.
    pub encoder: EncoderConfig,
    /// Length of the vectors (the hidden size).
    pub dimension: usize,
    /// Truncation length in word pieces, `[CLS]` and `[SEP]` included.
    pub max_seq_length: usize,
    /// The Pooling module's mode.
    pub pooling: Pooling,
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

impl ModelConfig {
    /// Reads the config files of `files`; an error names the file.
    pub fn read(files: &ModelFiles) -> Result<ModelConfig> {
        let raw: serde_json::Value = serde_json::from_str(&read(&files.config)?)
            .map_err(|e| fail(&files.config, e.to_string()))?;
        let field = |name: &str| raw.get(name).and_then(serde_json::Value::as_u64);
        let dimension = field("hidden_size")
            .ok_or_else(|| fail(&files.config, "no hidden_size".into()))?
            as usize;
        let max_positions = field("max_position_embeddings").unwrap_or(512) as usize;
        let encoder: EncoderConfig = serde_json::from_value(raw)
            .map_err(|e| fail(&files.config, format!("not a BERT config: {e}")))?;

        // sentence-transformers truncates to max_seq_length from
        // sentence_bert_config.json; without it, to the position table's size.
        let max_seq_length = match &files.sentence_config {
            Some(path) => serde_json::from_str::<SentenceConfig>(&read(path)?)
                .map_err(|e| fail(path, e.to_string()))?
                .max_seq_length
                .unwrap_or(max_positions),
            None => max_positions,
        }
        .min(max_positions);

        let pooling = match &files.pooling_config {
            Some(path) => {
                let c: PoolingConfig =
                    serde_json::from_str(&read(path)?).map_err(|e| fail(path, e.to_string()))?;
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
        Ok(ModelConfig {
            encoder,
            dimension,
            max_seq_length,
            pooling,
        })
    }
}

fn read(path: &std::path::Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Error::io(path, e))
}

/// A model file that could not be used, and why.
pub(super) fn fail(what: &std::path::Path, reason: String) -> Error {
    Error::ModelLoad {
        model: what.display().to_string(),
        reason,
    }
}
