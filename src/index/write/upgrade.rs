//! The upgrade from format 2 (one JSON records file and whole-file vector
//! arrays) to format 3, in place and without embedding anything: the old
//! records and vectors are committed into a new data folder.

use std::path::Path;

use super::update::{ModelStamp, Update};
use crate::error::{Error, Result};
use crate::index::legacy;

/// Converts a format-2 index in `dir` to format 3 without embedding
/// anything (its vectors are stored); the caller holds the writer lock.
/// Returns whether there was anything to convert.
pub fn upgrade(dir: &Path) -> Result<bool> {
    let (found, text) = crate::index::manifest::version(dir)?;
    if found != legacy::VERSION {
        return Ok(false);
    }
    convert(dir, &text)?;
    Ok(true)
}

/// Whether a manifest of format `found` is one [`convert`] takes.
pub(super) fn is_legacy(found: u32) -> bool {
    found == legacy::VERSION
}

/// Converts the format-2 index in `dir` whose manifest reads `text`.
pub(super) fn convert(dir: &Path, text: &str) -> Result<()> {
    let old = legacy::load(dir, text)?;
    // Nothing is converted (and so nothing of the old index removed) unless
    // every record matches its id: the new format checks that on open.
    let records = dir.join(&old.manifest.data_dir).join(legacy::RECORDS);
    for paper in &old.papers {
        if crate::paper::PaperId::of(&paper.text) != paper.id {
            return Err(Error::corrupt(
                &records,
                format!(
                    "record {} does not match its text; nothing was converted",
                    paper.id
                ),
            ));
        }
    }
    if old.vectors.iter().any(|x| !x.is_finite()) {
        return Err(Error::corrupt(
            dir.join(&old.manifest.data_dir).join(legacy::VECTORS),
            "a vector holds a value that is not a number; nothing was converted",
        ));
    }
    let d = old.manifest.dimension;
    let stamp = ModelStamp {
        model: old.manifest.model.clone(),
        weights_sha256: old.manifest.weights_sha256.clone(),
        dimension: d,
        max_seq_length: old.manifest.max_seq_length,
    };
    let mut windows: Vec<Vec<Vec<f32>>> = vec![Vec::new(); old.papers.len()];
    for (i, &row) in old.window_rows.iter().enumerate() {
        windows[row as usize].push(old.window_vectors[i * d..(i + 1) * d].to_vec());
    }
    let records = old
        .papers
        .into_iter()
        .zip(windows)
        .enumerate()
        .map(|(row, (paper, windows))| {
            (paper, old.vectors[row * d..(row + 1) * d].to_vec(), windows)
        });
    Update::of_records(records).commit(dir, &stamp)?;
    Ok(())
}
