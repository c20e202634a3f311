//! What a feed answers: the request ([`FeedRequest`]), each ranked paper
//! ([`FeedHit`]) with why it is there ([`Because`]), and the feed as a
//! whole ([`Feed`]), however it was made (ranked by tags in
//! [`super::daily`], or listed newest first before any tag).

use crate::hit::Found;
use crate::paper::Paper;
use crate::verdict::Verdict;

use super::select::Scope;

/// What to rank, and how many to keep.
#[derive(Clone, Debug, Default)]
pub struct FeedRequest {
    /// Tags whose profiles rank the papers; every tag when empty.
    pub tags: Vec<String>,
    /// Which papers are new.
    pub scope: Scope,
    /// How many hits to keep.
    pub limit: usize,
    /// Words or phrases every hit must contain.
    pub must: Vec<String>,
    /// Words or phrases no hit may contain.
    pub exclude: Vec<String>,
}

/// Why a paper is in the feed.
#[derive(Clone, Debug)]
pub struct Because {
    /// The tag whose profile ranked it highest.
    pub tag: String,
    /// The liked paper of that tag it is closest to.
    pub liked: Paper,
    /// Their cosine.
    pub similarity: f32,
}

/// One ranked paper; its evidence (on `found`) is the sentence of its
/// abstract that shares most with the liked paper.
#[derive(Clone, Debug)]
pub struct FeedHit {
    /// The paper, its row and its score.
    pub found: Found,
    /// Why; `None` in an unranked feed (no tag yet).
    pub because: Option<Because>,
    /// When the `papers index` run that added it committed (Unix
    /// seconds), where one is recorded: a date for papers that have none.
    pub added: Option<u64>,
    /// How close it is to its tag ([`super::calibration::verdict`]);
    /// `None` in an unranked feed and for a tag with nothing today.
    pub verdict: Verdict,
}

impl FeedHit {
    /// Why it matched, in one sentence of its abstract.
    pub fn evidence(&self) -> &str {
        self.found.evidence.as_deref().unwrap_or_default()
    }
}

/// A ranked feed.
#[derive(Clone, Debug)]
pub struct Feed {
    /// Best first.
    pub hits: Vec<FeedHit>,
    /// What the papers ranked were ("the 300 papers not yet marked").
    pub described: String,
    /// How many new papers were ranked (after `must` and `exclude`).
    pub ranked: usize,
    /// The tags used.
    pub tags: Vec<String>,
    /// Tags left out, with why (only when no tag was named).
    pub skipped: Vec<String>,
    /// Tags none of whose new papers reaches their
    /// [`super::calibration::Calibration::quiet`]: "nothing today close to"
    /// them.
    pub quiet: Vec<String>,
    /// No tag to rank by yet: the papers are listed newest first, each
    /// with a score of 0 and no `because` (see `feed::unranked`).
    pub unranked: bool,
}

impl Feed {
    /// What the feed holds, in a line: "20 ranked of the 300 papers not
    /// yet marked (the inbox), by tags a, b", what an empty inbox or an
    /// unranked feed says instead.
    pub fn summary(&self) -> String {
        if self.unranked {
            format!(
                "{} of {}, newest first: {}",
                self.hits.len(),
                self.described,
                super::UNRANKED_HINT
            )
        } else if self.hits.is_empty() {
            self.described.clone()
        } else if !self.quiet.is_empty() && self.quiet.len() == self.tags.len() {
            format!(
                "nothing today close to {}: the {} closest of {} follow",
                self.quiet.join(", "),
                self.hits.len(),
                self.described,
            )
        } else {
            let quiet = if self.quiet.is_empty() {
                String::new()
            } else {
                format!("; nothing today close to {}", self.quiet.join(", "))
            };
            format!(
                "{} ranked of {}, by tag{} {}{quiet}",
                self.hits.len(),
                self.described,
                if self.tags.len() == 1 { "" } else { "s" },
                self.tags.join(", ")
            )
        }
    }
}
