//! The full check (`papers check`, and every open of a small index):
//! SQLite's integrity check, every record against its id and row, the
//! CRC-32 of every appended run, of the windows and of every segment, and
//! every vector row of unit length. The error names the first damaged file.

use super::{rows, Index};
use crate::error::{Error, Result};
use crate::paper::PaperId;

impl Index {
    /// The full check: SQLite's integrity check, every record against its
    /// id and row, the CRC-32 of every appended run, of the windows and of
    /// every segment. The error names the first damaged file.
    pub fn check(&self) -> Result<()> {
        let db = self.db();
        if let Some(problem) = db.integrity()? {
            return Err(Error::corrupt(db.path(), problem));
        }
        let mut live = 0u64;
        db.for_each(false, |row, paper| {
            live += 1;
            if PaperId::of(&paper.text) != paper.id || row >= self.rows() {
                return Err(Error::corrupt(
                    db.path(),
                    format!("record {} does not match its text", paper.id),
                ));
            }
            Ok(())
        })?;
        if live != self.state.live {
            return Err(Error::corrupt(
                db.path(),
                "record count does not match the state",
            ));
        }
        drop(db);
        let d = self.manifest.dimension;
        let mut next = 0;
        for chunk in &self.state.chunks {
            let range = |width: usize| {
                chunk.start as usize * width..(chunk.start + chunk.rows) as usize * width
            };
            let ok = chunk.start == next
                && crc32fast::hash(&self.vectors.bytes()[range(4 * d)]) == chunk.vectors_crc;
            if !ok {
                return Err(Error::corrupt(
                    self.vectors.path(),
                    "vectors do not match their checksums",
                ));
            }
            let binary = &self.binary.bytes()[range(rows::binary_width(d))];
            if crc32fast::hash(binary) != chunk.binary_crc {
                return Err(Error::corrupt(
                    self.binary.path(),
                    "vectors do not match their checksums",
                ));
            }
            if crc32fast::hash(&self.quantized.bytes()[range(4 + d)]) != chunk.quantized_crc {
                return Err(Error::corrupt(
                    self.quantized.path(),
                    "vectors do not match their checksums",
                ));
            }
            next = chunk.start + chunk.rows;
        }
        if next != self.state.rows {
            return Err(Error::corrupt(
                self.vectors.path(),
                "rows without a checksum",
            ));
        }
        self.check_unit_rows()?;
        let width = 4 + 4 * d;
        let windows = self.windows.bytes();
        let all = self.state.windows as usize * width;
        let mut ok = windows.len() >= all
            && crc32fast::hash(&windows[..all]) == self.state.whole_windows_crc(width as u64);
        let mut next = self
            .state
            .window_chunks
            .first()
            .map_or(self.state.windows, |c| c.start);
        for chunk in &self.state.window_chunks {
            let range = chunk.start as usize * width..(chunk.start + chunk.rows) as usize * width;
            ok &= chunk.start == next
                && windows.len() >= range.end
                && crc32fast::hash(&windows[range]) == chunk.crc;
            next = chunk.start + chunk.rows;
        }
        if !ok || next != self.state.windows {
            return Err(Error::corrupt(
                self.windows.path(),
                "windows do not match their checksums",
            ));
        }
        for segment in self.lexical()?.segments() {
            segment.check_postings()?;
        }
        Ok(())
    }

    /// Every stored vector row is a unit vector: a row that is not (a value
    /// that is not finite, a row of zeros, a length far from 1) would be
    /// scored wrongly, or refused by search, so the check names it.
    fn check_unit_rows(&self) -> Result<()> {
        let d = self.manifest.dimension;
        let bytes = self.vectors.bytes();
        let rows = (self.state.rows as usize).min(bytes.len() / (4 * d));
        for row in 0..rows {
            let at = row * 4 * d;
            let mut length = 0f64;
            for value in bytes[at..at + 4 * d].chunks_exact(4) {
                let x = f32::from_le_bytes([value[0], value[1], value[2], value[3]]);
                length += f64::from(x) * f64::from(x);
            }
            if !length.is_finite() || (length - 1.0).abs() > 1e-2 {
                return Err(Error::corrupt(
                    self.vectors.path(),
                    format!(
                        "the vector at row {row} is not of unit length (squared length {length})"
                    ),
                ));
            }
        }
        Ok(())
    }
}
