//! The records store: `papers.sqlite`, one SQLite database holding every
//! record, the per-file counts `info` prints, and the index's state (how
//! many vector rows are committed, which lexical segments are live). One
//! transaction commits an update, so the database is the index's single
//! commit point: files it names were synced before it names them.
//!
//! Its tables are listed in the design document's "On-disk format"
//! (`docs/design.md`), and created by `SCHEMA` and `LATER_TABLES`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use crate::error::{Error, Result};
use crate::paper::Paper;

mod failure;
mod lookup;
mod state;
mod writer;

pub(super) use failure::sql;
pub use lookup::Alias;
pub use state::{crc_after, Chunk, SegmentEntry, State, WindowChunk};
pub use writer::Writer;

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

/// An open records store.
pub struct Db {
    path: PathBuf,
    pub(super) conn: Connection,
}

/// The live record at `row` as `conn` (the store, or an update's
/// transaction) sees it.
fn paper_at(conn: &Connection, path: &Path, row: usize) -> Result<Option<Paper>> {
    let body: Option<String> = conn
        .prepare_cached("SELECT body FROM papers WHERE row = ?1")
        .and_then(|mut s| s.query_row([row as i64], |r| r.get(0)).optional())
        .map_err(|e| sql(path, e))?;
    body.map(|b| decode(path, &b)).transpose()
}

/// A record's stored JSON, read back.
fn decode(path: &Path, body: &str) -> Result<Paper> {
    serde_json::from_str(body).map_err(|e| Error::corrupt(path, format!("invalid record: {e}")))
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
