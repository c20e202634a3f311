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
//! | `match`   | string | `strong` (score ≥ 0.5), `weak` or `none` (under 0.2; and every hit of a tag with "nothing today": no new paper as close as most of its liked papers) |
//! | `because` | object | `{id, arxiv_id, headline, similarity}`: the liked paper of that tag it is closest to (`arxiv_id` where it has one), and their cosine |
//!
//! `score` is in (0, 1): the probability that the reader wants the paper,
//! calibrated on its tag's own examples (see [`crate::feed::calibration`]),
//! the same whatever else is new. Before
//! there is any tag the feed is unranked: the new papers newest first,
//! each with `score` 0 and without `tag` and `because`.
//!
//! `tags --json` writes one line per tag: `{tag, liked, not_interested,
//! missing}` (`missing`: tagged papers no longer in the index).

use std::io::{self, Write};

use super::json::hit_objects;
use super::style::{paint, BOLD, DIM, GREEN, YELLOW};
use super::table::{display_id, wrap};
use crate::feed::{Feed, TagSummary};
use crate::search::{Annotations, Results};

/// The feed's hits as JSON objects, in order.
pub fn feed_objects(feed: &Feed) -> Vec<String> {
    let results = Results {
        found: feed.hits.iter().map(|h| h.found.clone()).collect(),
        notes: Annotations::default(),
    };
    hit_objects(&results)
        .into_iter()
        .zip(&feed.hits)
        .map(|(object, hit)| {
            let Some(b) = &hit.because else {
                return object;
            };
            let arxiv = match b.liked.arxiv_id() {
                Some(id) => format!(",\"arxiv_id\":{}", json(&id)),
                None => String::new(),
            };
            // Both are JSON objects: splice the extra fields in at the end.
            format!(
                "{},\"tag\":{},\"match\":{},\"because\":{{\"id\":{}{arxiv},\"headline\":{},\"similarity\":{}}}}}",
                object.trim_end_matches('}'),
                json(&b.tag),
                json(hit.verdict.name()),
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

/// What the feed table's score column means, for the line under it.
const LEGEND: &str = "SCORE: the probability that you want the paper, learnt from its tag's \
                      papers (under 0.2: not close); \"like\": the liked paper of the tag it is \
                      closest to (their cosine), then its title";

/// Writes the feed as a table fitted to `width` columns, as the search
/// table is: titles wrapped on words (two lines, three when narrow), the
/// evidence sentence and the reason (`[tag] like ID (cosine) title`)
/// wrapped under them, a tag never split, and a legend.
pub(super) fn table<W: Write>(
    out: &mut W,
    feed: &Feed,
    color: bool,
    width: usize,
) -> io::Result<()> {
    let summary = feed.summary();
    for line in wrap(&summary, width.max(20), 3) {
        writeln!(out, "{}", paint(&line, DIM, color))?;
    }
    if feed.hits.is_empty() {
        return Ok(());
    }
    let rank_w = feed.hits.len().to_string().len();
    let ids: Vec<String> = feed
        .hits
        .iter()
        .map(|h| display_id(&h.found.paper))
        .collect();
    let id_w = ids
        .iter()
        .map(|i| super::table::columns(i))
        .max()
        .unwrap_or(2)
        .max(2);
    // "#", SCORE, ID and the two spaces after each.
    let fixed = rank_w + 2 + 5 + 2 + id_w + 2;
    let title_w = width.saturating_sub(fixed).max(20);
    let lines = if width < 70 { 3 } else { 2 };
    let indent = " ".repeat(fixed);
    let header = format!("{:>rank_w$}  SCORE  {:<id_w$}  TITLE", "#", "ID");
    writeln!(out, "{}", paint(&header, BOLD, color))?;
    for (i, (hit, id)) in feed.hits.iter().zip(&ids).enumerate() {
        let paper = &hit.found.paper;
        let title = wrap(paper.title_or_key_sentence(), title_w, lines);
        let score = match hit.because {
            Some(_) => format!("{:>5.3}", hit.found.hit.score),
            None => format!("{:>5}", "-"),
        };
        writeln!(
            out,
            "{:>rank_w$}  {}  {}  {}",
            i + 1,
            paint(&score, GREEN, color),
            paint(&format!("{id:<id_w$}"), YELLOW, color),
            paint(title.first().map_or("", String::as_str), BOLD, color),
        )?;
        for more in title.iter().skip(1) {
            writeln!(out, "{indent}{}", paint(more, BOLD, color))?;
        }
        let evidence = hit.evidence();
        if !evidence.is_empty() && evidence != paper.title_or_key_sentence() {
            let evidence = wrap(evidence, title_w.saturating_sub(2), 2);
            for (j, line) in evidence.iter().enumerate() {
                writeln!(out, "{indent}{} {line}", if j == 0 { "›" } else { " " })?;
            }
        }
        if let Some(b) = &hit.because {
            let reason = format!(
                "[{}] like {} ({:.2}) {}",
                b.tag,
                display_id(&b.liked),
                b.similarity,
                b.liked.title_or_key_sentence(),
            );
            for line in wrap(&reason, title_w, 1) {
                writeln!(out, "{indent}{}", paint(&line, DIM, color))?;
            }
        }
    }
    if feed.unranked {
        return Ok(());
    }
    for line in wrap(LEGEND, width.max(20), 4) {
        writeln!(out, "{}", paint(&line, DIM, color))?;
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
