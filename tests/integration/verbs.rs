//! The small verbs: `completions`, `man` and `open`, through the real
//! binary.

use std::path::Path;

use crate::util::{papers, papers_in, run, small_index};

#[test]
fn completions_are_valid_scripts_that_know_every_command() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let script = run(papers(), &["completions", shell]).ok().stdout;
        for word in ["feed", "untag", "min-score", "since"] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
        if shell == "bash" {
            let path = dir.path().join("papers.bash");
            std::fs::write(&path, &script).unwrap();
            let check = std::process::Command::new("bash")
                .arg("-n")
                .arg(&path)
                .output()
                .unwrap();
            assert!(
                check.status.success(),
                "{}",
                String::from_utf8_lossy(&check.stderr)
            );
        }
    }
    let bad = run(papers(), &["completions", "tcsh"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}

#[test]
fn the_man_page_documents_the_commands() {
    let page = run(papers(), &["man"]).ok().stdout;
    assert!(
        page.starts_with(".ie") || page.contains(".TH papers"),
        "{}",
        &page[..200]
    );
    for word in ["feed", "serve", "completions", "index"] {
        assert!(page.contains(word), "no {word}");
    }
}

#[test]
fn open_hands_the_arxiv_page_to_the_browser_or_prints_it() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let records = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/records.jsonl");
    papers_in(&index, &["index", records.to_str().unwrap()]).ok();

    // Piped, with no browser named: the URL, for a script.
    let printed = papers_in(&index, &["open", "2501.00002"]).ok();
    assert_eq!(printed.stdout.trim(), "https://arxiv.org/abs/2501.00002");

    // $BROWSER gets the URL.
    let seen = dir.path().join("seen");
    let browser = dir.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\necho \"$1\" > '{}'\n", seen.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = papers();
    cmd.env("PAPERS_INDEX", &index).env("BROWSER", &browser);
    let opened = run(cmd, &["open", "arXiv:2501.00001v2"]).ok();
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap().trim(),
        "https://arxiv.org/abs/2501.00001"
    );
    assert!(opened.stdout.is_empty(), "{}", opened.stdout);

    // A paper from a text dump has no page: one line that says so.
    let dump_paper = papers_in(small_index(), &["list", "--json"]).ok().stdout;
    let id: serde_json::Value = serde_json::from_str(dump_paper.lines().next().unwrap()).unwrap();
    papers_in(small_index(), &["open", id["id"].as_str().unwrap()])
        .fails(1, &["has no arXiv id", "papers show"]);
}

/// `papers ARGS` on `index` with `input` on stdin.
fn piped(index: &Path, args: &[&str], input: &str) -> crate::util::Run {
    let mut cmd = papers();
    cmd.env("PAPERS_INDEX", index);
    crate::util::run_with_stdin(cmd, args, input)
}

#[test]
fn export_writes_bibtex_csv_and_markdown_from_ids_or_a_result_list() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let records = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/records.jsonl");
    papers_in(&index, &["index", records.to_str().unwrap()]).ok();

    let bib = papers_in(
        &index,
        &["export", "2501.00001", "arXiv:2501.00002v2", "2501.00001"],
    )
    .ok()
    .stdout;
    assert_eq!(bib.matches("@misc{").count(), 2, "duplicates once: {bib}");
    assert!(bib.contains("@misc{lovelace2025rotary,"), "{bib}");
    assert!(bib.contains("author = {Ada Lovelace and Alan Turing and Grace Hopper}"));
    assert!(bib.contains("eprint = {2501.00001}") && bib.contains("archivePrefix = {arXiv}"));
    let depth = bib.chars().try_fold(0i32, |d, c| match c {
        '{' => Some(d + 1),
        '}' if d > 0 => Some(d - 1),
        '}' => None,
        _ => Some(d),
    });
    assert_eq!(depth, Some(0), "braces balance");

    // A result list piped in: every hit, in order.
    let hits = papers_in(
        &index,
        &["search", "--json", "rotary", "-k", "2", "--min-score", "0"],
    )
    .ok()
    .stdout;
    let csv = piped(&index, &["export", "--format", "csv"], &hits)
        .ok()
        .stdout;
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 3, "{csv}");
    assert!(rows[0].starts_with("id,arxiv_id,title,authors"));
    let first: serde_json::Value = serde_json::from_str(hits.lines().next().unwrap()).unwrap();
    assert!(rows[1].starts_with(first["id"].as_str().unwrap()), "{csv}");

    let markdown = piped(&index, &["export", "--format", "markdown"], "2501.00002\n")
        .ok()
        .stdout;
    let shown: serde_json::Value = papers_in(&index, &["show", "--json", "2501.00002"])
        .ok()
        .json();
    let short = &shown["id"].as_str().unwrap()[..8];
    assert_eq!(
        markdown.trim(),
        format!("- [Sparse and Dense Retrieval, Fused](https://arxiv.org/abs/2501.00002) · Edsger Dijkstra, Barbara Liskov · `{short}`")
    );

    papers_in(&index, &["export", "ffff0000"]).fails(1, &["unknown id `ffff0000`"]);
    papers_in(&index, &["export"]).fails(1, &["nothing to export"]);
    piped(&index, &["export"], "{\"score\": 1}\n").fails(1, &["line 1: a JSON object without"]);
}

#[test]
fn page_addresses_are_ids_and_impossible_arguments_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let records = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/records.jsonl");
    papers_in(&index, &["index", records.to_str().unwrap()]).ok();
    let id = |given: &str| -> String {
        let shown: serde_json::Value = papers_in(&index, &["show", "--json", given]).ok().json();
        shown["id"].as_str().unwrap().to_string()
    };
    let want = id("2501.00001");
    for pasted in [
        "https://arxiv.org/abs/2501.00001v1",
        "http://www.arxiv.org/abs/2501.00001",
        "arxiv.org/pdf/2501.00001.pdf",
        "https://huggingface.co/papers/2501.00001",
    ] {
        assert_eq!(id(pasted), want, "{pasted}");
    }
    let zero = papers_in(&index, &["search", "x", "-k", "0"]);
    assert_eq!(zero.code, 2);
    assert!(
        zero.stderr
            .contains("'0' is not a whole number of at least 1"),
        "{}",
        zero.stderr
    );
    papers_in(
        &index,
        &[
            "search",
            "x",
            "--since",
            "2026-08-01",
            "--until",
            "2026-07-01",
        ],
    )
    .fails(1, &["--since: 2026-08-01 is after --until 2026-07-01"]);
}

#[test]
fn a_removed_paper_stays_out_until_the_removal_is_undone() {
    let copy = crate::util::small_index_copy();
    let dir = copy.path();
    let dump = crate::util::sample_data().join("daily-2024-05-01.txt");
    let dump = dump.to_str().unwrap();
    let ids = |dir: &Path| -> Vec<String> {
        papers_in(dir, &["list", "--json"])
            .ok()
            .stdout
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    let before = ids(dir);
    let victim = before[3].clone();

    // A dry run names the paper and changes nothing.
    let dry = papers_in(dir, &["remove", "--dry-run", "--json", &victim[..8]]).ok();
    assert!(dry.stdout.contains(&victim), "{}", dry.stdout);
    assert_eq!(ids(dir), before);

    let report: crate::util::Report = papers_in(dir, &["remove", "--json", &victim[..8]])
        .ok()
        .json();
    assert_eq!((report.removed, report.records), (1, before.len() - 1));
    // Indexing the same dump again keeps it out, and says so.
    let again: crate::util::Report = papers_in(dir, &["index", "--json", dump]).ok().json();
    assert_eq!((again.added, again.kept_out), (0, 1));
    assert!(!ids(dir).contains(&victim));
    papers_in(dir, &["show", &victim[..8]]).fails(1, &["was removed", "--undo"]);
    // So does a rebuild.
    let rebuilt: crate::util::Report = papers_in(dir, &["index", "--json", "--rebuild", dump])
        .ok()
        .json();
    assert_eq!((rebuilt.kept_out, rebuilt.records), (1, before.len() - 1));
    let listed = papers_in(dir, &["remove", "--list", "--json"]).ok();
    assert!(listed.stdout.contains(&victim), "{}", listed.stdout);

    // Undone, the next index brings it back.
    papers_in(dir, &["remove", "--undo", "nothing0"]).fails(2, &["--undo", "nothing0"]);
    papers_in(dir, &["remove", "--undo", &victim[..8]]).ok();
    let back: crate::util::Report = papers_in(dir, &["index", "--json", dump]).ok().json();
    assert_eq!((back.added, back.kept_out), (1, 0));
    assert!(ids(dir).contains(&victim));
    assert!(papers_in(dir, &["remove", "--list", "--json"])
        .ok()
        .stdout
        .is_empty());
}
