//! `papers index`: counts on the seeds, deduplication, incremental runs,
//! skipped files, rebuild, remove, concurrent writers, and killed runs.

use std::path::Path;
use std::time::Duration;

use crate::util::{
    papers, papers_in, sample_data, seed_index, seed_index_copy, seeds, small_index_copy, Report,
};

fn data(name: &str) -> String {
    sample_data().join(name).display().to_string()
}

#[derive(serde::Deserialize)]
struct Info {
    records: usize,
    model: String,
    dimension: usize,
    generation: u64,
    search: String,
    sources: Vec<InfoSource>,
}

#[derive(serde::Deserialize)]
struct InfoSource {
    file: String,
    records: usize,
}

fn info(dir: &Path) -> Info {
    papers_in(dir, &["info", "--json"]).ok().json()
}

#[test]
fn seeds_index_to_578_unique_records_from_4_files() {
    crate::needs!(Seeds);
    let seed = seed_index();
    let report: Report = seed.first_run.json();
    assert_eq!(
        (
            report.files,
            report.skipped,
            report.paragraphs,
            report.unique,
            report.added,
            report.records
        ),
        (4, 0, 683, 578, 578, 578)
    );
    assert!(
        seed.first_run.stderr.contains("578 records"),
        "{}",
        seed.first_run.stderr
    );
    let info = info(&seed.dir);
    assert_eq!(info.records, 578);
    assert_eq!(info.model, "sentence-transformers/all-MiniLM-L6-v2");
    assert_eq!(info.dimension, 384);
    assert_eq!(info.search, "exact");
    let files: Vec<&str> = info.sources.iter().map(|s| s.file.as_str()).collect();
    assert_eq!(files.len(), 4);
    assert!(files.iter().all(|f| f.ends_with(".txt")));
    // Duplicates across dumps: per-file counts add up to more than 578.
    assert!(info.sources.iter().map(|s| s.records).sum::<usize>() > 578);
}

#[test]
fn reindexing_the_seeds_embeds_nothing_and_writes_nothing() {
    crate::needs!(Seeds);
    let copy = seed_index_copy();
    let manifest = std::fs::read(copy.path().join("manifest.json")).unwrap();
    let seeds = seeds();
    let run = papers_in(copy.path(), &["index", "--json", seeds.to_str().unwrap()]).ok();
    let report: Report = run.json();
    assert_eq!(
        (report.added, report.already_present, report.records),
        (0, 578, 578)
    );
    // No model was needed, so none was resolved.
    assert!(!run.stderr.contains("model "), "{}", run.stderr);
    assert_eq!(
        std::fs::read(copy.path().join("manifest.json")).unwrap(),
        manifest
    );
}

#[test]
fn incremental_index_adds_only_new_abstracts_and_records_new_sources() {
    let copy = small_index_copy();
    let before = info(copy.path());
    assert_eq!(before.records, 10);
    let run = papers_in(copy.path(), &["index", "--json", &data("")]).ok();
    let report: Report = run.json();
    assert_eq!(
        (report.files, report.paragraphs, report.unique),
        (3, 28, 27)
    );
    assert_eq!(
        (report.added, report.already_present, report.records),
        (17, 10, 27)
    );
    let after = info(copy.path());
    assert_eq!(after.records, 27);
    assert_eq!(after.generation, before.generation + 1);

    // The abstract that appears in two dumps lists both.
    let hits: Vec<crate::util::Hit> = papers_in(
        copy.path(),
        &[
            "search",
            "--json",
            "-k",
            "1",
            "NoPE causal mask position encoding",
        ],
    )
    .ok()
    .json_lines();
    let files: Vec<&str> = hits[0].sources.iter().map(|s| s.file.as_str()).collect();
    assert_eq!(files, ["daily-2024-05-01.txt", "daily-2024-05-02.txt"]);
}

#[test]
fn rebuild_starts_from_scratch() {
    let copy = small_index_copy();
    let report: Report = papers_in(
        copy.path(),
        &[
            "index",
            "--rebuild",
            "--json",
            &data("daily-2024-05-03.txt"),
        ],
    )
    .ok()
    .json();
    assert_eq!((report.added, report.records), (8, 8));
    assert_eq!(info(copy.path()).records, 8);
}

#[test]
fn files_that_are_not_dumps_are_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("in");
    std::fs::create_dir(&inputs).unwrap();
    std::fs::copy(data("daily-2024-05-01.txt"), inputs.join("a.txt")).unwrap();
    std::fs::write(inputs.join("b-notes.md"), "# not a dump\n\ntext\n").unwrap();
    std::fs::write(
        inputs.join("c-binary.bin"),
        [0x7f, b'E', b'L', b'F', 0, 0, 1],
    )
    .unwrap();
    std::fs::write(inputs.join("d-latin1.txt"), b"Daily Papers\n\ncaf\xe9\n").unwrap();
    std::fs::write(inputs.join("e-empty.txt"), b"").unwrap();
    let index = dir.path().join("index");
    let run = papers_in(&index, &["index", "--json", inputs.to_str().unwrap()]).ok();
    let report: Report = run.json();
    assert_eq!((report.files, report.skipped, report.records), (1, 4, 10));
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("warning"))
        .collect();
    assert_eq!(warnings.len(), 4, "{}", run.stderr);
    assert!(
        warnings[0].contains("b-notes.md") && warnings[0].contains("not an input papers reads")
    );
    assert!(warnings[1].contains("c-binary.bin") && warnings[1].contains("binary"));
    assert!(warnings[2].contains("d-latin1.txt") && warnings[2].contains("UTF-8"));
    assert!(warnings[3].contains("e-empty.txt") && warnings[3].contains("empty"));
}

/// A symlink back to a folder being walked is reported, not followed
/// (following it recursed until the stack overflowed).
#[cfg(unix)]
#[test]
fn a_symlink_loop_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("in");
    std::fs::create_dir_all(inputs.join("deeper")).unwrap();
    std::fs::copy(data("daily-2024-05-01.txt"), inputs.join("deeper/a.txt")).unwrap();
    std::os::unix::fs::symlink(&inputs, inputs.join("deeper/back-up")).unwrap();
    let index = dir.path().join("index");
    let run = papers_in(&index, &["index", "--json", inputs.to_str().unwrap()]).ok();
    let report: Report = run.json();
    assert_eq!((report.files, report.skipped, report.records), (1, 1, 10));
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("warning"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert!(warnings[0].contains("back-up") && warnings[0].contains("directory loop"));
}

#[test]
fn remove_drops_records_and_keeps_the_graph_consistent() {
    let copy = small_index_copy();
    let hits: Vec<crate::util::Hit> = papers_in(
        copy.path(),
        &[
            "similar",
            "--json",
            "--exact",
            "-k",
            "3",
            &first_id(copy.path()),
        ],
    )
    .ok()
    .json_lines();
    let victim = hits[0].id.clone();
    let report: Report = papers_in(copy.path(), &["remove", "--json", &victim[..8]])
        .ok()
        .json();
    assert_eq!((report.removed, report.records), (1, 9));
    papers_in(copy.path(), &["show", &victim]).fails(1, &["was removed"]);
    // Graph and scan agree on the smaller index.
    let exact = papers_in(
        copy.path(),
        &["similar", "--json", "--exact", &first_id(copy.path())],
    )
    .ok()
    .stdout;
    let graph = papers_in(
        copy.path(),
        &["similar", "--json", "--graph", &first_id(copy.path())],
    )
    .ok()
    .stdout;
    assert_eq!(exact, graph);
    assert!(!exact.contains(&victim));
}

/// The id of a record of a copy of the small index: the top hit of a search.
fn first_id(dir: &Path) -> String {
    crate::util::top_id(dir, &["rotary position scaling"])
}

#[test]
fn two_writers_at_once_lose_nothing_and_duplicate_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let spawn = |paths: &[String]| {
        let mut cmd = papers();
        cmd.env("PAPERS_INDEX", &index).arg("index").args(paths);
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let a = spawn(&[data("daily-2024-05-01.txt"), data("daily-2024-05-02.txt")]);
    let b = spawn(&[data("daily-2024-05-02.txt"), data("daily-2024-05-03.txt")]);
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let info = info(&index);
    assert_eq!(info.records, 27);
    let per_file: Vec<(String, usize)> = info
        .sources
        .into_iter()
        .map(|s| (s.file, s.records))
        .collect();
    assert_eq!(
        per_file,
        [
            ("daily-2024-05-01.txt".to_string(), 10),
            ("daily-2024-05-02.txt".to_string(), 10),
            ("daily-2024-05-03.txt".to_string(), 8)
        ]
    );
}

#[test]
fn a_killed_index_run_leaves_the_previous_index_usable() {
    // Kill points from "at once" to "probably while embedding".
    for delay_ms in [0u64, 150, 600, 1500] {
        let copy = small_index_copy();
        let mut child = papers()
            .env("PAPERS_INDEX", copy.path())
            .args(["index", &data("")])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();

        let records = info(copy.path()).records;
        assert!(
            records == 10 || records == 27,
            "delay {delay_ms} ms: {records} records"
        );
        let hits: Vec<crate::util::Hit> = papers_in(
            copy.path(),
            &[
                "search",
                "--json",
                "-k",
                "3",
                "--min-score",
                "0",
                "federated segmentation hospitals",
            ],
        )
        .ok()
        .json_lines();
        assert_eq!(hits.len(), 3, "delay {delay_ms} ms");
        assert!(hits[0].text.contains("hospitals"));

        let report: Report = papers_in(copy.path(), &["index", "--json", &data("")])
            .ok()
            .json();
        assert_eq!(report.records, 27, "delay {delay_ms} ms");
    }
}

#[test]
fn ctrl_c_stops_promptly_and_keeps_the_previous_index() {
    use std::io::{BufRead, BufReader};
    let copy = small_index_copy();
    let mut child = papers()
        .env("PAPERS_INDEX", copy.path())
        .args(["index", "-v", &data("")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    // The encoder line comes just before embedding starts.
    while stderr.read_line(&mut line).unwrap() > 0 && !line.contains("encoder: ") {
        line.clear();
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(130), "{rest}");
    assert!(
        rest.contains("stopped by Ctrl-C") && rest.contains("keeps its 10 records"),
        "{rest}"
    );
    assert_eq!(rest.lines().count(), 1, "{rest}");
    assert_eq!(info(copy.path()).records, 10);
    let report: Report = papers_in(copy.path(), &["index", "--json", &data("")])
        .ok()
        .json();
    assert_eq!((report.added, report.records), (17, 27));
}

#[test]
fn an_index_directory_that_cannot_be_created_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let index = file.join("index");
    papers_in(&index, &["index", &data("daily-2024-05-01.txt")])
        .fails(1, &[index.to_str().unwrap()]);
}

#[test]
fn a_dump_of_20000_paragraphs_is_indexed() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("huge.txt");
    // 20,000 paragraphs cycling through 40 abstracts written here, so the
    // test exercises parsing and deduplication at scale without embedding
    // 20,000 texts on a CI core.
    let mut text = String::from("Daily Papers\n");
    for i in 0..20_000 {
        let topic = i % 40;
        text.push_str(&format!(
            "\nSynthetic abstract {topic}: we study method {topic} on benchmark {} and report gains.\n",
            topic * 7
        ));
    }
    std::fs::write(&dump, text).unwrap();
    let report: Report = papers_in(
        &dir.path().join("i"),
        &["index", "--json", dump.to_str().unwrap()],
    )
    .ok()
    .json();
    assert_eq!(
        (report.paragraphs, report.unique, report.records),
        (20_000, 40, 40)
    );
    let shown: serde_json::Value = papers_in(
        &dir.path().join("i"),
        &["search", "--json", "-k", "1", "method 13"],
    )
    .ok()
    .json();
    assert_eq!(shown["sources"].as_array().unwrap().len(), 500);
}

#[test]
fn a_stopped_run_keeps_the_batches_it_finished() {
    use papers::write::{self, IndexRequest, Observer};
    use std::ops::ControlFlow;
    /// Stops once `self.0` records are embedded, as Ctrl-C does.
    struct StopAfter(usize);
    impl Observer for StopAfter {
        fn embedded(&self, done: usize) -> ControlFlow<()> {
            if done >= self.0 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }
    }
    // The model the binary uses, loaded here in-process.
    let model: serde_json::Value = crate::util::run(crate::util::papers(), &["model", "--json"])
        .ok()
        .json();
    let dir = tempfile::tempdir().unwrap();
    let request = IndexRequest {
        paths: vec![std::path::PathBuf::from(data(""))],
        batch: 10,
        model: papers::embed::ModelChoice {
            model_dir: Some(model["dir"].as_str().unwrap().into()),
            device: papers::embed::DeviceChoice::Cpu,
            ..Default::default()
        },
        ..Default::default()
    };
    // The stop comes during the second batch of 10, which is dropped.
    let stopped = write::index(dir.path(), &request, &StopAfter(15)).unwrap_err();
    let kept = match &stopped {
        papers::Error::IndexingStopped { added, records } => {
            assert_eq!((*added, *records), (10, 10));
            *added
        }
        other => panic!("{other}"),
    };
    assert!(stopped_message_names_what_was_kept(
        &stopped.to_string(),
        kept
    ));
    // What was kept is a whole index; the next run adds the rest.
    assert_eq!(info(dir.path()).records, kept);
    let report = write::index(dir.path(), &request, &write::Quiet).unwrap();
    assert_eq!((report.added, report.records), (27 - kept, 27));
}

fn stopped_message_names_what_was_kept(message: &str, kept: usize) -> bool {
    message.contains(&format!("kept the {kept} new records"))
        && message.contains("run the same command again")
}
