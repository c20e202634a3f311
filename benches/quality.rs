//! Retrieval quality on the seeds: `cargo bench --bench quality`.
//!
//! Reads the labelled queries of `eval/queries.jsonl` (one JSON object per
//! line: `kind` — `known`, `paraphrase`, `tail` (about text past the
//! model's 256 word pieces) or `topical` —, `query`, and the id
//! prefixes of every `relevant` abstract), indexes `../shared/seeds` into a
//! temporary directory (or uses the index named by `PAPERS_INDEX`), runs
//! every query in each search mode, and prints MRR@10, Recall@10 and
//! nDCG@10 per mode and kind of query. Known-item and paraphrased queries
//! have one relevant abstract each; topical ones have every relevant
//! abstract judged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use papers::corpus::Corpus;
use papers::embed::{device, source, BertEmbedder, DeviceChoice, Embedder, ModelSpec};
use papers::index::{Index, ModelStamp, Update};
use papers::search::{Mode, SearchOptions};

const K: usize = 10;

#[derive(serde::Deserialize)]
struct Query {
    kind: String,
    query: String,
    relevant: Vec<String>,
}

fn main() -> papers::Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let queries: Vec<Query> = std::fs::read_to_string(root.join("eval/queries.jsonl"))
        .map_err(|e| papers::Error::io(root.join("eval/queries.jsonl"), e))?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("eval/queries.jsonl: invalid line"))
        .collect();

    let files = source::resolve(&ModelSpec::default())?;
    let model = BertEmbedder::load(&files, &device::select(DeviceChoice::Cpu)?)?;
    let scratch = tempfile::tempdir().map_err(|e| papers::Error::io(Path::new("tmp"), e))?;
    let index_dir = match std::env::var_os("PAPERS_INDEX") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let dir = scratch.path().join("index");
            build(&root.join("../shared/seeds"), &dir, &model, &files)?;
            dir
        }
    };
    let index = Index::open(&index_dir)?;

    // (mode, kind) -> per-query (mrr, recall, ndcg)
    let mut table: BTreeMap<(&str, String), Vec<[f64; 3]>> = BTreeMap::new();
    for q in &queries {
        let relevant: Vec<usize> = q
            .relevant
            .iter()
            .map(|prefix| index.resolve(prefix))
            .collect::<papers::Result<_>>()?;
        let vector = model.embed_one(&q.query)?;
        for mode in [Mode::Semantic, Mode::Lexical, Mode::Hybrid] {
            let options = SearchOptions {
                limit: K,
                mode,
                ..Default::default()
            };
            let rows: Vec<usize> = index
                .search_text(&q.query, Some(&vector), &options)?
                .iter()
                .map(|h| h.row)
                .collect();
            let scores = metrics(&rows, &relevant);
            let group = if q.kind == "topical" {
                "topical"
            } else {
                "known-item"
            };
            table
                .entry((mode.name(), group.to_string()))
                .or_default()
                .push(scores);
            if q.kind != group {
                table
                    .entry((mode.name(), q.kind.clone()))
                    .or_default()
                    .push(scores);
            }
        }
    }

    println!(
        "{} queries over {} records, top {K}",
        queries.len(),
        index.papers().len()
    );
    println!("| queries | n | mode | MRR@10 | Recall@10 | nDCG@10 |");
    println!("|---|---|---|---|---|---|");
    for kind in ["known-item", "known", "paraphrase", "tail", "topical"] {
        for mode in ["semantic", "lexical", "hybrid"] {
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

/// Indexes `seeds` into `dir` as `papers index` would.
fn build(
    seeds: &Path,
    dir: &Path,
    model: &BertEmbedder,
    files: &papers::embed::ModelFiles,
) -> papers::Result<()> {
    let corpus = Corpus::load(&[seeds.to_path_buf()])?;
    let mut update = Update::new(None, &corpus);
    let (positions, texts): (Vec<usize>, Vec<&str>) = update.pending().into_iter().unzip();
    let vectors = model.embed(&texts, &mut |_| std::ops::ControlFlow::Continue(()))?;
    for (position, vector) in positions.into_iter().zip(vectors) {
        update.set_vector(position, vector);
    }
    let stamp = ModelStamp {
        model: files.model.clone(),
        weights_sha256: files.weights_sha256()?,
        dimension: model.dimension(),
        max_seq_length: model.max_seq_length(),
    };
    update.commit(dir, &stamp)?;
    Ok(())
}
