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
    let title = paper.meta.as_ref().map_or("", |m| m.title.as_str());
    of_text(title, &paper.text, weights)
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
    for (part, times) in [(title, TITLE_WEIGHT), (text, 1)] {
        let mut previous = String::new();
        let mut pair = String::new();
        analysis.each_term(part, |term| {
            if term.chars().nth(1).is_none() {
                return;
            }
            count(term, times);
            if !previous.is_empty() {
                pair.clear();
                pair.push_str(&previous);
                pair.push(' ');
                pair.push_str(term);
                count(&pair, times);
            }
            previous.clear();
            previous.push_str(term);
        });
    }
    counts
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

/// The unit TF-IDF vectors of many papers: the texts are analysed in
/// parallel, and each distinct term's IDF is looked up once (a lookup
/// searches every lexical segment's dictionary, and a day's papers share
/// most of their words).
pub fn of_all(papers: &[Paper], weights: &dyn TermWeights) -> Vec<Words> {
    use rayon::prelude::*;
    let analysis = weights.analysis();
    let counts: Vec<Counts> = papers
        .par_iter()
        .map(|paper| {
            let title = paper.meta.as_ref().map_or("", |m| m.title.as_str());
            term_counts(title, &paper.text, analysis)
        })
        .collect();
    let mut idf: HashMap<String, f32, foldhash::fast::FixedState> = HashMap::default();
    for term in counts.iter().flat_map(Counts::keys) {
        if !term.contains(' ') && !idf.contains_key(term) {
            idf.insert(term.clone(), weights.term_idf(term));
        }
    }
    counts
        .into_iter()
        .map(|c| {
            weigh(c, |t| {
                idf_of(t, |part| idf.get(part).copied().unwrap_or(0.0))
            })
        })
        .collect()
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

/// Many papers' words over one vocabulary, to be scored against many
/// directions: a direction is laid out once over the batch's terms, then
/// each paper's dot product is a short sum (looking every paper's terms
/// up in each direction's map cost most of a feed's time). Also the
/// sparse features of a classifier's training ([`super::svm`]): a batch
/// can be numbered [`Batch::after`] another, so that the collection's
/// sample is numbered once for every tag.
pub struct Batch {
    /// The terms this batch numbered, from `first` on.
    terms: HashMap<String, u32, foldhash::fast::FixedState>,
    /// How many terms the batch it was numbered after has.
    first: u32,
    papers: Vec<Vec<(u32, f32)>>,
}

impl Batch {
    /// The batch of `words`, in order.
    pub fn new(words: &[Words]) -> Batch {
        Batch::of(&words.iter().collect::<Vec<_>>())
    }

    /// [`Batch::new`] of borrowed word vectors.
    pub fn of(words: &[&Words]) -> Batch {
        Batch::after(None, words)
    }

    /// The batch of `words` numbered after `shared`: a term `shared` has
    /// keeps its number, the others are numbered from `shared`'s
    /// [`Batch::terms`] on. Such a batch is for [`Batch::to_words`] with
    /// `shared`, not for [`Batch::dots`].
    pub fn after(shared: Option<&Batch>, words: &[&Words]) -> Batch {
        let first = shared.map_or(0, |s| s.first + s.terms.len() as u32);
        let mut terms: HashMap<String, u32, foldhash::fast::FixedState> = HashMap::default();
        // Each paper's terms by number, numbers given in order of first
        // sight: a paper's sum is added up in an order that depends only
        // on the batch, so a profile read back from the cache scores
        // exactly as the one just trained (a word vector is walked in the
        // same order in every process: its map's hashing is seeded).
        let papers = words
            .iter()
            .map(|w| {
                let mut entries: Vec<(u32, f32)> = w
                    .iter()
                    .map(|(t, &x)| {
                        if let Some(&i) = shared.and_then(|s| s.terms.get(t)) {
                            return (i, x);
                        }
                        match terms.get(t) {
                            Some(&i) => (i, x),
                            None => {
                                let next = first + terms.len() as u32;
                                terms.insert(t.clone(), next);
                                (next, x)
                            }
                        }
                    })
                    .collect();
                entries.sort_unstable_by_key(|e| e.0);
                entries
            })
            .collect();
        Batch {
            terms,
            first,
            papers,
        }
    }

    /// The `i`th paper's words: (term number, weight), by number.
    pub fn row(&self, i: usize) -> &[(u32, f32)] {
        &self.papers[i]
    }

    /// How many term numbers there are: this batch's and those of the
    /// batch it was numbered after.
    pub fn terms(&self) -> usize {
        self.first as usize + self.terms.len()
    }

    /// Weights by term number (over `batches`, each numbered after the one
    /// before it) as a word vector, keeping the `keep` largest in
    /// magnitude (ties by term, so the same weights always give the same
    /// vector) and no zero.
    pub fn to_words(batches: &[&Batch], weights: &[f32], keep: usize) -> Words {
        let mut all: Vec<(&String, f32)> = batches
            .iter()
            .flat_map(|b| b.terms.iter())
            .map(|(t, &i)| (t, weights[i as usize]))
            .filter(|(_, w)| *w != 0.0)
            .collect();
        let order = |a: &(&String, f32), b: &(&String, f32)| {
            b.1.abs().total_cmp(&a.1.abs()).then_with(|| a.0.cmp(b.0))
        };
        if all.len() > keep {
            all.select_nth_unstable_by(keep, order);
            all.truncate(keep);
        }
        all.into_iter().map(|(t, w)| (t.clone(), w)).collect()
    }

    /// How many papers.
    pub fn len(&self) -> usize {
        self.papers.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.papers.is_empty()
    }

    /// Each paper's dot product with `direction`.
    pub fn dots(&self, direction: &Words) -> Vec<f32> {
        debug_assert_eq!(self.first, 0, "a batch numbered after another");
        let mut dense = vec![0f32; self.terms.len()];
        if direction.len() < self.terms.len() {
            for (t, &x) in direction {
                if let Some(&i) = self.terms.get(t) {
                    dense[i as usize] = x;
                }
            }
        } else {
            for (t, &i) in &self.terms {
                dense[i as usize] = direction.get(t).copied().unwrap_or(0.0);
            }
        }
        self.papers
            .iter()
            .map(|p| p.iter().map(|&(i, x)| dense[i as usize] * x).sum())
            .collect()
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
