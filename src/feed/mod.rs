//! The daily feed: today's papers ranked by what a reader likes. A tag is
//! a reading profile (papers liked, papers marked not interested, kept in
//! the index's database: [`tags`]); [`select`] finds the new papers (by
//! default the [`inbox`]: those the reader has not marked);
//! [`ranker`] turns a tag's examples into a score ([`svm`] is its linear
//! classifier, [`words`] the papers' words, [`batch`] many papers' words
//! by number, [`authors`] the people the reader follows); `profile` trains
//! each tag or reads back what [`cache`] kept ([`prepare`] trains ahead,
//! after a write); [`daily`] ranks the new papers by every tag, and
//! `unranked` lists them newest first before there is any tag.
//! [`calibration`] makes a tag's scores probabilities; [`replica`] (over
//! [`tfidf`]) carries the benchmark's scikit-learn baseline exactly.

pub mod answer;
pub mod authors;
pub mod batch;
pub mod cache;
pub mod calibration;
mod classifier;
pub mod daily;
pub mod examples;
pub mod inbox;
mod profile;
pub mod ranker;
pub mod replica;
pub mod select;
pub mod svm;
pub mod tags;
pub mod tfidf;
mod unranked;
pub mod words;

pub use answer::{Because, Feed, FeedHit, FeedRequest};
pub use daily::feed;
pub use inbox::{MarkChange, Marked};
pub use profile::{prepare, WORDS_EVERY};
pub use ranker::{background_sample, ExampleWords, Examples, Learnt, Ranker, Trained, CHOSEN};
pub use select::Scope;
pub use tags::{summaries, TagChange, TagSummary};
pub use unranked::HINT as UNRANKED_HINT;
