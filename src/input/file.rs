//! One input file: sniffing its format (Daily Papers text, a JSON list,
//! JSON Lines, Parquet), gzip, the per-file and per-record caps, and
//! invalid UTF-8.

use std::path::Path;

use super::fields::Fields;
use super::Paragraph;
use crate::error::Error;

/// What one input file holds: its records, and the lines that were not
/// read ("line N: why").
pub type Read = (Vec<Paragraph>, Vec<String>);

/// Reads one input: a Daily Papers dump, a JSON list of records (Hugging
/// Face's daily papers, or objects with JSON Lines' fields) or JSON Lines
/// (`.jsonl`, `.ndjson`, or any file whose first character is `{`), each
/// possibly gzip-compressed (`.gz`), within `fields.limits`. Says in a few
/// words why a file is not an input.
pub fn read_input(path: &Path, fields: &Fields) -> std::result::Result<Read, String> {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().to_lowercase());
    let limit = fields.limits.file_bytes;
    let too_large = |e: Error| match e {
        Error::TooLarge { limit, flag, .. } => {
            format!("over the limit of {limit} bytes for one file (raise it with {flag})")
        }
        e => e.to_string(),
    };
    let io = |e: std::io::Error| crate::error::describe_io(&e);
    let mut file = std::fs::File::open(path).map_err(io)?;
    if name.ends_with(".parquet") || starts_with(&mut file, super::parquet::MAGIC) {
        let size = file.metadata().map_err(io)?.len();
        if size > limit {
            return Err(format!(
                "over the limit of {limit} bytes for one file (raise it with --max-file-bytes)"
            ));
        }
        return structured(super::parquet::read(path, fields)?, "row", "no rows");
    }
    let mut bad = Vec::new();
    let bytes = if name.ends_with(".gz") {
        let compressed = crate::limits::read_capped(file, limit, String::new, "--max-file-bytes")
            .map_err(io)?
            .map_err(too_large)?;
        let mut decoder = flate2::read::MultiGzDecoder::new(compressed.as_slice());
        let mut bytes = Vec::new();
        let read = std::io::Read::read_to_end(
            &mut std::io::Read::take(&mut decoder, limit.saturating_add(1)),
            &mut bytes,
        );
        if bytes.len() as u64 > limit {
            return Err(format!(
                "over the limit of {limit} bytes for one file once decompressed (raise it with \
                 --max-file-bytes)"
            ));
        }
        if let Err(e) = read {
            if bytes.is_empty() {
                return Err(format!("not a readable gzip file ({e})"));
            }
            // Keep the complete lines; the rest of the file is lost.
            let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            bytes.truncate(complete);
            let lines = bytes.iter().filter(|&&b| b == b'\n').count();
            bad.push(format!(
                "line {}: truncated gzip ({e}); the {lines} complete lines before it are read",
                lines + 1
            ));
        }
        bytes
    } else {
        crate::limits::read_capped(file, limit, String::new, "--max-file-bytes")
            .map_err(io)?
            .map_err(too_large)?
    };
    let inner = name.strip_suffix(".gz").unwrap_or(&name);
    let (paragraphs, mut more) = parse_bytes(&bytes, inner, fields)?;
    more.append(&mut bad);
    Ok((paragraphs, more))
}

/// The records of a JSON input and its bad lines or entries (`unit`) as
/// warnings; no record at all is the reason the file is not an input
/// (`empty` when nothing was there).
fn structured(
    (records, bad): (Vec<Paragraph>, Vec<super::BadLine>),
    unit: &str,
    empty: &str,
) -> std::result::Result<Read, String> {
    if records.is_empty() {
        return Err(match bad.first() {
            Some(first) => format!(
                "no {unit} is a record ({unit} {}: {}); see --field",
                first.line, first.reason
            ),
            None => empty.into(),
        });
    }
    let bad = bad
        .into_iter()
        .map(|b| format!("{unit} {}: {}", b.line, b.reason))
        .collect();
    Ok((records, bad))
}

/// Parses an input's (decompressed) bytes; `name` is its lower-cased
/// file name without `.gz`. Invalid UTF-8 costs only the records it is
/// in, and a record over `fields.limits.record_bytes` only itself: each
/// is reported as a bad line. A file that yields no record is not an
/// input.
fn parse_bytes(bytes: &[u8], name: &str, fields: &Fields) -> std::result::Result<Read, String> {
    if bytes.starts_with(b"%PDF-") || name.ends_with(".pdf") {
        return Err(format!(
            "a PDF: papers reads abstracts, not PDFs (it reads {}); index a dump or an arXiv \
             metadata file that holds the paper's abstract",
            super::daily::ACCEPTED
        ));
    }
    if bytes.contains(&0) {
        return Err(format!(
            "a binary file, not an input papers reads (it reads {})",
            super::daily::ACCEPTED
        ));
    }
    let (text, lossy) = match std::str::from_utf8(bytes) {
        Ok(text) => (std::borrow::Cow::Borrowed(text), false),
        Err(_) => (String::from_utf8_lossy(bytes), true),
    };
    let body = text.trim_start_matches('\u{feff}').trim_start();
    let (records, mut bad): (Vec<Paragraph>, Vec<String>) =
        if name.ends_with(".jsonl") || name.ends_with(".ndjson") || body.starts_with('{') {
            structured(
                super::jsonl::parse_jsonl(&text, fields),
                "line",
                "empty file",
            )?
        } else if body.starts_with('[') {
            structured(
                super::hf::parse_json_list(&text, fields)?,
                "entry",
                "an empty list",
            )?
        } else {
            (
                super::daily::parse_dump(&text).map_err(|e| e.to_string())?,
                Vec::new(),
            )
        };
    let place = |p: &Paragraph| match p.line {
        0 => format!("entry {}", p.number),
        line => format!("line {line}"),
    };
    let limit = fields.limits.record_bytes;
    let mut kept = Vec::with_capacity(records.len());
    for record in records {
        if lossy && record.text.contains('\u{fffd}') {
            bad.push(format!(
                "{}: invalid UTF-8 bytes; record skipped",
                place(&record)
            ));
        } else if record.text.len() > limit {
            bad.push(format!(
                "{}: a record of {} bytes, over the limit of {limit} (raise it with \
                 --max-record-bytes); skipped",
                place(&record),
                record.text.len()
            ));
        } else {
            kept.push(record);
        }
    }
    if kept.is_empty() {
        return Err(match bad.first() {
            Some(first) => format!("no record read ({first})"),
            None => "holds no abstracts".into(),
        });
    }
    Ok((kept, bad))
}

/// Whether `file` starts with `magic`; leaves it at its start.
fn starts_with(file: &mut std::fs::File, magic: &[u8]) -> bool {
    use std::io::{Read, Seek};
    let mut head = vec![0; magic.len()];
    let matched = file.read_exact(&mut head).is_ok() && head == magic;
    // A file that cannot seek back is read from where it is: it fails
    // its format's checks then, with their message.
    let _ = file.rewind();
    matched
}
