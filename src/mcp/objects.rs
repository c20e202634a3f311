//! What the MCP tools answer about one thing: a paper (`show`, and a
//! paper resource), the index (`info`), the tags (`tags`) and what a write
//! changed (`tag`, `untag`, `mark`). Like the lists of [`super::answer`],
//! each is `structuredContent` whose JSON Schema is the tool's
//! `outputSchema`, and each is bounded: an abstract is cut at
//! [`FULL_ABSTRACT_BYTES`], `info` names at most 100 input files, `tags`
//! lists at most 500.

use schemars::JsonSchema;
use serde::Serialize;

use super::answer::{clip, title, uri};
use crate::feed::TagSummary;
use crate::paper::Paper;

/// The longest abstract `show` and a paper resource give, in bytes.
pub const FULL_ABSTRACT_BYTES: usize = 24_000;
/// Input files `info` names (the rest are counted).
const MAX_SOURCES: usize = 100;

/// One paper in full: what `show` answers and a paper resource holds.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PaperView {
    /// The paper's id (16 hex digits).
    pub id: String,
    /// `papers://paper/{id}`.
    pub uri: String,
    /// The title, else the abstract's first sentence.
    pub title: String,
    /// Authors, when known.
    pub authors: Vec<String>,
    /// The arXiv id, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arxiv_id: Option<String>,
    /// Publication date (YYYY-MM-DD), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    /// The day a daily list featured it (YYYY-MM-DD), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listed: Option<String>,
    /// arXiv categories, when known.
    pub categories: Vec<String>,
    /// The abstract (untrusted text), cut at 24,000 bytes.
    #[serde(rename = "abstract")]
    pub abstract_text: String,
    /// The input files it was seen in.
    pub sources: Vec<String>,
    /// A BibTeX entry for it.
    pub bibtex: String,
}

/// `paper` in full.
pub fn paper(paper: &Paper) -> PaperView {
    let meta = paper.meta.as_ref();
    let mut sources: Vec<String> = paper.sources.iter().map(|s| s.file.clone()).collect();
    sources.dedup();
    PaperView {
        id: paper.id.hex(),
        uri: uri(&paper.id.hex()),
        title: title(paper),
        authors: meta.map(|m| m.authors.clone()).unwrap_or_default(),
        arxiv_id: paper.arxiv_id().map(str::to_string),
        published: meta.and_then(|m| m.published.clone()),
        listed: meta.and_then(|m| m.listed.clone()),
        categories: meta.map(|m| m.categories.clone()).unwrap_or_default(),
        abstract_text: clip(&paper.text, FULL_ABSTRACT_BYTES),
        sources,
        bibtex: crate::output::export::render(
            std::slice::from_ref(paper),
            crate::output::export::Export::Bibtex,
        ),
    }
}

/// The reader's tags: what `tags` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Tags {
    /// How many tags there are.
    pub total: usize,
    /// How many are in `tags`.
    pub returned: usize,
    /// True when tags were left out (more than 500).
    pub truncated: bool,
    /// The tags, by name.
    pub tags: Vec<TagView>,
}

/// The reader's reading list: what `reading_list` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ReadingList {
    /// `saved` or `read`.
    pub state: String,
    /// How many papers are so marked.
    pub total: usize,
    /// How many are in `papers`.
    pub returned: usize,
    /// True when papers were left out (more than 500).
    pub truncated: bool,
    /// The papers, the newest mark first.
    pub papers: Vec<ListedPaper>,
}

/// A paper of the reading list.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ListedPaper {
    /// The paper's id: pass it to `show`.
    pub id: String,
    /// The paper as a resource: `papers://paper/{id}`.
    pub uri: String,
    /// The title, else the abstract's first sentence, shortened.
    pub title: String,
    /// The arXiv id, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arxiv_id: Option<String>,
}

/// `reading_list` for an agent.
pub fn reading_list(state: &str, papers: &[crate::paper::Paper]) -> ReadingList {
    let listed: Vec<ListedPaper> = papers
        .iter()
        .take(MAX_LISTED)
        .map(|p| ListedPaper {
            id: p.id.hex(),
            uri: super::answer::uri(&p.id.hex()),
            title: super::answer::title(p),
            arxiv_id: p.arxiv_id().map(str::to_string),
        })
        .collect();
    ReadingList {
        state: state.to_string(),
        total: papers.len(),
        returned: listed.len(),
        truncated: listed.len() < papers.len(),
        papers: listed,
    }
}

/// The most tags `tags` lists.
const MAX_TAGS: usize = 500;

/// The most papers `reading_list` lists.
const MAX_LISTED: usize = 500;

/// `tags` for an agent.
pub fn tags(tags: &[TagSummary]) -> Tags {
    let listed: Vec<TagView> = tags.iter().take(MAX_TAGS).map(TagView::from).collect();
    Tags {
        total: tags.len(),
        returned: listed.len(),
        truncated: listed.len() < tags.len(),
        tags: listed,
    }
}

/// One tag.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TagView {
    /// Its name.
    pub tag: String,
    /// Papers liked under it.
    pub liked: usize,
    /// Papers marked not interested under it.
    pub not_interested: usize,
    /// Tagged papers no longer in the index.
    pub missing: usize,
}

impl From<&TagSummary> for TagView {
    fn from(t: &TagSummary) -> TagView {
        TagView {
            tag: t.name.clone(),
            liked: t.liked,
            not_interested: t.disliked,
            missing: t.missing,
        }
    }
}

/// A tag after `tag` or `untag` changed it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TagChanged {
    /// The tag as it is now.
    #[serde(flatten)]
    pub tag: TagView,
    /// How many papers were newly marked, or taken out.
    pub changed: usize,
}

/// What `mark` did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Marked {
    /// The state given (`seen`, `read`, `saved` or `new`).
    pub state: String,
    /// Papers whose state changed.
    pub changed: usize,
    /// Papers named that were in that state already.
    pub unchanged: usize,
    /// Papers left in the inbox (not marked).
    pub inbox: usize,
}

impl From<&crate::feed::MarkChange> for Marked {
    fn from(c: &crate::feed::MarkChange) -> Marked {
        Marked {
            state: c.state.name().into(),
            changed: c.changed,
            unchanged: c.unchanged,
            inbox: c.inbox,
        }
    }
}

/// What the index holds: what `info` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct InfoView {
    /// The index folder.
    pub path: String,
    /// Papers in it.
    pub records: usize,
    /// The embedding model.
    pub model: String,
    /// The vectors' dimension.
    pub dimension: usize,
    /// Commits so far.
    pub generation: u64,
    /// Bytes on disk.
    pub size_bytes: u64,
    /// The input files, with how many papers each gave (the first 100 by
    /// name).
    pub sources: Vec<SourceCount>,
    /// How many input files `sources` leaves out.
    pub more_sources: usize,
}

/// One input file.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SourceCount {
    /// Its name.
    pub file: String,
    /// Papers from it.
    pub records: usize,
}

/// `info` for an agent.
pub fn info(info: &crate::search::Info) -> InfoView {
    InfoView {
        path: info.path.display().to_string(),
        records: info.records,
        model: info.manifest.model.clone(),
        dimension: info.manifest.dimension,
        generation: info.generation,
        size_bytes: info.size_bytes,
        more_sources: info.sources.len().saturating_sub(MAX_SOURCES),
        sources: info
            .sources
            .iter()
            .take(MAX_SOURCES)
            .map(|(file, &records)| SourceCount {
                file: file.clone(),
                records,
            })
            .collect(),
    }
}
