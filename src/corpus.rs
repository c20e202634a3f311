//! A corpus is what a set of input paths holds: the dumps found under them,
//! in a sorted, deterministic order, and their abstracts deduplicated by
//! content, each remembering every place it was seen.

use std::collections::HashMap;
use std::convert::Infallible;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::input::{read_input, Fields};
use crate::paper::{Paper, PaperId, Place};

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
    /// Lines of JSON Lines inputs (and the tails of truncated gzip
    /// files) that were not read, each with its file and line.
    pub bad_lines: Vec<Skipped>,
    /// Paragraphs read, duplicates included.
    pub paragraphs: usize,
    /// Records that replaced an earlier version of the same arXiv paper
    /// within these inputs.
    pub replaced: usize,
}

impl Corpus {
    /// Reads every dump under `paths`. Directories are walked recursively in
    /// sorted order, hidden entries skipped. A file that is not a dump is
    /// recorded in [`Corpus::skipped`]; a path that does not exist is an
    /// error, and so is finding no dump at all.
    pub fn load(paths: &[PathBuf]) -> Result<Corpus> {
        Corpus::load_with(paths, &Fields::default())
    }

    /// [`Corpus::load`] with JSON Lines fields mapped by `fields`. Of two
    /// records with one arXiv id and different abstracts (two versions),
    /// the one read later is kept.
    pub fn load_with(paths: &[PathBuf], fields: &Fields) -> Result<Corpus> {
        let mut files = Vec::new();
        let mut corpus = Corpus::default();
        for path in paths {
            collect_files(path, &mut Vec::new(), &mut files, &mut corpus.skipped)?;
        }
        let mut by_id: HashMap<PaperId, usize> = HashMap::new();
        let mut by_arxiv: HashMap<String, PaperId> = HashMap::new();
        // Replaced versions leave a hole, filled in at the end, so a
        // replacement costs O(1) rather than a shift of every later record.
        let mut slots: Vec<Option<Paper>> = Vec::new();
        for file in files {
            match read_input(&file, fields) {
                Ok((paragraphs, bad)) => {
                    for line in bad {
                        corpus.bad_lines.push(Skipped {
                            path: file.clone(),
                            reason: line,
                        });
                    }
                    let name = file.file_name().map_or_else(
                        || file.display().to_string(),
                        |n| n.to_string_lossy().into(),
                    );
                    for paragraph in paragraphs {
                        corpus.paragraphs += 1;
                        let mut paper = paragraph.into_paper(&name, &file);
                        let Ok(place) = Place::of(
                            &paper,
                            |id| Ok::<_, Infallible>(by_id.get(&id).copied()),
                            |arxiv| Ok(by_arxiv.get(arxiv).map(|old| by_id[old])),
                        );
                        match place {
                            Place::Merge(i) => {
                                if let Some(arxiv) = paper.arxiv_id() {
                                    by_arxiv.entry(arxiv.to_string()).or_insert(paper.id);
                                }
                                slots[i].as_mut().expect("live").merge(paper);
                                continue;
                            }
                            Place::Replace(i) => {
                                let previous = slots[i].take().expect("live");
                                by_id.remove(&previous.id);
                                paper.add_sources(previous.sources);
                                corpus.replaced += 1;
                            }
                            Place::New => {}
                        }
                        if let Some(arxiv) = paper.arxiv_id() {
                            by_arxiv.insert(arxiv.to_string(), paper.id);
                        }
                        by_id.insert(paper.id, slots.len());
                        slots.push(Some(paper));
                    }
                    corpus.files.push(file);
                }
                Err(reason) => corpus.skipped.push(Skipped { path: file, reason }),
            }
        }
        corpus.papers = slots.into_iter().flatten().collect();
        if corpus.files.is_empty() {
            let shown = paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>();
            return Err(Error::NoDumps {
                paths: shown.join(", "),
                reason: why_none(paths, &corpus.skipped),
            });
        }
        Ok(corpus)
    }
}

/// Why nothing in `paths` was read: the first skipped file's reason,
/// named by its path unless it is the one path given.
fn why_none(paths: &[PathBuf], skipped: &[Skipped]) -> String {
    match (paths, skipped) {
        (_, []) => String::new(),
        ([given], [one]) if *given == one.path => one.reason.clone(),
        (_, [first, ..]) => format!("{}: {}", first.path.display(), first.reason),
    }
}

/// The files under `paths` (directories walked as [`Corpus::load`] walks
/// them) and what was skipped; a missing path, or no file at all, is an
/// error.
pub fn input_files(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<Skipped>)> {
    let (mut files, mut skipped) = (Vec::new(), Vec::new());
    for path in paths {
        collect_files(path, &mut Vec::new(), &mut files, &mut skipped)?;
    }
    if files.is_empty() {
        return Err(Error::NoDumps {
            paths: paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            reason: why_none(paths, &skipped),
        });
    }
    Ok((files, skipped))
}

/// Adds `path` (a file) or the files under it (a directory) to `out`.
/// `ancestors` are the real paths of the directories being walked above
/// it: a directory that is one of them (a symlink to a parent) would make
/// the walk endless, and is skipped. A path given by the user that does
/// not exist is an error; anything found inside a folder that cannot be
/// read (a dangling link, a FIFO, a folder without permission) is skipped
/// with its reason, and the rest of the folder is read.
fn collect_files(
    path: &Path,
    ancestors: &mut Vec<PathBuf>,
    out: &mut Vec<PathBuf>,
    skipped: &mut Vec<Skipped>,
) -> Result<()> {
    let top = ancestors.is_empty();
    let mut skip = |reason: String| {
        skipped.push(Skipped {
            path: path.to_path_buf(),
            reason,
        })
    };
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if top && e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::MissingInput {
                path: path.to_path_buf(),
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            skip("a link to nothing (dangling symbolic link)".into());
            return Ok(());
        }
        Err(e) => {
            skip(crate::error::describe_io(&e));
            return Ok(());
        }
    };
    if !meta.is_dir() {
        match crate::limits::not_regular(&meta) {
            Some(why) => skip(why.into()),
            None => out.push(path.to_path_buf()),
        }
        return Ok(());
    }
    let real = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(e) => {
            skip(crate::error::describe_io(&e));
            return Ok(());
        }
    };
    if let Some(ancestor) = ancestors.iter().find(|a| **a == real) {
        skip(format!(
            "directory loop (the same folder as {}, which is being read)",
            ancestor.display()
        ));
        return Ok(());
    }
    let entries = std::fs::read_dir(path).and_then(|entries| {
        entries
            .map(|entry| entry.map(|e| e.path()))
            .collect::<std::io::Result<Vec<_>>>()
    });
    let mut entries = match entries {
        Ok(entries) => entries,
        Err(e) if top => return Err(Error::io(path, e)),
        Err(e) => {
            skip(crate::error::describe_io(&e));
            return Ok(());
        }
    };
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
