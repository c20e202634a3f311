//! BM25 over an index's lexical segments: the statistics (document
//! count, lengths, document frequencies) summed over every segment, so the
//! scores are those of one index over all rows (see [`super::segment`] for
//! one segment's file). Scores are summed term at a time into a per-thread
//! buffer of one float per row; [`Lexical::score_top`] keeps the best `k`
//! of them without collecting every match.

use super::segment::Segment;
use crate::analysis::Analysis;
use crate::error::Result;
use crate::lexical::Params;

/// The best rows with their scores, and the scores of the rows asked for.
type TopAnd = (Vec<(usize, f32)>, Vec<f32>);

/// BM25 over a set of segments, with statistics over all of them.
pub struct Lexical {
    segments: Vec<Segment>,
    rows: usize,
    params: Params,
}

impl Lexical {
    /// The segments of an index of `rows` rows.
    pub fn new(segments: Vec<Segment>, rows: usize) -> Lexical {
        Lexical {
            segments,
            rows,
            params: Params::default(),
        }
    }

    /// The segments.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    fn docs(&self) -> usize {
        self.segments.iter().map(Segment::docs).sum()
    }

    fn idf(&self, df: u64) -> f32 {
        let n = self.docs() as f32;
        let df = df as f32;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// How many records hold `term` (an analysed term), over every
    /// segment: a binary search of each one's term table.
    pub fn documents(&self, term: &str) -> u64 {
        self.segments.iter().map(|s| s.df(term) as u64).sum()
    }

    /// Whether some term of any segment starts with `prefix`.
    pub fn has_prefix(&self, prefix: &str) -> bool {
        self.segments.iter().any(|s| s.has_prefix(prefix))
    }

    /// Up to `n` rows holding `term`, first rows first.
    pub fn rows_with(&self, term: &str, n: usize) -> Result<Vec<usize>> {
        let mut rows = Vec::new();
        for segment in &self.segments {
            if rows.len() >= n {
                break;
            }
            segment.postings(term, |row, _, _| {
                if rows.len() < n {
                    rows.push(row);
                }
            })?;
        }
        Ok(rows)
    }

    /// The most a record could score for a query of these distinct `terms`
    /// ([`Analysis::distinct_terms`]): every one at saturation, `idf · (k1 + 1)` each (a term no record has
    /// counts too, at its IDF). A hit's BM25 score divided by this lies in
    /// [0, 1] and compares across queries.
    pub fn bound(&self, terms: &[String]) -> f32 {
        let k1 = self.params.k1;
        terms
            .iter()
            .map(|term| {
                let df: u64 = self.segments.iter().map(|s| s.df(term) as u64).sum();
                self.idf(df) * (k1 + 1.0)
            })
            .sum()
    }

    /// BM25 scores of every row matching at least one query term, as
    /// `(row, score)` in row order; a term repeated in the query counts once.
    /// Dead rows are the caller's to drop.
    pub fn score(&self, query: &str) -> Result<Vec<(usize, f32)>> {
        self.accumulate(&Analysis::CURRENT.distinct_terms(query), |scores| {
            scores
                .iter()
                .enumerate()
                .filter(|(_, s)| **s > 0.0)
                .map(|(row, s)| (row, *s))
                .collect()
        })
    }

    /// The `k` best rows for the query of these distinct `terms`
    /// ([`Analysis::distinct_terms`]) among the rows `keep` keeps, best
    /// first (ties by row), without collecting every match: at a million
    /// records a common term matches hundreds of thousands.
    pub fn score_top(
        &self,
        terms: &[String],
        k: usize,
        keep: &dyn Fn(usize) -> bool,
    ) -> Result<Vec<(usize, f32)>> {
        Ok(self.score_top_and(terms, k, keep, &[])?.0)
    }

    /// [`Lexical::score_top`], and the scores of the rows `also` names
    /// (0 for a row no query term matches), from the same pass: what a
    /// hybrid search needs for candidates the top `k` did not reach.
    pub fn score_top_and(
        &self,
        terms: &[String],
        k: usize,
        keep: &dyn Fn(usize) -> bool,
        also: &[usize],
    ) -> Result<TopAnd> {
        /// A hit ordered by how bad it is: the heap's top is the one to drop.
        #[derive(PartialEq)]
        struct Worse(f32, usize);
        impl Eq for Worse {}
        impl PartialOrd for Worse {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }
        impl Ord for Worse {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
            }
        }
        self.accumulate(terms, |scores| {
            let mut best = std::collections::BinaryHeap::with_capacity(k.min(scores.len()) + 1);
            // The score to beat: 0 (no match) until k are kept, then the
            // worst kept. Rows come in order, so a tie with it loses.
            let mut floor = 0f32;
            for (row, &score) in scores.iter().enumerate() {
                if score <= floor || k == 0 || !keep(row) {
                    continue;
                }
                best.push(Worse(score, row));
                if best.len() > k {
                    best.pop();
                }
                if best.len() == k {
                    floor = best.peek().map_or(0.0, |w: &Worse| w.0);
                }
            }
            let top = best
                .into_sorted_vec()
                .into_iter()
                .map(|w| (w.1, w.0))
                .collect();
            let named = also
                .iter()
                .map(|&row| scores.get(row).copied().unwrap_or(0.0))
                .collect();
            (top, named)
        })
    }

    /// Sums each row's BM25 score over the query's terms in a per-thread
    /// buffer (cleared after), and hands the scores to `read`.
    fn accumulate<R>(&self, terms: &[String], read: impl FnOnce(&[f32]) -> R) -> Result<R> {
        thread_local! {
            static SCORES: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let docs = self.docs();
        if docs == 0 || terms.is_empty() {
            return Ok(read(&[]));
        }
        let total: u64 = self.segments.iter().map(Segment::total_len).sum();
        let average = (total as f32 / docs as f32).max(1.0);
        let Params { k1, b } = self.params;
        SCORES.with(|cell| {
            let mut scores = cell.take();
            scores.clear();
            scores.resize(self.rows, 0.0);
            let mut summed = || -> Result<()> {
                for term in terms {
                    let df: u64 = self.segments.iter().map(|s| s.df(term) as u64).sum();
                    if df == 0 {
                        continue;
                    }
                    let idf = self.idf(df);
                    for segment in &self.segments {
                        segment.postings(term, |row, tf, length| {
                            let tf = tf as f32;
                            let norm = k1 * (1.0 - b + b * length as f32 / average);
                            if let Some(s) = scores.get_mut(row) {
                                *s += idf * tf * (k1 + 1.0) / (tf + norm);
                            }
                        })?;
                    }
                }
                Ok(())
            };
            let done = summed().map(|()| read(&scores));
            cell.replace(scores);
            done
        })
    }
}

impl crate::lexical::TermWeights for Lexical {
    fn analysis(&self) -> Analysis {
        Analysis::CURRENT
    }

    fn term_idf(&self, term: &str) -> f32 {
        let df: u64 = self.segments.iter().map(|s| s.df(term) as u64).sum();
        if df == 0 {
            0.0
        } else {
            self.idf(df)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::segment::tests::{write, TEXTS};
    use super::super::segment::{merge, Builder};
    use super::*;
    use crate::lexical::{Bm25, TermWeights};

    #[test]
    fn segments_score_as_the_in_memory_bm25_does() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = Builder::new(0);
        TEXTS[..2].iter().for_each(|t| a.add(t));
        let mut b = Builder::new(2);
        TEXTS[2..].iter().for_each(|t| b.add(t));
        let (pa, la) = write(dir.path(), "a", &a);
        let (pb, lb) = write(dir.path(), "b", &b);
        let sa = Segment::open(&pa, 0, 2, la).unwrap();
        let sb = Segment::open(&pb, 2, 3, lb).unwrap();
        let merged = merge(&[&sa, &sb]).unwrap();
        let (pm, lm) = write(dir.path(), "m", &merged);
        let sm = Segment::open(&pm, 0, 5, lm).unwrap();
        sm.check_postings().unwrap();
        let reference = Bm25::build(TEXTS);
        let expected: Vec<(usize, f32)> = reference
            .score("RoPE language models for images")
            .into_iter()
            .map(|h| (h.row, h.score))
            .collect();
        let two = Lexical::new(vec![sa, sb], 5);
        let one = Lexical::new(vec![sm], 5);
        for lexical in [&two, &one] {
            let got = lexical.score("RoPE language models for images").unwrap();
            assert_eq!(got.len(), expected.len());
            for ((r1, s1), (r2, s2)) in got.iter().zip(&expected) {
                assert_eq!(r1, r2);
                assert!((s1 - s2).abs() < 1e-5, "{s1} {s2}");
            }
            assert!((lexical.term_idf("rope") - reference.term_idf("rope")).abs() < 1e-6);
            let mut ranked = got.clone();
            ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            for k in [1, 2, got.len(), got.len() + 3, usize::MAX] {
                let top = lexical
                    .score_top(
                        &Analysis::CURRENT.distinct_terms("RoPE language models for images"),
                        k,
                        &|_| true,
                    )
                    .unwrap();
                assert_eq!(top, ranked[..k.min(ranked.len())], "top {k}");
            }
            let odd = lexical
                .score_top(
                    &Analysis::CURRENT.distinct_terms("RoPE language models for images"),
                    9,
                    &|r| r % 2 == 1,
                )
                .unwrap();
            let want: Vec<_> = ranked.iter().filter(|h| h.0 % 2 == 1).copied().collect();
            assert_eq!(odd, want);
        }
    }
}
