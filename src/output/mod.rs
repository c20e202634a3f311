//! Everything papers writes to stdout goes through one [`Printer`]: a table
//! for people ([`human`]) or JSON for scripts ([`json`], whose module docs
//! are the JSON contract). Messages and progress go to stderr and are the
//! binary's business.

pub mod human;
pub mod json;

use std::io::{self, Write};

use crate::index::{Dupe, Index, UpdateReport};
use std::collections::HashSet;

use crate::search::{Hit, Mode, Strategy};

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

/// Facts about an index for `papers info`, beyond its manifest.
#[derive(Clone, Debug)]
pub struct InfoExtra {
    /// The strategy `search` uses by default.
    pub strategy: Strategy,
    /// Bytes on disk.
    pub size_bytes: u64,
}

/// A resolved model, for `papers model`.
#[derive(Clone, Debug)]
pub struct ModelInfo {
    /// Its files.
    pub files: crate::embed::ModelFiles,
    /// SHA-256 of the weights.
    pub weights_sha256: String,
}

/// What a list of hits is printed with, besides the hits themselves.
#[derive(Clone, Debug, Default)]
pub struct Annotations {
    /// The search mode, for text queries (`similar` has none).
    pub mode: Option<Mode>,
    /// Per hit, the sentence of the abstract closest to the query.
    pub evidence: Vec<String>,
    /// Per hit, the 1-based paragraph of a multi-paragraph query it matched best.
    pub query_paragraph: Vec<usize>,
    /// The query's analysed terms, highlighted on a terminal.
    pub terms: HashSet<String>,
    /// How `terms` were analysed, so the words of a hit are matched alike.
    pub analysis: crate::lexical::Analysis,
    /// Show evidence and per-mode ranks in the table.
    pub explain: bool,
}

/// The record at `row`, for printing: a damaged record is a write error.
fn record(index: &Index, row: usize) -> io::Result<crate::paper::Paper> {
    index.paper(row).map_err(io::Error::other)
}

/// Calls `f` with every record in id order, for printing.
fn each_record(
    index: &Index,
    mut f: impl FnMut(&crate::paper::Paper) -> io::Result<()>,
) -> io::Result<()> {
    // A write error (a closed pipe) comes back as itself, so the binary
    // can tell it from damage.
    let mut failed = None;
    let read = index.for_each_paper(|_, paper| {
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
    pub fn hits(&mut self, index: &Index, hits: &[Hit], notes: &Annotations) -> io::Result<()> {
        match self.format {
            Format::Human { color, width } => {
                human::hits(&mut self.out, index, hits, notes, color, width)
            }
            Format::Json => json::hits(&mut self.out, index, hits, notes),
        }?;
        self.out.flush()
    }

    /// One record in full; with `raw`, its abstract as the input gave it.
    pub fn paper(&mut self, index: &Index, row: usize, raw: bool) -> io::Result<()> {
        match self.format {
            Format::Human { color, width } => {
                human::paper(&mut self.out, index, row, raw, color, width)
            }
            Format::Json => json::paper(&mut self.out, index, row, raw),
        }?;
        self.out.flush()
    }

    /// Every record of an index, in index order.
    pub fn list(&mut self, index: &Index) -> io::Result<()> {
        match self.format {
            Format::Human { color, width } => human::list(&mut self.out, index, color, width),
            Format::Json => json::list(&mut self.out, index),
        }?;
        self.out.flush()
    }

    /// What is in an index.
    pub fn info(&mut self, index: &Index, extra: &InfoExtra) -> io::Result<()> {
        match self.format {
            Format::Human { .. } => human::info(&mut self.out, index, extra),
            Format::Json => json::info(&mut self.out, index, extra),
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

    /// Pairs of near-duplicate records with their cosine similarity.
    pub fn dupes(&mut self, index: &Index, pairs: &[Dupe]) -> io::Result<()> {
        match self.format {
            Format::Human { color, width } => {
                human::dupes(&mut self.out, index, pairs, color, width)
            }
            Format::Json => json::dupes(&mut self.out, index, pairs),
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
