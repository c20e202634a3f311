//! Results with their records attached: what the [`Searcher`](super::Searcher)
//! returns and the [`Printer`](crate::output::Printer) prints, so that
//! printing needs no index.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use super::dupes::Dupe;
use super::options::{Mode, Strategy};
pub use crate::hit::Found;
use crate::index::Manifest;
use crate::paper::Paper;

/// What a list of hits is printed with, besides the hits themselves.
#[derive(Clone, Debug, Default)]
pub struct Annotations {
    /// The search mode, for text queries (`similar` has none).
    pub mode: Option<Mode>,
    /// The query's analysed terms, highlighted on a terminal.
    pub terms: HashSet<String>,
    /// How `terms` were analysed, so the words of a hit are matched alike.
    pub analysis: crate::analysis::Analysis,
    /// Show evidence and per-mode ranks in the table.
    pub explain: bool,
    /// The `--min-score` a text query's hits had to reach, when one was
    /// given, so an empty list says whether it or `--strict` emptied it.
    pub min_score: Option<f32>,
    /// The order the hits are in, so the table shows the column they are
    /// sorted by.
    pub sort: Sort,
    /// A text query's verdict: whether the index holds anything about it.
    pub verdict: Option<super::Verdict>,
    /// The query as searched, when spelling corrections changed it.
    pub searched: Option<String>,
}

/// A ranked list: the hits best first, and what to print with them.
#[derive(Clone, Debug, Default)]
pub struct Results {
    /// The hits with their records.
    pub found: Vec<Found>,
    /// Evidence, matched paragraph and query terms per hit.
    pub notes: Annotations,
}

/// The order a result list is shown in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sort {
    /// Best score first (the ranking itself).
    #[default]
    Score,
    /// Newest first (published, else listed); undated papers last.
    Date,
    /// Most Hugging Face upvotes first; papers without a count last.
    Upvotes,
}

impl Results {
    /// Reorders the hits (and their annotations) by `sort`; ties keep the
    /// ranking's order.
    pub fn sort(&mut self, sort: Sort) {
        let key = |f: &Found| -> i64 {
            let meta = f.paper.meta.as_ref();
            match sort {
                Sort::Score => 0,
                Sort::Date => meta
                    .and_then(|m| m.published.as_deref().or(m.listed.as_deref()))
                    .and_then(crate::paper::parse_date)
                    .map_or(i64::MIN, |d| d as i64),
                Sort::Upvotes => meta.and_then(|m| m.upvotes).map_or(i64::MIN, |u| u as i64),
            }
        };
        self.notes.sort = sort;
        if sort == Sort::Score {
            return;
        }
        // Stable: equal keys keep the ranking's order.
        self.found.sort_by_key(|f| std::cmp::Reverse(key(f)));
    }
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
    /// The encoder `index` and `embed` run on this machine's CPU by
    /// default ([`crate::embed::batched::cpu_default`]).
    pub bulk_encoder: String,
}
