//! A query's verdict: whether the index holds anything about it, said
//! once per query beside the ranking instead of by hiding the ranking.
//!
//! - `none`: the mode's no-match rule ([`relevance::Matching`]) says the
//!   query is about something the index does not hold (random letters, a
//!   question from another field): its best hits are listed all the same,
//!   for a reader to judge, unless `--strict` asks for nothing.
//! - `strong`: the query matches and its best hit's score (a calibrated
//!   probability of relevance, [`relevance::Scale`]) is at least
//!   [`STRONG`]: the top of the list is more likely relevant than not.
//! - `weak`: it matches, but no hit reaches [`STRONG`]: the index holds
//!   papers of the query's field, none plainly about it.
//!
//! The threshold is not fitted: it is where the score, being a
//! probability, says "more likely than not".

use super::relevance;

pub use crate::verdict::{Verdict, STRONG};

impl Verdict {
    /// The verdict of a query whose best ten hits read `evidence` and
    /// whose best hit scores `best` (none when it has no hit), in `mode`.
    pub fn of(
        mode: super::options::Mode,
        evidence: &relevance::QueryEvidence,
        best: Option<f32>,
    ) -> Verdict {
        if !relevance::matching(mode).matches(evidence) {
            Verdict::None
        } else {
            Verdict::from_best(best)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::options::Mode;
    use super::*;

    #[test]
    fn the_best_score_splits_a_match_and_the_rule_decides_none() {
        assert_eq!(Verdict::from_best(Some(0.8)), Verdict::Strong);
        assert_eq!(Verdict::from_best(Some(STRONG)), Verdict::Strong);
        assert_eq!(Verdict::from_best(Some(0.3)), Verdict::Weak);
        assert_eq!(Verdict::from_best(None), Verdict::None);
        let far = relevance::QueryEvidence {
            best_cosine: 0.05,
            best_share: 0.0,
            terms: 3,
            centre: 0.0,
        };
        for mode in [Mode::Semantic, Mode::Lexical, Mode::Hybrid] {
            assert_eq!(
                Verdict::of(mode, &far, Some(0.9)),
                Verdict::None,
                "{mode:?}"
            );
        }
        assert!(Verdict::Strong > Verdict::Weak && Verdict::Weak > Verdict::None);
    }
}
