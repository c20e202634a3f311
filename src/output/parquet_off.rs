//! `embed --records --format parquet` in a build without the `parquet`
//! feature: refused before anything is embedded.

use std::io::Write;

use crate::input::Paragraph;

/// Whether this build writes Parquet.
pub const AVAILABLE: bool = false;

/// Refuses to write.
pub fn write(
    _out: impl Write + Send,
    _records: &[Paragraph],
    _vectors: &[Vec<f32>],
) -> std::io::Result<()> {
    Err(std::io::Error::other(super::NO_PARQUET))
}
