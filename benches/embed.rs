//! A plain benchmark harness (no criterion, to keep builds short):
//! embedding throughput on the seed abstracts and query latency of the
//! exact scan against the HNSW graph. Run with
//! `cargo bench --bench embed -- [ABSTRACTS]` (default 128 abstracts).
//! Benchmarks are not tests: nothing here asserts a time.

use std::path::PathBuf;
use std::time::Instant;

use papers::corpus::Corpus;
use papers::embed::{device, source, BertEmbedder, DeviceChoice, Embedder, ModelSpec};
use papers::index::hnsw::Graph;
use papers::search::{exact_scan, rank, SearchOptions};

fn main() -> papers::Result<()> {
    let count: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(128);
    let seeds = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/seeds");
    let corpus = Corpus::load(&[seeds])?;
    let texts: Vec<&str> = corpus
        .papers
        .iter()
        .take(count)
        .map(|p| p.text.as_str())
        .collect();

    let started = Instant::now();
    let files = source::resolve(&ModelSpec::default())?;
    let model = BertEmbedder::load(&files, &device::select(DeviceChoice::Cpu)?)?;
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
        std::hint::black_box(rank(exact_scan(&flat, dimension, &query, None), &options));
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
        std::hint::black_box(graph.search(&query, options.limit));
    }
    println!(
        "graph search: {:.3} ms/query",
        started.elapsed().as_secs_f64() * 1e3 / rounds as f64
    );
    Ok(())
}
