//! The writing use cases, as `papers index` and `papers remove` run them:
//! read the inputs, take the writer lock, merge into what is indexed, embed
//! what is new (window passages of long abstracts included), and commit a
//! new generation. The binary, the benchmarks and the library example all
//! call these functions, so they all build the same index.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use crate::corpus::{Corpus, Skipped};
use crate::embed::{Embedder, ModelChoice};
use crate::error::{Error, Result};
use crate::index::{Index, IndexLock, ModelStamp, Update, UpdateReport};
use crate::records::Fields;

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

    /// Embedding starts: `passages` texts in all (abstracts and windows).
    fn embedding(&self, passages: usize) {
        let _ = passages;
    }

    /// `done` passages are embedded; `Break` stops the run before it
    /// writes anything ([`Error::IndexingStopped`]).
    fn embedded(&self, done: usize) -> ControlFlow<()> {
        let _ = done;
        ControlFlow::Continue(())
    }
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
}

/// Indexes `request.paths` into the index at `dir`: only abstracts whose
/// content hash is new are embedded, and a run with nothing new loads no
/// model and writes nothing. Holds the writer lock throughout.
pub fn index(dir: &Path, request: &IndexRequest, observer: &dyn Observer) -> Result<UpdateReport> {
    let corpus = Corpus::load_with(&request.paths, &request.fields)?;
    for skipped in &corpus.skipped {
        observer.skipped(skipped);
    }
    for bad in &corpus.bad_lines {
        observer.bad_line(bad);
    }
    let _lock = lock(dir, observer)?;
    let existing = if request.rebuild {
        None
    } else {
        match Index::open(dir) {
            Ok(index) => Some(index),
            Err(Error::IndexMissing { .. }) => None,
            Err(e) => return Err(e),
        }
    };
    let manifest = existing.as_ref().map(Index::manifest);
    let rebuild = |model: &str| rebuild_command(dir, model, &request.paths);
    if let (Some(manifest), Some(asked)) = (manifest, &request.model.model) {
        if &manifest.model != asked {
            return Err(Error::model_mismatch(dir, manifest, asked, "?", &rebuild));
        }
    }

    let mut update = Update::new(existing.as_ref(), &corpus);
    let stamp = match manifest {
        Some(manifest) if update.pending().is_empty() => ModelStamp::of(manifest),
        _ => {
            let model = request
                .model
                .load(manifest.map(|m| (dir, m)), &rebuild, &|m| observer.note(m))?;
            embed_pending(&model.embedder, &mut update, observer).map_err(|e| match e {
                Error::Interrupted => Error::IndexingStopped {
                    kept: existing.as_ref().map_or(0, |i| i.papers().len()),
                },
                other => other,
            })?;
            model.stamp()
        }
    };
    if update.is_noop() {
        let mut report = update.report().clone();
        report.records = existing.as_ref().map_or(0, |i| i.papers().len());
        return Ok(report);
    }
    update.commit(dir, &stamp)
}

/// Drops the records named by `ids` (ids, unique prefixes or arXiv ids)
/// from the index at `dir` and commits the rest; no model is needed.
pub fn remove(dir: &Path, ids: &[String], observer: &dyn Observer) -> Result<UpdateReport> {
    let _lock = lock(dir, observer)?;
    let index = Index::open(dir)?;
    let mut rows = ids
        .iter()
        .map(|id| index.resolve(id))
        .collect::<Result<Vec<_>>>()?;
    rows.sort_unstable();
    rows.dedup();
    Update::remove(&index, &rows).commit(dir, &ModelStamp::of(index.manifest()))
}

/// Takes the writer lock, saying so when another writer makes it wait.
fn lock(dir: &Path, observer: &dyn Observer) -> Result<IndexLock> {
    IndexLock::acquire(dir, || {
        observer.note(&format!(
            "waiting for another `papers index` to finish with {}",
            dir.display()
        ))
    })
}

/// The command that rebuilds the index at `dir` from `paths` with `model`,
/// for hints.
pub fn rebuild_command(dir: &Path, model: &str, paths: &[PathBuf]) -> String {
    let mut command = format!(
        "papers --index {} index --rebuild --model {model}",
        dir.display()
    );
    for path in paths {
        command.push(' ');
        command.push_str(&path.display().to_string());
    }
    command
}

/// The folders an index's records came from, sorted: what a rebuild hint
/// names when the original command line is not at hand.
pub fn source_dirs(index: &Index) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = index
        .papers()
        .iter()
        .flat_map(|p| &p.sources)
        .map(|s| {
            Path::new(&s.path)
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from(&s.path), Path::to_path_buf)
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// Embeds every record the update still lacks a vector for, and the
/// windows of those too long for the model (see [`Embedder::windows`]).
pub fn embed_pending(
    embedder: &dyn Embedder,
    update: &mut Update,
    observer: &dyn Observer,
) -> Result<()> {
    let (positions, mut texts): (Vec<usize>, Vec<String>) = update
        .pending()
        .into_iter()
        .map(|(p, t)| (p, t.to_string()))
        .unzip();
    if texts.is_empty() {
        return Ok(());
    }
    // Each record's windows follow all the records' own texts.
    let mut window_counts = Vec::with_capacity(texts.len());
    let mut window_texts = Vec::new();
    for text in &texts {
        let windows = embedder.windows(text)?;
        window_counts.push(windows.len());
        window_texts.extend(windows);
    }
    texts.extend(window_texts);
    observer.embedding(texts.len());
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut vectors = embedder
        .embed(&refs, &mut |done| observer.embedded(done))?
        .into_iter();
    for &position in &positions {
        let vector = vectors.next().expect("one vector per text");
        update.set_vector(position, vector);
    }
    for (&position, count) in positions.iter().zip(window_counts) {
        update.set_windows(position, vectors.by_ref().take(count).collect());
    }
    Ok(())
}
