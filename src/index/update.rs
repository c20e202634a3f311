//! Writing an index: the writer lock, merging a corpus into what is already
//! indexed (only new abstracts need vectors), and committing it: appended
//! rows and a new segment, then one database transaction. A new index,
//! `--rebuild` and the upgrade from format 2 write a new data folder and
//! switch the manifest to it.

use std::collections::{BTreeMap, HashSet};
use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use super::db::{Chunk, Db, SegmentEntry, State, DATABASE};
use super::manifest::{Manifest, FORMAT_VERSION};
use super::segment::{self, Builder, Segment};
use super::{files, legacy, rows, Index};
use crate::corpus::Corpus;
use crate::error::{Error, Result};
use crate::paper::Paper;

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
    /// Abstracts of the input left out because the reader removed them.
    pub kept_out: usize,
    /// Records in the index afterwards.
    pub records: usize,
}

/// Indexed records whose sources grew: row -> (before, after).
type Changed = BTreeMap<usize, (Paper, Paper)>;

/// A new record with its vector and window vectors.
type NewRecord = (Paper, Vec<f32>, Vec<Vec<f32>>);

/// An index update in progress: the new records and their vectors so far,
/// and the changes to records already indexed. Nothing touches the disk
/// until [`Update::commit`].
pub struct Update {
    /// New records, and their vectors and windows once known.
    new: Vec<Paper>,
    vectors: Vec<Option<Vec<f32>>>,
    windows: Vec<Vec<Vec<f32>>>,
    /// Indexed records whose sources grew: row -> (before, after).
    changed: BTreeMap<usize, (Paper, Paper)>,
    /// Indexed records dropped (removed, or replaced by a new version).
    dropped: BTreeMap<usize, Paper>,
    /// The index updated, unless this writes a new one.
    base: Option<Base>,
    /// Whether this is a `papers index` run, recorded as one (see
    /// [`super::runs`]); `remove` and `upgrade` are not.
    run: bool,
    /// Whether the dropped records are the reader's removals, remembered
    /// so that indexing keeps them out (see [`super::removed`]).
    forget: bool,
    report: UpdateReport,
}

/// What an update appends to.
struct Base {
    data: std::path::PathBuf,
    state: State,
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
            let row = match existing {
                Some(index) => index.row_of(paper.id)?,
                None => None,
            };
            match (row, existing) {
                (Some(row), Some(index)) => {
                    update.report.already_present += 1;
                    let entry = match update.changed.remove(&row) {
                        Some(entry) => entry,
                        None => {
                            let before = index.paper(row)?;
                            (before.clone(), before)
                        }
                    };
                    let (before, mut after) = entry;
                    let added = after.merge(paper.clone());
                    update.report.new_sources += added;
                    if after != before {
                        update.changed.insert(row, (before, after));
                    }
                }
                _ => {
                    update.report.added += 1;
                    let mut paper = paper.clone();
                    // A new version of an indexed arXiv paper replaces it.
                    if let (Some(index), Some(arxiv)) =
                        (existing, paper.arxiv_id().map(str::to_string))
                    {
                        if let Some(old) = index.resolve_arxiv(&arxiv)? {
                            if !update.dropped.contains_key(&old) {
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
                            }
                        }
                    }
                    update.new.push(paper);
                    update.vectors.push(None);
                    update.windows.push(Vec::new());
                }
            }
        }
        Ok(update)
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

    /// Supplies the vector for a pending position.
    pub fn set_vector(&mut self, position: usize, vector: Vec<f32>) {
        self.vectors[position] = Some(vector);
    }

    /// Supplies the window vectors of a pending position's long text.
    pub fn set_windows(&mut self, position: usize, windows: Vec<Vec<f32>>) {
        self.windows[position] = windows;
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
            new.push((paper, vector, windows));
        }
        new.sort_by_key(|(paper, _, _)| paper.id);
        let (data, state, fresh) = match self.base.take() {
            Some(base) => (base.data, base.state, None),
            None => {
                let (data, manifest) = create_data_dir(dir, stamp)?;
                (data, State::default(), Some(manifest))
            }
        };
        let appended = append(
            &data,
            stamp.dimension,
            state,
            &new,
            (&self.changed, &self.dropped),
            (self.run, self.forget),
        );
        let appended = match (appended, &fresh) {
            // A rebuild keeps the reader's tags and removals: copied into the new
            // database before the manifest names it.
            (Ok(state), Some(_)) => match previous_data_dir(dir) {
                Some(previous) => copy_tags(&dir.join(previous), &data).map(|()| state),
                None => Ok(state),
            },
            (other, _) => other,
        };
        let state = match (appended, &fresh) {
            (Ok(state), _) => state,
            (Err(e), Some(_)) => {
                // A new folder nobody reads yet: what it started goes.
                let _ = std::fs::remove_dir_all(&data);
                return Err(e);
            }
            (Err(e), None) => return Err(e),
        };
        if let Some(manifest) = fresh {
            // The new folder is complete: switch to it, then drop the one
            // the previous manifest named, and folders left by failed runs.
            let previous = previous_data_dir(dir);
            if let Err(e) = manifest.write(dir) {
                let _ = std::fs::remove_dir_all(&data);
                return Err(e);
            }
            super::ownership::remove_stale(dir, &manifest.data_dir, previous.as_deref());
        }
        // The stored graphs are a cache of committed rows, written after
        // the commit: if this fails, searches scan those rows instead and
        // the next update builds them.
        let dimension = stamp.dimension;
        let rows = state.rows as usize;
        if let Ok(file) =
            super::rows::RowFile::open(&data.join(super::rows::VECTORS), 4 * dimension, rows)
        {
            let vectors = |range: std::ops::Range<usize>| {
                let bytes = &file.bytes()[range.start * 4 * dimension..range.end * 4 * dimension];
                super::rows::f32s(bytes).into_owned()
            };
            let _ = super::graphs::extend(&data, dimension, rows, &vectors);
        }
        self.report.records = state.live as usize;
        Ok(self.report)
    }
}

/// Copies the tags of the database in `from` into the one in `to`. A
/// previous database that cannot be read (a rebuild is how damage is
/// repaired) has no tags to copy: they went with the damage.
fn copy_tags(from: &Path, to: &Path) -> Result<()> {
    let Ok(old) = Db::open(from, false) else {
        return Ok(());
    };
    let mut new = Db::open(to, true)?;
    if let Ok(entries) = old.tag_entries(None) {
        new.copy_tags(&entries)?;
    }
    if let Ok(removals) = old.removals() {
        new.copy_removals(&removals)?;
    }
    Ok(())
}

/// The data folder the manifest in `dir` names now, if papers wrote it.
fn previous_data_dir(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(super::manifest::MANIFEST)).ok()?;
    if !super::ownership::is_papers_manifest(&text) {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value.get("data_dir")?.as_str().map(str::to_string)
}

/// Creates the next data folder (papers' marker, empty database, empty row
/// files) and the manifest that will name it. If anything fails, the
/// folder is removed again.
fn create_data_dir(dir: &Path, stamp: &ModelStamp) -> Result<(std::path::PathBuf, Manifest)> {
    let next = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| super::ownership::number_of(&e.file_name().to_string_lossy()))
        .max()
        .unwrap_or(0)
        + 1;
    let data_dir = format!("data-{next:06}");
    let data = dir.join(&data_dir);
    // create_dir, not create_dir_all: the folder must be new, so that it is
    // papers' to remove.
    std::fs::create_dir(&data).map_err(|e| Error::io(&data, e))?;
    let filled = (|| {
        files::write_synced(
            &data.join(super::ownership::DATA_MARKER),
            b"made by papers: the index's data; removed when the index is rebuilt\n",
        )?;
        Db::create(&data.join(DATABASE))?;
        for name in [rows::VECTORS, rows::QUANTIZED, rows::BINARY, rows::WINDOWS] {
            files::write_synced(&data.join(name), &[])?;
        }
        files::sync_dir(&data)
    })();
    if let Err(e) = filled {
        let _ = std::fs::remove_dir_all(&data);
        return Err(e);
    }
    let manifest = Manifest {
        format_version: FORMAT_VERSION,
        model: stamp.model.clone(),
        weights_sha256: stamp.weights_sha256.clone(),
        dimension: stamp.dimension,
        max_seq_length: stamp.max_seq_length,
        data_dir,
        written_by: format!("papers {}", env!("CARGO_PKG_VERSION")),
        written_at: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        checksum: String::new(),
    };
    Ok((data, manifest))
}

/// The level of a segment of `docs` rows in the merge policy: segments of
/// one level are merged into one of the next, like a binary counter.
fn level(docs: u64) -> u32 {
    (docs.max(1) / 256).max(1).ilog2()
}

/// Appends `new` to the data folder `data` whose committed state is
/// `state`, applies `changed` and `dropped`, and commits; returns the new
/// state.
fn append(
    data: &Path,
    dimension: usize,
    mut state: State,
    new: &[NewRecord],
    (changed, dropped): (&Changed, &BTreeMap<usize, Paper>),
    (run, forget): (bool, bool),
) -> Result<State> {
    let first = state.rows;
    // 1. The rows, past the committed ones (cutting any torn tail).
    let mut f32s = Vec::with_capacity(new.len() * dimension * 4);
    let mut quantized = Vec::with_capacity(new.len() * (dimension + 4));
    let mut binary = Vec::with_capacity(new.len() * rows::binary_width(dimension));
    let mut windows = Vec::new();
    for (i, (_, vector, paper_windows)) in new.iter().enumerate() {
        f32s.extend(rows::encode_f32(vector));
        quantized.extend(rows::quantize(vector));
        binary.extend(rows::binarize(vector));
        for w in paper_windows {
            windows.extend_from_slice(&((first as usize + i) as u32).to_le_bytes());
            windows.extend(rows::encode_f32(w));
        }
    }
    if !new.is_empty() {
        rows::append(
            &data.join(rows::VECTORS),
            first * 4 * dimension as u64,
            &f32s,
        )?;
        rows::append(
            &data.join(rows::QUANTIZED),
            first * (4 + dimension as u64),
            &quantized,
        )?;
        rows::append(
            &data.join(rows::BINARY),
            first * rows::binary_width(dimension) as u64,
            &binary,
        )?;
        state.chunks.push(Chunk {
            start: first,
            rows: new.len() as u64,
            vectors_crc: crc32fast::hash(&f32s),
            quantized_crc: crc32fast::hash(&quantized),
            binary_crc: crc32fast::hash(&binary),
        });
    }
    let window_width = 4 + 4 * dimension as u64;
    let windows_path = data.join(rows::WINDOWS);
    rows::append(&windows_path, state.windows * window_width, &windows)?;
    state.windows += windows.len() as u64 / window_width;
    let all_windows = RowBytes::read(&windows_path, state.windows * window_width)?;
    state.windows_crc = crc32fast::hash(&all_windows);

    // 2. The lexical segments: the new rows, at most segment::MAX_DOCS each,
    // then merges of equal levels.
    let mut written: Vec<String> = Vec::new();
    let mut retired: Vec<String> = Vec::new();
    for (c, chunk) in new.chunks(segment::MAX_DOCS).enumerate() {
        let start = first + (c * segment::MAX_DOCS) as u64;
        let mut builder = Builder::new(start);
        for (paper, _, _) in chunk {
            builder.add(&paper.embed_text());
        }
        let entry = write_segment(data, &builder, start)?;
        written.push(entry.name.clone());
        state.segments.push(entry);
        while let [.., a, b] = state.segments.as_slice() {
            if level(a.docs) > level(b.docs) || (a.docs + b.docs) as usize > segment::MAX_DOCS {
                break;
            }
            let (a, b) = (a.clone(), b.clone());
            let sa = Segment::open(&data.join(&a.name), a.first_row, a.docs, a.bytes)?;
            let sb = Segment::open(&data.join(&b.name), b.first_row, b.docs, b.bytes)?;
            let merged = segment::merge(&[&sa, &sb])?;
            let entry = write_segment(data, &merged, a.first_row)?;
            state.segments.truncate(state.segments.len() - 2);
            for old in [a.name, b.name] {
                if written.contains(&old) {
                    let _ = std::fs::remove_file(data.join(&old));
                } else {
                    retired.push(old);
                }
            }
            written.push(entry.name.clone());
            state.segments.push(entry);
        }
    }
    files::sync_dir(data)?;

    // 3. The records and the state, in one transaction: the commit point.
    let mut db = Db::open(data, true)?;
    let mut tx = db.begin()?;
    for (&row, before) in dropped {
        tx.kill(row, before)?;
        if forget {
            tx.forget(before)?;
        }
    }
    for (&row, (before, after)) in changed {
        tx.replace(row, before, after)?;
    }
    for (i, (paper, _, _)) in new.iter().enumerate() {
        tx.insert(first as usize + i, paper)?;
    }
    if run {
        tx.record_run(first as usize, new.len())?;
    }
    state.rows = first + new.len() as u64;
    state.live = state.live + new.len() as u64 - dropped.len() as u64;
    state.generation += 1;
    // Segments merged away now stay on disk until the next commit, for
    // readers that read the previous state and open its segments later.
    let previously_retired = std::mem::replace(&mut state.retired, retired);
    tx.commit(&state)?;

    // 4. Segments no state a reader may hold names any more: those
    // retired by the previous commit, and any a killed run left.
    let keep: HashSet<&str> = state
        .segments
        .iter()
        .map(|s| s.name.as_str())
        .chain(state.retired.iter().map(String::as_str))
        .collect();
    for old in previously_retired {
        if !keep.contains(old.as_str()) {
            let _ = std::fs::remove_file(data.join(old));
        }
    }
    remove_orphan_segments(data, &keep);
    Ok(state)
}

/// Segment files no state names: left by a killed run.
fn remove_orphan_segments(data: &Path, named: &HashSet<&str>) {
    let Ok(entries) = std::fs::read_dir(data) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with("lex-") && !named.contains(name.as_str()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The committed bytes of a row file.
struct RowBytes;

impl RowBytes {
    fn read(path: &Path, len: u64) -> Result<Vec<u8>> {
        use std::io::Read;
        let mut bytes = Vec::with_capacity(len as usize);
        File::open(path)
            .map_err(|e| Error::io(path, e))?
            .take(len)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(path, e))?;
        Ok(bytes)
    }
}

/// Writes a segment under a name no committed state uses yet.
fn write_segment(data: &Path, builder: &Builder, first_row: u64) -> Result<SegmentEntry> {
    let bytes = builder.encode();
    let name = format!(
        "lex-{first_row:010}-{:08}-{:08x}.seg",
        builder.docs(),
        crc32fast::hash(&bytes)
    );
    files::write_synced(&data.join(&name), &bytes)?;
    Ok(SegmentEntry {
        name,
        first_row,
        docs: builder.docs() as u64,
        bytes: bytes.len() as u64,
    })
}

/// Converts a format-2 index in `dir` to format 3 without embedding
/// anything (its vectors are stored); the caller holds the writer lock.
/// Returns whether there was anything to convert.
pub fn upgrade(dir: &Path) -> Result<bool> {
    let (found, text) = super::manifest::version(dir)?;
    if found != legacy::VERSION {
        return Ok(false);
    }
    let old = legacy::load(dir, &text)?;
    // Nothing is converted (and so nothing of the old index removed) unless
    // every record matches its id: the new format checks that on open.
    let records = dir.join(&old.manifest.data_dir).join(legacy::RECORDS);
    for paper in &old.papers {
        if crate::paper::PaperId::of(&paper.text) != paper.id {
            return Err(Error::corrupt(
                &records,
                format!(
                    "record {} does not match its text; nothing was converted",
                    paper.id
                ),
            ));
        }
    }
    if old.vectors.iter().any(|x| !x.is_finite()) {
        return Err(Error::corrupt(
            dir.join(&old.manifest.data_dir).join(legacy::VECTORS),
            "a vector holds a value that is not a number; nothing was converted",
        ));
    }
    let d = old.manifest.dimension;
    let stamp = ModelStamp {
        model: old.manifest.model.clone(),
        weights_sha256: old.manifest.weights_sha256.clone(),
        dimension: d,
        max_seq_length: old.manifest.max_seq_length,
    };
    let mut update = Update::from_existing(None);
    update.report.records = old.papers.len();
    let mut windows: Vec<Vec<Vec<f32>>> = vec![Vec::new(); old.papers.len()];
    for (i, &row) in old.window_rows.iter().enumerate() {
        windows[row as usize].push(old.window_vectors[i * d..(i + 1) * d].to_vec());
    }
    for (row, (paper, windows)) in old.papers.into_iter().zip(windows).enumerate() {
        update.new.push(paper);
        update
            .vectors
            .push(Some(old.vectors[row * d..(row + 1) * d].to_vec()));
        update.windows.push(windows);
    }
    update.commit(dir, &stamp)?;
    Ok(true)
}
