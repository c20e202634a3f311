//! A persistent index: records, their vectors and an HNSW graph in one
//! directory.
//!
//! # On-disk format (version 1)
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
use crate::paper::{validate_prefix, Paper, PaperId};
use crate::search::{exact_scan, rank, Hit, SearchOptions, Strategy};
use hnsw::Graph;

/// From this many records on, `auto` search walks the graph; below it the
/// exact scan is faster than loading and walking the graph.
pub const GRAPH_THRESHOLD: usize = 20_000;

/// The file names hnsw_rs writes for a graph dumped under `basename`.
fn graph_files(basename: &str) -> [String; 2] {
    [
        format!("{basename}.hnsw.graph"),
        format!("{basename}.hnsw.data"),
    ]
}

/// An opened index, read-only.
pub struct Index {
    dir: PathBuf,
    manifest: Manifest,
    papers: Vec<Paper>,
    vectors: Vec<f32>,
    graph: OnceLock<Graph>,
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
        let vectors =
            store::decode_vectors(&vectors_path, &vectors, papers.len(), manifest.dimension)?;
        Ok(Index {
            dir: dir.to_path_buf(),
            manifest,
            papers,
            vectors,
            graph: OnceLock::new(),
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
    /// digits); an error lists the candidates when several match.
    pub fn resolve(&self, prefix: &str) -> Result<usize> {
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
        self.nearest(query, None, options)
    }

    /// The records nearest to the record at `row`, never the record itself.
    pub fn similar(&self, row: usize, options: &SearchOptions) -> Result<Vec<Hit>> {
        self.nearest(self.vector(row), Some(row), options)
    }

    fn nearest(
        &self,
        query: &[f32],
        exclude: Option<usize>,
        options: &SearchOptions,
    ) -> Result<Vec<Hit>> {
        if query.len() != self.manifest.dimension {
            return Err(Error::Embed(format!(
                "query vector has {} dimensions, the index {}",
                query.len(),
                self.manifest.dimension
            )));
        }
        let hits = match self.resolve_strategy(options.strategy) {
            Strategy::Graph if !self.papers.is_empty() => {
                let wanted =
                    (options.limit + usize::from(exclude.is_some())).min(self.papers.len());
                // The graph gives candidates; their scores are recomputed
                // from the stored vectors so both paths score identically.
                self.graph()?
                    .search(query, wanted)
                    .into_iter()
                    .filter(|&(row, _)| Some(row) != exclude && row < self.papers.len())
                    .map(|(row, _)| Hit {
                        row,
                        score: crate::search::dot(self.vector(row), query),
                    })
                    .collect()
            }
            _ => exact_scan(&self.vectors, self.manifest.dimension, query, exclude),
        };
        Ok(rank(hits, options))
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
