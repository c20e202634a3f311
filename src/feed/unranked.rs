//! The feed before there is any tag: a new reader's first `papers feed`
//! lists the new papers (the inbox, or what `--since` / `--from` names)
//! newest first, unranked, and says how to start a tag, instead of
//! failing. Each hit's score is 0 and it has no `because`.

use std::collections::HashSet;

use super::answer::{Feed, FeedHit, FeedRequest};
use super::select::{kept, select, Scope};
use crate::error::Result;
use crate::hit::{Found, Hit};
use crate::index::Index;

/// Past this many new papers the order is the order they were added in
/// (the last run's first), without reading each paper for its date.
const DATED_AT_MOST: usize = 20_000;

/// What the feed says when there is no tag to rank by.
pub const HINT: &str = "no tags yet, so nothing is ranked: `papers tag NAME ID...` with a \
                        paper you like starts one, and the next feed ranks by it";

/// The new papers of `request`'s scope newest first: by publication date
/// where a record has one, else by when it was added (a later `papers
/// index` run first), then by input (the name that sorts last first) and
/// in the input's own order.
pub fn feed(index: &Index, request: &FeedRequest) -> Result<Feed> {
    let selection = select(index, &request.scope)?;
    let mut rows = kept(
        index,
        &selection.rows,
        &HashSet::new(),
        &request.must,
        &request.exclude,
    )?;
    // Rows grow with each run: a later row was added later.
    rows.sort_unstable_by(|a, b| b.cmp(a));
    let runs = index.runs_since(0)?;
    let added = |row: usize| {
        runs.iter()
            .find(|run| run.range().contains(&row))
            .map(|run| run.at)
    };
    let mut papers = Vec::new();
    if rows.len() <= DATED_AT_MOST {
        let mut dated = rows
            .iter()
            .map(|&row| Ok((row, index.paper(row)?)))
            .collect::<Result<Vec<_>>>()?;
        // When a paper is new: its publication date, else when the run
        // that added it committed (a text dump's papers are as new as
        // that); then the input named last (dated dumps sort by day),
        // in its own order (a daily list's).
        let when = |row: usize, paper: &crate::paper::Paper| {
            paper
                .date()
                .map(crate::date::unix_of)
                .or_else(|| added(row))
                .unwrap_or(0)
        };
        dated.sort_by_cached_key(|(row, paper)| {
            let last = paper.sources.iter().max_by(|a, b| a.file.cmp(&b.file));
            (
                std::cmp::Reverse(when(*row, paper)),
                std::cmp::Reverse(last.map(|s| s.file.clone())),
                last.map_or(0, |s| s.paragraph),
                *row,
            )
        });
        dated.truncate(request.limit);
        papers = dated;
    } else {
        for &row in rows.iter().take(request.limit) {
            papers.push((row, index.paper(row)?));
        }
    }
    let ranked = rows.len();
    let hits = papers
        .into_iter()
        .map(|(row, paper)| FeedHit {
            found: Found::new(Hit::new(row, 0.0), paper),
            because: None,
            added: added(row),
            verdict: Default::default(),
        })
        .collect();
    let described = if ranked == 0 && request.scope == Scope::Inbox {
        "the inbox is empty: every paper is marked (`papers mark new ID...` puts one back)".into()
    } else {
        selection.described
    };
    Ok(Feed {
        hits,
        described,
        ranked,
        tags: Vec::new(),
        skipped: Vec::new(),
        quiet: Vec::new(),
        unranked: true,
    })
}
