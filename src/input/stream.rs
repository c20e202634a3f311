//! One input read a batch at a time, for imports that must not hold the
//! file: JSON Lines (gzip included) a block of lines at a time, Parquet a
//! record batch at a time. Other formats (a dump, a JSON list) are small by
//! nature and are read whole, as one batch.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::fields::Fields;
use super::{BadLine, Paragraph};

/// Lines parsed per batch.
const BATCH_LINES: usize = 2048;

/// An open input.
pub enum Stream {
    /// JSON Lines, from the line after `line`.
    Lines {
        /// The (decompressed) text.
        reader: Box<dyn BufRead>,
        /// Lines read so far.
        line: usize,
        /// Where the parts of a record are.
        fields: Fields,
        /// Whether the end (or a read error) was reached.
        done: bool,
    },
    /// Parquet.
    Parquet(super::parquet::Batches),
    /// A format read whole; `None` once handed out.
    Whole(Option<(Vec<Paragraph>, Vec<BadLine>)>),
}

/// What one batch holds: records and the lines (rows) that were not.
pub type Batch = (Vec<Paragraph>, Vec<BadLine>);

impl Stream {
    /// Opens `path`, sniffing its format as [`super::read_input`] does; the
    /// error says in a few words why it is not an input.
    pub fn open(path: &Path, fields: &Fields) -> Result<Stream, String> {
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().to_lowercase());
        let io = |e: std::io::Error| crate::error::describe_io(&e);
        let mut file = File::open(path).map_err(io)?;
        let mut magic = [0u8; 4];
        let parquet = file.read_exact(&mut magic).is_ok() && &magic == super::parquet::MAGIC;
        if parquet || name.ends_with(".parquet") {
            return super::parquet::Batches::open(path, fields).map(Stream::Parquet);
        }
        let file = File::open(path).map_err(io)?;
        let mut reader: Box<dyn BufRead> = if name.ends_with(".gz") {
            Box::new(BufReader::with_capacity(
                1 << 16,
                flate2::read::MultiGzDecoder::new(BufReader::new(file)),
            ))
        } else {
            Box::new(BufReader::with_capacity(1 << 16, file))
        };
        let inner = name.strip_suffix(".gz").unwrap_or(&name);
        let head = reader
            .fill_buf()
            .map_err(|e| format!("cannot be read ({e})"))?;
        let first = head
            .iter()
            .copied()
            .find(|b| !(b.is_ascii_whitespace() || [0xef, 0xbb, 0xbf].contains(b)));
        if inner.ends_with(".jsonl") || inner.ends_with(".ndjson") || first == Some(b'{') {
            return Ok(Stream::Lines {
                reader,
                line: 0,
                fields: fields.clone(),
                done: false,
            });
        }
        drop(reader);
        super::read_input(path, fields).map(|(records, bad)| {
            let bad = bad
                .into_iter()
                .map(|reason| BadLine { line: 0, reason })
                .collect();
            Stream::Whole(Some((records, bad)))
        })
    }

    /// The next batch, `None` at the end; an error ends the input (a
    /// Parquet row group that cannot be decoded).
    pub fn next_batch(&mut self) -> Option<Result<Batch, String>> {
        match self {
            Stream::Parquet(batches) => batches.next_batch(),
            Stream::Whole(whole) => whole.take().map(Ok),
            Stream::Lines {
                reader,
                line,
                fields,
                done,
            } => {
                if *done {
                    return None;
                }
                let (mut records, mut bad) = (Vec::new(), Vec::new());
                let cap = 4 * fields.limits.record_bytes;
                let mut buffer = Vec::new();
                while records.len() + bad.len() < BATCH_LINES {
                    buffer.clear();
                    let read = reader
                        .by_ref()
                        .take(cap as u64 + 1)
                        .read_until(b'\n', &mut buffer);
                    match read {
                        Ok(0) => {
                            *done = true;
                            break;
                        }
                        Ok(_) => {}
                        Err(e) => {
                            *done = true;
                            bad.push(BadLine {
                                line: *line + 1,
                                reason: format!(
                                    "cannot be read ({e}); the {line} lines before it are read"
                                ),
                            });
                            break;
                        }
                    }
                    *line += 1;
                    if buffer.len() > cap && !buffer.ends_with(b"\n") {
                        // Skip the rest of the long line.
                        let mut sink = Vec::new();
                        let _ = reader.read_until(b'\n', &mut sink);
                        bad.push(BadLine {
                            line: *line,
                            reason: format!(
                                "a line over {cap} bytes (raise --max-record-bytes); skipped"
                            ),
                        });
                        continue;
                    }
                    let Ok(text) = std::str::from_utf8(&buffer) else {
                        bad.push(BadLine {
                            line: *line,
                            reason: "invalid UTF-8 bytes; record skipped".into(),
                        });
                        continue;
                    };
                    let text = super::strip_bom(text);
                    if text.trim().is_empty() {
                        continue;
                    }
                    match super::jsonl::record(text.trim_end(), fields) {
                        Ok(paragraph) => records.push(Paragraph {
                            number: *line,
                            line: *line,
                            ..paragraph
                        }),
                        Err(reason) => bad.push(BadLine {
                            line: *line,
                            reason,
                        }),
                    }
                }
                Some(Ok((records, bad)))
            }
        }
    }
}
