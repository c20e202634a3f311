//! A paper's words as a vector: the lexical side of a profile. Each
//! analysed term (stemmed, as BM25 sees it) weighs `(1 + ln tf) * idf`,
//! with the index's own IDF, and the vector has unit length, so a dot
//! product is the TF-IDF cosine. On the feed benchmark, adding this to the
//! embedding's score ranks rare interests better than either alone: the
//! words a field uses ("SQL", "theorem", "beamforming") say what the
//! vectors blur.

use std::collections::HashMap;

use crate::lexical::TermWeights;

/// Terms and weights.
pub type Words = HashMap<String, f32>;

/// The unit TF-IDF vector of `text`.
pub fn of(text: &str, weights: &dyn TermWeights) -> Words {
    let mut counts: HashMap<String, u32> = HashMap::new();
    for term in weights.analysis().terms(text) {
        *counts.entry(term).or_insert(0) += 1;
    }
    let mut words: Words = counts
        .into_iter()
        .map(|(term, tf)| {
            let idf = weights.term_idf(&term);
            (term, (1.0 + (tf as f32).ln()) * idf)
        })
        .filter(|(_, w)| *w > 0.0)
        .collect();
    let norm = words.values().map(|w| w * w).sum::<f32>().sqrt();
    if norm > 0.0 {
        words.values_mut().for_each(|w| *w /= norm);
    }
    words
}

/// The mean of `vectors`.
pub fn mean(vectors: &[Words]) -> Words {
    let mut sum = Words::new();
    for v in vectors {
        for (t, w) in v {
            *sum.entry(t.clone()).or_insert(0.0) += w;
        }
    }
    let n = vectors.len().max(1) as f32;
    sum.values_mut().for_each(|w| *w /= n);
    sum
}

/// `a + scale * b`, in place.
pub fn add(a: &mut Words, b: &Words, scale: f32) {
    for (t, w) in b {
        *a.entry(t.clone()).or_insert(0.0) += scale * w;
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
