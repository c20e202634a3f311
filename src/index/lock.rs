//! The writer lock: one process writes an index at a time, holding an OS
//! file lock on `INDEX_DIR/lock` (released when it ends, however it ends).

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;

use crate::error::{Error, Result};

/// The lock file's name in the index directory.
pub const LOCK: &str = "lock";

/// Exclusive right to write an index; released when dropped (or when the
/// process dies, since it is an OS file lock).
pub struct IndexLock {
    _file: File,
}

impl IndexLock {
    /// Takes the lock on `dir`, creating the directory if needed. If another
    /// process holds it, calls `on_wait` once and blocks until it is free.
    pub fn acquire(dir: &Path, on_wait: impl FnOnce()) -> Result<IndexLock> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let path = dir.join(LOCK);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                on_wait();
                file.lock().map_err(|e| Error::io(&path, e))?;
            }
            Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        Ok(IndexLock { _file: file })
    }
}
