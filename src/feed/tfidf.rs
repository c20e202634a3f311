//! A TF-IDF of words and word pairs computed as scikit-learn's
//! `TfidfVectorizer` computes it with arxiv-sanity's settings
//! (`strip_accents="unicode"`, `lowercase=True`, `stop_words="english"`,
//! `token_pattern=r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b"`, `ngram_range=(1, 2)`,
//! `max_df=0.1`, `min_df=5`, `sublinear_tf=True`, `norm="l2"`), so that
//! [`super::replica`] carries the feed's strongest simple baseline
//! exactly (a parity test checks it against scikit-learn).
//!
//! As scikit-learn does: a text is lowercased, then its accents stripped
//! (NFKD, then every character of a non-zero canonical combining class
//! dropped); tokens are the pattern's matches; stop words are dropped
//! before the pairs are made (a pair may span a dropped word); a term is
//! kept when it is in at least `min_df` texts and at most `max_df` of
//! them; a weight is `(1 + ln tf) · (ln((1 + n) / (1 + df)) + 1)`, and
//! each row has unit length.

use std::collections::HashMap;

use regex::Regex;
use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::UnicodeNormalization;

/// scikit-learn's English stop words (its `ENGLISH_STOP_WORDS`, 318 words).
#[rustfmt::skip]
const STOP_WORDS: [&str; 318] = [
    "a", "about", "above", "across", "after", "afterwards", "again", "against", "all", "almost",
    "alone", "along", "already", "also", "although", "always", "am", "among", "amongst",
    "amoungst", "amount", "an", "and", "another", "any", "anyhow", "anyone", "anything", "anyway",
    "anywhere", "are", "around", "as", "at", "back", "be", "became", "because", "become",
    "becomes", "becoming", "been", "before", "beforehand", "behind", "being", "below", "beside",
    "besides", "between", "beyond", "bill", "both", "bottom", "but", "by", "call", "can",
    "cannot", "cant", "co", "con", "could", "couldnt", "cry", "de", "describe", "detail", "do",
    "done", "down", "due", "during", "each", "eg", "eight", "either", "eleven", "else",
    "elsewhere", "empty", "enough", "etc", "even", "ever", "every", "everyone", "everything",
    "everywhere", "except", "few", "fifteen", "fifty", "fill", "find", "fire", "first", "five",
    "for", "former", "formerly", "forty", "found", "four", "from", "front", "full", "further",
    "get", "give", "go", "had", "has", "hasnt", "have", "he", "hence", "her", "here", "hereafter",
    "hereby", "herein", "hereupon", "hers", "herself", "him", "himself", "his", "how", "however",
    "hundred", "i", "ie", "if", "in", "inc", "indeed", "interest", "into", "is", "it", "its",
    "itself", "keep", "last", "latter", "latterly", "least", "less", "ltd", "made", "many", "may",
    "me", "meanwhile", "might", "mill", "mine", "more", "moreover", "most", "mostly", "move",
    "much", "must", "my", "myself", "name", "namely", "neither", "never", "nevertheless", "next",
    "nine", "no", "nobody", "none", "noone", "nor", "not", "nothing", "now", "nowhere", "of",
    "off", "often", "on", "once", "one", "only", "onto", "or", "other", "others", "otherwise",
    "our", "ours", "ourselves", "out", "over", "own", "part", "per", "perhaps", "please", "put",
    "rather", "re", "same", "see", "seem", "seemed", "seeming", "seems", "serious", "several",
    "she", "should", "show", "side", "since", "sincere", "six", "sixty", "so", "some", "somehow",
    "someone", "something", "sometime", "sometimes", "somewhere", "still", "such", "system",
    "take", "ten", "than", "that", "the", "their", "them", "themselves", "then", "thence",
    "there", "thereafter", "thereby", "therefore", "therein", "thereupon", "these", "they",
    "thick", "thin", "third", "this", "those", "though", "three", "through", "throughout", "thru",
    "thus", "to", "together", "too", "top", "toward", "towards", "twelve", "twenty", "two", "un",
    "under", "until", "up", "upon", "us", "very", "via", "was", "we", "well", "were", "what",
    "whatever", "when", "whence", "whenever", "where", "whereafter", "whereas", "whereby",
    "wherein", "whereupon", "wherever", "whether", "which", "while", "whither", "who", "whoever",
    "whole", "whom", "whose", "why", "will", "with", "within", "without", "would", "yet", "you",
    "your", "yours", "yourself", "yourselves",
];

/// The settings that differ between uses: the document frequency bounds.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// A term in fewer texts than this is dropped.
    pub min_df: usize,
    /// A term in more than this share of the texts is dropped.
    pub max_df: f64,
}

impl Default for Settings {
    /// arxiv-sanity's: `min_df=5`, `max_df=0.1`.
    fn default() -> Settings {
        Settings {
            min_df: 5,
            max_df: 0.1,
        }
    }
}

/// A fitted vocabulary: each kept term's column and idf.
pub struct Tfidf {
    columns: HashMap<String, u32>,
    idf: Vec<f64>,
    pattern: Regex,
    stop: std::collections::HashSet<&'static str>,
}

impl Tfidf {
    /// Fits the vocabulary and the idf on `texts`. Columns are numbered
    /// in the terms' sorted order, as scikit-learn numbers them.
    pub fn fit(texts: &[&str], settings: Settings) -> Tfidf {
        let mut tfidf = Tfidf {
            columns: HashMap::new(),
            idf: Vec::new(),
            pattern: Regex::new(r"\b[a-zA-Z_][a-zA-Z0-9_]+\b").expect("a valid pattern"),
            stop: STOP_WORDS.into_iter().collect(),
        };
        let mut df: HashMap<String, usize> = HashMap::new();
        for text in texts {
            for term in tfidf.counts(text).into_keys() {
                *df.entry(term).or_default() += 1;
            }
        }
        let n = texts.len();
        let most = settings.max_df * n as f64;
        let mut kept: Vec<(String, usize)> = df
            .into_iter()
            .filter(|(_, d)| *d >= settings.min_df && *d as f64 <= most)
            .collect();
        kept.sort_unstable();
        for (column, (term, d)) in kept.into_iter().enumerate() {
            tfidf.columns.insert(term, column as u32);
            tfidf
                .idf
                .push(((1.0 + n as f64) / (1.0 + d as f64)).ln() + 1.0);
        }
        tfidf
    }

    /// How many columns.
    pub fn terms(&self) -> usize {
        self.idf.len()
    }

    /// The unit-length TF-IDF row of `text`: (column, weight), by column.
    pub fn row(&self, text: &str) -> Vec<(u32, f32)> {
        let mut row: Vec<(u32, f64)> = self
            .counts(text)
            .into_iter()
            .filter_map(|(term, tf)| {
                let column = *self.columns.get(&term)?;
                Some((column, (1.0 + (tf as f64).ln()) * self.idf[column as usize]))
            })
            .collect();
        row.sort_unstable_by_key(|(c, _)| *c);
        let norm = row.iter().map(|(_, w)| w * w).sum::<f64>().sqrt();
        row.into_iter()
            .map(|(c, w)| (c, if norm > 0.0 { w / norm } else { 0.0 } as f32))
            .collect()
    }

    /// Each term of `text` (words and pairs) with its count.
    fn counts(&self, text: &str) -> HashMap<String, usize> {
        let text = strip_accents(&text.to_lowercase());
        let words: Vec<&str> = self
            .pattern
            .find_iter(&text)
            .map(|m| m.as_str())
            .filter(|w| !self.stop.contains(w))
            .collect();
        let mut counts: HashMap<String, usize> = HashMap::new();
        for w in &words {
            *counts.entry((*w).to_string()).or_default() += 1;
        }
        for pair in words.windows(2) {
            *counts
                .entry(format!("{} {}", pair[0], pair[1]))
                .or_default() += 1;
        }
        counts
    }
}

/// scikit-learn's `strip_accents_unicode`: ASCII as it is, else NFKD
/// without the characters of a non-zero canonical combining class.
fn strip_accents(text: &str) -> String {
    if text.is_ascii() {
        return text.to_string();
    }
    text.nfkd()
        .filter(|c| canonical_combining_class(*c) == 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_words_and_pairs_as_scikit_learn_does() {
        let t = Tfidf::fit(&[], Settings::default());
        let counts = t.counts("The Café's café: x2 is a_b of the model model");
        // "the", "is", "of" are stop words; "x2" is kept (a letter first),
        // "s" is one letter; accents go; the pair spans the stop words.
        let mut terms: Vec<(&str, usize)> = counts.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        terms.sort_unstable();
        assert_eq!(
            terms,
            [
                ("a_b", 1),
                ("a_b model", 1),
                ("cafe", 2),
                ("cafe cafe", 1),
                ("cafe x2", 1),
                ("model", 2),
                ("model model", 1),
                ("x2", 1),
                ("x2 a_b", 1),
            ]
        );
    }

    #[test]
    fn rows_are_unit_length_and_bounded_by_document_frequency() {
        let texts: Vec<String> = (0..20)
            .map(|i| format!("graph neural network number{} topic{}", i % 4, i % 10))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let t = Tfidf::fit(
            &refs,
            Settings {
                min_df: 2,
                max_df: 0.3,
            },
        );
        // "graph" is in every text (over max_df); "number0" in 5 of 20.
        assert!(!t.columns.contains_key("graph"));
        assert!(t.columns.contains_key("number0"));
        let row = t.row(&texts[0]);
        let norm: f32 = row.iter().map(|(_, w)| w * w).sum();
        assert!((norm - 1.0).abs() < 1e-5, "{norm}");
    }
}
