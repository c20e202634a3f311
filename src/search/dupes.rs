//! Near duplicates: pairs of records that say nearly the same thing (a
//! revised version, a repost). Every pair of live records is compared, so
//! the time is quadratic; the memory is not: each worker keeps only the
//! best `limit` pairs that pass both tests, and a pair's texts are read
//! only when it would enter that list.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::rank::Hit;
use crate::error::Result;
use crate::index::Index;

/// Two records that say nearly the same thing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dupe {
    /// Row of the first record.
    pub a: usize,
    /// Row of the second record (after `a`).
    pub b: usize,
    /// Cosine similarity of their vectors.
    pub score: f32,
    /// Share of the shorter text's word trigrams found in the other.
    pub overlap: f32,
}

/// The output order: most similar first, then by rows.
fn order(x: &Dupe, y: &Dupe) -> Ordering {
    y.score
        .total_cmp(&x.score)
        .then((x.a, x.b).cmp(&(y.a, y.b)))
}

/// A heap entry whose greatest element is the pair that goes first when
/// a better one arrives (the last in output order).
struct Worst(Dupe);

impl PartialEq for Worst {
    fn eq(&self, other: &Self) -> bool {
        order(&self.0, &other.0) == Ordering::Equal
    }
}
impl Eq for Worst {}
impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        order(&self.0, &other.0)
    }
}

/// The best `limit` pairs seen by one worker.
struct Best {
    limit: usize,
    heap: BinaryHeap<Worst>,
}

impl Best {
    fn new(limit: usize) -> Best {
        Best {
            limit,
            heap: BinaryHeap::new(),
        }
    }

    /// Whether a pair (a, b) scoring `score` would be kept.
    fn admits(&self, a: usize, b: usize, score: f32) -> bool {
        self.limit > 0
            && (self.heap.len() < self.limit
                || self.heap.peek().is_some_and(|worst| {
                    let candidate = Dupe {
                        a,
                        b,
                        score,
                        overlap: 0.0,
                    };
                    order(&candidate, &worst.0) == Ordering::Less
                }))
    }

    fn push(&mut self, dupe: Dupe) {
        self.heap.push(Worst(dupe));
        if self.heap.len() > self.limit {
            self.heap.pop();
        }
    }

    fn merge(mut self, other: Best) -> Best {
        for Worst(dupe) in other.heap {
            if self.admits(dupe.a, dupe.b, dupe.score) {
                self.push(dupe);
            }
        }
        self
    }
}

/// Pairs of distinct records that are near duplicates: cosine
/// similarity at least `min_score` and at least `min_overlap` of the
/// shorter one's word trigrams shared (cosine alone does not separate
/// revised versions from papers on one topic). The best `limit` pairs,
/// most similar first, each pair once, lower row first.
pub fn near_duplicates(
    index: &Index,
    min_score: f32,
    min_overlap: f32,
    limit: usize,
) -> Result<Vec<Dupe>> {
    use rayon::prelude::*;
    let live: Vec<usize> = (0..index.rows()).filter(|&r| index.is_live(r)).collect();
    let deadline = crate::deadline::current();
    let best = live
        .par_iter()
        .enumerate()
        .try_fold(
            || Best::new(limit),
            |mut best, (i, &a)| -> Result<Best> {
                deadline.check()?;
                let va = index.mapped_vector(a).into_owned();
                let mut text_a: Option<String> = None;
                for &b in &live[i + 1..] {
                    let score = crate::vector::dot(&va, &index.mapped_vector(b));
                    // A score that is not a number, or out of range, is
                    // damage, reported by `sane` rather than ranked.
                    if score.is_finite() && (score < min_score || !best.admits(a, b, score)) {
                        continue;
                    }
                    super::candidates::sane(index, &[Hit::new(b, score)])?;
                    if text_a.is_none() {
                        text_a = Some(index.paper(a)?.text);
                    }
                    let text_b = index.paper(b)?.text;
                    let overlap = crate::analysis::trigram_overlap(
                        text_a.as_deref().unwrap_or_default(),
                        &text_b,
                    );
                    if overlap >= min_overlap {
                        best.push(Dupe {
                            a,
                            b,
                            score,
                            overlap,
                        });
                    }
                }
                Ok(best)
            },
        )
        .try_reduce(|| Best::new(limit), |x, y| Ok(x.merge(y)))?;
    let mut pairs: Vec<Dupe> = best.heap.into_iter().map(|Worst(d)| d).collect();
    pairs.sort_by(order);
    Ok(pairs)
}
