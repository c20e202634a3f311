//! The score a reader sees, and whether a query matches anything at all.
//!
//! A text query's candidates carry two measurements: the cosine of the
//! query's embedding with the record's (its best window's, less the
//! window penalty, when that is higher) and the record's BM25 score as a
//! share of the most the query's terms could score (`Lexical::bound`,
//! so 1 means every query term, at saturation). Three steps turn them
//! into what is printed:
//!
//! 1. **Evidence** ([`Calibration`]): a logistic score of what the mode
//!    uses and of the query's length (ln of its distinct terms), fitted
//!    by maximum likelihood on BEIR SciFact's 809 train claims and the
//!    seeds' labelled queries. Hits are ranked by it; being monotone in
//!    both measurements, hybrid mode never ranks a record below one that
//!    is worse on both (SciFact test nDCG@10 0.7333, against 0.7218 for
//!    the reciprocal-rank fusion it replaced).
//! 2. **Verdict** ([`Matching`], [`super::verdict`]): decided once per
//!    query, from its best ten hits (their highest cosine and BM25 share),
//!    its length and, in hybrid mode, its cosine with the collection's
//!    centre ([`Index::centre`](crate::index::Index::centre)). A query
//!    the rule turns away gets the verdict `none`; its ranking is listed
//!    all the same (`--strict` lists nothing). Lexical mode asks hybrid
//!    mode's rule (the query's meaning tells a query of another field that
//!    shares common words with the collection); only without the model
//!    does it fall back to its own, words-only rule. The rule was fitted to
//!    tell queries of a collection's own field from queries of another
//!    field (biomedical claims asked of the seeds, half of the seeds'
//!    computer-science queries asked of SciFact), and its threshold is the
//!    highest that calls `none` for at most 1% of the relevant records of
//!    each top 10 on SciFact's train claims and half of the seeds' queries.
//! 3. **Score** ([`Scale`]): `σ(a + b·e)`, where `e` is the hit's
//!    evidence: it depends on the query, the paper and the collection's
//!    statistics (BM25's document frequencies), never on the other hits,
//!    so a paper scores the same at any `-k`, with or without filters.
//!    `a` and `b` are fitted on the top 10 of queries from three
//!    collections at once (SciFact's train claims, half of the seeds'
//!    queries, half of 400 known-item queries over 2,000 arXiv abstracts),
//!    each collection weighing the same: the score is the share of hits
//!    given that score that were relevant, checked on the halves and the
//!    test claims the fit never saw (`docs/guide.md`).
//!
//! The fits, thresholds and their checks: `cargo bench --bench beir --
//! dump DIR` writes each query set's candidates, `bench/score.py DIR`
//! fits and prints the tables of `docs/guide.md` ("What the score means").

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
    /// The evidence (log-odds of relevance among SciFact's candidates) for
    /// these measurements of a query of `terms` distinct analysed terms.
    pub fn evidence(&self, cosine: f32, bm25_share: f32, terms: usize) -> f32 {
        self.intercept
            + self.cosine * cosine
            + self.lexical * bm25_share
            + self.length * query_length(terms)
    }

    /// [`Calibration::evidence`] as a probability.
    pub fn probability(&self, cosine: f32, bm25_share: f32, terms: usize) -> f32 {
        sigmoid(self.evidence(cosine, bm25_share, terms))
    }
}

/// The length feature of a query of `terms` distinct analysed terms.
pub fn query_length(terms: usize) -> f32 {
    (terms.max(1) as f32).ln()
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

/// The calibration a mode uses.
pub fn calibration(mode: Mode) -> Calibration {
    match mode {
        Mode::Semantic => SEMANTIC,
        Mode::Lexical => LEXICAL,
        Mode::Hybrid => HYBRID,
    }
}

/// The evidence (log-odds) for a hit with these measurements, for a query
/// of `terms` distinct analysed terms, in `mode`: what hits are ranked by.
pub fn evidence(mode: Mode, cosine: f32, bm25_share: f32, terms: usize) -> f32 {
    calibration(mode).evidence(cosine, bm25_share, terms)
}

/// The logistic function.
pub fn sigmoid(z: f32) -> f32 {
    1.0 / (1.0 + (-z).exp())
}

/// Whether a query matches anything (its verdict is not `none`): a logistic rule over its best ten
/// hits' highest cosine and highest BM25 share (as the mode uses them), its
/// length and, in hybrid mode, its cosine with the collection's centre
/// ([`Index::centre`](crate::index::Index::centre)), positive for a match.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Matching {
    /// Added first; includes the threshold.
    pub intercept: f32,
    /// Weight of the highest cosine among the best ten hits.
    pub cosine: f32,
    /// Weight of the highest BM25 share among them.
    pub lexical: f32,
    /// Weight of ln(distinct query terms).
    pub length: f32,
    /// Weight of the query's cosine with the collection's centre.
    pub centre: f32,
}

/// What the no-match rule reads of a query and its best ten hits.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QueryEvidence {
    /// The highest cosine among the best ten hits.
    pub best_cosine: f32,
    /// The highest BM25 share among them.
    pub best_share: f32,
    /// The query's distinct analysed terms.
    pub terms: usize,
    /// The query's cosine with the collection's centre (0 unless hybrid).
    pub centre: f32,
}

impl Matching {
    /// Whether a query with this evidence matches.
    pub fn matches(&self, q: &QueryEvidence) -> bool {
        self.intercept
            + self.cosine * q.best_cosine
            + self.lexical * q.best_share
            + self.length * query_length(q.terms)
            + self.centre * q.centre
            >= 0.0
    }
}

/// The no-match rule of each mode (`bench/score.py`: coefficients, then
/// the threshold folded into the intercept: semantic −9.062 + 1.25,
/// lexical −12.597 + 2.05, hybrid −12.389 + 1.05). Lexical mode's is the
/// words-only rule it uses when the model is not at hand; with the model
/// it asks hybrid mode's (`retrieve::search_parsed`).
pub fn matching(mode: Mode) -> Matching {
    match mode {
        Mode::Semantic => Matching {
            intercept: -7.812,
            cosine: 25.200,
            lexical: 0.0,
            length: -0.278,
            centre: 0.0,
        },
        Mode::Lexical => Matching {
            intercept: -10.547,
            cosine: 0.0,
            lexical: 17.834,
            length: 3.774,
            centre: 0.0,
        },
        Mode::Hybrid => Matching {
            intercept: -11.339,
            cosine: 9.817,
            lexical: 11.724,
            length: 1.621,
            centre: 20.510,
        },
    }
}

/// The printed score of a hit: `σ(intercept + slope·e)` of its evidence
/// `e`, whatever else the list holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    /// Added first.
    pub intercept: f32,
    /// Weight of the hit's evidence.
    pub slope: f32,
}

impl Scale {
    /// The score of a hit of evidence `e`.
    pub fn score(&self, e: f32) -> f32 {
        sigmoid(self.intercept + self.slope * e)
    }
}

/// The score scale of each mode (`bench/score.py`).
pub fn scale(mode: Mode) -> Scale {
    match mode {
        Mode::Semantic => Scale {
            intercept: 0.550,
            slope: 0.881,
        },
        Mode::Lexical => Scale {
            intercept: -0.206,
            slope: 0.853,
        },
        Mode::Hybrid => Scale {
            intercept: 0.212,
            slope: 0.941,
        },
    }
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
                let p = calibration(mode).probability(x, x, 5);
                assert!((0.0..=1.0).contains(&p), "{mode:?} {x}: {p}");
                assert!(p >= last, "{mode:?} falls at {x}");
                last = p;
            }
        }
        assert!(
            calibration(Mode::Hybrid).probability(0.5, 0.5, 5)
                > calibration(Mode::Hybrid).probability(0.5, 0.0, 5)
        );
        assert!(
            calibration(Mode::Hybrid).probability(0.6, 0.0, 5)
                > calibration(Mode::Hybrid).probability(0.5, 0.0, 5)
        );
    }
}
