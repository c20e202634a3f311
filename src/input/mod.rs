//! The input side: every format papers reads, one file each, and the rules
//! they share. A file is sniffed ([`file`](mod@file)), decompressed when it is gzip,
//! and read by its format: a Daily Papers dump ([`daily`]), a JSON list of
//! records or Hugging Face's daily papers ([`hf`]), JSON Lines
//! ([`jsonl`]) or Parquet ([`parquet`]). Every format maps its parts
//! through the same [`Fields`] and cleans its text and ids with
//! [`clean`](fn@clean), so one record reads the same whatever carried it.

pub mod clean;
pub mod daily;
pub mod fields;
pub mod file;
pub mod hf;
pub mod jsonl;
#[cfg(feature = "parquet")]
pub mod parquet;
#[cfg(not(feature = "parquet"))]
#[path = "parquet_off.rs"]
pub mod parquet;
pub mod stream;

pub use clean::clean;
pub use daily::{parse_dump, ParseError, HEADER};
pub use fields::{Field, Fields};
pub use file::read_input;
pub use hf::{hf_entry, parse_hf_json, parse_json_list};
pub use jsonl::{embed_text, parse_jsonl};

/// What a build without the `parquet` feature says when asked to read or
/// write Parquet (the output side says it too).
pub const NO_PARQUET: &str =
    "this papers was built without Parquet support (the `parquet` cargo feature)";

/// One record as an input holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct Paragraph {
    /// 1-based paragraph number (a dump's header not counted), line
    /// (JSON Lines), entry (JSON lists) or row (Parquet).
    pub number: usize,
    /// 1-based line where the paragraph starts (0 where there are no
    /// lines).
    pub line: usize,
    /// The normalised text: each line trimmed, lines joined by one space.
    pub text: String,
    /// Title, authors, date and arXiv id (structured inputs only).
    pub meta: Option<crate::paper::Meta>,
    /// A vector made elsewhere (`papers index --embeddings` only).
    pub embedding: Option<Vec<f32>>,
}

impl Paragraph {
    /// The record it holds, found as paragraph `number` of the file named
    /// `file` at `path` (its vector, if any, is left out).
    pub fn into_paper(self, file: &str, path: &std::path::Path) -> crate::paper::Paper {
        let source = crate::paper::Source {
            file: file.to_string(),
            path: path.display().to_string(),
            paragraph: self.number,
        };
        let mut paper = crate::paper::Paper::new(self.text, source);
        paper.meta = self.meta;
        paper
    }
}

/// A line (or entry, or row) that was not read, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadLine {
    /// 1-based line, entry or row number.
    pub line: usize,
    /// Why, in a few words.
    pub reason: String,
}

/// `text` without a UTF-8 byte-order mark.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}
