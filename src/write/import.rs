//! `papers index --embeddings`: records whose vectors were made elsewhere
//! (by `papers embed --records` on a GPU, a Spark or Ray job) are stored
//! without embedding them again, streamed a batch at a time so that memory
//! stays flat in the input's size. Each vector is checked for its length
//! and stored at unit length; unless `--no-verify`, a sample of the first
//! batch is embedded again to check the vectors are this model's.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use crate::corpus::Skipped;
use crate::embed::Embedder as _;
use crate::error::{Error, Result};
use crate::index::write::import::Batch;
use crate::index::{Index, UpdateReport};
use crate::input::stream::Stream;
use crate::input::Paragraph;
use crate::vector::unit;
use crate::write::{IndexRequest, Observer, VERIFY_COSINE, VERIFY_SAMPLE};

/// Imports the records of `request.paths` with their vectors into `dir`.
/// A failed import into a folder that did not exist leaves no folder.
pub fn import(dir: &Path, request: &IndexRequest, observer: &dyn Observer) -> Result<UpdateReport> {
    let existed = dir.exists();
    let imported = import_into(dir, request, observer);
    if imported.is_err() && !existed {
        // Only the writer lock's file was made there.
        let only_lock = std::fs::read_dir(dir).is_ok_and(|entries| {
            entries
                .flatten()
                .all(|e| e.file_name() == crate::index::write::lock::LOCK)
        });
        if only_lock {
            let _ = std::fs::remove_file(dir.join(crate::index::write::lock::LOCK));
            let _ = std::fs::remove_dir(dir);
        }
    }
    imported
}

fn import_into(
    dir: &Path,
    request: &IndexRequest,
    observer: &dyn Observer,
) -> Result<UpdateReport> {
    let mut fields = request.fields.clone();
    fields.embeddings = true;
    let surveyed = crate::index::write::ownership::survey_reading(dir)?;
    let folder = surveyed.folder;
    let (files, skipped) = crate::corpus::input_files(&request.paths)?;
    for s in &skipped {
        observer.skipped(s);
    }
    let (session, kept_out) = crate::write::open_for_writing(dir, surveyed, request, observer)?;
    let existing = session.index();
    let manifest = existing.map(Index::manifest);
    // The model: needed for the check, and for the stamp of a new index.
    let model = if request.no_verify && manifest.is_some() {
        None
    } else {
        let rebuild = |model: &str| crate::hint::rebuild_command(dir, model, &request.paths);
        Some(
            request
                .model
                .load(manifest.map(|m| m.built_with(dir)), &rebuild, &|m| {
                    observer.note(m)
                })?,
        )
    };
    let (stamp, against) = match (manifest, &model) {
        (Some(m), _) => (m.stamp(), format!("the index {}", m.dimension)),
        (None, Some(model)) => (
            model.stamp(),
            format!("{} {}", model.files.model, model.embedder.dimension()),
        ),
        (None, None) => unreachable!("a new index loads the model"),
    };
    let verify = model.as_ref().filter(|_| !request.no_verify);
    let mut reader = Reader {
        files: files.into_iter(),
        current: None,
        fields,
        dimension: stamp.dimension,
        against,
        verify: verify.map(|m| {
            (
                &m.embedder as &dyn crate::embed::Embedder,
                m.files.model.as_str(),
            )
        }),
        observer,
        files_read: 0,
        paragraphs: 0,
        bad_lines: 0,
        first_bad: None,
        must_read: request.rebuild || folder == crate::index::write::ownership::Folder::Fresh,
        paths: &request.paths,
    };
    let mut report =
        crate::index::write::import::import(dir, existing, &stamp, &kept_out, &mut || {
            reader.next()
        })
        .map_err(|e| match e {
            Error::NothingKept { removed, .. } => Error::NothingKept {
                paths: crate::hint::joined(&request.paths),
                removed,
            },
            e => e,
        })?;
    report.files = reader.files_read;
    report.skipped = skipped.len();
    report.paragraphs = reader.paragraphs;
    report.bad_lines = reader.bad_lines;
    session.commit(crate::index::write::Outcome::Changed)?;
    Ok(report)
}

/// The inputs, read a batch at a time and checked.
struct Reader<'a> {
    files: std::vec::IntoIter<PathBuf>,
    current: Option<(PathBuf, String, Stream)>,
    fields: crate::input::Fields,
    dimension: usize,
    /// What the length is checked against, in words.
    against: String,
    /// The model the first batch is checked against, until it is.
    verify: Option<(&'a dyn crate::embed::Embedder, &'a str)>,
    observer: &'a dyn Observer,
    files_read: usize,
    paragraphs: usize,
    bad_lines: usize,
    first_bad: Option<String>,
    /// Whether reading nothing is an error (a new index or a rebuild).
    must_read: bool,
    paths: &'a [PathBuf],
}

impl Reader<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            let Some((path, name, stream)) = &mut self.current else {
                let Some(path) = self.files.next() else {
                    if self.paragraphs == 0 && self.must_read {
                        return Err(Error::NothingRead {
                            paths: self
                                .paths
                                .iter()
                                .map(|p| p.display().to_string())
                                .collect::<Vec<_>>()
                                .join(", "),
                            reason: self.first_bad.clone().unwrap_or_default(),
                        });
                    }
                    return Ok(None);
                };
                let stream = Stream::open(&path, &self.fields).map_err(|reason| Error::Input {
                    path: path.clone(),
                    reason,
                })?;
                let name = path.file_name().map_or_else(
                    || path.display().to_string(),
                    |n| n.to_string_lossy().into(),
                );
                self.files_read += 1;
                self.current = Some((path, name, stream));
                continue;
            };
            let (records, bad) = match stream.next_batch() {
                None => {
                    self.current = None;
                    continue;
                }
                Some(Err(reason)) => {
                    return Err(Error::Input {
                        path: path.clone(),
                        reason,
                    })
                }
                Some(Ok(batch)) => batch,
            };
            for line in bad {
                self.bad_lines += 1;
                let reason = match line.line {
                    0 => line.reason,
                    n => format!("line {n}: {}", line.reason),
                };
                self.first_bad
                    .get_or_insert_with(|| format!("{}: {reason}", path.display()));
                self.observer.bad_line(&Skipped {
                    path: path.clone(),
                    reason,
                });
            }
            self.paragraphs += records.len();
            let path = path.clone();
            let name = name.clone();
            let batch = self.check(&path, &name, records)?;
            if !batch.is_empty() {
                return Ok(Some(batch));
            }
        }
    }

    /// The records of one batch as papers with unit vectors; a vector of
    /// the wrong length or all zeros is an error naming its line (row).
    fn check(&mut self, path: &Path, name: &str, records: Vec<Paragraph>) -> Result<Batch> {
        let wrong = |line: usize, reason: String| Error::GivenVector {
            path: path.to_path_buf(),
            line,
            reason,
        };
        let mut batch = Vec::with_capacity(records.len());
        let mut lines = Vec::with_capacity(records.len());
        for mut paragraph in records {
            let vector = paragraph.embedding.take().unwrap_or_default();
            if vector.len() != self.dimension {
                return Err(wrong(
                    paragraph.line,
                    format!(
                        "the embedding has {} dimensions, {}",
                        vector.len(),
                        self.against
                    ),
                ));
            }
            let vector = match unit(&vector) {
                Ok(vector) => vector,
                Err(reason) => return Err(wrong(paragraph.line, reason)),
            };
            lines.push(paragraph.line);
            batch.push((paragraph.into_paper(name, path), vector));
        }
        if let Some((embedder, model)) = self.verify.filter(|_| !batch.is_empty()) {
            self.verify = None;
            // Spread over the batch, so a file stitched from several runs
            // is sampled across them.
            let k = batch.len().min(VERIFY_SAMPLE);
            let sample: Vec<usize> = (0..k).map(|i| i * batch.len() / k).collect();
            let texts: Vec<String> = sample
                .iter()
                .map(|&i| batch[i].0.embed_text().into_owned())
                .collect();
            self.observer.note(&format!(
                "checking {} of the first {} given vectors against {model}",
                texts.len(),
                batch.len()
            ));
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let ours = embedder.embed(&refs, &mut |_| ControlFlow::Continue(()))?;
            for (&i, ours) in sample.iter().zip(&ours) {
                let cosine = crate::vector::dot(&batch[i].1, ours);
                if cosine.is_nan() || cosine < VERIFY_COSINE {
                    return Err(wrong(
                        lines[i],
                        format!(
                            "the embedding is not {model}'s: cosine {cosine:.4} to its vector of \
                             the same text (title + \" \" + abstract when there is a title), \
                             {VERIFY_COSINE} needed; --no-verify skips this check"
                        ),
                    ));
                }
            }
        }
        Ok(batch)
    }
}
