//! Limits on what one input may cost: every byte papers reads from a file,
//! stdin or the command line passes through a cap, so a hostile or
//! mistaken input (`/dev/zero`, a FIFO, a 10 GB file of one line) ends in
//! seconds with an error naming it instead of growing until the machine
//! runs out of memory.
//!
//! | what                         | default  | flag                 |
//! |------------------------------|----------|----------------------|
//! | one input file (decompressed)| 4 GiB    | `--max-file-bytes`   |
//! | one record (paragraph, line) | 100 kB   | `--max-record-bytes` |
//! | a query (words, --file, -)   | 1 MiB    |                      |
//! | stdin of `embed`             | 1 GiB    |                      |
//! | stdin of `export` (ids, JSON)| 64 MiB   |                      |
//!
//! Only regular files are read: a FIFO, socket or device in a folder is
//! skipped with a warning, and refused when given by name.

use std::io::{BufRead, Read};
use std::path::Path;

use crate::error::{Error, Result};

/// Default cap on one input file, after decompression.
pub const FILE_BYTES: u64 = 4 << 30;
/// Default cap on one record: an arXiv abstract is at most 1,920
/// characters, a BEIR SciFact document under 10 kB.
pub const RECORD_BYTES: usize = 100_000;
/// Cap on a query's text.
pub const QUERY_BYTES: u64 = 1 << 20;
/// Cap on the texts `papers embed` reads from stdin.
pub const STDIN_BYTES: u64 = 1 << 30;

/// Cap on a result list piped into `papers export`: 64 MiB is some
/// hundred thousand JSON hits.
pub const PIPED_BYTES: u64 = 64 << 20;

/// The caps that a user may raise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of one input file, decompressed.
    pub file_bytes: u64,
    /// Bytes of one record's text (a paragraph of a dump, a line of JSON
    /// Lines, an entry of a JSON list).
    pub record_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            file_bytes: FILE_BYTES,
            record_bytes: RECORD_BYTES,
        }
    }
}

/// Why a path is not read: `None` for a regular file (or a link to one).
pub fn not_regular(meta: &std::fs::Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Some("a FIFO (named pipe), not a regular file");
        } else if kind.is_socket() {
            return Some("a socket, not a regular file");
        } else if kind.is_char_device() || kind.is_block_device() {
            return Some("a device, not a regular file");
        }
    }
    Some("not a regular file")
}

/// Reads all of `reader` up to `limit` bytes; more is [`Error::TooLarge`]
/// about `what`. The read stops at `limit + 1` bytes whatever the source.
pub fn read_capped(
    reader: impl Read,
    limit: u64,
    what: impl FnOnce() -> String,
    flag: &'static str,
) -> std::io::Result<std::result::Result<Vec<u8>, Error>> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Ok(Err(Error::TooLarge {
            what: what(),
            limit,
            flag,
        }));
    }
    Ok(Ok(bytes))
}

/// Reads a query file (or stdin for `-`) of at most [`QUERY_BYTES`].
pub fn read_query(path: &Path) -> Result<String> {
    let bytes = if path.as_os_str() == "-" {
        read_capped(
            std::io::stdin().lock(),
            QUERY_BYTES,
            || "the query on stdin".into(),
            "",
        )
        .map_err(|e| Error::io("<stdin>", e))??
    } else {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        if let Some(why) = not_regular(&meta) {
            return Err(Error::io(path, std::io::Error::other(why)));
        }
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        read_capped(
            file,
            QUERY_BYTES,
            || format!("query file {}", path.display()),
            "",
        )
        .map_err(|e| Error::io(path, e))??
    };
    String::from_utf8(bytes).map_err(|e| {
        Error::io(
            path,
            std::io::Error::other(format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            )),
        )
    })
}

/// Checks a query's length.
pub fn check_query(text: &str) -> Result<()> {
    if text.len() as u64 > QUERY_BYTES {
        return Err(Error::TooLarge {
            what: "the query".into(),
            limit: QUERY_BYTES,
            flag: "",
        });
    }
    Ok(())
}

/// Reads lines of at most `line_limit` bytes each, `total_limit` in all,
/// from `reader` (named `what` in errors).
pub fn read_lines(
    mut reader: impl BufRead,
    line_limit: usize,
    total_limit: u64,
    what: &str,
) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    let mut total = 0u64;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = (&mut reader)
            .take(line_limit as u64 + 2)
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::io(what, e))?;
        if n == 0 {
            return Ok(lines);
        }
        total += n as u64;
        while buf.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
            buf.pop();
        }
        if buf.len() > line_limit {
            return Err(Error::TooLarge {
                what: format!("{what}: line {}", lines.len() + 1),
                limit: line_limit as u64,
                flag: "",
            });
        }
        if total > total_limit {
            return Err(Error::TooLarge {
                what: what.to_string(),
                limit: total_limit,
                flag: "",
            });
        }
        let line = String::from_utf8(std::mem::take(&mut buf)).map_err(|_| {
            Error::io(
                what,
                std::io::Error::other(format!("line {}: not UTF-8 text", lines.len() + 1)),
            )
        })?;
        lines.push(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_reader_stops_at_the_cap() {
        let zeros = std::io::repeat(0);
        let result = read_capped(zeros, 1000, || "zeros".into(), "--max").unwrap();
        assert!(matches!(result, Err(Error::TooLarge { limit: 1000, .. })));
        let lines = read_lines(
            std::io::BufReader::new(std::io::repeat(b'a')),
            100,
            1 << 20,
            "in",
        );
        assert!(matches!(lines, Err(Error::TooLarge { .. })));
        let ok = read_lines("one\r\ntwo\n\nthree".as_bytes(), 10, 100, "in").unwrap();
        assert_eq!(ok, ["one", "two", "", "three"]);
    }
}
