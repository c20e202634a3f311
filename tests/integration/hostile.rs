//! Hostile and unlucky inputs found by an adversarial run: a rebuild that
//! would keep nothing, vectors at the edge of f32, exports read by the next
//! program, a stdin that never ends, a full disk, a writer lock held, and a
//! watched folder with a cut-off download or links that loop.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::safety::{bounded, tmpfs, umount};
use crate::util::{papers, papers_in, sample_data, small_index_copy};

fn records(index: &Path) -> u64 {
    let info: Value = papers_in(index, &["info", "--json"]).ok().json();
    info["records"].as_u64().unwrap()
}

/// `field` of every record `papers list` prints.
fn listed(index: &Path, field: &str) -> Vec<String> {
    let list: Vec<Value> = papers_in(index, &["list", "--json"]).ok().json_lines();
    list.iter()
        .map(|p| p[field].as_str().unwrap().to_string())
        .collect()
}

fn ids(index: &Path) -> Vec<String> {
    listed(index, "id")
}

#[test]
fn a_rebuild_whose_records_were_all_removed_is_refused() {
    let copy = small_index_copy();
    let index = copy.path();
    let first = sample_data().join("daily-2024-05-01.txt");
    let second = sample_data().join("daily-2024-05-02.txt");
    // Vectors of the first dump, for the --embeddings path.
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("first.jsonl");
    let lines: Vec<String> = std::fs::read_to_string(&first)
        .unwrap()
        .split("\n\n")
        .skip(1)
        .map(|p| serde_json::json!({ "abstract": p.trim() }).to_string())
        .collect();
    std::fs::write(&jsonl, lines.join("\n")).unwrap();
    let embedded = papers_in(index, &["embed", "--records", jsonl.to_str().unwrap()]).ok();
    let with_vectors = dir.path().join("first-vectors.jsonl");
    std::fs::write(&with_vectors, &embedded.stdout).unwrap();

    papers_in(index, &["index", second.to_str().unwrap()]).ok();
    let removed: Vec<String> = {
        let list: Vec<Value> = papers_in(index, &["list", "--json"]).ok().json_lines();
        list.iter()
            .filter(|p| p["sources"][0]["file"] == "daily-2024-05-01.txt")
            .map(|p| p["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(removed.len(), 10);
    let mut args = vec!["remove"];
    args.extend(removed.iter().map(String::as_str));
    papers_in(index, &args).ok();
    let kept = records(index);
    assert!(kept > 0);

    papers_in(index, &["index", "--rebuild", first.to_str().unwrap()]).fails(
        1,
        &["removed earlier", "daily-2024-05-01.txt", "not changed"],
    );
    assert_eq!(records(index), kept, "the index was replaced");
    papers_in(
        index,
        &[
            "index",
            "--rebuild",
            "--no-verify",
            "--embeddings",
            with_vectors.to_str().unwrap(),
        ],
    )
    .fails(1, &["removed earlier", "first-vectors.jsonl"]);
    assert_eq!(records(index), kept, "the index was replaced");
    papers_in(index, &["check"]).ok();
}

/// A JSON Lines record with `vector` as its embedding.
fn record(text: &str, vector: &str) -> String {
    format!(
        "{{\"abstract\": {}, \"embedding\": {vector}}}\n",
        Value::from(text)
    )
}

#[test]
fn vectors_at_the_edge_of_f32_are_checked_or_normalised_never_stored_broken() {
    let copy = small_index_copy();
    let index = copy.path();
    let dir = tempfile::tempdir().unwrap();
    let same = |x: &str| format!("[{}]", vec![x; 384].join(", "));
    let mut one_over = vec!["0.05"; 384];
    one_over[7] = "1e39";
    let one_over = format!("[{}]", one_over.join(", "));
    for (name, vector, fails) in [
        (
            "overflow",
            one_over,
            Some("value 8 of the embedding is inf"),
        ),
        ("zeros", same("0"), Some("all zeros")),
        ("huge", same("1e30"), None),
        ("denormal", same("1e-40"), None),
    ] {
        let path = dir.path().join(format!("{name}.jsonl"));
        let text = format!("A record whose vector is {name}, imported as it came.");
        std::fs::write(&path, record(&text, &vector)).unwrap();
        let before = records(index);
        let run = papers_in(
            index,
            &[
                "index",
                "--no-verify",
                "--embeddings",
                path.to_str().unwrap(),
            ],
        );
        match fails {
            Some(reason) => {
                run.fails(1, &[&format!("{name}.jsonl"), "line 1", reason]);
                assert_eq!(records(index), before);
            }
            None => {
                run.ok();
                assert_eq!(records(index), before + 1);
                // Stored at unit length: it finds itself first, at 1.
                let id = papers_in(index, &["search", "--json", "--mode", "lexical", &text])
                    .ok()
                    .json_lines::<Value>()[0]["id"]
                    .as_str()
                    .unwrap()
                    .to_string();
                let hits: Vec<Value> = papers_in(index, &["similar", "--json", &id])
                    .ok()
                    .json_lines();
                for hit in &hits {
                    assert!(hit["score"].as_f64().unwrap().abs() <= 1.001, "{hit}");
                }
            }
        }
        // Every search and dupes still answer, and check agrees.
        papers_in(index, &["search", "--json", "rotary position encoding"]).ok();
        papers_in(index, &["dupes", "--json"]).ok();
        papers_in(index, &["check"]).ok();
    }
}

#[test]
fn export_caps_its_stdin_and_cuts_a_long_id() {
    let copy = small_index_copy();
    let index = copy.path().to_str().unwrap();
    let zero = Stdio::from(std::fs::File::open("/dev/zero").unwrap());
    let (code, err) = bounded(&["--index", index, "export"], zero, 60);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("standard input") && err.contains("over the limit"),
        "{err}"
    );
    let long = "a".repeat(100_000);
    let run = papers_in(copy.path(), &["export", &long]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.len() < 400,
        "{} bytes of error",
        run.stderr.len()
    );
    assert!(run.stderr.contains("more characters"), "{}", run.stderr);
}

#[test]
fn exports_stay_text_for_the_program_that_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("i");
    let input = dir.path().join("hostile.json");
    let papers_json = serde_json::json!([
        {"title": "=HYPERLINK(\"http://evil.example\",\"x\")", "summary":
         "<script>alert(1)</script> <img src=x onerror=alert(2)> see [here](javascript:alert(3)) and more text about attention heads.",
         "authors": ["@Mallory"], "published": "2024-05-01T00:00:00Z", "id": "2405.00001"},
        {"title": "Unbalanced } braces { in a title", "summary":
         "A second abstract with a stray brace } that must not break the file, and a backslash \\} too."},
        {"title": "A plain third paper", "summary": "A third abstract, about nothing hostile at all."}
    ]);
    std::fs::write(&input, papers_json.to_string()).unwrap();
    papers_in(&index, &["index", input.to_str().unwrap()]).ok();
    let all = ids(&index);
    assert_eq!(all.len(), 3);
    let export = |format: &str| {
        let mut args = vec!["export", "--format", format];
        args.extend(all.iter().map(String::as_str));
        papers_in(&index, &args).ok().stdout
    };
    let csv = export("csv");
    assert!(csv.contains("\"'=HYPERLINK("), "{csv}");
    assert!(csv.contains("'@Mallory"), "{csv}");
    for line in csv.lines().skip(1) {
        for cell in line.split(',') {
            let cell = cell.trim_start_matches('"');
            assert!(!cell.starts_with(['=', '+', '@']), "{line}");
        }
    }
    let markdown = export("markdown");
    assert!(
        !markdown.contains("<script") && !markdown.contains("<img"),
        "{markdown}"
    );
    assert!(!markdown.contains("](javascript:"), "{markdown}");
    assert!(
        markdown.contains("](https://arxiv.org/abs/2405.00001)"),
        "{markdown}"
    );
    let bibtex = export("bibtex");
    assert_eq!(bibtex.matches("\n@misc{").count() + 1, 3, "{bibtex}");
    for entry in bibtex.split("\n@").filter(|e| !e.trim().is_empty()) {
        let mut depth = 0i64;
        for c in entry.chars() {
            depth += match c {
                '{' => 1,
                '}' => -1,
                _ => 0,
            };
            assert!(depth >= 0, "{entry}");
        }
        assert_eq!(depth, 0, "{entry}");
    }
    assert!(
        !bibtex.contains("\\}") && !bibtex.contains("\\{"),
        "{bibtex}"
    );

    // The feed's digests: the plain paper liked, the hostile ones ranked.
    let plain = papers_in(
        &index,
        &["search", "--json", "--mode", "lexical", "plain third"],
    )
    .ok()
    .json_lines::<Value>()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    papers_in(&index, &["tag", "reading", &plain]).ok();
    let feed = |format: &str| {
        let args = [
            "feed",
            "reading",
            "--since",
            "2000-01-01",
            "--format",
            format,
        ];
        papers_in(&index, &args).ok().stdout
    };
    let digest = feed("markdown");
    assert!(
        digest.contains("alert"),
        "the hostile paper is in the digest: {digest}"
    );
    assert!(
        !digest.contains("<script") && !digest.contains("<img"),
        "{digest}"
    );
    assert!(!digest.contains("](javascript:"), "{digest}");
    let rss = feed("rss");
    assert!(rss.contains("&amp;lt;script&amp;gt;"), "{rss}");
    assert!(!rss.contains("&lt;script"), "{rss}");
}

#[test]
fn reads_work_on_a_full_disk_and_writes_say_so() {
    crate::util::ensure_model();
    let Some((_dir, mount)) = tmpfs("8m") else {
        return;
    };
    let copy = small_index_copy();
    let index = mount.join("i");
    crate::util::copy_dir(copy.path(), &index);
    // Fill the rest of the disk.
    let mut fill = std::fs::File::create(mount.join("fill")).unwrap();
    let block = vec![0u8; 1 << 16];
    while fill.write_all(&block).is_ok() {}
    drop(fill);
    let info = papers_in(&index, &["info", "--json"]);
    let search = papers_in(&index, &["search", "--json", "rotary position encoding"]);
    let check = papers_in(&index, &["check"]);
    let write = papers_in(
        &index,
        &[
            "index",
            sample_data().join("daily-2024-05-02.txt").to_str().unwrap(),
        ],
    );
    umount(&mount);
    info.ok();
    assert!(!search.ok().json_lines::<Value>().is_empty());
    check.ok();
    write.fails(1, &["disk full"]);
}

#[test]
fn tag_says_that_it_waits_for_the_writer_lock() {
    let copy = small_index_copy();
    let index = copy.path();
    let id = ids(index).remove(0);
    let mut holder = Command::new("flock")
        .arg(index.join("lock"))
        .args(["sleep", "2"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let run = papers_in(index, &["tag", "attention", &id]);
    let _ = holder.wait();
    let run = run.ok();
    assert!(
        run.stderr.contains("waiting for another papers command"),
        "{}",
        run.stderr
    );
}

/// `papers watch` on `folder` into `index`, fast settings.
fn watch(index: &Path, folder: &Path) -> std::process::Child {
    papers()
        .env("PAPERS_INDEX", index)
        .args(["watch", "--settle", "0.3", "--every", "0.1"])
        .arg(folder)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits until `done` holds (up to 120 s).
fn until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(120), "{what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn texts(index: &Path) -> Vec<String> {
    listed(index, "text")
}

#[test]
fn watch_waits_for_a_cut_off_download_and_drops_an_older_version() {
    crate::util::ensure_model();
    let dir = tempfile::tempdir().unwrap();
    let (index, folder) = (dir.path().join("i"), dir.path().join("in"));
    std::fs::create_dir(&folder).unwrap();
    let mut child = watch(&index, &folder);
    let full = "Daily Papers\n\nWe study length generalization of rotary position encodings in decoder-only transformers.\n\nWe propose a sparse attention kernel that halves the memory of long-context inference.";
    let cut = &full[..full.len() - 30];
    let file = folder.join("today.txt");
    // Paused longer than the settle time, cut off mid-word: not taken.
    std::fs::write(&file, cut).unwrap();
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        !index.join("manifest.json").exists(),
        "a cut-off download was indexed"
    );
    std::fs::write(&file, full).unwrap();
    until("the finished dump was not indexed", || {
        index.join("manifest.json").exists() && texts(&index).len() == 2
    });
    // A file indexed before that changes: its older records go.
    let revised = full.replace("halves the memory", "cuts the memory by 60%");
    std::fs::write(&file, &revised).unwrap();
    until("the revised dump was not indexed", || {
        texts(&index).iter().any(|t| t.contains("by 60%"))
    });
    until("the older version stayed", || texts(&index).len() == 2);
    let _ = child.kill();
    let _ = child.wait();
    assert!(texts(&index)
        .iter()
        .all(|t| !t.contains("halves the memory")));
}

#[test]
fn watch_follows_links_to_a_folder_once() {
    crate::util::ensure_model();
    let dir = tempfile::tempdir().unwrap();
    let (index, folder) = (dir.path().join("i"), dir.path().join("in"));
    std::fs::create_dir(&folder).unwrap();
    std::os::unix::fs::symlink(".", folder.join("loop-a")).unwrap();
    std::os::unix::fs::symlink(".", folder.join("loop-b")).unwrap();
    let dump: PathBuf = sample_data().join("daily-2024-05-01.txt");
    std::fs::copy(&dump, folder.join("daily-2024-05-01.txt")).unwrap();
    let mut child = watch(&index, &folder);
    until("the dump beside two loops was not indexed", || {
        index.join("manifest.json").exists() && texts(&index).len() == 10
    });
    let _ = child.kill();
    let _ = child.wait();
    let list: Vec<Value> = papers_in(&index, &["list", "--json"]).ok().json_lines();
    for paper in &list {
        assert_eq!(paper["sources"].as_array().unwrap().len(), 1, "{paper}");
    }
}
