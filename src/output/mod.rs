//! Everything papers writes to stdout goes through one [`Printer`]: a table
//! for people ([`human`]) or JSON for scripts ([`json`], whose module docs
//! are the JSON contract). Messages and progress go to stderr and are the
//! binary's business.

pub mod digest;
pub mod escape;
pub mod export;
pub mod feed;
pub mod human;
pub mod json;
pub use crate::input::NO_PARQUET;

#[cfg(feature = "parquet")]
pub mod parquet;
#[cfg(not(feature = "parquet"))]
#[path = "parquet_off.rs"]
pub mod parquet;
mod style;
pub mod table;

use std::io::{self, Write};

use crate::index::UpdateReport;
use crate::paper::Paper;
pub use crate::search::Annotations;
use crate::search::{Info, Pair, Results};

/// How results are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned text, coloured when `color` is set.
    Human {
        /// Use ANSI colours.
        color: bool,
        /// Terminal width in columns.
        width: usize,
    },
    /// JSON Lines for lists, one JSON object for single results.
    Json,
}

/// A resolved model, for `papers model`.
#[derive(Clone, Debug)]
pub struct ModelInfo {
    /// Its files.
    pub files: crate::embed::ModelFiles,
    /// SHA-256 of the weights.
    pub weights_sha256: String,
}

/// Calls `f` with every record of `for_each`'s source, for printing.
fn each_record(
    for_each: impl FnOnce(&mut dyn FnMut(Paper) -> crate::Result<()>) -> crate::Result<()>,
    mut f: impl FnMut(&Paper) -> io::Result<()>,
) -> io::Result<()> {
    // A write error (a closed pipe) comes back as itself, so the binary
    // can tell it from damage.
    let mut failed = None;
    let read = for_each(&mut |paper| {
        f(&paper).map_err(|e| {
            let kind = e.kind();
            failed = Some(e);
            crate::Error::io("standard output", io::Error::from(kind))
        })
    });
    match failed {
        Some(e) => Err(e),
        None => read.map_err(io::Error::other),
    }
}

/// Writes results in the chosen format.
pub struct Printer<W: Write> {
    out: W,
    format: Format,
}

impl<W: Write> Printer<W> {
    /// A printer writing to `out`.
    pub fn new(out: W, format: Format) -> Self {
        Printer { out, format }
    }

    /// Search or similarity results.
    pub fn hits(&mut self, results: &Results) -> io::Result<()> {
        match self.format {
            Format::Human { color, width } => table::hits(&mut self.out, results, color, width),
            Format::Json => json::hits(&mut self.out, results),
        }?;
        self.out.flush()
    }

    /// One record in full; with `raw`, its abstract as the input gave it.
    pub fn paper(&mut self, paper: &Paper, raw: bool) -> io::Result<()> {
        match self.format {
            Format::Human { color, width } => human::paper(&mut self.out, paper, raw, color, width),
            Format::Json => json::paper(&mut self.out, paper, raw),
        }?;
        self.out.flush()
    }

    /// Every record `for_each` gives (it calls its argument with each), in
    /// that order.
    pub fn list(
        &mut self,
        for_each: impl FnOnce(&mut dyn FnMut(Paper) -> crate::Result<()>) -> crate::Result<()>,
    ) -> io::Result<()> {
        let out = &mut self.out;
        match self.format {
            Format::Human { color, width } => {
                each_record(for_each, |paper| human::list_line(out, paper, color, width))
            }
            Format::Json => each_record(for_each, |paper| json::list_line(out, paper)),
        }?;
        self.out.flush()
    }

    /// What is in an index.
    pub fn info(&mut self, info: &Info) -> io::Result<()> {
        match self.format {
            Format::Human { .. } => human::info(&mut self.out, info),
            Format::Json => json::info(&mut self.out, info),
        }?;
        self.out.flush()
    }

    /// The outcome of `papers index` (JSON only: people read the stderr summary).
    pub fn report(&mut self, report: &UpdateReport, index_dir: &std::path::Path) -> io::Result<()> {
        if self.format == Format::Json {
            json::report(&mut self.out, report, index_dir)?;
        }
        self.out.flush()
    }

    /// A ranked feed.
    pub fn feed(&mut self, feed: &crate::feed::Feed) -> io::Result<()> {
        match self.format {
            Format::Human { color, width } => self::feed::table(&mut self.out, feed, color, width),
            Format::Json => self::feed::lines(&mut self.out, feed),
        }?;
        self.out.flush()
    }

    /// Tags and their counts.
    pub fn tags(&mut self, tags: &[crate::feed::TagSummary]) -> io::Result<()> {
        self::feed::tags(&mut self.out, tags, self.format == Format::Json)?;
        self.out.flush()
    }

    /// Pairs of near-duplicate records with their cosine similarity.
    pub fn dupes(&mut self, pairs: &[Pair]) -> io::Result<()> {
        match self.format {
            Format::Human { color, width } => human::dupes(&mut self.out, pairs, color, width),
            Format::Json => json::dupes(&mut self.out, pairs),
        }?;
        self.out.flush()
    }

    /// Where a model's files are: the folder on a terminal, the JSON
    /// object otherwise.
    pub fn model(&mut self, info: &ModelInfo) -> io::Result<()> {
        match self.format {
            Format::Human { .. } => writeln!(self.out, "{}", info.files.dir.display()),
            Format::Json => json::model(&mut self.out, info),
        }?;
        self.out.flush()
    }

    /// Embeddings of texts, one per line.
    pub fn embeddings(&mut self, texts: &[String], vectors: &[Vec<f32>]) -> io::Result<()> {
        json::embeddings(&mut self.out, texts, vectors)?;
        self.out.flush()
    }

    /// `embed --records`: each record with its `embedding` (JSON Lines).
    pub fn records_with_embeddings(
        &mut self,
        records: Vec<serde_json::Map<String, serde_json::Value>>,
        vectors: &[Vec<f32>],
    ) -> io::Result<()> {
        json::records_with_embeddings(&mut self.out, records, vectors)?;
        self.out.flush()
    }
}
