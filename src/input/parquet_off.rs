//! Parquet inputs in a build without the `parquet` feature: a Parquet
//! file is still recognised (by its name or its magic bytes), and refused
//! with a line that says why, instead of being read as text.

use std::path::Path;

use super::fields::Fields;
use super::{BadLine, Paragraph};

/// The records of a batch, and the rows that were not.
type Batch = (Vec<Paragraph>, Vec<BadLine>);

/// The first (and last) four bytes of a Parquet file.
pub const MAGIC: &[u8; 4] = b"PAR1";

/// Why a Parquet file cannot be read here.
fn refused() -> String {
    format!("a Parquet file, and {}", super::NO_PARQUET)
}

/// No batches: this build reads no Parquet.
pub enum Batches {}

impl Batches {
    /// Refuses the file.
    pub fn open(_path: &Path, _fields: &Fields) -> Result<Batches, String> {
        Err(refused())
    }

    /// Never called: no `Batches` exists.
    pub fn next_batch(&mut self) -> Option<Result<Batch, String>> {
        match *self {}
    }
}

/// Refuses the file.
pub fn read(_path: &Path, _fields: &Fields) -> Result<Batch, String> {
    Err(refused())
}
