//! Which papers the feed ranks. By default the inbox: every paper the
//! reader has not marked (so `papers index today.txt && papers feed` is
//! the daily loop, and an index run that adds nothing changes nothing); or
//! those added or published since a date; or the records of given input
//! files.

use std::collections::{BTreeSet, HashSet};

use crate::analysis::Analysis;

use crate::error::{Error, Result};
use crate::index::Index;
use crate::paper::format_date;

/// What counts as new.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// Every paper the reader has not marked (see [`super::inbox`]).
    #[default]
    Inbox,
    /// Records added by a run on or after this day (UTC), or published
    /// on or after it; `YYYYMMDD`.
    Since(u32),
    /// Records seen in these input files (as `sources[].file` or `.path`
    /// name them).
    From(Vec<String>),
}

/// The new papers' rows, and a phrase saying what they are.
#[derive(Clone, Debug)]
pub struct Selection {
    /// Live rows, ascending.
    pub rows: Vec<usize>,
    /// "the 300 papers not yet marked (the inbox)".
    pub described: String,
}

/// The rows `scope` names in `index`; nothing new is an error that says
/// what to try instead.
pub fn select(index: &Index, scope: &Scope) -> Result<Selection> {
    let (rows, described): (BTreeSet<usize>, String) = match scope {
        Scope::Inbox => {
            let rows: BTreeSet<usize> = super::inbox::inbox_rows(index)?.into_iter().collect();
            let n = rows.len();
            let described = format!("the {n} papers not yet marked (the inbox)");
            (rows, described)
        }
        Scope::Since(date) => {
            let at = unix_of(*date);
            let mut rows: BTreeSet<usize> = index
                .runs_since(at)?
                .iter()
                .flat_map(|run| run.range())
                .filter(|&r| index.is_live(r))
                .collect();
            rows.extend(index.rows_dated(*date, 99_991_231)?);
            let since = format_date(*date);
            if rows.is_empty() {
                return Err(Error::Feed(format!(
                    "nothing new: no record was added or published since {since}"
                )));
            }
            let n = rows.len();
            (
                rows,
                format!("the {n} records added or published since {since}"),
            )
        }
        Scope::From(files) => {
            let mut rows = BTreeSet::new();
            index.for_each_paper(|row, paper| {
                if paper
                    .sources
                    .iter()
                    .any(|s| files.iter().any(|f| s.named_by(f)))
                {
                    rows.insert(row);
                }
                Ok(())
            })?;
            let names = files.join(", ");
            if rows.is_empty() {
                return Err(Error::Feed(format!(
                    "nothing new: no record of the index was read from {names}"
                )));
            }
            let n = rows.len();
            (rows, format!("the {n} records of {names}"))
        }
    };
    Ok(Selection {
        rows: rows.into_iter().collect(),
        described,
    })
}

/// The rows of `rows` that are not `tagged`, hold every one of `must`
/// and none of `exclude` (words or phrases).
pub(super) fn kept(
    index: &Index,
    rows: &[usize],
    tagged: &HashSet<usize>,
    must: &[String],
    exclude: &[String],
) -> Result<Vec<usize>> {
    let analysis = Analysis::CURRENT;
    let must = terms_of(must, analysis);
    let exclude = terms_of(exclude, analysis);
    let mut candidates = Vec::new();
    for &row in rows {
        if tagged.contains(&row) {
            continue;
        }
        if !must.is_empty() || !exclude.is_empty() {
            let paper = index.paper(row)?;
            let words: HashSet<String> = analysis.terms(&paper.embed_text()).into_iter().collect();
            let has = |t: &HashSet<String>| t.is_subset(&words);
            if !must.iter().all(has) || exclude.iter().any(has) {
                continue;
            }
        }
        candidates.push(row);
    }
    Ok(candidates)
}

/// Each keyword argument as the set of its analysed terms (a phrase must
/// have all of them); arguments with no term are dropped.
pub(super) fn terms_of(words: &[String], analysis: Analysis) -> Vec<HashSet<String>> {
    words
        .iter()
        .map(|w| analysis.terms(w).into_iter().collect::<HashSet<String>>())
        .filter(|t| !t.is_empty())
        .collect()
}

pub use crate::date::{day_of, unix_of};
