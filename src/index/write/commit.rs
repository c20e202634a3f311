//! Committing to an index: where the new generation goes ([`Target`]: the
//! current data folder, or a new one that the manifest switches to), the
//! rows and lexical segments appended past the committed ones
//! ([`Appender`]), and the database transaction that is the commit point.
//! Until that transaction commits, nothing a reader sees has changed:
//! appended bytes past the committed rows are cut by the next append, and
//! segment files no state names are removed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::embed::ModelStamp;
use crate::error::{Error, Result};
use crate::index::db::{Chunk, Db, SegmentEntry, State, WindowChunk, Writer, DATABASE};
use crate::index::manifest::{Manifest, FORMAT_VERSION};
use crate::index::segment::{self, Builder, Segment};
use crate::index::{files, rows};
use crate::paper::Paper;

/// A new record with its vector and window vectors.
pub type NewRecord = (Paper, Vec<f32>, Vec<Vec<f32>>);

/// The data folder a commit writes to.
pub struct Target {
    /// The folder.
    pub data: PathBuf,
    /// Its committed state (empty for a new folder).
    pub state: State,
    /// The manifest that will name a new folder once it is complete.
    fresh: Option<Manifest>,
}

/// How every write path ends (an update, an import, the staged commit):
/// the commit goes to `base`, the current data folder at its committed
/// state, or without one to a new folder (a new index, `--rebuild`, the
/// upgrade); `write` appends there and commits its transaction; then the
/// folder is finished ([`Target::finish`]). Returns the committed state
/// and the folder it is in.
pub fn commit_to(
    dir: &Path,
    base: Option<(PathBuf, State)>,
    stamp: &ModelStamp,
    write: impl FnOnce(&Target) -> Result<State>,
) -> Result<(State, PathBuf)> {
    let target = match base {
        Some((data, state)) => Target::existing(data, state),
        None => Target::fresh(dir, stamp)?,
    };
    let data = target.data.clone();
    let committed = write(&target);
    let state = target.finish(dir, committed, stamp.dimension)?;
    Ok((state, data))
}

/// A new record's vectors, as every write path checks them before they
/// are stored: the vector is there, and it and each window vector are
/// `dimension` long.
pub fn check_vectors(
    paper: &Paper,
    vector: Option<&Vec<f32>>,
    windows: &[Vec<f32>],
    dimension: usize,
) -> Result<()> {
    let vector = vector.ok_or_else(|| Error::MissingVector { id: paper.id.hex() })?;
    match std::iter::once(vector)
        .chain(windows)
        .find(|v| v.len() != dimension)
    {
        Some(wrong) => Err(Error::Dimension {
            what: format!("a vector of record {}", paper.id),
            found: wrong.len(),
            expected: dimension,
        }),
        None => Ok(()),
    }
}

impl Target {
    /// The current folder of an index, at its committed `state`.
    pub fn existing(data: PathBuf, state: State) -> Target {
        Target {
            data,
            state,
            fresh: None,
        }
    }

    /// A new data folder in `dir` (a new index, `--rebuild`, the upgrade).
    pub fn fresh(dir: &Path, stamp: &ModelStamp) -> Result<Target> {
        let (data, manifest) = create_data_dir(dir, stamp)?;
        Ok(Target {
            data,
            state: State::default(),
            fresh: Some(manifest),
        })
    }

    /// After a commit into the folder: a new folder keeps the reader's tags
    /// and removals from the one it replaces, and the manifest switches to
    /// it; a failure removes the new folder (nobody reads it yet).
    /// A failed commit into the current folder cuts back what it appended
    /// (vectors of `dimension` floats).
    pub fn finish(self, dir: &Path, committed: Result<State>, dimension: usize) -> Result<State> {
        let Some(manifest) = self.fresh else {
            if committed.is_err() {
                let _ = cut_to_state(&self.data, &self.state, dimension);
            }
            return committed;
        };
        let previous = previous_data_dir(dir);
        let done = committed.and_then(|state| {
            if let Some(previous) = &previous {
                copy_tags(&dir.join(previous), &self.data)?;
            }
            manifest.write(dir)?;
            Ok(state)
        });
        match done {
            Ok(state) => {
                // Then drop the folder the previous manifest named, and
                // folders left by failed runs.
                super::ownership::remove_stale(dir, &manifest.data_dir, previous.as_deref());
                Ok(state)
            }
            Err(e) => {
                super::ownership::remove_data(&self.data);
                Err(e)
            }
        }
    }
}

/// Appends rows and lexical segments past a committed state, in chunks
/// that each carry their checksums; [`Appender::commit`] makes them the
/// committed state.
pub struct Appender {
    data: PathBuf,
    dimension: usize,
    state: State,
    /// The lexical segment being filled, and its first row.
    builder: Builder,
    segment_first: u64,
    /// Segment files this commit wrote, and those it merged away.
    written: Vec<String>,
    retired: Vec<String>,
}

impl Appender {
    /// Appends to `target`'s folder for vectors of `dimension` floats.
    pub fn new(target: &Target, dimension: usize) -> Appender {
        Appender {
            data: target.data.clone(),
            dimension,
            builder: Builder::new(target.state.rows),
            segment_first: target.state.rows,
            state: target.state.clone(),
            written: Vec::new(),
            retired: Vec::new(),
        }
    }

    /// The row the next appended record gets.
    pub fn next_row(&self) -> u64 {
        self.state.rows
    }

    /// Appends `new` as the next rows: vectors, quantized and binary rows
    /// and windows, as one chunk with its checksums, and their texts into
    /// the lexical segment being filled.
    pub fn rows(&mut self, new: &[NewRecord]) -> Result<()> {
        let vectors: Vec<(&[f32], &[Vec<f32>])> = new
            .iter()
            .map(|(_, vector, windows)| (&vector[..], &windows[..]))
            .collect();
        self.vectors(&vectors)?;
        let papers: Vec<&Paper> = new.iter().map(|(paper, _, _)| paper).collect();
        self.texts(&papers)
    }

    /// Appends the next rows' vectors (each with its windows' vectors):
    /// vectors, quantized and binary rows and windows, as one chunk with
    /// its checksums.
    pub fn vectors(&mut self, new: &[(&[f32], &[Vec<f32>])]) -> Result<()> {
        if new.is_empty() {
            return Ok(());
        }
        let d = self.dimension;
        let first = self.state.rows;
        let mut f32s = Vec::with_capacity(new.len() * d * 4);
        let mut quantized = Vec::with_capacity(new.len() * (d + 4));
        let mut binary = Vec::with_capacity(new.len() * rows::binary_width(d));
        let mut windows = Vec::new();
        for (i, (vector, paper_windows)) in new.iter().enumerate() {
            f32s.extend(rows::encode_f32(vector));
            quantized.extend(rows::quantize(vector));
            binary.extend(rows::binarize(vector));
            for w in paper_windows.iter() {
                windows.extend_from_slice(&((first as usize + i) as u32).to_le_bytes());
                windows.extend(rows::encode_f32(w));
            }
        }
        let data = &self.data;
        rows::append(&data.join(rows::VECTORS), first * 4 * d as u64, &f32s)?;
        rows::append(
            &data.join(rows::QUANTIZED),
            first * (4 + d as u64),
            &quantized,
        )?;
        rows::append(
            &data.join(rows::BINARY),
            first * rows::binary_width(d) as u64,
            &binary,
        )?;
        self.state.chunks.push(Chunk {
            start: first,
            rows: new.len() as u64,
            vectors_crc: crc32fast::hash(&f32s),
            quantized_crc: crc32fast::hash(&quantized),
            binary_crc: crc32fast::hash(&binary),
        });
        self.state.rows += new.len() as u64;
        if !windows.is_empty() {
            // Each append's windows carry their own checksum, so a commit
            // never re-reads the windows before them.
            let width = 4 + 4 * d as u64;
            rows::append(
                &data.join(rows::WINDOWS),
                self.state.windows * width,
                &windows,
            )?;
            let added = windows.len() as u64 / width;
            let crc = crc32fast::hash(&windows);
            // The whole file's checksum too, which builds before
            // per-append checksums check, combined in without a read.
            self.state.windows_crc = crate::index::db::crc_after(
                self.state.whole_windows_crc(width),
                crc,
                windows.len() as u64,
            );
            self.state.windows_crc_whole = true;
            self.state.window_chunks.push(WindowChunk {
                start: self.state.windows,
                rows: added,
                crc,
            });
            self.state.windows += added;
        }
        Ok(())
    }

    /// Adds the next rows' texts to the lexical segment being filled (and
    /// writes the segments that fill up). Independent of the vectors: a
    /// commit can analyse its texts while they are still being made.
    pub fn texts(&mut self, papers: &[&Paper]) -> Result<()> {
        // Analysing the texts is most of an import's work: in parallel,
        // then added in row order.
        use rayon::prelude::*;
        let analysed: Vec<Vec<String>> = papers
            .par_iter()
            .map(|paper| crate::analysis::Analysis::CURRENT.terms(&paper.embed_text()))
            .collect();
        for terms in analysed {
            self.builder.add_terms(terms);
            if self.builder.docs() == segment::MAX_DOCS {
                self.flush_segment()?;
            }
        }
        Ok(())
    }

    /// Writes the segment being filled, then merges equal levels (like a
    /// binary counter).
    fn flush_segment(&mut self) -> Result<()> {
        let builder_first = self.segment_first;
        self.segment_first += self.builder.docs() as u64;
        let builder = std::mem::replace(&mut self.builder, Builder::new(self.segment_first));
        if builder.docs() == 0 {
            return Ok(());
        }
        let entry = write_segment(&self.data, &builder, builder_first)?;
        self.written.push(entry.name.clone());
        self.state.segments.push(entry);
        while let [.., a, b] = self.state.segments.as_slice() {
            if level(a.docs) > level(b.docs) || (a.docs + b.docs) as usize > segment::MAX_DOCS {
                break;
            }
            let (a, b) = (a.clone(), b.clone());
            let data = &self.data;
            let sa = Segment::open(&data.join(&a.name), a.first_row, a.docs, a.bytes)?;
            let sb = Segment::open(&data.join(&b.name), b.first_row, b.docs, b.bytes)?;
            let merged = segment::merge(&[&sa, &sb])?;
            let entry = write_segment(data, &merged, a.first_row)?;
            self.state.segments.truncate(self.state.segments.len() - 2);
            for old in [a.name, b.name] {
                if self.written.contains(&old) {
                    let _ = std::fs::remove_file(data.join(&old));
                } else {
                    self.retired.push(old);
                }
            }
            self.written.push(entry.name.clone());
            self.state.segments.push(entry);
        }
        Ok(())
    }

    /// The commit point: writes the last segment, syncs the folder, and
    /// commits `tx` (which holds the records' changes) with the new state,
    /// `live` records in all. Then removes the segments no state a reader
    /// may hold names any more.
    pub fn commit(mut self, tx: Writer<'_>, live: u64) -> Result<State> {
        self.flush_segment()?;
        files::sync_dir(&self.data)?;
        let mut state = self.state;
        state.live = live;
        state.generation += 1;
        // Segments merged away now stay on disk until the next commit, for
        // readers that read the previous state and open its segments later.
        let previously_retired = std::mem::replace(&mut state.retired, self.retired);
        tx.commit(&state)?;
        let keep = kept_segments(&state);
        for old in previously_retired {
            if !keep.contains(old.as_str()) {
                let _ = std::fs::remove_file(self.data.join(old));
            }
        }
        remove_orphan_segments(&self.data, &keep);
        Ok(state)
    }
}

/// Cuts the row files of `data` back to `state` (vectors of `dimension`
/// floats) and removes the segments it does not name: what an abandoned
/// commit appended.
fn cut_to_state(data: &Path, state: &State, dimension: usize) -> Result<()> {
    let d = dimension as u64;
    for (name, len) in [
        (rows::VECTORS, state.rows * 4 * d),
        (rows::QUANTIZED, state.rows * (4 + d)),
        (
            rows::BINARY,
            state.rows * rows::binary_width(dimension) as u64,
        ),
        (rows::WINDOWS, state.windows * (4 + 4 * d)),
    ] {
        let path = data.join(name);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        let now = file.metadata().map_err(|e| Error::io(&path, e))?.len();
        if now > len {
            file.set_len(len).map_err(|e| Error::io(&path, e))?;
        }
    }
    remove_orphan_segments(data, &kept_segments(state));
    Ok(())
}

/// Copies the tags, removals and reading marks of the database in `from`
/// into the one in `to`. A
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
    if let Ok(marks) = old.marks() {
        new.copy_marks(&marks)?;
    }
    Ok(())
}

/// The data folder the manifest in `dir` names now, if papers wrote it.
fn previous_data_dir(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(crate::index::manifest::MANIFEST)).ok()?;
    if !super::ownership::is_papers_manifest(&text) {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value.get("data_dir")?.as_str().map(str::to_string)
}

/// Creates the next data folder (papers' marker, empty database, empty row
/// files) and the manifest that will name it. If anything fails, the
/// folder is removed again.
fn create_data_dir(dir: &Path, stamp: &ModelStamp) -> Result<(PathBuf, Manifest)> {
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
        super::ownership::remove_data(&data);
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

/// The segment files a state still needs: its live segments, and those it
/// retired, which readers of the previous state may yet open.
fn kept_segments(state: &State) -> HashSet<&str> {
    state
        .segments
        .iter()
        .map(|s| s.name.as_str())
        .chain(state.retired.iter().map(String::as_str))
        .collect()
}
