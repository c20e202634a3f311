//! A persistent index: records, their vectors and an HNSW graph in one
//! directory.
//!
//! # On-disk format (version 2)
//!
//! ```text
//! INDEX_DIR/
//!   manifest.json      what is here: format version, model id, weights SHA-256,
//!                      dimension, record count, and the data folder's files
//!                      with their sizes and SHA-256s; written last, atomically
//!   lock               held by the one process writing the index
//!   gen-000007/        the data of generation 7, never modified once written
//!     records.json     JSON array of {id, text, sources}, sorted by id
//!     vectors.f32      little-endian f32, one row of `dimension` per record
//!     lexical.json     the BM25 index: terms per record and term postings
//!     windows.bin      vectors of the text of long records past the
//!                      model's truncation point: (u32 row, f32 × dimension)
//!     graph.hnsw.graph hnsw_rs's dump of the graph (node id = record row)
//!     graph.hnsw.data
//!   gen-000006/        the previous generation, kept for readers that opened it
//! ```
//!
//! A write builds a new generation folder beside the current one, syncs it,
//! then replaces `manifest.json` by rename. A run killed at any point leaves
//! the old manifest naming complete old data. Readers take no lock.

pub mod hnsw;
pub mod manifest;
pub mod store;
pub mod update;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use manifest::{Manifest, FORMAT_VERSION};
pub use update::{IndexLock, ModelStamp, Update, UpdateReport};

use crate::error::{Error, Result};
use crate::lexical::Bm25;
use crate::paper::{validate_prefix, Paper, PaperId};
use crate::search::{combine, exact_scan, rank, Hit, Mode, SearchOptions, Strategy};

/// Keeps the hits whose records are published within `options.dates`.
fn filter_dates(index: &Index, hits: &mut Vec<Hit>, options: &SearchOptions) {
    if options.dates.is_set() {
        hits.retain(|h| options.dates.contains(index.papers[h.row].date()));
    }
}

/// The strategy to use: a date filter needs every record scored, so that
/// filtering never empties a list that has matches.
fn strategy_for(options: &SearchOptions) -> Strategy {
    if options.dates.is_set() {
        Strategy::Exact
    } else {
        options.strategy
    }
}
use hnsw::Graph;

/// From this many records on, `auto` search walks the graph; below it the
/// exact scan is faster than loading and walking the graph.
pub const GRAPH_THRESHOLD: usize = 20_000;

/// Subtracted from a window's cosine before it stands for its record: a
/// window is a fragment, and unpenalised fragments outrank whole abstracts
/// too often. `cargo bench --bench quality` on the seeds: 0.1 keeps every
/// tail query at rank 1 and costs nothing elsewhere; 0 costs 0.03 MRR on
/// known-item queries.
const WINDOW_PENALTY: f32 = 0.1;

/// The file names hnsw_rs writes for a graph dumped under `basename`.
fn graph_files(basename: &str) -> [String; 2] {
    [
        format!("{basename}.hnsw.graph"),
        format!("{basename}.hnsw.data"),
    ]
}

/// Two records that say nearly the same thing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dupe {
    /// Row of the first record.
    pub a: usize,
    /// Row of the second record (after `a`).
    pub b: usize,
    /// Cosine similarity of their vectors.
    pub score: f32,
    /// Share of the shorter text's word trigrams found in the other.
    pub overlap: f32,
}

/// An opened index, read-only.
pub struct Index {
    dir: PathBuf,
    manifest: Manifest,
    papers: Vec<Paper>,
    vectors: Vec<f32>,
    graph: OnceLock<Graph>,
    lexical_bytes: Vec<u8>,
    lexical: OnceLock<Bm25>,
    window_rows: Vec<u32>,
    window_vectors: Vec<f32>,
}

impl Index {
    /// The platform's default index location (`$XDG_DATA_HOME/papers/index` on Linux).
    pub fn default_dir() -> Option<PathBuf> {
        dirs::data_dir().map(|d| d.join("papers").join("index"))
    }

    /// Opens the index in `dir`, checking every data file against the manifest.
    pub fn open(dir: &Path) -> Result<Index> {
        let manifest = Manifest::read(dir)?;
        let data = dir.join(&manifest.data_dir);
        let records_path = data.join(store::RECORDS);
        let vectors_path = data.join(store::VECTORS);
        let records = store::read_checked(&records_path, manifest.files.get(store::RECORDS))?;
        let papers = store::decode_records(&records_path, &records)?;
        if papers.len() != manifest.records {
            return Err(Error::corrupt(
                &records_path,
                format!(
                    "{} records, manifest says {}",
                    papers.len(),
                    manifest.records
                ),
            ));
        }
        if papers.windows(2).any(|w| w[0].id >= w[1].id) {
            return Err(Error::corrupt(&records_path, "records out of order"));
        }
        let vectors = store::read_checked(&vectors_path, manifest.files.get(store::VECTORS))?;
        // The graph is loaded only when a search walks it, but its files are
        // checked now so that damage is reported by every command.
        for name in graph_files(&manifest.graph) {
            store::read_checked(&data.join(&name), manifest.files.get(&name))?;
        }
        let lexical_bytes = store::read_checked(
            &data.join(store::LEXICAL),
            manifest.files.get(store::LEXICAL),
        )?;
        let windows_path = data.join(store::WINDOWS);
        let windows = store::read_checked(&windows_path, manifest.files.get(store::WINDOWS))?;
        let (window_rows, window_vectors) =
            store::decode_windows(&windows_path, &windows, papers.len(), manifest.dimension)?;
        let vectors =
            store::decode_vectors(&vectors_path, &vectors, papers.len(), manifest.dimension)?;
        Ok(Index {
            dir: dir.to_path_buf(),
            manifest,
            papers,
            vectors,
            graph: OnceLock::new(),
            lexical_bytes,
            lexical: OnceLock::new(),
            window_rows,
            window_vectors,
        })
    }

    /// The index directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The manifest it was opened with.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// All records, in id order.
    pub fn papers(&self) -> &[Paper] {
        &self.papers
    }

    /// The stored vector of the record at `row`.
    pub fn vector(&self, row: usize) -> &[f32] {
        let d = self.manifest.dimension;
        &self.vectors[row * d..(row + 1) * d]
    }

    /// The window vectors of the record at `row` (none unless its text runs
    /// past the model's truncation point).
    pub fn windows_of(&self, row: usize) -> Vec<&[f32]> {
        let d = self.manifest.dimension;
        let start = self.window_rows.partition_point(|&r| (r as usize) < row);
        self.window_rows[start..]
            .iter()
            .take_while(|&&r| r as usize == row)
            .enumerate()
            .map(|(i, _)| &self.window_vectors[(start + i) * d..(start + i + 1) * d])
            .collect()
    }

    /// How many records have window vectors, and how many windows in all.
    pub fn window_counts(&self) -> (usize, usize) {
        // Rows are sorted: count where the row changes.
        let long = self.window_rows.windows(2).filter(|w| w[0] != w[1]).count()
            + usize::from(!self.window_rows.is_empty());
        (long, self.window_rows.len())
    }

    /// Raises each hit's score to its best window's, and adds records whose
    /// windows score where the candidates did not reach (graph search).
    fn apply_windows(&self, hits: &mut Vec<Hit>, query: &[f32]) {
        if self.window_rows.is_empty() {
            return;
        }
        let d = self.manifest.dimension;
        let mut best: std::collections::HashMap<usize, f32> = std::collections::HashMap::new();
        for (i, &row) in self.window_rows.iter().enumerate() {
            let score = crate::search::dot(&self.window_vectors[i * d..(i + 1) * d], query)
                - WINDOW_PENALTY;
            let slot = best.entry(row as usize).or_insert(f32::MIN);
            *slot = slot.max(score);
        }
        for hit in hits.iter_mut() {
            if let Some(score) = best.remove(&hit.row) {
                hit.score = hit.score.max(score);
            }
        }
        hits.extend(best.into_iter().map(|(row, score)| {
            Hit::new(row, score.max(crate::search::dot(self.vector(row), query)))
        }));
    }

    /// All vectors, row-major.
    pub fn vectors(&self) -> &[f32] {
        &self.vectors
    }

    /// Total bytes of the manifest and the current generation's files.
    pub fn size_on_disk(&self) -> u64 {
        let manifest = std::fs::metadata(self.dir.join(manifest::MANIFEST)).map_or(0, |m| m.len());
        manifest + self.manifest.files.values().map(|f| f.bytes).sum::<u64>()
    }

    /// The strategy `auto` resolves to for this index.
    pub fn resolve_strategy(&self, strategy: Strategy) -> Strategy {
        match strategy {
            Strategy::Auto if self.papers.len() >= GRAPH_THRESHOLD => Strategy::Graph,
            Strategy::Auto => Strategy::Exact,
            other => other,
        }
    }

    /// The row of the record whose id starts with `prefix` (at least 4 hex
    /// digits), whose arXiv id is `prefix`, or whose id in its JSON input
    /// (a BEIR `_id`, an export's key) is exactly `prefix`; an error lists
    /// the candidates when several ids match.
    pub fn resolve(&self, prefix: &str) -> Result<usize> {
        // An input's own id is the most specific: it wins over a hex prefix
        // that happens to spell it (BEIR's ids are decimal).
        let own = |p: &Paper| {
            !prefix.is_empty() && p.meta.as_ref().is_some_and(|m| m.source_id == prefix)
        };
        if let Some(row) = self.papers.iter().position(own) {
            return Ok(row);
        }
        // An arXiv id (from a JSON input) is an alias: `2405.01234`,
        // optionally with `arXiv:` before it or a version after it.
        if let Some(wanted) = crate::records::arxiv_id(prefix) {
            return self
                .papers
                .iter()
                .position(|p| {
                    p.arxiv_id()
                        .is_some_and(|id| crate::records::arxiv_id(id).as_deref() == Some(&wanted))
                })
                .ok_or_else(|| Error::UnknownId {
                    id: prefix.to_string(),
                });
        }
        let wanted = validate_prefix(prefix)?;
        // Records are sorted by id, so the matches are one contiguous run.
        let start = self
            .papers
            .partition_point(|p| p.id.hex().as_str() < wanted.as_str());
        let matches: Vec<usize> = (start..self.papers.len())
            .take_while(|&i| self.papers[i].id.hex().starts_with(&wanted))
            .collect();
        match matches.as_slice() {
            [] => Err(Error::UnknownId {
                id: prefix.to_string(),
            }),
            [row] => Ok(*row),
            rows => Err(Error::AmbiguousId {
                prefix: prefix.to_string(),
                candidates: rows.iter().map(|&r| self.papers[r].id.hex()).collect(),
            }),
        }
    }

    /// The row of the record with exactly this id, if present.
    pub fn row_of(&self, id: PaperId) -> Option<usize> {
        self.papers.binary_search_by(|p| p.id.cmp(&id)).ok()
    }

    /// The records nearest to a query vector.
    pub fn search(&self, query: &[f32], options: &SearchOptions) -> Result<Vec<Hit>> {
        self.nearest(query, &[], options)
    }

    /// The BM25 index, parsed on first use.
    pub fn lexical(&self) -> Result<&Bm25> {
        if let Some(bm25) = self.lexical.get() {
            return Ok(bm25);
        }
        let path = self.dir.join(&self.manifest.data_dir).join(store::LEXICAL);
        let bm25: Bm25 = serde_json::from_slice(&self.lexical_bytes)
            .map_err(|e| Error::corrupt(&path, format!("invalid lexical index: {e}")))?;
        if !bm25.is_consistent(self.papers.len()) {
            return Err(Error::corrupt(
                &path,
                "lexical index does not match the records",
            ));
        }
        Ok(self.lexical.get_or_init(|| bm25))
    }

    /// Answers a text query in `options.mode`: `vector` is the query's
    /// embedding (needed unless the mode is lexical). A record's semantic
    /// score is the best of its vector's and its windows'.
    pub fn search_text(
        &self,
        text: &str,
        vector: Option<&[f32]>,
        options: &SearchOptions,
    ) -> Result<Vec<Hit>> {
        let semantic = match (options.mode, vector) {
            (Mode::Lexical, _) => Vec::new(),
            (_, Some(vector)) => {
                // Fusion needs more than the final count from the graph.
                let depth = match options.mode {
                    Mode::Hybrid => options.limit.max(crate::search::FUSION_DEPTH),
                    _ => options.limit,
                };
                let mut hits = self.candidates(vector, &[], depth, strategy_for(options))?;
                self.apply_windows(&mut hits, vector);
                filter_dates(self, &mut hits, options);
                hits
            }
            (mode, None) => return Err(Error::NeedsEmbedding { mode: mode.name() }),
        };
        let mut lexical = match options.mode {
            Mode::Semantic => Vec::new(),
            _ => self.lexical()?.score(text),
        };
        filter_dates(self, &mut lexical, options);
        Ok(combine(semantic, lexical, options))
    }

    /// Loads now what [`Index::search_text`] with `options` will read (the
    /// lexical index, the graph), so that a caller can do so while it waits
    /// for something else, such as the model.
    pub fn prepare(&self, options: &SearchOptions) -> Result<()> {
        if options.mode != Mode::Semantic {
            self.lexical()?;
        }
        if options.mode != Mode::Lexical
            && !self.papers.is_empty()
            && self.resolve_strategy(strategy_for(options)) == Strategy::Graph
        {
            self.graph()?;
        }
        Ok(())
    }

    /// The records nearest to the record at `row`, never the record itself.
    pub fn similar(&self, row: usize, options: &SearchOptions) -> Result<Vec<Hit>> {
        self.nearest(self.vector(row), &[row], options)
    }

    /// Pairs of distinct records that are near duplicates: cosine
    /// similarity at least `min_score` and at least `min_overlap` of the
    /// shorter one's word trigrams shared (cosine alone does not separate
    /// revised versions from papers on one topic). Most similar first, each
    /// pair once, lower row first.
    pub fn near_duplicates(&self, min_score: f32, min_overlap: f32) -> Vec<Dupe> {
        use rayon::prelude::*;
        let n = self.papers.len();
        let mut pairs: Vec<Dupe> = (0..n)
            .into_par_iter()
            .flat_map_iter(|a| {
                let va = self.vector(a);
                (a + 1..n).filter_map(move |b| {
                    let score = crate::search::dot(va, self.vector(b));
                    if score < min_score {
                        return None;
                    }
                    let overlap =
                        crate::lexical::trigram_overlap(&self.papers[a].text, &self.papers[b].text);
                    (overlap >= min_overlap).then_some(Dupe {
                        a,
                        b,
                        score,
                        overlap,
                    })
                })
            })
            .collect();
        pairs.sort_by(|x, y| {
            y.score
                .total_cmp(&x.score)
                .then((x.a, x.b).cmp(&(y.a, y.b)))
        });
        pairs
    }

    /// The records nearest to the records at `like` and away from those at
    /// `unlike` (the mean of the first set minus half the mean of the
    /// second), never any of them.
    pub fn similar_to_set(
        &self,
        like: &[usize],
        unlike: &[usize],
        options: &SearchOptions,
    ) -> Result<Vec<Hit>> {
        let d = self.manifest.dimension;
        let mean = |rows: &[usize]| {
            let mut sum = vec![0f32; d];
            for &row in rows {
                for (s, x) in sum.iter_mut().zip(self.vector(row)) {
                    *s += x / rows.len() as f32;
                }
            }
            sum
        };
        let mut query = mean(like);
        if !unlike.is_empty() {
            for (q, x) in query.iter_mut().zip(mean(unlike)) {
                *q -= 0.5 * x;
            }
        }
        let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            query.iter_mut().for_each(|x| *x /= norm);
        }
        let exclude: Vec<usize> = like.iter().chain(unlike).copied().collect();
        self.nearest(&query, &exclude, options)
    }

    /// The records nearest to a vector, never those in `exclude`, within
    /// the date window, ranked.
    fn nearest(
        &self,
        query: &[f32],
        exclude: &[usize],
        options: &SearchOptions,
    ) -> Result<Vec<Hit>> {
        let mut hits = self.candidates(query, exclude, options.limit, strategy_for(options))?;
        filter_dates(self, &mut hits, options);
        Ok(rank(hits, options))
    }

    /// Unranked candidates for a query vector: every record (exact scan),
    /// or about `wanted` from the graph, rescored exactly; never `exclude`.
    fn candidates(
        &self,
        query: &[f32],
        exclude: &[usize],
        wanted: usize,
        strategy: Strategy,
    ) -> Result<Vec<Hit>> {
        if query.len() != self.manifest.dimension {
            return Err(Error::Dimension {
                what: "the query vector".into(),
                found: query.len(),
                expected: self.manifest.dimension,
            });
        }
        Ok(match self.resolve_strategy(strategy) {
            Strategy::Graph if !self.papers.is_empty() => {
                let wanted = wanted.saturating_add(exclude.len()).min(self.papers.len());
                // The graph gives candidates; their scores are recomputed
                // from the stored vectors so both paths score identically.
                self.graph()?
                    .search(query, wanted)
                    .into_iter()
                    .filter(|&(row, _)| !exclude.contains(&row) && row < self.papers.len())
                    .map(|(row, _)| Hit::new(row, crate::search::dot(self.vector(row), query)))
                    .collect()
            }
            _ => exact_scan(&self.vectors, self.manifest.dimension, query, exclude),
        })
    }

    /// The HNSW graph, loaded on first use after checking its files.
    fn graph(&self) -> Result<&Graph> {
        if let Some(graph) = self.graph.get() {
            return Ok(graph);
        }
        let data = self.dir.join(&self.manifest.data_dir);
        let graph = Graph::load(&data, &self.manifest.graph)?;
        if graph.len() != self.papers.len() {
            return Err(Error::corrupt(
                data.join(format!("{}.hnsw.graph", self.manifest.graph)),
                format!("{} nodes for {} records", graph.len(), self.papers.len()),
            ));
        }
        Ok(self.graph.get_or_init(|| graph))
    }
}
