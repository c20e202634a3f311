//! Database errors said as what is true.

use std::path::Path;

use crate::error::Error;

/// A database error as what is true: damage is damage, but a full disk,
/// a lock held by another process, a read-only mount or a missing
/// permission are said as such, with advice that fits (the index itself
/// is intact in each of them).
pub(in crate::index) fn sql(path: &Path, e: rusqlite::Error) -> Error {
    use rusqlite::ErrorCode;
    let storage = |problem: &str| Error::Storage {
        path: path.to_path_buf(),
        problem: problem.to_string(),
    };
    let rusqlite::Error::SqliteFailure(ref f, _) = e else {
        return Error::corrupt(path, format!("database error: {e}"));
    };
    match f.code {
        ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt => {
            Error::corrupt(path, format!("damaged database: {e}"))
        }
        ErrorCode::DiskFull => storage(
            "disk full (no space left on the device); the index is unchanged: free some space \
             and run the command again",
        ),
        ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => storage(
            "busy: another process holds the index's database locked; run the command again \
             when it has finished",
        ),
        ErrorCode::ReadOnly => storage(
            "read-only: papers cannot write here (a read-only mount or file); if a writer was \
             killed, its journal is rolled back by the next papers command run where the index \
             is writable",
        ),
        ErrorCode::PermissionDenied
        | ErrorCode::CannotOpen
        | ErrorCode::AuthorizationForStatementDenied => match std::fs::File::open(path) {
            Err(io) => Error::io(path, io),
            Ok(_) => storage(
                "cannot be opened: papers needs to write beside it (permission denied or \
                     a read-only folder)",
            ),
        },
        ErrorCode::SystemIoFailure if no_space(path) => storage(
            "disk full (no space left on the device); the index is unchanged: free some space \
             and run the command again",
        ),
        ErrorCode::SystemIoFailure => storage(&format!(
            "I/O error ({e}); the index is unchanged if a write failed"
        )),
        _ => Error::corrupt(path, format!("database error: {e}")),
    }
}

/// Whether the file system holding `path` has no room left: SQLite says
/// "I/O error" when it cannot grow its shared-memory file there.
fn no_space(path: &Path) -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::ffi::OsStrExt;
        let folder = path.parent().unwrap_or(path);
        let Ok(name) = std::ffi::CString::new(folder.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: statvfs reads a C string and fills the struct given.
        let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(name.as_ptr(), &mut stat) } == 0 {
            return stat.f_bavail == 0;
        }
    }
    let _ = path;
    false
}
