//! `papers feed` and `papers tags` for people and for scripts.
//!
//! `feed --json` writes JSON Lines, best first: each line is a search hit
//! object (`rank`, `id`, `score`, `headline`, `text`, `sources`, and
//! `arxiv_id`, `title`, `authors`, `published` where the record has them;
//! see [`super::json`]), with `evidence` (the sentence of the abstract that
//! shares most with the liked paper below) and:
//!
//! | field     | type   | meaning                                                  |
//! |-----------|--------|----------------------------------------------------------|
//! | `tag`     | string | the tag whose profile ranked it highest                  |
//! | `because` | object | `{id, headline, similarity}`: the liked paper of that tag it is closest to, and their cosine |
//!
//! `score` is in (0, 1): the paper's standing among the new papers for its
//! tag, 0.5 for the batch's average (see [`crate::feed::daily`]).
//!
//! `tags --json` writes one line per tag: `{tag, liked, not_interested,
//! missing}` (`missing`: tagged papers no longer in the index).

use std::io::{self, Write};

use super::human::{paint, BOLD, DIM, GREEN, YELLOW};
use super::json::hit_objects;
use crate::feed::{Feed, TagSummary};
use crate::paper::headline;
use crate::search::{Annotations, Results};

/// The feed's hits as JSON objects, in order.
pub fn feed_objects(feed: &Feed) -> Vec<String> {
    let results = Results {
        found: feed.hits.iter().map(|h| h.found.clone()).collect(),
        notes: Annotations {
            evidence: feed
                .hits
                .iter()
                .map(|h| h.because.evidence.clone())
                .collect(),
            ..Default::default()
        },
    };
    hit_objects(&results)
        .into_iter()
        .zip(&feed.hits)
        .map(|(object, hit)| {
            let b = &hit.because;
            // Both are JSON objects: splice the extra fields in at the end.
            format!(
                "{},\"tag\":{},\"because\":{{\"id\":{},\"headline\":{},\"similarity\":{}}}}}",
                object.trim_end_matches('}'),
                json(&b.tag),
                json(&b.liked.id.hex()),
                json(&b.liked.headline()),
                json(&b.similarity),
            )
        })
        .collect()
}

/// JSON text of a string or number.
fn json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

pub(super) fn lines<W: Write>(out: &mut W, feed: &Feed) -> io::Result<()> {
    feed_objects(feed)
        .iter()
        .try_for_each(|o| writeln!(out, "{o}"))
}

pub(super) fn table<W: Write>(
    out: &mut W,
    feed: &Feed,
    color: bool,
    width: usize,
) -> io::Result<()> {
    writeln!(
        out,
        "{}",
        paint(
            &format!(
                "{} ranked of {}, by tag{} {}",
                feed.hits.len(),
                feed.described,
                if feed.tags.len() == 1 { "" } else { "s" },
                feed.tags.join(", ")
            ),
            DIM,
            color
        )
    )?;
    let rank_width = feed.hits.len().to_string().len();
    let indent = " ".repeat(rank_width + 1);
    writeln!(
        out,
        "{:>rank_width$} score  {:<10}  title  [tag]",
        "#", "id"
    )?;
    for (i, hit) in feed.hits.iter().enumerate() {
        let paper = &hit.found.paper;
        let id = paper
            .arxiv_id()
            .map(str::to_string)
            .unwrap_or_else(|| paper.id.short());
        let tag = format!("[{}]", hit.because.tag);
        let fixed = rank_width + 1 + 5 + 2 + 10 + 2 + 2 + tag.chars().count();
        let room = width.saturating_sub(fixed).max(30);
        writeln!(
            out,
            "{:>rank_width$} {}  {}  {}  {}",
            i + 1,
            paint(&format!("{:.3}", hit.found.hit.score), GREEN, color),
            paint(&format!("{id:<10}"), YELLOW, color),
            paint(&headline(&paper.headline(), room), BOLD, color),
            paint(&tag, DIM, color),
        )?;
        let room = width.saturating_sub(indent.len() + 2).max(30);
        writeln!(
            out,
            "{indent}\u{203a} {}",
            headline(&hit.because.evidence, room.saturating_mul(2))
        )?;
        let like = format!(
            "like {} {} ({:.2})",
            hit.because.liked.id.short(),
            headline(
                &hit.because.liked.headline(),
                room.saturating_sub(20).max(20)
            ),
            hit.because.similarity
        );
        writeln!(out, "{indent}  {}", paint(&like, DIM, color))?;
    }
    Ok(())
}

/// The tags as the objects `tags --json` prints.
pub fn tag_objects(tags: &[TagSummary]) -> Vec<String> {
    tags.iter()
        .map(|t| {
            format!(
                "{{\"tag\":{},\"liked\":{},\"not_interested\":{},\"missing\":{}}}",
                json(&t.name),
                t.liked,
                t.disliked,
                t.missing
            )
        })
        .collect()
}

pub(super) fn tags<W: Write>(out: &mut W, tags: &[TagSummary], as_json: bool) -> io::Result<()> {
    if as_json {
        return tag_objects(tags)
            .iter()
            .try_for_each(|o| writeln!(out, "{o}"));
    }
    if tags.is_empty() {
        return writeln!(out, "no tags yet: `papers tag NAME ID...` starts one");
    }
    let name_width = tags
        .iter()
        .map(|t| t.name.chars().count())
        .max()
        .unwrap_or(3)
        .max(3);
    writeln!(
        out,
        "{:<name_width$}  {:>5}  {:>14}  {:>7}",
        "tag", "liked", "not interested", "missing"
    )?;
    for t in tags {
        writeln!(
            out,
            "{:<name_width$}  {:>5}  {:>14}  {:>7}",
            t.name, t.liked, t.disliked, t.missing
        )?;
    }
    Ok(())
}
