//! The writer lock: one process writes an index at a time, holding an OS
//! file lock on `INDEX_DIR/lock` (released when it ends, however it ends).

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// How long a write with a deadline waits for another writer: two marks
/// from the page at once wait for each other; an index run is refused.
pub const BUSY_WAIT: Duration = Duration::from_secs(1);

/// The lock file's name in the index directory.
pub const LOCK: &str = "lock";

/// Exclusive right to write an index; released when dropped (or when the
/// process dies, since it is an OS file lock).
pub struct IndexLock {
    _file: File,
}

impl IndexLock {
    /// Takes the lock on `dir`, creating the directory if needed. If another
    /// process holds it, calls `on_wait` once and blocks until it is free;
    /// but work with a deadline (a request to the server or MCP, see
    /// [`crate::deadline`]) waits at most `BUSY_WAIT` (less if its
    /// deadline is nearer) and then is [`Error::WriterBusy`]: a request
    /// either writes within its time or is refused and never applied
    /// later, and it holds a server's worker only that long.
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
            Err(TryLockError::WouldBlock) => match crate::deadline::current().at() {
                Some(deadline) => {
                    let until = deadline.min(Instant::now() + BUSY_WAIT);
                    loop {
                        std::thread::sleep(Duration::from_millis(20));
                        match file.try_lock() {
                            Ok(()) => break,
                            Err(TryLockError::WouldBlock) if Instant::now() < until => {}
                            Err(TryLockError::WouldBlock) => {
                                return Err(Error::WriterBusy {
                                    path: dir.to_path_buf(),
                                })
                            }
                            Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
                        }
                    }
                }
                None => {
                    on_wait();
                    file.lock().map_err(|e| Error::io(&path, e))?;
                }
            },
            Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        Ok(IndexLock { _file: file })
    }
}
