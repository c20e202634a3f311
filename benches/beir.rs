//! Retrieval quality on BEIR SciFact: `cargo bench --bench beir [-- train]`.
//!
//! Indexes `scifact/corpus.jsonl` (under `PAPERS_BENCH`, else
//! `../shared/bench`) through `write::index`, the path `papers index`
//! takes (JSON Lines, titles embedded with the abstract), into
//! `target/bench-beir/index` (kept between runs: a second run embeds
//! nothing; `PAPERS_BEIR_INDEX` names another), answers the 300 test claims (or the 809 train ones with
//! `train`) through `search::answer::answer` in each mode, and prints nDCG@10,
//! Recall@10 and MRR@10 beside the published scores for the same model
//! and data. Relevance is binary, as in BEIR.
//!
//! `-- tune` answers the train claims instead and searches the lexical
//! analysis, BM25's k1 and b, and the fusion's rank constant and lexical
//! weight, printing the best settings by nDCG@10; it also scores the
//! whole-abstract vectors alone, to show what the windows add.
//!
//! `-- calibrate` fits the score's logistic calibration on the train
//! claims and checks it on the test claims (`beir/calibrate.rs`).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::Instant;

use papers::analysis::Analysis;
use papers::embed::{DeviceChoice, Embedder, ModelChoice};
use papers::index::Index;
use papers::lexical::{Bm25, Params};
use papers::search::answer as query;
use papers::search::Query;
use papers::search::{exact_scan, Mode, SearchOptions, Strategy};
use papers::write::{self, IndexRequest, Quiet};

#[path = "beir/calibrate.rs"]
mod calibrate;
#[path = "beir/dump.rs"]
mod dump;
#[path = "beir/fusion.rs"]
mod fusion;
use fusion::{Fusion, FUSION_DEPTH};
#[path = "beir/seeds.rs"]
mod seeds;

const K: usize = 10;

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> BoxResult<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tuning = args.iter().any(|a| a == "tune");
    let split = if tuning
        || args
            .iter()
            .any(|a| a == "train" || a == "calibrate" || a == "dump")
    {
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
    // `PAPERS_BEIR_INDEX` points at another index of the same corpus (one
    // `papers index` built in another precision, say); it is brought up to
    // date the same way, which embeds nothing when it is whole.
    let dir = std::env::var_os("PAPERS_BEIR_INDEX").map_or_else(
        || {
            std::env::var_os("CARGO_TARGET_DIR")
                .map_or_else(|| root.join("target"), PathBuf::from)
                .join("bench-beir/index")
        },
        PathBuf::from,
    );

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
    let report = write::index(&dir, &request, &Quiet)?;
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
    let rows: HashMap<String, usize> = index
        .papers()?
        .into_iter()
        .filter_map(|(row, p)| p.meta.map(|m| (m.source_id, row)))
        .collect();

    let qrels = read_qrels(&scifact.join(format!("qrels/{split}.tsv")))?;
    let queries = read_queries(&scifact.join("queries.jsonl"))?;
    let judged: Vec<(&str, HashSet<usize>)> = queries
        .iter()
        .filter_map(|(id, text)| {
            let relevant = qrels.get(id)?;
            let rows = relevant
                .iter()
                .filter_map(|doc| rows.get(doc.as_str()).copied())
                .collect();
            Some((text.as_str(), rows))
        })
        .collect();
    if tuning {
        return tune(&index, &model, &judged);
    }
    if args.iter().any(|a| a == "calibrate" || a == "dump") {
        let test_qrels = read_qrels(&scifact.join("qrels/test.tsv"))?;
        let test: Vec<(&str, HashSet<usize>)> = queries
            .iter()
            .filter_map(|(id, text)| {
                let relevant = test_qrels.get(id)?;
                let found = relevant
                    .iter()
                    .filter_map(|doc| rows.get(doc.as_str()).copied())
                    .collect();
                Some((text.as_str(), found))
            })
            .collect();
        if let Some(out) = args
            .iter()
            .position(|a| a == "dump")
            .and_then(|i| args.get(i + 1))
        {
            let out = Path::new(out);
            std::fs::create_dir_all(out)?;
            let own = |s: &[(&str, HashSet<usize>)]| -> dump::Set {
                s.iter().map(|(q, r)| (q.to_string(), r.clone())).collect()
            };
            let none = |s: &[(&str, HashSet<usize>)]| -> dump::Set {
                s.iter()
                    .map(|(q, _)| (q.to_string(), HashSet::new()))
                    .collect()
            };
            let (seeds_index, labelled) = seeds::labelled(&root)?;
            let foreign: dump::Set = labelled
                .iter()
                .map(|(q, _)| (q.clone(), HashSet::new()))
                .collect();
            dump::write(out, "scifact-train", &index, &model, &own(&judged))?;
            dump::write(out, "scifact-test", &index, &model, &own(&test))?;
            dump::write(out, "seeds", &seeds_index, &model, &labelled)?;
            // Typos, searched as typed and as search corrects them; and
            // how many clean queries the correction changes.
            let mut spelling = String::new();
            let typed = dump::typos(&labelled, 0x5851_f42d_4c95_7f2d);
            let (fixed, changed) = dump::spelled(&typed, &seeds_index, &model)?;
            let (_, clean) = dump::spelled(&labelled, &seeds_index, &model)?;
            spelling += &format!(
                "seeds: {} queries, {changed} with typos corrected, {clean} clean ones changed\n",
                labelled.len()
            );
            dump::write(out, "seeds-typos-raw", &seeds_index, &model, &typed)?;
            dump::write(out, "seeds-typos", &seeds_index, &model, &fixed)?;
            dump::write(out, "cs-on-scifact", &index, &model, &foreign)?;
            dump::write(
                out,
                "scifact-train-on-seeds",
                &seeds_index,
                &model,
                &none(&judged),
            )?;
            dump::write(
                out,
                "scifact-test-on-seeds",
                &seeds_index,
                &model,
                &none(&test),
            )?;
            dump::write(
                out,
                "nonsense-scifact",
                &index,
                &model,
                &dump::nonsense(100, 0x2545_f491_4f6c_dd1d),
            )?;
            dump::write(
                out,
                "nonsense-seeds",
                &seeds_index,
                &model,
                &dump::nonsense(100, 0x9e37_79b9_7f4a_7c15),
            )?;
            if let Some(dir) = std::env::var_os("PAPERS_ARXIV_INDEX") {
                let arxiv = Index::open(Path::new(&dir))?;
                let (titles, typed) = dump::arxiv(&arxiv, 10)?;
                dump::write(out, "arxiv-titles", &arxiv, &model, &titles)?;
                dump::write(out, "arxiv-typed", &arxiv, &model, &typed)?;
                for (name, set, seed) in [
                    ("arxiv-titles", &titles, 0x2545_f491_4f6c_dd1d_u64),
                    ("arxiv-typed", &typed, 0x9e37_79b9_7f4a_7c15),
                ] {
                    let typos = dump::typos(set, seed);
                    let (fixed, changed) = dump::spelled(&typos, &arxiv, &model)?;
                    let (_, clean) = dump::spelled(set, &arxiv, &model)?;
                    spelling += &format!(
                        "{name}: {} queries, {changed} with typos corrected, {clean} clean ones changed\n",
                        set.len()
                    );
                    dump::write(out, &format!("{name}-typos-raw"), &arxiv, &model, &typos)?;
                    dump::write(out, &format!("{name}-typos"), &arxiv, &model, &fixed)?;
                }
                let (all_titles, _) = dump::arxiv(&arxiv, 1)?;
                spelling += &format!(
                    "arXiv titles on the seeds: {}",
                    dump::new_terms(&all_titles, &seeds_index, &model)?
                );
                dump::write(out, "scifact-test-on-arxiv", &arxiv, &model, &none(&test))?;
                dump::write(
                    out,
                    "nonsense-arxiv",
                    &arxiv,
                    &model,
                    &dump::nonsense(100, 0x1234_5678_9abc_def1),
                )?;
            }
            eprint!("{spelling}");
            std::fs::write(out.join("spelling.txt"), spelling)?;
            return Ok(());
        }
        return calibrate::run(&index, &model, &judged, &test, &root);
    }
    // The ranking's quality, every hit listed (`--min-score 0`), as the
    // published scores count; then each mode at the defaults (every query
    // lists its ranking, whatever its verdict) and with `--strict`, where a
    // claim whose verdict is none lists no hit (see
    // `papers::search::verdict`).
    let mut table = Vec::new();
    let runs = [
        (Mode::Semantic, Some(0.0), false, "semantic"),
        (Mode::Lexical, Some(0.0), false, "lexical"),
        (Mode::Hybrid, Some(0.0), false, "hybrid"),
        (Mode::Semantic, None, false, "semantic, as typed"),
        (Mode::Lexical, None, false, "lexical, as typed"),
        (Mode::Hybrid, None, false, "hybrid, as typed"),
        (Mode::Semantic, None, false, "semantic, defaults"),
        (Mode::Lexical, None, false, "lexical, defaults"),
        (Mode::Hybrid, None, false, "hybrid, defaults"),
        (Mode::Semantic, None, true, "semantic, --strict"),
        (Mode::Lexical, None, true, "lexical, --strict"),
        (Mode::Hybrid, None, true, "hybrid, --strict"),
    ];
    for (mode, min_score, strict, name) in runs {
        let started = Instant::now();
        let mut sums = [0f64; 3];
        let mut n = 0;
        for (text, relevant) in &judged {
            let question = Query {
                paragraphs: query::paragraphs(text)?,
                options: SearchOptions {
                    mode,
                    min_score,
                    strict,
                    as_typed: name.ends_with("as typed"),
                    ..options.clone()
                },
                explain: false,
            };
            let ranked: Vec<usize> =
                query::answer(&index, Some(&model as &dyn Embedder), &question)?
                    .found
                    .iter()
                    .map(|f| f.hit.row)
                    .collect();
            let m = metrics(&ranked, relevant);
            for (s, v) in sums.iter_mut().zip(m) {
                *s += v;
            }
            n += 1;
        }
        let per_query = started.elapsed().as_secs_f64() * 1e3 / n as f64;
        table.push((name, n, sums.map(|s| s / n as f64), per_query));
    }
    // The semantic ranking without the tail windows, as MTEB scores it:
    // one vector per abstract, the first 256 word pieces.
    let started = Instant::now();
    let texts: Vec<&str> = judged.iter().map(|(t, _)| *t).collect();
    let vectors = model.embed(&texts, &mut |_| ControlFlow::Continue(()))?;
    let mut sums = [0f64; 3];
    for (vector, (_, relevant)) in vectors.iter().zip(&judged) {
        for (s, v) in sums
            .iter_mut()
            .zip(metrics(&whole_abstracts(&index, vector), relevant))
        {
            *s += v;
        }
    }
    let n = judged.len();
    let per_query = started.elapsed().as_secs_f64() * 1e3 / n as f64;
    table.insert(
        1,
        (
            "semantic, abstract vectors only",
            n,
            sums.map(|s| s / n as f64),
            per_query,
        ),
    );

    println!(
        "BEIR SciFact, {split} split: {} queries over {} records, top {K}",
        table[0].1,
        index.len()
    );
    println!("| mode | nDCG@10 | Recall@10 | MRR@10 | ms/query | published nDCG@10 |");
    println!("|---|---|---|---|---|---|");
    for (mode, _, [ndcg, recall, mrr], ms) in &table {
        let anchor = match *mode {
            "semantic, abstract vectors only" => "0.6451 (all-MiniLM-L6-v2, MTEB)",
            "lexical" => "0.6874 (BM25, MTEB bm25s); 0.6789 / 0.6647 (Anserini)",
            _ => "",
        };
        println!("| {mode} | {ndcg:.4} | {recall:.4} | {mrr:.4} | {ms:.1} | {anchor} |");
    }
    Ok(())
}

/// The top K records by the cosine of their whole-abstract vector alone.
fn whole_abstracts(index: &Index, vector: &[f32]) -> Vec<usize> {
    let d = index.manifest().dimension;
    let vectors: Vec<f32> = (0..index.rows())
        .flat_map(|row| index.vector(row))
        .collect();
    let mut scan = exact_scan(&vectors, d, vector, &[]);
    scan.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.row.cmp(&b.row)));
    scan.iter().take(K).map(|h| h.row).collect()
}

/// Searches the lexical and fusion settings on `judged` (the train
/// claims) and prints the best by mean nDCG@10.
fn tune(index: &Index, model: &dyn Embedder, judged: &[(&str, HashSet<usize>)]) -> BoxResult<()> {
    let started = Instant::now();
    let texts: Vec<&str> = judged.iter().map(|(t, _)| *t).collect();
    let vectors = model.embed(&texts, &mut |_| ControlFlow::Continue(()))?;
    let mean = |rankings: &[Vec<usize>]| {
        rankings
            .iter()
            .zip(judged)
            .map(|(r, (_, relevant))| metrics(r, relevant)[0])
            .sum::<f64>()
            / judged.len() as f64
    };

    // The semantic ranking as search takes it (windows included), and the
    // whole-abstract vectors alone.
    let options = SearchOptions {
        mode: Mode::Semantic,
        limit: FUSION_DEPTH,
        strategy: Strategy::Exact,
        ..Default::default()
    };
    let mut semantic = Vec::with_capacity(judged.len());
    let mut plain = Vec::with_capacity(judged.len());
    for (text, vector) in texts.iter().zip(&vectors) {
        let hits = papers::search::search_text(index, text, Some(vector), &options)?;
        semantic.push(hits.iter().map(|h| h.row).collect::<Vec<_>>());
        plain.push(whole_abstracts(index, vector));
    }
    println!(
        "SciFact train, {} claims: semantic nDCG@10 {:.4} (whole-abstract vectors only: {:.4})",
        judged.len(),
        mean(&semantic),
        mean(&plain)
    );

    // BM25 over what the index holds, in every analysis and setting.
    let mut by_row = index.papers()?;
    by_row.sort_by_key(|(row, _)| *row);
    let documents: Vec<Cow<str>> = by_row.iter().map(|(_, p)| p.embed_text()).collect();
    let mut lexical_runs = Vec::new();
    for analysis in [Analysis::Fold, Analysis::Stem] {
        for k1 in [0.6, 0.9, 1.2, 1.5, 2.0] {
            for b in [0.3, 0.5, 0.75, 0.9, 1.0] {
                let params = Params { k1, b };
                let bm25 = Bm25::build_with(documents.iter().map(|d| d.as_ref()), analysis, params);
                let rankings: Vec<Vec<usize>> = texts
                    .iter()
                    .map(|t| {
                        let mut hits = bm25.score(t);
                        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.row.cmp(&b.row)));
                        hits.truncate(FUSION_DEPTH);
                        hits.iter().map(|h| h.row).collect()
                    })
                    .collect();
                lexical_runs.push((mean(&rankings), analysis, params, rankings));
            }
        }
    }
    lexical_runs.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!("| lexical analysis | k1 | b | nDCG@10 |\n|---|---|---|---|");
    let default = Params::default();
    for (score, analysis, params, _) in lexical_runs
        .iter()
        .filter(|r| r.2 == default)
        .chain(&lexical_runs[..8])
    {
        println!(
            "| {analysis:?} | {} | {} | {score:.4} |",
            params.k1, params.b
        );
    }

    // Fusion of the semantic ranking with the best lexical one.
    let lexical = &lexical_runs[0].3;
    let mut fusion_runs = Vec::new();
    for k in [1.0, 5.0, 10.0, 20.0, 30.0, 60.0, 100.0] {
        for lexical_weight in [0.5, 0.75, 1.0, 1.25, 1.5, 2.0] {
            let fusion = Fusion { k, lexical_weight };
            let rankings: Vec<Vec<usize>> = semantic
                .iter()
                .zip(lexical)
                .map(|(s, l)| fuse(s, l, &fusion))
                .collect();
            fusion_runs.push((mean(&rankings), fusion));
        }
    }
    fusion_runs.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!("| fusion k | lexical weight | hybrid nDCG@10 |\n|---|---|---|");
    let current = fusion_runs.iter().filter(|r| r.1 == Fusion::DEFAULT);
    for (score, fusion) in current.chain(&fusion_runs[..8]) {
        println!("| {} | {} | {score:.4} |", fusion.k, fusion.lexical_weight);
    }
    eprintln!("tuned in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The top K of two rankings fused as `fusion` says.
fn fuse(semantic: &[usize], lexical: &[usize], fusion: &Fusion) -> Vec<usize> {
    let mut ranks: HashMap<usize, (Option<usize>, Option<usize>)> = HashMap::new();
    for (i, &row) in semantic.iter().enumerate() {
        ranks.entry(row).or_default().0 = Some(i + 1);
    }
    for (i, &row) in lexical.iter().enumerate() {
        ranks.entry(row).or_default().1 = Some(i + 1);
    }
    let mut fused: Vec<(usize, f32)> = ranks
        .into_iter()
        .map(|(row, (s, l))| (row, fusion.score(s, l)))
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused.into_iter().take(K).map(|(row, _)| row).collect()
}

/// `query-id -> relevant corpus ids` from a BEIR qrels file (header line,
/// tab-separated, CRLF line ends, score > 0 relevant).
fn read_qrels(path: &Path) -> BoxResult<HashMap<String, Vec<String>>> {
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
fn read_queries(path: &Path) -> BoxResult<Vec<(String, String)>> {
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
