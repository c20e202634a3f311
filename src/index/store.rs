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
