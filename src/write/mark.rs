//! `papers mark`: the write side of the inbox ([`crate::feed::inbox`]), a
//! paper's reading state set in one transaction of a write session.

use std::collections::HashSet;
use std::path::Path;

use super::request::{begin_existing, Observer};
use crate::error::{Error, Result};
use crate::feed::inbox::{unmarked, MarkChange, Marked};
use crate::id::Wanted;
use crate::index::reading::ReadingState;
use crate::index::write::Outcome;

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
    let session = begin_existing(dir, observer)?;
    let index = session.existing()?;
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
    let mut db = session.database()?;
    let changed = db.set_marks(&ids, state)?;
    // The records are as they were: only the marks changed.
    let inbox = unmarked(index, db.marked_rows()?).len();
    drop(db);
    session.commit(Outcome::Changed)?;
    Ok(MarkChange {
        state,
        changed,
        unchanged: ids.len() - changed,
        inbox,
    })
}
