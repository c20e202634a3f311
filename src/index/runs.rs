//! What each `papers index` run added and when: the feed's `--since` takes
//! the records of the runs since a day, and an RSS item without a date of
//! its own is dated by its run. New records take the rows after the committed
//! ones, so a run's additions are one range of rows; a run that added
//! nothing is recorded too (its range is empty).
//!
//! ```text
//! runs(run, at, first_row, rows)   at: Unix seconds
//! ```

use crate::date::now;

use rusqlite::params;

use super::db::{Db, Writer, LATER_TABLES};
use crate::error::Result;

/// One `papers index` run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// Its number, counting from 1.
    pub run: u64,
    /// When it committed, in Unix seconds.
    pub at: u64,
    /// The first row it added.
    pub first_row: usize,
    /// How many rows it added.
    pub rows: usize,
}

impl Run {
    /// The rows it added.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.first_row..self.first_row + self.rows
    }
}

const INSERT: &str = "INSERT INTO runs(at, first_row, rows) VALUES (?1, ?2, ?3)";

impl Db {
    /// The runs that committed at or after `at` (Unix seconds), oldest first.
    pub fn runs_since(&self, at: u64) -> Result<Vec<Run>> {
        if !self.has_table("runs")? {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT run, at, first_row, rows FROM runs WHERE at >= ?1 ORDER BY run")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([at as i64], |r| {
                Ok(Run {
                    run: r.get::<_, i64>(0)? as u64,
                    at: r.get::<_, i64>(1)? as u64,
                    first_row: r.get::<_, i64>(2)? as usize,
                    rows: r.get::<_, i64>(3)? as usize,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.map(|r| r.map_err(|e| self.err(e))).collect()
    }

    /// Records a run that committed nothing (everything it read was
    /// indexed already), in a transaction of its own.
    pub fn record_empty_run(&mut self, rows: usize) -> Result<()> {
        self.conn
            .execute_batch(LATER_TABLES)
            .map_err(|e| self.err(e))?;
        self.conn
            .execute(INSERT, params![now(), rows as i64, 0])
            .map_err(|e| self.err(e))?;
        Ok(())
    }
}

impl Writer<'_> {
    /// Records, in the commit's transaction, that this commit is a run
    /// that added `rows` rows from `first_row`.
    pub fn record_run(&mut self, first_row: usize, rows: usize) -> Result<()> {
        self.tx
            .execute(INSERT, params![now(), first_row as i64, rows as i64])
            .map_err(|e| self.err(e))?;
        Ok(())
    }
}
