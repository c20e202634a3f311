//! Many papers' words numbered over one vocabulary, to be scored against
//! many directions or learnt from: a direction is laid out once over the
//! batch's numbers, then each paper's dot product is a short sum (looking
//! every paper's terms up in each direction's map cost most of a feed's
//! time). Also the sparse features of a classifier's training
//! ([`super::svm`]): a batch can be numbered [`Batch::after`] another, so
//! that the collection's sample is numbered once for every tag.
//!
//! A pair of terms is numbered by its two terms' numbers, not by a string:
//! [`Batch::analyse`] reads papers straight into numbers, making a string
//! only for each distinct term, not for each term and pair of each paper
//! as [`super::words::of`] does (a day of 300 abstracts: about 10 ms
//! instead of 50). Its weights are [`super::words::of`]'s.

use std::collections::HashMap;

use foldhash::fast::FixedState;
use rayon::prelude::*;

use super::words::{self, Words};
use crate::analysis::Analysis;
use crate::lexical::TermWeights;
use crate::paper::Paper;

/// Numbers by key, hashed with a fixed seed.
type Numbers<K> = HashMap<K, u32, FixedState>;

/// A paper's words: (number, weight), by number.
type Row = Vec<(u32, f32)>;

/// The second term of an entry that is a single term.
const SINGLE: u32 = u32::MAX;

/// Papers' words by number.
pub struct Batch {
    /// The terms this batch numbered.
    terms: Numbers<String>,
    /// The pairs this batch numbered, by their two terms' numbers.
    pairs: Numbers<(u32, u32)>,
    /// The first number this batch gave: the count of the batch it was
    /// numbered after.
    first: u32,
    /// The next number to give.
    next: u32,
    papers: Vec<Row>,
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

    /// The batch of `words` numbered after `shared` (itself numbered
    /// after none): a term or pair `shared` has keeps its number, the
    /// others are numbered from `shared`'s [`Batch::terms`] on. Such a
    /// batch is for [`Batch::to_words`] with `shared`, not for
    /// [`Batch::dots`].
    pub fn after(shared: Option<&Batch>, words: &[&Words]) -> Batch {
        let mut batch = Batch::empty(shared);
        // Numbers are given in order of first sight: a paper's sum is
        // added up in an order that depends only on the batch, so a
        // profile read back from the cache scores exactly as the one just
        // trained (a word vector is walked in the same order in every
        // process: its map's hashing is seeded).
        let papers = words
            .iter()
            .map(|w| {
                let mut row: Row = w
                    .iter()
                    .map(|(t, &x)| (batch.number(shared, t), x))
                    .collect();
                row.sort_unstable_by_key(|e| e.0);
                row
            })
            .collect();
        batch.papers = papers;
        batch
    }

    /// The words of `papers`, weighed as [`super::words::of`] weighs them
    /// (with `weights`' IDF) and numbered after `shared` as
    /// [`Batch::after`] numbers: the texts are analysed in parallel, then
    /// numbered in order, each distinct term's IDF looked up once.
    pub fn analyse(shared: Option<&Batch>, papers: &[Paper], weights: &dyn TermWeights) -> Batch {
        let analysis = weights.analysis();
        let tokens: Vec<Tokens> = papers.par_iter().map(|p| Tokens::of(p, analysis)).collect();
        let mut batch = Batch::empty(shared);
        // Each paper's entries: (number, its term, the pair's second term
        // or SINGLE, times counted), merged by number.
        let mut counted: Vec<Vec<(u32, u32, u32, u32)>> = Vec::with_capacity(papers.len());
        let mut spelt: HashMap<u32, &str, FixedState> = HashMap::default();
        for t in &tokens {
            let mut entries = Vec::with_capacity(2 * t.spans.len());
            let (mut start, mut previous) = (0, SINGLE);
            for &(end, times, begins) in &t.spans {
                let term = &t.text[start..end as usize];
                start = end as usize;
                let a = batch.single(shared, term);
                spelt.entry(a).or_insert(term);
                entries.push((a, a, SINGLE, times));
                if !begins {
                    entries.push((batch.pair(shared, previous, a), previous, a, times));
                }
                previous = a;
            }
            entries.sort_unstable_by_key(|e| e.0);
            entries.dedup_by(|later, kept| {
                let same = later.0 == kept.0;
                if same {
                    kept.3 += later.3;
                }
                same
            });
            counted.push(entries);
        }
        // In the terms' order, so that neighbouring lookups read the same
        // part of the index's sorted term tables.
        let mut lookups: Vec<(&str, u32)> = spelt.into_iter().map(|(n, t)| (t, n)).collect();
        lookups.sort_unstable();
        let idf: HashMap<u32, f32, FixedState> = lookups
            .into_iter()
            .map(|(t, n)| (n, weights.term_idf(t)))
            .collect();
        batch.papers = counted
            .into_par_iter()
            .map(|entries| weigh(&entries, &idf))
            .collect();
        batch
    }

    fn empty(shared: Option<&Batch>) -> Batch {
        let first = shared.map_or(0, |s| s.next);
        Batch {
            terms: Numbers::default(),
            pairs: Numbers::default(),
            first,
            next: first,
            papers: Vec::new(),
        }
    }

    /// The number of `term` (a pair is two terms and a space), given one
    /// when neither `shared` nor this batch has it.
    fn number(&mut self, shared: Option<&Batch>, term: &str) -> u32 {
        match term.split_once(' ') {
            Some((a, b)) => {
                let (a, b) = (self.single(shared, a), self.single(shared, b));
                self.pair(shared, a, b)
            }
            None => self.single(shared, term),
        }
    }

    fn single(&mut self, shared: Option<&Batch>, term: &str) -> u32 {
        if let Some(&i) = shared.and_then(|s| s.terms.get(term)) {
            return i;
        }
        if let Some(&i) = self.terms.get(term) {
            return i;
        }
        let i = self.give();
        self.terms.insert(term.to_string(), i);
        i
    }

    fn pair(&mut self, shared: Option<&Batch>, a: u32, b: u32) -> u32 {
        if let Some(&i) = shared.and_then(|s| s.pairs.get(&(a, b))) {
            return i;
        }
        let next = self.next;
        let i = *self.pairs.entry((a, b)).or_insert(next);
        if i == next {
            self.give();
        }
        i
    }

    fn give(&mut self) -> u32 {
        self.next += 1;
        self.next - 1
    }

    /// The number of `term` in this batch, if it has one.
    fn find(&self, term: &str) -> Option<u32> {
        match term.split_once(' ') {
            Some((a, b)) => {
                let key = (*self.terms.get(a)?, *self.terms.get(b)?);
                self.pairs.get(&key).copied()
            }
            None => self.terms.get(term).copied(),
        }
    }

    /// The `i`th paper's words: (number, weight), by number.
    pub fn row(&self, i: usize) -> &[(u32, f32)] {
        &self.papers[i]
    }

    /// How many numbers there are: this batch's and those of the batch it
    /// was numbered after.
    pub fn terms(&self) -> usize {
        self.next as usize
    }

    /// Weights by number (over `batches`, each numbered after the one
    /// before it) as a word vector, keeping the `keep` largest in
    /// magnitude (ties by number, so the same weights always give the same
    /// vector) and no zero.
    pub fn to_words(batches: &[&Batch], weights: &[f32], keep: usize) -> Words {
        let weight = |i: u32| weights.get(i as usize).copied().unwrap_or(0.0);
        let mut all: Vec<(u32, f32)> = batches
            .iter()
            .flat_map(|b| b.terms.values().chain(b.pairs.values()))
            .map(|&i| (i, weight(i)))
            .filter(|(_, w)| *w != 0.0)
            .collect();
        let order =
            |a: &(u32, f32), b: &(u32, f32)| b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(&b.0));
        if all.len() > keep {
            all.select_nth_unstable_by(keep, order);
            all.truncate(keep);
        }
        // Spelt out only for the weights kept.
        let kept: HashMap<u32, f32, FixedState> = all.into_iter().collect();
        let spelt: HashMap<u32, &str, FixedState> = batches
            .iter()
            .flat_map(|b| b.terms.iter())
            .map(|(t, &i)| (i, t.as_str()))
            .collect();
        let mut words = Words::with_capacity_and_hasher(kept.len(), Default::default());
        for b in batches {
            for (t, i) in &b.terms {
                if let Some(&w) = kept.get(i) {
                    words.insert(t.clone(), w);
                }
            }
            for ((x, y), i) in &b.pairs {
                if let (Some(&w), Some(x), Some(y)) = (kept.get(i), spelt.get(x), spelt.get(y)) {
                    words.insert(format!("{x} {y}"), w);
                }
            }
        }
        words
    }

    /// Each paper's words as a word vector, the terms spelt out (a pair
    /// as its two terms and a space): [`Batch::analyse`]'s papers as
    /// [`super::words::of`] gives them, for a batch numbered after none.
    pub fn into_words(self) -> Vec<Words> {
        debug_assert_eq!(self.first, 0, "a batch numbered after another");
        let mut names = vec![String::new(); self.next as usize];
        for (t, &i) in &self.terms {
            names[i as usize].clone_from(t);
        }
        for (&(a, b), &i) in &self.pairs {
            names[i as usize] = format!("{} {}", names[a as usize], names[b as usize]);
        }
        self.papers
            .iter()
            .map(|row| {
                row.iter()
                    .map(|&(i, w)| (names[i as usize].clone(), w))
                    .collect()
            })
            .collect()
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
        let mut dense = vec![0f32; self.next as usize];
        for (t, &x) in direction {
            if let Some(i) = self.find(t) {
                dense[i as usize] = x;
            }
        }
        self.papers
            .iter()
            .map(|p| p.iter().map(|&(i, x)| dense[i as usize] * x).sum())
            .collect()
    }
}

/// A paper's counted terms, in order: their text one after another, and
/// for each where it ends, how often it counts and whether it begins a
/// part ([`words::each_term`]).
struct Tokens {
    text: String,
    spans: Vec<(u32, u32, bool)>,
}

impl Tokens {
    fn of(paper: &Paper, analysis: Analysis) -> Tokens {
        let title = words::title_of(paper);
        let mut tokens = Tokens {
            text: String::with_capacity(title.len() + paper.text.len()),
            spans: Vec::with_capacity((title.len() + paper.text.len()) / 7),
        };
        words::each_term(title, &paper.text, analysis, |term, times, begins| {
            tokens.text.push_str(term);
            tokens.spans.push((tokens.text.len() as u32, times, begins));
        });
        tokens
    }
}

/// Counted entries as a unit vector of `(1 + ln tf) * idf`, a pair's IDF
/// the sum of its two terms'.
fn weigh(entries: &[(u32, u32, u32, u32)], idf: &HashMap<u32, f32, FixedState>) -> Row {
    let idf = |n: u32| idf.get(&n).copied().unwrap_or(0.0);
    let mut row: Row = entries
        .iter()
        .map(|&(n, a, b, tf)| {
            let idf = if b == SINGLE { idf(a) } else { idf(a) + idf(b) };
            (n, (1.0 + (tf as f32).ln()) * idf)
        })
        .filter(|(_, w)| *w > 0.0)
        .collect();
    let norm = row.iter().map(|(_, w)| w * w).sum::<f32>().sqrt();
    if norm > 0.0 {
        row.iter_mut().for_each(|(_, w)| *w /= norm);
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexical::Bm25;
    use crate::paper::{Meta, Source};

    const TEXTS: [(&str, &str); 4] = [
        (
            "Sparse attention for long context",
            "We make attention sparse. Sparse attention reads a long context in a fraction \
             of the time, and a long context is what language models need.",
        ),
        (
            "",
            "Language models learn SQL: a language model writes SQL queries.",
        ),
        (
            "Diffusion for images",
            "A diffusion model draws images; diffusion is slow, so we distil it.",
        ),
        (
            "Queries",
            "SQL queries over long tables, answered by a language model.",
        ),
    ];

    fn papers() -> Vec<Paper> {
        TEXTS
            .iter()
            .map(|(title, text)| {
                let source = Source {
                    file: "d.txt".into(),
                    path: "d.txt".into(),
                    paragraph: 1,
                };
                let mut paper = Paper::new(text.to_string(), source);
                if !title.is_empty() {
                    paper.meta = Some(Meta {
                        title: title.to_string(),
                        ..Meta::default()
                    });
                }
                paper
            })
            .collect()
    }

    /// A row of `batches` as a word vector, by [`Batch::to_words`].
    fn words_of(batches: &[&Batch], row: &[(u32, f32)]) -> Words {
        let mut weights = vec![0f32; batches.last().unwrap().terms()];
        for &(i, w) in row {
            weights[i as usize] = w;
        }
        Batch::to_words(batches, &weights, usize::MAX)
    }

    fn assert_close(a: &Words, b: &Words) {
        assert_eq!(a.len(), b.len(), "{a:?} against {b:?}");
        for (t, w) in a {
            let v = b.get(t).unwrap_or_else(|| panic!("{t} missing from {b:?}"));
            assert!((w - v).abs() < 1e-6, "{t}: {w} against {v}");
        }
    }

    #[test]
    fn analysed_papers_weigh_their_words_and_pairs_as_each_papers_own_vector() {
        let papers = papers();
        let bm25 = Bm25::build(TEXTS.iter().map(|(_, text)| *text));
        let batch = Batch::analyse(None, &papers, &bm25);
        assert_eq!(batch.len(), papers.len());
        for (i, paper) in papers.iter().enumerate() {
            let own = words::of(paper, &bm25);
            assert!(own.keys().any(|t| t.contains(' ')), "pairs are words");
            assert_close(&words_of(&[&batch], batch.row(i)), &own);
            // A paper's vector against itself: 1.
            assert!((batch.dots(&own)[i] - 1.0).abs() < 1e-5);
        }
        // Spelt back whole, the same vectors.
        for (spelt, paper) in Batch::analyse(None, &papers, &bm25)
            .into_words()
            .iter()
            .zip(&papers)
        {
            assert_close(spelt, &words::of(paper, &bm25));
        }
        // The same dot products as a batch of the papers' own vectors.
        let own: Vec<Words> = papers.iter().map(|p| words::of(p, &bm25)).collect();
        let direction = words::of(&papers[3], &bm25);
        for (a, b) in batch
            .dots(&direction)
            .iter()
            .zip(Batch::new(&own).dots(&direction))
        {
            assert!((a - b).abs() < 1e-6, "{a} against {b}");
        }
    }

    #[test]
    fn a_batch_numbered_after_another_keeps_its_numbers() {
        let papers = papers();
        let bm25 = Bm25::build(TEXTS.iter().map(|(_, text)| *text));
        let sample = Batch::analyse(None, &papers[..2], &bm25);
        let last = words::of(&papers[3], &bm25);
        let own = Batch::after(Some(&sample), &[&last]);
        assert!(own.terms() > sample.terms(), "new words get new numbers");
        // "sql queri" and "languag model" are the sample's pairs too.
        let shared = own
            .row(0)
            .iter()
            .filter(|(i, _)| (*i as usize) < sample.terms())
            .count();
        assert!(shared >= 4, "{shared} numbers shared");
        assert_close(&words_of(&[&sample, &own], own.row(0)), &last);
        // And analysed after it, the same.
        let analysed = Batch::analyse(Some(&sample), &papers[3..], &bm25);
        assert_eq!(analysed.terms(), own.terms());
        assert_close(&words_of(&[&sample, &analysed], analysed.row(0)), &last);
    }
}
