//! Bad input, damaged indexes and mismatches: one line on stderr naming the
//! file or argument, a non-zero exit, never a panic.

use std::path::{Path, PathBuf};

use crate::util::{papers_in, sample_data, small_index_copy};

fn data(name: &str) -> String {
    sample_data().join(name).display().to_string()
}

#[test]
fn missing_input_path_is_named() {
    crate::util::ensure_model();
    let dir = tempfile::tempdir().unwrap();
    papers_in(&dir.path().join("i"), &["index", "/no/such/dump.txt"])
        .fails(1, &["/no/such/dump.txt", "no such file"]);
}

#[test]
fn a_directory_without_dumps_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("readme.md"), "hello\n").unwrap();
    let run = papers_in(
        &dir.path().join("i"),
        &["index", dir.path().to_str().unwrap()],
    );
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("nothing to index in"), "{}", run.stderr);
    assert!(!dir.path().join("i").join("manifest.json").exists());
}

#[test]
fn usage_errors_exit_2() {
    let copy = small_index_copy();
    papers_in(copy.path(), &["search", ""]).fails(2, &["query is empty"]);
    papers_in(copy.path(), &["search", "  \t "]).fails(2, &["query is empty"]);
    papers_in(copy.path(), &["similar", "-k", "0", "abcd"]).fails(2, &["--limit"]);
    papers_in(copy.path(), &["search", "--min-score", "x", "q"]).fails(2, &["--min-score"]);
    papers_in(copy.path(), &["frobnicate"]).fails(2, &[]);
}

#[test]
fn huge_limit_returns_everything_else() {
    let copy = small_index_copy();
    let hits: Vec<crate::util::Hit> = papers_in(
        copy.path(),
        &[
            "search",
            "--json",
            "-k",
            "18446744073709551615",
            "--min-score",
            "0",
            "diffusion",
        ],
    )
    .ok()
    .json_lines();
    assert_eq!(hits.len(), 10);
    let similar: Vec<crate::util::Hit> = papers_in(
        copy.path(),
        &["similar", "--json", "-k", "1000000", &hits[0].id],
    )
    .ok()
    .json_lines();
    assert_eq!(similar.len(), 9);
}

#[test]
fn a_query_of_100_kb_is_truncated_not_refused() {
    let copy = small_index_copy();
    let query = "speech recognition for accented English ".repeat(2600);
    assert!(query.len() > 100_000);
    let hits: Vec<crate::util::Hit> =
        papers_in(copy.path(), &["search", "--json", "-k", "1", &query])
            .ok()
            .json_lines();
    assert!(hits[0].text.contains("accented"));
}

/// A paragraph past the record cap is skipped with a warning naming the
/// flag; the rest of the dump is indexed.
#[test]
fn a_paragraph_of_1_mb_is_skipped_with_a_warning() {
    crate::util::ensure_model();
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("big.txt");
    let paragraph = "transformers attend to long sequences ".repeat(27_000);
    std::fs::write(
        &dump,
        format!("Daily Papers\n\n{paragraph}\n\nA short one.\n"),
    )
    .unwrap();
    let run = papers_in(
        &dir.path().join("i"),
        &["index", "--json", dump.to_str().unwrap()],
    )
    .ok();
    let report: crate::util::Report = run.json();
    assert_eq!((report.records, report.bad_lines), (1, 1));
    assert!(
        run.stderr.contains("line 3: a record of") && run.stderr.contains("--max-record-bytes"),
        "{}",
        run.stderr
    );
}

#[test]
fn no_index_yet_says_how_to_make_one() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing");
    papers_in(&missing, &["similar", "abcd"]).fails(1, &["no index here", "papers index"]);
    papers_in(&missing, &["info"]).fails(1, &["no index here"]);
}

/// Every non-empty file of the index's data folder but papers' marker,
/// and the manifest.
fn index_files(dir: &Path) -> Vec<PathBuf> {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let data = dir.join(manifest["data_dir"].as_str().unwrap());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| std::fs::metadata(p).unwrap().len() > 0)
        // The marker says who made the folder; nothing reads its bytes.
        .filter(|p| !p.ends_with(papers::index::write::ownership::DATA_MARKER))
        .collect();
    files.sort();
    files.push(dir.join("manifest.json"));
    files
}

#[test]
fn every_damaged_index_file_gives_a_one_line_error_naming_it() {
    let pristine = small_index_copy();
    let names: Vec<String> = index_files(pristine.path())
        .iter()
        .map(|f| {
            f.strip_prefix(pristine.path())
                .unwrap()
                .display()
                .to_string()
        })
        .collect();
    // papers.sqlite, vectors.f32, vectors.i8, vectors.b1, a lexical
    // segment, the manifest.
    assert_eq!(names.len(), 6, "{names:?}");
    type Damage = fn(&Path);
    let damages: [(&str, Damage); 3] = [
        ("truncate", |p| {
            let len = std::fs::metadata(p).unwrap().len();
            std::fs::OpenOptions::new()
                .write(true)
                .open(p)
                .unwrap()
                .set_len(len / 2)
                .unwrap();
        }),
        ("zero", |p| {
            let len = std::fs::metadata(p).unwrap().len() as usize;
            std::fs::write(p, vec![0u8; len]).unwrap();
        }),
        ("garble", |p| {
            let mut bytes = std::fs::read(p).unwrap();
            let mid = bytes.len() / 2;
            let end = (mid + 16).min(bytes.len());
            for b in &mut bytes[mid..end] {
                *b = b.wrapping_add(0x55);
            }
            std::fs::write(p, bytes).unwrap();
        }),
    ];
    for name in &names {
        for (how, damage) in damages {
            let copy = tempfile::tempdir().unwrap();
            crate::util::copy_dir(pristine.path(), copy.path());
            damage(&copy.path().join(name));
            let file_name = Path::new(name).file_name().unwrap().to_str().unwrap();
            // SQLite pages keep slack space; bytes garbled there hold
            // nothing, and then nothing may have changed at all.
            if file_name == "papers.sqlite" && papers_in(copy.path(), &["check"]).code == 0 {
                assert_eq!(how, "garble");
                assert_eq!(
                    papers_in(copy.path(), &["list", "--json"]).ok().stdout,
                    papers_in(pristine.path(), &["list", "--json"]).ok().stdout
                );
                continue;
            }
            for args in [
                &["info"][..],
                &["similar", "--graph", "0000"],
                &["search", "robots"],
            ] {
                let run = papers_in(copy.path(), args);
                assert_eq!(run.code, 1, "{how} {name} {args:?}: {}", run.stderr);
                run.fails(1, &[file_name, "--rebuild"]);
            }
            // Rebuilding repairs it.
            papers_in(
                copy.path(),
                &["index", "--rebuild", &data("daily-2024-05-01.txt")],
            )
            .ok();
            papers_in(copy.path(), &["info"]).ok();
        }
    }
}

/// Edits the manifest and seals it again with a valid checksum, as a
/// writer that means it would.
fn edit_manifest(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = dir.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut manifest);
    manifest.as_object_mut().unwrap().remove("checksum");
    let checksum = papers::index::manifest::checksum_of(&manifest);
    manifest["checksum"] = checksum.into();
    std::fs::write(&path, serde_json::to_vec(&manifest).unwrap()).unwrap();
}

#[test]
fn an_edited_manifest_is_damage() {
    let copy = small_index_copy();
    let path = copy.path().join("manifest.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("\"dimension\": 384", "\"dimension\": 385"),
    )
    .unwrap();
    papers_in(copy.path(), &["info"]).fails(1, &["manifest.json", "checksum", "--rebuild"]);
}

#[test]
fn an_index_of_another_format_version_is_refused() {
    let copy = small_index_copy();
    edit_manifest(copy.path(), |m| m["format_version"] = 99.into());
    papers_in(copy.path(), &["info"]).fails(1, &["format version 99", "--rebuild"]);
    papers_in(copy.path(), &["index", &data("")]).fails(1, &["format version 99", "--rebuild"]);
}

/// The command between the backticks after `run ` in an error line.
fn hinted_command(stderr: &str) -> Vec<String> {
    let start = stderr.find("run `").expect("a command to run") + 5;
    let end = start + stderr[start..].find('`').unwrap();
    let words: Vec<String> = stderr[start..end]
        .split_whitespace()
        .map(String::from)
        .collect();
    assert_eq!(words[0], "papers");
    words[1..].to_vec()
}

#[test]
fn an_index_of_another_model_is_refused_with_hints_that_work() {
    let copy = small_index_copy();
    let run = papers_in(
        copy.path(),
        &["index", "--model", "someone/other-model", &data("")],
    )
    .fails(
        1,
        &[
            "built with sentence-transformers/all-MiniLM-L6-v2",
            "pass `--model sentence-transformers/all-MiniLM-L6-v2`",
            "--rebuild --model someone/other-model",
        ],
    );
    assert!(
        run.stderr.contains(&data("")),
        "the paths given: {}",
        run.stderr
    );
    // The first hint works: the index's model adds the other dumps.
    papers_in(
        copy.path(),
        &[
            "index",
            "--model",
            "sentence-transformers/all-MiniLM-L6-v2",
            &data(""),
        ],
    )
    .ok();

    edit_manifest(copy.path(), |m| m["weights_sha256"] = "0".repeat(64).into());
    let run = papers_in(copy.path(), &["search", "robots"]).fails(
        1,
        &[
            "built with",
            "000000000000",
            "model's files changed",
            "--rebuild",
        ],
    );
    let fresh = tempfile::tempdir().unwrap();
    let dump = fresh.path().join("new.txt");
    std::fs::write(
        &dump,
        "Daily Papers\n\nAn abstract the index has not seen.\n",
    )
    .unwrap();
    papers_in(copy.path(), &["index", dump.to_str().unwrap()])
        .fails(1, &["built with", "--rebuild"]);
    // The rebuild the search's hint names (the folder the records came
    // from) makes the index searchable again.
    let args = hinted_command(&run.stderr);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    crate::util::run(crate::util::papers(), &args).ok();
    papers_in(copy.path(), &["search", "robots"]).ok();
}

#[test]
fn a_dimension_that_disagrees_with_the_vectors_is_refused() {
    let copy = small_index_copy();
    edit_manifest(copy.path(), |m| m["dimension"] = 512.into());
    papers_in(copy.path(), &["info"]).fails(1, &["vectors.f32", "--rebuild"]);
}
