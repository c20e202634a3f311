//! A persistent index: records in SQLite, vectors in memory-mapped
//! append-only files, BM25 postings in immutable segments.
//!
//! # On-disk format (version 3)
//!
//! ```text
//! INDEX_DIR/
//!   manifest.json      what the vectors mean: format version, model id,
//!                      weights SHA-256, dimension, truncation; the data
//!                      folder; a SHA-256 of the rest. Written atomically when
//!                      the data folder is created (new index, --rebuild,
//!                      upgrade from format 2), never by an update
//!   lock               held by the one process writing the index
//!   data-000002/
//!     papers-data-folder  the marker: papers made this folder, and may
//!                      remove it when a rebuild replaces it (see `ownership`)
//!     papers.sqlite    the records, the per-file counts and the committed
//!                      state (see `db`): the commit point of every update;
//!                      write-ahead logging, so readers keep a snapshot
//!     vectors.f32      little-endian f32 × dimension per row, appended
//!     vectors.i8       per row an f32 scale and dimension × i8, appended
//!     windows.f32      vectors of the text of long records past the model's
//!                      truncation point: (u32 row, f32 × dimension), appended
//!     lex-*.seg        BM25 segments over runs of rows (see `segment`)
//!     graph-START-END.hnsw
//!                      from 50,000 rows: HNSW graphs over runs of rows,
//!                      written after the commit, a cache (see `graphs`)
//! ```
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

pub mod bm25;
pub mod commit;
pub mod db;
pub mod files;
pub mod graph;
pub mod graphs;
pub mod hnsw;
pub mod import;
pub mod legacy;
pub mod manifest;
pub mod ownership;
pub mod reading;
pub mod removed;
pub mod rows;
pub mod runs;
pub mod scope;
pub mod segment;
pub mod staged;
pub mod tags;
pub mod update;
pub mod upgrade;

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

pub use manifest::{Manifest, FORMAT_VERSION};
pub use update::{IndexLock, ModelStamp, Update, UpdateReport};
pub use upgrade::upgrade;

use crate::error::{Error, Result};
use crate::paper::{validate_prefix, Paper, PaperId};
use bm25::Lexical;
use db::{Alias, Db, State};
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
}

/// The stored graphs an index's rows are tiled with (see [`graphs`]), and
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
        let mut attempt = 0;
        loop {
            let manifest = Index::read_manifest(dir)?;
            match Index::open_at(dir, manifest.clone()) {
                Ok(index) => return Ok(index),
                Err(e) => {
                    attempt += 1;
                    let moved = Manifest::read(dir).is_ok_and(|now| now != manifest);
                    if !moved || attempt >= 3 {
                        return Err(e);
                    }
                }
            }
        }
    }

    /// The manifest, or, when it is not papers', the reason the folder is
    /// not an index (rather than advice to rebuild over somebody's file).
    fn read_manifest(dir: &Path) -> Result<Manifest> {
        match Manifest::read(dir) {
            Err(e @ Error::IndexCorrupt { .. }) => match ownership::survey(dir) {
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

    /// The record at `row`.
    pub fn paper(&self, row: usize) -> Result<Paper> {
        self.db().paper(row)?.ok_or_else(|| {
            Error::corrupt(
                self.data.join(db::DATABASE),
                format!("no record for row {row}"),
            )
        })
    }

    /// Every live record with its row, in id order.
    pub fn papers(&self) -> Result<Vec<(usize, Paper)>> {
        let mut all = Vec::with_capacity(self.len());
        self.for_each_paper(|row, paper| {
            all.push((row, paper));
            Ok(())
        })?;
        Ok(all)
    }

    /// Calls `f` with every live record and its row, in id order.
    pub fn for_each_paper(&self, f: impl FnMut(usize, Paper) -> Result<()>) -> Result<()> {
        self.db().for_each(true, f)
    }

    /// The entries of `tag` (of every tag when `None`), as of this state.
    pub fn tag_entries(&self, tag: Option<&str>) -> Result<Vec<tags::TagEntry>> {
        self.db().tag_entries(tag)
    }

    /// The reader's marks (seen, read, saved), as of this state.
    pub fn marks(&self) -> Result<Vec<reading::Mark>> {
        self.db().marks()
    }

    /// The `papers index` runs that committed at or after `at` (Unix
    /// seconds), oldest first.
    pub fn runs_since(&self, at: u64) -> Result<Vec<runs::Run>> {
        self.db().runs_since(at)
    }

    /// Live rows of records published within `since..=until` (`YYYYMMDD`).
    pub fn rows_dated(&self, since: u32, until: u32) -> Result<std::collections::HashSet<usize>> {
        self.db().rows_dated(since, until)
    }

    /// Records seen in each input file, for `info`.
    pub fn file_counts(&self) -> Result<std::collections::BTreeMap<String, usize>> {
        self.db().file_counts()
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

    /// The row of the record whose id starts with `prefix` (at least 4 hex
    /// digits), whose arXiv id is `prefix`, or whose id in its JSON input
    /// (a BEIR `_id`, an export's key) is exactly `prefix`; an error lists
    /// the candidates when several ids match.
    pub fn resolve(&self, prefix: &str) -> Result<usize> {
        let prefix = crate::input::id_in_page_url(prefix);
        let db = self.db();
        // An input's own id is the most specific: it wins over a hex prefix
        // that happens to spell it (BEIR's ids are decimal).
        if !prefix.is_empty() {
            if let Some(row) = db.row_by(Alias::SourceId, prefix)? {
                return Ok(row);
            }
        }
        // An arXiv id (from a JSON input) is an alias: `2405.01234`,
        // optionally with `arXiv:` before it or a version after it.
        if let Some(wanted) = crate::input::arxiv_id(prefix) {
            return db
                .row_by(Alias::Arxiv, &wanted)?
                .ok_or_else(|| Error::UnknownId {
                    id: prefix.to_string(),
                });
        }
        // An input's own id typed in another case (`x1` for `X1`): looked
        // for only when the text is no hex id, since it scans the column.
        let wanted = match validate_prefix(prefix) {
            Ok(wanted) => wanted,
            Err(e) => {
                return match db.row_by_source_id_ignoring_case(prefix)? {
                    Some(row) => Ok(row),
                    None => Err(e),
                }
            }
        };
        let matches = db.rows_with_prefix(&wanted, 11)?;
        match matches.as_slice() {
            [] if db
                .removals()
                .unwrap_or_default()
                .iter()
                .any(|r| r.paper.id.hex().starts_with(&wanted)) =>
            {
                Err(Error::Removed {
                    id: prefix.to_string(),
                })
            }
            [] => Err(Error::UnknownId {
                id: prefix.to_string(),
            }),
            [(row, _)] => Ok(*row),
            rows => Err(Error::AmbiguousId {
                prefix: prefix.to_string(),
                candidates: rows.iter().map(|(_, id)| id.clone()).collect(),
            }),
        }
    }

    /// The row of the live record with this arXiv id (without version).
    pub fn resolve_arxiv(&self, arxiv: &str) -> Result<Option<usize>> {
        self.db().row_by(Alias::Arxiv, arxiv)
    }

    /// How many records have no publication date.
    pub fn undated(&self) -> Result<usize> {
        self.db().undated()
    }

    /// The papers the reader removed, oldest first (see [`removed`]).
    pub fn removals(&self) -> Result<Vec<removed::Removal>> {
        self.db().removals()
    }

    /// The row of the record with exactly this id, if present.
    pub fn row_of(&self, id: PaperId) -> Result<Option<usize>> {
        self.db().row_of(id)
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

    /// Whether stored graphs exist for this index (without loading them).
    pub fn has_stored_graphs(&self) -> bool {
        !graphs::tiling(&self.data, self.rows()).is_empty()
    }

    /// The full check: SQLite's integrity check, every record against its
    /// id and row, the CRC-32 of every appended run, of the windows and of
    /// every segment. The error names the first damaged file.
    pub fn check(&self) -> Result<()> {
        let db = self.db();
        if let Some(problem) = db.integrity()? {
            return Err(Error::corrupt(db.path(), problem));
        }
        let mut live = 0u64;
        db.for_each(false, |row, paper| {
            live += 1;
            if PaperId::of(&paper.text) != paper.id || row >= self.rows() {
                return Err(Error::corrupt(
                    db.path(),
                    format!("record {} does not match its text", paper.id),
                ));
            }
            Ok(())
        })?;
        if live != self.state.live {
            return Err(Error::corrupt(
                db.path(),
                "record count does not match the state",
            ));
        }
        drop(db);
        let d = self.manifest.dimension;
        let mut next = 0;
        for chunk in &self.state.chunks {
            let range = |width: usize| {
                chunk.start as usize * width..(chunk.start + chunk.rows) as usize * width
            };
            let ok = chunk.start == next
                && crc32fast::hash(&self.vectors.bytes()[range(4 * d)]) == chunk.vectors_crc;
            if !ok {
                return Err(Error::corrupt(
                    self.vectors.path(),
                    "vectors do not match their checksums",
                ));
            }
            let binary = &self.binary.bytes()[range(rows::binary_width(d))];
            if crc32fast::hash(binary) != chunk.binary_crc {
                return Err(Error::corrupt(
                    self.binary.path(),
                    "vectors do not match their checksums",
                ));
            }
            if crc32fast::hash(&self.quantized.bytes()[range(4 + d)]) != chunk.quantized_crc {
                return Err(Error::corrupt(
                    self.quantized.path(),
                    "vectors do not match their checksums",
                ));
            }
            next = chunk.start + chunk.rows;
        }
        if next != self.state.rows {
            return Err(Error::corrupt(
                self.vectors.path(),
                "rows without a checksum",
            ));
        }
        self.check_unit_rows()?;
        let width = 4 + 4 * d;
        let windows = self.windows.bytes();
        let all = self.state.windows as usize * width;
        let mut ok = windows.len() >= all
            && crc32fast::hash(&windows[..all]) == self.state.whole_windows_crc(width as u64);
        let mut next = self
            .state
            .window_chunks
            .first()
            .map_or(self.state.windows, |c| c.start);
        for chunk in &self.state.window_chunks {
            let range = chunk.start as usize * width..(chunk.start + chunk.rows) as usize * width;
            ok &= chunk.start == next
                && windows.len() >= range.end
                && crc32fast::hash(&windows[range]) == chunk.crc;
            next = chunk.start + chunk.rows;
        }
        if !ok || next != self.state.windows {
            return Err(Error::corrupt(
                self.windows.path(),
                "windows do not match their checksums",
            ));
        }
        for segment in self.lexical()?.segments() {
            segment.check_postings()?;
        }
        Ok(())
    }
}

impl Index {
    /// Every stored vector row is a unit vector: a row that is not (a value
    /// that is not finite, a row of zeros, a length far from 1) would be
    /// scored wrongly, or refused by search, so the check names it.
    fn check_unit_rows(&self) -> Result<()> {
        let d = self.manifest.dimension;
        let bytes = self.vectors.bytes();
        let rows = (self.state.rows as usize).min(bytes.len() / (4 * d));
        for row in 0..rows {
            let at = row * 4 * d;
            let mut length = 0f64;
            for value in bytes[at..at + 4 * d].chunks_exact(4) {
                let x = f32::from_le_bytes([value[0], value[1], value[2], value[3]]);
                length += f64::from(x) * f64::from(x);
            }
            if !length.is_finite() || (length - 1.0).abs() > 1e-2 {
                return Err(Error::corrupt(
                    self.vectors.path(),
                    format!(
                        "the vector at row {row} is not of unit length (squared length {length})"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A pause for tests that race a reader against a writer: the variable
/// `name` holds milliseconds to sleep at that point of [`Index::open`].
/// Unset (always, outside those tests) it costs one environment lookup.
fn test_pause(name: &str) {
    if let Some(ms) = std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok()) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}
