//! Append-only files of fixed-width rows, memory-mapped for reading: the
//! f32 vectors, their int8 copy and the window vectors. Only the first
//! `rows` rows, the count the database has committed, are ever read; bytes
//! past them are what a killed append left, and the next append cuts them
//! off before writing.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use crate::error::{Error, Result};

/// The f32 vectors: little-endian f32, `dimension` per row.
pub const VECTORS: &str = "vectors.f32";
/// The int8 vectors: per row a little-endian f32 scale, then `dimension`
/// i8 values whose product with the scale approximates the f32 row.
pub const QUANTIZED: &str = "vectors.i8";
/// The sign bits of the vectors: per row `dimension / 64` (rounded up)
/// little-endian u64 words, bit i of the row set when component i > 0.
pub const BINARY: &str = "vectors.b1";
/// Window vectors of long records: per row the record's row (u32), then
/// `dimension` f32.
pub const WINDOWS: &str = "windows.f32";

/// A mapped row file.
pub struct RowFile {
    path: PathBuf,
    file: File,
    map: Option<Mmap>,
    width: usize,
    rows: usize,
}

impl RowFile {
    /// Maps the first `rows` rows of `width` bytes of `path`; a file shorter
    /// than that is damage.
    pub fn open(path: &Path, width: usize, rows: usize) -> Result<RowFile> {
        let file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::corrupt(path, "file is missing"))
            }
            Err(e) => return Err(Error::io(path, e)),
        };
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len() as usize;
        let wanted = rows * width;
        if len < wanted {
            return Err(Error::corrupt(
                path,
                format!("{len} bytes, expected at least {wanted} for {rows} rows"),
            ));
        }
        // SAFETY: the committed prefix of a row file is never written
        // again (appends go past it, and a cut only drops uncommitted
        // bytes), so the mapping does not change under the reader.
        let map = if wanted == 0 {
            None
        } else {
            Some(unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path, e))?)
        };
        Ok(RowFile {
            path: path.to_path_buf(),
            file,
            map,
            width,
            rows,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Committed rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The committed bytes.
    pub fn bytes(&self) -> &[u8] {
        match &self.map {
            Some(map) => &map[..self.rows * self.width],
            None => &[],
        }
    }

    /// The bytes of one row.
    pub fn row(&self, row: usize) -> &[u8] {
        &self.bytes()[row * self.width..(row + 1) * self.width]
    }

    /// One row, read with `pread` rather than through the mapping: touching
    /// a mapped page maps the whole page-cache folio around it (up to
    /// megabytes on large-folio file systems), so rescoring 400 rows
    /// through the mapping of a 1.5 GB file added 450 MB of RSS; reading
    /// them adds none.
    pub fn read_row(&self, row: usize) -> Vec<u8> {
        use std::os::unix::fs::FileExt;
        let mut bytes = vec![0u8; self.width];
        match self
            .file
            .read_exact_at(&mut bytes, (row * self.width) as u64)
        {
            Ok(()) => bytes,
            // The mapping has the same bytes; a failed read is no reason
            // to fail a search.
            Err(_) => self.row(row).to_vec(),
        }
    }

    /// Rows `range` of a file of f32 rows, read with `pread` into memory of
    /// their own (see [`RowFile::read_row`]): a caller that goes through a
    /// large file a range at a time holds one range, where the mapping
    /// would keep every page it touched resident until the file is closed.
    pub fn read_f32_rows(&self, range: std::ops::Range<usize>) -> Vec<f32> {
        use std::os::unix::fs::FileExt;
        let floats = self.width / 4;
        let mut values = vec![0f32; range.len() * floats];
        let read = self.file.read_exact_at(
            bytemuck::cast_slice_mut(&mut values),
            (range.start * self.width) as u64,
        );
        match read {
            Ok(()) if cfg!(target_endian = "little") => values,
            _ => f32s(&self.bytes()[range.start * self.width..range.end * self.width]).into_owned(),
        }
    }

    /// The bytes of rows `range`, read with `pread` (see
    /// [`RowFile::read_f32_rows`]).
    pub fn read_rows(&self, range: std::ops::Range<usize>) -> Vec<u8> {
        use std::os::unix::fs::FileExt;
        let mut bytes = vec![0u8; range.len() * self.width];
        match self
            .file
            .read_exact_at(&mut bytes, (range.start * self.width) as u64)
        {
            Ok(()) => bytes,
            Err(_) => self.bytes()[range.start * self.width..range.end * self.width].to_vec(),
        }
    }

    /// Asks the kernel to read the whole committed part ahead.
    pub fn will_need(&self) {
        if let Some(map) = &self.map {
            let _ = map.advise(memmap2::Advice::WillNeed);
        }
    }
}

/// Appends `bytes` after the first `committed` bytes of `path` (creating
/// it), dropping anything past them, and syncs the file.
pub fn append(path: &Path, committed: u64, bytes: &[u8]) -> Result<()> {
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if len < committed {
        return Err(Error::corrupt(
            path,
            format!("{len} bytes, expected at least {committed}"),
        ));
    }
    if len != committed {
        file.set_len(committed).map_err(|e| Error::io(path, e))?;
    }
    use std::io::Seek;
    file.seek(std::io::SeekFrom::Start(committed))
        .map_err(|e| Error::io(path, e))?;
    file.write_all(bytes).map_err(|e| Error::io(path, e))?;
    file.sync_all().map_err(|e| Error::io(path, e))
}

/// Encodes f32 rows little-endian.
pub fn encode_f32(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The f32 view of little-endian bytes (copied only where the platform
/// or the alignment needs it).
pub fn f32s(bytes: &[u8]) -> std::borrow::Cow<'_, [f32]> {
    match bytemuck::try_cast_slice::<u8, f32>(bytes) {
        Ok(values) if cfg!(target_endian = "little") => values.into(),
        _ => bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect::<Vec<_>>()
            .into(),
    }
}

/// Quantizes a unit vector to int8 with its own scale: the row's bytes in
/// [`QUANTIZED`].
pub fn quantize(vector: &[f32]) -> Vec<u8> {
    let max = vector.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    let mut bytes = scale.to_le_bytes().to_vec();
    bytes.extend(
        vector
            .iter()
            .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8 as u8),
    );
    bytes
}

/// Bytes per row of [`BINARY`].
pub fn binary_width(dimension: usize) -> usize {
    dimension.div_ceil(64) * 8
}

/// The sign bits of a vector: its row in [`BINARY`].
pub fn binarize(vector: &[f32]) -> Vec<u8> {
    let mut words = vec![0u64; vector.len().div_ceil(64)];
    for (i, x) in vector.iter().enumerate() {
        if *x > 0.0 {
            words[i / 64] |= 1 << (i % 64);
        }
    }
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Bits where two rows of [`BINARY`] differ.
#[inline]
pub fn hamming(a: &[u8], b: &[u8]) -> u32 {
    a.chunks_exact(8)
        .zip(b.chunks_exact(8))
        .map(|(x, y)| {
            let x = u64::from_le_bytes(x.try_into().expect("8 bytes"));
            let y = u64::from_le_bytes(y.try_into().expect("8 bytes"));
            (x ^ y).count_ones()
        })
        .sum()
}

/// A query quantized like the rows: its i8 values and their scale.
pub fn quantize_query(query: &[f32]) -> (Vec<i8>, f32) {
    let bytes = quantize(query);
    let scale = f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    (bytes[4..].iter().map(|&b| b as i8).collect(), scale)
}

/// Appends the approximate dot product of each quantized row of `rows`
/// (`width` bytes each) with a quantized query: integer products summed
/// in i32, then both scales applied. Compiled per SIMD level.
#[multiversion::multiversion(targets = "simd")]
pub fn quantized_scores(rows: &[u8], width: usize, query: &[i8], scale: f32, out: &mut Vec<f32>) {
    for row in rows.chunks_exact(width) {
        let row_scale = f32::from_le_bytes([row[0], row[1], row[2], row[3]]);
        let mut sum = 0i32;
        for (&x, &q) in row[4..].iter().zip(query) {
            sum += (x as i8 as i32) * (q as i32);
        }
        out.push(row_scale * scale * sum as f32);
    }
}

/// [`quantized_scores`] of one row, for walks that score rows one at a time.
#[multiversion::multiversion(targets = "simd")]
pub fn quantized_score(row: &[u8], query: &[i8], scale: f32) -> f32 {
    let row_scale = f32::from_le_bytes([row[0], row[1], row[2], row[3]]);
    let mut sum = 0i32;
    for (&x, &q) in row[4..].iter().zip(query) {
        sum += (x as i8 as i32) * (q as i32);
    }
    row_scale * scale * sum as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_of_rows_reads_as_the_mapping_has_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(VECTORS);
        let values: Vec<f32> = (0..5 * 3).map(|i| i as f32 * 0.25 - 1.0).collect();
        // Bytes past the committed rows are not read.
        let mut bytes = encode_f32(&values);
        bytes.extend_from_slice(&[7u8; 24]);
        std::fs::write(&path, bytes).unwrap();
        let file = RowFile::open(&path, 3 * 4, 5).unwrap();
        assert_eq!(file.read_f32_rows(1..4), values[3..12]);
        assert_eq!(
            file.read_f32_rows(1..4),
            f32s(&file.bytes()[12..48]).to_vec()
        );
        assert!(file.read_f32_rows(2..2).is_empty());
    }

    #[test]
    fn hamming_counts_the_components_of_opposite_sign() {
        let a: Vec<f32> = (0..384)
            .map(|i| if i % 3 == 0 { -0.1 } else { 0.1 })
            .collect();
        let mut b = a.clone();
        for x in b.iter_mut().take(70) {
            *x = -*x;
        }
        assert_eq!(binarize(&a).len(), binary_width(384));
        assert_eq!(hamming(&binarize(&a), &binarize(&a)), 0);
        assert_eq!(hamming(&binarize(&a), &binarize(&b)), 70);
    }

    #[test]
    fn integer_scores_are_close_to_the_exact_ones() {
        let a: Vec<f32> = (0..384)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 600.0)
            .collect();
        let b: Vec<f32> = (0..384)
            .map(|i| ((i * 53 % 89) as f32 - 44.0) / 500.0)
            .collect();
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let (query, scale) = quantize_query(&b);
        let mut rows = quantize(&a);
        rows.extend(quantize(&b));
        let mut out = Vec::new();
        quantized_scores(&rows, 388, &query, scale, &mut out);
        assert_eq!(out.len(), 2);
        assert!(
            (exact - out[0]).abs() < 0.01 * exact.abs().max(0.1),
            "{exact} {}",
            out[0]
        );
        let norm: f32 = b.iter().map(|x| x * x).sum();
        assert!((norm - out[1]).abs() < 0.01 * norm, "{norm} {}", out[1]);
    }

    #[test]
    fn append_cuts_an_uncommitted_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows");
        append(&path, 0, &[1, 2, 3, 4]).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(&[9, 9])
            .unwrap();
        append(&path, 4, &[5, 6, 7, 8]).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), [1, 2, 3, 4, 5, 6, 7, 8]);
        let file = RowFile::open(&path, 4, 2).unwrap();
        assert_eq!(file.row(1), [5, 6, 7, 8]);
        assert!(RowFile::open(&path, 4, 3).is_err());
    }
}
