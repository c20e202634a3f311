//! The collection generator of `bench/scale.sh` (too slow in Python at a
//! million records): `cargo bench --bench scale -- N DIR`; and
//! `cargo bench --bench scale -- recall INDEX`, the recall@10 of the int8
//! and binary scans against the f32 scan on an index's own vectors, for
//! several candidate pool sizes (200 query rows spread over the index,
//! each record's own vector as the query, itself excluded); and
//! `cargo bench --bench scale -- graph INDEX [ROWS]`, the HNSW graph over
//! the index's first ROWS rows (default all): build time, size, and the
//! recall@10 of its walk against the f32 scan per candidate list size; and
//! `cargo bench --bench scale -- stored INDEX`, the recall@10 of `similar`
//! through the index's stored graphs (as `papers serve` answers) against
//! `similar --exact`, over 200 rows spread over the index.
//!
//! Writes `DIR/collection.jsonl`, N records for `papers index --embeddings`:
//! texts of 4 to 8 sentences drawn from the real arXiv abstracts of
//! `../shared/bench/arxiv/arxiv-74k.jsonl.gz` (or `$PAPERS_BENCH/arxiv`),
//! a real title, and a synthetic but clustered unit vector (N/100 random
//! centres, at most 10,000, each record a centre plus Gaussian noise of
//! 0.04 per component); and `DIR/new.txt`, a dump of 100 new abstracts made
//! the same way.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

/// xorshift64* with Box-Muller normals, seeded by N so runs repeat.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn gauss(&mut self) -> f64 {
        let u = self.uniform().max(1e-300);
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * self.uniform()).cos()
    }
}

fn unit(v: &mut [f64]) {
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
}

/// Prints recall@10 of the int8 and binary scans, per pool size.
fn recall(index: &std::path::Path) -> BoxResult<()> {
    use papers::index::rows::{binarize, hamming, quantize, quantize_query, quantized_scores};
    let index = papers::index::Index::open(index)?;
    let n = index.rows();
    let vectors: Vec<Vec<f32>> = (0..n).map(|r| index.vector(r)).collect();
    let bits: Vec<Vec<u8>> = vectors.iter().map(|v| binarize(v)).collect();
    let int8: Vec<Vec<u8>> = vectors.iter().map(|v| quantize(v)).collect();
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let top = |mut scores: Vec<(usize, f32)>, k: usize| {
        scores.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scores.truncate(k);
        scores.into_iter().map(|(r, _)| r).collect::<Vec<_>>()
    };
    let pools = [20, 50, 100, 200, 500, 1000, 2000];
    let mut found = vec![[0usize; 2]; pools.len()];
    let queries: Vec<usize> = (0..200).map(|i| i * n / 200).collect();
    for &q in &queries {
        let query = &vectors[q];
        let others = || (0..n).filter(move |&r| r != q);
        let truth = top(others().map(|r| (r, dot(&vectors[r], query))).collect(), 10);
        let qbits = binarize(query);
        let by_bits: Vec<(usize, f32)> = others()
            .map(|r| (r, -(hamming(&bits[r], &qbits) as f32)))
            .collect();
        let (q8, scale) = quantize_query(query);
        let by_int8: Vec<(usize, f32)> = others()
            .map(|r| {
                let mut out = Vec::with_capacity(1);
                quantized_scores(&int8[r], int8[r].len(), &q8, scale, &mut out);
                (r, out[0])
            })
            .collect();
        for (i, &pool) in pools.iter().enumerate() {
            for (j, approx) in [&by_int8, &by_bits].iter().enumerate() {
                let candidates = top(approx.to_vec(), pool);
                let got = top(
                    candidates
                        .iter()
                        .map(|&r| (r, dot(&vectors[r], query)))
                        .collect(),
                    10,
                );
                found[i][j] += truth.iter().filter(|t| got.contains(t)).count();
            }
        }
    }
    println!(
        "recall@10 against the f32 scan, {n} rows, {} queries",
        queries.len()
    );
    println!("| candidates rescored | share of rows | int8 | binary |\n|---|---|---|---|");
    for (i, pool) in pools.iter().enumerate() {
        let [a, b] = found[i];
        let total = (queries.len() * 10) as f64;
        println!(
            "| {pool} | {:.2}% | {:.3} | {:.3} |",
            100.0 * *pool as f64 / n as f64,
            a as f64 / total,
            b as f64 / total
        );
    }
    Ok(())
}

/// Builds the graph over the first `rows` rows of `index` and prints its
/// build time, size and recall@10 against the f32 scan.
fn graph(index: &std::path::Path, rows: Option<usize>) -> BoxResult<()> {
    use papers::index::hnsw::Graph;
    use papers::vector::dot;
    let index = papers::index::Index::open(index)?;
    let n = rows.unwrap_or(index.rows()).min(index.rows());
    let dim = index.manifest().dimension;
    let vectors: Vec<f32> = (0..n).flat_map(|r| index.vector(r)).collect();
    let row = |r: usize| &vectors[r * dim..(r + 1) * dim];
    let started = std::time::Instant::now();
    let graph = Graph::build(&vectors, dim);
    let built = started.elapsed().as_secs_f64();
    let file = std::env::temp_dir().join(format!("papers-graph-{}.hnsw", std::process::id()));
    graph.save(&file)?;
    let size = std::fs::metadata(&file)?.len();
    let _ = std::fs::remove_file(&file);
    println!(
        "{n} rows: graph built in {built:.1} s ({:.0} rows/s), {:.1} MB ({:.0} bytes a row)",
        n as f64 / built,
        size as f64 / 1e6,
        size as f64 / n as f64
    );
    let queries: Vec<usize> = (0..200).map(|i| i * n / 200).collect();
    println!("| candidate list (ef) | recall@10 | mean walk |\n|---|---|---|");
    for ef in [32, 64, 100, 200] {
        let (mut found, mut spent) = (0, 0.0);
        for &q in &queries {
            let query = row(q);
            let mut exact: Vec<(usize, f32)> = (0..n)
                .filter(|&r| r != q)
                .map(|r| (r, dot(row(r), query)))
                .collect();
            exact.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            let started = std::time::Instant::now();
            let walked = graph.search(22, ef, |r| dot(row(r), query));
            spent += started.elapsed().as_secs_f64();
            let got: Vec<usize> = walked
                .iter()
                .map(|h| h.0)
                .filter(|&r| r != q)
                .take(10)
                .collect();
            found += exact[..10].iter().filter(|(r, _)| got.contains(r)).count();
        }
        println!(
            "| {ef} | {:.4} | {:.3} ms |",
            found as f64 / (10 * queries.len()) as f64,
            1000.0 * spent / queries.len() as f64
        );
    }
    Ok(())
}

/// Recall@10 of `similar` through the stored graphs against the f32 scan.
fn stored(index: &std::path::Path) -> BoxResult<()> {
    use papers::search::{similar, SearchOptions, Strategy};
    let index = papers::index::Index::open(index)?;
    let started = std::time::Instant::now();
    let graphs = index.stored_graphs();
    println!(
        "{} rows, {} stored graphs over rows 0..{}, mapped in {:.3} s",
        index.rows(),
        graphs.graphs.len(),
        graphs.covered,
        started.elapsed().as_secs_f64()
    );
    let with = |strategy| SearchOptions {
        limit: 10,
        strategy,
        ..SearchOptions::default()
    };
    let (graph, exact) = (with(Strategy::Graph), with(Strategy::Exact));
    let n = index.rows();
    let (mut found, mut walked) = (0, std::time::Duration::ZERO);
    let queries: Vec<usize> = (0..200).map(|i| i * n / 200).collect();
    for &row in &queries {
        let truth: Vec<usize> = similar(&index, row, &exact)?
            .iter()
            .map(|h| h.row)
            .collect();
        let started = std::time::Instant::now();
        let got: Vec<usize> = similar(&index, row, &graph)?
            .iter()
            .map(|h| h.row)
            .collect();
        walked += started.elapsed();
        found += truth.iter().filter(|r| got.contains(r)).count();
    }
    println!(
        "recall@10 of the stored graphs against the f32 scan: {:.4} ({} queries, mean {:.2} ms each)",
        found as f64 / (10 * queries.len()) as f64,
        queries.len(),
        walked.as_secs_f64() * 1000.0 / queries.len() as f64
    );
    Ok(())
}

/// `DIR/collection.parquet`: the records of `DIR/collection.jsonl` as
/// papers writes Parquet (`embed --records --format parquet`), read through
/// papers' own JSON Lines reader, for the import's JSON Lines against
/// Parquet comparison.
fn to_parquet(dir: &std::path::Path) -> BoxResult<()> {
    let mut fields = papers::input::Fields::default();
    fields.embeddings = true;
    let text = std::fs::read_to_string(dir.join("collection.jsonl"))?;
    let (records, bad) = papers::input::parse_jsonl(&text, &fields);
    if let Some(bad) = bad.first() {
        return Err(format!("line {}: {}", bad.line, bad.reason).into());
    }
    let vectors: Vec<Vec<f32>> = records
        .iter()
        .map(|r| r.embedding.clone().unwrap_or_default())
        .collect();
    let file = BufWriter::new(std::fs::File::create(dir.join("collection.parquet"))?);
    papers::output::parquet::write(file, &records, &vectors)?;
    eprintln!(
        "{} records in {}",
        records.len(),
        dir.join("collection.parquet").display()
    );
    Ok(())
}

fn main() -> BoxResult<()> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["recall", index] => return recall(std::path::Path::new(index)),
        ["graph", index] => return graph(std::path::Path::new(index), None),
        ["stored", index] => return stored(std::path::Path::new(index)),
        ["graph", index, rows] => return graph(std::path::Path::new(index), Some(rows.parse()?)),
        ["parquet", dir] => return to_parquet(std::path::Path::new(dir)),
        _ => {}
    }
    let [n, out] = args.as_slice() else {
        return Err("usage: cargo bench --bench scale -- N DIR".into());
    };
    let n: usize = n.parse()?;
    let out = PathBuf::from(out);
    let bench = std::env::var("PAPERS_BENCH").unwrap_or_else(|_| "../shared/bench".into());
    let source = PathBuf::from(bench).join("arxiv/arxiv-74k.jsonl.gz");
    let reader = BufReader::new(flate2::read::GzDecoder::new(std::fs::File::open(&source)?));
    let (mut sentences, mut titles) = (Vec::new(), Vec::new());
    for line in reader.lines() {
        let record: serde_json::Value = serde_json::from_str(&line?)?;
        let words = |field: &str| {
            record[field]
                .as_str()
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        titles.push(words("title"));
        for s in words("summary").split(". ").filter(|s| s.len() > 30) {
            sentences.push(format!("{}.", s.trim().trim_end_matches('.')));
        }
    }
    let mut rng = Rng(n as u64 | 1);
    let dim = 384;
    let centres: Vec<Vec<f64>> = (0..(n / 100).clamp(1, 10_000))
        .map(|_| {
            let mut c: Vec<f64> = (0..dim).map(|_| rng.gauss()).collect();
            unit(&mut c);
            c
        })
        .collect();
    let text = |rng: &mut Rng| {
        let count = 4 + rng.below(5);
        (0..count)
            .map(|_| sentences[rng.below(sentences.len())].as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    std::fs::create_dir_all(&out)?;
    let mut file = BufWriter::new(std::fs::File::create(out.join("collection.jsonl"))?);
    for i in 0..n {
        let centre = &centres[rng.below(centres.len())];
        let mut v: Vec<f64> = centre.iter().map(|x| x + 0.04 * rng.gauss()).collect();
        unit(&mut v);
        let record = serde_json::json!({
            "id": format!("syn-{i}"),
            "title": titles[rng.below(titles.len())],
            "abstract": text(&mut rng),
            "embedding": v.iter().map(|x| (x * 1e5).round() / 1e5).collect::<Vec<f64>>(),
        });
        writeln!(file, "{record}")?;
    }
    file.flush()?;
    let dump: Vec<String> = (0..100)
        .map(|_| format!("{} (new)", text(&mut rng)))
        .collect();
    std::fs::write(
        out.join("new.txt"),
        format!("Daily Papers\n\n{}\n", dump.join("\n\n")),
    )?;
    eprintln!("{n} records in {}", out.display());
    Ok(())
}
