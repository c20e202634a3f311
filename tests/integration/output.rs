//! Human output (golden file), JSON piping and closed pipes.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

use crate::util::{papers, papers_in, sample_index, sample_texts, Hit};

/// Compares `actual` with the golden file, or rewrites it when
/// `PAPERS_BLESS=1` is set.
fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("PAPERS_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        actual, expected,
        "golden {name} differs; rerun with PAPERS_BLESS=1 if intended"
    );
}

/// The id of the sample abstract about fusing sparse and dense
/// retrievers, found by search so no test depends on a hard-coded id.
fn anchor() -> String {
    crate::util::top_id(
        sample_index(),
        &["reciprocal rank fusion of sparse and dense retrievers"],
    )
}

/// The golden table is made from the sample dumps written for this repo
/// (the seeds' text stays out of it).
#[test]
fn similar_table_matches_the_golden_file() {
    let index = crate::util::small_index();
    let hits: Vec<Hit> = papers_in(
        index,
        &[
            "search",
            "--json",
            "--mode",
            "semantic",
            "-k",
            "1",
            "--min-score",
            "0",
            "rotary position scaling",
        ],
    )
    .ok()
    .json_lines();
    let mut cmd = papers();
    cmd.env("PAPERS_INDEX", index).env("COLUMNS", "120");
    let out = crate::util::run(cmd, &["similar", "--table", "-k", "5", &hits[0].id]).ok();
    assert!(!out.stdout.contains('\x1b'), "no colour when piped");
    // A header, five rows (titles wrapped past 120 columns), the legend.
    let rows = out
        .stdout
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.parse::<usize>().is_ok())
        })
        .count();
    assert_eq!(rows, 5, "{}", out.stdout);
    assert!(out.stdout.starts_with("#  SCORE  ID"), "{}", out.stdout);
    golden("similar.txt", &out.stdout);
}

#[test]
fn info_table_lists_records_model_and_sources() {
    let out = papers_in(sample_index(), &["info", "--table"]).ok();
    let records = format!("records:    {}", sample_texts().len());
    assert!(out.stdout.contains(&records), "{}", out.stdout);
    assert!(out
        .stdout
        .contains("sentence-transformers/all-MiniLM-L6-v2"));
    assert!(out.stdout.contains("search:     exact"));
}

#[test]
fn piped_output_is_json_lines_by_default() {
    let out = papers_in(sample_index(), &["similar", "-k", "3", &anchor()]).ok();
    let hits: Vec<Hit> = out.json_lines();
    assert_eq!(hits.len(), 3);
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    // The seeds' output (hundreds of KB) outgrows a pipe's buffer, so the
    // writer really meets the closed pipe; the samples' would not.
    crate::needs!(Seeds);
    let seeds = &crate::util::seed_index().dir;
    let anchor = crate::util::top_id(seeds, &["neural text degeneration"]);
    let (first, out) = first_line_then_close(&["similar", "-k", "577", &anchor]);
    assert!(first.contains("\"rank\":1"));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// Runs `papers ARGS` on the seed index, reads one line of its output and
/// closes the pipe, so the rest of the output meets a closed pipe.
fn first_line_then_close(args: &[&str]) -> (String, std::process::Output) {
    let mut child = papers()
        .env("PAPERS_INDEX", &crate::util::seed_index().dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    (first, child.wait_with_output().unwrap())
}

/// `list` writes while it reads the records: a closed pipe there is not
/// an error either (nor damage).
#[test]
fn a_closed_pipe_under_list_is_not_an_error() {
    crate::needs!(Seeds);
    let (first, out) = first_line_then_close(&["list", "--json"]);
    assert!(first.contains("\"id\""));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// `list` prints every record once, with the same ids `show` resolves.
#[test]
fn list_prints_every_record_once() {
    #[derive(serde::Deserialize)]
    struct Listed {
        id: String,
        text: String,
    }
    let texts = sample_texts();
    let listed: Vec<Listed> = papers_in(sample_index(), &["list"]).ok().json_lines();
    assert_eq!(listed.len(), texts.len());
    let mut ids: Vec<&str> = listed.iter().map(|p| p.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), texts.len(), "ids are unique");
    let mut listed_texts: Vec<&str> = listed.iter().map(|p| p.text.as_str()).collect();
    let mut expected: Vec<&str> = texts.iter().map(String::as_str).collect();
    listed_texts.sort_unstable();
    expected.sort_unstable();
    assert_eq!(listed_texts, expected, "every sample abstract, once");
    let last = listed.last().unwrap();
    let shown: Listed = papers_in(sample_index(), &["show", "--json", &last.id[..8]])
        .ok()
        .json_lines()
        .remove(0);
    assert_eq!(shown.text, last.text);
}
