//! Results with their records attached: what the [`Searcher`](super::Searcher)
//! returns and the [`Printer`](crate::output::Printer) prints, so that
//! printing needs no index.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use super::dupes::Dupe;
use super::options::{Mode, Strategy};
use super::rank::Hit;
use crate::index::Manifest;
use crate::paper::Paper;

/// One hit and its record.
#[derive(Clone, Debug)]
pub struct Found {
    /// Where it ranked and by what score.
    pub hit: Hit,
    /// The record.
    pub paper: Paper,
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

/// A ranked list: the hits best first, and what to print with them.
#[derive(Clone, Debug, Default)]
pub struct Results {
    /// The hits with their records.
    pub found: Vec<Found>,
    /// Evidence, matched paragraph and query terms per hit.
    pub notes: Annotations,
}

/// Two near-duplicate records.
#[derive(Clone, Debug)]
pub struct Pair {
    /// Their rows, cosine and trigram overlap.
    pub dupe: Dupe,
    /// The first record.
    pub a: Paper,
    /// The second record.
    pub b: Paper,
}

/// What is in an index, for `papers info`.
#[derive(Clone, Debug)]
pub struct Info {
    /// The index folder.
    pub path: PathBuf,
    /// Live records.
    pub records: usize,
    /// What the vectors mean.
    pub manifest: Manifest,
    /// Records with window vectors, and windows in all.
    pub windows: (usize, usize),
    /// Commits so far.
    pub generation: u64,
    /// The strategy `search` uses by default.
    pub strategy: Strategy,
    /// Bytes on disk.
    pub size_bytes: u64,
    /// Records seen in each input file.
    pub sources: BTreeMap<String, usize>,
}
