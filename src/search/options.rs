//! What a search asks for: the mode, the fusion of the two rankings, the
//! strategy that finds candidates, the date window and the limits.

/// Which rankings a search uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Both measurements at once: each record's cosine and BM25 share
    /// weighed by one calibrated logistic score ([`super::relevance`]).
    #[default]
    Hybrid,
    /// Cosine similarity of the embeddings only.
    Semantic,
    /// Ranked by BM25 over the words only (the model, when at hand, only
    /// gives the query's verdict).
    Lexical,
}

impl Mode {
    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Hybrid => "hybrid",
            Mode::Semantic => "semantic",
            Mode::Lexical => "lexical",
        }
    }
}

/// Which way a query is answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strategy {
    /// The graph for large indexes, the exact scan for small ones.
    #[default]
    Auto,
    /// Score every stored vector.
    Exact,
    /// Walk the HNSW graph, then rescore its candidates exactly.
    Graph,
    /// Scan the int8 vectors, then rescore the best candidates exactly.
    Quantized,
    /// Scan the sign bits of the vectors (Hamming distance), then rescore
    /// the best candidates exactly.
    Binary,
}

impl Strategy {
    /// The name used in `info` and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Auto => "auto",
            Strategy::Exact => "exact",
            Strategy::Graph => "graph",
            Strategy::Quantized => "int8",
            Strategy::Binary => "binary",
        }
    }
}

/// A publication-date window, bounds included, as `YYYYMMDD` numbers.
/// Records without a date fall outside any window that is set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DateRange {
    /// Earliest date kept.
    pub since: Option<u32>,
    /// Latest date kept.
    pub until: Option<u32>,
}

impl DateRange {
    /// Whether either bound is set.
    pub fn is_set(&self) -> bool {
        self.since.is_some() || self.until.is_some()
    }

    /// This window narrowed to one day (empty when the day is outside it).
    pub fn narrowed_to(self, day: u32) -> DateRange {
        DateRange {
            since: Some(self.since.map_or(day, |s| s.max(day))),
            until: Some(self.until.map_or(day, |u| u.min(day))),
        }
    }
}

/// Where and when the papers a search may return were listed: seen in
/// one of `sources` (an input file's name or path, as `sources[].file` and
/// `.path` give them; any of them when empty) and listed within `listed`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scope {
    /// Input files, by name or path as indexed.
    pub sources: Vec<String>,
    /// Days the papers were listed (see `crate::index::scope`).
    pub listed: DateRange,
    /// Every one of these is part of an author's name (ignoring case).
    pub authors: Vec<String>,
    /// In one of these arXiv categories (or one under it).
    pub categories: Vec<String>,
}

impl Scope {
    /// Whether anything is asked.
    pub fn is_set(&self) -> bool {
        !self.sources.is_empty()
            || self.listed.is_set()
            || !self.authors.is_empty()
            || !self.categories.is_empty()
    }
}

/// What to return.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchOptions {
    /// At most this many hits.
    pub limit: usize,
    /// Drop hits scoring below this: the relevance score for text queries
    /// (default none: every query lists its ranking, with its verdict, see
    /// [`super::verdict`]), the cosine for `similar` (default none).
    pub min_score: Option<f32>,
    /// List nothing for a text query whose verdict is `none`.
    pub strict: bool,
    /// Search a text query's words as typed, without correcting the ones
    /// the index does not know ([`super::spelling`]).
    pub as_typed: bool,
    /// How to find candidates.
    pub strategy: Strategy,
    /// Which rankings to use (for text queries).
    pub mode: Mode,
    /// Only records published in this window; applied before ranking.
    pub dates: DateRange,
    /// Only records seen in these inputs or listed on these days; applied
    /// before ranking.
    pub scope: Scope,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            limit: 10,
            min_score: None,
            strict: false,
            as_typed: false,
            strategy: Strategy::Auto,
            mode: Mode::Hybrid,
            dates: DateRange::default(),
            scope: Scope::default(),
        }
    }
}
