//! The index's committed state, kept in the database's `meta` table: how
//! many vector rows are committed, which lexical segments are live, and
//! the checksums of the row files' appended runs.

use serde::{Deserialize, Serialize};

/// One lexical segment file and the rows it covers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentEntry {
    /// File name in the index directory.
    pub name: String,
    /// First row covered.
    pub first_row: u64,
    /// Rows covered.
    pub docs: u64,
    /// File length.
    pub bytes: u64,
}

/// A run of rows appended by one update, with the CRC-32 of their bytes in
/// each row file, for the full check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// First row.
    pub start: u64,
    /// Rows.
    pub rows: u64,
    /// CRC-32 of the rows' bytes in `vectors.f32`.
    pub vectors_crc: u32,
    /// CRC-32 of the rows' bytes in `vectors.i8`.
    pub quantized_crc: u32,
    /// CRC-32 of the rows' bytes in `vectors.b1`.
    pub binary_crc: u32,
}

/// A run of window rows appended by one update, with the CRC-32 of their
/// bytes in `windows.f32`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowChunk {
    /// First window row.
    pub start: u64,
    /// Window rows.
    pub rows: u64,
    /// CRC-32 of their bytes.
    pub crc: u32,
}

/// The CRC-32 of `a` followed by `b`, from theirs and `b`'s length.
pub fn crc_after(a: u32, b: u32, b_len: u64) -> u32 {
    let mut whole = crc32fast::Hasher::new_with_initial(a);
    whole.combine(&crc32fast::Hasher::new_with_initial_len(b, b_len));
    whole.finalize()
}

/// What is committed: everything a reader needs besides the records.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// Increases by one with every commit.
    pub generation: u64,
    /// Vector rows committed (live and dead).
    pub rows: u64,
    /// Live records.
    pub live: u64,
    /// Window rows committed in `windows.f32`.
    pub windows: u64,
    /// CRC-32 of all the window rows, as every papers build checks it
    /// (kept up to date by combining each append's checksum, without
    /// reading the rows before it). In an index whose last commit was made
    /// by the build that introduced `window_chunks` and not this flag,
    /// it is the checksum of the rows before the first chunk only.
    pub windows_crc: u32,
    /// Whether `windows_crc` covers all the window rows (see there).
    #[serde(default)]
    pub windows_crc_whole: bool,
    /// The window rows each update appended, with their checksums.
    #[serde(default)]
    pub window_chunks: Vec<WindowChunk>,
    /// Lexical segments, in row order, covering rows `0..rows`.
    pub segments: Vec<SegmentEntry>,
    /// The appends, for the full check.
    pub chunks: Vec<Chunk>,
    /// Segments the last commit merged away, deleted by the next one.
    #[serde(default)]
    pub retired: Vec<String>,
}

impl State {
    /// The CRC-32 of all the window rows (each `width` bytes), whichever
    /// meaning `windows_crc` has in this state.
    pub fn whole_windows_crc(&self, width: u64) -> u32 {
        if self.windows_crc_whole || self.window_chunks.is_empty() {
            return self.windows_crc;
        }
        self.window_chunks
            .iter()
            .fold(self.windows_crc, |crc, chunk| {
                crc_after(crc, chunk.crc, chunk.rows * width)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_whole_windows_checksum_is_kept_by_combining_appends() {
        let (a, b, c) = (vec![1u8; 40], vec![7u8; 24], vec![9u8; 8]);
        let whole = crc32fast::hash(&[a.clone(), b.clone(), c.clone()].concat());
        assert_eq!(
            crc_after(
                crc_after(crc32fast::hash(&a), crc32fast::hash(&b), 24),
                crc32fast::hash(&c),
                8
            ),
            whole
        );
        // A state whose checksum covers only the rows before its chunks
        // (written by the build that introduced them), rows of 8 bytes.
        let chunk = |start, bytes: &Vec<u8>| WindowChunk {
            start,
            rows: bytes.len() as u64 / 8,
            crc: crc32fast::hash(bytes),
        };
        let mut state = State {
            windows: 9,
            windows_crc: crc32fast::hash(&a),
            window_chunks: vec![chunk(5, &b), chunk(8, &c)],
            ..State::default()
        };
        assert_eq!(state.whole_windows_crc(8), whole);
        state.windows_crc = whole;
        state.windows_crc_whole = true;
        assert_eq!(state.whole_windows_crc(8), whole);
        assert_eq!(State::default().whole_windows_crc(8), crc32fast::hash(&[]));
    }
}
