//! A user's data is never lost: papers writes only into folders it made,
//! a run that read nothing replaces nothing, a reader sees one committed
//! state while a writer commits, and hostile inputs end in seconds.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{papers, papers_in, sample_data, small_index_copy, Report};

fn dump() -> PathBuf {
    sample_data().join("daily-2024-05-01.txt")
}

fn records(index: &Path) -> usize {
    let info: serde_json::Value = papers_in(index, &["info", "--json"]).ok().json();
    info["records"].as_u64().unwrap() as usize
}

/// The data folders in an index folder.
fn data_dirs(index: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(index)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("data-"))
        .collect();
    names.sort();
    names
}

#[test]
fn a_folder_of_dumps_given_as_the_index_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("u");
    std::fs::create_dir_all(user.join("data-1")).unwrap();
    std::fs::copy(dump(), user.join("data-1").join("dump.txt")).unwrap();
    papers_in(&user, &["index", user.to_str().unwrap()])
        .fails(1, &["not a papers index", "data-1"]);
    papers_in(&user, &["index", "--rebuild", user.to_str().unwrap()])
        .fails(1, &["not a papers index"]);
    assert!(user.join("data-1").join("dump.txt").is_file());
    let entries: Vec<_> = std::fs::read_dir(&user).unwrap().flatten().collect();
    assert_eq!(entries.len(), 1, "nothing written into the user's folder");
    // Readers do not advise a rebuild of somebody's folder either.
    let run = papers_in(&user, &["info"]);
    assert!(!run.stderr.contains("--rebuild"), "{}", run.stderr);
}

#[test]
fn a_foreign_manifest_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("project");
    std::fs::create_dir(&folder).unwrap();
    let theirs = r#"{"name": "my-project", "version": "1.0"}"#;
    std::fs::write(folder.join("manifest.json"), theirs).unwrap();
    std::fs::write(folder.join("README"), "mine").unwrap();
    papers_in(&folder, &["info"]).fails(1, &["not a papers index", "manifest.json"]);
    papers_in(&folder, &["index", "--rebuild", dump().to_str().unwrap()])
        .fails(1, &["not a papers index"]);
    papers_in(&folder, &["remove", "abcd"]).fails(1, &["not a papers index"]);
    assert_eq!(
        std::fs::read_to_string(folder.join("manifest.json")).unwrap(),
        theirs
    );
}

#[test]
fn user_folders_beside_and_inside_an_index_survive_a_rebuild() {
    let copy = small_index_copy();
    let index = copy.path();
    let before = data_dirs(index);
    std::fs::create_dir(index.join("notes")).unwrap();
    std::fs::write(index.join("notes").join("todo.txt"), "read these").unwrap();
    // Named like papers' own data folders, but not made by papers.
    std::fs::create_dir(index.join("data-000099")).unwrap();
    std::fs::write(index.join("data-000099").join("mine.txt"), "keep").unwrap();
    papers_in(index, &["index", "--rebuild", dump().to_str().unwrap()]).ok();
    assert!(index.join("notes").join("todo.txt").is_file());
    assert!(index.join("data-000099").join("mine.txt").is_file());
    let after = data_dirs(index);
    for old in &before {
        assert!(!after.contains(old), "{old} (the replaced data) removed");
    }
    assert_eq!(
        after.len(),
        2,
        "the new data folder and the user's: {after:?}"
    );
    assert_eq!(records(index), 10);
}

#[test]
fn a_rebuild_that_reads_no_record_keeps_the_index() {
    let copy = small_index_copy();
    let index = copy.path();
    let dir = tempfile::tempdir().unwrap();
    let inputs = [
        ("empty.json", "[]\n"),
        ("header-only.txt", "Daily Papers\n\n"),
        (
            "unknown-fields.json",
            r#"[{"body": "text under a name papers does not read"}]"#,
        ),
    ];
    for (name, text) in inputs {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let run = papers_in(index, &["index", "--rebuild", path.to_str().unwrap()]);
        assert_eq!(run.code, 1, "{name}: {}", run.stderr);
        assert!(run.stderr.contains(name), "{name}: {}", run.stderr);
        assert_eq!(records(index), 10, "{name} left the index as it was");
    }
    // A first build that reads nothing makes no index.
    let fresh = dir.path().join("fresh");
    let empty = dir.path().join("empty.json");
    papers_in(&fresh, &["index", empty.to_str().unwrap()]).fails(1, &["empty.json"]);
    assert!(!fresh.join("manifest.json").exists());
}

#[test]
fn a_json_list_reads_the_fields_json_lines_do() {
    crate::util::ensure_model();
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("export.json");
    std::fs::write(
        &list,
        r#"[{"title": "Graphs", "abstract": "We study message passing on large sparse graphs."},
            {"_id": "doc-2", "text": "Diffusion models denoise images step by step."},
            {"id": 5, "abstract": 7}]"#,
    )
    .unwrap();
    let run = papers_in(
        &dir.path().join("i"),
        &["index", "--json", list.to_str().unwrap()],
    )
    .ok();
    let report: Report = run.json();
    assert_eq!((report.records, report.bad_lines), (2, 1));
    assert!(
        run.stderr.contains("entry 3: the abstract is a number"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_reader_delayed_mid_open_sees_one_state_while_a_writer_commits() {
    let copy = small_index_copy();
    let index = copy.path();
    let list: Vec<serde_json::Value> = papers_in(index, &["list", "--json"]).ok().json_lines();
    let before = list.len();
    for (round, victim) in list.iter().take(3).enumerate() {
        // The reader takes its snapshot, then waits before it reads the
        // records (and, under 16 MB, checks them all); the writer commits
        // a removal meanwhile.
        let mut reader = papers();
        reader
            .env("PAPERS_INDEX", index)
            .env("PAPERS_TEST_PAUSE_AFTER_STATE_MS", "1500")
            .args(["list", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = reader.spawn().unwrap();
        std::thread::sleep(Duration::from_millis(400));
        papers_in(index, &["remove", victim["id"].as_str().unwrap()]).ok();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "round {round}: {stderr}");
        let seen = String::from_utf8_lossy(&out.stdout).lines().count();
        assert!(
            seen == before - round || seen == before - round - 1,
            "round {round}: {seen} records, neither state"
        );
    }
    assert_eq!(records(index), before - 3);
}

/// Runs `papers ARGS` with `stdin`, under a 6 GiB address-space ceiling,
/// and returns its exit code and stderr if it ends within `seconds`.
pub fn bounded(args: &[&str], stdin: Stdio, seconds: u64) -> (i32, String) {
    let exe = env!("CARGO_BIN_EXE_papers");
    let script = "ulimit -v 6291456; exec \"$0\" \"$@\"";
    // The same scrubbed environment as every other test's papers.
    let template = papers();
    let mut sh = Command::new("sh");
    sh.env_clear();
    for (key, value) in template.get_envs() {
        if let Some(value) = value {
            sh.env(key, value);
        }
    }
    let mut child = sh
        .args(["-c", script, exe])
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
            return (status.code().unwrap_or(-1), stderr);
        }
        if started.elapsed() > Duration::from_secs(seconds) {
            let _ = child.kill();
            panic!("papers {args:?} still running after {seconds} s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn dev_zero_and_fifos_end_in_seconds_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("i");
    let index = index.to_str().unwrap();
    let zero = || Stdio::from(std::fs::File::open("/dev/zero").unwrap());
    let (code, err) = bounded(&["--index", index, "index", "/dev/zero"], Stdio::null(), 60);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("/dev/zero: a device, not a regular file"),
        "{err}"
    );
    let (code, err) = bounded(&["embed"], zero(), 60);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("over the limit"), "{err}");
    let (code, err) = bounded(&["embed", "--records"], zero(), 60);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("over the limit"), "{err}");
    let (code, err) = bounded(
        &["--index", index, "index", "--embeddings", "/dev/zero"],
        Stdio::null(),
        60,
    );
    assert_eq!(code, 1, "{err}");
    let (code, err) = bounded(&["search", "--file", "-"], zero(), 60);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("query on stdin is over the limit"), "{err}");

    let dumps = dir.path().join("dumps");
    std::fs::create_dir(&dumps).unwrap();
    let fifo = dumps.join("incoming.txt");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped the FIFO half: mkfifo is not available");
        return;
    }
    std::os::unix::fs::symlink("/nonexistent/dump.txt", dumps.join("gone.txt")).unwrap();
    // The rest of the folder is read.
    crate::util::ensure_model();
    std::fs::copy(dump(), dumps.join("a-dump.txt")).unwrap();
    let (code, err) = bounded(
        &["--index", index, "index", dumps.to_str().unwrap()],
        Stdio::null(),
        120,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(records(Path::new(index)), 10);
    assert!(err.contains("incoming.txt: a FIFO"), "{err}");
    assert!(err.contains("gone.txt: a link to nothing"), "{err}");
    let (code, err) = bounded(
        &["--index", index, "index", fifo.to_str().unwrap()],
        Stdio::null(),
        60,
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("FIFO"), "{err}");
}

#[test]
fn an_invalid_byte_or_an_oversized_record_costs_only_that_record() {
    crate::util::ensure_model();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.txt");
    let mut bytes =
        b"Daily Papers\n\nA clean abstract about retrieval.\n\nA broken \xff abstract.\n\n"
            .to_vec();
    bytes.extend("x ".repeat(200).as_bytes());
    bytes.extend(b"\n\nAnother clean abstract about speech.\n");
    std::fs::write(&path, bytes).unwrap();
    let run = papers_in(
        &dir.path().join("i"),
        &[
            "index",
            "--json",
            "--max-record-bytes",
            "300",
            path.to_str().unwrap(),
        ],
    )
    .ok();
    let report: Report = run.json();
    assert_eq!((report.records, report.bad_lines), (2, 2), "{}", run.stderr);
    assert!(
        run.stderr.contains("line 5: invalid UTF-8"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--max-record-bytes"), "{}", run.stderr);
}

#[test]
fn out_of_range_arguments_are_usage_errors() {
    let copy = small_index_copy();
    let index = copy.path();
    for bad in ["NaN", "2", "-1.5", "inf"] {
        papers_in(index, &["search", "--min-score", bad, "q"]).fails(2, &["--min-score"]);
    }
    papers_in(index, &["search", "--since", "2024-02-30", "q"]).fails(2, &["--since"]);
    papers_in(index, &["search", "--since", "2024-02-29", "q"]).ok();
    papers_in(index, &["dupes", "--min-overlap", "1.5"]).fails(2, &["--min-overlap"]);
}

#[test]
fn an_os_error_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let run = papers_in(
        &dir.path().join("i"),
        &["search", "--file", "/no/such/query.txt"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("no such file").count(),
        1,
        "{}",
        run.stderr
    );
}

#[test]
fn dupes_keeps_the_best_pairs_within_its_limit() {
    let copy = small_index_copy();
    let index = copy.path();
    #[derive(serde::Deserialize)]
    struct Pair {
        score: f32,
    }
    let args = ["dupes", "--json", "--min-score=-1", "--min-overlap", "0"];
    let all: Vec<Pair> = papers_in(index, &args).ok().json_lines();
    assert_eq!(all.len(), 45, "every pair of 10 records");
    let mut limited = args.to_vec();
    limited.extend(["-k", "5"]);
    let best: Vec<Pair> = papers_in(index, &limited).ok().json_lines();
    let scores = |pairs: &[Pair]| pairs.iter().map(|p| p.score).collect::<Vec<_>>();
    assert_eq!(scores(&best), scores(&all[..5]));
}

/// Writes `value` over the f32 at `at` of the vectors file, and pads the
/// data folder past the size under which every open checks everything.
fn rot_vector(index: &Path, row: usize, value: f32) {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(index.join("manifest.json")).unwrap()).unwrap();
    let data = index.join(manifest["data_dir"].as_str().unwrap());
    let path = data.join("vectors.f32");
    let mut bytes = std::fs::read(&path).unwrap();
    let at = row * 384 * 4;
    for i in 0..384 {
        bytes[at + 4 * i..at + 4 * i + 4].copy_from_slice(&value.to_le_bytes());
    }
    std::fs::write(&path, bytes).unwrap();
    let pad = std::fs::File::create(data.join("padding")).unwrap();
    pad.set_len(20 << 20).unwrap();
}

#[test]
fn rotten_vectors_are_damage_not_hits() {
    for value in [f32::NAN, 1e30] {
        let copy = small_index_copy();
        let index = copy.path();
        let list: Vec<serde_json::Value> = papers_in(index, &["list", "--json"]).ok().json_lines();
        rot_vector(index, 0, value);
        // Which record sits at row 0 is not known here: ask `similar` of
        // each until one fails; every answer that succeeds is sane.
        let mut failed = 0;
        for hit in &list {
            let run = papers_in(index, &["similar", "--json", hit["id"].as_str().unwrap()]);
            if run.code == 0 {
                for h in run.json_lines::<serde_json::Value>() {
                    let score = h["score"].as_f64().expect("a number");
                    assert!(score.abs() <= 1.001, "{value}: {score}");
                }
            } else {
                run.fails(1, &["damaged index file", "vectors.f32", "papers check"]);
                failed += 1;
            }
        }
        assert!(failed >= 1, "{value}: the rotten row was never reported");
        papers_in(index, &["check"]).fails(1, &["vectors.f32"]);
    }
}

/// Mounts a tmpfs of `size` at a new folder, or says why not.
pub fn tmpfs(size: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir().unwrap();
    let mount = dir.path().join("mnt");
    std::fs::create_dir(&mount).unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(&mount)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Some((dir, mount))
    } else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        None
    }
}

pub fn umount(mount: &Path) {
    let _ = Command::new("umount").arg(mount).status();
}

#[test]
fn a_full_disk_says_so_and_leaves_no_folder_behind() {
    crate::util::ensure_model();
    let Some((_dir, mount)) = tmpfs("160k") else {
        return;
    };
    let index = mount.join("i");
    let run = papers_in(&index, &["index", dump().to_str().unwrap()]);
    let listing: Vec<String> = std::fs::read_dir(&index)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    umount(&mount);
    run.fails(1, &["disk full"]);
    assert!(
        listing.iter().all(|n| !n.starts_with("data-")),
        "{listing:?}"
    );
}

#[test]
fn an_index_on_a_read_only_mount_is_read_and_not_written() {
    let Some((_dir, mount)) = tmpfs("8m") else {
        return;
    };
    let copy = small_index_copy();
    let index = mount.join("i");
    crate::util::copy_dir(copy.path(), &index);
    let remounted = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(&mount)
        .status()
        .is_ok_and(|s| s.success());
    if !remounted {
        umount(&mount);
        eprintln!("skipped: cannot remount the tmpfs read-only");
        return;
    }
    let info = papers_in(&index, &["info", "--json"]);
    let remove = papers_in(&index, &["remove", "abcd"]);
    umount(&mount);
    info.ok();
    remove.fails(1, &["read-only"]);

    // A log left by a killed writer needs write access to apply: said as
    // that, not as damage.
    let Some((_dir, mount)) = tmpfs("8m") else {
        return;
    };
    let index = mount.join("i");
    crate::util::copy_dir(copy.path(), &index);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(index.join("manifest.json")).unwrap()).unwrap();
    let data = index.join(manifest["data_dir"].as_str().unwrap());
    std::fs::write(data.join("papers.sqlite-wal"), [0u8; 64]).unwrap();
    Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(&mount)
        .status()
        .unwrap();
    let info = papers_in(&index, &["info"]);
    umount(&mount);
    let run = info.fails(1, &["read-only", "writer that was killed"]);
    assert!(!run.stderr.contains("damaged"), "{}", run.stderr);
}

#[test]
fn a_data_folder_whose_deletion_was_killed_is_finished_by_the_next_write() {
    let copy = small_index_copy();
    let index = copy.path();
    let before = data_dirs(index);
    // What a kill while deleting the replaced data leaves: the folder under
    // its `.removing` name, the marker already gone, other files left.
    let killed = index.join("data-000042.removing");
    std::fs::create_dir_all(killed.join("graphs")).unwrap();
    std::fs::write(killed.join("vectors.f32"), vec![0u8; 4096]).unwrap();
    std::fs::write(killed.join("graphs").join("graph-0"), b"x").unwrap();
    // It is papers' own leftover: the index still opens and reads.
    assert_eq!(records(index), 10);
    papers_in(index, &["index", "--rebuild", dump().to_str().unwrap()]).ok();
    assert!(!killed.exists(), "the killed deletion is finished");
    let after = data_dirs(index);
    assert_eq!(after.len(), 1, "only the new data folder: {after:?}");
    assert!(!before.contains(&after[0]));
    assert!(
        !after[0].ends_with(".removing"),
        "the rebuild's own deletion finished: {after:?}"
    );
    papers_in(index, &["check"]).ok();

    // A folder holding nothing but such a leftover is a fresh index folder,
    // not somebody else's.
    let fresh = tempfile::tempdir().unwrap();
    std::fs::create_dir(fresh.path().join("data-000003.removing")).unwrap();
    papers_in(fresh.path(), &["index", dump().to_str().unwrap()]).ok();
    assert!(!fresh.path().join("data-000003.removing").exists());
    assert_eq!(records(fresh.path()), 10);
}
