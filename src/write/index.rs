//! The writing use cases, as `papers index` and `papers remove` run them:
//! read the inputs, take the writer lock, merge into what is indexed, embed
//! what is new (window passages of long abstracts included), and commit a
//! new generation. The binary, the benchmarks and the library example all
//! call these functions, so they all build the same index.

use std::path::Path;
use std::time::{Duration, Instant};

use super::request::{begin_existing, open_for_writing, IndexRequest, Observer, Pipeline};
use crate::corpus::Corpus;
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::hint::{joined, rebuild_command};
use crate::index::write::ownership::Folder;
use crate::index::write::Outcome;
use crate::index::{Index, Update, UpdateReport};

/// Indexes `request.paths` into the index at `dir`: only abstracts whose
/// content hash is new are embedded, and a run with nothing new loads no
/// model and writes nothing. Holds the writer lock throughout.
pub fn index(dir: &Path, request: &IndexRequest, observer: &dyn Observer) -> Result<UpdateReport> {
    let started = Instant::now();
    if request.embeddings {
        return super::import::import(dir, request, observer);
    }
    let mut fields = request.fields.clone();
    fields.embeddings = request.embeddings;
    let surveyed = crate::index::write::ownership::survey_reading(dir)?;
    let folder = surveyed.folder;
    // A new index embeds everything it reads: its model loads meanwhile.
    let mut early = (folder == Folder::Fresh).then(|| request.model.load_in_background());
    let corpus = Corpus::load_with(&request.paths, &fields)?;
    for skipped in &corpus.skipped {
        observer.skipped(skipped);
    }
    for bad in &corpus.bad_lines {
        observer.bad_line(bad);
    }
    // A run that read nothing never replaces an index (or makes an empty
    // one): a wrong path or format must not cost the records indexed.
    if corpus.papers.is_empty() && (request.rebuild || folder == Folder::Fresh) {
        return Err(Error::NothingRead {
            paths: joined(&request.paths),
            reason: corpus
                .bad_lines
                .first()
                .or(corpus.skipped.first())
                .map(|s| format!("{}: {}", s.path.display(), s.reason))
                .unwrap_or_default(),
        });
    }
    let (session, kept_out) = open_for_writing(dir, surveyed, request, observer)?;
    let existing = session.index();
    let manifest = existing.map(Index::manifest);
    let rebuild = |model: &str| rebuild_command(dir, model, &request.paths);
    let mut corpus = corpus;
    let unique = corpus.papers.len();
    if !kept_out.is_empty() {
        corpus.papers.retain(|paper| !kept_out.contains(paper));
    }
    // A rebuild keeps only what it reads: one whose every record was
    // removed earlier (`papers remove`) would leave an empty index.
    if corpus.papers.is_empty() && request.rebuild {
        return Err(Error::NothingKept {
            paths: joined(&request.paths),
            removed: unique,
        });
    }
    let mut update = Update::new(existing, &corpus)?;
    update.keep_out(unique - corpus.papers.len());
    let before = existing.map_or(0, Index::len);
    if manifest.is_none() || !update.pending().is_empty() {
        let model = match early.take() {
            // Still new: nobody made the index while this run read.
            Some(loading) if manifest.is_none() => loading.finish(&|m| observer.note(m))?,
            _ => request
                .model
                .load(manifest.map(|m| m.built_with(dir)), &rebuild, &|m| {
                    observer.note(m)
                })?,
        };
        let stamp = model.stamp();
        // The database rows and lexical segments are written while the
        // vectors are made (see `index::write::staged`).
        let mut times = Pipeline::default();
        let mut last_vectors = None;
        let unembedded = match update.embed_and_commit(dir, &stamp, &mut |texts, sink| {
            let (embedding, mut first) = (Instant::now(), None);
            times.encoder = embed_pending(
                &model.embedder,
                texts,
                request.batch,
                observer,
                &mut |i, v| {
                    first.get_or_insert_with(Instant::now);
                    sink(i, v)
                },
            )?;
            times.first_vectors = first.map_or(Duration::ZERO, |f| f - started);
            times.embedding = embedding.elapsed();
            last_vectors = Some(Instant::now());
            Ok(())
        })? {
            Ok(report) => {
                session.commit(Outcome::Changed)?;
                times.after_vectors = last_vectors.map_or(Duration::ZERO, |l| l.elapsed());
                observer.pipeline(&times);
                return Ok(report);
            }
            Err(unembedded) => unembedded,
        };
        let Error::Interrupted = unembedded.error else {
            return Err(unembedded.error);
        };
        // Keep the finished batches: commit what was embedded.
        let mut update = *unembedded.update;
        update.drop_unembedded();
        let records = if update.is_noop() {
            before
        } else {
            let records = update.commit(dir, &stamp)?.records;
            session.commit(Outcome::Changed)?;
            records
        };
        return Err(Error::IndexingStopped {
            added: records - before.min(records),
            records,
        });
    }
    let stamp = manifest.expect("an index with nothing to embed").stamp();
    if update.is_noop() {
        // Still a run, that added nothing.
        session.commit(Outcome::EmptyRun)?;
        let mut report = update.report().clone();
        report.records = before;
        return Ok(report);
    }
    let report = update.commit(dir, &stamp)?;
    session.commit(Outcome::Changed)?;
    Ok(report)
}

/// Converts the format-2 index at `dir` to the current format, under the
/// writer lock; false when it already is current.
pub fn upgrade(dir: &Path, observer: &dyn Observer) -> Result<bool> {
    // Beginning the session upgrades (and checks the index opens).
    let session = begin_existing(dir, observer)?;
    let upgraded = session.upgraded();
    session.commit(Outcome::Changed)?;
    Ok(upgraded)
}

/// Embeds the texts of new records, with the windows of those too long for
/// the model (see [`Embedder::windows`]), `batch` records at a time (0: as
/// many as the model's backend takes per group), handing each finished
/// batch to `sink`: a stop keeps the batches finished before it. Returns
/// how long the encoder ran.
pub fn embed_pending(
    embedder: &(dyn Embedder + Sync),
    texts: &[&str],
    batch: usize,
    observer: &dyn Observer,
    sink: &mut crate::index::write::staged::Sink<'_>,
) -> Result<Duration> {
    if texts.is_empty() {
        return Ok(Duration::ZERO);
    }
    let group = if batch == 0 {
        embedder.record_group()
    } else {
        batch
    };
    observer.embedding(texts.len());
    embedder.embed_records(
        texts,
        group,
        &mut |done| observer.embedded(done),
        &mut |first, vectors| {
            sink(
                first,
                vectors
                    .into_iter()
                    .map(|record| (record.vector, record.windows))
                    .collect(),
            )
        },
    )
}
