//! papers: local semantic search over "Daily Papers" abstract dumps.
//!
//! The pipeline, one module per step: [`parse`] splits a dump into
//! abstracts, [`corpus`] walks input paths and deduplicates abstracts into
//! [`paper::Paper`]s with content-hash ids, [`embed`] turns text into
//! sentence-transformer vectors with candle, [`index`] persists records,
//! vectors, an HNSW graph and a BM25 index ([`lexical`]) atomically,
//! [`search`] ranks and fuses, and [`output`]
//! prints for people or scripts.
//!
//! ```no_run
//! use papers::corpus::Corpus;
//! use papers::embed::{source, BertEmbedder, Embedder, ModelSpec, device, DeviceChoice};
//! use papers::index::{Index, ModelStamp, Update};
//! use papers::search::SearchOptions;
//! # fn main() -> papers::Result<()> {
//! let corpus = Corpus::load(&["seeds".into()])?;
//! let files = source::resolve(&ModelSpec::default())?;
//! let model = BertEmbedder::load(&files, &device::select(DeviceChoice::Cpu)?)?;
//! let mut update = Update::new(None, &corpus);
//! let (positions, texts): (Vec<usize>, Vec<&str>) = update.pending().into_iter().unzip();
//! let vectors = model.embed(&texts, &mut |_| std::ops::ControlFlow::Continue(()))?;
//! for (position, vector) in positions.into_iter().zip(vectors) {
//!     update.set_vector(position, vector);
//! }
//! let stamp = ModelStamp {
//!     model: files.model.clone(),
//!     weights_sha256: files.weights_sha256()?,
//!     dimension: model.dimension(),
//!     max_seq_length: model.max_seq_length(),
//! };
//! update.commit("index".as_ref(), &stamp)?;
//! let index = Index::open("index".as_ref())?;
//! let query = model.embed_one("positional encoding length generalization")?;
//! for hit in index.search(&query, &SearchOptions::default())? {
//!     println!("{:.3} {}", hit.score, index.papers()[hit.row].headline());
//! }
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

pub mod corpus;
pub mod embed;
pub mod error;
pub mod evidence;
pub mod index;
pub mod lexical;
pub mod output;
pub mod paper;
pub mod parse;
pub mod search;

pub use error::{Error, Result};
