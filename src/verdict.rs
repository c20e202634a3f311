//! A verdict: whether an answer holds anything the reader asked for, said
//! once beside a ranking instead of by hiding it. A search's verdict is
//! decided in `search::verdict`, a feed hit's in `feed::calibration`; both
//! speak these words, on every front end.

/// A best hit scoring at least this makes a matching query's (or a feed hit's) verdict
/// [`Verdict::Strong`].
pub const STRONG: f32 = 0.5;

/// Whether the index holds anything about a query.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Nothing in the index is about it.
    #[default]
    None,
    /// Papers of its field, none plainly about it.
    Weak,
    /// Its best hit is more likely relevant than not.
    Strong,
}

impl Verdict {
    /// The name in tables and JSON (`"match"`).
    pub fn name(self) -> &'static str {
        match self {
            Verdict::None => "none",
            Verdict::Weak => "weak",
            Verdict::Strong => "strong",
        }
    }

    /// The verdict of a query known to match, from its best hit's score.
    pub fn from_best(best: Option<f32>) -> Verdict {
        match best {
            Some(score) if score >= STRONG => Verdict::Strong,
            Some(_) => Verdict::Weak,
            None => Verdict::None,
        }
    }

    /// What the table's header line says of it.
    pub fn sentence(self) -> &'static str {
        match self {
            Verdict::Strong => "strong match",
            Verdict::Weak => "weak match: papers of this field, none plainly about it",
            Verdict::None => {
                "no match: nothing in the index is about this; the closest papers follow"
            }
        }
    }
}
