//! The writing use cases: everything that changes an index goes through
//! here, under the writer lock, and ends in one commit of a new
//! generation (see [`crate::index`] for the storage and its guarantees).
//!
//! - [`index()`]: `papers index PATH...`: read the inputs, merge into what
//!   is indexed, embed what is new, commit.
//! - [`import()`]: `papers index --embeddings`: records whose vectors were
//!   made elsewhere, checked and stored.
//! - [`remove()`], [`unremove`], [`drop_superseded`]: `papers remove` and
//!   what `papers watch` drops when an input changes.
//! - [`upgrade`]: an index of the previous format brought to this one.
//! - [`watch`]: which inputs of a folder are ready to be indexed.
//!
//! What they share ([`request`]): what is asked ([`IndexRequest`]), who
//! hears about it ([`Observer`]), and the lock. The binary, the servers,
//! the benchmarks and the library example all call these functions, so they
//! all build the same index.

pub mod import;
pub mod index;
pub mod mark;
pub mod remove;
pub mod request;
pub mod tag;
pub mod watch;

pub use import::import;
pub use index::{embed_pending, index, upgrade};
pub use mark::mark;
pub use remove::{
    drop_superseded, from_sources, remove, remove_sources, resolve_all, unremove, FromSources,
};
pub use request::{
    begin_existing, open_for_writing, IndexRequest, Observer, Pipeline, Quiet, VERIFY_COSINE,
    VERIFY_SAMPLE,
};
pub use tag::{answer, tag, untag};
