//! Where and when records were seen and who wrote them, for scoped
//! searches: the rows seen in given input files (`--in FILE`), listed on
//! given days (`--in DATE`, `--listed-since`, `--listed-until`), by an
//! author (`--author`) or in an arXiv category (`--category`).
//!
//! A record's listed day is the day its daily list featured it, when the
//! input says (Hugging Face's `listed`), else the day (UTC) of the
//! `papers index` run that added it. Both are read from what the index
//! already keeps (the record's JSON, the `runs` table), so older indexes
//! answer too; records added before runs were recorded have no listed
//! day unless their input gave one.

use std::collections::HashSet;

use super::db::Db;
use crate::error::Result;
use crate::paper::format_date;

impl Db {
    /// Rows whose record was seen in an input file named `name`: its file
    /// name or its path as indexed.
    pub fn rows_seen_in(&self, name: &str) -> Result<HashSet<usize>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT DISTINCT p.row FROM papers p, json_each(p.body, '$.sources') s
                 WHERE json_extract(s.value, '$.file') = ?1
                    OR json_extract(s.value, '$.path') = ?1",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([name], |r| r.get::<_, i64>(0))
            .map_err(|e| self.err(e))?;
        rows.map(|r| r.map(|r| r as usize).map_err(|e| self.err(e)))
            .collect()
    }

    /// How many records have no publication date (text dumps), which a
    /// `--since`/`--until` window leaves out.
    pub fn undated(&self) -> Result<usize> {
        self.conn
            .query_row("SELECT count(*) FROM papers WHERE date IS NULL", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n as usize)
            .map_err(|e| self.err(e))
    }

    /// Rows with an author whose name contains `name`, ignoring case
    /// (`--author`).
    pub fn rows_by_author(&self, name: &str) -> Result<HashSet<usize>> {
        self.rows_where(
            "SELECT DISTINCT p.row FROM papers p, json_each(p.body, '$.meta.authors') a
             WHERE instr(lower(a.value), lower(?1)) > 0",
            name,
        )
    }

    /// Rows in arXiv category `category`, or in a category under it
    /// (`cs` takes `cs.CL`), ignoring case (`--category`).
    pub fn rows_in_category(&self, category: &str) -> Result<HashSet<usize>> {
        self.rows_where(
            "SELECT DISTINCT p.row FROM papers p, json_each(p.body, '$.meta.categories') c
             WHERE lower(c.value) = lower(?1) OR lower(c.value) LIKE lower(?1) || '.%'",
            category,
        )
    }

    fn rows_where(&self, sql: &str, arg: &str) -> Result<HashSet<usize>> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([arg], |r| r.get::<_, i64>(0))
            .map_err(|e| self.err(e))?;
        rows.map(|r| r.map(|r| r as usize).map_err(|e| self.err(e)))
            .collect()
    }

    /// Rows listed on a day from `since` to `until` (`YYYYMMDD`, bounds
    /// included).
    pub fn rows_listed(&self, since: u32, until: u32) -> Result<HashSet<usize>> {
        let day_of_run = if self.has_table("runs")? {
            "(SELECT date(r.at, 'unixepoch') FROM runs r
              WHERE p.row >= r.first_row AND p.row < r.first_row + r.rows)"
        } else {
            "NULL"
        };
        let sql = format!(
            "SELECT p.row FROM papers p WHERE
             COALESCE(substr(json_extract(p.body, '$.meta.listed'), 1, 10), {day_of_run})
             BETWEEN ?1 AND ?2"
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([format_date(since), format_date(until)], |r| {
                r.get::<_, i64>(0)
            })
            .map_err(|e| self.err(e))?;
        rows.map(|r| r.map(|r| r as usize).map_err(|e| self.err(e)))
            .collect()
    }

    /// The arXiv categories of the indexed papers, most common first.
    pub fn categories(&self) -> Result<Vec<String>> {
        self.strings(
            "SELECT c.value FROM papers p, json_each(p.body, '$.meta.categories') c
             GROUP BY c.value ORDER BY count(*) DESC, c.value",
        )
    }

    /// The days papers were listed on (see [`Db::rows_listed`]), newest
    /// first.
    pub fn listed_days(&self) -> Result<Vec<String>> {
        let day_of_run = if self.has_table("runs")? {
            "(SELECT date(r.at, 'unixepoch') FROM runs r
              WHERE p.row >= r.first_row AND p.row < r.first_row + r.rows)"
        } else {
            "NULL"
        };
        self.strings(&format!(
            "SELECT DISTINCT COALESCE(substr(json_extract(p.body, '$.meta.listed'), 1, 10), \
             {day_of_run}) AS day FROM papers p WHERE day IS NOT NULL ORDER BY day DESC"
        ))
    }

    /// The first and last publication dates indexed (`YYYYMMDD`).
    pub fn published_range(&self) -> Result<Option<(u32, u32)>> {
        self.conn
            .query_row("SELECT min(date), max(date) FROM papers", [], |r| {
                Ok(r.get::<_, Option<i64>>(0)?.zip(r.get::<_, Option<i64>>(1)?))
            })
            .map(|range| range.map(|(a, b)| (a as u32, b as u32)))
            .map_err(|e| self.err(e))
    }

    fn strings(&self, sql: &str) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?;
        rows.map(|r| r.map_err(|e| self.err(e))).collect()
    }
}
