//! papers: local semantic search over "Daily Papers" abstract dumps.
//!
//! The modules, in layers from the ground up, are mapped once in the
//! design document (`docs/design.md`, "Module map"): the vocabulary
//! ([`error`], [`paper`], [`hit`], [`vector`], ...), the inputs ([`input`],
//! [`corpus`]), the model ([`embed`]), the storage ([`index`]), the use
//! cases ([`write`](mod@write) for every change to an index,
//! [`search`] for every read through one [`Searcher`](search::Searcher),
//! [`feed`]) and the front ends ([`request`], [`output`], [`mcp`],
//! [`serve`]).
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

pub mod analysis;
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
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod output;
pub mod paper;
pub mod request;
pub mod search;
#[cfg(feature = "serve")]
pub mod serve;
#[cfg(feature = "mcp")]
pub mod turns;
pub mod vector;
pub mod verdict;
pub mod write;

pub use error::{Error, Result};
