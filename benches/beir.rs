//! Retrieval quality on BEIR SciFact: `cargo bench --bench beir [-- train]`.
//!
//! Indexes `scifact/corpus.jsonl` (under `PAPERS_BENCH`, else
//! `../shared/bench`) through `indexing::index`, the path `papers index`
//! takes (JSON Lines, titles embedded with the abstract), into
//! `target/bench-beir/index` (kept between runs: a second run embeds
//! nothing), answers the 300 test claims (or the 809 train ones with
//! `train`) through `query::answer` in each mode, and prints nDCG@10,
//! Recall@10 and MRR@10 beside the published scores for the same model
//! and data. Relevance is binary, as in BEIR.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use papers::embed::{DeviceChoice, Embedder, ModelChoice};
use papers::indexing::{self, IndexRequest, Quiet};
use papers::query::{self, Query};
use papers::search::{Mode, SearchOptions};

const K: usize = 10;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let split = if std::env::args().skip(1).any(|a| a == "train") {
        "train"
    } else {
        "test"
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bench = std::env::var_os("PAPERS_BENCH")
        .map_or_else(|| root.join("../shared/bench"), PathBuf::from);
    let scifact = bench.join("scifact");
    if !scifact.is_dir() {
        return Err(format!("{}: not found (set PAPERS_BENCH)", scifact.display()).into());
    }
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), PathBuf::from)
        .join("bench-beir/index");

    let choice = ModelChoice {
        device: DeviceChoice::Cpu,
        ..Default::default()
    };
    let started = Instant::now();
    let request = IndexRequest {
        paths: vec![scifact.join("corpus.jsonl")],
        model: choice.clone(),
        ..Default::default()
    };
    let report = indexing::index(&dir, &request, &Quiet)?;
    eprintln!(
        "indexed {} records ({} embedded now) in {:.1} s",
        report.records,
        report.added,
        started.elapsed().as_secs_f64()
    );

    let options = SearchOptions {
        limit: K,
        ..Default::default()
    };
    let (index, model) = query::open(&dir, &choice, &options, &|_| {})?;
    let model = model.expect("a hybrid search loads the model");
    let rows: HashMap<&str, usize> = index
        .papers()
        .iter()
        .enumerate()
        .filter_map(|(row, p)| p.meta.as_ref().map(|m| (m.source_id.as_str(), row)))
        .collect();

    let qrels = read_qrels(&scifact.join(format!("qrels/{split}.tsv")))?;
    let queries = read_queries(&scifact.join("queries.jsonl"))?;
    let mut table = Vec::new();
    for mode in [Mode::Semantic, Mode::Lexical, Mode::Hybrid] {
        let started = Instant::now();
        let mut sums = [0f64; 3];
        let mut n = 0;
        for (id, text) in &queries {
            let Some(relevant) = qrels.get(id) else {
                continue;
            };
            let relevant: HashSet<usize> = relevant
                .iter()
                .filter_map(|doc| rows.get(doc.as_str()).copied())
                .collect();
            let question = Query {
                paragraphs: query::paragraphs(text)?,
                options: SearchOptions { mode, ..options },
                explain: false,
            };
            let ranked: Vec<usize> =
                query::answer(&index, Some(&model as &dyn Embedder), &question)?
                    .hits
                    .iter()
                    .map(|h| h.row)
                    .collect();
            let m = metrics(&ranked, &relevant);
            for (s, v) in sums.iter_mut().zip(m) {
                *s += v;
            }
            n += 1;
        }
        let per_query = started.elapsed().as_secs_f64() * 1e3 / n as f64;
        table.push((mode, n, sums.map(|s| s / n as f64), per_query));
    }

    println!(
        "BEIR SciFact, {split} split: {} queries over {} records, top {K}",
        table[0].1,
        index.papers().len()
    );
    println!("| mode | nDCG@10 | Recall@10 | MRR@10 | ms/query | published nDCG@10 |");
    println!("|---|---|---|---|---|---|");
    for (mode, _, [ndcg, recall, mrr], ms) in &table {
        let anchor = match mode {
            Mode::Semantic => "0.6451 (all-MiniLM-L6-v2, MTEB)",
            Mode::Lexical => "0.6874 (BM25, MTEB bm25s); 0.6789 / 0.6647 (Anserini)",
            Mode::Hybrid => "",
        };
        println!(
            "| {} | {ndcg:.4} | {recall:.4} | {mrr:.4} | {ms:.1} | {anchor} |",
            mode.name()
        );
    }
    Ok(())
}

/// `query-id -> relevant corpus ids` from a BEIR qrels file (header line,
/// tab-separated, CRLF line ends, score > 0 relevant).
fn read_qrels(path: &Path) -> Result<HashMap<String, Vec<String>>, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut qrels: HashMap<String, Vec<String>> = HashMap::new();
    for line in text.lines().skip(1) {
        let parts: Vec<&str> = line.trim().split('\t').collect();
        if let [query, doc, score] = parts[..] {
            if score.parse::<f64>().unwrap_or(0.0) > 0.0 {
                qrels
                    .entry(query.to_string())
                    .or_default()
                    .push(doc.to_string());
            }
        }
    }
    Ok(qrels)
}

/// `(id, text)` of every query, in file order.
fn read_queries(path: &Path) -> Result<Vec<(String, String)>, Box<dyn std::error::Error>> {
    #[derive(serde::Deserialize)]
    struct Line {
        #[serde(rename = "_id")]
        id: String,
        text: String,
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let line: Line = serde_json::from_str(l)?;
            Ok((line.id, line.text))
        })
        .collect()
}

/// nDCG@K, Recall@K and MRR@K with binary gains.
fn metrics(ranked: &[usize], relevant: &HashSet<usize>) -> [f64; 3] {
    if relevant.is_empty() {
        return [0.0; 3];
    }
    let top = &ranked[..ranked.len().min(K)];
    let dcg: f64 = top
        .iter()
        .enumerate()
        .filter(|(_, r)| relevant.contains(r))
        .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let ideal: f64 = (0..relevant.len().min(K))
        .map(|i| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let found = top.iter().filter(|r| relevant.contains(r)).count();
    let mrr = top
        .iter()
        .position(|r| relevant.contains(r))
        .map_or(0.0, |i| 1.0 / (i + 1) as f64);
    [dcg / ideal, found as f64 / relevant.len() as f64, mrr]
}
