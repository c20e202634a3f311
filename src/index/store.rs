//! Bytes on disk: the record and vector files, digests, and the writes that
//! make an update atomic (write beside, fsync, rename, fsync the directory).

use std::fs::File;
use std::io::Write;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::manifest::FileEntry;
use crate::embed::source::hex;
use crate::error::{Error, Result};
use crate::paper::Paper;

/// The records file: a JSON array of papers in id order.
pub const RECORDS: &str = "records.json";
/// The vectors file: little-endian f32, one row per record, in record order.
pub const VECTORS: &str = "vectors.f32";
/// The BM25 index: serde JSON of [`crate::lexical::Bm25`].
pub const LEXICAL: &str = "lexical.json";
/// Extra vectors for the text of long records past the truncation point:
/// the magic `PWIN` and the window count (u32), then per window the
/// record's row (u32) and its vector (f32s), all little-endian.
pub const WINDOWS: &str = "windows.bin";
const WINDOWS_MAGIC: &[u8; 4] = b"PWIN";
/// The HNSW graph's basename.
pub const GRAPH: &str = "graph";

/// Writes `bytes` to `path` and flushes them to the disk.
pub fn write_synced(path: &Path, bytes: &[u8]) -> Result<FileEntry> {
    let mut file = File::create(path).map_err(|e| Error::io(path, e))?;
    file.write_all(bytes).map_err(|e| Error::io(path, e))?;
    file.sync_all().map_err(|e| Error::io(path, e))?;
    Ok(FileEntry {
        bytes: bytes.len() as u64,
        sha256: hex(&Sha256::digest(bytes)),
    })
}

/// Replaces `path` atomically: a temporary file beside it, synced, renamed
/// over it, and the directory synced so the rename itself is durable.
pub fn replace_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    write_synced(&tmp, bytes)?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
    sync_dir(path.parent().unwrap_or(Path::new(".")))
}

/// Flushes a directory's entries to disk.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
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
    if hex(&Sha256::digest(&bytes)) != entry.sha256 {
        return Err(Error::corrupt(
            path,
            "contents do not match the manifest's checksum",
        ));
    }
    Ok(bytes)
}

/// Serialises records.
pub fn encode_records(papers: &[Paper]) -> Vec<u8> {
    serde_json::to_vec(papers).expect("papers serialise to JSON")
}

/// Parses records.
pub fn decode_records(path: &Path, bytes: &[u8]) -> Result<Vec<Paper>> {
    serde_json::from_slice(bytes).map_err(|e| Error::corrupt(path, format!("invalid records: {e}")))
}

/// Serialises vectors as little-endian f32.
pub fn encode_vectors(vectors: &[f32]) -> Vec<u8> {
    vectors.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Serialises window vectors: `(row, vector)` pairs in row order.
pub fn encode_windows(windows: &[(u32, &[f32])]) -> Vec<u8> {
    let mut bytes = WINDOWS_MAGIC.to_vec();
    bytes.extend_from_slice(&(windows.len() as u32).to_le_bytes());
    for (row, vector) in windows {
        bytes.extend_from_slice(&row.to_le_bytes());
        bytes.extend(vector.iter().flat_map(|x| x.to_le_bytes()));
    }
    bytes
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
