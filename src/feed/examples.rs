//! A tag's examples as a ranker trains on them: the papers liked and not,
//! a sample of the collection as weak negatives, and their words and
//! authors for the rankers that read them.

use super::authors::Tally;
use super::batch::Batch;
use super::words::Words;

/// A tag's examples, as vectors.
#[derive(Default)]
pub struct Examples<'a> {
    /// Papers tagged as liked.
    pub liked: Vec<&'a [f32]>,
    /// Papers tagged as not interested.
    pub disliked: Vec<&'a [f32]>,
    /// Other papers of the collection (a sample), as weak negatives.
    pub background: Vec<&'a [f32]>,
    /// The same papers' words, for rankers that read them.
    pub words: Option<ExampleWords<'a>>,
    /// The liked papers' authors less the disliked ones', for rankers that
    /// read them.
    pub authors: Tally,
}

/// A tag's examples as word vectors.
pub struct ExampleWords<'a> {
    /// Of the liked papers.
    pub liked: Vec<&'a Words>,
    /// Of the papers marked not interested.
    pub disliked: Vec<&'a Words>,
    /// The mean of the background's (the same for every tag).
    pub background: &'a Words,
    /// Each background paper's, in the order of [`Examples::background`],
    /// as one batch (for [`super::ranker::Ranker::reads_each_background`]).
    pub each_background: Option<&'a Batch>,
}
