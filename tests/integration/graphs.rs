//! Stored HNSW graphs: built per commit, merged, used by a long-lived
//! server, and never a reason to fail (a damaged one is scanned around).
//! `PAPERS_GRAPH_FROM` lowers the row count from which graphs are stored.

use std::path::Path;

use serde_json::Value;

use crate::serve::{ids, Server};
use crate::util::{papers, run};

/// Seeded unit vectors around 20 centres, as abstracts cluster by topic.
fn vectors(seed: u64, n: usize) -> Vec<Vec<f32>> {
    let mut state = seed.max(1);
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f32 / (1u64 << 53) as f32 - 0.5
    };
    let centres: Vec<Vec<f32>> = (0..20)
        .map(|_| (0..384).map(|_| next()).collect())
        .collect();
    (0..n)
        .map(|i| {
            let v: Vec<f32> = centres[i % 20].iter().map(|c| c + 0.8 * next()).collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.iter().map(|x| x / norm).collect()
        })
        .collect()
}

/// An embeddings file of records `from..from+n`.
fn batch(dir: &Path, from: usize, n: usize) -> String {
    let path = dir.join(format!("batch-{from}.jsonl"));
    let lines: Vec<String> = vectors(from as u64 + 1, n)
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let k = from + i;
            serde_json::json!({
                "id": format!("syn-{k}"),
                "title": format!("Synthetic paper {k}"),
                "abstract": format!("Synthetic abstract number {k}, about topic {}.", k % 20),
                "embedding": v,
            })
            .to_string()
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path.to_str().unwrap().to_string()
}

fn index(dir: &Path, file: &str) {
    let mut cmd = papers();
    cmd.env("PAPERS_INDEX", dir).env("PAPERS_GRAPH_FROM", "200");
    run(cmd, &["index", "--no-verify", "--embeddings", file]).ok();
}

fn data_dir(dir: &Path) -> std::path::PathBuf {
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    dir.join(manifest["data_dir"].as_str().unwrap())
}

fn graph_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(data_dir(dir))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("graph-"))
        .collect();
    names.sort();
    names
}

#[test]
fn graphs_are_built_per_commit_merged_and_used_by_the_server() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("index");
    index(&dir, &batch(work.path(), 0, 150));
    assert!(
        graph_files(&dir).is_empty(),
        "under PAPERS_GRAPH_FROM: none"
    );
    index(&dir, &batch(work.path(), 150, 150));
    let g = |a: usize, b: usize| vec![format!("graph-{a:010}-{b:010}.hnsw")];
    assert_eq!(
        graph_files(&dir),
        g(0, 300),
        "the first graph covers every row"
    );
    index(&dir, &batch(work.path(), 300, 100));
    assert_eq!(
        graph_files(&dir),
        [g(0, 300), g(300, 400)].concat(),
        "O(new)"
    );
    // hnsw_rs's own files, as builds before the flat form stored them.
    let data = data_dir(&dir);
    for ext in ["hnsw.graph", "hnsw.data"] {
        std::fs::write(
            data.join(format!("graph-0000000000-0000000300.{ext}")),
            "old",
        )
        .unwrap();
    }
    // And a scratch folder of a run killed while writing a graph.
    std::fs::create_dir(data.join("graph-tmp-999999")).unwrap();
    std::fs::write(data.join("graph-tmp-999999/graph-0-1.hnsw"), "half").unwrap();
    index(&dir, &batch(work.path(), 400, 100));
    assert_eq!(
        graph_files(&dir),
        g(0, 500),
        "similar sizes merge, and the merged-away, old-format and scratch files go"
    );
    // A graph a killed run did not write is built by the next run, even one
    // with nothing new.
    std::fs::remove_file(data.join(&g(0, 500)[0])).unwrap();
    index(&dir, &batch(work.path(), 400, 100));
    assert_eq!(
        graph_files(&dir),
        g(0, 500),
        "rebuilt by a run adding nothing"
    );
    let info = crate::util::papers_in(&dir, &["info", "--json"]).ok();
    assert!(
        info.stdout.contains(r#""search":"graph""#),
        "{}",
        info.stdout
    );

    // A long-lived server walks the graphs; its neighbours are the exact
    // scan's, to recall@10 >= 0.98.
    let server = Server::start(&dir, &[]);
    let list: Vec<Value> = {
        let out = crate::util::papers_in(&dir, &["list", "--json"]).ok();
        out.json_lines()
    };
    let (mut found, mut wanted) = (0, 0);
    for paper in list.iter().step_by(25) {
        let id = paper["id"].as_str().unwrap();
        let got = ids(&server.json(&format!("/api/similar?id={id}&k=10")));
        let exact: Vec<Value> =
            crate::util::papers_in(&dir, &["similar", "--json", "--exact", "-k", "10", id])
                .ok()
                .json_lines();
        let exact = ids(&Value::Array(exact));
        wanted += exact.len();
        found += exact.iter().filter(|e| got.contains(e)).count();
    }
    let recall = found as f64 / wanted as f64;
    eprintln!("recall@10 of the stored graphs against the exact scan: {recall:.3}");
    assert!(recall >= 0.98, "recall@10 {recall:.3}");
    drop(server);

    // A damaged graph costs speed, not answers.
    std::fs::write(data.join(&g(0, 500)[0]), b"not a graph").unwrap();
    let id = list[0]["id"].as_str().unwrap();
    let graph = crate::util::papers_in(&dir, &["similar", "--json", "--graph", "-k", "5", id]).ok();
    assert!(!graph.stderr.contains("panicked"), "{}", graph.stderr);
    let exact = crate::util::papers_in(&dir, &["similar", "--json", "--exact", "-k", "5", id]).ok();
    assert_eq!(graph.stdout, exact.stdout);
}

#[test]
fn a_commit_past_the_largest_graph_is_cut_into_graphs_that_are_all_walked() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("index");
    let file = batch(work.path(), 0, 500);
    let mut cmd = papers();
    cmd.env("PAPERS_INDEX", &dir)
        .env("PAPERS_GRAPH_FROM", "200")
        .env("PAPERS_GRAPH_MAX", "200");
    run(cmd, &["index", "--no-verify", "--embeddings", &file]).ok();
    let g = |a: usize, b: usize| format!("graph-{a:010}-{b:010}.hnsw");
    assert_eq!(
        graph_files(&dir),
        [g(0, 200), g(200, 400), g(400, 500)],
        "no graph past PAPERS_GRAPH_MAX rows"
    );
    // Every graph is walked: `similar --graph` finds the exact scan's
    // neighbours wherever they are.
    let list: Vec<Value> = crate::util::papers_in(&dir, &["list", "--json"])
        .ok()
        .json_lines();
    let (mut found, mut wanted) = (0, 0);
    for paper in list.iter().step_by(20) {
        let id = paper["id"].as_str().unwrap();
        let ids_of = |flag: &str| -> Vec<Value> {
            let out =
                crate::util::papers_in(&dir, &["similar", "--json", flag, "-k", "10", id]).ok();
            out.json_lines::<Value>()
                .iter()
                .map(|hit| hit["id"].clone())
                .collect()
        };
        let (graph, exact) = (ids_of("--graph"), ids_of("--exact"));
        wanted += exact.len();
        found += exact.iter().filter(|e| graph.contains(e)).count();
    }
    let recall = found as f64 / wanted as f64;
    assert!(recall >= 0.98, "recall@10 {recall:.3} over {wanted}");
}

/// A new index embedded by the model builds its graphs from the vectors as
/// they come, beside the embedding; they are the graphs a build from the
/// committed rows makes (fewer than 10,000 rows go in serially, in row
/// order, so the same rows give the same bytes).
#[test]
fn a_new_index_builds_its_graphs_beside_the_embedding() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("index");
    let data = crate::util::sample_data().display().to_string();
    let index = || {
        let mut cmd = papers();
        cmd.env("PAPERS_INDEX", &dir)
            .env("PAPERS_GRAPH_FROM", "10")
            .env("PAPERS_GRAPH_MAX", "10");
        run(cmd, &["index", "--json", &data]).ok().json::<Value>()
    };
    assert_eq!(index()["records"], 27);
    let names = graph_files(&dir);
    assert_eq!(
        names,
        [
            "graph-0000000000-0000000010.hnsw",
            "graph-0000000010-0000000020.hnsw",
            "graph-0000000020-0000000027.hnsw"
        ]
    );
    let read = |name: &String| std::fs::read(data_dir(&dir).join(name)).unwrap();
    let beside: Vec<Vec<u8>> = names.iter().map(read).collect();
    for name in &names {
        std::fs::remove_file(data_dir(&dir).join(name)).unwrap();
    }
    // A run with nothing new builds the missing graphs from the rows.
    assert_eq!(index()["added"], 0);
    assert_eq!(graph_files(&dir), names);
    let after: Vec<Vec<u8>> = names.iter().map(read).collect();
    assert!(beside == after, "the graphs built beside differ");
}
