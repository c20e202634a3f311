//! Format 2, read once more to upgrade it: a generation folder named by
//! `manifest.json`, with `records.json`, `vectors.f32` and `windows.bin`
//! checked against the manifest's SHA-256s. Its lexical index and graph are
//! not read: format 3 rebuilds the one and does not keep the other.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::paper::Paper;

/// The format this module reads.
pub use super::manifest::LEGACY_FORMAT as VERSION;

/// The records file: a JSON array of papers in id order.
pub const RECORDS: &str = "records.json";
/// The vectors file: little-endian f32, one row per record, in record order.
pub const VECTORS: &str = "vectors.f32";
/// Window vectors: the magic `PWIN` and the window count (u32), then per
/// window the record's row (u32) and its vector (f32s), all little-endian.
pub const WINDOWS: &str = "windows.bin";
const WINDOWS_MAGIC: &[u8; 4] = b"PWIN";

/// Size and digest of one data file.
#[derive(Clone, Debug, Deserialize)]
pub struct FileEntry {
    /// Length in bytes.
    pub bytes: u64,
    /// Hex SHA-256 of the contents.
    pub sha256: String,
}

/// The parts of a format-2 manifest the upgrade needs.
#[derive(Clone, Debug, Deserialize)]
pub struct Manifest {
    /// The model id the vectors come from.
    pub model: String,
    /// SHA-256 of the model's weights file.
    pub weights_sha256: String,
    /// Vector length.
    pub dimension: usize,
    /// The model's truncation length in word pieces.
    pub max_seq_length: usize,
    /// Number of records (and vectors).
    pub records: usize,
    /// The data folder, relative to the index directory.
    pub data_dir: String,
    /// Data files in `data_dir`, by name.
    pub files: BTreeMap<String, FileEntry>,
}

/// A format-2 index, loaded whole.
pub struct Legacy {
    /// Its manifest.
    pub manifest: Manifest,
    /// Records in id order.
    pub papers: Vec<Paper>,
    /// Their vectors, row-major.
    pub vectors: Vec<f32>,
    /// Rows of the window vectors, ascending.
    pub window_rows: Vec<u32>,
    /// The window vectors, row-major.
    pub window_vectors: Vec<f32>,
}

/// Reads the format-2 index in `dir`, checking every file it reads.
pub fn load(dir: &Path, manifest_text: &str) -> Result<Legacy> {
    let path = dir.join(super::manifest::MANIFEST);
    let manifest: Manifest = serde_json::from_str(manifest_text)
        .map_err(|e| Error::corrupt(&path, format!("invalid manifest: {e}")))?;
    let data = dir.join(&manifest.data_dir);
    let read = |name: &str| read_checked(&data.join(name), manifest.files.get(name));
    let records_path = data.join(RECORDS);
    let papers = decode_records(&records_path, &read(RECORDS)?)?;
    if papers.len() != manifest.records {
        return Err(Error::corrupt(
            &records_path,
            "record count differs from the manifest",
        ));
    }
    let vectors = decode_vectors(
        &data.join(VECTORS),
        &read(VECTORS)?,
        papers.len(),
        manifest.dimension,
    )?;
    let (window_rows, window_vectors) = decode_windows(
        &data.join(WINDOWS),
        &read(WINDOWS)?,
        papers.len(),
        manifest.dimension,
    )?;
    Ok(Legacy {
        manifest,
        papers,
        vectors,
        window_rows,
        window_vectors,
    })
}

/// Reads a data file and checks it against its manifest entry.
pub fn read_checked(path: &Path, entry: Option<&FileEntry>) -> Result<Vec<u8>> {
    let entry = entry.ok_or_else(|| Error::corrupt(path, "not listed in the manifest"))?;
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::corrupt(path, "file is missing"))
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    if bytes.len() as u64 != entry.bytes {
        return Err(Error::corrupt(
            path,
            format!("{} bytes, expected {}", bytes.len(), entry.bytes),
        ));
    }
    if crate::digest::sha256(&bytes) != entry.sha256 {
        return Err(Error::corrupt(
            path,
            "contents do not match the manifest's checksum",
        ));
    }
    Ok(bytes)
}

/// Parses records.
pub fn decode_records(path: &Path, bytes: &[u8]) -> Result<Vec<Paper>> {
    serde_json::from_slice(bytes).map_err(|e| Error::corrupt(path, format!("invalid records: {e}")))
}

/// Parses window vectors: rows (ascending, below `records`) and the
/// vectors, row-major.
pub fn decode_windows(
    path: &Path,
    bytes: &[u8],
    records: usize,
    dimension: usize,
) -> Result<(Vec<u32>, Vec<f32>)> {
    let width = 4 + 4 * dimension;
    let (header, bytes) = bytes.split_at(bytes.len().min(8));
    if header.len() < 8 || &header[..4] != WINDOWS_MAGIC {
        return Err(Error::corrupt(path, "not a windows file"));
    }
    let count = u32::from_le_bytes([header[4], header[5], header[6], header[7]]) as usize;
    if bytes.len() != count * width {
        return Err(Error::corrupt(
            path,
            format!("{} bytes of windows, expected {count}", bytes.len()),
        ));
    }
    let mut rows = Vec::with_capacity(bytes.len() / width);
    let mut vectors = Vec::with_capacity(bytes.len() / width * dimension);
    for chunk in bytes.chunks_exact(width) {
        let row = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        if row as usize >= records || rows.last().is_some_and(|&last| last > row) {
            return Err(Error::corrupt(path, format!("window of bad row {row}")));
        }
        rows.push(row);
        vectors.extend(
            chunk[4..]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
    }
    if vectors.iter().any(|x| !x.is_finite()) {
        return Err(Error::corrupt(path, "non-finite value in windows"));
    }
    Ok((rows, vectors))
}

/// Parses vectors, checking there are `rows` rows of `dimension` values.
pub fn decode_vectors(
    path: &Path,
    bytes: &[u8],
    rows: usize,
    dimension: usize,
) -> Result<Vec<f32>> {
    let expected = rows * dimension * 4;
    if bytes.len() != expected {
        return Err(Error::corrupt(
            path,
            format!(
                "{} bytes, expected {expected} for {rows} vectors of {dimension}",
                bytes.len()
            ),
        ));
    }
    let vectors: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    if vectors.iter().any(|x| !x.is_finite()) {
        return Err(Error::corrupt(path, "non-finite value in vectors"));
    }
    Ok(vectors)
}
