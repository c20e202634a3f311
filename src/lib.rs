//! papers: local semantic search over "Daily Papers" abstract dumps.
//!
//! The modules, from the ground up (a module uses only those above it in
//! this list; `python3 bench/imports.py` checks that no two use each other):
//!
//! - Vocabulary: [`error`], [`date`], [`digest`], [`vector`] (the one dot
//!   product), [`limits`], [`deadline`], [`paper`] (a record and its
//!   content-hash id), [`hit`] (a record's place in a ranking), [`lexical`]
//!   (how words are analysed, and the reference BM25).
//! - Reading inputs: [`input`] reads every format (dumps, JSON, JSON Lines,
//!   Parquet) into records; [`corpus`] walks input paths and deduplicates.
//! - [`embed`]: sentence-transformer vectors with candle.
//! - [`index`]: the storage: records in SQLite, vectors in memory-mapped
//!   files, HNSW graphs and BM25 segments, each generation committed
//!   atomically.
//! - The use cases: [`write`](mod@write) (index, import, remove, watch: every change
//!   to an index), [`search`] (every read command through one
//!   [`Searcher`](search::Searcher)) with [`evidence`], and [`feed`] (the
//!   daily papers ranked for a tag); [`hint`] words the commands a message
//!   suggests.
//! - The front ends: [`request`] (one request model), [`output`] (a table
//!   for people, JSON for scripts), [`mcp`] and [`serve`], and the binary.
//!
//! ```no_run
//! use papers::embed::ModelChoice;
//! use papers::write::{self, IndexRequest, Quiet};
//! use papers::search::{self, Query, SearchOptions, Searcher};
//! # fn main() -> papers::Result<()> {
//! // Index a folder of dumps: what `papers index seeds` does.
//! let dir = std::path::Path::new("index");
//! let request = IndexRequest {
//!     paths: vec!["seeds".into()],
//!     ..Default::default()
//! };
//! let report = write::index(dir, &request, &Quiet)?;
//! println!("{} records", report.records);
//!
//! // Search it: what `papers search "..."` does.
//! let options = SearchOptions::default();
//! let searcher = Searcher::open(dir, &ModelChoice::default())?;
//! let question = Query {
//!     paragraphs: search::paragraphs("positional encoding length generalization")?,
//!     options,
//!     explain: false,
//! };
//! for found in searcher.search(&question)?.found {
//!     println!("{:.3} {}", found.hit.score, found.paper.headline());
//! }
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

pub mod corpus;
pub mod date;
pub mod deadline;
pub mod digest;
pub mod embed;
pub mod error;
pub mod evidence;
pub mod feed;
pub mod hint;
pub mod hit;
pub mod id;
pub mod index;
pub mod input;
pub mod lexical;
pub mod limits;
pub mod mcp;
pub mod output;
pub mod paper;
pub mod request;
pub mod search;
pub mod serve;
pub mod turns;
pub mod vector;
pub mod write;

pub use error::{Error, Result};
