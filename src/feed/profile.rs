//! A tag made ready to rank with: its papers' vectors (and words and
//! authors, for a ranker that reads them) taken from the index, and its
//! training done, or read back from [`super::cache`] when an earlier call
//! trained the same tag on the same state of the collection. The
//! collection's sample (the weak negatives, their words or their mean word
//! vector) is read only when some tag has to be trained.

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;

use super::authors;
use super::batch::Batch;
use super::cache;
use super::ranker::{background_sample, ExampleWords, Examples, Trained, CHOSEN};
use super::tags::{gather, TagRows};
use super::words::{self, Words};
use crate::error::{Error, Result};
use crate::index::Index;
use crate::lexical::TermWeights;
use crate::paper::Paper;

/// For a ranker that reads only the collection's mean word vector (the
/// Rocchio profile), it is the mean of every this-many-th paper of the
/// background sample: reading and analysing them is the slow part of
/// training. Measured when the sample was 2,000 papers, on the feed
/// benchmark: 250 instead of 500 moved MAP by -0.0002 on the tuning
/// categories and -0.0012 held out, and took the first feed after an
/// index run from 104.7 to 98.9 ms.
pub const WORDS_EVERY: usize = 8;

/// A tag ready to rank with.
pub(super) struct Profile {
    pub name: String,
    pub liked_rows: Vec<usize>,
    pub trained: Trained,
    /// Whether this call trained it (rather than reading it back).
    pub trained_now: bool,
}

/// Trains every tag whose training is not kept yet (for this state of
/// its marks and of the collection), so that the next `papers feed` reads
/// it back: the commands that write (`index`, `tag`, `untag`, `remove`,
/// `upgrade`) call it once they have, and pay the training there rather
/// than the first feed after them. Returns how many tags were trained; an
/// index with no tag with a liked paper trains none.
pub fn prepare(index: &Index) -> Result<usize> {
    super::cache::sweep();
    let gathered = match gather(index, &[]) {
        Ok(Some(gathered)) => gathered,
        Ok(None) | Err(Error::Feed(_)) => return Ok(0),
        Err(e) => return Err(e),
    };
    // Only the tags whose training is not kept are read and trained: at
    // thousands of tags, reading back every kept one cost a write more
    // than its own work (5,000 tags: 7.6 s and 300 MB for `papers tag`).
    let keys = keys(index, &gathered.wanted, &gathered.ids);
    let stale: Vec<TagRows> = gathered
        .wanted
        .into_iter()
        .zip(&keys)
        .filter(|(_, key)| !cache::stored(key))
        .map(|(tag, _)| tag)
        .collect();
    if stale.is_empty() {
        return Ok(0);
    }
    let bm25 = &words::Memo::new(index.lexical()?);
    let profiles = profiles(index, bm25, stale, &gathered.ids, &gathered.tagged)?;
    Ok(profiles.iter().filter(|p| p.trained_now).count())
}

/// The cache key of each tag of `wanted` (`ids`: the full ids of the
/// tagged rows, which the key names).
fn keys(index: &Index, wanted: &[TagRows], ids: &HashMap<usize, String>) -> Vec<String> {
    wanted
        .iter()
        .map(|(_, liked_rows, disliked_rows)| {
            let marks: Vec<(String, bool)> = liked_rows
                .iter()
                .map(|&r| (r, true))
                .chain(disliked_rows.iter().map(|&r| (r, false)))
                .filter_map(|(r, liked)| Some((ids.get(&r)?.clone(), liked)))
                .collect();
            cache::key(index, CHOSEN.name(), &marks)
        })
        .collect()
}

/// The papers at `rows`.
pub(super) fn papers_at(index: &Index, rows: &[usize]) -> Result<Vec<Paper>> {
    rows.iter().map(|&r| index.paper(r)).collect()
}

/// Trains (or reads back) the profile of each tag of `wanted`. `ids` are
/// the full ids of the tagged rows (the cache key names them), `tagged`
/// every tagged row (none is a weak negative); `bm25` weighs the words.
pub(super) fn profiles(
    index: &Index,
    bm25: &dyn TermWeights,
    wanted: Vec<TagRows>,
    ids: &HashMap<usize, String>,
    tagged: &HashSet<usize>,
) -> Result<Vec<Profile>> {
    let reads_words = CHOSEN.reads_words();
    let each_background = CHOSEN.reads_each_background();
    let reads_authors = CHOSEN.reads_authors();
    let keys = keys(index, &wanted, ids);
    let learnt: Vec<_> = keys
        .iter()
        .map(|key| cache::load(key, index.manifest().dimension, reads_words, reads_authors))
        .collect();

    let vector = |row: usize| index.vector(row);
    let training = learnt.iter().any(Option::is_none);
    let background_rows = if training {
        let live: Vec<usize> = (0..index.rows())
            .filter(|r| index.is_live(*r) && !tagged.contains(r))
            .collect();
        background_sample(&live)
    } else {
        Vec::new()
    };
    let background: Vec<Vec<f32>> = background_rows.iter().map(|&r| vector(r)).collect();
    // The words of the sample of the collection, when a tag is trained
    // (the mean of some of them is kept for a ranker that reads only it).
    let background_key = cache::key(index, "background words", &[]);
    let mut background_words = (reads_words && training && !each_background)
        .then(|| cache::load_words(&background_key))
        .flatten();
    // The sample's words: every paper's for a ranker that reads each, else
    // every WORDS_EVERY-th for the mean (when it is not kept yet).
    let sample_rows: Vec<usize> = if !(reads_words && training) {
        Vec::new()
    } else if each_background {
        background_rows.clone()
    } else if background_words.is_none() {
        background_rows
            .iter()
            .step_by(WORDS_EVERY)
            .copied()
            .collect()
    } else {
        Vec::new()
    };
    let mut tag_rows: Vec<usize> = Vec::new();
    if reads_words || reads_authors {
        for ((_, liked_rows, disliked_rows), stored) in wanted.iter().zip(&learnt) {
            if stored.is_none() {
                tag_rows.extend(liked_rows.iter().chain(disliked_rows));
            }
        }
        tag_rows.sort_unstable();
        tag_rows.dedup();
    }
    let tag_papers = papers_at(index, &tag_rows)?;
    let authors_of: HashMap<usize, Vec<String>> = tag_rows
        .iter()
        .copied()
        .zip(tag_papers.iter().map(authors::of))
        .collect();
    let sample_papers = papers_at(index, &sample_rows)?;
    // Each paper's words numbered once for every tag, or the words whose
    // mean is kept.
    let each_background_words = each_background.then(|| Batch::analyse(None, &sample_papers, bm25));
    let sample_words = if each_background {
        Vec::new()
    } else {
        Batch::analyse(None, &sample_papers, bm25).into_words()
    };
    let words_of: HashMap<usize, Words> = if reads_words {
        tag_rows
            .iter()
            .copied()
            .zip(Batch::analyse(None, &tag_papers, bm25).into_words())
            .collect()
    } else {
        HashMap::new()
    };
    // The mean, for a ranker that reads only it.
    if !sample_rows.is_empty() && !each_background {
        let mean = words::mean(&sample_words.iter().collect::<Vec<_>>());
        cache::store_words(&background_key, &mean);
        background_words = Some(mean);
    }
    let background_words = background_words.unwrap_or_default();

    // Every tag's vectors read first (the index is read from one
    // thread), then the tags trained in parallel.
    let jobs: Vec<_> = wanted
        .into_iter()
        .zip(keys.iter().zip(learnt))
        .map(|((name, liked_rows, disliked_rows), (key, stored))| {
            let fresh = stored.is_none();
            let liked: Vec<Vec<f32>> = liked_rows.iter().map(|&r| vector(r)).collect();
            let disliked: Vec<Vec<f32>> = if fresh {
                disliked_rows.iter().map(|&r| vector(r)).collect()
            } else {
                Vec::new()
            };
            (
                name,
                liked_rows,
                disliked_rows,
                key,
                stored,
                liked,
                disliked,
            )
        })
        .collect();
    let words_of_all =
        |rows: &[usize]| -> Vec<&Words> { rows.iter().filter_map(|r| words_of.get(r)).collect() };
    let authors_of_all = |rows: &[usize]| -> Vec<&[String]> {
        rows.iter()
            .filter_map(|r| authors_of.get(r).map(Vec::as_slice))
            .collect()
    };
    let profiles = jobs
        .into_par_iter()
        .map(
            |(name, liked_rows, disliked_rows, key, stored, liked, disliked)| {
                let fresh = stored.is_none();
                let examples = Examples {
                    liked: liked.iter().map(Vec::as_slice).collect(),
                    disliked: disliked.iter().map(Vec::as_slice).collect(),
                    background: background.iter().map(Vec::as_slice).collect(),
                    words: (reads_words && fresh).then(|| ExampleWords {
                        liked: words_of_all(&liked_rows),
                        disliked: words_of_all(&disliked_rows),
                        background: &background_words,
                        each_background: each_background_words.as_ref(),
                    }),
                    authors: if reads_authors && fresh {
                        authors::tally(
                            &authors_of_all(&liked_rows),
                            &authors_of_all(&disliked_rows),
                        )
                    } else {
                        Default::default()
                    },
                };
                let learnt = stored.or_else(|| {
                    let learnt = Trained::new(CHOSEN, &examples).into_learnt();
                    if let Some(learnt) = &learnt {
                        cache::store(key, learnt);
                    }
                    learnt
                });
                let trained = Trained::with(CHOSEN, &examples, learnt);
                Profile {
                    name,
                    liked_rows,
                    trained,
                    trained_now: fresh,
                }
            },
        )
        .collect();
    Ok(profiles)
}
