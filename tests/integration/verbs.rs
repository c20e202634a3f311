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
