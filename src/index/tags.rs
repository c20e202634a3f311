//! The reader's tags in the index's database: each tag is a set of paper
//! ids, each liked or marked not interested. Ids are content hashes, so a
//! tag survives `--rebuild` (its rows are copied into the new database)
//! and names papers that a later `remove` dropped without harm (they are
//! skipped when a profile is trained).
//!
//! ```text
//! tags(tag, id, liked, at)    liked: 1 liked, 0 not interested; at: Unix seconds
//! ```

use crate::date::now;

use rusqlite::params;

use super::db::{Db, LATER_TABLES};
use crate::error::{Error, Result};

/// One paper in a tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TagEntry {
    /// The tag's name.
    pub tag: String,
    /// The paper's id (16 hex digits).
    pub id: String,
    /// Liked (true) or not interested (false).
    pub liked: bool,
    /// When it was tagged, in Unix seconds.
    pub at: u64,
}

/// The longest tag name.
pub const MAX_NAME: usize = 64;

/// Checks a tag name: 1 to [`MAX_NAME`] letters, digits, `-`, `_` or `.`,
/// not starting with `-` or `.` (so it cannot be read as a flag or a
/// hidden file, and fits a URL path and a feed's file name as it is).
pub fn validate_name(name: &str) -> Result<()> {
    let bad = |reason: &str| {
        Err(Error::InvalidArgument {
            name: "tag".into(),
            // Clipped: a name of 100 kB is not echoed whole.
            reason: format!("{:?}: {reason}", crate::error::shown(name)),
        })
    };
    if name.is_empty() {
        return bad("a tag name cannot be empty");
    }
    if name.chars().count() > MAX_NAME {
        return bad(&format!("a tag name has at most {MAX_NAME} characters"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return bad(&format!(
            "{c:?} is not allowed: use letters, digits, '-', '_' and '.'"
        ));
    }
    if name.starts_with(['-', '.']) {
        return bad("a tag name cannot start with '-' or '.'");
    }
    Ok(())
}

impl Db {
    /// Every entry of `tag` (of every tag when `None`), by tag then time.
    pub fn tag_entries(&self, tag: Option<&str>) -> Result<Vec<TagEntry>> {
        if !self.has_table("tags")? {
            return Ok(Vec::new());
        }
        // Two statements, so that one tag's is a look-up in the table's
        // key rather than a scan (`?1 IS NULL OR tag = ?1` scans: at 5,000
        // tags, reading each in turn read 75 million rows).
        let sql = match tag {
            Some(_) => "SELECT tag, id, liked, at FROM tags WHERE tag = ?1 ORDER BY at, id",
            None => "SELECT tag, id, liked, at FROM tags WHERE ?1 IS NULL ORDER BY tag, at, id",
        };
        let mut stmt = self.conn.prepare_cached(sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([tag], |r| {
                Ok(TagEntry {
                    tag: r.get(0)?,
                    id: r.get(1)?,
                    liked: r.get::<_, i64>(2)? != 0,
                    at: r.get::<_, i64>(3)? as u64,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.map(|r| r.map_err(|e| self.err(e))).collect()
    }

    /// Puts `ids` into `tag` as liked or not (an id already there takes
    /// the new mark), in one transaction.
    pub fn set_tag(&mut self, tag: &str, ids: &[(String, bool)]) -> Result<()> {
        let path = self.path().to_path_buf();
        let err = |e| super::db::sql(&path, e);
        let tx = self.conn.transaction().map_err(err)?;
        for (id, liked) in ids {
            tx.execute(
                "INSERT INTO tags(tag, id, liked, at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(tag, id) DO UPDATE SET liked = ?3, at = ?4",
                params![tag, id, *liked as i64, now()],
            )
            .map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    /// Takes `ids` out of `tag`; returns how many were in it.
    pub fn untag(&mut self, tag: &str, ids: &[String]) -> Result<usize> {
        let path = self.path().to_path_buf();
        let err = |e| super::db::sql(&path, e);
        let tx = self.conn.transaction().map_err(err)?;
        let mut removed = 0;
        for id in ids {
            removed += tx
                .execute(
                    "DELETE FROM tags WHERE tag = ?1 AND id = ?2",
                    params![tag, id],
                )
                .map_err(err)?;
        }
        tx.commit().map_err(err)?;
        Ok(removed)
    }

    /// Stores `entries` as they are (the tags of the database a rebuild
    /// replaces).
    pub fn copy_tags(&mut self, entries: &[TagEntry]) -> Result<()> {
        let path = self.path().to_path_buf();
        let err = |e| super::db::sql(&path, e);
        self.conn.execute_batch(LATER_TABLES).map_err(err)?;
        let tx = self.conn.transaction().map_err(err)?;
        for e in entries {
            tx.execute(
                "INSERT OR REPLACE INTO tags(tag, id, liked, at) VALUES (?1, ?2, ?3, ?4)",
                params![&e.tag, &e.id, e.liked as i64, e.at as i64],
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
    fn names() {
        for good in ["ml", "robot-learning", "cs.CL", "a_b", "évolution"] {
            assert!(validate_name(good).is_ok(), "{good}");
        }
        for bad in ["", "two words", "a/b", "-x", ".hidden", &"x".repeat(65)] {
            let e = validate_name(bad).unwrap_err().to_string();
            assert!(e.contains("tag"), "{e}");
        }
    }
}
