//! The manifest: `manifest.json`, the index's table of contents. It names the
//! generation folder holding the current data files with each file's size
//! and SHA-256, and records what the vectors mean (model, weights, dimension).
//! It is written last and atomically, so it always describes a complete
//! generation.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The on-disk format this build reads and writes.
pub const FORMAT_VERSION: u32 = 2;

/// The manifest's file name.
pub const MANIFEST: &str = "manifest.json";

/// Size and digest of one data file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Length in bytes.
    pub bytes: u64,
    /// Hex SHA-256 of the contents.
    pub sha256: String,
}

/// The contents of `manifest.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT_VERSION`] of the writer.
    pub format_version: u32,
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
    /// Increases by one with every write; names the data folder.
    pub generation: u64,
    /// The data folder, relative to the index directory.
    pub data_dir: String,
    /// Data files in `data_dir`, by name.
    pub files: BTreeMap<String, FileEntry>,
    /// Basename of the HNSW graph files in `data_dir`.
    pub graph: String,
    /// The papers version that wrote this.
    pub written_by: String,
    /// Seconds since the Unix epoch at writing.
    pub written_at: u64,
}

impl Manifest {
    /// Reads and checks `dir/manifest.json`.
    pub fn read(dir: &Path) -> Result<Manifest> {
        let path = dir.join(MANIFEST);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::IndexMissing {
                    path: dir.to_path_buf(),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                return Err(Error::corrupt(&path, "not UTF-8"))
            }
            Err(e) => return Err(Error::io(&path, e)),
        };
        // The version is checked on its own first, so an index from another
        // version gets that message rather than a field-level complaint.
        #[derive(Deserialize)]
        struct Version {
            format_version: u32,
        }
        let version: Version = serde_json::from_str(&text)
            .map_err(|e| Error::corrupt(&path, format!("invalid manifest: {e}")))?;
        if version.format_version != FORMAT_VERSION {
            return Err(Error::IndexVersion {
                path,
                found: version.format_version,
                expected: FORMAT_VERSION,
            });
        }
        serde_json::from_str(&text)
            .map_err(|e| Error::corrupt(&path, format!("invalid manifest: {e}")))
    }
}
