//! Reciprocal rank fusion, the hybrid ranking search used before the
//! calibrated score: kept here to compare against (`-- tune`, and
//! `calibrate`'s check of the calibrated ranking).

/// How many semantic candidates a hybrid search fuses with the lexical
/// ranking.
pub const FUSION_DEPTH: usize = 200;

/// How hybrid mode fuses its two rankings (weighted reciprocal rank
/// fusion): a record at rank r of the semantic list adds 1 / (k + r), at
/// rank r of the lexical list `lexical_weight` / (k + r).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fusion {
    /// The rank constant; 60 is the value of Cormack et al.
    pub k: f32,
    /// The lexical ranking's weight against the semantic one's 1.
    pub lexical_weight: f32,
}

impl Fusion {
    /// What hybrid search uses, chosen on SciFact's train claims
    /// (`cargo bench --bench beir -- tune`) and checked on the seeds
    /// (`cargo bench --bench quality`).
    pub const DEFAULT: Fusion = Fusion {
        k: 5.0,
        lexical_weight: 1.25,
    };

    /// The fused score of a record at these 1-based ranks.
    pub fn score(&self, semantic: Option<usize>, lexical: Option<usize>) -> f32 {
        let part = |rank: Option<usize>| rank.map_or(0.0, |r| 1.0 / (self.k + r as f32));
        part(semantic) + self.lexical_weight * part(lexical)
    }
}
