//! A tag made ready to rank with: its papers' vectors (and words, for a
//! ranker that reads them) taken from the index, and its training done, or
//! read back from [`super::cache`] when an earlier call trained the same
//! tag on the same state of the collection. The collection's sample (the
//! weak negatives, and its mean word vector) is read only when some tag
//! has to be trained.

use std::collections::{HashMap, HashSet};

use super::cache;
use super::ranker::{background_sample, ExampleWords, Examples, Trained, CHOSEN};
use super::words::{self, Words};
use crate::error::Result;
use crate::index::Index;
use crate::lexical::TermWeights;

/// The collection's word vector is the mean of every this-many-th paper
/// of the background sample (250 of 2,000): reading and analysing them is
/// the slow part of training. On the feed benchmark, 250 instead of 500
/// moved MAP by -0.0002 on the tuning categories and -0.0012 held out, and
/// took the first feed after an index run from 104.7 to 98.9 ms.
pub const WORDS_EVERY: usize = 8;

/// A tag's papers as rows: its name, the liked and those marked not
/// interested.
pub(super) type TagRows = (String, Vec<usize>, Vec<usize>);

/// A tag ready to rank with.
pub(super) struct Profile {
    pub name: String,
    pub liked_rows: Vec<usize>,
    pub trained: Trained,
}

/// The word vectors of the papers at `rows`.
pub(super) fn words_at(
    index: &Index,
    weights: &dyn TermWeights,
    rows: &[usize],
) -> Result<Vec<Words>> {
    let papers = rows
        .iter()
        .map(|&r| index.paper(r))
        .collect::<Result<Vec<_>>>()?;
    Ok(words::of_all(&papers, weights))
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
    let keys: Vec<String> = wanted
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
        .collect();
    let mut learnt: Vec<_> = keys
        .iter()
        .map(|key| cache::load(key, index.manifest().dimension, reads_words))
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
    // The words of every paper of the tags to train, and of the sample
    // of the collection when its mean is not kept yet, in one batch.
    let background_key = cache::key(index, "background words", &[]);
    let mut background_words = (reads_words && training)
        .then(|| cache::load_words(&background_key))
        .flatten();
    let sample_rows: Vec<usize> = if reads_words && training && background_words.is_none() {
        background_rows
            .iter()
            .step_by(WORDS_EVERY)
            .copied()
            .collect()
    } else {
        Vec::new()
    };
    let mut tag_rows: Vec<usize> = Vec::new();
    if reads_words {
        for ((_, liked_rows, disliked_rows), stored) in wanted.iter().zip(&learnt) {
            if stored.is_none() {
                tag_rows.extend(liked_rows.iter().chain(disliked_rows));
            }
        }
        tag_rows.sort_unstable();
        tag_rows.dedup();
    }
    let mut read = words_at(index, bm25, &[sample_rows.as_slice(), &tag_rows].concat())?;
    let words_of: HashMap<usize, Words> = tag_rows
        .iter()
        .copied()
        .zip(read.split_off(sample_rows.len()))
        .collect();
    if !sample_rows.is_empty() {
        let mean = words::mean(&read.iter().collect::<Vec<_>>());
        cache::store_words(&background_key, &mean);
        background_words = Some(mean);
    }
    let background_words = background_words.unwrap_or_default();

    let mut profiles = Vec::with_capacity(wanted.len());
    for ((name, liked_rows, disliked_rows), (key, stored)) in
        wanted.into_iter().zip(keys.iter().zip(learnt.iter_mut()))
    {
        let fresh = stored.is_none();
        let liked: Vec<Vec<f32>> = liked_rows.iter().map(|&r| vector(r)).collect();
        let disliked: Vec<Vec<f32>> = if fresh {
            disliked_rows.iter().map(|&r| vector(r)).collect()
        } else {
            Vec::new()
        };
        let words_of_all = |rows: &[usize]| -> Vec<&Words> {
            rows.iter().filter_map(|r| words_of.get(r)).collect()
        };
        let examples = Examples {
            liked: liked.iter().map(Vec::as_slice).collect(),
            disliked: disliked.iter().map(Vec::as_slice).collect(),
            background: background.iter().map(Vec::as_slice).collect(),
            words: (reads_words && fresh).then(|| ExampleWords {
                liked: words_of_all(&liked_rows),
                disliked: words_of_all(&disliked_rows),
                background: &background_words,
            }),
        };
        let learnt = stored.take().or_else(|| {
            let learnt = Trained::new(CHOSEN, &examples).into_learnt();
            if let Some(learnt) = &learnt {
                cache::store(key, learnt);
            }
            learnt
        });
        let trained = Trained::with(CHOSEN, &examples, learnt);
        profiles.push(Profile {
            name,
            liked_rows,
            trained,
        });
    }
    Ok(profiles)
}
