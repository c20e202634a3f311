//! Text to word-piece ids, as sentence-transformers tokenises: the model's
//! tokenizer.json with truncation at `max_seq_length` (`[CLS]` and `[SEP]`
//! included) and no padding (batches pad for themselves), and the windows
//! that make the rest of a long text searchable.

use std::path::Path;

use tokenizers::models::wordpiece::WordPiece;
use tokenizers::{
    DecoderWrapper, NormalizerWrapper, PostProcessorWrapper, PreTokenizerWrapper, Tokenizer,
    TokenizerImpl, TruncationDirection, TruncationParams, TruncationStrategy,
};

use super::config::fail;
use crate::error::{Error, Result};

/// Word pieces shared by consecutive windows of a long text.
pub const WINDOW_OVERLAP: usize = 32;

/// A model's tokenizer, set up as sentence-transformers uses it.
pub struct Tokens {
    tokenizer: Tokenizer,
    max_seq_length: usize,
}

impl Tokens {
    /// Reads `path` and truncates at `max_seq_length`.
    pub fn load(path: &Path, max_seq_length: usize) -> Result<Tokens> {
        let mut tokenizer = read_tokenizer(path)?;
        // all-MiniLM-L6-v2's tokenizer.json ships with truncation at 128
        // and fixed padding to 128; sentence-transformers overrides both.
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_seq_length,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(|e| fail(path, e.to_string()))?;
        tokenizer.with_padding(None);
        Ok(Tokens {
            tokenizer,
            max_seq_length,
        })
    }

    /// Whether `word` is one whole token of the vocabulary (for an
    /// uncased WordPiece model, a common English word, lower-cased).
    pub fn is_token(&self, word: &str) -> bool {
        self.tokenizer.token_to_id(word).is_some()
    }

    /// Token ids of `text` after truncation, special tokens included.
    pub fn ids(&self, text: &str) -> Result<Vec<u32>> {
        let encoding = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| Error::Embed(e.to_string()))?;
        Ok(encoding.get_ids().to_vec())
    }

    /// Token ids of every text, tokenised in parallel (on rayon's pool).
    pub fn ids_of(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| Error::Embed(e.to_string()))?;
        Ok(encodings
            .into_iter()
            .map(|e| e.get_ids().to_vec())
            .collect())
    }

    /// The passages past the truncation point of a text too long for the
    /// model: windows of `max_seq_length - 2` word pieces, the first
    /// starting [`WINDOW_OVERLAP`] pieces before the truncation point and
    /// each next one as far before the previous end; empty for texts that fit.
    pub fn windows(&self, text: &str) -> Result<Vec<String>> {
        Ok(self.record(text)?.1)
    }

    /// A record's token ids after truncation (as [`Tokens::ids`]) and its
    /// windows (as [`Tokens::windows`]) from one tokenisation: the ids are
    /// the truncated encoding that the windows are found past.
    pub fn record(&self, text: &str) -> Result<(Vec<u32>, Vec<String>)> {
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
        Ok((encoding.get_ids().to_vec(), windows))
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
