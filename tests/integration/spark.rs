//! The distributed hand-off on a real engine: `bench/spark.sh` runs PySpark
//! in local mode, pipes records through `papers embed --records` and writes
//! Parquet with Spark's writer; papers indexes it. Needs Java and a Python
//! with pyspark: `PAPERS_SPARK_PYTHON` (which CI sets, and then it must
//! work); without it the test skips.

use crate::util::{papers_in, Hit};

#[test]
fn spark_writes_parquet_that_papers_indexes() {
    let Some(python) = std::env::var_os("PAPERS_SPARK_PYTHON") else {
        eprintln!("skipped: no PySpark (set PAPERS_SPARK_PYTHON to a python with pyspark)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("records.jsonl");
    let lines: Vec<String> = [
        (
            "2607.00001",
            "Bees Dance",
            "Honey bees encode the distance and direction of food in the waggle dance.",
        ),
        (
            "2607.00002",
            "Ant Trails",
            "Foraging ants lay pheromone trails that shorten as more ants use them.",
        ),
        (
            "2607.00003",
            "Rotary Scaling",
            "Rescaling rotary position embeddings lets a transformer read longer contexts.",
        ),
        (
            "2607.00004",
            "Sparse Attention",
            "Attending to a few blocks of keys makes long-context transformers cheaper.",
        ),
    ]
    .iter()
    .map(|(id, title, text)| {
        serde_json::json!({"id": id, "title": title, "abstract": text}).to_string()
    })
    .collect();
    std::fs::write(&records, lines.join("\n") + "\n").unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/spark.sh");
    let output = std::process::Command::new("bash")
        .args([script, records.to_str().unwrap(), "4"])
        .env("PAPERS_SPARK_PYTHON", python)
        .env("PAPERS_BIN", env!("CARGO_BIN_EXE_papers"))
        .env("CARGO_TARGET_DIR", dir.path())
        .env("PAPERS_CACHE_DIR", crate::util::cache_dir())
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("spark: 4 records in 2 part files"),
        "{stdout}"
    );
    let index = dir.path().join("spark").join("index");
    let info: serde_json::Value = papers_in(&index, &["info", "--json"]).ok().json();
    assert_eq!(info["records"], 4, "{info}");
    let hits: Vec<Hit> = papers_in(&index, &["search", "-k", "1", "waggle dance of honey bees"])
        .ok()
        .json_lines();
    assert_eq!(hits[0].arxiv_id.as_deref(), Some("2607.00001"));
}
