//! The records store: `papers.sqlite`, one SQLite database holding every
//! record, the per-file counts `info` prints, and the index's state (how
//! many vector rows are committed, which lexical segments are live). One
//! transaction commits an update, so the database is the index's single
//! commit point: files it names were synced before it names them.
//!
//! ```text
//! meta(key, value)            'state': the JSON of [`State`]
//! papers(row, id, arxiv, source_id, date, body)
//!                             row: the record's vector row; id: 16 hex digits;
//!                             body: the JSON of the Paper
//! dead(row)                   rows whose records were removed or replaced
//! files(file, records)        records seen in each input file
//! tags(tag, id, liked, at)    the reader's tags (see super::tags)
//! reading(id, state, at)      the reader's marks: seen, read, saved (see super::reading)
//! runs(run, at, first_row, rows)
//!                             what each `papers index` run added (see super::runs)
//! ```

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::paper::{Paper, PaperId};

/// The database's file name in the index directory.
pub const DATABASE: &str = "papers.sqlite";

/// 16 KiB pages: an abstract's row is 1-2 KB, and at the default 4 KiB a
/// quarter of every page was slack (papers.sqlite 206 MB for 156 MB of rows
/// at 100k records).
const SCHEMA: &str = "
PRAGMA page_size = 16384;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE papers (
    row INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    arxiv TEXT,
    source_id TEXT,
    date INTEGER,
    body TEXT NOT NULL
);
CREATE INDEX papers_arxiv ON papers(arxiv) WHERE arxiv IS NOT NULL;
CREATE INDEX papers_source_id ON papers(source_id) WHERE source_id IS NOT NULL;
CREATE INDEX papers_date ON papers(date) WHERE date IS NOT NULL;
CREATE TABLE dead (row INTEGER PRIMARY KEY);
CREATE TABLE files (file TEXT PRIMARY KEY, records INTEGER NOT NULL);
";

/// Tables added after format 3 was first written: created by every
/// writer that opens a database without them (readers treat a missing
/// one as empty). `tags` are the reader's profiles (see [`super::tags`]),
/// `reading` the reader's marks (see [`super::reading`]), `runs` what each
/// `papers index` run added (see [`super::runs`]),
/// `removed` the papers the reader removed (see [`super::removed`]).
pub(super) const LATER_TABLES: &str = "
CREATE TABLE IF NOT EXISTS tags (
    tag TEXT NOT NULL,
    id TEXT NOT NULL,
    liked INTEGER NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (tag, id)
);
CREATE TABLE IF NOT EXISTS removed (
    id TEXT PRIMARY KEY,
    arxiv TEXT,
    at INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS reading (
    id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    run INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    first_row INTEGER NOT NULL,
    rows INTEGER NOT NULL
);
";

/// One lexical segment file and the rows it covers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentEntry {
    /// File name in the index directory.
    pub name: String,
    /// First row covered.
    pub first_row: u64,
    /// Rows covered.
    pub docs: u64,
    /// File length.
    pub bytes: u64,
}

/// A run of rows appended by one update, with the CRC-32 of their bytes in
/// each row file, for the full check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// First row.
    pub start: u64,
    /// Rows.
    pub rows: u64,
    /// CRC-32 of the rows' bytes in `vectors.f32`.
    pub vectors_crc: u32,
    /// CRC-32 of the rows' bytes in `vectors.i8`.
    pub quantized_crc: u32,
    /// CRC-32 of the rows' bytes in `vectors.b1`.
    pub binary_crc: u32,
}

/// A run of window rows appended by one update, with the CRC-32 of their
/// bytes in `windows.f32`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowChunk {
    /// First window row.
    pub start: u64,
    /// Window rows.
    pub rows: u64,
    /// CRC-32 of their bytes.
    pub crc: u32,
}

/// The CRC-32 of `a` followed by `b`, from theirs and `b`'s length.
pub fn crc_after(a: u32, b: u32, b_len: u64) -> u32 {
    let mut whole = crc32fast::Hasher::new_with_initial(a);
    whole.combine(&crc32fast::Hasher::new_with_initial_len(b, b_len));
    whole.finalize()
}

/// What is committed: everything a reader needs besides the records.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// Increases by one with every commit.
    pub generation: u64,
    /// Vector rows committed (live and dead).
    pub rows: u64,
    /// Live records.
    pub live: u64,
    /// Window rows committed in `windows.f32`.
    pub windows: u64,
    /// CRC-32 of all the window rows, as every papers build checks it
    /// (kept up to date by combining each append's checksum, without
    /// reading the rows before it). In an index whose last commit was made
    /// by the build that introduced `window_chunks` and not this flag,
    /// it is the checksum of the rows before the first chunk only.
    pub windows_crc: u32,
    /// Whether `windows_crc` covers all the window rows (see there).
    #[serde(default)]
    pub windows_crc_whole: bool,
    /// The window rows each update appended, with their checksums.
    #[serde(default)]
    pub window_chunks: Vec<WindowChunk>,
    /// Lexical segments, in row order, covering rows `0..rows`.
    pub segments: Vec<SegmentEntry>,
    /// The appends, for the full check.
    pub chunks: Vec<Chunk>,
    /// Segments the last commit merged away, deleted by the next one.
    #[serde(default)]
    pub retired: Vec<String>,
}

impl State {
    /// The CRC-32 of all the window rows (each `width` bytes), whichever
    /// meaning `windows_crc` has in this state.
    pub fn whole_windows_crc(&self, width: u64) -> u32 {
        if self.windows_crc_whole || self.window_chunks.is_empty() {
            return self.windows_crc;
        }
        self.window_chunks
            .iter()
            .fold(self.windows_crc, |crc, chunk| {
                crc_after(crc, chunk.crc, chunk.rows * width)
            })
    }
}

/// An open records store.
pub struct Db {
    path: PathBuf,
    pub(super) conn: Connection,
}

/// A database error as what is true: damage is damage, but a full disk,
/// a lock held by another process, a read-only mount or a missing
/// permission are said as such, with advice that fits (the index itself
/// is intact in each of them).
pub(super) fn sql(path: &Path, e: rusqlite::Error) -> Error {
    use rusqlite::ErrorCode;
    let storage = |problem: &str| Error::Storage {
        path: path.to_path_buf(),
        problem: problem.to_string(),
    };
    let rusqlite::Error::SqliteFailure(ref f, _) = e else {
        return Error::corrupt(path, format!("database error: {e}"));
    };
    match f.code {
        ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt => {
            Error::corrupt(path, format!("damaged database: {e}"))
        }
        ErrorCode::DiskFull => storage(
            "disk full (no space left on the device); the index is unchanged: free some space \
             and run the command again",
        ),
        ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => storage(
            "busy: another process holds the index's database locked; run the command again \
             when it has finished",
        ),
        ErrorCode::ReadOnly => storage(
            "read-only: papers cannot write here (a read-only mount or file); if a writer was \
             killed, its journal is rolled back by the next papers command run where the index \
             is writable",
        ),
        ErrorCode::PermissionDenied
        | ErrorCode::CannotOpen
        | ErrorCode::AuthorizationForStatementDenied => match std::fs::File::open(path) {
            Err(io) => Error::io(path, io),
            Ok(_) => storage(
                "cannot be opened: papers needs to write beside it (permission denied or \
                     a read-only folder)",
            ),
        },
        ErrorCode::SystemIoFailure if no_space(path) => storage(
            "disk full (no space left on the device); the index is unchanged: free some space \
             and run the command again",
        ),
        ErrorCode::SystemIoFailure => storage(&format!(
            "I/O error ({e}); the index is unchanged if a write failed"
        )),
        _ => Error::corrupt(path, format!("database error: {e}")),
    }
}

/// Whether the file system holding `path` has no room left: SQLite says
/// "I/O error" when it cannot grow its shared-memory file there.
fn no_space(path: &Path) -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::ffi::OsStrExt;
        let folder = path.parent().unwrap_or(path);
        let Ok(name) = std::ffi::CString::new(folder.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: statvfs reads a C string and fills the struct given.
        let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(name.as_ptr(), &mut stat) } == 0 {
            return stat.f_bavail == 0;
        }
    }
    let _ = path;
    false
}

impl Db {
    /// Opens the store of an existing index; a missing file is damage. A
    /// writer switches the database to write-ahead logging (an index made
    /// before it was the default); a reader then takes its snapshot with
    /// [`Db::snapshot`].
    pub fn open(dir: &Path, write: bool) -> Result<Db> {
        let path = dir.join(DATABASE);
        if !path.is_file() {
            return Err(Error::corrupt(&path, "file is missing"));
        }
        // Read-write even for readers: SQLite must be able to roll back
        // the journal of a writer that was killed mid-commit, and a reader
        // in WAL mode writes the shared-memory index beside the database.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = match Connection::open_with_flags(&path, flags) {
            Ok(conn) => conn,
            Err(e) => return Err(sql(&path, e)),
        };
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| sql(&path, e))?;
        let db = Db { path, conn };
        if write {
            db.wal()?;
            db.conn.execute_batch(LATER_TABLES).map_err(|e| db.err(e))?;
        } else if db.read_only() {
            return Db::open_immutable(dir);
        } else {
            // Best effort: a reader that cannot switch (another process is
            // mid-write) reads in the old mode.
            let _ = db.wal();
            // The first read makes the shared-memory index beside the
            // database; on a full disk that fails, and the index is read
            // as it stands when no writer left a log to apply.
            let probe = db
                .conn
                .query_row("SELECT count(*) FROM meta", [], |r| r.get::<_, i64>(0));
            if let Err(e) = probe {
                let cannot_write = matches!(
                    e.sqlite_error_code(),
                    Some(
                        rusqlite::ErrorCode::DiskFull
                            | rusqlite::ErrorCode::SystemIoFailure
                            | rusqlite::ErrorCode::CannotOpen
                            | rusqlite::ErrorCode::ReadOnly
                    )
                );
                let log = dir.join(format!("{DATABASE}-wal"));
                let pending = std::fs::metadata(&log).is_ok_and(|m| m.len() > 0);
                if cannot_write && !pending {
                    drop(db);
                    return Db::open_immutable(dir);
                }
                return Err(db.err(e));
            }
        }
        Ok(db)
    }

    /// Whether the database file cannot be written (a read-only mount or
    /// file), so SQLite cannot keep its WAL index beside it.
    fn read_only(&self) -> bool {
        self.conn.is_readonly(c"main").unwrap_or(false)
    }

    /// Opens a database that cannot be written as immutable: no writer can
    /// change it, so no lock or WAL index is needed. Refused when a killed
    /// writer left a journal or log that would have to be applied first.
    fn open_immutable(dir: &Path) -> Result<Db> {
        let path = dir.join(DATABASE);
        for suffix in ["-journal", "-wal"] {
            let side = dir.join(format!("{DATABASE}{suffix}"));
            if std::fs::metadata(&side).is_ok_and(|m| m.len() > 0) {
                return Err(Error::Storage {
                    path: side,
                    problem: "read-only: a writer that was killed left this to be applied, which \
                              needs write access; run any papers command where the index is \
                              writable, then read it here"
                        .into(),
                });
            }
        }
        let uri = format!("file:{}?immutable=1", path.display());
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&uri, flags).map_err(|e| sql(&path, e))?;
        Ok(Db { path, conn })
    }

    /// Switches to write-ahead logging, where readers keep a snapshot
    /// while a writer commits.
    fn wal(&self) -> Result<()> {
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            self.conn
                .query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Starts the read transaction a reader keeps for its whole life:
    /// every later read (the state, the records, the dead rows) sees the
    /// one committed state it started at, whatever a writer commits
    /// meanwhile.
    pub fn snapshot(&self) -> Result<()> {
        self.conn.execute_batch("BEGIN").map_err(|e| self.err(e))?;
        // The snapshot is taken by the first read, not by BEGIN.
        self.state().map(|_| ())
    }

    /// Creates a new, empty store at `path` (which must not exist).
    pub fn create(path: &Path) -> Result<Db> {
        let conn = Connection::open(path).map_err(|e| sql(path, e))?;
        conn.execute_batch(SCHEMA).map_err(|e| sql(path, e))?;
        conn.execute_batch(LATER_TABLES).map_err(|e| sql(path, e))?;
        let db = Db {
            path: path.to_path_buf(),
            conn,
        };
        db.wal()?;
        db.conn
            .execute(
                "INSERT INTO meta(key, value) VALUES ('state', ?1)",
                [serde_json::to_string(&State::default()).expect("state serialises")],
            )
            .map_err(|e| sql(path, e))?;
        Ok(db)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn err(&self, e: rusqlite::Error) -> Error {
        sql(&self.path, e)
    }

    /// Whether the database has `table` (one of [`LATER_TABLES`] may be
    /// missing from a database no writer has opened since).
    pub(super) fn has_table(&self, table: &str) -> Result<bool> {
        self.conn
            .prepare_cached("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")
            .and_then(|mut s| s.exists([table]))
            .map_err(|e| self.err(e))
    }

    /// The committed state.
    pub fn state(&self) -> Result<State> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'state'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.err(e))?;
        let text = text.ok_or_else(|| Error::corrupt(&self.path, "no state"))?;
        serde_json::from_str(&text)
            .map_err(|e| Error::corrupt(&self.path, format!("invalid state: {e}")))
    }

    fn decode(&self, body: &str) -> Result<Paper> {
        serde_json::from_str(body)
            .map_err(|e| Error::corrupt(&self.path, format!("invalid record: {e}")))
    }

    /// The record at `row`, if it is live.
    pub fn paper(&self, row: usize) -> Result<Option<Paper>> {
        let body: Option<String> = self
            .conn
            .prepare_cached("SELECT body FROM papers WHERE row = ?1")
            .and_then(|mut s| s.query_row([row as i64], |r| r.get(0)).optional())
            .map_err(|e| self.err(e))?;
        body.map(|b| self.decode(&b)).transpose()
    }

    /// The row of the record with this id.
    pub fn row_of(&self, id: PaperId) -> Result<Option<usize>> {
        self.conn
            .prepare_cached("SELECT row FROM papers WHERE id = ?1")
            .and_then(|mut s| s.query_row([id.hex()], |r| r.get::<_, i64>(0)).optional())
            .map(|r| r.map(|r| r as usize))
            .map_err(|e| self.err(e))
    }

    /// Rows and ids of up to `limit` records whose id starts with `prefix`.
    pub fn rows_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<(usize, String)>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT row, id FROM papers WHERE id >= ?1 ORDER BY id LIMIT ?2")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![prefix, limit as i64], |r| {
                Ok((r.get::<_, i64>(0)? as usize, r.get::<_, String>(1)?))
            })
            .map_err(|e| self.err(e))?;
        let mut found = Vec::new();
        for row in rows {
            let (row, id) = row.map_err(|e| self.err(e))?;
            if !id.starts_with(prefix) {
                break;
            }
            found.push((row, id));
        }
        Ok(found)
    }

    /// The row of the record whose input id is `source_id`, or whose arXiv
    /// id (without version) is `arxiv`.
    pub fn row_by(&self, column: Alias, value: &str) -> Result<Option<usize>> {
        let query = match column {
            Alias::SourceId => "SELECT row FROM papers WHERE source_id = ?1 ORDER BY row LIMIT 1",
            Alias::Arxiv => "SELECT row FROM papers WHERE arxiv = ?1 ORDER BY row LIMIT 1",
        };
        self.conn
            .prepare_cached(query)
            .and_then(|mut s| s.query_row([value], |r| r.get::<_, i64>(0)).optional())
            .map(|r| r.map(|r| r as usize))
            .map_err(|e| self.err(e))
    }

    /// The first row whose input id is `value` ignoring ASCII case (a scan
    /// of the column).
    pub fn row_by_source_id_ignoring_case(&self, value: &str) -> Result<Option<usize>> {
        self.conn
            .prepare_cached(
                "SELECT row FROM papers WHERE source_id = ?1 COLLATE NOCASE ORDER BY row LIMIT 1",
            )
            .and_then(|mut s| s.query_row([value], |r| r.get::<_, i64>(0)).optional())
            .map(|r| r.map(|r| r as usize))
            .map_err(|e| self.err(e))
    }

    /// Rows of live records published within `since..=until`.
    pub fn rows_dated(&self, since: u32, until: u32) -> Result<HashSet<usize>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT row FROM papers WHERE date BETWEEN ?1 AND ?2")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([since, until], |r| r.get::<_, i64>(0))
            .map_err(|e| self.err(e))?;
        rows.map(|r| r.map(|r| r as usize).map_err(|e| self.err(e)))
            .collect()
    }

    /// Rows that hold no live record.
    pub fn dead(&self) -> Result<BTreeSet<usize>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT row FROM dead")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| r.get::<_, i64>(0))
            .map_err(|e| self.err(e))?;
        rows.map(|r| r.map(|r| r as usize).map_err(|e| self.err(e)))
            .collect()
    }

    /// Calls `f` with every live record in id order (or row order), with its row.
    pub fn for_each(
        &self,
        by_id: bool,
        mut f: impl FnMut(usize, Paper) -> Result<()>,
    ) -> Result<()> {
        let query = if by_id {
            "SELECT row, body FROM papers ORDER BY id"
        } else {
            "SELECT row, body FROM papers ORDER BY row"
        };
        let mut stmt = self.conn.prepare(query).map_err(|e| self.err(e))?;
        let mut rows = stmt.query([]).map_err(|e| self.err(e))?;
        while let Some(r) = rows.next().map_err(|e| self.err(e))? {
            let row = r.get::<_, i64>(0).map_err(|e| self.err(e))? as usize;
            let body: String = r.get(1).map_err(|e| self.err(e))?;
            f(row, self.decode(&body)?)?;
        }
        Ok(())
    }

    /// Records seen in each input file.
    pub fn file_counts(&self) -> Result<BTreeMap<String, usize>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT file, records FROM files WHERE records > 0")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as usize))
            })
            .map_err(|e| self.err(e))?;
        rows.map(|r| r.map_err(|e| self.err(e))).collect()
    }

    /// SQLite's own structural check: `None` when it finds nothing wrong.
    pub fn integrity(&self) -> Result<Option<String>> {
        let first: String = self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        // SQLite's report can span lines; errors are one line.
        let first = first.split_whitespace().collect::<Vec<_>>().join(" ");
        Ok((first != "ok").then_some(first))
    }

    /// Starts the transaction an update commits in.
    pub fn begin(&mut self) -> Result<Writer<'_>> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| sql(&path, e))?;
        Ok(Writer {
            path,
            tx,
            files: BTreeMap::new(),
        })
    }
}

/// The record aliases an id lookup accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alias {
    /// The id a JSON input gave the record.
    SourceId,
    /// The arXiv id, without version.
    Arxiv,
}

/// The distinct input files a record was seen in.
fn files_of(paper: &Paper) -> BTreeSet<&str> {
    paper.sources.iter().map(|s| s.file.as_str()).collect()
}

/// An update's open transaction. Dropping it without [`Writer::commit`]
/// rolls everything back.
pub struct Writer<'a> {
    path: PathBuf,
    pub(super) tx: rusqlite::Transaction<'a>,
    files: BTreeMap<String, i64>,
}

impl Writer<'_> {
    pub(super) fn err(&self, e: rusqlite::Error) -> Error {
        sql(&self.path, e)
    }

    /// The live record at `row`, as this transaction sees it (its own
    /// inserts included).
    pub fn paper(&self, row: usize) -> Result<Option<Paper>> {
        let body: Option<String> = self
            .tx
            .prepare_cached("SELECT body FROM papers WHERE row = ?1")
            .and_then(|mut s| s.query_row([row as i64], |r| r.get(0)).optional())
            .map_err(|e| self.err(e))?;
        body.map(|b| {
            serde_json::from_str(&b)
                .map_err(|e| Error::corrupt(&self.path, format!("invalid record: {e}")))
        })
        .transpose()
    }

    /// The row of the live record with this id, or with this arXiv id, as
    /// this transaction sees it.
    pub fn row_of(
        &self,
        id: PaperId,
        arxiv: Option<&str>,
    ) -> Result<(Option<usize>, Option<usize>)> {
        let one = |sql: &str, value: String| {
            self.tx
                .prepare_cached(sql)
                .and_then(|mut s| s.query_row([value], |r| r.get::<_, i64>(0)).optional())
                .map(|r| r.map(|r| r as usize))
                .map_err(|e| self.err(e))
        };
        let by_id = one("SELECT row FROM papers WHERE id = ?1", id.hex())?;
        let by_arxiv = match (by_id, arxiv) {
            (None, Some(arxiv)) => {
                one("SELECT row FROM papers WHERE arxiv = ?1", arxiv.to_string())?
            }
            _ => None,
        };
        Ok((by_id, by_arxiv))
    }

    fn count(&mut self, paper: &Paper, delta: i64) {
        for file in files_of(paper) {
            *self.files.entry(file.to_string()).or_insert(0) += delta;
        }
    }

    /// Adds a record at `row`.
    pub fn insert(&mut self, row: usize, paper: &Paper) -> Result<()> {
        let arxiv = paper.arxiv_id().map(str::to_string);
        let source_id = paper
            .meta
            .as_ref()
            .map(|m| m.source_id.as_str())
            .filter(|s| !s.is_empty());
        let body = serde_json::to_string(paper).expect("papers serialise");
        self.tx
            .prepare_cached(
                "INSERT INTO papers(row, id, arxiv, source_id, date, body)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    row as i64,
                    paper.id.hex(),
                    arxiv,
                    source_id,
                    paper.date(),
                    body
                ])
            })
            .map_err(|e| self.err(e))?;
        self.count(paper, 1);
        Ok(())
    }

    /// Replaces the record at `row` (`before` is what it held).
    pub fn replace(&mut self, row: usize, before: &Paper, after: &Paper) -> Result<()> {
        self.kill(row, before)?;
        self.insert(row, after)?;
        self.tx
            .execute("DELETE FROM dead WHERE row = ?1", [row as i64])
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Removes the record at `row` (`before` is what it held); its row
    /// stays in the vector files, marked dead.
    pub fn kill(&mut self, row: usize, before: &Paper) -> Result<()> {
        self.tx
            .execute("DELETE FROM papers WHERE row = ?1", [row as i64])
            .map_err(|e| self.err(e))?;
        self.tx
            .execute("INSERT OR IGNORE INTO dead(row) VALUES (?1)", [row as i64])
            .map_err(|e| self.err(e))?;
        self.count(before, -1);
        Ok(())
    }

    /// Writes the new state and the file counts, and commits.
    pub fn commit(mut self, state: &State) -> Result<()> {
        let files = std::mem::take(&mut self.files);
        for (file, delta) in files.into_iter().filter(|(_, d)| *d != 0) {
            self.tx
                .execute(
                    "INSERT INTO files(file, records) VALUES (?1, ?2)
                     ON CONFLICT(file) DO UPDATE SET records = records + ?2",
                    params![file, delta],
                )
                .map_err(|e| self.err(e))?;
        }
        self.tx
            .execute(
                "UPDATE meta SET value = ?1 WHERE key = 'state'",
                [serde_json::to_string(state).expect("state serialises")],
            )
            .map_err(|e| self.err(e))?;
        let path = self.path.clone();
        self.tx.commit().map_err(|e| sql(&path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_whole_windows_checksum_is_kept_by_combining_appends() {
        let (a, b, c) = (vec![1u8; 40], vec![7u8; 24], vec![9u8; 8]);
        let whole = crc32fast::hash(&[a.clone(), b.clone(), c.clone()].concat());
        assert_eq!(
            crc_after(
                crc_after(crc32fast::hash(&a), crc32fast::hash(&b), 24),
                crc32fast::hash(&c),
                8
            ),
            whole
        );
        // A state whose checksum covers only the rows before its chunks
        // (written by the build that introduced them), rows of 8 bytes.
        let chunk = |start, bytes: &Vec<u8>| WindowChunk {
            start,
            rows: bytes.len() as u64 / 8,
            crc: crc32fast::hash(bytes),
        };
        let mut state = State {
            windows: 9,
            windows_crc: crc32fast::hash(&a),
            window_chunks: vec![chunk(5, &b), chunk(8, &c)],
            ..State::default()
        };
        assert_eq!(state.whole_windows_crc(8), whole);
        state.windows_crc = whole;
        state.windows_crc_whole = true;
        assert_eq!(state.whole_windows_crc(8), whole);
        assert_eq!(State::default().whole_windows_crc(8), crc32fast::hash(&[]));
    }
}
