//! papers: local semantic search over "Daily Papers" abstract dumps.
//!
//! The pipeline, one module per step: [`input`] reads every input format
//! (dumps, JSON, JSON Lines, Parquet) into records, [`corpus`] walks input paths and deduplicates abstracts into
//! [`paper::Paper`]s with content-hash ids, [`embed`] turns text into
//! sentence-transformer vectors with candle, [`index`] persists records,
//! vectors, HNSW graphs and BM25 segments (their words analysed by
//! [`lexical`]) atomically,
//! [`search`] answers every read command through one
//! [`Searcher`](search::Searcher), and [`output`] prints for people or
//! scripts. The use cases built from these steps, which the binary, the
//! servers, the benchmarks and this example share, are [`indexing`] (index
//! paths, remove records) and [`search::Searcher`] (answer a search).
//!
//! ```no_run
//! use papers::embed::ModelChoice;
//! use papers::indexing::{self, IndexRequest, Quiet};
//! use papers::search::{self, Query, SearchOptions, Searcher};
//! # fn main() -> papers::Result<()> {
//! // Index a folder of dumps: what `papers index seeds` does.
//! let dir = std::path::Path::new("index");
//! let request = IndexRequest {
//!     paths: vec!["seeds".into()],
//!     ..Default::default()
//! };
//! let report = indexing::index(dir, &request, &Quiet)?;
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
pub mod embed;
pub mod error;
pub mod evidence;
pub mod feed;
pub mod import;
pub mod index;
pub mod indexing;
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
pub mod watch;
pub mod writer;

pub use error::{Error, Result};
