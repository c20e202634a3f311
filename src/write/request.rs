//! What every writing use case shares ([`index`](super::index()) and
//! [`import`](super::import())): what is asked ([`IndexRequest`]), who hears about
//! it ([`Observer`]), and the writer lock with the index opened under it.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use crate::corpus::Skipped;
use crate::embed::ModelChoice;
use crate::error::{Error, Result};
use crate::hint::rebuild_command;
use crate::index::write::ownership::Surveyed;
use crate::index::write::{Open, Session};
use crate::index::Index;
use crate::input::Fields;

/// What the caller hears about while an index is written. Every method
/// has a default that does nothing, so [`Quiet`] is an empty impl.
pub trait Observer: Sync {
    /// An informational line (which model, waiting for the lock).
    fn note(&self, message: &str) {
        let _ = message;
    }

    /// An input file that is not a dump and was skipped.
    fn skipped(&self, skipped: &Skipped) {
        let _ = skipped;
    }

    /// A line of a JSON Lines input that was not read (`reason` starts
    /// with `line N:`).
    fn bad_line(&self, bad: &Skipped) {
        let _ = bad;
    }

    /// Embedding starts: `records` new records in all (their windows are
    /// embedded with them).
    fn embedding(&self, records: usize) {
        let _ = records;
    }

    /// `done` records are embedded (a batch's share counted as its texts
    /// finish); `Break` stops the run: the batches embedded so far are
    /// committed ([`Error::IndexingStopped`]).
    fn embedded(&self, done: usize) -> ControlFlow<()> {
        let _ = done;
        ControlFlow::Continue(())
    }

    /// A run that embedded and committed: where its time went.
    fn pipeline(&self, times: &Pipeline) {
        let _ = times;
    }
}

/// Where a run's time went around the embedding, for `-v`: whether the
/// encoder (a GPU's, above all) was kept waiting.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pipeline {
    /// From the run's start to the first finished group of vectors:
    /// parsing, the model's load, the first group's tokens and encoding.
    pub first_vectors: std::time::Duration,
    /// From the start of the embedding to its end.
    pub embedding: std::time::Duration,
    /// Of that, the time the encoder ran.
    pub encoder: std::time::Duration,
    /// From the last vectors to the end of the commit (graphs included).
    pub after_vectors: std::time::Duration,
}

/// An observer that ignores everything.
pub struct Quiet;

impl Observer for Quiet {}

/// What to index.
#[derive(Clone, Debug, Default)]
pub struct IndexRequest {
    /// Dump files and directories.
    pub paths: Vec<PathBuf>,
    /// Start from an empty index instead of adding to the existing one.
    pub rebuild: bool,
    /// Which model embeds the new records.
    pub model: ModelChoice,
    /// Where the parts of JSON Lines records are.
    pub fields: Fields,
    /// The inputs are JSON Lines records that carry their vectors
    /// (`embedding`), made elsewhere: they are stored, not embedded again.
    pub embeddings: bool,
    /// With `embeddings`, skip re-embedding a sample to check the vectors
    /// come from this model.
    pub no_verify: bool,
    /// Records embedded per batch, the work a stop keeps (0: what the
    /// model's backend takes per group, 256 on a CPU).
    pub batch: usize,
}

/// How many records of an `--embeddings` input are embedded again to check
/// that their vectors are this model's.
pub const VERIFY_SAMPLE: usize = 16;
/// The least cosine between a given vector and the model's own of the same
/// text that passes the check: the same model on other hardware or in
/// another framework agrees to 0.9999; another model lands far below.
pub const VERIFY_COSINE: f32 = 0.99;

/// Begins the write of `papers index` in the folder the caller surveyed
/// (`surveyed`) ([`Session`]: the writer lock, the manifest read once, an
/// old index upgraded and opened; none for `--rebuild` or a new index);
/// checks that a model asked for is the
/// index's. Also returns the papers the reader removed, which stay out
/// (see `index::removed`): a rebuild reads them from the database it
/// replaces.
pub fn open_for_writing<'a>(
    dir: &Path,
    surveyed: Surveyed,
    request: &IndexRequest,
    observer: &'a dyn Observer,
) -> Result<(Session<'a>, crate::index::removed::KeptOut)> {
    let open = if request.rebuild {
        Open::Rebuild
    } else {
        Open::OrNew
    };
    let session = begin(dir, Some(surveyed), open, observer)?;
    if let (Some(manifest), Some(asked)) =
        (session.index().map(Index::manifest), &request.model.model)
    {
        if &manifest.model != asked {
            let rebuild = |model: &str| rebuild_command(dir, model, &request.paths);
            return Err(Error::model_mismatch(
                dir,
                (&manifest.model, &manifest.weights_sha256),
                asked,
                "?",
                &rebuild,
            ));
        }
    }
    let kept_out = match session.index() {
        Some(index) => index.db().kept_out()?,
        None => Index::open(dir)
            .ok()
            .and_then(|old| old.db().kept_out().ok())
            .unwrap_or_default(),
    };
    Ok((session, kept_out))
}

/// Begins a write to an index that must already exist: no folder or lock
/// file is made for a command that only changes an index.
pub fn begin_existing<'a>(dir: &Path, observer: &'a dyn Observer) -> Result<Session<'a>> {
    begin(dir, None, Open::Existing, observer)
}

/// Begins a write ([`Session::begin`]), saying so when another writer
/// makes it wait, and gives its commit the hook every write ends with:
/// the tags the write made stale are trained, so the next feed, from any
/// front end, reads them back (`feed: N tags trained` is told).
fn begin<'a>(
    dir: &Path,
    surveyed: Option<Surveyed>,
    open: Open,
    observer: &'a dyn Observer,
) -> Result<Session<'a>> {
    let on_wait = || {
        observer.note(&format!(
            "waiting for another papers command that writes to finish with {}",
            dir.display()
        ))
    };
    let mut session = match surveyed {
        Some(surveyed) => Session::begin_in(dir, surveyed, open, on_wait)?,
        None => Session::begin(dir, open, on_wait)?,
    };
    if session.upgraded() {
        observer.note(&format!(
            "upgraded {} to index format {}",
            dir.display(),
            crate::index::FORMAT_VERSION
        ));
    }
    session.after_commit(|index| train_stale(index, observer));
    Ok(session)
}

/// Trains the tags a write left untrained (a tag whose marks changed, or
/// every tag when the collection grew by a quarter); best effort, as the
/// cache is: a failure only costs the next feed the training.
fn train_stale(index: &Index, observer: &dyn Observer) {
    let started = std::time::Instant::now();
    match crate::feed::prepare(index) {
        Ok(0) => {}
        Ok(n) => observer.note(&format!(
            "feed: {n} tag{} trained ({:.1}s)",
            if n == 1 { "" } else { "s" },
            started.elapsed().as_secs_f64()
        )),
        Err(e) => observer.note(&format!(
            "feed: tags not trained ahead ({e}); the next `papers feed` trains them"
        )),
    }
}
