//! The inbox: every paper the reader has not marked. `papers mark` sets a
//! paper's reading state (seen, read, saved; `new` takes the mark away),
//! kept in the index's database by id ([`crate::index::reading`]), so that
//! the feed ranks what the reader has not seen, whatever `papers index`
//! runs happened since: a run that adds nothing leaves the inbox as it was.
//! Each change is one transaction under the index's writer lock.

use std::collections::HashSet;
use std::path::Path;

use crate::error::{Error, Result};
use crate::id::Wanted;
use crate::index::db::Db;
use crate::index::reading::ReadingState;
use crate::index::Index;
use crate::write::{lock_index, Observer};

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

/// Gives `which` papers of the index in `dir` the state `state`. An
/// unknown id is an error and changes nothing; an id named twice counts
/// once.
pub fn mark(
    dir: &Path,
    state: ReadingState,
    which: &Marked,
    observer: &dyn Observer,
) -> Result<MarkChange> {
    if which == &Marked::Ids(Vec::new()) {
        return Err(Error::InvalidArgument {
            name: "ID".into(),
            reason: "name the papers to mark (ids, or --all)".into(),
        });
    }
    let _lock = lock_index(dir, observer)?;
    let index = Index::open(dir)?;
    let ids: Vec<String> = match which {
        Marked::All if state == ReadingState::New => index
            .marks()?
            .into_iter()
            .filter(|m| m.state == ReadingState::Seen)
            .map(|m| m.id)
            .collect(),
        Marked::AllKept if state == ReadingState::New => {
            index.marks()?.into_iter().map(|m| m.id).collect()
        }
        Marked::All | Marked::AllKept => {
            let marked: HashSet<String> = index.marks()?.into_iter().map(|m| m.id).collect();
            let live = index.db().live_ids()?;
            live.into_iter().filter(|id| !marked.contains(id)).collect()
        }
        Marked::Ids(given) => {
            let mut seen = HashSet::new();
            let mut ids = Vec::new();
            for id in given {
                let hex = index.paper(index.resolve(&Wanted::parse(id))?)?.id.hex();
                if seen.insert(hex.clone()) {
                    ids.push(hex);
                }
            }
            ids
        }
    };
    let mut db = Db::open(index.data_dir(), true)?;
    let changed = db.set_marks(&ids, state)?;
    // The records are as they were: only the marks changed.
    let inbox = unmarked(&index, db.marked_rows()?).len();
    Ok(MarkChange {
        state,
        changed,
        unchanged: ids.len() - changed,
        inbox,
    })
}

/// The live rows of `index` that the reader has not marked, ascending.
pub fn inbox_rows(index: &Index) -> Result<Vec<usize>> {
    let marked = index.db().marked_rows()?;
    Ok(unmarked(index, marked))
}

/// The live rows of `index` not among `marked`, ascending.
fn unmarked(index: &Index, marked: Vec<usize>) -> Vec<usize> {
    let marked: HashSet<usize> = marked.into_iter().collect();
    (0..index.rows())
        .filter(|&r| index.is_live(r) && !marked.contains(&r))
        .collect()
}
