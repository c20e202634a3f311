//! One write, from the lock to the commit. Every writing use case (index,
//! import, remove, tag, mark, upgrade, watch, and the server's and MCP's
//! writes) begins a [`Session`] and ends in its [`Session::commit`]:
//!
//! - [`Session::begin`] looks at the folder (a folder papers did not make
//!   is refused before a lock file is written into it), takes the writer
//!   lock, reads the manifest once under it, upgrades an index of the
//!   previous format, and opens the index from that manifest;
//! - the use case changes what it changes (an [`Update`] committed, the
//!   tags' or the reading marks' table written through [`Session::database`]);
//! - [`Session::commit`] runs the tail every write shares, whatever front
//!   end asked for it: the graphs over rows no stored graph covers yet, a
//!   run that added nothing recorded as a run, and the hook the use-case
//!   layer gave ([`Session::after_commit`]: training the tags the write
//!   made stale), on the index as committed.
//!
//! [`Update`]: super::update::Update

use std::path::{Path, PathBuf};

use super::lock::IndexLock;
use super::ownership::{self, Folder, Surveyed};
use crate::error::{Error, Result};
use crate::index::db::Db;
use crate::index::manifest::{self, Manifest};
use crate::index::Index;

/// What a write needs of the folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Open {
    /// An index that exists (tag, mark, remove, upgrade): a missing one is
    /// [`Error::IndexMissing`], and no folder or lock file is made.
    Existing,
    /// The index if there is one, else a new one (`papers index`).
    OrNew,
    /// A new index in place of the one there (`--rebuild`): nothing of the
    /// old one is opened or upgraded.
    Rebuild,
}

/// How a write ended, for [`Session::commit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It committed a new state (or wrote a table of the reader's).
    Changed,
    /// An index run that found nothing new: still a run (`papers info`'s
    /// and the feed's runs count it).
    EmptyRun,
}

/// What runs once a write has committed, on the index as committed.
pub type AfterCommit<'a> = Box<dyn FnOnce(&Index) + 'a>;

/// One write to an index: the writer lock held, the manifest read once, the
/// index opened from it.
pub struct Session<'a> {
    dir: PathBuf,
    _lock: IndexLock,
    manifest: Option<Manifest>,
    index: Option<Index>,
    upgraded: bool,
    after: Option<AfterCommit<'a>>,
}

impl<'a> Session<'a> {
    /// Begins a write to `dir` (`on_wait` is called once if another writer
    /// makes this one wait; a write with a deadline waits at most
    /// a second, see [`IndexLock::acquire`]).
    pub fn begin(dir: &Path, open: Open, on_wait: impl FnOnce()) -> Result<Session<'a>> {
        Session::begin_in(dir, ownership::survey_reading(dir)?, open, on_wait)
    }

    /// [`Session::begin`] in a folder the caller has surveyed already
    /// ([`ownership::survey_reading`]: `papers index` does before it reads
    /// its inputs), so that it is looked at once. The manifest the survey
    /// read is used when the file is still the one read once the lock is
    /// held; else (a writer committed meanwhile) it is read again.
    pub fn begin_in(
        dir: &Path,
        surveyed: Surveyed,
        open: Open,
        on_wait: impl FnOnce(),
    ) -> Result<Session<'a>> {
        let folder = surveyed.folder;
        if open == Open::Existing && folder == Folder::Fresh {
            return Err(Error::IndexMissing {
                path: dir.to_path_buf(),
            });
        }
        let lock = IndexLock::acquire(dir, on_wait)?;
        let mut session = Session {
            dir: dir.to_path_buf(),
            _lock: lock,
            manifest: None,
            index: None,
            upgraded: false,
            after: None,
        };
        if open == Open::Rebuild {
            return Ok(session);
        }
        let read = match surveyed.manifest_if_unchanged(dir) {
            Some(text) => manifest::version_in(dir, &text).map(|found| (found, text)),
            None => manifest::version(dir),
        };
        let (found, text) = match read {
            Ok(read) => read,
            Err(Error::IndexMissing { .. }) if open == Open::OrNew => return Ok(session),
            Err(e) => return Err(e),
        };
        let manifest = if super::upgrade::is_legacy(found) {
            super::upgrade::convert(dir, &text)?;
            session.upgraded = true;
            // The conversion wrote a manifest of its own.
            Manifest::read(dir)?
        } else {
            Manifest::from_text(dir, found, &text)?
        };
        session.index = Some(Index::open_from(dir, manifest.clone())?);
        session.manifest = Some(manifest);
        Ok(session)
    }

    /// The index directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The index as it was when the write began (none for a new index or a
    /// rebuild).
    pub fn index(&self) -> Option<&Index> {
        self.index.as_ref()
    }

    /// The index, which a write to an existing one has.
    pub fn existing(&self) -> Result<&Index> {
        self.index.as_ref().ok_or_else(|| Error::IndexMissing {
            path: self.dir.clone(),
        })
    }

    /// Whether beginning converted an index of the previous format.
    pub fn upgraded(&self) -> bool {
        self.upgraded
    }

    /// The database of the index, open for writing (the reader's tables:
    /// tags, reading marks, removals).
    pub fn database(&self) -> Result<Db> {
        Db::open(self.existing()?.data_dir(), true)
    }

    /// Gives the hook [`Session::commit`] runs last, on the index as
    /// committed: the use-case layer trains the tags the write made stale
    /// there, so that every front end ends a write the same way.
    pub fn after_commit(&mut self, hook: impl FnOnce(&Index) + 'a) {
        self.after = Some(Box::new(hook));
    }

    /// Ends the write: for an [`Outcome::EmptyRun`], the run recorded;
    /// then the graphs over rows no stored graph covers (those a commit
    /// appended, or a killed run or an older build left unwritten), and the
    /// hook. Returns the index as committed. The lock is released when this
    /// returns.
    pub fn commit(mut self, outcome: Outcome) -> Result<Index> {
        let index = match self.manifest.take() {
            // The manifest is read again only if a commit switched it (a
            // new index, a rebuild, an upgrade).
            Some(manifest) => Index::open_from(&self.dir, manifest)?,
            None => Index::open(&self.dir)?,
        };
        if outcome == Outcome::EmptyRun {
            Db::open(index.data_dir(), true)?.record_empty_run(index.rows())?;
        }
        crate::index::graphs::extend_committed(
            index.data_dir(),
            index.manifest().dimension,
            index.rows(),
        );
        if let Some(hook) = self.after.take() {
            hook(&index);
        }
        Ok(index)
    }
}
