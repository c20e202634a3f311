//! `papers watch DIR`: which inputs of a folder are new or changed and
//! complete. A file is ready once its size and modification time have
//! stayed the same for the settle time (a download or a copy still in
//! progress keeps changing them), and it is not a hidden or partial file
//! (`.name`, `*.part`, `*.partial`, `*.tmp`, `*.crdownload`, `*~`). The
//! indexing itself is [`crate::indexing::index`]'s, with its lock and crash
//! safety; this module only decides what to hand it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// A file's size and modification time.
type Look = (u64, SystemTime);

/// Follows the files of one folder (and its subfolders).
pub struct Watcher {
    folder: PathBuf,
    settle: Duration,
    /// What each file looked like when it was last handed out.
    indexed: HashMap<PathBuf, Look>,
    /// Files that changed since, with how they looked and since when.
    changing: HashMap<PathBuf, (Look, Instant)>,
}

impl Watcher {
    /// A watcher of `folder` for which every file present is new.
    pub fn new(folder: &Path, settle: Duration) -> Watcher {
        Watcher {
            folder: folder.to_path_buf(),
            settle,
            indexed: HashMap::new(),
            changing: HashMap::new(),
        }
    }

    /// The files that are new or changed and have been still for the settle
    /// time, in sorted order. They count as handed out only once
    /// [`Watcher::done`] says so.
    pub fn ready(&mut self) -> Vec<PathBuf> {
        let now = Instant::now();
        let mut present = Vec::new();
        collect(&self.folder, &mut present);
        let mut ready = Vec::new();
        for (path, look) in present {
            if self.indexed.get(&path) == Some(&look) {
                self.changing.remove(&path);
                continue;
            }
            match self.changing.get(&path) {
                Some((before, since)) if *before == look => {
                    let old_enough = look.1.elapsed().map_or(true, |age| age >= self.settle);
                    if now.duration_since(*since) >= self.settle && old_enough {
                        ready.push(path);
                    }
                }
                _ => {
                    self.changing.insert(path, (look, now));
                }
            }
        }
        ready.sort();
        ready
    }

    /// Marks `paths` as handled as they look now (indexed, or refused for
    /// good): they come back only when they change again.
    pub fn done(&mut self, paths: &[PathBuf]) {
        for path in paths {
            if let Some((look, _)) = self.changing.remove(path) {
                self.indexed.insert(path.clone(), look);
            }
        }
    }
}

/// Whether a file name is a hidden or partial file.
fn partial(name: &str) -> bool {
    name.starts_with('.')
        || name.ends_with('~')
        || [".part", ".partial", ".tmp", ".crdownload", ".download"]
            .iter()
            .any(|ext| name.ends_with(ext))
}

/// Every regular file under `dir` that is not hidden or partial, with its look.
fn collect(dir: &Path, out: &mut Vec<(PathBuf, Look)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if partial(&name.to_string_lossy()) {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            collect(&path, out);
        } else if meta.is_file() {
            if let Ok(modified) = meta.modified() {
                out.push((path, (meta.len(), modified)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_ready_once_it_stops_changing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("today.txt");
        std::fs::write(&file, "Daily Papers\n\nhalf").unwrap();
        std::fs::write(dir.path().join("today.txt.part"), "x").unwrap();
        std::fs::write(dir.path().join(".hidden"), "x").unwrap();
        let settle = Duration::from_millis(300);
        let mut watcher = Watcher::new(dir.path(), settle);
        assert!(watcher.ready().is_empty(), "first seen: not yet still");
        std::thread::sleep(Duration::from_millis(150));
        std::fs::write(&file, "Daily Papers\n\nhalf a file, now longer").unwrap();
        assert!(watcher.ready().is_empty(), "it changed");
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(watcher.ready(), vec![file.clone()]);
        watcher.done(std::slice::from_ref(&file));
        std::thread::sleep(Duration::from_millis(400));
        assert!(watcher.ready().is_empty(), "handled and unchanged");
    }
}
