//! The JSON contract. Field names are stable; new fields may be added.
//!
//! `search` and `similar` write JSON Lines, one hit per line, best first:
//!
//! | field      | type    | meaning                                                   |
//! |------------|---------|-----------------------------------------------------------|
//! | `rank`     | integer | 1-based position in the results                           |
//! | `id`       | string  | the record's full id, 16 hex digits                       |
//! | `score`    | number  | cosine similarity to the query, -1 to 1                   |
//! | `headline` | string  | the abstract's first sentence, shortened                  |
//! | `text`     | string  | the whole abstract                                        |
//! | `sources`  | array   | every place it was seen: `{file, path, paragraph}`        |
//!
//! `show` writes one object with `id`, `headline`, `text`, `sources`.
//! `info --json` writes one object: `path`, `records`, `model`,
//! `weights_sha256`, `dimension`, `max_seq_length`, `format_version`,
//! `generation`, `search` (`"exact"` or `"graph"`), `graph_threshold`,
//! `size_bytes`, and `sources` (`[{file, records}]`).
//! `index --json` writes one object: `index`, `files`, `skipped`,
//! `paragraphs`, `unique`, `added`, `already_present`, `new_sources`,
//! `removed`, `records`.
//! `embed` writes JSON Lines `{text, embedding}`.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use super::InfoExtra;
use crate::index::{Index, UpdateReport, GRAPH_THRESHOLD};
use crate::paper::{Paper, Source};
use crate::search::Hit;

/// One hit on the wire.
#[derive(Serialize)]
struct WireHit<'a> {
    rank: usize,
    id: String,
    score: f32,
    headline: String,
    text: &'a str,
    sources: &'a [Source],
}

/// One record on the wire.
#[derive(Serialize)]
struct WirePaper<'a> {
    id: String,
    headline: String,
    text: &'a str,
    sources: &'a [Source],
}

impl<'a> WirePaper<'a> {
    fn new(paper: &'a Paper) -> Self {
        WirePaper {
            id: paper.id.hex(),
            headline: paper.headline(),
            text: &paper.text,
            sources: &paper.sources,
        }
    }
}

#[derive(Serialize)]
struct WireSource {
    file: String,
    records: usize,
}

#[derive(Serialize)]
struct WireInfo<'a> {
    path: String,
    records: usize,
    model: &'a str,
    weights_sha256: &'a str,
    dimension: usize,
    max_seq_length: usize,
    format_version: u32,
    generation: u64,
    search: &'static str,
    graph_threshold: usize,
    size_bytes: u64,
    sources: Vec<WireSource>,
}

#[derive(Serialize)]
struct WireReport {
    index: String,
    files: usize,
    skipped: usize,
    paragraphs: usize,
    unique: usize,
    added: usize,
    already_present: usize,
    new_sources: usize,
    removed: usize,
    records: usize,
}

#[derive(Serialize)]
struct WireEmbedding<'a> {
    text: &'a str,
    embedding: &'a [f32],
}

fn line<W: Write, T: Serialize>(out: &mut W, value: &T) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    out.write_all(b"\n")
}

pub(super) fn hits<W: Write>(out: &mut W, index: &Index, hits: &[Hit]) -> io::Result<()> {
    for (i, hit) in hits.iter().enumerate() {
        let paper = &index.papers()[hit.row];
        line(
            out,
            &WireHit {
                rank: i + 1,
                id: paper.id.hex(),
                score: hit.score,
                headline: paper.headline(),
                text: &paper.text,
                sources: &paper.sources,
            },
        )?;
    }
    Ok(())
}

pub(super) fn paper<W: Write>(out: &mut W, index: &Index, row: usize) -> io::Result<()> {
    line(out, &WirePaper::new(&index.papers()[row]))
}

/// Records per dump file name, for `info`.
pub(super) fn source_counts(index: &Index) -> BTreeMap<&str, usize> {
    let mut counts = BTreeMap::new();
    for paper in index.papers() {
        let mut seen: Vec<&str> = paper.sources.iter().map(|s| s.file.as_str()).collect();
        seen.dedup();
        for file in seen {
            *counts.entry(file).or_insert(0) += 1;
        }
    }
    counts
}

pub(super) fn info<W: Write>(out: &mut W, index: &Index, extra: &InfoExtra) -> io::Result<()> {
    let m = index.manifest();
    line(
        out,
        &WireInfo {
            path: index.dir().display().to_string(),
            records: m.records,
            model: &m.model,
            weights_sha256: &m.weights_sha256,
            dimension: m.dimension,
            max_seq_length: m.max_seq_length,
            format_version: m.format_version,
            generation: m.generation,
            search: extra.strategy.name(),
            graph_threshold: GRAPH_THRESHOLD,
            size_bytes: extra.size_bytes,
            sources: source_counts(index)
                .into_iter()
                .map(|(file, records)| WireSource {
                    file: file.to_string(),
                    records,
                })
                .collect(),
        },
    )
}

pub(super) fn report<W: Write>(out: &mut W, r: &UpdateReport, dir: &Path) -> io::Result<()> {
    line(
        out,
        &WireReport {
            index: dir.display().to_string(),
            files: r.files,
            skipped: r.skipped,
            paragraphs: r.paragraphs,
            unique: r.unique,
            added: r.added,
            already_present: r.already_present,
            new_sources: r.new_sources,
            removed: r.removed,
            records: r.records,
        },
    )
}

pub(super) fn embeddings<W: Write>(
    out: &mut W,
    texts: &[String],
    vectors: &[Vec<f32>],
) -> io::Result<()> {
    for (text, embedding) in texts.iter().zip(vectors) {
        line(out, &WireEmbedding { text, embedding })?;
    }
    Ok(())
}
