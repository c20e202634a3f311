//! Hits: a record's place in a ranked list and the score it was ranked
//! by, alone or with its record. Every ranking (the semantic and lexical
//! ones, their fusion, the feed) produces these, and every printer reads
//! them.

use crate::paper::Paper;

/// A record's place in one ranking.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ranked {
    /// 1-based rank in that ranking.
    pub rank: usize,
    /// The ranking's score: cosine for semantic, BM25 for lexical.
    pub score: f32,
}

/// One result: a record's position in the index, the score it was ranked
/// by, and where it stood in each ranking that was used.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Position of the record (records are stored in id order).
    pub row: usize,
    /// The score results are ordered by: for a text query, the calibrated
    /// probability of relevance ([`crate::search::relevance`]) in every
    /// mode; for `similar`, the cosine.
    pub score: f32,
    /// Its place in the semantic ranking, when that was used.
    pub semantic: Option<Ranked>,
    /// Its place in the lexical ranking, when that was used and it matched.
    pub lexical: Option<Ranked>,
}

impl Hit {
    /// A hit with no per-ranking detail.
    pub fn new(row: usize, score: f32) -> Hit {
        Hit {
            row,
            score,
            semantic: None,
            lexical: None,
        }
    }
}

/// One hit and its record.
#[derive(Clone, Debug)]
pub struct Found {
    /// Where it ranked and by what score.
    pub hit: Hit,
    /// The record.
    pub paper: Paper,
    /// The sentence of the abstract that best says why it matched (a text
    /// query's, or the feed's), when one was chosen.
    pub evidence: Option<String>,
    /// With several query paragraphs, the 1-based one it matched best.
    pub query_paragraph: Option<usize>,
}

impl Found {
    /// A hit and its record, with no evidence.
    pub fn new(hit: Hit, paper: Paper) -> Found {
        Found {
            hit,
            paper,
            evidence: None,
            query_paragraph: None,
        }
    }
}
