//! `cargo bench --bench embed -- precision [ROUNDS]`: the CPU's bulk
//! encoder in f32 and in bf16 on the matrix unit, side by side on the seed
//! abstracts, and how alike their vectors rank.
//!
//! - speed: both encoders over every unique seed abstract, alternating,
//!   ROUNDS times (default 3): abstracts/s and GFLOP/s of encoder work
//!   (windows left out: they are the same for both);
//! - the products alone: candle's f32 matmul and the bf16 tile product on
//!   one feed-forward shape (2048 × 384 by 384 × 1536), interleaved;
//! - parity: the least and mean cosine of each seed's bf16 vector to its
//!   f32 one, and for the labelled queries of `eval/queries.jsonl`
//!   (embedded in f32, as queries are) the overlap of their 10 nearest
//!   seeds among the bf16 vectors with their 10 nearest among the f32 ones.
//!
//! On a processor without AMX it says so and measures nothing.

use std::time::Instant;

use papers::embed::{amx, Embedder, Precision, Workload};
use papers::search::top_k;
use papers::vector::dot;

use super::{encoder_flops, load_with, matmul_rate, median, seed_texts};

pub fn run(rounds: usize) -> papers::Result<()> {
    if !amx::available() {
        println!("no AMX bf16 tiles on this processor (or not granted by the system): nothing to compare");
        return Ok(());
    }
    let texts = seed_texts()?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let f32_model = load_with(Workload::Bulk, Precision::F32)?;
    let bf16_model = load_with(Workload::Bulk, Precision::Bf16)?;
    let mut flops = 0.0;
    for text in &refs {
        flops += encoder_flops(f32_model.token_ids(text)?.len(), 384, 1536, 6);
    }
    println!(
        "seeds: {} abstracts, {:.0} GFLOP of encoder work",
        refs.len(),
        flops / 1e9
    );

    let mut rates: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut vectors: [Vec<Vec<f32>>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..rounds.max(1) {
        for (i, model) in [&f32_model, &bf16_model].into_iter().enumerate() {
            let started = Instant::now();
            vectors[i] = model.embed(&refs, &mut |_| std::ops::ControlFlow::Continue(()))?;
            rates[i].push(started.elapsed().as_secs_f64());
        }
    }
    for (i, model) in [&f32_model, &bf16_model].into_iter().enumerate() {
        let seconds = median(&mut rates[i]);
        println!(
            "{}: {:.1} abstracts/s, {:.1} GFLOP/s of encoder work (median of {})",
            model.describe(),
            refs.len() as f64 / seconds,
            flops / seconds / 1e9,
            rates[i].len()
        );
    }
    let (f32_rate, bf16_rate) = matmul_rate();
    println!("matmul_gflops {f32_rate:.1}");
    println!("matmul_bf16_gflops {bf16_rate:.1}");

    let cosines: Vec<f64> = vectors[0]
        .iter()
        .zip(&vectors[1])
        .map(|(a, b)| f64::from(dot(a, b)))
        .collect();
    let least = cosines.iter().copied().fold(f64::INFINITY, f64::min);
    let mean = cosines.iter().sum::<f64>() / cosines.len() as f64;
    println!("least_cosine {least:.6}");
    println!("mean_cosine {mean:.6}");

    let queries = labelled_queries()?;
    let query_model = load_with(Workload::Queries, Precision::F32)?;
    let mut overlap = 0.0;
    let mut least_overlap = 10;
    for query in &queries {
        let q = query_model.embed_one(query)?;
        let top = |vectors: &[Vec<f32>]| -> Vec<usize> {
            top_k(vectors.len(), 10, |i| dot(&q, &vectors[i]), |_| true)
                .iter()
                .map(|hit| hit.row)
                .collect()
        };
        let (a, b) = (top(&vectors[0]), top(&vectors[1]));
        let shared = a.iter().filter(|i| b.contains(i)).count();
        least_overlap = least_overlap.min(shared);
        overlap += shared as f64 / 10.0;
    }
    println!(
        "overlap_at_10 {:.4} over {} queries (least {least_overlap} of 10)",
        overlap / queries.len() as f64,
        queries.len()
    );
    Ok(())
}

/// The query texts of `eval/queries.jsonl`.
fn labelled_queries() -> papers::Result<Vec<String>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("eval/queries.jsonl");
    let text = std::fs::read_to_string(&path).map_err(|e| papers::Error::io(&path, e))?;
    Ok(text
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|v| v["query"].as_str().map(str::to_string))
        .collect())
}
