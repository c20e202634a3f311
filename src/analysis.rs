//! How words become terms, for BM25, the evidence and the feed's words:
//! runs of letters and digits, lower-cased, with common English function
//! words dropped and the rest reduced to their Snowball English stem
//! (`models` → `model`, `generalization` → `general`). The index records
//! which analysis built it, and queries go through the same one: indexes
//! from before stemming ([`Analysis::Fold`]) keep answering as they were
//! built until the next `papers index` rewrites them. Also the word spans
//! and trigram overlap that matching and near-duplicates read.

use serde::{Deserialize, Serialize};

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
    fn trigram_overlap_separates_revisions_from_neighbours() {
        let a = "We propose a new model for dense retrieval that is fast.";
        let b = "We propose a new model for dense retrieval that is accurate.";
        let c = "Dense retrieval models are fast and accurate in practice.";
        assert!(trigram_overlap(a, b) > 0.7);
        assert!(trigram_overlap(a, c) < 0.2);
        assert_eq!(trigram_overlap("two words", a), 0.0);
    }
}
