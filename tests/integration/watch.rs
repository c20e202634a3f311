//! `papers watch DIR`: the real binary watching a folder while a dump is
//! written into it slowly, as a download would.

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{papers, papers_in, sample_data, small_index_copy};

fn records(index: &std::path::Path) -> (u64, u64) {
    let info: Value = papers_in(index, &["info", "--json"]).ok().json();
    (
        info["records"].as_u64().unwrap(),
        info["generation"].as_u64().unwrap(),
    )
}

#[test]
fn a_dump_is_indexed_once_complete_and_not_while_it_is_written() {
    let index = small_index_copy();
    let dir = index.path();
    let folder = tempfile::tempdir().unwrap();
    let before = records(dir);
    let watcher = papers()
        .env("PAPERS_INDEX", dir)
        .args(["watch", "--settle", "0.6", "--every", "0.1"])
        .arg(folder.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // Written a few bytes at a time for two seconds: never still for the
    // settle time, so never indexed half-way.
    let dump = std::fs::read(sample_data().join("daily-2024-05-02.txt")).unwrap();
    let target = folder.path().join("daily-2024-05-02.txt");
    let mut file = std::fs::File::create(&target).unwrap();
    let steps = 20;
    let chunk = dump.len().div_ceil(steps);
    for part in dump.chunks(chunk).take(steps - 1) {
        file.write_all(part).unwrap();
        file.flush().unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        records(dir),
        before,
        "a file still being written was indexed"
    );
    file.write_all(&dump[chunk * (steps - 1)..]).unwrap();
    drop(file);

    let started = Instant::now();
    while records(dir).0 == before.0 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the finished dump was not indexed"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Everything the dump holds is in: indexing it again adds nothing.
    let again = papers_in(dir, &["index", "--json", target.to_str().unwrap()]).ok();
    let report: Value = again.json();
    assert_eq!(report["added"], 0, "{report}");

    // Ctrl-C stops it cleanly.
    std::process::Command::new("kill")
        .args(["-INT", &watcher.id().to_string()])
        .status()
        .unwrap();
    let out = watcher.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("stopped"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
