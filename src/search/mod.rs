//! The read side, as one library object: [`Searcher`] answers every read
//! command (`search`, `similar`, `show`, `list`, `info`, `dupes`) and
//! returns hits with their records attached, for the CLI, the HTTP server
//! and the MCP server alike.
//!
//! The steps, one module each: [`options`] (what a search asks for),
//! [`candidates`] (a query vector's candidates by strategy, and the
//! windows), [`retrieve`] (a text query's rankings and their fusion;
//! `similar`),
//! [`rank`](fn@rank) (the order every list is given in: score descending, then row
//! ascending, so ties are broken the same way on every run), [`filters`]
//! (the rows a search's filters allow, or why none), [`answer`]
//! (a text query's paragraphs, evidence sentences), [`dupes`] (near
//! duplicates) and [`found`] (the results). [`crate::index`] is storage.

pub mod answer;
pub mod candidates;
pub mod dupes;
pub mod filters;
pub mod found;
pub mod options;
pub mod rank;
pub mod relevance;
pub mod retrieve;
mod searcher;
pub mod spelling;
pub mod syntax;
pub mod verdict;

pub use answer::{paragraphs, Query};
pub use candidates::{resolve_strategy, strategy_for, QUANTIZED_FROM};
pub use dupes::{near_duplicates, Dupe};
pub use found::{Annotations, Found, Info, Pair, Results, Sort};
pub use options::{DateRange, Mode, Scope, SearchOptions, Strategy};
pub use rank::{
    combine, exact_scan, keep_best, rank, top_k, top_k_chunks, Decision, Hit, Measures, Ranked,
    Ranking,
};
pub use retrieve::{search_text, similar, similar_to_set};
pub use searcher::Searcher;
pub use verdict::Verdict;
