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

pub mod db;
mod dupes;
pub mod files;
pub mod hnsw;
pub mod legacy;
pub mod manifest;
pub mod ownership;
pub mod rows;
pub mod segment;
pub mod update;

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

pub use dupes::Dupe;
pub use manifest::{Manifest, FORMAT_VERSION};
pub use update::{upgrade, IndexLock, ModelStamp, Update, UpdateReport};

use crate::error::{Error, Result};
use crate::paper::{validate_prefix, Paper, PaperId};
use crate::search::{combine, rank, top_k, top_k_chunks, Hit, Mode, SearchOptions, Strategy};
use db::{Alias, Db, State};
use hnsw::Graph;
use rows::RowFile;
use segment::{Lexical, Segment};

/// From this many records on, `auto` search scans the int8 vectors and
/// rescores the best candidates with the f32 ones; below it, it scans the
/// f32 vectors. The graph is never `auto`'s choice: a cold process pays
/// more to load or build it than the scan costs (`bench/scale.sh`).
pub const QUANTIZED_FROM: usize = 50_000;

/// Candidates the int8 scan passes to the f32 rescoring per hit wanted,
/// and at least.
const RESCORE_FACTOR: usize = 4;
const RESCORE_MIN: usize = 100;

/// The same for the binary scan, whose ranking is coarser.
const BINARY_FACTOR: usize = 40;
const BINARY_MIN: usize = 2000;

/// In hybrid mode, how deep each ranking goes: a record further down adds
/// under 1/1000 to its fused score.
const HYBRID_SEMANTIC_DEPTH: usize = 1000;

/// Indexes whose data files total less than this are fully checked on
/// every open.
const FULL_CHECK_BYTES: u64 = 16 << 20;

/// Subtracted from a window's cosine before it stands for its record: a
/// window is a fragment, and unpenalised fragments outrank whole abstracts
/// too often. `cargo bench --bench quality` on the seeds: 0.1 keeps every
/// tail query at rank 1 and costs nothing elsewhere; 0 costs 0.03 MRR on
/// known-item queries.
const WINDOW_PENALTY: f32 = 0.1;

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

    fn db(&self) -> std::sync::MutexGuard<'_, Db> {
        self.db.lock().unwrap_or_else(|e| e.into_inner())
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
    fn mapped_vector(&self, row: usize) -> std::borrow::Cow<'_, [f32]> {
        rows::f32s(self.vectors.row(row))
    }

    /// Every window as (row, vector).
    fn all_windows(&self) -> impl Iterator<Item = (usize, std::borrow::Cow<'_, [f32]>)> {
        (0..self.windows.rows()).filter_map(move |i| {
            let bytes = self.windows.row(i);
            let row = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
            self.is_live(row).then(|| (row, rows::f32s(&bytes[4..])))
        })
    }

    /// The window vectors of the record at `row` (none unless its text runs
    /// past the model's truncation point).
    pub fn windows_of(&self, row: usize) -> Vec<Vec<f32>> {
        self.all_windows()
            .filter(|(r, _)| *r == row)
            .map(|(_, v)| v.into_owned())
            .collect()
    }

    /// How many live records have window vectors, and how many windows in all.
    pub fn window_counts(&self) -> (usize, usize) {
        let rows: Vec<usize> = self.all_windows().map(|(r, _)| r).collect();
        let distinct: HashSet<usize> = rows.iter().copied().collect();
        (distinct.len(), rows.len())
    }

    /// Raises each hit's score to its best window's, and adds records whose
    /// windows score where the candidates did not reach.
    fn apply_windows(&self, hits: &mut Vec<Hit>, query: &[f32], keep: &dyn Fn(usize) -> bool) {
        if self.windows.rows() == 0 {
            return;
        }
        let mut best: std::collections::HashMap<usize, f32> = std::collections::HashMap::new();
        for (row, vector) in self.all_windows() {
            if !keep(row) {
                continue;
            }
            let score = crate::search::dot(&vector, query) - WINDOW_PENALTY;
            let slot = best.entry(row).or_insert(f32::MIN);
            *slot = slot.max(score);
        }
        for hit in hits.iter_mut() {
            if let Some(score) = best.remove(&hit.row) {
                hit.score = hit.score.max(score);
            }
        }
        hits.extend(best.into_iter().map(|(row, score)| {
            Hit::new(row, score.max(crate::search::dot(&self.vector(row), query)))
        }));
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

    /// The strategy `auto` resolves to for this index.
    pub fn resolve_strategy(&self, strategy: Strategy) -> Strategy {
        match strategy {
            Strategy::Auto if self.len() >= QUANTIZED_FROM => Strategy::Quantized,
            Strategy::Auto => Strategy::Exact,
            other => other,
        }
    }

    /// The row of the record whose id starts with `prefix` (at least 4 hex
    /// digits), whose arXiv id is `prefix`, or whose id in its JSON input
    /// (a BEIR `_id`, an export's key) is exactly `prefix`; an error lists
    /// the candidates when several ids match.
    pub fn resolve(&self, prefix: &str) -> Result<usize> {
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
        if let Some(wanted) = crate::records::arxiv_id(prefix) {
            return db
                .row_by(Alias::Arxiv, &wanted)?
                .ok_or_else(|| Error::UnknownId {
                    id: prefix.to_string(),
                });
        }
        let wanted = validate_prefix(prefix)?;
        let matches = db.rows_with_prefix(&wanted, 11)?;
        match matches.as_slice() {
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

    /// The row of the record with exactly this id, if present.
    pub fn row_of(&self, id: PaperId) -> Result<Option<usize>> {
        self.db().row_of(id)
    }

    /// The records nearest to a query vector.
    pub fn search(&self, query: &[f32], options: &SearchOptions) -> Result<Vec<Hit>> {
        self.nearest(query, &[], options)
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

    /// The rows a search may return: live, not excluded, within the dates.
    fn filter(
        &self,
        exclude: &[usize],
        options: &SearchOptions,
    ) -> Result<impl Fn(usize) -> bool + Sync + '_> {
        let dated = if options.dates.is_set() {
            Some(self.db().rows_dated(
                options.dates.since.unwrap_or(0),
                options.dates.until.unwrap_or(u32::MAX),
            )?)
        } else {
            None
        };
        let exclude: HashSet<usize> = exclude.iter().copied().collect();
        Ok(move |row: usize| {
            !self.dead.contains(&row)
                && !exclude.contains(&row)
                && dated.as_ref().is_none_or(|d| d.contains(&row))
        })
    }

    /// Answers a text query in `options.mode`: `vector` is the query's
    /// embedding (needed unless the mode is lexical). A record's semantic
    /// score is the best of its vector's and its windows'.
    pub fn search_text(
        &self,
        text: &str,
        vector: Option<&[f32]>,
        options: &SearchOptions,
    ) -> Result<Vec<Hit>> {
        let keep = self.filter(&[], options)?;
        let semantic = match (options.mode, vector) {
            (Mode::Lexical, _) => Vec::new(),
            (_, Some(vector)) => {
                // Fusion needs more than the final count.
                let depth = match options.mode {
                    Mode::Hybrid => options.limit.max(HYBRID_SEMANTIC_DEPTH),
                    _ => options.limit,
                };
                let mut hits = self.candidates(vector, &keep, depth, options.strategy)?;
                self.apply_windows(&mut hits, vector, &keep);
                self.sane(&hits)?;
                hits
            }
            (mode, None) => return Err(Error::NeedsEmbedding { mode: mode.name() }),
        };
        let lexical = match options.mode {
            Mode::Semantic => Vec::new(),
            mode => {
                let mut hits: Vec<Hit> = self
                    .lexical()?
                    .score(text)?
                    .into_iter()
                    .filter(|&(row, _)| keep(row))
                    .map(|(row, score)| Hit::new(row, score))
                    .collect();
                // Only the top of the ranking is used: the final hits in
                // lexical mode, as deep as the semantic side in hybrid.
                let depth = match mode {
                    Mode::Hybrid => options.limit.max(HYBRID_SEMANTIC_DEPTH),
                    _ => options.limit,
                };
                crate::search::keep_best(&mut hits, depth);
                hits
            }
        };
        Ok(combine(semantic, lexical, options))
    }

    /// Loads now what [`Index::search_text`] with `options` will read (the
    /// lexical segments, the vectors' pages, the graph), so that a caller
    /// can do so while it waits for something else, such as the model.
    pub fn prepare(&self, options: &SearchOptions) -> Result<()> {
        if options.mode != Mode::Semantic {
            self.lexical()?;
        }
        if options.mode != Mode::Lexical {
            match self.resolve_strategy(options.strategy) {
                Strategy::Graph => {
                    self.graph();
                }
                Strategy::Quantized => self.quantized.will_need(),
                Strategy::Binary => self.binary.will_need(),
                _ => self.vectors.will_need(),
            }
        }
        Ok(())
    }

    /// The records nearest to the record at `row`, never the record itself.
    pub fn similar(&self, row: usize, options: &SearchOptions) -> Result<Vec<Hit>> {
        let query = self.vector(row);
        self.nearest(&query, &[row], options)
    }

    /// The records nearest to the records at `like` and away from those at
    /// `unlike` (the mean of the first set minus half the mean of the
    /// second), never any of them.
    pub fn similar_to_set(
        &self,
        like: &[usize],
        unlike: &[usize],
        options: &SearchOptions,
    ) -> Result<Vec<Hit>> {
        let d = self.manifest.dimension;
        let mean = |rows: &[usize]| {
            let mut sum = vec![0f32; d];
            for &row in rows {
                for (s, x) in sum.iter_mut().zip(self.vector(row).iter()) {
                    *s += x / rows.len() as f32;
                }
            }
            sum
        };
        let mut query = mean(like);
        if !unlike.is_empty() {
            for (q, x) in query.iter_mut().zip(mean(unlike)) {
                *q -= 0.5 * x;
            }
        }
        let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            query.iter_mut().for_each(|x| *x /= norm);
        }
        let exclude: Vec<usize> = like.iter().chain(unlike).copied().collect();
        self.nearest(&query, &exclude, options)
    }

    /// The records nearest to a vector, never those in `exclude`, within
    /// the date window, ranked.
    fn nearest(
        &self,
        query: &[f32],
        exclude: &[usize],
        options: &SearchOptions,
    ) -> Result<Vec<Hit>> {
        let keep = self.filter(exclude, options)?;
        let hits = self.candidates(query, &keep, options.limit, options.strategy)?;
        let hits = rank(hits, options);
        self.sane(&hits)?;
        Ok(hits)
    }

    /// Checks cosine scores before they are shown: a unit vector scores
    /// from -1 to 1 (a window down to -1 minus its penalty), so anything
    /// else, or no number at all, is a damaged vector file. O(hits).
    pub(crate) fn sane(&self, hits: &[Hit]) -> Result<()> {
        let bad = hits.iter().find(|h| {
            !(h.score.is_finite() && (-1.0 - WINDOW_PENALTY - 1e-3..=1.0 + 1e-3).contains(&h.score))
        });
        match bad {
            None => Ok(()),
            Some(hit) => Err(Error::corrupt(
                self.vectors.path(),
                format!(
                    "record at row {} scores {}, which no unit vector can",
                    hit.row, hit.score
                ),
            )),
        }
    }

    /// Unranked candidates for a query vector, at least the best `wanted`
    /// of the rows `keep` accepts, scored with the f32 vectors.
    fn candidates(
        &self,
        query: &[f32],
        keep: &(dyn Fn(usize) -> bool + Sync),
        wanted: usize,
        strategy: Strategy,
    ) -> Result<Vec<Hit>> {
        if query.len() != self.manifest.dimension {
            return Err(Error::Dimension {
                what: "the query vector".into(),
                found: query.len(),
                expected: self.manifest.dimension,
            });
        }
        let rows = self.rows();
        let wanted = wanted.min(rows);
        let exact = |row: usize| crate::search::dot(&self.vector(row), query);
        Ok(match self.resolve_strategy(strategy) {
            Strategy::Graph if rows > 0 => {
                // Ask for more than wanted: dead or filtered rows are dropped.
                let ask = wanted
                    .saturating_add(rows - self.len())
                    .saturating_mul(2)
                    .min(rows);
                self.graph()
                    .search(query, ask)
                    .into_iter()
                    .filter(|&(row, _)| row < rows && keep(row))
                    .map(|(row, _)| Hit::new(row, exact(row)))
                    .collect()
            }
            Strategy::Binary => {
                let bits = rows::binarize(query);
                let pool = (wanted * BINARY_FACTOR).max(BINARY_MIN);
                let approx = top_k(
                    rows,
                    pool,
                    |row| -(rows::hamming(self.binary.row(row), &bits) as f32),
                    keep,
                );
                approx
                    .into_iter()
                    .map(|h| Hit::new(h.row, exact(h.row)))
                    .collect()
            }
            Strategy::Quantized => {
                let pool = (wanted * RESCORE_FACTOR).max(RESCORE_MIN);
                let (q, scale) = rows::quantize_query(query);
                let width = 4 + self.manifest.dimension;
                let bytes = self.quantized.bytes();
                let approx = top_k_chunks(
                    rows,
                    pool,
                    |range, out| {
                        let chunk = &bytes[range.start * width..range.end * width];
                        rows::quantized_scores(chunk, width, &q, scale, out);
                    },
                    keep,
                );
                approx
                    .into_iter()
                    .map(|h| Hit::new(h.row, exact(h.row)))
                    .collect()
            }
            _ => top_k(
                rows,
                wanted,
                |row| crate::search::dot(&self.mapped_vector(row), query),
                keep,
            ),
        })
    }

    /// The HNSW graph over every row, built in memory on first use.
    fn graph(&self) -> &Graph {
        self.graph.get_or_init(|| {
            let bytes = self.vectors.bytes();
            Graph::build(&rows::f32s(bytes), self.manifest.dimension)
        })
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
        if crc32fast::hash(self.windows.bytes()) != self.state.windows_crc {
            return Err(Error::corrupt(
                self.windows.path(),
                "windows do not match their checksum",
            ));
        }
        for segment in self.lexical()?.segments() {
            segment.check_postings()?;
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
