//! Parquet in and out: `papers embed --records --format parquet` writes
//! what `papers index --embeddings` reads, and a Parquet file that is
//! truncated, lacks the vector column or has vectors of the wrong length is
//! refused with one line naming the file, and nothing is written.

use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{Float32Builder, ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use parquet::arrow::ArrowWriter;

use crate::util::{papers, papers_in, run, Hit, Report};

const RECORDS: &str = concat!(
    r#"{"id": "2607.00001", "title": "Bees Dance", "abstract": "Honey bees encode the distance and direction of food in the waggle dance."}"#,
    "\n",
    r#"{"id": "2607.00002", "title": "Ant Trails", "abstract": "Foraging ants lay pheromone trails that shorten as more ants use them."}"#,
    "\n",
    r#"{"id": "2607.00003", "title": "Rotary Scaling", "abstract": "Rescaling rotary position embeddings lets a transformer read longer contexts."}"#,
    "\n",
);

/// A Parquet file of `abstract` texts, with an `embedding` column of
/// `width` floats per row unless `width` is 0.
fn write_parquet(path: &Path, width: usize) {
    let mut text = StringBuilder::new();
    let mut vectors = ListBuilder::new(Float32Builder::new());
    for i in 0..3 {
        text.append_value(format!("Abstract number {i} about bees."));
        for j in 0..width {
            vectors.values().append_value(1.0 + j as f32);
        }
        vectors.append(true);
    }
    let mut columns: Vec<(&str, ArrayRef)> = vec![("abstract", Arc::new(text.finish()))];
    if width > 0 {
        columns.push(("embedding", Arc::new(vectors.finish())));
    }
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut writer = ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

#[test]
fn parquet_from_embed_is_indexed_and_bad_parquet_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let records = dir.path().join("records.jsonl");
    std::fs::write(&records, RECORDS).unwrap();
    let file = dir.path().join("embedded.parquet");
    run(
        papers(),
        &[
            "embed",
            "--records",
            "--format",
            "parquet",
            "-o",
            file.to_str().unwrap(),
            records.to_str().unwrap(),
        ],
    )
    .ok();
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(&bytes[..4], b"PAR1");
    let report: Report = papers_in(
        &index,
        &["index", "--json", "--embeddings", file.to_str().unwrap()],
    )
    .ok()
    .json();
    assert_eq!((report.added, report.records), (3, 3));
    let hits: Vec<Hit> = papers_in(
        &index,
        &[
            "search",
            "--mode",
            "semantic",
            "-k",
            "1",
            "Ant Trails Foraging ants lay pheromone trails that shorten as more ants use them.",
        ],
    )
    .ok()
    .json_lines();
    assert_eq!(hits[0].arxiv_id.as_deref(), Some("2607.00002"));
    assert!(hits[0].semantic.as_ref().unwrap().score > 0.999);

    // Truncated: the footer is gone.
    let truncated = dir.path().join("truncated.parquet");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let no_column = dir.path().join("no-vectors.parquet");
    write_parquet(&no_column, 0);
    let short = dir.path().join("short.parquet");
    write_parquet(&short, 5);
    // Into a new folder: a failure leaves no folder behind.
    let fresh = dir.path().join("fresh-index");
    papers_in(
        &fresh,
        &[
            "index",
            "--no-verify",
            "--embeddings",
            truncated.to_str().unwrap(),
        ],
    )
    .fails(1, &["truncated.parquet"]);
    assert!(!fresh.exists(), "a failed import made {}", fresh.display());
    let before = std::fs::read(index.join("manifest.json")).unwrap();
    for (path, needles) in [
        (
            &truncated,
            vec!["truncated.parquet", "not a readable Parquet file"],
        ),
        (
            &no_column,
            vec!["no-vectors.parquet", "no `embedding` column", "abstract"],
        ),
        (&short, vec!["short.parquet", "line 1", "5 dimensions"]),
    ] {
        let failed = papers_in(
            &index,
            &[
                "index",
                "--no-verify",
                "--embeddings",
                path.to_str().unwrap(),
            ],
        )
        .fails(1, &needles);
        assert_eq!(failed.stderr.trim().lines().count(), 1, "{}", failed.stderr);
    }
    assert_eq!(std::fs::read(index.join("manifest.json")).unwrap(), before);
    let info: serde_json::Value = papers_in(&index, &["info", "--json"]).ok().json();
    assert_eq!(info["records"], 3);
    papers_in(&index, &["check"]).ok();
}
