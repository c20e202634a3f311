//! What training a profile costs, kept between calls: a tag's classifier
//! (for rankers that have one) and the mean word vector of the collection's
//! sample (the same for every tag, and the slow part of the chosen ranker:
//! it reads and analyses hundreds of abstracts) are made once for a given
//! state of the tag and of the collection, then read back (`papers feed` is
//! a new process each day; a server asks many times).
//!
//! They are files in papers' cache folder (`PAPERS_CACHE_DIR`, else
//! `~/.cache/papers`): `profiles/KEY.f32` (a classifier: the bias, then the
//! weights, as little-endian f32) and `profiles/KEY.json` (a word vector). KEY is the SHA-256 of everything training reads: the
//! ranker, the index's data folder and model weights, its live record
//! count and row count (any `index` or `remove` changes them, and with
//! them the background sample), and the tag's papers and marks. Nothing in
//! the index is written; a cache that cannot be read or written only costs
//! the training.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

use super::svm::Linear;
use crate::index::Index;

/// The cache key of the profile of a tag whose papers are `marks` (full
/// ids with liked or not) on `index`, trained by `ranker`.
pub fn key(index: &Index, ranker: &str, marks: &[(String, bool)]) -> String {
    let mut hash = Sha256::new();
    let state = index.state();
    for part in [
        ranker,
        &std::fs::canonicalize(index.data_dir())
            .unwrap_or_else(|_| index.data_dir().to_path_buf())
            .display()
            .to_string(),
        &index.manifest().weights_sha256,
        &state.live.to_string(),
        &state.rows.to_string(),
        &super::ranker::BACKGROUND.to_string(),
    ] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    let mut marks = marks.to_vec();
    marks.sort();
    for (id, liked) in marks {
        hash.update(id.as_bytes());
        hash.update([liked as u8]);
    }
    crate::embed::source::hex(&hash.finalize())
}

fn path(key: &str) -> Option<PathBuf> {
    crate::embed::source::cache_dir()
        .ok()
        .map(|d| d.join("profiles").join(format!("{key}.f32")))
}

/// The profile stored under `key`, if there is a whole one of `dimension`.
pub fn load(key: &str, dimension: usize) -> Option<Linear> {
    let bytes = std::fs::read(path(key)?).ok()?;
    if bytes.len() != 4 * (dimension + 1) {
        return None;
    }
    let mut values = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
    let b = values.next()?;
    let w: Vec<f32> = values.collect();
    w.iter().all(|x| x.is_finite()).then_some(Linear { w, b })
}

/// The word vector stored under `key` (JSON), if there is one.
pub fn load_words(key: &str) -> Option<super::words::Words> {
    let path = path(key)?.with_extension("json");
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Stores a word vector under `key`, best effort.
pub fn store_words(key: &str, words: &super::words::Words) {
    let Some(path) = path(key).map(|p| p.with_extension("json")) else {
        return;
    };
    if let (Some(dir), Ok(bytes)) = (path.parent(), serde_json::to_vec(words)) {
        let _ = std::fs::create_dir_all(dir);
        let _ = crate::index::files::replace_atomic(&path, &bytes);
    }
}

/// Stores `linear` under `key`, best effort.
pub fn store(key: &str, linear: &Linear) {
    let Some(path) = path(key) else {
        return;
    };
    let mut bytes = Vec::with_capacity(4 * (linear.w.len() + 1));
    for x in std::iter::once(&linear.b).chain(&linear.w) {
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = crate::index::files::replace_atomic(&path, &bytes);
}
