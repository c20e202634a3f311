//! The inbox: every paper the reader has not marked. `papers mark` sets a
//! paper's reading state (seen, read, saved; `new` takes the mark away),
//! kept in the index's database by id ([`crate::index::reading`]), so that
//! the feed ranks what the reader has not seen, whatever `papers index`
//! runs happened since: a run that adds nothing leaves the inbox as it was.
//! Each change is one transaction under the index's writer lock.

use std::collections::HashSet;

use crate::error::Result;
use crate::index::reading::ReadingState;
use crate::index::Index;

/// What a `mark` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkChange {
    /// The state the papers were given.
    pub state: ReadingState,
    /// Papers whose state changed.
    pub changed: usize,
    /// Papers named that were in that state already.
    pub unchanged: usize,
    /// Papers left in the inbox (not marked) after the change.
    pub inbox: usize,
}

/// Which papers to mark.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Marked {
    /// These (ids in any form: full, unique prefixes, arXiv ids).
    Ids(Vec<String>),
    /// Every paper of the inbox (not yet marked), so that `seen --all`
    /// keeps what was saved or read; with `new`, every paper marked seen
    /// (the reading list, saved and read, stays).
    All,
    /// As [`Marked::All`], but with `new` saved and read papers too.
    AllKept,
}

/// The live rows of `index` that the reader has not marked, ascending.
pub fn inbox_rows(index: &Index) -> Result<Vec<usize>> {
    let marked = index.db().marked_rows()?;
    Ok(unmarked(index, marked))
}

/// The live rows of `index` not among `marked`, ascending.
pub(crate) fn unmarked(index: &Index, marked: Vec<usize>) -> Vec<usize> {
    let marked: HashSet<usize> = marked.into_iter().collect();
    (0..index.rows())
        .filter(|&r| index.is_live(r) && !marked.contains(&r))
        .collect()
}
