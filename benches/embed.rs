//! A plain benchmark harness (no criterion, to keep builds short). Modes:
//!
//! - `cargo bench --bench embed -- embed [N]`: embedding throughput on the
//!   first N unique seed abstracts (default 128), one query, and the exact
//!   scan against the HNSW graph;
//! - `cargo bench --bench embed -- flops`: the encoder work of embedding all
//!   seed abstracts, in GFLOP, counted from their token lengths;
//! - `cargo bench --bench embed -- matmul`: candle's f32 matmul rate on this
//!   machine, the ceiling the encoder is compared with, and the bf16 tile
//!   product's where the processor has AMX;
//! - `cargo bench --bench embed -- precision [ROUNDS]`: the bulk encoder in
//!   f32 and in bf16 on AMX, speed and parity (`embed/precision.rs`);
//! - `cargo bench --bench embed -- query`: the parts of a one-query process:
//!   model load, the first query (weights paged in from the mapping) and
//!   the median of the next 50 (weights already in memory).
//!
//! - `cargo bench --bench embed -- encoders [N]`: the two CPU forward
//!   passes side by side, interleaved: a fresh model's first query and the
//!   throughput on the first N seed abstracts (default 128) through each,
//!   and the largest difference between their vectors.
//!
//! - `cargo bench --features cuda --bench embed -- gpu [N]` (what
//!   `bench/cuda.sh check` runs): on the first CUDA GPU, the 40 seed
//!   fixtures and 8 queries against sentence-transformers' vectors, then
//!   abstracts/s over the first N records (default 20,000) of
//!   `../shared/bench/arxiv/arxiv-74k.jsonl.gz` beside the CPU on 256 of
//!   them, as one table.
//!
//! Benchmarks are not tests: nothing here asserts a time. `bench/compare.sh`
//! runs them beside sentence-transformers.

use std::path::PathBuf;
use std::time::Instant;

use candle_core::{Device, Tensor};
use papers::corpus::Corpus;
use papers::embed::{
    amx, device, source, BertEmbedder, DeviceChoice, Embedder, ModelSpec, Precision, Workload,
};
use papers::index::hnsw::Graph;
use papers::search::{exact_scan, rank, SearchOptions};

#[path = "embed/precision.rs"]
mod precision;

fn main() -> papers::Result<()> {
    // cargo passes --bench; modes and counts are the other arguments.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    match args.first().map(String::as_str) {
        Some("flops") => flops(),
        Some("query") => query(),
        Some("encoders") => encoders(args.get(1).and_then(|n| n.parse().ok()).unwrap_or(128)),
        Some("gpu") => gpu(args.get(1).and_then(|n| n.parse().ok()).unwrap_or(20_000)),
        Some("matmul") => {
            let (f32_rate, bf16_rate) = matmul_rate();
            println!("matmul_gflops {f32_rate:.1}");
            if amx::available() {
                println!("matmul_bf16_gflops {bf16_rate:.1}");
            }
            Ok(())
        }
        Some("precision") => precision::run(args.get(1).and_then(|n| n.parse().ok()).unwrap_or(3)),
        _ => embed(args.get(1).and_then(|n| n.parse().ok()).unwrap_or(128)),
    }
}

/// The seed abstracts: `PAPERS_SEEDS` (what `bench/compare.sh --seeds`
/// passes), else `../shared/seeds`.
fn seed_texts() -> papers::Result<Vec<String>> {
    let seeds = std::env::var_os("PAPERS_SEEDS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/seeds"));
    Ok(Corpus::load(&[seeds])?
        .papers
        .into_iter()
        .map(|p| p.text)
        .collect())
}

fn load_model() -> papers::Result<BertEmbedder> {
    load_for(Workload::Bulk)
}

fn load_for(workload: Workload) -> papers::Result<BertEmbedder> {
    load_with(workload, Precision::F32)
}

fn load_with(workload: Workload, precision: Precision) -> papers::Result<BertEmbedder> {
    let files = source::resolve(&ModelSpec::default())?;
    let cpu = device::select(DeviceChoice::Cpu, &|_| {})?;
    BertEmbedder::load(&files, &cpu, workload, precision)
}

/// Multiply-adds of one MiniLM-style encoder pass over a sequence of
/// `length` tokens, times two for FLOPs: Q/K/V, attention output and the
/// two feed-forward matmuls per token, plus QKᵀ and attention·V.
fn encoder_flops(length: usize, hidden: usize, intermediate: usize, layers: usize) -> f64 {
    let (l, h, i) = (length as f64, hidden as f64, intermediate as f64);
    let per_layer = l * h * 3.0 * h + l * h * h + 2.0 * l * h * i + 2.0 * l * l * h;
    2.0 * per_layer * layers as f64
}

fn flops() -> papers::Result<()> {
    let model = load_model()?;
    let texts = seed_texts()?;
    let mut tokens = 0;
    let mut total = 0.0;
    let mut windows = 0;
    for text in &texts {
        let n = model.token_ids(text)?.len();
        tokens += n;
        total += encoder_flops(n, 384, 1536, 6);
    }
    let mut window_total = 0.0;
    for text in &texts {
        for window in model.windows(text)? {
            windows += 1;
            window_total += encoder_flops(model.token_ids(&window)?.len(), 384, 1536, 6);
        }
    }
    println!("abstracts {}", texts.len());
    println!("windows {windows}");
    println!("window_gflop {:.1}", window_total / 1e9);
    println!("word_pieces {tokens}");
    println!("encoder_gflop {:.1}", total / 1e9);
    Ok(())
}

/// GFLOP/s of candle's f32 matmul and of the bf16 tile product (0 where
/// the processor has no AMX) on the shape of a feed-forward product over a
/// batch of 2048 tokens, alternating, each the median of 5 timings of 10.
fn matmul_rate() -> (f64, f64) {
    let (m, k, n) = (2048, 384, 1536);
    let device = Device::Cpu;
    let a = Tensor::randn(0f32, 1.0, (m, k), &device).unwrap();
    let b = Tensor::randn(0f32, 1.0, (k, n), &device).unwrap();
    let input = a.flatten_all().unwrap().to_vec1::<f32>().unwrap();
    // The tile product takes the weight as PyTorch stores it (n × k).
    let weight = b
        .t()
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1::<f32>()
        .unwrap();
    let packed = amx::available().then(|| amx::Packed::new(&weight, n, k));
    let gflop = 2.0 * (m * k * n) as f64 * 10.0 / 1e9;
    let time = |run: &dyn Fn()| {
        run();
        let started = Instant::now();
        for _ in 0..10 {
            run();
        }
        gflop / started.elapsed().as_secs_f64()
    };
    let (mut f32s, mut bf16s) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        f32s.push(time(&|| {
            std::hint::black_box(a.matmul(&b).unwrap());
        }));
        if let Some(packed) = &packed {
            bf16s.push(time(&|| {
                std::hint::black_box(amx::product(&input, packed, None));
            }));
        }
    }
    (median(&mut f32s), median(&mut bf16s))
}

/// The median of `values` (0 when there are none).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

fn query() -> papers::Result<()> {
    let ms = |started: Instant| started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    let model = load_model()?;
    println!("model load: {:.1} ms", ms(started));
    let text = "positional encoding length generalization";
    let started = Instant::now();
    model.embed_one(text)?;
    println!("first query: {:.1} ms", ms(started));
    let mut times: Vec<f64> = (0..50)
        .map(|_| {
            let started = Instant::now();
            model.embed_one(text).map(|_| ms(started))
        })
        .collect::<papers::Result<_>>()?;
    times.sort_by(f64::total_cmp);
    println!("next queries: median {:.2} ms", times[times.len() / 2]);
    Ok(())
}

fn embed(count: usize) -> papers::Result<()> {
    let texts = seed_texts()?;
    let texts: Vec<&str> = texts.iter().take(count).map(String::as_str).collect();

    let started = Instant::now();
    let model = load_model()?;
    println!(
        "model load: {:.0} ms",
        started.elapsed().as_secs_f64() * 1e3
    );

    let tokens: usize = texts
        .iter()
        .map(|t| model.token_ids(t).map_or(0, |ids| ids.len()))
        .sum();
    let started = Instant::now();
    let vectors = model.embed(&texts, &mut |_| std::ops::ControlFlow::Continue(()))?;
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "embed: {} abstracts, {tokens} word pieces in {seconds:.2} s = {:.1} abstracts/s, {:.0} tokens/s",
        texts.len(),
        texts.len() as f64 / seconds,
        tokens as f64 / seconds
    );

    let started = Instant::now();
    let query = model.embed_one("positional encoding length generalization")?;
    println!("one query: {:.1} ms", started.elapsed().as_secs_f64() * 1e3);

    let dimension = model.dimension();
    let flat: Vec<f32> = vectors.concat();
    let options = SearchOptions::default();
    let rounds = 1000;
    let started = Instant::now();
    for _ in 0..rounds {
        std::hint::black_box(rank(exact_scan(&flat, dimension, &query, &[]), &options));
    }
    println!(
        "exact scan over {} vectors: {:.3} ms/query",
        texts.len(),
        started.elapsed().as_secs_f64() * 1e3 / rounds as f64
    );
    let started = Instant::now();
    let graph = Graph::build(&flat, dimension);
    println!(
        "graph build: {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    let started = Instant::now();
    for _ in 0..rounds {
        std::hint::black_box(graph.search(
            options.limit,
            papers::index::hnsw::MIN_EF_SEARCH,
            |row| papers::vector::dot(&flat[row * dimension..][..dimension], &query),
        ));
    }
    println!(
        "graph search: {:.3} ms/query",
        started.elapsed().as_secs_f64() * 1e3 / rounds as f64
    );
    Ok(())
}

fn encoders(count: usize) -> papers::Result<()> {
    let texts = seed_texts()?;
    let texts: Vec<&str> = texts.iter().take(count).map(String::as_str).collect();
    let ms = |started: Instant| started.elapsed().as_secs_f64() * 1e3;
    let mut vectors = Vec::new();
    for round in 1..=3 {
        for workload in [Workload::Queries, Workload::Bulk] {
            // A fresh model each time: the first query pays what a cold
            // `papers search` pays (the batched encoder's weight copy).
            let started = Instant::now();
            let model = load_for(workload)?;
            let backend = model.describe();
            model.embed_one("positional encoding length generalization")?;
            let first = ms(started);
            let started = Instant::now();
            let got = model.embed(&texts, &mut |_| std::ops::ControlFlow::Continue(()))?;
            let seconds = started.elapsed().as_secs_f64();
            println!(
                "round {round} {backend}: load + first query {first:.1} ms; {} abstracts at {:.1}/s",
                texts.len(),
                texts.len() as f64 / seconds
            );
            if round == 1 {
                vectors.push(got);
            }
        }
    }
    let max = vectors[0]
        .iter()
        .flatten()
        .zip(vectors[1].iter().flatten())
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    println!("largest difference between the two encoders' vectors: {max:e}");
    Ok(())
}

/// The seed fixtures and queries of `../shared/fixtures` with
/// sentence-transformers' vectors of them.
fn fixtures() -> papers::Result<(Vec<String>, Vec<Vec<f32>>)> {
    use sha2::Digest;
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    let mut by_key = std::collections::HashMap::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(shared.join("seeds"))
        .map_err(|e| papers::Error::io(shared.join("seeds"), e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| papers::Error::io(&file, e))?;
        for paragraph in text
            .split("\n\n")
            .skip(1)
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            let key = format!("{:x}", sha2::Sha256::digest(paragraph.as_bytes()));
            by_key.insert(key, paragraph.to_string());
        }
    }
    #[derive(serde::Deserialize)]
    struct Reference {
        sha256: Option<String>,
        text: Option<String>,
        embedding: Vec<f32>,
    }
    let (mut texts, mut vectors) = (Vec::new(), Vec::new());
    for name in ["reference_embeddings.jsonl", "reference_queries.jsonl"] {
        let path = shared.join("fixtures").join(name);
        let body = std::fs::read_to_string(&path).map_err(|e| papers::Error::io(&path, e))?;
        for line in body.lines().filter(|l| !l.trim().is_empty()) {
            let r: Reference = serde_json::from_str(line)
                .map_err(|e| papers::Error::Embed(format!("{}: {e}", path.display())))?;
            let text = match (r.text, r.sha256) {
                (Some(text), _) => text,
                (None, Some(key)) => by_key.get(&key).cloned().ok_or_else(|| {
                    papers::Error::Embed(format!("{}: no seed paragraph {key}", path.display()))
                })?,
                (None, None) => continue,
            };
            texts.push(text);
            vectors.push(r.embedding);
        }
    }
    Ok((texts, vectors))
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}

fn gpu(n: usize) -> papers::Result<()> {
    use std::ops::ControlFlow;
    let files = source::resolve(&ModelSpec::default())?;
    let started = Instant::now();
    let precision = std::env::var("PAPERS_PRECISION")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(Precision::F32);
    let cuda = device::select(DeviceChoice::Cuda, &|_| {})?;
    let gpu = BertEmbedder::load(&files, &cuda, Workload::Bulk, precision)?;
    let load_s = started.elapsed().as_secs_f64();
    let cpu = load_model()?;
    let go = &mut |_| ControlFlow::Continue(());

    // (1) Parity with sentence-transformers.
    let (texts, expected) = fixtures()?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let got = gpu.embed(&refs, go)?;
    let parity = got
        .iter()
        .zip(&expected)
        .map(|(g, e)| cosine(g, e))
        .fold(f64::INFINITY, f64::min);

    // (2) Throughput on real abstracts, embedded as `papers index` does
    // (title and abstract, cleaned).
    let arxiv =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/bench/arxiv/arxiv-74k.jsonl.gz");
    let corpus = Corpus::load(&[arxiv])?;
    let texts: Vec<String> = corpus
        .papers
        .iter()
        .take(n)
        .map(|p| p.embed_text().into_owned())
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    gpu.embed(&refs[..refs.len().min(256)], go)?; // kernels compiled, memory pooled
    let started = Instant::now();
    let vectors = gpu.embed(&refs, go)?;
    let gpu_s = started.elapsed().as_secs_f64();
    let sample = refs.len().min(256);
    let started = Instant::now();
    let on_cpu = cpu.embed(&refs[..sample], go)?;
    let cpu_s = started.elapsed().as_secs_f64();
    let agreement = on_cpu
        .iter()
        .zip(&vectors)
        .map(|(c, g)| cosine(c, g))
        .fold(f64::INFINITY, f64::min);

    println!("| check | result |");
    println!("|---|---|");
    println!("| model load onto the GPU | {load_s:.2} s |");
    println!(
        "| parity: min cosine to sentence-transformers, {} texts, f32 | {parity:.6} |",
        expected.len()
    );
    println!(
        "| GPU f32: {} arXiv abstracts (title + abstract) | {gpu_s:.1} s, {:.0} abstracts/s |",
        refs.len(),
        refs.len() as f64 / gpu_s
    );
    println!(
        "| CPU f32 ({} threads): first {sample} of them | {cpu_s:.1} s, {:.1} abstracts/s |",
        rayon::current_num_threads(),
        sample as f64 / cpu_s
    );
    println!("| min cosine GPU to CPU on those {sample} | {agreement:.6} |");
    Ok(())
}
