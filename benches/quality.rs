//! Retrieval quality on the seeds: `cargo bench --bench quality`.
//!
//! Reads the labelled queries of `eval/queries.jsonl` (one JSON object per
//! line: `kind` — `known`, `paraphrase`, `tail` (about text past the
//! model's 256 word pieces) or `topical` —, `query`, and the id
//! prefixes of every `relevant` abstract), indexes `../shared/seeds` (or
//! `PAPERS_SEEDS`) into a temporary directory through the library's
//! `write::index`, as `papers index` does (or uses the index named by
//! `PAPERS_INDEX`), answers every query in each search mode through
//! `search::answer::answer`, as `papers search` does, and prints MRR@10, Recall@10 and
//! nDCG@10 per mode and kind of query. Known-item and paraphrased queries
//! have one relevant abstract each; topical ones have every relevant
//! abstract judged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use papers::embed::{DeviceChoice, Embedder, ModelChoice};
use papers::search::answer as query;
use papers::search::Query;
use papers::search::{Mode, SearchOptions};
use papers::write::{self, IndexRequest, Quiet};

const K: usize = 10;

#[derive(serde::Deserialize)]
struct Labelled {
    kind: String,
    query: String,
    relevant: Vec<String>,
}

fn main() -> papers::Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let queries: Vec<Labelled> = std::fs::read_to_string(root.join("eval/queries.jsonl"))
        .map_err(|e| papers::Error::io(root.join("eval/queries.jsonl"), e))?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("eval/queries.jsonl: invalid line"))
        .collect();

    let choice = ModelChoice {
        device: DeviceChoice::Cpu,
        ..Default::default()
    };
    let scratch = tempfile::tempdir().map_err(|e| papers::Error::io(Path::new("tmp"), e))?;
    let index_dir = match std::env::var_os("PAPERS_INDEX") {
        Some(dir) => PathBuf::from(dir),
        None => {
            // Built as `papers index` builds it, window vectors included.
            let seeds = std::env::var_os("PAPERS_SEEDS")
                .map_or_else(|| root.join("../shared/seeds"), PathBuf::from);
            let dir = scratch.path().join("index");
            let request = IndexRequest {
                paths: vec![seeds],
                rebuild: true,
                model: choice.clone(),
                ..Default::default()
            };
            write::index(&dir, &request, &Quiet)?;
            dir
        }
    };
    let options = SearchOptions {
        limit: K,
        ..Default::default()
    };
    let (index, model) = query::open(&index_dir, &choice, &options, &|_| {})?;
    let model = model.expect("a hybrid search loads the model");

    // (mode, kind) -> per-query (mrr, recall, ndcg)
    let mut table: BTreeMap<(&str, String), Vec<[f64; 3]>> = BTreeMap::new();
    for q in &queries {
        let relevant: Vec<usize> = q
            .relevant
            .iter()
            .map(|prefix| index.resolve(&papers::id::Wanted::parse(prefix)))
            .collect::<papers::Result<_>>()?;
        // The ranking with every hit listed (`--min-score 0`), then what
        // `papers search` answers by default: nothing for a query judged to
        // match nothing, else the k best.
        let runs = [
            (Mode::Semantic, Some(0.0), "semantic"),
            (Mode::Lexical, Some(0.0), "lexical"),
            (Mode::Hybrid, Some(0.0), "hybrid"),
            (Mode::Semantic, None, "semantic, defaults"),
            (Mode::Lexical, None, "lexical, defaults"),
            (Mode::Hybrid, None, "hybrid, defaults"),
        ];
        for (mode, min_score, name) in runs {
            // What `papers search --mode MODE -k 10 QUERY` answers.
            let question = Query {
                paragraphs: query::paragraphs(&q.query)?,
                options: SearchOptions {
                    mode,
                    min_score,
                    ..options.clone()
                },
                explain: false,
            };
            let rows: Vec<usize> = query::answer(&index, Some(&model as &dyn Embedder), &question)?
                .found
                .iter()
                .map(|f| f.hit.row)
                .collect();
            let scores = metrics(&rows, &relevant);
            let group = if q.kind == "topical" {
                "topical"
            } else {
                "known-item"
            };
            table
                .entry((name, group.to_string()))
                .or_default()
                .push(scores);
            if q.kind != group {
                table
                    .entry((name, q.kind.clone()))
                    .or_default()
                    .push(scores);
            }
        }
    }

    println!(
        "{} queries over {} records, top {K}",
        queries.len(),
        index.len()
    );
    println!("| queries | n | mode | MRR@10 | Recall@10 | nDCG@10 |");
    println!("|---|---|---|---|---|---|");
    for kind in ["known-item", "known", "paraphrase", "tail", "topical"] {
        for mode in [
            "semantic",
            "lexical",
            "hybrid",
            "semantic, defaults",
            "lexical, defaults",
            "hybrid, defaults",
        ] {
            let Some(rows) = table.get(&(mode, kind.to_string())) else {
                continue;
            };
            let mean = |i: usize| rows.iter().map(|r| r[i]).sum::<f64>() / rows.len() as f64;
            println!(
                "| {kind} | {} | {mode} | {:.3} | {:.3} | {:.3} |",
                rows.len(),
                mean(0),
                mean(1),
                mean(2)
            );
        }
    }
    Ok(())
}

/// MRR@K, Recall@K and nDCG@K (binary gains) of a ranked list.
fn metrics(ranked: &[usize], relevant: &[usize]) -> [f64; 3] {
    let hit = |row: &usize| relevant.contains(row);
    let mrr = ranked
        .iter()
        .take(K)
        .position(hit)
        .map_or(0.0, |i| 1.0 / (i + 1) as f64);
    let found = ranked.iter().take(K).filter(|r| hit(r)).count();
    let recall = found as f64 / relevant.len() as f64;
    let dcg: f64 = ranked
        .iter()
        .take(K)
        .enumerate()
        .filter(|(_, r)| hit(r))
        .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let ideal: f64 = (0..relevant.len().min(K))
        .map(|i| 1.0 / ((i + 2) as f64).log2())
        .sum();
    [mrr, recall, dcg / ideal]
}
