//! Why a hit matched: the sentence of the abstract closest to the query,
//! and the query's words in it.
//!
//! Two ways to pick the sentence. [`by_words`] needs only the BM25 index:
//! the sentence whose words carry the most query-term IDF, which is what
//! every JSON hit gets. [`by_meaning`] embeds each sentence of each hit and
//! takes the one whose vector is closest to the query's; `--explain` asks
//! for it, at the price of one model pass over the hits' sentences.

use std::collections::{BTreeSet, HashSet};

use crate::analysis::Analysis;
use crate::lexical::TermWeights;
use crate::paper::sentences;

/// Byte ranges of the words of `text` that match a query term, for
/// highlighting.
pub fn matches(text: &str, terms: &HashSet<String>, analysis: Analysis) -> Vec<(usize, usize)> {
    crate::analysis::word_spans(text)
        .into_iter()
        .filter(|&(s, e)| {
            analysis
                .term(&text[s..e])
                .is_some_and(|t| terms.contains(&t))
        })
        .collect()
}

/// The sentence of `text` with the most query-term weight (the sum of the
/// IDF of the distinct query terms it contains); the first sentence when
/// none contains any.
pub fn by_words<'t>(text: &'t str, terms: &HashSet<String>, bm25: &dyn TermWeights) -> &'t str {
    let sentences = sentences(text);
    let mut best = (0.0f32, sentences.first().copied().unwrap_or(text));
    for sentence in sentences {
        // Summed in term order: in a hash set's order, which changes from
        // one process to the next, two sentences with the same terms
        // could differ in the last bit and swap places.
        let found: BTreeSet<String> = bm25
            .analysis()
            .terms(sentence)
            .into_iter()
            .filter(|t| terms.contains(t))
            .collect();
        let weight: f32 = found.iter().map(|t| bm25.term_idf(t)).sum();
        if weight > best.0 {
            best = (weight, sentence);
        }
    }
    best.1
}

/// The sentence whose vector is closest to `query`, given the sentences
/// and their vectors in the same order.
pub fn by_meaning<'t>(sentences: &[&'t str], vectors: &[Vec<f32>], query: &[f32]) -> &'t str {
    sentences
        .iter()
        .zip(vectors)
        .map(|(s, v)| (crate::vector::dot(v, query), *s))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map_or("", |(_, s)| s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexical::Bm25;

    #[test]
    fn the_sentence_with_the_rarest_query_terms_wins() {
        let texts = [
            "Language models are big. We extend RoPE to long contexts. Models improve.",
            "Language models are everywhere.",
        ];
        let bm25 = Bm25::build(texts);
        let terms: HashSet<String> = bm25
            .analysis()
            .terms("RoPE language models")
            .into_iter()
            .collect();
        assert_eq!(
            by_words(texts[0], &terms, &bm25),
            "We extend RoPE to long contexts."
        );
        assert_eq!(
            by_words("Nothing here. At all.", &terms, &bm25),
            "Nothing here."
        );
        let text = "Scaling RoPE models";
        let spans = matches(text, &terms, bm25.analysis());
        let words: Vec<&str> = spans.iter().map(|&(s, e)| &text[s..e]).collect();
        assert_eq!(words, ["RoPE", "models"]);
    }
}
