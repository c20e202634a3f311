//! The manifest: `manifest.json`, what the index's vectors mean (format
//! version, model, weights, dimension). It is written when the index is
//! created, atomically, and the database's state says everything that
//! changes with an update; so the manifest is never rewritten by an
//! update, and a reader can always tell the format before it opens
//! anything else.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The on-disk format this build reads and writes.
pub const FORMAT_VERSION: u32 = 3;

/// The format before it, which `papers upgrade` converts (see
/// `super::legacy`).
pub const LEGACY_FORMAT: u32 = 2;

/// The manifest's file name.
pub const MANIFEST: &str = "manifest.json";

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
    /// The data folder, relative to the index directory.
    pub data_dir: String,
    /// The papers version that created the index.
    pub written_by: String,
    /// Seconds since the Unix epoch at creation.
    pub written_at: u64,
    /// Hex SHA-256 of the manifest's JSON with this field empty.
    #[serde(default)]
    pub checksum: String,
}

/// The format version a manifest declares, read on its own so that an
/// index of another version gets that message rather than a field-level
/// complaint.
pub fn version(dir: &Path) -> Result<(u32, String)> {
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
    Ok((version_in(dir, &text)?, text))
}

/// The format version the manifest text `text` (of `dir`) declares.
pub fn version_in(dir: &Path, text: &str) -> Result<u32> {
    #[derive(Deserialize)]
    struct Version {
        format_version: u32,
    }
    let version: Version = serde_json::from_str(text)
        .map_err(|e| Error::corrupt(dir.join(MANIFEST), format!("invalid manifest: {e}")))?;
    Ok(version.format_version)
}

/// The SHA-256 (hex) of the compact JSON of `value`: what a manifest's
/// `checksum` is, over the manifest without it.
pub fn checksum_of(value: &serde_json::Value) -> String {
    let json = serde_json::to_vec(value).expect("JSON serialises");
    crate::digest::sha256(&json)
}

impl Manifest {
    /// The model this index (in `dir`) was built with, as a model loaded
    /// for it must match.
    pub fn built_with<'a>(&'a self, dir: &'a Path) -> crate::embed::BuiltWith<'a> {
        crate::embed::BuiltWith {
            dir,
            model: &self.model,
            weights_sha256: &self.weights_sha256,
        }
    }

    /// The model this index was built with, as a writer stamps it.
    pub fn stamp(&self) -> crate::embed::ModelStamp {
        crate::embed::ModelStamp {
            model: self.model.clone(),
            weights_sha256: self.weights_sha256.clone(),
            dimension: self.dimension,
            max_seq_length: self.max_seq_length,
        }
    }

    /// Reads and checks `dir/manifest.json`; an index of another format
    /// is an error ([`Error::IndexVersion`], or [`Error::IndexUpgrade`] for
    /// one this build converts).
    pub fn read(dir: &Path) -> Result<Manifest> {
        let (found, text) = version(dir)?;
        Manifest::from_text(dir, found, &text)
    }

    /// [`Manifest::read`] of a manifest already read ([`version`]'s `found`
    /// and `text`).
    pub fn from_text(dir: &Path, found: u32, text: &str) -> Result<Manifest> {
        let path = dir.join(MANIFEST);
        if found == LEGACY_FORMAT {
            return Err(Error::IndexUpgrade { path, found });
        }
        if found != FORMAT_VERSION {
            return Err(Error::IndexVersion {
                path,
                found,
                expected: FORMAT_VERSION,
            });
        }
        let manifest: Manifest = serde_json::from_str(text)
            .map_err(|e| Error::corrupt(&path, format!("invalid manifest: {e}")))?;
        if manifest.digest() != manifest.checksum {
            return Err(Error::corrupt(&path, "contents do not match its checksum"));
        }
        Ok(manifest)
    }

    /// The checksum of everything else: the SHA-256 of the compact JSON of
    /// the other fields.
    fn digest(&self) -> String {
        let mut value = serde_json::to_value(self).expect("manifest serialises");
        if let Some(map) = value.as_object_mut() {
            map.remove("checksum");
        }
        checksum_of(&value)
    }

    /// Writes `dir/manifest.json` atomically, with its checksum.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let sealed = Manifest {
            checksum: self.digest(),
            ..self.clone()
        };
        let text = serde_json::to_vec_pretty(&sealed).expect("manifest serialises");
        super::files::replace_atomic(&dir.join(MANIFEST), &text)
    }
}
