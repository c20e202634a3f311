//! `papers watch DIR`: which inputs of a folder are new or changed and
//! complete. A file is ready once its size and modification time have
//! stayed the same for the settle time (a download or a copy still in
//! progress keeps changing them), no process holds it open for writing
//! (Linux), it ends where a record ends (see [`complete`]), and it is not
//! a hidden or partial file (`.name`, `*.part`, `*.partial`, `*.tmp`,
//! `*.crdownload`, `*~`). A file that never ends where a record ends is
//! taken as it is once it has not changed for [`Watcher::patience`].
//! Each folder is visited once however many links lead to it, and each
//! file is read once however many names it has. The indexing itself is
//! [`crate::write::index()`]'s, with its lock and crash safety; this
//! module only decides what to hand it.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom};
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

    /// How long a file that does not end where a record ends must stay
    /// unchanged before it is taken as it is: a minute, or 30 settle times.
    pub fn patience(&self) -> Duration {
        (self.settle * 30).max(Duration::from_secs(60))
    }

    /// Whether `path` was handed out before (so its records from then may
    /// be older than the file now).
    pub fn seen_before(&self, path: &Path) -> bool {
        self.indexed.contains_key(path)
    }

    /// The files that are new or changed, have been still for the settle
    /// time and are complete, in sorted order. They count as handed out
    /// only once [`Watcher::done`] says so.
    pub fn ready(&mut self) -> Vec<PathBuf> {
        let now = Instant::now();
        let mut present = Vec::new();
        collect(
            &self.folder,
            &mut present,
            &mut HashSet::new(),
            &mut HashSet::new(),
        );
        let mut ready = Vec::new();
        for (path, look) in present {
            if self.indexed.get(&path) == Some(&look) {
                self.changing.remove(&path);
                continue;
            }
            match self.changing.get(&path) {
                Some((before, since)) if *before == look => {
                    let still = now.duration_since(*since);
                    let old_enough = look.1.elapsed().map_or(true, |age| age >= self.settle);
                    if still >= self.settle
                        && old_enough
                        && !open_for_writing(&path)
                        && (complete(&path) || still >= self.patience())
                    {
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

/// Every regular file under `dir` that is not hidden or partial, with its
/// look; each folder and each file once (by device and inode), so links
/// to a folder above (`ln -s . loop`) neither loop nor repeat.
fn collect(
    dir: &Path,
    out: &mut Vec<(PathBuf, Look)>,
    folders: &mut HashSet<(u64, u64)>,
    files: &mut HashSet<(u64, u64)>,
) {
    if let Ok(meta) = std::fs::metadata(dir) {
        if !folders.insert(identity(&meta)) {
            return;
        }
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    // Real names before links, so a file is known by its own name.
    entries.sort_by_key(|e| (e.file_type().is_ok_and(|t| t.is_symlink()), e.file_name()));
    for entry in entries {
        let name = entry.file_name();
        if partial(&name.to_string_lossy()) {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            collect(&path, out, folders, files);
        } else if meta.is_file() && files.insert(identity(&meta)) {
            if let Ok(modified) = meta.modified() {
                out.push((path, (meta.len(), modified)));
            }
        }
    }
}

/// A file's device and inode (its path elsewhere).
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (0, 0)
    }
}

/// Whether a file ends where a record ends: JSON closes its outer bracket,
/// JSON Lines end with a line break or a closing brace, gzip has its
/// trailer (the whole stream decodes), Parquet its footer magic, and a
/// text dump a line break or the end of a sentence (`.`, `!`, `?`, a
/// closing quote or bracket). A download cut off mid-abstract does not.
pub fn complete(path: &Path) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    if name.ends_with(".gz") {
        let Ok(file) = std::fs::File::open(path) else {
            return false;
        };
        let mut decoder = flate2::read::MultiGzDecoder::new(file);
        return std::io::copy(&mut decoder, &mut std::io::sink()).is_ok();
    }
    let Some(tail) = tail(path, 64) else {
        return false;
    };
    if name.ends_with(".parquet") {
        return tail.ends_with(b"PAR1");
    }
    let last = tail
        .iter()
        .rev()
        .find(|b| !b.is_ascii_whitespace())
        .copied();
    if name.ends_with(".json") {
        return matches!(last, Some(b']' | b'}'));
    }
    if tail.ends_with(b"\n") {
        return true;
    }
    matches!(
        last,
        Some(b'.' | b'!' | b'?' | b'"' | b'\'' | b')' | b']' | b'}')
    ) || tail.ends_with("”".as_bytes())
}

/// The last `n` bytes of a file.
fn tail(path: &Path, n: u64) -> Option<Vec<u8>> {
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(n))).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// Whether a process holds `path` open for writing (Linux: every process's
/// open files in /proc this user may see; elsewhere never known).
fn open_for_writing(path: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        let Ok(path) = std::fs::canonicalize(path) else {
            return false;
        };
        let Ok(processes) = std::fs::read_dir("/proc") else {
            return false;
        };
        for process in processes.flatten() {
            let pid = process.file_name();
            if !pid.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let Ok(fds) = std::fs::read_dir(process.path().join("fd")) else {
                continue;
            };
            for fd in fds.flatten() {
                if std::fs::read_link(fd.path()).ok().as_deref() != Some(path.as_path()) {
                    continue;
                }
                let info = process.path().join("fdinfo").join(fd.file_name());
                let flags = std::fs::read_to_string(info).ok().and_then(|text| {
                    let line = text.lines().find(|l| l.starts_with("flags:"))?;
                    u32::from_str_radix(line["flags:".len()..].trim(), 8).ok()
                });
                // O_WRONLY or O_RDWR.
                if flags.is_some_and(|f| f & 0o3 != 0) {
                    return true;
                }
            }
        }
        false
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_ready_once_it_stops_changing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("today.txt");
        std::fs::write(&file, "Daily Papers\n\nhalf.").unwrap();
        std::fs::write(dir.path().join("today.txt.part"), "x").unwrap();
        std::fs::write(dir.path().join(".hidden"), "x").unwrap();
        let settle = Duration::from_millis(300);
        let mut watcher = Watcher::new(dir.path(), settle);
        assert!(watcher.ready().is_empty(), "first seen: not yet still");
        std::thread::sleep(Duration::from_millis(150));
        std::fs::write(&file, "Daily Papers\n\nhalf a file, now longer.").unwrap();
        assert!(watcher.ready().is_empty(), "it changed");
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(watcher.ready(), vec![file.clone()]);
        watcher.done(std::slice::from_ref(&file));
        std::thread::sleep(Duration::from_millis(400));
        assert!(watcher.ready().is_empty(), "handled and unchanged");
    }

    #[test]
    fn a_cut_off_file_waits_and_links_are_followed_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("today.txt");
        std::fs::write(
            &file,
            "Daily Papers\n\nAn abstract that was cut off mid-wor",
        )
        .unwrap();
        std::os::unix::fs::symlink(".", dir.path().join("loop")).unwrap();
        std::os::unix::fs::symlink(".", dir.path().join("again")).unwrap();
        std::os::unix::fs::symlink(&file, dir.path().join("alias.txt")).unwrap();
        let mut watcher = Watcher::new(dir.path(), Duration::from_millis(100));
        assert!(watcher.ready().is_empty());
        std::thread::sleep(Duration::from_millis(200));
        assert!(watcher.ready().is_empty(), "cut off: not complete");
        std::fs::write(
            &file,
            "Daily Papers\n\nAn abstract that was cut off mid-word.\n",
        )
        .unwrap();
        watcher.ready();
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(watcher.ready(), vec![file.clone()], "once, by its own name");
        // A file a process still writes is not ready.
        let held = dir.path().join("held.txt");
        let mut writer = std::fs::File::create(&held).unwrap();
        std::io::Write::write_all(&mut writer, b"Daily Papers\n\nDone.\n").unwrap();
        watcher.done(std::slice::from_ref(&file));
        watcher.ready();
        std::thread::sleep(Duration::from_millis(200));
        assert!(watcher.ready().is_empty(), "still open for writing");
        drop(writer);
        assert_eq!(watcher.ready(), vec![held]);
    }
}
