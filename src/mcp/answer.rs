//! What the MCP tools that list papers (`search`, `similar`, `feed`) answer:
//! `structuredContent` (its JSON Schema, derived from these types, is the
//! tool's `outputSchema`) and, as JSON text, the text block older clients
//! read.
//!
//! A list says how much it holds (`total` found, `returned`, `truncated`)
//! and at what `detail`: `titles` (id, title, score, arXiv id, date),
//! `evidence` (adds the first authors and the sentence that matched) or
//! `abstract` (adds every author, the categories and the abstract). The
//! hits are cut so that the whole answer (the structured object, the same
//! as escaped JSON text, and a resource link per hit) stays within
//! [`BUDGET_BYTES`], whatever `k` and `detail` ask: under 25,000 tokens at
//! 4 bytes each, the cap agent clients enforce.

use schemars::JsonSchema;
use serde::Serialize;

use crate::feed::Feed;
use crate::paper::Paper;
use crate::request::BadParam;
use crate::search::Results;

/// The most bytes one list answer may take on the wire (less the list's
/// own few fields): 22,000 tokens at 4 bytes each.
pub const BUDGET_BYTES: usize = 88_000;
/// The longest abstract given in a list, in bytes (a longer one is cut at
/// a character boundary and ends with `…`).
pub const LIST_ABSTRACT_BYTES: usize = 4_000;
/// Authors named at `evidence` detail (the rest are counted).
const FIRST_AUTHORS: usize = 3;

/// How much each hit carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Detail {
    /// Id, title, score, arXiv id and date.
    Titles,
    /// Those, the first authors and the evidence sentence.
    #[default]
    Evidence,
    /// Those, every author, the categories and the abstract.
    Abstract,
}

impl Detail {
    /// `detail` by name.
    pub fn parse(text: &str) -> Result<Detail, BadParam> {
        match text {
            "titles" => Ok(Detail::Titles),
            "evidence" => Ok(Detail::Evidence),
            "abstract" => Ok(Detail::Abstract),
            other => Err(BadParam::new(
                "detail",
                format!("'{other}' is not one of titles, evidence, abstract"),
            )),
        }
    }
}

/// A list of papers: what `search`, `similar` and `feed` answer.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Hits {
    /// The detail each hit carries.
    pub detail: Detail,
    /// How many hits were found (at most `k`).
    pub total: usize,
    /// How many are in `hits`.
    pub returned: usize,
    /// True when hits were left out to keep the answer small: ask for a
    /// smaller `k` or a lower `detail` to see the rest.
    pub truncated: bool,
    /// `feed` only: which papers were ranked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranked: Option<String>,
    /// `search` only: the query as searched, when a typo in it was
    /// corrected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub searched: Option<String>,
    /// Best first.
    pub hits: Vec<Hit>,
}

/// One paper in a list.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Hit {
    /// 1-based position.
    pub rank: usize,
    /// The paper's id (16 hex digits): cite it, or pass it to `show`.
    pub id: String,
    /// The paper as a resource: `papers://paper/{id}`.
    pub uri: String,
    /// Search: relevance from 0 to 1. Similar: the cosine. Feed: standing
    /// among the new papers for its tag, 0.5 for their average. Four
    /// decimals.
    pub score: f64,
    /// The title, else the abstract's first sentence, shortened.
    pub title: String,
    /// The arXiv id, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arxiv_id: Option<String>,
    /// Publication date (YYYY-MM-DD), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    /// Authors (the first few at `evidence` detail, all at `abstract`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authors: Option<Vec<String>>,
    /// How many authors `authors` leaves out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub more_authors: Option<usize>,
    /// The sentence of the abstract that matched best (untrusted text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// arXiv categories (`abstract` detail).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub categories: Option<Vec<String>>,
    /// The abstract (`abstract` detail; untrusted text).
    #[serde(rename = "abstract", skip_serializing_if = "Option::is_none")]
    pub abstract_text: Option<String>,
    /// `feed`: the tag whose profile ranked it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// `feed`: the liked paper of that tag it is closest to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub because: Option<Because>,
    /// `search`: the query's verdict, the same on every hit: `strong` (the
    /// best hit is more likely relevant than not), `weak` (papers of the
    /// query's field, none plainly about it) or `none` (nothing in the
    /// index is about it; the closest papers are listed all the same).
    /// `feed`: the paper's own verdict for its tag (`strong` from 0.5,
    /// `weak` from 0.2; `none` under it, and on every paper of a tag with
    /// nothing today).
    #[serde(rename = "match", skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
}

/// Why the feed chose a paper.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Because {
    /// The liked paper's id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Their cosine (four decimals).
    pub similarity: f64,
}

/// `x` to four decimals, without the noise of widening an f32.
fn round(x: f32) -> f64 {
    (f64::from(x) * 1e4).round() / 1e4
}

/// The resource address of a paper.
pub fn uri(id: &str) -> String {
    format!("papers://paper/{id}")
}

/// `text` cut to at most `bytes` at a character boundary, `…` added.
pub fn clip(text: &str, bytes: usize) -> String {
    if text.len() <= bytes {
        return text.to_string();
    }
    let mut end = bytes.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

pub(super) fn title(paper: &Paper) -> String {
    match &paper.meta {
        Some(m) if !m.title.is_empty() => m.title.clone(),
        _ => paper.headline(),
    }
}

/// One hit at `detail`.
fn hit(rank: usize, score: f32, paper: &Paper, evidence: Option<&str>, detail: Detail) -> Hit {
    let meta = paper.meta.as_ref();
    let authors = meta.map(|m| m.authors.as_slice()).unwrap_or_default();
    let shown = match detail {
        Detail::Titles => 0,
        Detail::Evidence => FIRST_AUTHORS.min(authors.len()),
        Detail::Abstract => authors.len(),
    };
    let full = detail == Detail::Abstract;
    Hit {
        rank,
        id: paper.id.hex(),
        uri: uri(&paper.id.hex()),
        score: round(score),
        title: title(paper),
        arxiv_id: paper.arxiv_id().map(str::to_string),
        published: meta.and_then(|m| m.published.clone()),
        authors: (shown > 0).then(|| authors[..shown].to_vec()),
        more_authors: (shown > 0 && authors.len() > shown).then(|| authors.len() - shown),
        evidence: (detail != Detail::Titles)
            .then(|| evidence.filter(|e| !e.is_empty()).map(str::to_string))
            .flatten(),
        categories: meta
            .filter(|m| full && !m.categories.is_empty())
            .map(|m| m.categories.clone()),
        abstract_text: full.then(|| clip(&paper.text, LIST_ABSTRACT_BYTES)),
        tag: None,
        because: None,
        verdict: None,
    }
}

/// A hit's resource link.
pub fn link(hit: &Hit) -> rmcp::model::ContentBlock {
    rmcp::model::ContentBlock::resource_link(
        rmcp::model::Resource::new(hit.uri.clone(), hit.id.clone())
            .with_title(hit.title.clone())
            .with_mime_type("application/json"),
    )
}

/// What one hit adds to an answer on the wire: its object in
/// `structuredContent`, the same again as escaped text, and its link.
fn cost(hit: &Hit) -> usize {
    let object = serde_json::to_string(hit).unwrap_or_default();
    let text = serde_json::to_string(&object).map_or(0, |s| s.len());
    let link = serde_json::to_string(&link(hit)).map_or(0, |s| s.len());
    object.len() + text + link + 3
}

/// Keeps the hits that fit in [`BUDGET_BYTES`], in order.
fn fit(detail: Detail, total: usize, hits: Vec<Hit>, ranked: Option<String>) -> Hits {
    let mut used = 0;
    let mut kept = Vec::with_capacity(hits.len());
    for hit in hits {
        used += cost(&hit);
        if used > BUDGET_BYTES {
            break;
        }
        kept.push(hit);
    }
    Hits {
        detail,
        total,
        returned: kept.len(),
        truncated: kept.len() < total,
        ranked,
        searched: None,
        hits: kept,
    }
}

/// `search`'s or `similar`'s results at `detail`.
pub fn hits(results: &Results, detail: Detail) -> Hits {
    let hits = results
        .found
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut hit = hit(i + 1, f.hit.score, &f.paper, f.evidence.as_deref(), detail);
            hit.verdict = results.notes.verdict.map(|v| v.name().to_string());
            hit
        })
        .collect();
    let mut hits = fit(detail, results.found.len(), hits, None);
    hits.searched = results.notes.searched.clone();
    hits
}

/// The feed at `detail`.
pub fn feed(feed: &Feed, detail: Detail) -> Hits {
    let hits = feed
        .hits
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let mut hit = hit(
                i + 1,
                h.found.hit.score,
                &h.found.paper,
                h.found.evidence.as_deref(),
                detail,
            );
            if let Some(b) = &h.because {
                hit.tag = Some(b.tag.clone());
                hit.verdict = Some(h.verdict.name().into());
                hit.because = (detail != Detail::Titles).then(|| Because {
                    id: b.liked.id.hex(),
                    title: title(&b.liked),
                    similarity: round(b.similarity),
                });
            }
            hit
        })
        .collect();
    fit(
        detail,
        feed.hits.len(),
        hits,
        Some(if feed.unranked || !feed.quiet.is_empty() {
            feed.summary()
        } else {
            format!("{} ({} ranked)", feed.described, feed.ranked)
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_keeps_characters_whole() {
        assert_eq!(clip("short", 10), "short");
        let cut = clip("ééééé", 7);
        assert!(cut.len() <= 7 && cut.ends_with('…'), "{cut}");
        assert_eq!(cut, "éé…");
    }
}
