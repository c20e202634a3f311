//! Reading records from the store: by row, by id, prefix or alias, by
//! date, all of them in row order, and the per-file counts.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use rusqlite::{params, OptionalExtension};

use super::{decode, paper_at, Db};
use crate::error::Result;
use crate::paper::{Paper, PaperId};

/// The record aliases an id lookup accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alias {
    /// The id a JSON input gave the record.
    SourceId,
    /// The arXiv id, without version.
    Arxiv,
}

impl Db {
    /// The record at `row`, if it is live.
    pub fn paper(&self, row: usize) -> Result<Option<Paper>> {
        paper_at(&self.conn, &self.path, row)
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
            f(row, decode(&self.path, &body)?)?;
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
}
