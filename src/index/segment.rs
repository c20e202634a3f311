//! Lexical segments: the BM25 postings of a run of consecutive rows, in an
//! immutable file that is memory-mapped, not parsed. An update writes one
//! segment for its new rows; small neighbours are merged into one (as
//! Lucene's segments are), so a collection of n rows has O(log n) segments
//! and each row is rewritten O(log n) times over its life.
//!
//! ```text
//! header (96 bytes, little-endian)
//!   magic "PLEXSEG1", first_row u64, docs u64, total_len u64, terms u64,
//!   lengths_off u64, table_off u64, blob_off u64, postings_off u64,
//!   postings_len u64, head_crc u32 (CRC-32 of bytes 96..postings_off),
//!   postings_crc u32, 8 bytes zero
//! lengths   docs × u32: terms in each row
//! table     terms × (blob offset u64, length u32, df u32, postings offset u64),
//!           sorted by term
//! blob      the terms' UTF-8 bytes
//! postings  per term, per row: varint(row - previous row), varint(tf);
//!           rows relative to first_row, the first delta from 0
//! ```
//!
//! The head (lengths, table, terms) is checked against its CRC when the
//! segment is opened; the postings' CRC is checked by `papers check`, and
//! every read is bounds-checked, so damage is an error, never a panic.

use std::fs::File;
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use crate::error::{Error, Result};

const MAGIC: &[u8; 8] = b"PLEXSEG1";

/// A term's postings: (row relative to the segment's first, term frequency).
type Postings = Vec<(u32, u32)>;
const HEADER: usize = 96;
const ENTRY: usize = 24;

/// Rows per segment at most: larger inputs are written as several, and
/// merges stop there, so no update rewrites more than this many rows.
pub const MAX_DOCS: usize = 1 << 17;

/// A segment being built in memory.
#[derive(Default)]
pub struct Builder {
    first_row: u64,
    lengths: Vec<u32>,
    /// Hashed while building (a B-tree's string comparisons were most of
    /// an import's time); sorted once, when encoded.
    postings: std::collections::HashMap<String, Postings>,
}

impl Builder {
    /// A builder for rows from `first_row` on.
    pub fn new(first_row: u64) -> Builder {
        Builder {
            first_row,
            ..Builder::default()
        }
    }

    /// Rows added.
    pub fn docs(&self) -> usize {
        self.lengths.len()
    }

    /// Adds the next row's text (the tests' way; the commit adds analysed
    /// terms).
    #[cfg(test)]
    pub fn add(&mut self, text: &str) {
        let terms = crate::analysis::Analysis::CURRENT.terms(text);
        self.add_terms(terms);
    }

    /// Adds the next row's analysed terms (see [`crate::analysis::Analysis`]).
    pub fn add_terms(&mut self, terms: Vec<String>) {
        let local = self.lengths.len() as u32;
        self.lengths.push(terms.len() as u32);
        let mut terms = terms;
        terms.sort_unstable();
        let mut terms = terms.into_iter().peekable();
        while let Some(term) = terms.next() {
            let mut count = 1;
            while terms.peek() == Some(&term) {
                terms.next();
                count += 1;
            }
            match self.postings.get_mut(&term) {
                Some(list) => list.push((local, count)),
                None => {
                    self.postings.insert(term, vec![(local, count)]);
                }
            }
        }
    }

    /// The file's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let docs = self.lengths.len();
        let mut lengths = Vec::with_capacity(docs * 4);
        for l in &self.lengths {
            lengths.extend_from_slice(&l.to_le_bytes());
        }
        let mut table = Vec::with_capacity(self.postings.len() * ENTRY);
        let mut blob = Vec::new();
        let mut postings = Vec::new();
        let mut sorted: Vec<(&String, &Postings)> = self.postings.iter().collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (term, list) in sorted {
            table.extend_from_slice(&(blob.len() as u64).to_le_bytes());
            table.extend_from_slice(&(term.len() as u32).to_le_bytes());
            table.extend_from_slice(&(list.len() as u32).to_le_bytes());
            table.extend_from_slice(&(postings.len() as u64).to_le_bytes());
            blob.extend_from_slice(term.as_bytes());
            let mut previous = 0u32;
            for &(row, tf) in list {
                varint(&mut postings, row - previous);
                varint(&mut postings, tf);
                previous = row;
            }
        }
        let total: u64 = self.lengths.iter().map(|&l| l as u64).sum();
        let lengths_off = HEADER as u64;
        let table_off = lengths_off + lengths.len() as u64;
        let blob_off = table_off + table.len() as u64;
        let postings_off = blob_off + blob.len() as u64;
        let mut head = Vec::with_capacity(lengths.len() + table.len() + blob.len());
        head.extend_from_slice(&lengths);
        head.extend_from_slice(&table);
        head.extend_from_slice(&blob);
        let mut out = Vec::with_capacity(HEADER + head.len() + postings.len());
        out.extend_from_slice(MAGIC);
        for v in [
            self.first_row,
            docs as u64,
            total,
            self.postings.len() as u64,
            lengths_off,
            table_off,
            blob_off,
            postings_off,
            postings.len() as u64,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&crc32fast::hash(&head).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&postings).to_le_bytes());
        out.resize(HEADER, 0);
        out.extend_from_slice(&head);
        out.extend_from_slice(&postings);
        out
    }
}

fn varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A varint at `*at`, or `None` past the end or on an over-long one.
#[inline]
fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u32> {
    let mut v = 0u32;
    for shift in (0..35).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= ((b & 0x7f) as u32).checked_shl(shift)?;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

/// An opened, mapped segment.
pub struct Segment {
    path: PathBuf,
    map: Mmap,
    first_row: u64,
    docs: usize,
    total_len: u64,
    terms: usize,
    lengths_off: usize,
    table_off: usize,
    blob_off: usize,
    postings_off: usize,
    postings_len: usize,
    postings_crc: u32,
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

impl Segment {
    /// Maps a segment, checks its header against what the database says
    /// it covers, and its head against its CRC.
    pub fn open(path: &Path, first_row: u64, docs: u64, bytes: u64) -> Result<Segment> {
        Segment::open_file(Segment::file(path)?, path, first_row, docs, bytes)
    }

    /// Opens the file of a segment, so that a reader holds it from its
    /// snapshot on even if a later commit deletes it.
    pub fn file(path: &Path) -> Result<File> {
        match File::open(path) {
            Ok(file) => Ok(file),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(Error::corrupt(path, "file is missing"))
            }
            Err(e) => Err(Error::io(path, e)),
        }
    }

    /// [`Segment::open`] of a file already open.
    pub fn open_file(
        file: File,
        path: &Path,
        first_row: u64,
        docs: u64,
        bytes: u64,
    ) -> Result<Segment> {
        let bad = |why: &str| Error::corrupt(path, why.to_string());
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        if len != bytes {
            return Err(Error::corrupt(
                path,
                format!("{len} bytes, expected {bytes}"),
            ));
        }
        // SAFETY: segments are immutable once named by the database; a
        // merge writes a new file and deletes the old only after commit.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
        if map.len() < HEADER || &map[..8] != MAGIC {
            return Err(bad("not a lexical segment"));
        }
        let field = |i: usize| u64_at(&map, 8 + 8 * i);
        let segment = Segment {
            path: path.to_path_buf(),
            first_row: field(0),
            docs: field(1) as usize,
            total_len: field(2),
            terms: field(3) as usize,
            lengths_off: field(4) as usize,
            table_off: field(5) as usize,
            blob_off: field(6) as usize,
            postings_off: field(7) as usize,
            postings_len: field(8) as usize,
            postings_crc: u32_at(&map, 8 + 8 * 9 + 4),
            map,
        };
        let head_crc = u32_at(&segment.map, 8 + 8 * 9);
        let consistent = segment.first_row == first_row
            && segment.docs as u64 == docs
            && segment.lengths_off == HEADER
            && segment.table_off == HEADER + segment.docs * 4
            && segment.blob_off == segment.table_off + segment.terms * ENTRY
            && segment.blob_off <= segment.postings_off
            && segment.postings_off.checked_add(segment.postings_len) == Some(segment.map.len());
        if !consistent {
            return Err(bad("header does not match the index"));
        }
        if crc32fast::hash(&segment.map[HEADER..segment.postings_off]) != head_crc {
            return Err(bad("term table does not match its checksum"));
        }
        Ok(segment)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Rows covered.
    pub fn docs(&self) -> usize {
        self.docs
    }

    /// Sum of the rows' term counts.
    pub fn total_len(&self) -> u64 {
        self.total_len
    }

    /// Terms in the row `first_row + local`.
    fn length(&self, local: usize) -> u32 {
        u32_at(&self.map, self.lengths_off + 4 * local)
    }

    fn term_at(&self, i: usize) -> &[u8] {
        let e = self.table_off + i * ENTRY;
        let off = u64_at(&self.map, e) as usize;
        let len = u32_at(&self.map, e + 8) as usize;
        let start = (self.blob_off + off).min(self.postings_off);
        let end = start.saturating_add(len).min(self.postings_off);
        &self.map[start..end]
    }

    /// The table entry of `term`: its index, document frequency and the
    /// byte range of its postings.
    fn find(&self, term: &str) -> Option<(u32, usize, usize)> {
        let (mut lo, mut hi) = (0, self.terms);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.term_at(mid).cmp(term.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    let e = self.table_off + mid * ENTRY;
                    let df = u32_at(&self.map, e + 12);
                    let start = u64_at(&self.map, e + 16) as usize;
                    let end = if mid + 1 < self.terms {
                        u64_at(&self.map, e + ENTRY + 16) as usize
                    } else {
                        self.postings_len
                    };
                    return Some((df, start, end));
                }
            }
        }
        None
    }

    /// Whether some term of the segment starts with `prefix`.
    pub fn has_prefix(&self, prefix: &str) -> bool {
        let (mut lo, mut hi) = (0, self.terms);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.term_at(mid) < prefix.as_bytes() {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo < self.terms && self.term_at(lo).starts_with(prefix.as_bytes())
    }

    /// Rows containing `term`.
    pub fn df(&self, term: &str) -> u32 {
        self.find(term).map_or(0, |(df, _, _)| df)
    }

    /// Calls `f(row, tf, row_length)` for each row containing `term`.
    pub fn postings(&self, term: &str, mut f: impl FnMut(usize, u32, u32)) -> Result<()> {
        let Some((df, start, end)) = self.find(term) else {
            return Ok(());
        };
        let bad = || Error::corrupt(&self.path, format!("damaged postings of {term:?}"));
        if start > end || end > self.postings_len {
            return Err(bad());
        }
        let bytes = &self.map[self.postings_off + start..self.postings_off + end];
        let mut at = 0;
        let mut local = 0usize;
        for _ in 0..df {
            let delta = read_varint(bytes, &mut at).ok_or_else(bad)?;
            let tf = read_varint(bytes, &mut at).ok_or_else(bad)?;
            local += delta as usize;
            if local >= self.docs || tf == 0 {
                return Err(bad());
            }
            f(self.first_row as usize + local, tf, self.length(local));
        }
        Ok(())
    }

    /// Whether the postings match their CRC (the full check).
    pub fn check_postings(&self) -> Result<()> {
        let postings = &self.map[self.postings_off..];
        if crc32fast::hash(postings) != self.postings_crc {
            return Err(Error::corrupt(
                &self.path,
                "postings do not match their checksum",
            ));
        }
        Ok(())
    }

    /// Every row's terms back, for a merge: (term, postings) in term order.
    fn decode(&self) -> Result<Vec<(String, Postings)>> {
        let mut out = Vec::with_capacity(self.terms);
        for i in 0..self.terms {
            let term = String::from_utf8(self.term_at(i).to_vec())
                .map_err(|_| Error::corrupt(&self.path, "a term is not UTF-8"))?;
            let mut list = Vec::new();
            self.postings(&term, |row, tf, _| {
                list.push(((row - self.first_row as usize) as u32, tf))
            })?;
            out.push((term, list));
        }
        Ok(out)
    }
}

/// One segment covering the rows of `segments` (consecutive, in row order).
pub fn merge(segments: &[&Segment]) -> Result<Builder> {
    let first_row = segments.first().map_or(0, |s| s.first_row);
    let mut builder = Builder::new(first_row);
    for segment in segments {
        let offset = (segment.first_row - first_row) as u32;
        builder
            .lengths
            .extend((0..segment.docs).map(|i| segment.length(i)));
        for (term, list) in segment.decode()? {
            builder
                .postings
                .entry(term)
                .or_default()
                .extend(list.into_iter().map(|(row, tf)| (row + offset, tf)));
        }
    }
    Ok(builder)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Writes `builder`'s segment to `dir/name`: its path and length.
    pub(in crate::index) fn write(dir: &Path, name: &str, builder: &Builder) -> (PathBuf, u64) {
        let path = dir.join(name);
        let bytes = builder.encode();
        std::fs::write(&path, &bytes).unwrap();
        (path, bytes.len() as u64)
    }

    /// Five short abstracts for the segments' tests.
    pub(in crate::index) const TEXTS: [&str; 5] = [
        "language models scale with data",
        "rotary embeddings (RoPE) extend language models",
        "language models and more language models",
        "diffusion models generate images",
        "graph neural networks for molecules",
    ];

    #[test]
    fn damage_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = Builder::new(0);
        TEXTS.iter().for_each(|t| a.add(t));
        let (path, len) = write(dir.path(), "a", &a);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[HEADER + 2] ^= 0x55;
        std::fs::write(&path, &bytes).unwrap();
        assert!(Segment::open(&path, 0, 5, len).is_err());
        assert!(Segment::open(&path, 0, 5, len + 1).is_err());
        assert!(Segment::open(&path, 1, 5, len).is_err());
    }
}
