//! What papers may touch in an index folder: only what it made. A folder
//! is papers' when it is missing or empty, holds a manifest papers wrote,
//! or holds nothing but entries papers makes (the lock, data folders that
//! carry papers' marker or database, temporary manifests); anything else is
//! somebody's folder and is never written into. Cleanup after a new data
//! folder is switched in removes only the folder the previous manifest
//! named and data folders that carry the marker (left by a killed or
//! failed run), never a folder just because of its name.

use std::path::Path;

use crate::error::{Error, Result};

/// The marker file written first into every data folder papers creates.
pub const DATA_MARKER: &str = "papers-data-folder";

/// What an index folder holds, as far as writing into it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Folder {
    /// Nothing there yet (or only entries papers makes, without a
    /// manifest: a first build that was killed).
    Fresh,
    /// A papers index (its manifest may still be damaged).
    Index,
}

/// Whether `name` is a data folder name papers makes (`data-000007`) or
/// a format-2 generation folder (`gen-000007`), and its number.
pub fn number_of(name: &str) -> Option<u64> {
    let digits = name
        .strip_prefix("data-")
        .or_else(|| name.strip_prefix("gen-"))?;
    (digits.len() == 6 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// Whether the folder `path` (named like a data folder) was made by papers:
/// it carries the marker, or a format-3 database, or format 2's records.
pub fn is_papers_data(path: &Path) -> bool {
    path.join(DATA_MARKER).is_file()
        || path.join(crate::index::db::DATABASE).is_file()
        || path.join(crate::index::legacy::RECORDS).is_file()
}

/// What a data folder is renamed to (`data-000007.removing`) before it is
/// deleted: the rename is atomic, so a run killed while deleting leaves a
/// folder whose name says what it is, and the next write finishes it,
/// whatever was already gone (the marker included).
pub const REMOVING: &str = ".removing";

/// Whether `name` is a data folder papers was deleting.
pub fn is_removing(name: &str) -> bool {
    name.strip_suffix(REMOVING)
        .is_some_and(|stem| number_of(stem).is_some())
}

/// Whether the entry `name` of an index folder is one papers makes.
fn is_papers_entry(dir: &Path, name: &str) -> bool {
    name == super::lock::LOCK
        || is_temporary_manifest(name)
        || is_removing(name)
        || (number_of(name).is_some() && is_papers_data(&dir.join(name)))
}

/// Deletes the data folder `path`: renamed to its `.removing` name first
/// ([`REMOVING`]), then deleted. Best effort, as every cleanup is.
pub fn remove_data(path: &Path) {
    let mut trash = path.as_os_str().to_owned();
    trash.push(REMOVING);
    let trash = std::path::PathBuf::from(trash);
    let gone = if std::fs::rename(path, &trash).is_ok() {
        &trash
    } else {
        path
    };
    let _ = std::fs::remove_dir_all(gone);
}

/// `manifest.tmp-<pid>`: a manifest being written atomically.
pub fn is_temporary_manifest(name: &str) -> bool {
    name.strip_prefix("manifest.tmp-")
        .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `text` is a manifest papers wrote (any format version): a JSON
/// object with a numeric `format_version`, a `data_dir` and a `written_by`
/// that names papers.
pub fn is_papers_manifest(text: &str) -> bool {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(text) else {
        return false;
    };
    map.get("format_version").is_some_and(|v| v.is_u64())
        && map.get("data_dir").is_some_and(|v| v.is_string())
        && map
            .get("written_by")
            .and_then(|v| v.as_str())
            .is_some_and(|w| w.starts_with("papers"))
}

/// A folder as [`survey`] found it, with the manifest it read there (if
/// any) and which file that was, so that a write can use what was read
/// rather than read it again ([`Surveyed::manifest_if_unchanged`]).
#[derive(Clone, Debug)]
pub struct Surveyed {
    /// What the folder holds.
    pub folder: Folder,
    manifest: Option<(Vec<u8>, Identity)>,
}

/// Which file a manifest was: manifests are replaced by renaming a new
/// file over the old, so a replaced one has another inode (or size or
/// time).
type Identity = (u64, u64, Option<std::time::SystemTime>);

fn identity(meta: &std::fs::Metadata) -> Identity {
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(meta);
    #[cfg(not(unix))]
    let inode = 0;
    (inode, meta.len(), meta.modified().ok())
}

impl Surveyed {
    /// The manifest's text as the survey read it, if the file at its place
    /// now is still the one read (nothing replaced it since: a writer that
    /// committed between the survey and the lock did).
    pub fn manifest_if_unchanged(&self, dir: &Path) -> Option<String> {
        let (bytes, seen) = self.manifest.as_ref()?;
        let now = std::fs::metadata(dir.join(crate::index::manifest::MANIFEST)).ok()?;
        (identity(&now) == *seen).then(|| String::from_utf8(bytes.clone()).ok())?
    }
}

/// Looks at `dir` before anything writes into it: a folder papers did not
/// make is [`Error::NotAnIndex`], whatever the command.
pub fn survey(dir: &Path) -> Result<Folder> {
    Ok(survey_reading(dir)?.folder)
}

/// [`survey`], keeping the manifest it read.
pub fn survey_reading(dir: &Path) -> Result<Surveyed> {
    let fresh = Surveyed {
        folder: Folder::Fresh,
        manifest: None,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(fresh),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            return Err(Error::NotAnIndex {
                path: dir.to_path_buf(),
                reason: "it is a file, not a folder".into(),
            })
        }
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut manifest = None;
    let mut foreign = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == crate::index::manifest::MANIFEST {
            manifest = Some(read_with_identity(&entry.path()));
        } else if !is_papers_entry(dir, &name) {
            foreign.push(name);
        }
    }
    foreign.sort();
    let ours = |bytes: &[u8]| is_papers_manifest(&String::from_utf8_lossy(bytes));
    let index = |manifest| Surveyed {
        folder: Folder::Index,
        manifest,
    };
    match manifest {
        Some((bytes, seen)) if ours(&bytes) => Ok(index(seen.map(|seen| (bytes, seen)))),
        // A damaged manifest among nothing but papers' own files: a
        // damaged index, which `--rebuild` may replace.
        Some(_) if foreign.is_empty() && has_data_folder(dir) => Ok(index(None)),
        Some(_) => Err(Error::NotAnIndex {
            path: dir.to_path_buf(),
            reason: "its manifest.json was not written by papers".into(),
        }),
        None if foreign.is_empty() => Ok(fresh),
        None => Err(Error::NotAnIndex {
            path: dir.to_path_buf(),
            reason: format!(
                "it holds {}{} and no papers index",
                foreign[..foreign.len().min(3)].join(", "),
                if foreign.len() > 3 { ", ..." } else { "" }
            ),
        }),
    }
}

/// A file's bytes (empty if it cannot be read) and which file it was (none
/// then), from one open.
fn read_with_identity(path: &Path) -> (Vec<u8>, Option<Identity>) {
    use std::io::Read;
    let Ok(mut file) = std::fs::File::open(path) else {
        return (Vec::new(), None);
    };
    let seen = file.metadata().ok().map(|m| identity(&m));
    let mut bytes = Vec::new();
    match file.read_to_end(&mut bytes) {
        Ok(_) => (bytes, seen),
        Err(_) => (Vec::new(), None),
    }
}

fn has_data_folder(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            number_of(&name).is_some() && is_papers_data(&e.path())
        })
}

/// After `current` was switched in: removes the data folder `previous`
/// named (if papers made it), data folders with papers' marker that no
/// manifest names (left by killed or failed runs), folders a killed run
/// was deleting ([`REMOVING`]), and temporary manifests. Best effort: leftovers cost space, not correctness.
pub fn remove_stale(dir: &Path, current: &str, previous: Option<&str>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if name == current {
            continue;
        }
        let named_before = previous == Some(name.as_str());
        let marked = number_of(&name).is_some() && path.join(DATA_MARKER).is_file();
        if (named_before && is_papers_data(&path)) || marked {
            remove_data(&path);
        } else if is_removing(&name) {
            let _ = std::fs::remove_dir_all(&path);
        } else if is_temporary_manifest(&name) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_manifests() {
        assert_eq!(number_of("data-000007"), Some(7));
        assert_eq!(number_of("data-1"), None);
        assert_eq!(number_of("gen-000002"), Some(2));
        assert!(is_temporary_manifest("manifest.tmp-123"));
        assert!(!is_temporary_manifest("manifest.tmp-x"));
        assert!(is_papers_manifest(
            r#"{"format_version":3,"data_dir":"data-000001","written_by":"papers 0.1.0"}"#
        ));
        assert!(!is_papers_manifest(
            r#"{"name":"my-package","version":"1.0"}"#
        ));
        assert!(!is_papers_manifest("not json"));
    }

    #[test]
    fn a_user_folder_is_refused_and_papers_folders_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(survey(&root.join("new")).unwrap(), Folder::Fresh);
        assert_eq!(survey(root).unwrap(), Folder::Fresh);
        std::fs::create_dir(root.join("data-1")).unwrap();
        assert!(matches!(survey(root), Err(Error::NotAnIndex { .. })));
        std::fs::remove_dir(root.join("data-1")).unwrap();
        std::fs::write(root.join("lock"), "").unwrap();
        std::fs::create_dir(root.join("data-000001")).unwrap();
        std::fs::write(root.join("data-000001").join(DATA_MARKER), "").unwrap();
        assert_eq!(survey(root).unwrap(), Folder::Fresh);
        std::fs::write(root.join("manifest.json"), "garbage").unwrap();
        assert_eq!(survey(root).unwrap(), Folder::Index);
        std::fs::write(root.join("notes.txt"), "mine").unwrap();
        assert!(matches!(survey(root), Err(Error::NotAnIndex { .. })));
    }
}
