//! `papers remove`: records dropped from the index for good (and their
//! removal forgotten with `--undo`), and the records a changed input no
//! longer holds (`papers watch`). No model is needed: a removal commits
//! the rest of the index as it is.

use std::path::Path;

use super::request::{begin_existing, Observer};
use crate::corpus::Corpus;
use crate::error::{Error, Result};
use crate::id::Wanted;
use crate::index::write::Outcome;
use crate::index::{Index, Update, UpdateReport};

/// Drops the records named by `ids` (ids, unique prefixes or arXiv ids)
/// from the index at `dir` and commits the rest, remembering them so that
/// indexing keeps them out (see `crate::index::removed`); no model is
/// needed. Returns the report and the records removed.
pub fn remove(
    dir: &Path,
    ids: &[String],
    observer: &dyn Observer,
) -> Result<(UpdateReport, Vec<crate::paper::Paper>)> {
    let session = begin_existing(dir, observer)?;
    let index = session.existing()?;
    let rows = resolve_all(index, ids)?;
    let papers = rows
        .iter()
        .map(|&row| index.paper(row))
        .collect::<Result<Vec<_>>>()?;
    let report = Update::remove(index, &rows)?.commit(dir, &index.manifest().stamp())?;
    session.commit(Outcome::Changed)?;
    Ok((report, papers))
}

/// What one or more inputs brought to an index: the rows of the records
/// seen only in them, and how many of theirs were also seen elsewhere.
#[derive(Clone, Debug, Default)]
pub struct FromSources {
    /// Rows of records every source of which is one of the inputs.
    pub rows: Vec<usize>,
    /// Records seen in the inputs and in another one too: kept, since
    /// another input brought them as well.
    pub shared: usize,
}

/// The records the inputs `sources` brought (each a file name or a path,
/// as `papers info` lists them): an input that brought no record is an
/// error naming it.
pub fn from_sources(index: &Index, sources: &[String]) -> Result<FromSources> {
    let mut found = FromSources::default();
    let mut named = vec![false; sources.len()];
    // An index has few inputs and many records: each input path is
    // matched once.
    let mut matches: std::collections::HashMap<(String, String), Vec<bool>> =
        std::collections::HashMap::new();
    index.for_each_paper(|row, paper| {
        let mut here = false;
        let mut elsewhere = false;
        for source in &paper.sources {
            let which = matches
                .entry((source.file.clone(), source.path.clone()))
                .or_insert_with(|| sources.iter().map(|given| source.named_by(given)).collect());
            let mut this = false;
            for (hit, seen) in which.iter().zip(named.iter_mut()) {
                if *hit {
                    *seen = true;
                    this = true;
                }
            }
            here |= this;
            elsewhere |= !this;
        }
        match (here, elsewhere) {
            (true, false) => found.rows.push(row),
            (true, true) => found.shared += 1,
            _ => {}
        }
        Ok(())
    })?;
    if let Some((given, _)) = sources.iter().zip(&named).find(|(_, seen)| !**seen) {
        return Err(Error::InvalidArgument {
            name: "--source".into(),
            reason: format!(
                "no record of the index was read from `{given}` (`papers info` lists the inputs)"
            ),
        });
    }
    Ok(found)
}

/// Drops the records that the inputs `sources` brought and no other input
/// did ([`from_sources`]), as [`remove`] drops records by id. Returns the
/// report, the records removed and how many were kept for another input.
pub fn remove_sources(
    dir: &Path,
    sources: &[String],
    observer: &dyn Observer,
) -> Result<(UpdateReport, Vec<crate::paper::Paper>, usize)> {
    let session = begin_existing(dir, observer)?;
    let index = session.existing()?;
    let found = from_sources(index, sources)?;
    if found.rows.is_empty() {
        return Err(Error::InvalidArgument {
            name: "--source".into(),
            reason: format!(
                "nothing removed: each of the {} records read from it is also in another input",
                found.shared
            ),
        });
    }
    let papers = found
        .rows
        .iter()
        .map(|&row| index.paper(row))
        .collect::<Result<Vec<_>>>()?;
    let report = Update::remove(index, &found.rows)?.commit(dir, &index.manifest().stamp())?;
    session.commit(Outcome::Changed)?;
    Ok((report, papers, found.shared))
}

/// Drops the records that came only from `path` and that it no longer
/// holds: after a file that was indexed changed and was indexed again
/// (`papers watch`), the records of its older version (a download cut off
/// mid-abstract) do not stay beside the new ones. Returns how many went.
pub fn drop_superseded(
    dir: &Path,
    path: &Path,
    fields: &crate::input::Fields,
    observer: &dyn Observer,
) -> Result<usize> {
    let now: std::collections::HashSet<crate::paper::PaperId> =
        Corpus::load_with(&[path.to_path_buf()], fields)?
            .papers
            .iter()
            .map(|p| p.id)
            .collect();
    let session = begin_existing(dir, observer)?;
    let index = session.existing()?;
    let shown = path.display().to_string();
    let mut gone = Vec::new();
    index.for_each_paper(|row, paper| {
        let only_here = paper.sources.iter().all(|s| s.path == shown);
        if only_here && !paper.sources.is_empty() && !now.contains(&paper.id) {
            gone.push(row);
        }
        Ok(())
    })?;
    if gone.is_empty() {
        return Ok(0);
    }
    gone.sort_unstable();
    Update::supersede(index, &gone)?.commit(dir, &index.manifest().stamp())?;
    session.commit(Outcome::Changed)?;
    Ok(gone.len())
}

/// The distinct rows `ids` name, in row order; the first id that names
/// nothing is the error.
pub fn resolve_all(index: &Index, ids: &[String]) -> Result<Vec<usize>> {
    let mut rows = ids
        .iter()
        .map(|id| index.resolve(&Wanted::parse(id)))
        .collect::<Result<Vec<_>>>()?;
    rows.sort_unstable();
    rows.dedup();
    Ok(rows)
}

/// Forgets the removals `ids` name (full ids, unique prefixes of at
/// least four digits, or arXiv ids, among the removed papers), so that the
/// next `papers index` of their input brings them back. Returns the
/// records whose removal was forgotten.
pub fn unremove(
    dir: &Path,
    ids: &[String],
    observer: &dyn Observer,
) -> Result<Vec<crate::paper::Paper>> {
    let session = begin_existing(dir, observer)?;
    let index = session.existing()?;
    let removals = index.db().removals()?;
    let mut chosen: Vec<crate::paper::Paper> = Vec::new();
    for id in ids {
        let Wanted {
            text: wanted,
            arxiv,
        } = Wanted::parse(id);
        let matches: Vec<&crate::paper::Paper> = removals
            .iter()
            .map(|r| &r.paper)
            .filter(|p| match &arxiv {
                Some(a) => p.arxiv_id() == Some(a.as_str()),
                None => wanted.len() >= 4 && p.id.hex().starts_with(&wanted.to_ascii_lowercase()),
            })
            .collect();
        match matches.as_slice() {
            [] => {
                return Err(Error::InvalidArgument {
                    name: "--undo".into(),
                    reason: format!(
                        "`{id}` names no removed paper (`papers remove --list` lists them)"
                    ),
                })
            }
            [paper] => {
                if !chosen.iter().any(|c| c.id == paper.id) {
                    chosen.push((*paper).clone());
                }
            }
            many => {
                return Err(Error::AmbiguousId {
                    prefix: id.clone(),
                    candidates: many.iter().map(|p| p.id.hex()).collect(),
                })
            }
        }
    }
    let full: Vec<String> = chosen.iter().map(|p| p.id.hex()).collect();
    session.database()?.unremove(&full)?;
    session.commit(Outcome::Changed)?;
    Ok(chosen)
}
