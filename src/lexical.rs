//! Lexical retrieval: Okapi BM25 over the words of the abstracts (their
//! terms as [`crate::analysis`] makes them), stored beside the vectors.
//! Dense vectors blur exact terms (acronyms, method names) and see only the
//! first 256 word pieces; BM25 sees every word. This is the reference
//! in-memory BM25 and its parameters; the index's own, over segments, is
//! `crate::index::bm25`.
//!
//! A hand-written BM25 rather than tantivy: the index keeps its postings in
//! immutable, memory-mapped segments of its own (`crate::index::segment`,
//! merged as Lucene's are), written beside the vectors in one commit, and
//! this keeps the build free of a second search engine.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::analysis::Analysis;
use crate::hit::Hit;

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
        let query_terms = self.analysis.distinct_terms(query);
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
    fn indexes_without_an_analysis_field_fold_plurals() {
        let json = r#"{"lengths":[2],"postings":{"model":[[0,1]],"rope":[[0,1]]}}"#;
        let old: Bm25 = serde_json::from_str(json).unwrap();
        assert_eq!(old.analysis(), Analysis::Fold);
        assert_eq!(old.params, Params::default());
        assert_eq!(old.score("RoPE models").len(), 1);
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
