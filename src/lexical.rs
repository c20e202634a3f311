//! Lexical retrieval: Okapi BM25 over the words of the abstracts, stored
//! beside the vectors. Dense vectors blur exact terms (acronyms, method
//! names) and see only the first 256 word pieces; BM25 sees every word.
//!
//! Words are runs of letters and digits, lower-cased, with common English
//! function words dropped and the rest reduced to their Snowball English
//! stem (`models` → `model`, `generalization` → `general`). The index
//! records which analysis built it, and queries go through the same one:
//! indexes from before stemming ([`Analysis::Fold`]) keep answering as they
//! were built until the next `papers index` rewrites them.
//!
//! A hand-written BM25 rather than tantivy: the corpus is thousands of short
//! records that are rewritten whole on every index update, so a term →
//! postings map serialised with serde is all the index needs, and it keeps
//! the build free of a second search engine.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::hit::Hit;

/// How words become terms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Analysis {
    /// Lower-cased, with a light plural fold (format 2 before stemming).
    #[default]
    Fold,
    /// Lower-cased and reduced to the Snowball English stem.
    Stem,
}

impl Analysis {
    /// What new indexes are built with. On SciFact's 809 train claims
    /// stemming lifts BM25's nDCG@10 over the plural fold
    /// (`cargo bench --bench beir -- tune`).
    pub const CURRENT: Analysis = Analysis::Stem;

    /// The analysed form of a single word, or `None` for a stopword.
    pub fn term(self, word: &str) -> Option<String> {
        match self {
            Analysis::Fold => {
                let lower = word.to_lowercase();
                (!is_stopword(&lower)).then(|| fold(&lower))
            }
            Analysis::Stem => stem(word),
        }
    }

    /// The analysed terms of `text`, in order, repeats kept.
    pub fn terms(self, text: &str) -> Vec<String> {
        let mut terms = Vec::new();
        self.each_term(text, |t| terms.push(t.to_string()));
        terms
    }

    /// The distinct analysed terms of `text`, sorted: what a query is
    /// scored by.
    pub fn distinct_terms(self, text: &str) -> Vec<String> {
        let mut terms = self.terms(text);
        terms.sort();
        terms.dedup();
        terms
    }

    /// Calls `f` with each analysed term of `text`, in order, repeats
    /// kept, without making a string of each (what counting terms needs).
    pub fn each_term(self, text: &str, mut f: impl FnMut(&str)) {
        for (s, e) in word_spans(text) {
            match self {
                Analysis::Fold => {
                    if let Some(term) = self.term(&text[s..e]) {
                        f(&term);
                    }
                }
                Analysis::Stem => with_stem(&text[s..e], |term| {
                    if let Some(term) = term {
                        f(term);
                    }
                }),
            }
        }
    }
}

/// BM25's two constants.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Term-frequency saturation.
    pub k1: f32,
    /// Length normalisation.
    pub b: f32,
}

impl Default for Params {
    /// Chosen on SciFact's train claims (`cargo bench --bench beir -- tune`).
    fn default() -> Self {
        Params { k1: 1.2, b: 0.75 }
    }
}

/// Words too common to say anything about an abstract.
const STOPWORDS: &[&str] = &[
    "a", "about", "across", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be",
    "been", "being", "between", "both", "but", "by", "can", "could", "do", "does", "each", "for",
    "from", "had", "has", "have", "how", "however", "i", "if", "in", "into", "is", "it", "its",
    "may", "more", "most", "much", "not", "of", "on", "one", "only", "or", "other", "our", "over",
    "paper", "such", "than", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "those", "through", "to", "under", "up", "us", "via", "was", "we", "were", "what",
    "when", "where", "which", "while", "who", "whose", "why", "will", "with", "within", "without",
    "would", "you",
];

/// Folds simple English plurals so `models` matches `model`. Short words,
/// and endings that are not plurals (`-ss`, `-us`, `-is`), are kept.
fn fold(word: &str) -> String {
    if word.len() <= 3 || !word.is_ascii() {
        return word.to_string();
    }
    if let Some(stem) = word.strip_suffix("ies") {
        return format!("{stem}y");
    }
    if word.ends_with("ss") || word.ends_with("us") || word.ends_with("is") {
        return word.to_string();
    }
    word.strip_suffix('s').unwrap_or(word).to_string()
}

/// Whether a lower-cased word is a stopword.
fn is_stopword(lower: &str) -> bool {
    lower.len() <= STOPWORD_MAX && STOPWORDS.binary_search(&lower).is_ok()
}

/// The longest stopword, in bytes.
const STOPWORD_MAX: usize = 7;

/// The Snowball English stem of a word, lower-cased, or `None` for a
/// stopword. Words with digits or non-ASCII letters are kept as they are
/// (`gpt4`, `β`), lower-cased.
fn stem(word: &str) -> Option<String> {
    with_stem(word, |stem| stem.map(str::to_string))
}

/// Calls `f` with [`stem`]'s answer for `word`, borrowed from the memo.
fn with_stem<R>(word: &str, f: impl FnOnce(Option<&str>) -> R) -> R {
    use std::sync::OnceLock;
    static STEMMER: OnceLock<rust_stemmers::Stemmer> = OnceLock::new();
    // Words follow Zipf's law: a per-thread memo of the words seen, as
    // written, answers most of them without lower-casing, the stopword
    // search or the stemmer (profiled on 20,000 arXiv abstracts, the
    // Snowball algorithm was a third of an --embeddings import's
    // instructions; on `papers feed` the analysis of the papers' words is
    // most of the time). Bounded: cleared whole when full.
    type Seen = std::collections::HashMap<String, Option<String>, foldhash::fast::RandomState>;
    thread_local! {
        static SEEN: std::cell::RefCell<Seen> = std::cell::RefCell::new(Seen::default());
    }
    const SEEN_MAX: usize = 1 << 18;
    SEEN.with(|seen| {
        let mut seen = seen.borrow_mut();
        if let Some(stem) = seen.get(word) {
            return f(stem.as_deref());
        }
        let lower = word.to_lowercase();
        let stem = if is_stopword(&lower) {
            None
        } else if !lower.bytes().all(|b| b.is_ascii_lowercase()) {
            Some(lower)
        } else {
            Some(
                STEMMER
                    .get_or_init(|| {
                        rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English)
                    })
                    .stem(&lower)
                    .into_owned(),
            )
        };
        if seen.len() >= SEEN_MAX {
            seen.clear();
        }
        let answer = f(stem.as_deref());
        seen.insert(word.to_string(), stem);
        answer
    })
}

/// The byte ranges of the words of `text`, before any folding.
pub fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, text.len()));
    }
    spans
}

/// The share of the shorter text's word trigrams (lower-cased, stopwords
/// kept) that the other text also contains: near 1 for revised versions of
/// one abstract, near 0 for different abstracts on one topic.
pub fn trigram_overlap(a: &str, b: &str) -> f32 {
    fn trigrams(text: &str) -> std::collections::HashSet<[String; 3]> {
        let words: Vec<String> = word_spans(text)
            .into_iter()
            .map(|(s, e)| text[s..e].to_lowercase())
            .collect();
        words
            .windows(3)
            .map(|w| [w[0].clone(), w[1].clone(), w[2].clone()])
            .collect()
    }
    let (a, b) = (trigrams(a), trigrams(b));
    let smaller = a.len().min(b.len());
    if smaller == 0 {
        return 0.0;
    }
    a.intersection(&b).count() as f32 / smaller as f32
}

/// What evidence needs from a lexical index: how it analyses words and
/// how much each term weighs.
pub trait TermWeights {
    /// How the index analyses words; queries must go through the same.
    fn analysis(&self) -> Analysis;
    /// The IDF of an analysed term, 0 when it occurs nowhere.
    fn term_idf(&self, term: &str) -> f32;
}

impl TermWeights for Bm25 {
    fn analysis(&self) -> Analysis {
        self.analysis
    }

    fn term_idf(&self, term: &str) -> f32 {
        Bm25::term_idf(self, term)
    }
}

/// A BM25 index over records in row order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Bm25 {
    /// How records and queries are analysed (absent in indexes from
    /// before stemming, which folded plurals).
    #[serde(default)]
    analysis: Analysis,
    #[serde(default)]
    params: Params,
    /// Terms in each record.
    lengths: Vec<u32>,
    /// For each term, `(row, term frequency)` pairs in row order.
    postings: BTreeMap<String, Vec<(u32, u32)>>,
}

impl Bm25 {
    /// Indexes `texts` with the current analysis and the default
    /// constants; the i-th text is row i.
    pub fn build<'a>(texts: impl IntoIterator<Item = &'a str>) -> Bm25 {
        Bm25::build_with(texts, Analysis::CURRENT, Params::default())
    }

    /// Indexes `texts` with the given analysis and constants.
    pub fn build_with<'a>(
        texts: impl IntoIterator<Item = &'a str>,
        analysis: Analysis,
        params: Params,
    ) -> Bm25 {
        let mut bm25 = Bm25 {
            analysis,
            params,
            ..Bm25::default()
        };
        for (row, text) in texts.into_iter().enumerate() {
            let terms = analysis.terms(text);
            bm25.lengths.push(terms.len() as u32);
            let mut counts: HashMap<String, u32> = HashMap::new();
            for term in terms {
                *counts.entry(term).or_insert(0) += 1;
            }
            for (term, count) in counts {
                bm25.postings
                    .entry(term)
                    .or_default()
                    .push((row as u32, count));
            }
        }
        bm25
    }

    /// How this index analyses words; queries must go through the same.
    pub fn analysis(&self) -> Analysis {
        self.analysis
    }

    /// Number of records indexed.
    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    /// Whether no records are indexed.
    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// Whether the postings agree with the record count (a check on load).
    pub fn is_consistent(&self, records: usize) -> bool {
        self.lengths.len() == records
            && self
                .postings
                .values()
                .flatten()
                .all(|&(row, tf)| (row as usize) < records && tf > 0)
    }

    /// Inverse document frequency of a term present in `df` records.
    fn idf(&self, df: usize) -> f32 {
        let n = self.lengths.len() as f32;
        let df = df as f32;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// The IDF of an analysed term, 0 when it occurs nowhere.
    pub fn term_idf(&self, term: &str) -> f32 {
        self.postings
            .get(term)
            .map_or(0.0, |postings| self.idf(postings.len()))
    }

    /// BM25 scores of every record matching at least one query term, in row
    /// order. A term repeated in the query counts once.
    pub fn score(&self, query: &str) -> Vec<Hit> {
        let mut query_terms = self.analysis.terms(query);
        query_terms.sort();
        query_terms.dedup();
        if self.lengths.is_empty() {
            return Vec::new();
        }
        let average =
            self.lengths.iter().map(|&l| l as f32).sum::<f32>() / self.lengths.len() as f32;
        let Params { k1, b } = self.params;
        let mut scores: HashMap<u32, f32> = HashMap::new();
        for term in &query_terms {
            let Some(postings) = self.postings.get(term) else {
                continue;
            };
            let idf = self.idf(postings.len());
            for &(row, tf) in postings {
                let tf = tf as f32;
                let length = self.lengths[row as usize] as f32;
                let norm = k1 * (1.0 - b + b * length / average.max(1.0));
                *scores.entry(row).or_insert(0.0) += idf * tf * (k1 + 1.0) / (tf + norm);
            }
        }
        let mut hits: Vec<Hit> = scores
            .into_iter()
            .map(|(row, score)| Hit::new(row as usize, score))
            .collect();
        hits.sort_by_key(|h| h.row);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn analysis_lowercases_stems_and_drops_stopwords() {
        let text = "The RoPE models, and their NoPE studies: GPT-4 class generalization";
        assert_eq!(
            Analysis::Stem.terms(text),
            ["rope", "model", "nope", "studi", "gpt", "4", "class", "general"]
        );
        assert_eq!(
            Analysis::Fold.terms(text),
            [
                "rope",
                "model",
                "nope",
                "study",
                "gpt",
                "4",
                "class",
                "generalization"
            ]
        );
        assert_eq!(Analysis::Stem.terms("β-VAE gpt4"), ["β", "vae", "gpt4"]);
    }

    #[test]
    fn indexes_without_an_analysis_field_fold_plurals() {
        let json = r#"{"lengths":[2],"postings":{"model":[[0,1]],"rope":[[0,1]]}}"#;
        let old: Bm25 = serde_json::from_str(json).unwrap();
        assert_eq!(old.analysis(), Analysis::Fold);
        assert_eq!(old.params, Params::default());
        assert_eq!(old.score("RoPE models").len(), 1);
    }

    #[test]
    fn trigram_overlap_separates_revisions_from_neighbours() {
        let a = "We propose a new model for dense retrieval that is fast.";
        let b = "We propose a new model for dense retrieval that is accurate.";
        let c = "Dense retrieval models are fast and accurate in practice.";
        assert!(trigram_overlap(a, b) > 0.7);
        assert!(trigram_overlap(a, c) < 0.2);
        assert_eq!(trigram_overlap("two words", a), 0.0);
    }

    #[test]
    fn rare_exact_terms_outrank_common_ones() {
        let bm25 = Bm25::build([
            "language models scale with data",
            "rotary embeddings (RoPE) extend language models",
            "language models and more language models",
        ]);
        let hits = bm25.score("RoPE language models");
        let best = hits
            .iter()
            .max_by(|a, b| a.score.total_cmp(&b.score))
            .unwrap();
        assert_eq!(best.row, 1);
        assert_eq!(hits.len(), 3);
        assert!(bm25.score("nothing matches this").is_empty());
        assert!(bm25.is_consistent(3));
    }
}
