//! A persistent index: records in SQLite, vectors in memory-mapped
//! append-only files, BM25 postings in immutable segments.
//!
//! The files and what each holds are described once, in the design
//! document's "On-disk format" (`docs/design.md`); the tables of the
//! database in `db`.
//!
//! A record's row is its place in the vector files, in the order records
//! were added. Removing or replacing a record marks its row dead; the
//! vector stays until the next `--rebuild`.
//!
//! An update appends rows past the committed ones, writes its segment,
//! syncs them, and then commits one SQLite transaction naming them. A run
//! killed at any point leaves the last committed state: bytes past it are
//! cut by the next append, unnamed segments deleted. Readers take no lock:
//! each holds one read transaction for its life and opens every file its
//! state names before answering, so it sees one committed state whole.
//!
//! Opening reads the manifest and the state and maps the files, checking
//! their sizes: O(1) in the number of records. The full check (every
//! record against its id, CRC-32s of every appended run and segment,
//! SQLite's integrity check) is `papers check`, and runs on every open of
//! an index small enough for it to cost no more than a few milliseconds.

pub(crate) mod bm25;
mod check;
pub(crate) mod db;
pub mod files;
mod graph;
pub(crate) mod graphs;
pub mod hnsw;
mod legacy;
mod lookup;
pub mod manifest;
pub mod reading;
pub(crate) mod removed;
pub mod rows;
mod runs;
pub(crate) mod scope;
mod segment;
pub(crate) mod tags;
pub mod write;

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

pub use manifest::{Manifest, FORMAT_VERSION};
pub use write::lock::IndexLock;
pub use write::update::{ModelStamp, Update, UpdateReport};
pub use write::upgrade::upgrade;

use crate::error::{Error, Result};
use bm25::Lexical;
use db::{Db, State};
use hnsw::Graph;
use rows::RowFile;
use segment::Segment;

/// Indexes whose data files total less than this are fully checked on
/// every open.
const FULL_CHECK_BYTES: u64 = 16 << 20;

/// An opened index, read-only.
pub struct Index {
    dir: PathBuf,
    data: PathBuf,
    manifest: Manifest,
    state: State,
    db: Mutex<Db>,
    dead: BTreeSet<usize>,
    vectors: RowFile,
    quantized: RowFile,
    binary: RowFile,
    windows: RowFile,
    segments: Vec<db::SegmentEntry>,
    /// The segments' files, opened with the snapshot.
    segment_files: Vec<std::fs::File>,
    lexical: OnceLock<Lexical>,
    graph: OnceLock<Graph>,
    stored_graphs: OnceLock<StoredGraphs>,
    centre: OnceLock<Vec<f32>>,
}

/// The stored graphs an index's rows are tiled with (see `graphs`), and
/// the first row none covers.
pub struct StoredGraphs {
    /// The graphs, in row order.
    pub graphs: Vec<std::sync::Arc<Graph>>,
    /// Rows from here on are in no loaded graph.
    pub covered: usize,
}

impl Index {
    /// The platform's default index location (`$XDG_DATA_HOME/papers/index` on Linux).
    pub fn default_dir() -> Option<PathBuf> {
        dirs::data_dir().map(|d| d.join("papers").join("index"))
    }

    /// Opens the index in `dir`: the manifest, the state, the mapped files
    /// (sizes checked); small indexes also get the full check.
    ///
    /// A reader sees one committed state, whole: the state, the records
    /// and the dead rows come from one database snapshot held for the
    /// reader's life, and every file that state names is opened before the
    /// open returns, so a later commit's deletions cannot reach it. If a
    /// rebuild switched the manifest to another data folder meanwhile, the
    /// open starts again from the new manifest.
    pub fn open(dir: &Path) -> Result<Index> {
        Index::open_from(dir, Index::read_manifest(dir)?)
    }

    /// [`Index::open`] from a manifest the caller has read already (a
    /// search reads it first to load the model meanwhile), so that it is
    /// read once; read again only if opening fails, in case a rebuild
    /// switched it meanwhile.
    pub fn open_from(dir: &Path, manifest: Manifest) -> Result<Index> {
        let mut manifest = manifest;
        let mut attempt = 0;
        loop {
            match Index::open_at(dir, manifest.clone()) {
                Ok(index) => return Ok(index),
                Err(e) => {
                    attempt += 1;
                    match Index::read_manifest(dir) {
                        Ok(now) if now != manifest && attempt < 3 => manifest = now,
                        _ => return Err(e),
                    }
                }
            }
        }
    }

    /// The manifest, or, when it is not papers', the reason the folder is
    /// not an index (rather than advice to rebuild over somebody's file).
    fn read_manifest(dir: &Path) -> Result<Manifest> {
        match Manifest::read(dir) {
            Err(e @ Error::IndexCorrupt { .. }) => match write::ownership::survey(dir) {
                Err(not_ours @ Error::NotAnIndex { .. }) => Err(not_ours),
                _ => Err(e),
            },
            other => other,
        }
    }

    fn open_at(dir: &Path, manifest: Manifest) -> Result<Index> {
        let data = dir.join(&manifest.data_dir);
        let db = Db::open(&data, false)?;
        db.snapshot()?;
        let state = db.state()?;
        test_pause("PAPERS_TEST_PAUSE_AFTER_STATE_MS");
        let dead = db.dead()?;
        let d = manifest.dimension;
        let rows = state.rows as usize;
        let vectors = RowFile::open(&data.join(rows::VECTORS), 4 * d, rows)?;
        let quantized = RowFile::open(&data.join(rows::QUANTIZED), 4 + d, rows)?;
        let binary = RowFile::open(&data.join(rows::BINARY), rows::binary_width(d), rows)?;
        let windows = RowFile::open(&data.join(rows::WINDOWS), 4 + 4 * d, state.windows as usize)?;
        let segment_files = state
            .segments
            .iter()
            .map(|s| Segment::file(&data.join(&s.name)))
            .collect::<Result<Vec<_>>>()?;
        let mut covered = 0;
        for s in &state.segments {
            if s.first_row != covered {
                return Err(Error::corrupt(db.path(), "lexical segments leave a gap"));
            }
            covered += s.docs;
        }
        if covered != state.rows || rows < dead.len() || (rows - dead.len()) as u64 != state.live {
            return Err(Error::corrupt(db.path(), "state does not add up"));
        }
        let index = Index {
            dir: dir.to_path_buf(),
            data,
            manifest,
            segments: state.segments.clone(),
            segment_files,
            state,
            db: Mutex::new(db),
            dead,
            vectors,
            quantized,
            binary,
            windows,
            lexical: OnceLock::new(),
            graph: OnceLock::new(),
            stored_graphs: OnceLock::new(),
            centre: OnceLock::new(),
        };
        if index.size_on_disk() < FULL_CHECK_BYTES {
            index.check()?;
        }
        Ok(index)
    }

    /// The index directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The data folder.
    pub fn data_dir(&self) -> &Path {
        &self.data
    }

    /// The manifest it was opened with.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The committed state it was opened at.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// Live records.
    pub fn len(&self) -> usize {
        self.state.live as usize
    }

    /// Whether there are no live records.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rows in the vector files, dead ones included.
    pub fn rows(&self) -> usize {
        self.state.rows as usize
    }

    /// Whether `row` holds a live record.
    pub fn is_live(&self, row: usize) -> bool {
        row < self.rows() && !self.dead.contains(&row)
    }

    pub(crate) fn db(&self) -> std::sync::MutexGuard<'_, Db> {
        self.db.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The f32 vectors, mapped.
    pub(crate) fn vectors_file(&self) -> &RowFile {
        &self.vectors
    }

    /// The int8 vectors, mapped.
    pub(crate) fn quantized_file(&self) -> &RowFile {
        &self.quantized
    }

    /// The sign bits of the vectors, mapped.
    pub(crate) fn binary_file(&self) -> &RowFile {
        &self.binary
    }

    /// The window vectors, mapped.
    pub(crate) fn windows_file(&self) -> &RowFile {
        &self.windows
    }

    /// Rows whose records were removed or replaced.
    pub(crate) fn dead_rows(&self) -> &BTreeSet<usize> {
        &self.dead
    }

    /// The collection's centre: the mean of a sample of its vectors, at
    /// unit length, computed on first use and kept for the life of this
    /// snapshot. A query about the collection's field lies nearer it than
    /// one from another field, whatever its best hits are (the no-match
    /// rule of hybrid search reads it).
    pub fn centre(&self) -> &[f32] {
        self.centre.get_or_init(|| centre_of(self))
    }

    /// The stored vector of the record at `row` (read, not mapped: see
    /// [`RowFile::read_row`]).
    pub fn vector(&self, row: usize) -> Vec<f32> {
        rows::f32s(&self.vectors.read_row(row)).into_owned()
    }

    /// The vector at `row` through the mapping, for scans that read them all.
    pub(crate) fn mapped_vector(&self, row: usize) -> std::borrow::Cow<'_, [f32]> {
        rows::f32s(self.vectors.row(row))
    }

    /// Every window as (row, vector).
    pub(crate) fn all_windows(&self) -> impl Iterator<Item = (usize, std::borrow::Cow<'_, [f32]>)> {
        (0..self.windows.rows()).filter_map(move |i| {
            let bytes = self.windows.row(i);
            let row = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
            self.is_live(row).then(|| (row, rows::f32s(&bytes[4..])))
        })
    }

    /// How many live records have window vectors, and how many windows in all.
    pub fn window_counts(&self) -> (usize, usize) {
        let rows: Vec<usize> = self.all_windows().map(|(r, _)| r).collect();
        let distinct: HashSet<usize> = rows.iter().copied().collect();
        (distinct.len(), rows.len())
    }

    /// Bytes of the manifest and the data folder's files.
    pub fn size_on_disk(&self) -> u64 {
        let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
        let mut total = size(&self.dir.join(manifest::MANIFEST));
        if let Ok(entries) = std::fs::read_dir(&self.data) {
            total += entries.flatten().map(|e| size(&e.path())).sum::<u64>();
        }
        total
    }

    /// The lexical segments, opened on first use (their term tables are
    /// checked then).
    pub fn lexical(&self) -> Result<&Lexical> {
        if let Some(lexical) = self.lexical.get() {
            return Ok(lexical);
        }
        let segments = self
            .segments
            .iter()
            .zip(&self.segment_files)
            .map(|(s, file)| {
                let path = self.data.join(&s.name);
                let file = file.try_clone().map_err(|e| Error::io(&path, e))?;
                Segment::open_file(file, &path, s.first_row, s.docs, s.bytes)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(self
            .lexical
            .get_or_init(|| Lexical::new(segments, self.rows())))
    }

    /// The HNSW graph over every row, built in memory on first use.
    pub(crate) fn graph(&self) -> &Graph {
        self.graph.get_or_init(|| {
            let bytes = self.vectors.bytes();
            Graph::build(&rows::f32s(bytes), self.manifest.dimension)
        })
    }

    /// The stored graphs over this index's rows, loaded on first use (a
    /// graph that cannot be read ends the tiling: its rows and those after
    /// are scanned).
    pub fn stored_graphs(&self) -> &StoredGraphs {
        self.stored_graphs.get_or_init(|| {
            let mut loaded = StoredGraphs {
                graphs: Vec::new(),
                covered: 0,
            };
            for tile in graphs::tiling(&self.data, self.rows()) {
                match graphs::load(&self.data, &tile) {
                    Some(graph) => {
                        loaded.graphs.push(graph);
                        loaded.covered = tile.end;
                    }
                    None => break,
                }
            }
            loaded
        })
    }
}

/// How many live vectors, spread evenly over the index, [`Index::centre`]
/// averages.
const CENTRE_SAMPLE: usize = 1024;

/// The mean of up to `CENTRE_SAMPLE` live vectors spread evenly over
/// `index`, at unit length (zero for an empty index).
fn centre_of(index: &Index) -> Vec<f32> {
    let rows = index.len();
    let step = rows.div_ceil(CENTRE_SAMPLE).max(1);
    let mut sum = vec![0f64; index.manifest().dimension];
    for row in (0..rows).step_by(step) {
        if index.dead_rows().contains(&row) {
            continue;
        }
        for (s, x) in sum.iter_mut().zip(index.mapped_vector(row).iter()) {
            *s += f64::from(*x);
        }
    }
    let norm = sum.iter().map(|s| s * s).sum::<f64>().sqrt();
    if norm == 0.0 {
        return vec![0.0; sum.len()];
    }
    sum.iter().map(|s| (s / norm) as f32).collect()
}

/// A pause for tests that race a reader against a writer: the variable
/// `name` holds milliseconds to sleep at that point of [`Index::open`].
/// Unset (always, outside those tests) it costs one environment lookup.
fn test_pause(name: &str) {
    if let Some(ms) = std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok()) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}
