//! A corpus is what a set of input paths holds: the dumps found under them,
//! in a sorted, deterministic order, and their abstracts deduplicated by
//! content, each remembering every place it was seen.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::paper::{Paper, PaperId, Source};
use crate::parse::parse_dump;

/// A file that was looked at and not indexed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The file.
    pub path: PathBuf,
    /// Why it was skipped, for a one-line warning.
    pub reason: String,
}

/// The deduplicated contents of some dumps.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    /// Unique abstracts in order of first appearance.
    pub papers: Vec<Paper>,
    /// The dumps that were read, in reading order.
    pub files: Vec<PathBuf>,
    /// Files that were not dumps.
    pub skipped: Vec<Skipped>,
    /// Paragraphs read, duplicates included.
    pub paragraphs: usize,
}

impl Corpus {
    /// Reads every dump under `paths`. Directories are walked recursively in
    /// sorted order, hidden entries skipped. A file that is not a dump is
    /// recorded in [`Corpus::skipped`]; a path that does not exist is an
    /// error, and so is finding no dump at all.
    pub fn load(paths: &[PathBuf]) -> Result<Corpus> {
        let mut files = Vec::new();
        let mut corpus = Corpus::default();
        for path in paths {
            collect_files(path, &mut Vec::new(), &mut files, &mut corpus.skipped)?;
        }
        let mut by_id: HashMap<PaperId, usize> = HashMap::new();
        for file in files {
            match read_dump(&file) {
                Ok(paragraphs) => {
                    let name = file.file_name().map_or_else(
                        || file.display().to_string(),
                        |n| n.to_string_lossy().into(),
                    );
                    for paragraph in paragraphs {
                        corpus.paragraphs += 1;
                        let source = Source {
                            file: name.clone(),
                            path: file.display().to_string(),
                            paragraph: paragraph.number,
                        };
                        let mut paper = Paper::new(paragraph.text, source);
                        paper.meta = paragraph.meta;
                        match by_id.get(&paper.id) {
                            Some(&i) => {
                                corpus.papers[i].merge(paper);
                            }
                            None => {
                                by_id.insert(paper.id, corpus.papers.len());
                                corpus.papers.push(paper);
                            }
                        }
                    }
                    corpus.files.push(file);
                }
                Err(reason) => corpus.skipped.push(Skipped { path: file, reason }),
            }
        }
        if corpus.files.is_empty() {
            let paths = paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>();
            return Err(Error::NoDumps {
                paths: paths.join(", "),
            });
        }
        Ok(corpus)
    }
}

/// Adds `path` (a file) or the files under it (a directory) to `out`.
/// `ancestors` are the real paths of the directories being walked above
/// it: a directory that is one of them (a symlink to a parent) would make
/// the walk endless, and is skipped.
fn collect_files(
    path: &Path,
    ancestors: &mut Vec<PathBuf>,
    out: &mut Vec<PathBuf>,
    skipped: &mut Vec<Skipped>,
) -> Result<()> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::MissingInput {
            path: path.to_path_buf(),
        },
        _ => Error::io(path, e),
    })?;
    if !meta.is_dir() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let real = std::fs::canonicalize(path).map_err(|e| Error::io(path, e))?;
    if let Some(ancestor) = ancestors.iter().find(|a| **a == real) {
        skipped.push(Skipped {
            path: path.to_path_buf(),
            reason: format!(
                "directory loop (the same folder as {}, which is being read)",
                ancestor.display()
            ),
        });
        return Ok(());
    }
    let mut entries = std::fs::read_dir(path)
        .map_err(|e| Error::io(path, e))?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| Error::io(path, e))?;
    entries.sort();
    ancestors.push(real);
    for entry in entries {
        let hidden = entry
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if !hidden {
            collect_files(&entry, ancestors, out, skipped)?;
        }
    }
    ancestors.pop();
    Ok(())
}

/// Reads one file as a dump, or says in a few words why it is not one.
fn read_dump(path: &Path) -> std::result::Result<Vec<crate::parse::Paragraph>, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    if bytes.contains(&0) {
        return Err("binary file, not a Daily Papers dump".into());
    }
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.valid_up_to()
        )
    })?;
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if body.starts_with('[') {
        return crate::parse::parse_hf_json(text).map_err(|e| e.to_string());
    }
    parse_dump(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deduplicates_across_files_and_keeps_sources() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("b.txt"),
            "Daily Papers\n\nSame.\n\nOther.\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("a.txt"), "Daily Papers\n\nSame.\n").unwrap();
        std::fs::write(dir.path().join("notes.md"), "# notes\n").unwrap();
        let corpus = Corpus::load(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(corpus.paragraphs, 3);
        assert_eq!(corpus.papers.len(), 2);
        assert_eq!(corpus.papers[0].text, "Same.");
        let files: Vec<_> = corpus.papers[0]
            .sources
            .iter()
            .map(|s| &s.file[..])
            .collect();
        assert_eq!(files, ["a.txt", "b.txt"]);
        assert_eq!(corpus.skipped.len(), 1);
        assert!(corpus.skipped[0].reason.contains("line 1"));
    }

    #[test]
    fn missing_path_and_no_dumps_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        assert!(matches!(
            Corpus::load(&[missing]),
            Err(Error::MissingInput { .. })
        ));
        std::fs::write(dir.path().join("x.bin"), [0u8, 1, 2]).unwrap();
        assert!(matches!(
            Corpus::load(&[dir.path().to_path_buf()]),
            Err(Error::NoDumps { .. })
        ));
    }
}

#[cfg(all(test, unix))]
mod loops {
    use super::*;

    #[test]
    fn a_symlink_to_a_parent_folder_is_skipped_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("a.txt"), "Daily Papers\n\nOne.\n").unwrap();
        std::os::unix::fs::symlink(dir.path(), sub.join("up")).unwrap();
        let corpus = Corpus::load(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(corpus.files, [sub.join("a.txt")]);
        assert_eq!(corpus.skipped.len(), 1);
        assert_eq!(corpus.skipped[0].path, sub.join("up"));
        assert!(corpus.skipped[0].reason.contains("directory loop"));
    }
}

#[cfg(test)]
mod scale {
    use super::*;

    #[test]
    fn twenty_thousand_unique_paragraphs_in_one_dump() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::from("Daily Papers\n");
        for i in 0..20_000 {
            text.push_str(&format!("\nAbstract number {i} about topic {}.\n", i % 97));
        }
        std::fs::write(dir.path().join("big.txt"), text).unwrap();
        let corpus = Corpus::load(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(corpus.paragraphs, 20_000);
        assert_eq!(corpus.papers.len(), 20_000);
        assert_eq!(corpus.papers[19_999].sources[0].paragraph, 20_000);
    }
}
