//! The JSON contract. Field names are stable; new fields may be added.
//!
//! `search` and `similar` write JSON Lines, one hit per line, best first:
//!
//! | field      | type    | meaning                                                   |
//! |------------|---------|-----------------------------------------------------------|
//! | `rank`     | integer | 1-based position in the results                           |
//! | `id`       | string  | the record's full id, 16 hex digits                       |
//! | `score`    | number  | what the list is ordered by (below); cosine for `similar` |
//! | `headline` | string  | the title, else the first sentence, shortened             |
//! | `text`     | string  | the whole abstract                                        |
//! | `sources`  | array   | every place it was seen: `{file, path, paragraph}`        |
//!
//! Records from JSON inputs add `arxiv_id`, `title`, `authors`
//! (array of strings) and `published` (`YYYY-MM-DD`, when known) to hits
//! and to `show` and `list` objects; their `headline` is the title.
//!
//! `search` adds, on every hit:
//!
//! | field             | type            | meaning                                          |
//! |-------------------|-----------------|--------------------------------------------------|
//! | `mode`            | string          | `hybrid`, `semantic` or `lexical`                |
//! | `semantic`        | object or null  | `{rank, score}` in the cosine ranking; absent in lexical mode |
//! | `lexical`         | object or null  | `{rank, score}` in the BM25 ranking, null when no query word matched; absent in semantic mode |
//! | `evidence`        | string          | the sentence of the abstract closest to the query |
//! | `query_paragraph` | integer         | with `--file`: the query paragraph it matched best (1-based) |
//! | `match`           | string          | the query's verdict: `strong`, `weak` or `none` (the same on every hit) |
//! | `searched`        | string          | the query as searched, when a typo in it was corrected |
//!
//! `score` is on one scale in every search mode: relevance, 0 to 1, the
//! share of hits given that score that were relevant on three collections
//! (see `papers::search::relevance`); it depends on the query and the
//! paper alone, never on the other hits, and hits are ordered by it
//! (unless `--sort`). Every query gives its `-k` best; `match` says
//! whether the index holds anything about it (`none`: the closest papers,
//! none about it; `strong`: the best hit scored 0.5 or more; `weak`: the
//! rest). `--strict` gives no lines for a query whose verdict is `none`;
//! `--min-score S` keeps the hits scoring at least S. `semantic.score` is the cosine and
//! `lexical.score` the BM25 score. For `similar`, `score` is the cosine,
//! 0 for anything pointing away. See `papers::search::relevance`.
//!
//! `dupes` writes JSON Lines `{score, overlap, a, b}`: the cosine, the
//! share of word trigrams in common, and the two records as `show` prints
//! them; most similar pair first.
//!
//! Records from JSON Lines add, when the input had them, `source_id` (a
//! record id that is not an arXiv id, such as a BEIR `_id`) and
//! `categories` (array of strings); Hugging Face entries add `listed`
//! (`YYYY-MM-DD`, the day the daily list featured the paper; `published`
//! is the arXiv date) and, when the list gave them, `upvotes` (integer),
//! `github` (the code repository's URL), `keywords` (array of strings) and
//! `ai_summary` (one sentence written by Hugging Face's model). Where
//! cleaning changed an abstract (LaTeX), the
//! input's text is in `original`, and `text` is the cleaned abstract.
//!
//! `show` writes one object with `id`, `headline`, `text`, `sources`
//! (with `--raw`, `text` is the input's text, before cleaning);
//! `list` writes such an object per record, as JSON Lines, in the order
//! the records were added (oldest first). `remove --dry-run`, `--list` and
//! `--undo` write the records concerned the same way; `remove` itself
//! writes the `index --json` report below.
//! `info --json` writes one object: `path`, `records`, `model`,
//! `weights_sha256`, `dimension`, `max_seq_length`, `long_records` (records
//! whose text runs past the truncation point and has window vectors),
//! `windows` (how many window vectors), `format_version`,
//! `generation` (commits so far), `search` (`"exact"`, `"int8"` or
//! `"graph"`, the strategy `auto` picks), `quantized_from` (the record count
//! from which it picks `int8`; from 50,000 records each update stores HNSW
//! graphs, and `auto` walks them where they exist), `size_bytes`,
//! `sources` (`[{file, records}]`), and `bulk_encoder` (what `index` and
//! `embed` run on this machine's CPU by default: `"cpu batched bf16 on AMX
//! tiles ..."` where the processor has AMX, else `"cpu batched f32"`).
//! `index --json` writes one object: `index`, `files`, `skipped`,
//! `paragraphs`, `unique`, `added`, `already_present`, `new_sources`,
//! `removed`, `replaced` (records replaced by a new version of the same
//! arXiv paper), `bad_lines` (JSON Lines lines that were not records),
//! `kept_out` (abstracts of the input left out because `papers remove`
//! removed them), `records`.
//! `embed` writes JSON Lines `{text, embedding}`. `embed --records` writes
//! each input record as it was, every field kept, with `embedding` set:
//! the input of `papers index --embeddings`.
//! `mark --json` writes one object: `state` (`seen`, `read`, `saved` or
//! `new`), `changed` (papers whose state changed), `unchanged` (papers
//! named that were in that state already) and `inbox` (papers left
//! unmarked).
//! `model --json` writes one object: `model` (the id), `dir` (the model
//! folder), `weights` (the safetensors file) and `weights_sha256`.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use super::ModelInfo;
use crate::index::UpdateReport;
use crate::paper::{Meta, Paper, Source};
use crate::search::{Info, Mode, Pair, Ranked, Results, QUANTIZED_FROM};

/// One hit on the wire.
#[derive(Serialize)]
struct WireHit<'a> {
    rank: usize,
    id: String,
    score: f32,
    #[serde(flatten)]
    body: WireBody<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    semantic: Option<Option<WireRanked>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lexical: Option<Option<WireRanked>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    evidence: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    query_paragraph: Option<usize>,
    #[serde(rename = "match", skip_serializing_if = "Option::is_none")]
    verdict: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    searched: Option<&'a str>,
}

#[derive(Serialize)]
struct WireRanked {
    rank: usize,
    score: f32,
}

impl WireRanked {
    fn of(ranked: Option<Ranked>) -> Option<WireRanked> {
        ranked.map(|r| WireRanked {
            rank: r.rank,
            score: r.score,
        })
    }
}

#[derive(Serialize)]
struct WireDupe<'a> {
    score: f32,
    overlap: f32,
    a: WirePaper<'a>,
    b: WirePaper<'a>,
}

/// One record on the wire.
#[derive(Serialize)]
struct WirePaper<'a> {
    id: String,
    #[serde(flatten)]
    body: WireBody<'a>,
}

impl<'a> WirePaper<'a> {
    fn new(paper: &'a Paper) -> Self {
        WirePaper {
            id: paper.id.hex(),
            body: WireBody::new(paper),
        }
    }
}

/// What a record and a hit show of a paper after its id (and a hit's
/// score).
#[derive(Serialize)]
struct WireBody<'a> {
    headline: String,
    text: &'a str,
    sources: &'a [Source],
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    meta: Option<&'a Meta>,
}

impl<'a> WireBody<'a> {
    fn new(paper: &'a Paper) -> Self {
        WireBody {
            headline: paper.headline(),
            text: &paper.text,
            sources: &paper.sources,
            meta: paper.meta.as_ref(),
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
    long_records: usize,
    windows: usize,
    format_version: u32,
    generation: u64,
    search: &'static str,
    quantized_from: usize,
    size_bytes: u64,
    sources: Vec<WireSource>,
    bulk_encoder: &'a str,
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
    replaced: usize,
    bad_lines: usize,
    kept_out: usize,
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

/// The hits of `results` as the objects `search` and `similar` print.
pub fn hit_objects(results: &Results) -> Vec<String> {
    let notes = &results.notes;
    // Per-mode detail for text queries: null for a ranking that was used
    // but did not rank the record, absent for one not used.
    let used = |m: Mode| {
        notes
            .mode
            .is_some_and(|mode| mode == m || mode == Mode::Hybrid)
    };
    results
        .found
        .iter()
        .enumerate()
        .map(|(i, found)| {
            let (hit, paper) = (&found.hit, &found.paper);
            value(&WireHit {
                rank: i + 1,
                id: paper.id.hex(),
                score: hit.score,
                body: WireBody::new(paper),
                mode: notes.mode.map(Mode::name),
                semantic: used(Mode::Semantic).then(|| WireRanked::of(hit.semantic)),
                lexical: used(Mode::Lexical).then(|| WireRanked::of(hit.lexical)),
                evidence: found.evidence.as_deref(),
                query_paragraph: found.query_paragraph,
                verdict: notes.verdict.map(|v| v.name()),
                searched: notes.searched.as_deref(),
            })
        })
        .collect()
}

/// The pairs as the objects `dupes` prints.
pub fn pair_objects(pairs: &[Pair]) -> Vec<String> {
    pairs
        .iter()
        .map(|pair| {
            value(&WireDupe {
                score: pair.dupe.score,
                overlap: pair.dupe.overlap,
                a: WirePaper::new(&pair.a),
                b: WirePaper::new(&pair.b),
            })
        })
        .collect()
}

/// A record as `show` prints it; with `raw`, its text as the input gave it.
pub fn paper_object(paper: &Paper, raw: bool) -> String {
    let mut wire = WirePaper::new(paper);
    if raw {
        wire.body.text = paper.original_text();
    }
    value(&wire)
}

/// What `info --json` prints.
pub fn info_object(info: &Info) -> String {
    let m = &info.manifest;
    value(&WireInfo {
        path: info.path.display().to_string(),
        records: info.records,
        model: &m.model,
        weights_sha256: &m.weights_sha256,
        dimension: m.dimension,
        max_seq_length: m.max_seq_length,
        long_records: info.windows.0,
        windows: info.windows.1,
        format_version: m.format_version,
        generation: info.generation,
        search: info.strategy.name(),
        quantized_from: QUANTIZED_FROM,
        size_bytes: info.size_bytes,
        sources: info
            .sources
            .iter()
            .map(|(file, &records)| WireSource {
                file: file.to_string(),
                records,
            })
            .collect(),
        bulk_encoder: &info.bulk_encoder,
    })
}

/// A wire struct as JSON text, fields in declaration order (they hold
/// only strings, numbers and arrays of them, which always serialize).
fn value<T: Serialize>(wire: &T) -> String {
    serde_json::to_string(wire).unwrap_or_default()
}

/// Objects joined as a JSON array, for the HTTP API.
pub fn array(objects: &[String]) -> String {
    format!("[{}]", objects.join(","))
}

fn lines<W: Write>(out: &mut W, objects: Vec<String>) -> io::Result<()> {
    objects.iter().try_for_each(|o| writeln!(out, "{o}"))
}

pub(super) fn hits<W: Write>(out: &mut W, results: &Results) -> io::Result<()> {
    lines(out, hit_objects(results))
}

pub(super) fn dupes<W: Write>(out: &mut W, pairs: &[Pair]) -> io::Result<()> {
    lines(out, pair_objects(pairs))
}

pub(super) fn paper<W: Write>(out: &mut W, paper: &Paper, raw: bool) -> io::Result<()> {
    writeln!(out, "{}", paper_object(paper, raw))
}

pub(super) fn list_line<W: Write>(out: &mut W, paper: &Paper) -> io::Result<()> {
    line(out, &WirePaper::new(paper))
}

pub(super) fn info<W: Write>(out: &mut W, info: &Info) -> io::Result<()> {
    writeln!(out, "{}", info_object(info))
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
            replaced: r.replaced,
            bad_lines: r.bad_lines,
            kept_out: r.kept_out,
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

pub(super) fn records_with_embeddings<W: Write>(
    out: &mut W,
    records: Vec<serde_json::Map<String, serde_json::Value>>,
    vectors: &[Vec<f32>],
) -> io::Result<()> {
    for (mut record, embedding) in records.into_iter().zip(vectors) {
        let embedding = embedding
            .iter()
            .map(|&x| serde_json::Value::from(x))
            .collect();
        record.insert("embedding".into(), serde_json::Value::Array(embedding));
        line(out, &record)?;
    }
    Ok(())
}

pub(super) fn model<W: Write>(out: &mut W, info: &ModelInfo) -> io::Result<()> {
    #[derive(Serialize)]
    struct Wire<'a> {
        model: &'a str,
        dir: &'a Path,
        weights: &'a Path,
        weights_sha256: &'a str,
    }
    let wire = Wire {
        model: &info.files.model,
        dir: &info.files.dir,
        weights: &info.files.weights,
        weights_sha256: &info.weights_sha256,
    };
    writeln!(
        out,
        "{}",
        serde_json::to_string(&wire).map_err(io::Error::other)?
    )
}

/// `mark --json`'s object.
pub fn mark_object(change: &crate::feed::MarkChange) -> String {
    serde_json::json!({
        "state": change.state.name(),
        "changed": change.changed,
        "unchanged": change.unchanged,
        "inbox": change.inbox,
    })
    .to_string()
}
