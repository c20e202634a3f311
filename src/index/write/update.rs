//! Updating an index: the writer lock, and merging a corpus into what is
//! already indexed (only new abstracts need vectors); [`super::commit`]
//! then writes it. A new index and `--rebuild` write a new data folder and
//! switch the manifest to it.

use std::collections::BTreeMap;
use std::path::Path;

use super::commit::{check_vectors, commit_to, Appender, NewRecord, Target};
use crate::corpus::Corpus;
use crate::error::Result;
use crate::index::db::{Db, State};
use crate::index::Index;
use crate::paper::{Paper, Place};

pub use crate::embed::ModelStamp;

/// Counts for the summary line of `papers index`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UpdateReport {
    /// Dumps read.
    pub files: usize,
    /// Files skipped as not being dumps.
    pub skipped: usize,
    /// Paragraphs read, duplicates included.
    pub paragraphs: usize,
    /// Unique abstracts in the input.
    pub unique: usize,
    /// Abstracts that were new to the index and were embedded.
    pub added: usize,
    /// Abstracts of the input already in the index.
    pub already_present: usize,
    /// New places recorded for abstracts already in the index.
    pub new_sources: usize,
    /// Records dropped by `remove`.
    pub removed: usize,
    /// Records replaced by a new version of the same arXiv paper (the old
    /// abstract is dropped; its sources stay with the new record).
    pub replaced: usize,
    /// Lines of JSON Lines inputs that were not records.
    pub bad_lines: usize,
    /// Abstracts of the input left out because the reader removed them.
    pub kept_out: usize,
    /// Records in the index afterwards.
    pub records: usize,
}

/// An index update in progress: the new records and their vectors so far,
/// and the changes to records already indexed. Nothing touches the disk
/// until [`Update::commit`].
pub struct Update {
    /// New records, and their vectors and windows once known.
    pub(super) new: Vec<Paper>,
    pub(super) vectors: Vec<Option<Vec<f32>>>,
    pub(super) windows: Vec<Vec<Vec<f32>>>,
    /// Indexed records whose sources grew: row -> (before, after).
    changed: BTreeMap<usize, (Paper, Paper)>,
    /// Indexed records dropped (removed, or replaced by a new version).
    dropped: BTreeMap<usize, Paper>,
    /// The index updated, unless this writes a new one.
    pub(super) base: Option<Base>,
    /// Whether this is a `papers index` run, recorded as one (see
    /// [`crate::index::runs`]); `remove` and `upgrade` are not.
    run: bool,
    /// Whether the dropped records are the reader's removals, remembered
    /// so that indexing keeps them out (see [`crate::index::removed`]).
    forget: bool,
    pub(super) report: UpdateReport,
}

/// What an update appends to.
pub(super) struct Base {
    pub(super) data: std::path::PathBuf,
    pub(super) state: State,
}

impl Update {
    /// Starts from `existing` (or nothing) and adds `corpus`: each record is
    /// looked up by id (and by arXiv id for new versions), so the cost is
    /// in the size of the corpus, not of the index.
    pub fn new(existing: Option<&Index>, corpus: &Corpus) -> Result<Update> {
        let mut update = Update::from_existing(existing);
        update.run = true;
        update.report = UpdateReport {
            files: corpus.files.len(),
            skipped: corpus.skipped.len(),
            paragraphs: corpus.paragraphs,
            unique: corpus.papers.len(),
            replaced: corpus.replaced,
            bad_lines: corpus.bad_lines.len(),
            ..Default::default()
        };
        for paper in &corpus.papers {
            let Some(index) = existing else {
                update.add(paper.clone());
                continue;
            };
            let place = Place::of(
                paper,
                |id| index.row_of(id),
                |arxiv| {
                    let old = index.resolve_arxiv(arxiv)?;
                    Ok(old.filter(|old| !update.dropped.contains_key(old)))
                },
            )?;
            match place {
                Place::Merge(row) => {
                    update.report.already_present += 1;
                    let (before, mut after) = match update.changed.remove(&row) {
                        Some(entry) => entry,
                        None => {
                            let before = index.paper(row)?;
                            (before.clone(), before)
                        }
                    };
                    update.report.new_sources += after.merge(paper.clone());
                    if after != before {
                        update.changed.insert(row, (before, after));
                    }
                }
                Place::Replace(old) => {
                    let mut paper = paper.clone();
                    let before = match update.changed.remove(&old) {
                        Some((before, after)) => {
                            paper.add_sources(after.sources);
                            before
                        }
                        None => {
                            let before = index.paper(old)?;
                            paper.add_sources(before.sources.clone());
                            before
                        }
                    };
                    update.report.replaced += 1;
                    update.dropped.insert(old, before);
                    update.add(paper);
                }
                Place::New => update.add(paper.clone()),
            }
        }
        Ok(update)
    }

    /// A new record, to be embedded.
    fn add(&mut self, paper: Paper) {
        self.report.added += 1;
        self.new.push(paper);
        self.vectors.push(None);
        self.windows.push(Vec::new());
    }

    /// A new index of `records` with their vectors (the upgrade).
    pub(super) fn of_records(records: impl Iterator<Item = NewRecord>) -> Update {
        let mut update = Update::from_existing(None);
        for (paper, vector, windows) in records {
            update.new.push(paper);
            update.vectors.push(Some(vector));
            update.windows.push(windows);
        }
        update.report.records = update.new.len();
        update
    }

    /// Counts `n` abstracts of the input left out as removed earlier.
    pub fn keep_out(&mut self, n: usize) {
        self.report.kept_out = n;
        self.report.unique += n;
    }

    /// Starts from `existing` and drops the records at `rows`.
    pub fn remove(existing: &Index, rows: &[usize]) -> Result<Update> {
        let mut update = Update::from_existing(Some(existing));
        for &row in rows {
            update.dropped.insert(row, existing.paper(row)?);
        }
        update.report.removed = update.dropped.len();
        update.forget = true;
        Ok(update)
    }

    /// Drops `rows` without remembering them as removed: records an input
    /// no longer holds (an older, cut-off copy of a file that changed),
    /// which come back if an input holds them again.
    pub fn supersede(existing: &Index, rows: &[usize]) -> Result<Update> {
        let mut update = Update::remove(existing, rows)?;
        update.forget = false;
        Ok(update)
    }

    fn from_existing(existing: Option<&Index>) -> Update {
        Update {
            new: Vec::new(),
            vectors: Vec::new(),
            windows: Vec::new(),
            changed: BTreeMap::new(),
            dropped: BTreeMap::new(),
            base: existing.map(|index| Base {
                data: index.data_dir().to_path_buf(),
                state: index.state().clone(),
            }),
            run: false,
            forget: false,
            report: UpdateReport::default(),
        }
    }

    /// The (position, text to embed) of every record that still needs a
    /// vector (see [`Paper::embed_text`]).
    pub fn pending(&self) -> Vec<(usize, std::borrow::Cow<'_, str>)> {
        self.vectors
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_none())
            .map(|(i, _)| (i, self.new[i].embed_text()))
            .collect()
    }

    /// Drops the new records that have no vector yet (a stopped run keeps
    /// what it embedded); returns how many were dropped.
    pub fn drop_unembedded(&mut self) -> usize {
        let before = self.new.len();
        let keep: Vec<bool> = self.vectors.iter().map(Option::is_some).collect();
        let mut i = 0;
        self.new.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        let mut i = 0;
        self.windows.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        self.vectors.retain(Option::is_some);
        let dropped = before - self.new.len();
        self.report.added -= dropped;
        dropped
    }

    /// The record at `position` (as [`Update::pending`] names it).
    pub fn paper(&self, position: usize) -> &Paper {
        &self.new[position]
    }

    /// Whether the update changes nothing on disk.
    pub fn is_noop(&self) -> bool {
        self.base.is_some()
            && self.new.is_empty()
            && self.changed.is_empty()
            && self.dropped.is_empty()
    }

    /// The counts so far.
    pub fn report(&self) -> &UpdateReport {
        &self.report
    }

    /// Commits the update. New records get the rows after the committed
    /// ones, in id order, so the same inputs always give the same files.
    pub fn commit(mut self, dir: &Path, stamp: &ModelStamp) -> Result<UpdateReport> {
        let mut new = Vec::with_capacity(self.new.len());
        for ((paper, vector), windows) in self
            .new
            .drain(..)
            .zip(self.vectors.drain(..))
            .zip(self.windows.drain(..))
        {
            check_vectors(&paper, vector.as_ref(), &windows, stamp.dimension)?;
            new.push((paper, vector.expect("checked"), windows));
        }
        new.sort_by_key(|(paper, _, _)| paper.id);
        let base = self.base.take().map(|base| (base.data, base.state));
        // The stored graphs are a cache of committed rows, built by the
        // session's commit after this one (`super::session`).
        let (state, _) = commit_to(dir, base, stamp, |target| {
            self.append(target, stamp.dimension, &new)
        })?;
        self.report.records = state.live as usize;
        Ok(self.report)
    }

    /// Appends `new` to the target folder, applies the changes to records
    /// already indexed, and commits.
    fn append(&self, target: &Target, dimension: usize, new: &[NewRecord]) -> Result<State> {
        let mut appender = Appender::new(target, dimension);
        let first = appender.next_row() as usize;
        appender.rows(new)?;
        let mut db = Db::open(&target.data, true)?;
        let mut tx = db.begin()?;
        let papers: Vec<&Paper> = new.iter().map(|(paper, _, _)| paper).collect();
        let live = self.write_records(&mut tx, target, first, &papers)?;
        appender.commit(tx, live)
    }

    /// Writes the update's records into `tx`: the dropped and changed ones,
    /// and `new` from row `first` on. Returns the live records after it.
    pub(super) fn write_records(
        &self,
        tx: &mut crate::index::db::Writer<'_>,
        target: &Target,
        first: usize,
        new: &[&Paper],
    ) -> Result<u64> {
        for (&row, before) in &self.dropped {
            tx.kill(row, before)?;
            if self.forget {
                tx.forget(before)?;
            }
        }
        for (&row, (before, after)) in &self.changed {
            tx.replace(row, before, after)?;
        }
        for (i, paper) in new.iter().enumerate() {
            tx.insert(first + i, paper)?;
        }
        if self.run {
            tx.record_run(first, new.len())?;
        }
        Ok(target.state.live + new.len() as u64 - self.dropped.len() as u64)
    }
}
