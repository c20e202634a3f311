//! The tools' arguments as JSON Schema (`inputSchema`). These types only
//! describe the arguments to a client; the calls read them through
//! [`crate::request::Params`], the checks the CLI and the HTTP API use.
#![allow(dead_code)]

use schemars::JsonSchema;

/// How much each hit carries.
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DetailArg {
    /// Id, title, score, arXiv id and date.
    Titles,
    /// Those, the first authors and the sentence that matched (the default).
    Evidence,
    /// Those, every author, the categories and the abstract.
    Abstract,
}

/// Which rankings a search uses.
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModeArg {
    /// Meaning and words, in one calibrated score (the default).
    Hybrid,
    /// Meaning only (the embeddings).
    Semantic,
    /// Words only (BM25).
    Lexical,
}

/// The CLI's filters, under their long names without dashes.
#[derive(JsonSchema)]
pub struct Filters {
    /// Only hits scoring at least this (0 to 1: for search, the relevance
    /// score; for similar, the cosine).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub min_score: Option<f32>,
    /// Only papers published on or after this day (YYYY-MM-DD).
    pub since: Option<String>,
    /// Only papers published on or before this day (YYYY-MM-DD).
    pub until: Option<String>,
    /// Only papers seen in these inputs (file names, as `info` lists them)
    /// or listed on these days (YYYY-MM-DD).
    #[serde(rename = "in")]
    pub within: Option<Vec<String>>,
    /// Only papers listed on or after this day (YYYY-MM-DD).
    pub listed_since: Option<String>,
    /// Only papers listed on or before this day (YYYY-MM-DD).
    pub listed_until: Option<String>,
    /// Only papers with an author whose name contains each of these.
    pub author: Option<Vec<String>>,
    /// Only papers in one of these arXiv categories (`cs` takes `cs.CL`).
    pub category: Option<Vec<String>>,
}

/// `search`'s arguments.
#[derive(JsonSchema)]
pub struct SearchArgs {
    /// What to look for: a question, a topic or a passage. A "quoted
    /// phrase" must appear in each hit and a -word must not.
    pub query: String,
    /// How many papers (1 to 50; default 10).
    #[schemars(range(min = 1, max = 50))]
    pub k: Option<u32>,
    /// Which rankings to use (default hybrid).
    pub mode: Option<ModeArg>,
    /// How much each hit carries (default evidence).
    pub detail: Option<DetailArg>,
    /// Nothing at all when the verdict is `none` (default false: the
    /// closest papers are listed with `match` "none").
    pub strict: Option<bool>,
    /// Search the words as typed, without correcting the ones the index
    /// does not know (default false).
    pub as_typed: Option<bool>,
    /// The filters.
    #[serde(flatten)]
    pub filters: Filters,
}

/// `similar`'s arguments.
#[derive(JsonSchema)]
pub struct SimilarArgs {
    /// Papers to find neighbours of: ids, unique id prefixes (4+ hex
    /// digits) or arXiv ids.
    pub ids: Vec<String>,
    /// Papers to steer away from.
    pub not: Option<Vec<String>>,
    /// How many papers (1 to 50; default 10).
    #[schemars(range(min = 1, max = 50))]
    pub k: Option<u32>,
    /// How much each hit carries (default evidence).
    pub detail: Option<DetailArg>,
    /// The filters.
    #[serde(flatten)]
    pub filters: Filters,
}

/// `show`'s arguments.
#[derive(JsonSchema)]
pub struct ShowArgs {
    /// The paper: its id, a unique prefix of it, or its arXiv id.
    pub id: String,
}

/// No arguments.
#[derive(JsonSchema)]
pub struct NoArgs {}

/// `reading_list`'s arguments.
#[derive(JsonSchema)]
pub struct ReadingListArgs {
    /// `saved` (the default) or `read`.
    pub state: Option<String>,
}

/// `feed`'s arguments.
#[derive(JsonSchema)]
pub struct FeedArgs {
    /// Tags whose profiles rank the papers (default: every tag).
    pub tags: Option<Vec<String>>,
    /// One tag (as the CLI and HTTP name it); with `tags`, both count.
    pub tag: Option<String>,
    /// How many papers (1 to 50; default 10).
    #[schemars(range(min = 1, max = 50))]
    pub k: Option<u32>,
    /// Rank the papers published or added since this day (YYYY-MM-DD)
    /// instead of the inbox (the papers not yet marked).
    pub since: Option<String>,
    /// Rank the papers of these input files instead.
    pub from: Option<Vec<String>>,
    /// Words or "phrases" every paper must contain.
    pub must: Option<Vec<String>>,
    /// Words or "phrases" no paper may contain.
    pub exclude: Option<Vec<String>>,
    /// How much each hit carries (default evidence).
    pub detail: Option<DetailArg>,
}

/// `tag`'s arguments.
#[derive(JsonSchema)]
pub struct TagArgs {
    /// The tag's name (letters, digits, `-`, `_`, `.`).
    pub tag: String,
    /// The papers: ids, unique prefixes or arXiv ids.
    pub ids: Vec<String>,
    /// Mark them not interesting for this tag instead of liked.
    pub not_interested: Option<bool>,
}

/// `untag`'s arguments.
#[derive(JsonSchema)]
pub struct UntagArgs {
    /// The tag's name.
    pub tag: String,
    /// The papers to take out.
    pub ids: Vec<String>,
}

/// A reading state.
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StateArg {
    /// Shown, not wanted now: out of the inbox.
    Seen,
    /// Read: out of the inbox.
    Read,
    /// Kept to read later: out of the inbox.
    Saved,
    /// Back into the inbox.
    New,
}

/// `mark`'s arguments.
#[derive(JsonSchema)]
pub struct MarkArgs {
    /// The state to give the papers.
    pub state: StateArg,
    /// The papers: ids, unique prefixes or arXiv ids.
    pub ids: Vec<String>,
}
