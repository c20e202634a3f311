//! The rows a search's filters allow (`--in`, `--author`, `--category`,
//! `--listed-since`/`--listed-until`, `--since`/`--until`), each filter
//! resolved against what is indexed. A filter that matches nothing is an
//! error naming that filter and the values it could have had (the input
//! files, the days listed, the categories, the dates), not an empty answer
//! that reads like "nothing was relevant".
//!
//! `--in VALUE` names an input (a file name, its path as indexed, or its
//! name without the extension) or a day (`YYYY-MM-DD`, the day a daily list
//! featured the paper, else the day it was indexed). A value that is both
//! an input's name without its extension and a day with listed papers is
//! asked about rather than guessed; several `--in` take any of them.

use std::collections::{BTreeMap, HashSet};

use super::options::{DateRange, Scope, SearchOptions};
use crate::error::{Error, Result};
use crate::index::db::Db;
use crate::index::Index;
use crate::paper::{format_date, parse_date};

/// The rows `scope` allows, or `None` when it allows every row.
pub fn scoped_rows(index: &Index, scope: &Scope) -> Result<Option<HashSet<usize>>> {
    if !scope.is_set() {
        return Ok(None);
    }
    // Before the database's lock is taken: it takes it too.
    let files = match scope.sources.is_empty() {
        true => BTreeMap::new(),
        false => index.file_counts()?,
    };
    let db = index.db();
    let mut rows: Option<HashSet<usize>> = None;
    if !scope.sources.is_empty() {
        let mut any = HashSet::new();
        for value in &scope.sources {
            any.extend(within(&db, &files, value)?);
        }
        rows = Some(any);
    }
    let mut narrow = |found: HashSet<usize>| {
        rows = Some(match rows.take() {
            Some(before) => before.intersection(&found).copied().collect(),
            None => found,
        });
    };
    for author in &scope.authors {
        let found = db.rows_by_author(author)?;
        if found.is_empty() {
            return Err(filter(
                "--author",
                format!("no indexed paper has an author whose name contains `{author}`"),
            ));
        }
        narrow(found);
    }
    if !scope.categories.is_empty() {
        let mut any = HashSet::new();
        for category in &scope.categories {
            any.extend(db.rows_in_category(category)?);
        }
        if any.is_empty() {
            let known = db.categories()?;
            return Err(filter(
                "--category",
                format!(
                    "no indexed paper is in {} ({})",
                    scope.categories.join(" or "),
                    some_of("categories indexed", &known, &scope.categories[0])
                ),
            ));
        }
        narrow(any);
    }
    if scope.listed.is_set() {
        let found = listed(&db, scope.listed)?;
        if found.is_empty() {
            return Err(filter(
                "--listed-since/--listed-until",
                format!(
                    "no indexed paper was listed {} ({})",
                    window(scope.listed),
                    some_of("days listed", &db.listed_days()?, "")
                ),
            ));
        }
        narrow(found);
    }
    Ok(rows)
}

/// The rows published within `dates` (`--since`/`--until`); none, where
/// some papers have dates, is an error naming the dates the index has.
pub fn dated_rows(index: &Index, dates: DateRange) -> Result<HashSet<usize>> {
    let found = index.rows_dated(dates.since.unwrap_or(0), dates.until.unwrap_or(u32::MAX))?;
    if !found.is_empty() {
        return Ok(found);
    }
    // An index of text dumps has no dates at all: the note on undated
    // records already says why nothing is left, and the answer is empty.
    let Some((first, last)) = index.db().published_range()? else {
        return Ok(found);
    };
    Err(filter(
        "--since/--until",
        format!(
            "no indexed paper was published {} (the papers indexed were published from {} to {})",
            window(dates),
            format_date(first),
            format_date(last)
        ),
    ))
}

/// The rows one `--in` value names.
fn within(db: &Db, files: &BTreeMap<String, usize>, value: &str) -> Result<HashSet<usize>> {
    let mut found = db.rows_seen_in(value)?;
    // A path typed differently from the one indexed: its name.
    let name = std::path::Path::new(value)
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or(value);
    if found.is_empty() && name != value {
        found = db.rows_seen_in(name)?;
    }
    if !found.is_empty() {
        return Ok(found);
    }
    let stems: Vec<&String> = files.keys().filter(|f| stem(f) == name).collect();
    let day = parse_date(value).filter(|_| value.len() == 10);
    let on_day = match day {
        Some(day) => listed(db, DateRange::default().narrowed_to(day))?,
        None => HashSet::new(),
    };
    match (stems.as_slice(), day) {
        ([file], Some(_)) if !on_day.is_empty() => Err(filter(
            "--in",
            format!(
                "`{value}` is both the input {file} and a day with {} papers listed: give \
                 `--in {file}` for the file, or `--listed-since {value} --listed-until {value}` \
                 for the day",
                on_day.len()
            ),
        )),
        ([file], _) => db.rows_seen_in(file),
        ([], Some(_)) if !on_day.is_empty() => Ok(on_day),
        ([], Some(day)) => Err(filter(
            "--in",
            format!(
                "no indexed paper was listed on {} ({})",
                format_date(day),
                some_of("days listed", &db.listed_days()?, value)
            ),
        )),
        _ => {
            let names: Vec<String> = files.keys().cloned().collect();
            Err(filter(
                "--in",
                format!(
                    "no indexed paper was seen in `{}` ({}; `papers info` lists them)",
                    crate::error::shown(value),
                    some_of("input files", &names, value)
                ),
            ))
        }
    }
}

/// Rows listed on a day within `range`.
fn listed(db: &Db, range: DateRange) -> Result<HashSet<usize>> {
    db.rows_listed(range.since.unwrap_or(0), range.until.unwrap_or(99_991_231))
}

/// A file name without its extensions (`2024-05-01.txt.gz` -> `2024-05-01`).
fn stem(file: &str) -> &str {
    file.split_once('.').map_or(file, |(stem, _)| stem)
}

/// A date window in words.
fn window(range: DateRange) -> String {
    match (range.since, range.until) {
        (Some(s), Some(u)) if s == u => format!("on {}", format_date(s)),
        (Some(s), Some(u)) => format!("from {} to {}", format_date(s), format_date(u)),
        (Some(s), None) => format!("since {}", format_date(s)),
        (None, Some(u)) => format!("until {}", format_date(u)),
        (None, None) => "at any time".into(),
    }
}

/// Up to five of `values` as a reader's hint, those sharing the longest
/// start with `near` first.
fn some_of(what: &str, values: &[String], near: &str) -> String {
    if values.is_empty() {
        return format!("no {what}");
    }
    let shared = |v: &String| {
        v.chars()
            .zip(near.chars())
            .take_while(|(a, b)| a.eq_ignore_ascii_case(b))
            .count()
    };
    let mut sorted: Vec<&String> = values.iter().collect();
    sorted.sort_by_key(|v| std::cmp::Reverse(shared(v)));
    let shown: Vec<&str> = sorted.iter().take(5).map(|v| v.as_str()).collect();
    let more = values.len().saturating_sub(shown.len());
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("{what}: {}{more}", shown.join(", "))
}

/// A filter's error.
fn filter(name: &str, reason: String) -> Error {
    Error::InvalidArgument {
        name: name.into(),
        reason,
    }
}

/// The rows a search may return: live, not excluded, within the dates.
pub(super) fn allowed<'a>(
    index: &'a Index,
    exclude: &[usize],
    options: &SearchOptions,
) -> Result<impl Fn(usize) -> bool + Sync + 'a> {
    let dated = if options.dates.is_set() {
        Some(dated_rows(index, options.dates)?)
    } else {
        None
    };
    let scoped = scoped_rows(index, &options.scope)?;
    let exclude: HashSet<usize> = exclude.iter().copied().collect();
    Ok(move |row: usize| {
        !index.dead_rows().contains(&row)
            && !exclude.contains(&row)
            && dated.as_ref().is_none_or(|d| d.contains(&row))
            && scoped.as_ref().is_none_or(|s| s.contains(&row))
    })
}
