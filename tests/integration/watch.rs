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

/// A write ends the same way from every front end: `papers watch`, which
/// did not train the tags its runs made stale (only `papers index` and
/// `papers tag` did), now does as their write session commits. Two days
/// more than double the first day's papers, so the tag's training (keyed
/// by the collection's size to within a quarter) is made anew.
#[cfg(unix)]
#[test]
fn a_dump_watched_in_trains_the_tags_it_made_stale() {
    let index = small_index_copy();
    let dir = index.path();
    let cache = crate::util::own_cache();
    let in_cache = |args: &[&str]| {
        let mut cmd = papers();
        cmd.env("PAPERS_INDEX", dir)
            .env("PAPERS_CACHE_DIR", cache.path());
        crate::util::run(cmd, args).ok()
    };
    let liked = crate::util::top_id(dir, &["transformers position encoding causal mask"]);
    let tagged = in_cache(&["tag", "pos", &liked]);
    assert!(
        tagged.stderr.contains("feed: 1 tag trained"),
        "{}",
        tagged.stderr
    );
    let profiles = cache.path().join("profiles");
    let classifiers = || {
        std::fs::read_dir(&profiles)
            .unwrap()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "f32"))
            .count()
    };
    let trained = classifiers();
    assert!(trained > 0);

    let folder = tempfile::tempdir().unwrap();
    let mut watcher = papers()
        .env("PAPERS_INDEX", dir)
        .env("PAPERS_CACHE_DIR", cache.path())
        .args(["watch", "--settle", "0.3", "--every", "0.1"])
        .arg(folder.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    for day in ["2", "3"] {
        let name = format!("daily-2024-05-0{day}.txt");
        std::fs::copy(sample_data().join(&name), folder.path().join(&name)).unwrap();
    }
    let started = Instant::now();
    while classifiers() == trained {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the watched runs did not train the tag they made stale ({} records)",
            records(dir).0
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let _ = watcher.kill();
    let _ = watcher.wait();
    // The feed after it reads the training back: nothing new is kept.
    let kept = classifiers();
    let feed = in_cache(&["feed", "pos", "--json"]);
    assert!(!feed.stdout.is_empty(), "{}", feed.stderr);
    assert_eq!(classifiers(), kept, "the feed trained again");
}
