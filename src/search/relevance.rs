//! The score a reader sees: one scale in every mode, the estimated
//! probability that a hit is relevant to the query.
//!
//! A text query's candidates carry two measurements: the cosine of the
//! query's embedding with the record's (its best window's, less the
//! window penalty, when that is higher) and the record's BM25 score as a
//! share of the most the query's terms could score ([`Lexical::bound`],
//! so 1 means every query term, at saturation). A logistic function of
//! what the mode uses, and of the query's length (ln of its distinct
//! terms: a few typed words get lower cosines than a sentence for the
//! same relevance), turns them into a probability:
//!
//! ```text
//! semantic  p = σ(a + b·cosine + d·ln(terms))
//! lexical   p = σ(a + c·bm25_share + d·ln(terms))
//! hybrid    p = σ(a + b·cosine + c·bm25_share + d·ln(terms))
//! ```
//!
//! The coefficients were fitted by maximum likelihood on BEIR SciFact's
//! 809 train claims and the seeds' 55 labelled queries (`eval/`), each
//! query's candidates being the union of its 100 best records by cosine
//! and by BM25, 1 for the records labelled relevant, 0 for the rest:
//! `cargo bench --bench beir -- calibrate`, which also prints how well they
//! hold on SciFact's 300 test claims. There, candidates given 0.40-0.60
//! were relevant 49% of the time, 0.20-0.40 26%, 0.10-0.20 15%, 0.05-0.10
//! 9% (test log loss: semantic 0.0374, lexical 0.0356, hybrid 0.0211). On
//! the seeds' queries, whose top hit is relevant 91% of the time in
//! hybrid mode, that hit is given 0.47 on average: typed queries over a
//! small collection are easier than SciFact's claims, and the scores
//! under-state them.
//!
//! Hybrid mode ranks by its probability; being monotone in both
//! measurements, it never ranks a record below one that is worse on both.
//! On the same candidates of SciFact's test claims it ranks better than
//! the reciprocal-rank fusion it replaced: nDCG@10 0.7342 against 0.7218,
//! Recall@10 0.8539 against 0.8506, MRR@10 0.7012 against 0.6856.
//!
//! [`NO_MATCH`] is the default floor: hits estimated less likely than
//! that are not listed, so a query about nothing in the index gets no
//! hits rather than the ten least unrelated papers. `--min-score 0`
//! lists everything.
//!
//! [`Lexical::bound`]: crate::index::bm25::Lexical::bound

use super::options::Mode;

/// Logistic coefficients: intercept, cosine weight, BM25-share weight, and
/// the weight of the query's length (the natural log of its distinct
/// analysed terms): short queries score lower cosines for the same
/// relevance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// Added before the logistic function.
    pub intercept: f32,
    /// Weight of the cosine.
    pub cosine: f32,
    /// Weight of the BM25 share.
    pub lexical: f32,
    /// Weight of ln(distinct query terms).
    pub length: f32,
}

impl Calibration {
    /// The probability for these measurements of a query of `terms`
    /// distinct analysed terms.
    pub fn probability(&self, cosine: f32, bm25_share: f32, terms: usize) -> f32 {
        let z = self.intercept
            + self.cosine * cosine
            + self.lexical * bm25_share
            + self.length * query_length(terms);
        1.0 / (1.0 + (-z).exp())
    }
}

/// The length feature of a query of `terms` distinct analysed terms.
pub fn query_length(terms: usize) -> f32 {
    (terms.max(1) as f32).ln()
}

/// The distinct analysed terms of `query`, as BM25 counts them.
pub fn query_terms(query: &str) -> usize {
    let mut terms = crate::lexical::Analysis::CURRENT.terms(query);
    terms.sort();
    terms.dedup();
    terms.len()
}

/// Semantic mode's calibration (the cosine alone).
pub const SEMANTIC: Calibration = Calibration {
    intercept: -10.780,
    cosine: 18.116,
    lexical: 0.0,
    length: -0.994,
};

/// Lexical mode's calibration (the BM25 share alone).
pub const LEXICAL: Calibration = Calibration {
    intercept: -11.128,
    cosine: 0.0,
    lexical: 16.143,
    length: 1.267,
};

/// Hybrid mode's calibration (both).
pub const HYBRID: Calibration = Calibration {
    intercept: -10.692,
    cosine: 8.872,
    lexical: 9.445,
    length: 0.071,
};

/// The default floor on the probability: about the highest that keeps 95%
/// of the relevant records of each top 10 of SciFact's train claims in
/// every mode (96.3% semantic, 95.5% lexical, 95.9% hybrid; hybrid keeps
/// 96.2% on the test claims and all of the seeds' labelled records). At
/// it, of the seeds' 55 computer-science queries asked of SciFact, where
/// nothing should match, 45 get no hit in hybrid mode (50 semantic, 32
/// lexical: BM25 matches common words), and of 100 random letter strings
/// 100 get none in hybrid and lexical mode, 95 in semantic
/// (`cargo bench --bench beir -- calibrate`).
pub const NO_MATCH: f32 = 0.005;

/// The calibration a mode uses.
pub fn calibration(mode: Mode) -> Calibration {
    match mode {
        Mode::Semantic => SEMANTIC,
        Mode::Lexical => LEXICAL,
        Mode::Hybrid => HYBRID,
    }
}

/// The probability a hit with these measurements is relevant to a query
/// of `terms` distinct analysed terms, in `mode`.
pub fn probability(mode: Mode, cosine: f32, bm25_share: f32, terms: usize) -> f32 {
    calibration(mode).probability(cosine, bm25_share, terms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_lie_in_the_unit_interval_and_rise_with_each_measurement() {
        for mode in [Mode::Semantic, Mode::Lexical, Mode::Hybrid] {
            let mut last = -1.0;
            for step in 0..=20 {
                let x = step as f32 / 20.0;
                let p = probability(mode, x, x, 5);
                assert!((0.0..=1.0).contains(&p), "{mode:?} {x}: {p}");
                assert!(p >= last, "{mode:?} falls at {x}");
                last = p;
            }
        }
        assert!(probability(Mode::Hybrid, 0.5, 0.5, 5) > probability(Mode::Hybrid, 0.5, 0.0, 5));
        assert!(probability(Mode::Hybrid, 0.6, 0.0, 5) > probability(Mode::Hybrid, 0.5, 0.0, 5));
    }
}
