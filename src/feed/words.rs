//! A paper's words as a vector: the lexical side of a profile. Each
//! analysed term (stemmed, as BM25 sees it; one-letter terms dropped) and
//! each pair of neighbouring terms ("languag model", written with a
//! space) weighs `(1 + ln tf) * idf`, with the index's own IDF (a pair's is
//! the sum of its two terms': the index keeps no count of pairs), where a
//! title's terms count [`TITLE_WEIGHT`] times; the vector has unit length,
//! so a dot product is the TF-IDF cosine. Pairs say what single stems
//! blur ("languag model" is not "model" and "languag"): on the feed's
//! cross-validation they were worth +0.005 MAP to the classifier. On the
//! feed benchmark, adding words to the embedding's score ranks rare
//! interests better than either alone: the words a field uses ("SQL",
//! "theorem", "beamforming") say what the vectors blur.

use std::collections::HashMap;

use crate::analysis::Analysis;
use crate::lexical::TermWeights;
use crate::paper::Paper;

/// Terms and weights. Hashed with a fixed seed, so that a map is walked in
/// the same order in every process and sums over it (a vector's norm) come
/// out the same to the last bit: a profile read back from the cache ranks
/// exactly as the one just trained.
pub type Words = HashMap<String, f32, foldhash::fast::FixedState>;

/// Terms and counts.
type Counts = HashMap<String, u32, foldhash::fast::FixedState>;

/// How many times a title's terms count: on the feed benchmark, twice
/// lifted the words' share of the ranking on every variant tried (+0.009
/// to +0.011 MAP on the tuning categories, +0.002 to +0.005 held out).
pub const TITLE_WEIGHT: u32 = 2;

/// The unit TF-IDF vector of a paper's title and abstract.
pub fn of(paper: &Paper, weights: &dyn TermWeights) -> Words {
    of_text(title_of(paper), &paper.text, weights)
}

/// The unit TF-IDF vector of `title` and `text`.
pub fn of_text(title: &str, text: &str, weights: &dyn TermWeights) -> Words {
    let counts = term_counts(title, text, weights.analysis());
    weigh(counts, |t| idf_of(t, |part| weights.term_idf(part)))
}

/// The IDF of a term, or of a pair of terms (the sum of its two terms').
fn idf_of(term: &str, idf: impl Fn(&str) -> f32) -> f32 {
    match term.split_once(' ') {
        Some((a, b)) => idf(a) + idf(b),
        None => idf(term),
    }
}

/// How often each term and each pair of neighbouring terms occurs, a
/// title's [`TITLE_WEIGHT`] times.
fn term_counts(title: &str, text: &str, analysis: Analysis) -> Counts {
    // About one term and one pair per seven bytes of text: reserved, so
    // the map is not grown step by step.
    let mut counts =
        Counts::with_capacity_and_hasher((title.len() + text.len()) / 7, Default::default());
    let mut count = |term: &str, times: u32| match counts.get_mut(term) {
        Some(n) => *n += times,
        None => {
            counts.insert(term.to_string(), times);
        }
    };
    let mut previous = String::new();
    let mut pair = String::new();
    each_term(title, text, analysis, |term, times, begins| {
        count(term, times);
        if !begins {
            pair.clear();
            pair.push_str(&previous);
            pair.push(' ');
            pair.push_str(term);
            count(&pair, times);
        }
        previous.clear();
        previous.push_str(term);
    });
    counts
}

/// Calls `f(term, times, begins)` for each term of `title` and `text`
/// that counts (one-letter terms do not), in order: `times` is how often
/// it counts (a title's [`TITLE_WEIGHT`]), `begins` whether it is the
/// first of its part (no pair ends there).
pub(super) fn each_term(
    title: &str,
    text: &str,
    analysis: Analysis,
    mut f: impl FnMut(&str, u32, bool),
) {
    for (part, times) in [(title, TITLE_WEIGHT), (text, 1)] {
        let mut begins = true;
        analysis.each_term(part, |term| {
            if term.chars().nth(1).is_none() {
                return;
            }
            f(term, times, begins);
            begins = false;
        });
    }
}

/// A paper's title, or nothing.
pub(super) fn title_of(paper: &Paper) -> &str {
    paper.meta.as_ref().map_or("", |m| m.title.as_str())
}

/// Term counts as a unit vector of `(1 + ln tf) * idf`.
fn weigh(counts: Counts, idf: impl Fn(&str) -> f32) -> Words {
    let mut words = Words::with_capacity_and_hasher(counts.len(), Default::default());
    words.extend(
        counts
            .into_iter()
            .map(|(term, tf)| {
                let w = (1.0 + (tf as f32).ln()) * idf(&term);
                (term, w)
            })
            .filter(|(_, w)| *w > 0.0),
    );
    let norm = words.values().map(|w| w * w).sum::<f32>().sqrt();
    if norm > 0.0 {
        words.values_mut().for_each(|w| *w /= norm);
    }
    words
}

/// [`TermWeights`] that remember each term's IDF: one feed reads the
/// words of the new papers, the tags' papers and the collection's sample,
/// which share most terms, and a lookup searches every lexical segment.
pub struct Memo<'a> {
    weights: &'a dyn TermWeights,
    seen: std::cell::RefCell<HashMap<String, f32, foldhash::fast::FixedState>>,
}

impl<'a> Memo<'a> {
    /// Remembers what `weights` answer.
    pub fn new(weights: &'a dyn TermWeights) -> Memo<'a> {
        Memo {
            weights,
            seen: Default::default(),
        }
    }
}

impl TermWeights for Memo<'_> {
    fn analysis(&self) -> Analysis {
        self.weights.analysis()
    }

    fn term_idf(&self, term: &str) -> f32 {
        if let Some(idf) = self.seen.borrow().get(term) {
            return *idf;
        }
        let idf = self.weights.term_idf(term);
        self.seen.borrow_mut().insert(term.to_string(), idf);
        idf
    }
}

/// The mean of `vectors`.
pub fn mean(vectors: &[&Words]) -> Words {
    let mut sum = Words::default();
    for v in vectors {
        add(&mut sum, v, 1.0);
    }
    let n = vectors.len().max(1) as f32;
    sum.values_mut().for_each(|w| *w /= n);
    sum
}

/// `a + scale * b`, in place.
pub fn add(a: &mut Words, b: &Words, scale: f32) {
    for (t, w) in b {
        match a.get_mut(t) {
            Some(x) => *x += scale * w,
            None => {
                a.insert(t.clone(), scale * w);
            }
        }
    }
}

/// The dot product.
pub fn dot(a: &Words, b: &Words) -> f32 {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    small
        .iter()
        .filter_map(|(t, w)| large.get(t).map(|v| w * v))
        .sum()
}
