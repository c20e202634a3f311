//! An update's transaction: records inserted, replaced and killed, the
//! per-file counts kept, and the state committed with them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use rusqlite::{params, OptionalExtension};

use super::{sql, State};
use crate::error::{Error, Result};
use crate::paper::{Paper, Place};

/// The distinct input files a record was seen in.
fn files_of(paper: &Paper) -> BTreeSet<&str> {
    paper.sources.iter().map(|s| s.file.as_str()).collect()
}

/// An update's open transaction. Dropping it without [`Writer::commit`]
/// rolls everything back.
pub struct Writer<'a> {
    pub(super) path: PathBuf,
    pub(in crate::index) tx: rusqlite::Transaction<'a>,
    pub(super) files: BTreeMap<String, i64>,
}

impl Writer<'_> {
    pub(in crate::index) fn err(&self, e: rusqlite::Error) -> Error {
        sql(&self.path, e)
    }

    /// The live record at `row`, as this transaction sees it (its own
    /// inserts included).
    pub fn paper(&self, row: usize) -> Result<Option<Paper>> {
        super::paper_at(&self.tx, &self.path, row)
    }

    /// Where `paper` goes among the live records as this transaction sees
    /// them (its own inserts included), by [`Place::of`]'s rule.
    pub fn place(&self, paper: &Paper) -> Result<Place<usize>> {
        let one = |sql: &str, value: String| {
            self.tx
                .prepare_cached(sql)
                .and_then(|mut s| s.query_row([value], |r| r.get::<_, i64>(0)).optional())
                .map(|r| r.map(|r| r as usize))
                .map_err(|e| self.err(e))
        };
        Place::of(
            paper,
            |id| one("SELECT row FROM papers WHERE id = ?1", id.hex()),
            |arxiv| one("SELECT row FROM papers WHERE arxiv = ?1", arxiv.to_string()),
        )
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
