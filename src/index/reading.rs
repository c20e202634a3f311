//! The reader's reading state in the index's database: each paper the
//! reader has marked is `seen`, `read` or `saved`; every other paper is
//! new. Like tags, marks are kept by id (a content hash), so they survive
//! `index`, `--rebuild` and `upgrade` (their rows are copied into a new
//! database) and outlive a `remove` without harm.
//!
//! ```text
//! reading(id, state, at)      state: 'seen', 'read' or 'saved'; at: Unix seconds
//! ```

use crate::date::now;

use rusqlite::params;

use super::db::{Db, LATER_TABLES};
use crate::error::{Error, Result};

/// Where a paper stands with the reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReadingState {
    /// Not marked: in the inbox.
    New,
    /// Shown, not wanted now.
    Seen,
    /// Read.
    Read,
    /// Kept to read later.
    Saved,
}

impl ReadingState {
    /// Every state, in order.
    pub const ALL: [ReadingState; 4] = [
        ReadingState::New,
        ReadingState::Seen,
        ReadingState::Read,
        ReadingState::Saved,
    ];

    /// The state's name.
    pub fn name(self) -> &'static str {
        match self {
            ReadingState::New => "new",
            ReadingState::Seen => "seen",
            ReadingState::Read => "read",
            ReadingState::Saved => "saved",
        }
    }

    /// A state by name; anything else names the choices.
    pub fn parse(text: &str) -> Result<ReadingState> {
        ReadingState::ALL
            .into_iter()
            .find(|s| s.name() == text)
            .ok_or_else(|| Error::InvalidArgument {
                name: "state".into(),
                reason: format!("'{text}' is not one of new, seen, read, saved"),
            })
    }
}

/// One marked paper.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// The paper's id (16 hex digits).
    pub id: String,
    /// Its state (never `New`: a new paper has no mark).
    pub state: ReadingState,
    /// When it was marked, in Unix seconds.
    pub at: u64,
}

impl Db {
    /// Every mark, by id.
    pub fn marks(&self) -> Result<Vec<Mark>> {
        if !self.has_table("reading")? {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, state, at FROM reading ORDER BY id")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        let mut marks = Vec::new();
        for row in rows {
            let (id, state, at) = row.map_err(|e| self.err(e))?;
            // A state this version does not know is left alone, unread.
            if let Ok(state) = ReadingState::parse(&state) {
                marks.push(Mark {
                    id,
                    state,
                    at: at as u64,
                });
            }
        }
        Ok(marks)
    }

    /// Marks `ids` as `state` (`New` takes their marks away), in one
    /// transaction; returns how many changed (an id already in `state` is
    /// not a change).
    pub fn set_marks(&mut self, ids: &[String], state: ReadingState) -> Result<usize> {
        let path = self.path().to_path_buf();
        let err = |e| super::db::sql(&path, e);
        self.conn.execute_batch(LATER_TABLES).map_err(err)?;
        let tx = self.conn.transaction().map_err(err)?;
        let mut changed = 0;
        for id in ids {
            changed += if state == ReadingState::New {
                tx.execute("DELETE FROM reading WHERE id = ?1", params![id])
            } else {
                tx.execute(
                    "INSERT INTO reading(id, state, at) VALUES (?1, ?2, ?3)
                     ON CONFLICT(id) DO UPDATE SET state = ?2, at = ?3 WHERE state <> ?2",
                    params![id, state.name(), now()],
                )
            }
            .map_err(err)?;
        }
        tx.commit().map_err(err)?;
        Ok(changed)
    }

    /// The rows of the records that have a mark (dead rows included).
    pub fn marked_rows(&self) -> Result<Vec<usize>> {
        if !self.has_table("reading")? {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT p.row FROM papers p JOIN reading r ON r.id = p.id")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| r.get::<_, i64>(0))
            .map_err(|e| self.err(e))?;
        rows.map(|r| r.map(|row| row as usize).map_err(|e| self.err(e)))
            .collect()
    }

    /// The id of every live record.
    pub fn live_ids(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id FROM papers p WHERE NOT EXISTS (SELECT 1 FROM dead d WHERE d.row = p.row)",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?;
        rows.map(|r| r.map_err(|e| self.err(e))).collect()
    }

    /// Stores `marks` as they are (those of the database a rebuild
    /// replaces).
    pub fn copy_marks(&mut self, marks: &[Mark]) -> Result<()> {
        let path = self.path().to_path_buf();
        let err = |e| super::db::sql(&path, e);
        self.conn.execute_batch(LATER_TABLES).map_err(err)?;
        let tx = self.conn.transaction().map_err(err)?;
        for m in marks {
            tx.execute(
                "INSERT OR REPLACE INTO reading(id, state, at) VALUES (?1, ?2, ?3)",
                params![&m.id, m.state.name(), m.at as i64],
            )
            .map_err(err)?;
        }
        tx.commit().map_err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_by_name() {
        for state in ReadingState::ALL {
            assert_eq!(ReadingState::parse(state.name()).unwrap(), state);
        }
        let e = ReadingState::parse("skimmed").unwrap_err().to_string();
        assert!(e.contains("new, seen, read, saved"), "{e}");
    }
}
