//! Which papers the feed ranks. By default the inbox: every paper the
//! reader has not marked (so `papers index today.txt && papers feed` is
//! the daily loop, and an index run that adds nothing changes nothing); or
//! those added or published since a date; or the records of given input
//! files.

use std::collections::BTreeSet;

use crate::error::{Error, Result};
use crate::index::Index;
use crate::paper::format_date;

/// What counts as new.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// Every paper the reader has not marked (see [`super::inbox`]).
    #[default]
    Inbox,
    /// Records added by a run on or after this day (UTC), or published
    /// on or after it; `YYYYMMDD`.
    Since(u32),
    /// Records seen in these input files (as `sources[].file` or `.path`
    /// name them).
    From(Vec<String>),
}

/// The new papers' rows, and a phrase saying what they are.
#[derive(Clone, Debug)]
pub struct Selection {
    /// Live rows, ascending.
    pub rows: Vec<usize>,
    /// "the 300 papers not yet marked (the inbox)".
    pub described: String,
}

/// The rows `scope` names in `index`; nothing new is an error that says
/// what to try instead.
pub fn select(index: &Index, scope: &Scope) -> Result<Selection> {
    let (rows, described): (BTreeSet<usize>, String) = match scope {
        Scope::Inbox => {
            let rows: BTreeSet<usize> = super::inbox::inbox_rows(index)?.into_iter().collect();
            let n = rows.len();
            let described = format!("the {n} papers not yet marked (the inbox)");
            (rows, described)
        }
        Scope::Since(date) => {
            let at = unix_of(*date);
            let mut rows: BTreeSet<usize> = index
                .runs_since(at)?
                .iter()
                .flat_map(|run| run.range())
                .filter(|&r| index.is_live(r))
                .collect();
            rows.extend(index.rows_dated(*date, 99_991_231)?);
            let since = format_date(*date);
            if rows.is_empty() {
                return Err(Error::Feed(format!(
                    "nothing new: no record was added or published since {since}"
                )));
            }
            let n = rows.len();
            (
                rows,
                format!("the {n} records added or published since {since}"),
            )
        }
        Scope::From(files) => {
            let mut rows = BTreeSet::new();
            index.for_each_paper(|row, paper| {
                if paper
                    .sources
                    .iter()
                    .any(|s| files.iter().any(|f| same_input(f, &s.file, &s.path)))
                {
                    rows.insert(row);
                }
                Ok(())
            })?;
            let names = files.join(", ");
            if rows.is_empty() {
                return Err(Error::Feed(format!(
                    "nothing new: no record of the index was read from {names}"
                )));
            }
            let n = rows.len();
            (rows, format!("the {n} records of {names}"))
        }
    };
    Ok(Selection {
        rows: rows.into_iter().collect(),
        described,
    })
}

/// Whether `given` names the input a source was read from: its file
/// name, its path as recorded, or the same file on disk.
fn same_input(given: &str, file: &str, path: &str) -> bool {
    if given == file || given == path {
        return true;
    }
    match (std::fs::canonicalize(given), std::fs::canonicalize(path)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Midnight UTC of `YYYYMMDD`, in Unix seconds.
pub fn unix_of(date: u32) -> u64 {
    let (y, m, d) = (date / 10_000, (date / 100) % 100, date % 100);
    days_from_civil(y as i64, m as i64, d as i64).max(0) as u64 * 86_400
}

/// The UTC day of Unix seconds, `YYYY-MM-DD`.
pub fn day_of(at: u64) -> String {
    let (y, m, d) = civil_from_days((at / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The inverse of [`days_from_civil`].
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip() {
        assert_eq!(unix_of(19700101), 0);
        assert_eq!(unix_of(20261204), 1_796_342_400);
        assert_eq!(day_of(1_796_342_400 + 86_399), "2026-12-04");
        assert_eq!(day_of(unix_of(20240229)), "2024-02-29");
    }
}
