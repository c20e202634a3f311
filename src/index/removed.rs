//! Papers the reader removed, remembered so that they stay out: indexing
//! the same input again (or a new arXiv version of the paper) does not
//! bring them back. The record is kept whole, so a removal can be listed
//! and undone (`papers remove --list`, `papers remove --undo ID`); undoing
//! forgets the removal, and the next `papers index` of the input brings
//! the paper back.
//!
//! ```text
//! removed(id, arxiv, at, body)   at: Unix seconds; body: the record's JSON
//! ```
//!
//! Written in the same transaction as the removal itself, and copied into
//! the new database by `--rebuild`, like the tags.

use crate::date::now;
use std::collections::HashSet;

use rusqlite::params;

use super::db::{Db, Writer, LATER_TABLES};
use crate::error::Result;
use crate::paper::Paper;

/// One removal.
#[derive(Clone, Debug, PartialEq)]
pub struct Removal {
    /// When it was removed, in Unix seconds.
    pub at: u64,
    /// The record as it was.
    pub paper: Paper,
}

/// What indexing keeps out: the removed ids and arXiv ids.
#[derive(Clone, Debug, Default)]
pub struct KeptOut {
    ids: HashSet<String>,
    arxiv: HashSet<String>,
}

impl KeptOut {
    /// Whether `paper` was removed (by content, or by arXiv id).
    pub fn contains(&self, paper: &Paper) -> bool {
        self.ids.contains(&paper.id.hex())
            || paper.arxiv_id().is_some_and(|a| self.arxiv.contains(a))
    }

    /// Whether nothing was removed.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

fn arxiv_of(paper: &Paper) -> Option<String> {
    paper.arxiv_id().map(str::to_string)
}

impl Writer<'_> {
    /// Remembers that the reader removed `paper`.
    pub fn forget(&mut self, paper: &Paper) -> Result<()> {
        let body = serde_json::to_string(paper).expect("papers serialise");
        self.tx
            .execute(
                "INSERT OR REPLACE INTO removed(id, arxiv, at, body) VALUES (?1, ?2, ?3, ?4)",
                params![paper.id.hex(), arxiv_of(paper), now(), body],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }
}

impl Db {
    /// Every removal, oldest first.
    pub fn removals(&self) -> Result<Vec<Removal>> {
        if !self.has_table("removed")? {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT at, body FROM removed ORDER BY at, id")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (at, body) = row.map_err(|e| self.err(e))?;
            let paper: Paper = serde_json::from_str(&body).map_err(|e| {
                crate::Error::corrupt(self.path(), format!("a removed record: {e}"))
            })?;
            out.push(Removal {
                at: at as u64,
                paper,
            });
        }
        Ok(out)
    }

    /// The ids indexing keeps out.
    pub fn kept_out(&self) -> Result<KeptOut> {
        let mut out = KeptOut::default();
        if !self.has_table("removed")? {
            return Ok(out);
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, arxiv FROM removed")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
            })
            .map_err(|e| self.err(e))?;
        for row in rows {
            let (id, arxiv) = row.map_err(|e| self.err(e))?;
            out.ids.insert(id);
            out.arxiv.extend(arxiv);
        }
        Ok(out)
    }

    /// Forgets the removals of `ids` (full ids), in one transaction;
    /// returns how many there were.
    pub fn unremove(&mut self, ids: &[String]) -> Result<usize> {
        let path = self.path().to_path_buf();
        let err = |e| super::db::sql(&path, e);
        self.conn.execute_batch(LATER_TABLES).map_err(err)?;
        let tx = self.conn.transaction().map_err(err)?;
        let mut done = 0;
        for id in ids {
            done += tx
                .execute("DELETE FROM removed WHERE id = ?1", [id])
                .map_err(err)?;
        }
        tx.commit().map_err(err)?;
        Ok(done)
    }

    /// Stores `removals` as they are (those of the database a rebuild
    /// replaces).
    pub fn copy_removals(&mut self, removals: &[Removal]) -> Result<()> {
        let path = self.path().to_path_buf();
        let err = |e| super::db::sql(&path, e);
        self.conn.execute_batch(LATER_TABLES).map_err(err)?;
        let tx = self.conn.transaction().map_err(err)?;
        for r in removals {
            let body = serde_json::to_string(&r.paper).expect("papers serialise");
            tx.execute(
                "INSERT OR REPLACE INTO removed(id, arxiv, at, body) VALUES (?1, ?2, ?3, ?4)",
                params![r.paper.id.hex(), arxiv_of(&r.paper), r.at as i64, body],
            )
            .map_err(err)?;
        }
        tx.commit().map_err(err)
    }
}
