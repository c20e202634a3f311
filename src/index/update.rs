//! Writing an index: the writer lock, merging a corpus into what is already
//! indexed (only new abstracts need vectors), and committing a new
//! generation atomically.

use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::hnsw::Graph;
use super::manifest::{Manifest, FORMAT_VERSION, MANIFEST};
use super::{store, Index};
use crate::corpus::Corpus;
use crate::error::{Error, Result};
use crate::lexical::{Analysis, Bm25};
use crate::paper::{Paper, PaperId};

/// The lock file's name in the index directory.
pub const LOCK: &str = "lock";

/// Exclusive right to write an index; released when dropped (or when the
/// process dies, since it is an OS file lock).
pub struct IndexLock {
    _file: File,
}

impl IndexLock {
    /// Takes the lock on `dir`, creating the directory if needed. If another
    /// process holds it, calls `on_wait` once and blocks until it is free.
    pub fn acquire(dir: &Path, on_wait: impl FnOnce()) -> Result<IndexLock> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let path = dir.join(LOCK);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                on_wait();
                file.lock().map_err(|e| Error::io(&path, e))?;
            }
            Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        Ok(IndexLock { _file: file })
    }
}

/// What the vectors of an index mean.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelStamp {
    /// Model id.
    pub model: String,
    /// SHA-256 of its weights.
    pub weights_sha256: String,
    /// Vector length.
    pub dimension: usize,
    /// Truncation length in word pieces.
    pub max_seq_length: usize,
}

impl ModelStamp {
    /// The stamp recorded in an existing manifest.
    pub fn of(manifest: &Manifest) -> ModelStamp {
        ModelStamp {
            model: manifest.model.clone(),
            weights_sha256: manifest.weights_sha256.clone(),
            dimension: manifest.dimension,
            max_seq_length: manifest.max_seq_length,
        }
    }
}

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
    /// Records in the index afterwards.
    pub records: usize,
}

/// An index update in progress: the merged records and the vectors known so
/// far. Nothing touches the disk until [`Update::commit`].
pub struct Update {
    papers: Vec<Paper>,
    vectors: Vec<Option<Vec<f32>>>,
    windows: Vec<Vec<Vec<f32>>>,
    previous: Option<Manifest>,
    /// The existing lexical index was built with an older analysis.
    stale_lexical: bool,
    report: UpdateReport,
}

impl Update {
    /// Starts from `existing` (or nothing) and adds `corpus`.
    pub fn new(existing: Option<&Index>, corpus: &Corpus) -> Update {
        let mut update = Update::from_existing(existing);
        let rows: HashMap<PaperId, usize> = update
            .papers
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id, i))
            .collect();
        let mut report = UpdateReport {
            files: corpus.files.len(),
            skipped: corpus.skipped.len(),
            paragraphs: corpus.paragraphs,
            unique: corpus.papers.len(),
            replaced: corpus.replaced,
            bad_lines: corpus.bad_lines.len(),
            ..Default::default()
        };
        let arxiv_rows: HashMap<String, usize> = update
            .papers
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.arxiv_id().map(|a| (a.to_string(), i)))
            .collect();
        let mut dropped = vec![false; update.papers.len()];
        for paper in &corpus.papers {
            match rows.get(&paper.id) {
                Some(&row) => {
                    report.already_present += 1;
                    report.new_sources += update.papers[row].merge(paper.clone());
                }
                None => {
                    report.added += 1;
                    let mut paper = paper.clone();
                    // A new version of an indexed arXiv paper replaces it.
                    if let Some(&old) = paper.arxiv_id().and_then(|a| arxiv_rows.get(a)) {
                        if !dropped[old] {
                            dropped[old] = true;
                            report.replaced += 1;
                            paper.add_sources(update.papers[old].sources.clone());
                        }
                    }
                    update.papers.push(paper);
                    update.vectors.push(None);
                    update.windows.push(Vec::new());
                }
            }
        }
        if dropped.contains(&true) {
            let keep: Vec<bool> = (0..update.papers.len())
                .map(|i| !dropped.get(i).copied().unwrap_or(false))
                .collect();
            update.retain(&keep);
        }
        update.report = report;
        update
    }

    /// Starts from `existing` and drops the records at `rows`.
    pub fn remove(existing: &Index, rows: &[usize]) -> Update {
        let mut update = Update::from_existing(Some(existing));
        let mut keep = vec![true; update.papers.len()];
        for &row in rows {
            keep[row] = false;
        }
        update.retain(&keep);
        update.report.removed = keep.iter().filter(|k| !**k).count();
        update
    }

    /// Keeps the positions where `keep` is true.
    fn retain(&mut self, keep: &[bool]) {
        let mut flags = keep.iter();
        self.papers.retain(|_| *flags.next().unwrap_or(&true));
        let mut flags = keep.iter();
        self.vectors.retain(|_| *flags.next().unwrap_or(&true));
        let mut flags = keep.iter();
        self.windows.retain(|_| *flags.next().unwrap_or(&true));
    }

    fn from_existing(existing: Option<&Index>) -> Update {
        let (papers, vectors, windows, previous) = match existing {
            Some(index) => (
                index.papers().to_vec(),
                (0..index.papers().len())
                    .map(|r| Some(index.vector(r).to_vec()))
                    .collect(),
                (0..index.papers().len())
                    .map(|r| {
                        index
                            .windows_of(r)
                            .into_iter()
                            .map(<[f32]>::to_vec)
                            .collect()
                    })
                    .collect(),
                Some(index.manifest().clone()),
            ),
            None => (Vec::new(), Vec::new(), Vec::new(), None),
        };
        let stale_lexical = existing.is_some_and(|index| {
            index
                .lexical()
                .is_ok_and(|bm25| bm25.analysis() != Analysis::CURRENT)
        });
        Update {
            papers,
            vectors,
            windows,
            previous,
            stale_lexical,
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
            .map(|(i, _)| (i, self.papers[i].embed_text()))
            .collect()
    }

    /// The record at `position` (as [`Update::pending`] names it).
    pub fn paper(&self, position: usize) -> &Paper {
        &self.papers[position]
    }

    /// Supplies the vector for a pending position.
    pub fn set_vector(&mut self, position: usize, vector: Vec<f32>) {
        self.vectors[position] = Some(vector);
    }

    /// Supplies the window vectors of a pending position's long text.
    pub fn set_windows(&mut self, position: usize, windows: Vec<Vec<f32>>) {
        self.windows[position] = windows;
    }

    /// Whether the update changes nothing on disk (an index whose lexical
    /// part predates the current analysis is rewritten, without embedding).
    pub fn is_noop(&self) -> bool {
        self.previous.is_some()
            && !self.stale_lexical
            && self.report.added == 0
            && self.report.new_sources == 0
            && self.report.removed == 0
            && self.report.replaced == 0
    }

    /// The counts so far.
    pub fn report(&self) -> &UpdateReport {
        &self.report
    }

    /// Writes a new generation and switches the manifest to it. Records are
    /// sorted by id and the graph is built by serial inserts in that order,
    /// so the same records always give the same files.
    pub fn commit(mut self, dir: &Path, stamp: &ModelStamp) -> Result<UpdateReport> {
        let mut rows: Vec<(Paper, Vec<f32>, Vec<Vec<f32>>)> = Vec::with_capacity(self.papers.len());
        for ((paper, vector), windows) in self
            .papers
            .drain(..)
            .zip(self.vectors.drain(..))
            .zip(self.windows.drain(..))
        {
            let vector = vector.ok_or_else(|| Error::MissingVector { id: paper.id.hex() })?;
            let wrong = std::iter::once(&vector)
                .chain(&windows)
                .find(|v| v.len() != stamp.dimension);
            if let Some(wrong) = wrong {
                return Err(Error::Dimension {
                    what: format!("a vector of record {}", paper.id),
                    found: wrong.len(),
                    expected: stamp.dimension,
                });
            }
            rows.push((paper, vector, windows));
        }
        rows.sort_by_key(|(paper, _, _)| paper.id);
        let mut papers = Vec::with_capacity(rows.len());
        let mut flat: Vec<f32> = Vec::with_capacity(rows.len() * stamp.dimension);
        let mut windows: Vec<(u32, Vec<f32>)> = Vec::new();
        for (row, (paper, vector, paper_windows)) in rows.into_iter().enumerate() {
            papers.push(paper);
            flat.extend_from_slice(&vector);
            windows.extend(paper_windows.into_iter().map(|w| (row as u32, w)));
        }

        // What the manifest names now (even when rebuilding over it), so its
        // data survives this write for readers that opened it.
        let old = Manifest::read(dir).ok();
        let generation = next_generation(dir, old.as_ref().or(self.previous.as_ref()));
        let data_dir = format!("gen-{generation:06}");
        let data = dir.join(&data_dir);
        // A folder of this name can only be left over from a killed run.
        if data.exists() {
            std::fs::remove_dir_all(&data).map_err(|e| Error::io(&data, e))?;
        }
        std::fs::create_dir_all(&data).map_err(|e| Error::io(&data, e))?;

        let mut files = BTreeMap::new();
        let records = store::encode_records(&papers);
        files.insert(
            store::RECORDS.to_string(),
            store::write_synced(&data.join(store::RECORDS), &records)?,
        );
        files.insert(
            store::VECTORS.to_string(),
            store::write_synced(&data.join(store::VECTORS), &store::encode_vectors(&flat))?,
        );
        let documents: Vec<std::borrow::Cow<str>> = papers.iter().map(Paper::embed_text).collect();
        let lexical = Bm25::build(documents.iter().map(|d| d.as_ref()));
        let lexical = serde_json::to_vec(&lexical).expect("lexical index serialises");
        files.insert(
            store::LEXICAL.to_string(),
            store::write_synced(&data.join(store::LEXICAL), &lexical)?,
        );
        let windows: Vec<(u32, &[f32])> = windows.iter().map(|(r, w)| (*r, w.as_slice())).collect();
        files.insert(
            store::WINDOWS.to_string(),
            store::write_synced(&data.join(store::WINDOWS), &store::encode_windows(&windows))?,
        );
        for name in Graph::build(&flat, stamp.dimension).dump(&data, store::GRAPH)? {
            let path = data.join(&name);
            let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
            // Rewritten through write_synced to fsync it and record its digest.
            files.insert(name, store::write_synced(&path, &bytes)?);
        }
        store::sync_dir(&data)?;

        let manifest = Manifest {
            format_version: FORMAT_VERSION,
            model: stamp.model.clone(),
            weights_sha256: stamp.weights_sha256.clone(),
            dimension: stamp.dimension,
            max_seq_length: stamp.max_seq_length,
            records: papers.len(),
            generation,
            data_dir,
            files,
            graph: store::GRAPH.to_string(),
            written_by: format!("papers {}", env!("CARGO_PKG_VERSION")),
            written_at: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        };
        let text = serde_json::to_vec_pretty(&manifest).expect("manifest serialises");
        store::replace_atomic(&dir.join(MANIFEST), &text)?;
        remove_stale(
            dir,
            &manifest.data_dir,
            old.as_ref().map(|m| m.data_dir.as_str()),
        );

        self.report.records = papers.len();
        Ok(self.report)
    }
}

/// One more than any generation named by the old manifest or present on
/// disk, so a new generation never overwrites one a manifest may name, even
/// on `--rebuild` over a damaged index.
fn next_generation(dir: &Path, previous: Option<&Manifest>) -> u64 {
    let on_disk = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| generation_of(&e.file_name().to_string_lossy()))
        .max()
        .unwrap_or(0);
    on_disk.max(previous.map_or(0, |m| m.generation)) + 1
}

fn generation_of(name: &str) -> Option<u64> {
    name.strip_prefix("gen-")?.parse().ok()
}

/// Deletes data folders other than the current one and the one the previous
/// manifest named (a reader may still be using it), and temporary files
/// left by killed runs. Best effort: leftovers cost space, not correctness.
fn remove_stale(dir: &Path, current: &str, previous: Option<&str>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let path: PathBuf = entry.path();
        if generation_of(&name).is_some() {
            if name != current && Some(name.as_str()) != previous {
                let _ = std::fs::remove_dir_all(&path);
            }
        } else if name.starts_with("manifest.tmp-") {
            let _ = std::fs::remove_file(&path);
        }
    }
}
