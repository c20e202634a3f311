//! Format 3's storage: appends that survive SIGKILL at any point on an
//! index of thousands of records, and the upgrade of a format-2 index
//! without embedding anything again.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use crate::util::{papers, papers_in, small_index_copy, Report};

/// A JSON Lines `--embeddings` file of `n` records numbered from `first`:
/// texts made of words from a fixed vocabulary, vectors pseudo-random unit
/// vectors (so `--no-verify`).
fn synthetic(path: &Path, first: usize, n: usize) {
    const WORDS: [&str; 16] = [
        "sparse",
        "attention",
        "graph",
        "diffusion",
        "robot",
        "protein",
        "retrieval",
        "speech",
        "quantum",
        "policy",
        "vision",
        "language",
        "kernel",
        "tensor",
        "causal",
        "federated",
    ];
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ first as u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for i in first..first + n {
        let words: Vec<&str> = (0..24).map(|_| WORDS[(next() % 16) as usize]).collect();
        let mut v: Vec<f32> = (0..384)
            .map(|_| (next() % 2001) as f32 / 1000.0 - 1.0)
            .collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        let record = serde_json::json!({
            "id": format!("synthetic-{i}"),
            "abstract": format!("Record {i}: {}.", words.join(" ")),
            "embedding": v,
        });
        writeln!(out, "{record}").unwrap();
    }
}

fn records(index: &Path) -> usize {
    let info: serde_json::Value = papers_in(index, &["info", "--json"]).ok().json();
    info["records"].as_u64().unwrap() as usize
}

fn append_args(file: &Path) -> Vec<String> {
    ["index", "--json", "--no-verify", "--embeddings"]
        .iter()
        .map(|s| s.to_string())
        .chain([file.display().to_string()])
        .collect()
}

#[test]
fn sigkill_during_an_append_to_a_large_index_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base");
    let (first, more) = (
        dir.path().join("first.jsonl"),
        dir.path().join("more.jsonl"),
    );
    synthetic(&first, 0, 6000);
    synthetic(&more, 6000, 6000);
    let args = append_args(&first);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    papers_in(&base, &args).ok();
    assert_eq!(records(&base), 6000);

    // How long a whole append takes, to spread the kills over it.
    let timed = tempfile::tempdir().unwrap();
    crate::util::copy_dir(&base, timed.path());
    let more_args = append_args(&more);
    let more_args: Vec<&str> = more_args.iter().map(String::as_str).collect();
    let started = Instant::now();
    let report: Report = papers_in(timed.path(), &more_args).ok().json();
    let whole = started.elapsed();
    assert_eq!((report.added, report.records), (6000, 12000));

    let mut outcomes = Vec::new();
    for share in [0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99] {
        let copy = tempfile::tempdir().unwrap();
        crate::util::copy_dir(&base, copy.path());
        let mut child = papers()
            .env("PAPERS_INDEX", copy.path())
            .args(&more_args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(whole.mul_f64(share));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // Before or after the commit, never in between, and never damaged.
        let count = records(copy.path());
        assert!(count == 6000 || count == 12000, "{share}: {count} records");
        outcomes.push(count);
        papers_in(copy.path(), &["check"]).ok();
        let shown: serde_json::Value =
            papers_in(copy.path(), &["show", "--json", "synthetic-5999"])
                .ok()
                .json();
        assert!(shown["text"].as_str().unwrap().starts_with("Record 5999:"));
        // The next run finishes the job over whatever the killed one left.
        let report: Report = papers_in(copy.path(), &more_args).ok().json();
        assert_eq!(report.records, 12000, "{share}");
        papers_in(copy.path(), &["check"]).ok();
        let hits: Vec<serde_json::Value> = papers_in(
            copy.path(),
            &["similar", "--json", "-k", "3", "synthetic-11999"],
        )
        .ok()
        .json_lines();
        assert_eq!(hits.len(), 3);
    }
    println!("records after each kill: {outcomes:?} (whole append {whole:?})");
}

/// Writes `index` (format 3) out as the format-2 layout described in the
/// format-2 docs: records.json, vectors.f32 and windows.bin in a generation
/// folder named by a manifest listing their sizes and SHA-256s.
fn write_format_2(from: &Path, to: &Path) {
    write_format_2_edited(from, to, |_| {});
}

/// [`write_format_2`] with the records edited before they are sealed.
fn write_format_2_edited(
    from: &Path,
    to: &Path,
    edit: impl FnOnce(&mut [(usize, papers::paper::Paper)]),
) {
    use sha2::{Digest, Sha256};
    let index = papers::index::Index::open(from).unwrap();
    let mut papers = index.papers().unwrap();
    papers.sort_by_key(|(_, p)| p.id);
    edit(&mut papers);
    let records = serde_json::to_vec(&papers.iter().map(|(_, p)| p).collect::<Vec<_>>()).unwrap();
    let vectors: Vec<u8> = papers
        .iter()
        .flat_map(|(row, _)| index.vector(*row))
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let mut windows = b"PWIN".to_vec();
    windows.extend_from_slice(&0u32.to_le_bytes());
    let data = to.join("gen-000003");
    std::fs::create_dir_all(&data).unwrap();
    let mut files = serde_json::Map::new();
    for (name, bytes) in [
        ("records.json", &records),
        ("vectors.f32", &vectors),
        ("windows.bin", &windows),
    ] {
        std::fs::write(data.join(name), bytes).unwrap();
        let sha: String = Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        files.insert(
            name.into(),
            serde_json::json!({"bytes": bytes.len(), "sha256": sha}),
        );
    }
    let m = index.manifest();
    let manifest = serde_json::json!({
        "format_version": 2, "model": m.model, "weights_sha256": m.weights_sha256,
        "dimension": m.dimension, "max_seq_length": m.max_seq_length,
        "records": papers.len(), "generation": 3, "data_dir": "gen-000003",
        "files": files, "graph": "graph", "written_by": "papers 0.1.0", "written_at": 0,
    });
    std::fs::write(to.join("manifest.json"), manifest.to_string()).unwrap();
}

#[test]
fn a_format_2_index_is_upgraded_without_embedding() {
    let small = small_index_copy();
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old");
    write_format_2(small.path(), &old);
    papers_in(&old, &["info"]).fails(1, &["format version 2", "papers upgrade"]);
    papers_in(&old, &["search", "robots"]).fails(1, &["papers upgrade"]);

    let run = papers_in(&old, &["upgrade"]).ok();
    assert!(
        run.stderr.contains("upgraded to index format 3"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("model "),
        "no model loaded: {}",
        run.stderr
    );
    assert!(!old.join("gen-000003").exists(), "the old folder is gone");
    assert_eq!(records(&old), 10);
    papers_in(&old, &["check"]).ok();
    // The same neighbours as the index it was made from.
    let list: Vec<serde_json::Value> = papers_in(&old, &["list", "--json"]).ok().json_lines();
    let id = list[0]["id"].as_str().unwrap();
    let ids = |index: &Path| -> Vec<String> {
        papers_in(index, &["similar", "--json", id])
            .ok()
            .json_lines::<serde_json::Value>()
            .iter()
            .map(|h| h["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(&old), ids(small.path()));
    papers_in(&old, &["upgrade"]).ok();

    // `papers index` upgrades on its own before adding.
    let again = dir.path().join("again");
    write_format_2(small.path(), &again);
    let report: Report = papers_in(
        &again,
        &[
            "index",
            "--json",
            &crate::util::sample_data().display().to_string(),
        ],
    )
    .ok()
    .json();
    assert_eq!((report.added, report.records), (17, 27));
}

/// Appends merge lexical segments; the BM25 scores they give are those of
/// an index built in one go over the same records.
#[test]
fn appended_segments_score_as_one_build_does() {
    crate::util::ensure_model();
    let dir = tempfile::tempdir().unwrap();
    let (grown, whole) = (dir.path().join("grown"), dir.path().join("whole"));
    let data = crate::util::sample_data();
    let mut files: Vec<_> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert!(files.len() >= 3);
    for file in &files {
        papers_in(&grown, &["index", file.to_str().unwrap()]).ok();
    }
    papers_in(&whole, &["index", data.to_str().unwrap()]).ok();
    papers_in(&grown, &["check"]).ok();
    let scores = |index: &Path, query: &str| -> Vec<(String, String)> {
        let mut hits: Vec<(String, String)> = papers_in(
            index,
            &[
                "search",
                "--json",
                "--mode",
                "lexical",
                "--min-score",
                "0",
                "-k",
                "100",
                query,
            ],
        )
        .ok()
        .json_lines::<serde_json::Value>()
        .iter()
        .map(|h| {
            let score = h["score"].as_f64().unwrap();
            (h["id"].as_str().unwrap().to_string(), format!("{score:.4}"))
        })
        .collect();
        hits.sort();
        hits
    };
    for query in [
        "language models",
        "robots learn from video",
        "diffusion images speech",
    ] {
        let got = scores(&grown, query);
        assert!(!got.is_empty(), "{query}");
        assert_eq!(got, scores(&whole, query), "{query}");
    }
}

#[test]
fn an_upgrade_of_records_that_do_not_match_their_ids_converts_nothing() {
    let small = small_index_copy();
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old");
    write_format_2_edited(small.path(), &old, |papers| {
        papers[0].1.text.push_str(" (edited)");
    });
    let manifest = std::fs::read(old.join("manifest.json")).unwrap();
    papers_in(&old, &["upgrade"]).fails(
        1,
        &[
            "records.json",
            "does not match its text",
            "nothing was converted",
        ],
    );
    assert!(
        old.join("gen-000003").join("records.json").is_file(),
        "the original stays"
    );
    assert_eq!(std::fs::read(old.join("manifest.json")).unwrap(), manifest);
    let data: Vec<_> = std::fs::read_dir(&old)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("data-"))
        .collect();
    assert!(data.is_empty(), "no half-made data folder");
}
