//! Reading records: by row, all of them, by date, and by what a reader
//! typed ([`Wanted`]: an input's own id, an arXiv id, or a unique prefix of
//! a content-hash id); and the reader's own tables (tags, marks, runs,
//! removals).

use super::db::Alias;
use super::{db, reading, removed, runs, tags, Index};
use crate::error::{Error, Result};
use crate::id::Wanted;
use crate::paper::{validate_prefix, Paper, PaperId};

impl Index {
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

    /// The entries of `tag` (of every tag when `None`), as of this state.
    pub fn tag_entries(&self, tag: Option<&str>) -> Result<Vec<tags::TagEntry>> {
        self.db().tag_entries(tag)
    }

    /// The reader's marks (seen, read, saved), as of this state.
    pub fn marks(&self) -> Result<Vec<reading::Mark>> {
        self.db().marks()
    }

    /// The `papers index` runs that committed at or after `at` (Unix
    /// seconds), oldest first.
    pub fn runs_since(&self, at: u64) -> Result<Vec<runs::Run>> {
        self.db().runs_since(at)
    }

    /// Live rows of records published within `since..=until` (`YYYYMMDD`).
    pub fn rows_dated(&self, since: u32, until: u32) -> Result<std::collections::HashSet<usize>> {
        self.db().rows_dated(since, until)
    }

    /// Records seen in each input file, for `info`.
    pub fn file_counts(&self) -> Result<std::collections::BTreeMap<String, usize>> {
        self.db().file_counts()
    }

    /// How many records have no publication date.
    pub fn undated(&self) -> Result<usize> {
        self.db().undated()
    }

    /// The papers the reader removed, oldest first (see `removed`).
    pub fn removals(&self) -> Result<Vec<removed::Removal>> {
        self.db().removals()
    }

    /// The row of the record `wanted` names: one whose id in its JSON input
    /// (a BEIR `_id`, an export's key) is exactly the text, whose arXiv id
    /// it spells, or whose id starts with it (at least 4 hex digits); an
    /// error lists the candidates when several ids match.
    pub fn resolve(&self, wanted: &Wanted) -> Result<usize> {
        let prefix = wanted.text.as_str();
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
        if let Some(arxiv) = &wanted.arxiv {
            return db
                .row_by(Alias::Arxiv, arxiv)?
                .ok_or_else(|| Error::UnknownId {
                    id: prefix.to_string(),
                });
        }
        // An input's own id typed in another case (`x1` for `X1`): looked
        // for only when the text is no hex id, since it scans the column.
        let wanted = match validate_prefix(prefix) {
            Ok(wanted) => wanted,
            Err(e) => {
                return match db.row_by_source_id_ignoring_case(prefix)? {
                    Some(row) => Ok(row),
                    None => Err(e),
                }
            }
        };
        let matches = db.rows_with_prefix(&wanted, 11)?;
        match matches.as_slice() {
            [] if db
                .removals()
                .unwrap_or_default()
                .iter()
                .any(|r| r.paper.id.hex().starts_with(&wanted)) =>
            {
                Err(Error::Removed {
                    id: prefix.to_string(),
                })
            }
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
}
