//! Importing records that carry their vectors (`papers index
//! --embeddings`), streamed: each batch is looked up, its new records
//! appended and inserted in one open transaction, so memory holds a batch,
//! not the input. The commit at the end makes the whole import visible at
//! once; a failure anywhere leaves the index as it was (what was appended
//! is cut back, a new folder removed).
//!
//! Unlike [`crate::index::Update`], rows follow the input's order (an update sorts
//! its new records by id), and the records need no windows: an input has
//! one vector per record.

use std::path::Path;

use super::commit::{commit_to, Appender, NewRecord, Target};
use super::update::{ModelStamp, UpdateReport};
use crate::error::{Error, Result};
use crate::index::db::Db;
use crate::index::removed::KeptOut;
use crate::index::Index;
use crate::paper::Paper;
use crate::paper::Place;

/// One batch of records with their vectors (unit length, this model's
/// dimension), in input order.
pub type Batch = Vec<(Paper, Vec<f32>)>;

/// Imports the batches `next` yields (`Ok(None)` at the end) into the index
/// at `dir`: `existing`, or a new data folder when it is `None` (a new
/// index, or `--rebuild`). Records the reader removed (`kept_out`) stay
/// out. Returns the counts; `files`, `skipped`, `paragraphs` and
/// `bad_lines` are the reader's to fill.
pub fn import(
    dir: &Path,
    existing: Option<&Index>,
    stamp: &ModelStamp,
    kept_out: &KeptOut,
    next: &mut dyn FnMut() -> Result<Option<Batch>>,
) -> Result<UpdateReport> {
    let base = existing.map(|index| (index.data_dir().to_path_buf(), index.state().clone()));
    let mut report = UpdateReport::default();
    // The graphs over the new rows are the session's commit's to build.
    let (state, _) = commit_to(dir, base, stamp, |target| {
        stream(target, stamp.dimension, kept_out, next, &mut report)
    })?;
    report.records = state.live as usize;
    Ok(report)
}

/// The import inside one transaction; `None` from `next` commits it.
fn stream(
    target: &Target,
    dimension: usize,
    kept_out: &KeptOut,
    next: &mut dyn FnMut() -> Result<Option<Batch>>,
    report: &mut UpdateReport,
) -> Result<crate::index::db::State> {
    let mut appender = Appender::new(target, dimension);
    let first = appender.next_row() as usize;
    let mut db = Db::open(&target.data, true)?;
    let mut tx = db.begin()?;
    let mut live = target.state.live;
    while let Some(batch) = next()? {
        let mut new: Vec<NewRecord> = Vec::new();
        for (mut paper, vector) in batch {
            if kept_out.contains(&paper) {
                report.kept_out += 1;
                continue;
            }
            match tx.place(&paper)? {
                Place::Merge(row) => {
                    // Seen before: in the index, or earlier in this input.
                    if row < first {
                        report.already_present += 1;
                    }
                    let before = tx.paper(row)?.expect("a row found is live");
                    let mut after = before.clone();
                    report.new_sources += after.merge(paper);
                    if after != before {
                        tx.replace(row, &before, &after)?;
                    }
                }
                place => {
                    // A new version of an arXiv paper replaces it, and takes
                    // over the places it was seen.
                    if let Place::Replace(old) = place {
                        let before = tx.paper(old)?.expect("a row found is live");
                        paper.add_sources(before.sources.clone());
                        tx.kill(old, &before)?;
                        live -= 1;
                        if old < first {
                            report.replaced += 1;
                        } else {
                            report.added -= 1;
                        }
                    }
                    let row = appender.next_row() as usize + new.len();
                    tx.insert(row, &paper)?;
                    live += 1;
                    report.added += 1;
                    new.push((paper, vector, Vec::new()));
                }
            }
        }
        appender.rows(&new)?;
    }
    // A new folder (a first build or `--rebuild`) that kept nothing would
    // replace the index with an empty one: every record read was removed.
    if target.state.rows == 0 && live == 0 && report.kept_out > 0 {
        return Err(Error::NothingKept {
            paths: String::new(),
            removed: report.kept_out,
        });
    }
    let rows = appender.next_row() as usize - first;
    report.unique = report.added + report.already_present + report.kept_out;
    tx.record_run(first, rows)?;
    appender.commit(tx, live)
}
