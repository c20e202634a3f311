//! `cargo bench --bench beir -- calibrate`: fits the logistic calibration
//! of `papers::search::relevance` on SciFact's train claims and checks it.
//!
//! For each claim, the candidates are the union of its 100 best records by
//! cosine (windows included, as search computes it) and by BM25; each has
//! its cosine, its BM25 share (BM25 over the query's bound) and a label
//! (named in the qrels or not). Each mode's coefficients are fitted by
//! Newton's method on the train claims; the test claims then show how well
//! the library's constants hold (log loss, a reliability table), how
//! and how ranking by the hybrid probability compares with reciprocal-rank
//! fusion. The printed score and the no-match rule built on this evidence
//! are fitted by `bench/score.py` on the pools `-- dump` writes.

use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::path::Path;

use papers::embed::Embedder;
use papers::index::Index;
use papers::search::relevance::{self, Calibration};
use papers::search::{search_text, Mode, SearchOptions, Strategy};

use super::fusion::Fusion;
use papers::vector::dot;

use super::{metrics, BoxResult, K};

/// Candidates per ranking.
const POOL: usize = 100;

#[derive(Clone, Copy)]
pub(crate) struct Candidate {
    pub(crate) row: usize,
    pub(crate) cosine: f32,
    pub(crate) share: f32,
    pub(crate) semantic: Option<usize>,
    pub(crate) lexical: Option<usize>,
    /// The query's distinct analysed terms.
    pub(crate) terms: usize,
    pub(crate) relevant: bool,
}

type Claims<'a> = [(&'a str, HashSet<usize>)];

pub fn run(
    index: &Index,
    model: &dyn Embedder,
    train: &Claims,
    test: &Claims,
    root: &Path,
) -> BoxResult<()> {
    let train_pools = pools(index, model, train)?;
    let test_pools = pools(index, model, test)?;
    let (seeds_index, labelled) = super::seeds::labelled(root)?;
    let seeds_queries: Vec<(&str, HashSet<usize>)> = labelled
        .iter()
        .map(|(q, r)| (q.as_str(), r.clone()))
        .collect();
    let seed_pools = pools(&seeds_index, model, &seeds_queries)?;
    println!(
        "SciFact: {} train claims, {} test claims; the seeds: {} labelled queries; pools of up to {POOL} + {POOL} candidates",
        train.len(),
        test.len(),
        seeds_queries.len(),
    );
    // Fitted on SciFact's train claims and the seeds' queries together:
    // the claims are sentences, the seeds' queries a few typed words.
    let fitting: Vec<Vec<Candidate>> = train_pools.iter().chain(&seed_pools).cloned().collect();

    println!("\n| mode | intercept | cosine | BM25 share | ln(query terms) | fit log loss | SciFact test log loss (fitted) | (library) | seeds log loss (library) |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for mode in [Mode::Semantic, Mode::Lexical, Mode::Hybrid] {
        let fitted = fit(mode, &fitting);
        let library = relevance::calibration(mode);
        println!(
            "| {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.4} | {:.4} | {:.4} | {:.4} |",
            mode.name(),
            fitted.intercept,
            fitted.cosine,
            fitted.lexical,
            fitted.length,
            log_loss(mode, &fitted, &fitting),
            log_loss(mode, &fitted, &test_pools),
            log_loss(mode, &library, &test_pools),
            log_loss(mode, &library, &seed_pools),
        );
    }
    println!("\nThe seeds' queries, top hit of each (library constants): mean probability and share relevant");
    println!("| mode | mean probability of the top hit | top hit relevant |\n|---|---|---|");
    for mode in [Mode::Semantic, Mode::Lexical, Mode::Hybrid] {
        let library = relevance::calibration(mode);
        let tops: Vec<(f32, bool, usize)> = seed_pools
            .iter()
            .filter_map(|p| top(mode, &library, p).first().copied())
            .collect();
        println!(
            "| {} | {:.3} | {:.3} |",
            mode.name(),
            tops.iter().map(|t| t.0 as f64).sum::<f64>() / tops.len() as f64,
            tops.iter().filter(|t| t.1).count() as f64 / tops.len() as f64
        );
    }

    println!("\nReliability on the test claims (hybrid, library constants):");
    println!("| probability | candidates | mean probability | share relevant |\n|---|---|---|---|");
    let edges = [0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.01];
    let mut bins = vec![(0usize, 0f64, 0usize); edges.len() - 1];
    for c in test_pools.iter().flatten() {
        let p = relevance::HYBRID.probability(c.cosine, c.share, c.terms) as f64;
        let bin = edges
            .windows(2)
            .position(|e| p >= e[0] && p < e[1])
            .unwrap_or(0);
        bins[bin].0 += 1;
        bins[bin].1 += p;
        bins[bin].2 += c.relevant as usize;
    }
    for (e, (n, sum, hits)) in edges.windows(2).zip(bins) {
        if n > 0 {
            println!(
                "| {:.2}-{:.2} | {n} | {:.3} | {:.3} |",
                e[0],
                e[1].min(1.0),
                sum / n as f64,
                hits as f64 / n as f64
            );
        }
    }

    println!("\nRanking the same candidates (test claims, nDCG@10 / Recall@10 / MRR@10):");
    println!("| order | nDCG@10 | Recall@10 | MRR@10 |\n|---|---|---|---|");
    type Order<'a> = (&'a str, &'a dyn Fn(&Candidate) -> f32);
    let orders: [Order; 3] = [
        ("reciprocal-rank fusion (k 5, lexical weight 1.25)", &|c| {
            Fusion::DEFAULT.score(c.semantic, c.lexical)
        }),
        ("hybrid probability (library constants)", &|c| {
            relevance::HYBRID.probability(c.cosine, c.share, c.terms)
        }),
        ("semantic probability (cosine)", &|c| c.cosine),
    ];
    for (name, score) in orders {
        let m = mean_metrics(&test_pools, test, score);
        println!("| {name} | {:.4} | {:.4} | {:.4} |", m[0], m[1], m[2]);
    }

    Ok(())
}

/// Each claim's candidates with their measurements and labels.
pub(crate) fn pools(
    index: &Index,
    model: &dyn Embedder,
    claims: &Claims,
) -> BoxResult<Vec<Vec<Candidate>>> {
    let texts: Vec<&str> = claims.iter().map(|(t, _)| *t).collect();
    let vectors = model.embed(&texts, &mut |_| ControlFlow::Continue(()))?;
    let lexical = index.lexical()?;
    let options = SearchOptions {
        mode: Mode::Semantic,
        limit: POOL,
        strategy: Strategy::Exact,
        min_score: Some(0.0),
        ..Default::default()
    };
    let mut out = Vec::with_capacity(claims.len());
    for ((text, relevant), vector) in claims.iter().zip(&vectors) {
        let mut pool: HashMap<usize, Candidate> = HashMap::new();
        let terms = papers::analysis::Analysis::CURRENT
            .distinct_terms(text)
            .len();
        for hit in search_text(index, text, Some(vector), &options)? {
            let s = hit.semantic.expect("semantic mode ranks by cosine");
            pool.insert(
                hit.row,
                Candidate {
                    row: hit.row,
                    cosine: s.score,
                    share: 0.0,
                    semantic: Some(s.rank),
                    lexical: None,
                    terms,
                    relevant: relevant.contains(&hit.row),
                },
            );
        }
        let bound = lexical.bound(&papers::analysis::Analysis::CURRENT.distinct_terms(text));
        let mut scored = lexical.score(text)?;
        // Every candidate carries its own BM25 share, as search gives it
        // (a cosine candidate past the BM25 pool too).
        let words: HashMap<usize, f32> = scored.iter().copied().collect();
        for c in pool.values_mut() {
            c.share = words
                .get(&c.row)
                .map_or(0.0, |bm25| (bm25 / bound).clamp(0.0, 1.0));
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for (rank, (row, bm25)) in scored.into_iter().take(POOL).enumerate() {
            let c = pool.entry(row).or_insert_with(|| Candidate {
                row,
                cosine: dot(&index.vector(row), vector),
                share: 0.0,
                semantic: None,
                lexical: None,
                terms,
                relevant: relevant.contains(&row),
            });
            c.share = (bm25 / bound).clamp(0.0, 1.0);
            c.lexical = Some(rank + 1);
        }
        out.push(pool.into_values().collect());
    }
    Ok(out)
}

/// Whether a candidate is one a mode would have: semantic mode sees the
/// cosine ranking, lexical mode the BM25 one, hybrid both.
fn seen(mode: Mode, c: &Candidate) -> bool {
    match mode {
        Mode::Semantic => c.semantic.is_some(),
        Mode::Lexical => c.lexical.is_some(),
        Mode::Hybrid => true,
    }
}

fn features(mode: Mode, c: &Candidate) -> Vec<f64> {
    let length = relevance::query_length(c.terms) as f64;
    match mode {
        Mode::Semantic => vec![1.0, c.cosine as f64, length],
        Mode::Lexical => vec![1.0, c.share as f64, length],
        Mode::Hybrid => vec![1.0, c.cosine as f64, c.share as f64, length],
    }
}

/// Maximum-likelihood logistic coefficients (Newton's method, a tiny
/// ridge for stability).
fn fit(mode: Mode, pools: &[Vec<Candidate>]) -> Calibration {
    let data: Vec<(Vec<f64>, f64)> = pools
        .iter()
        .flatten()
        .filter(|c| seen(mode, c))
        .map(|c| (features(mode, c), c.relevant as u8 as f64))
        .collect();
    let d = data[0].0.len();
    let mut w = vec![0f64; d];
    for _ in 0..50 {
        let mut grad = vec![0f64; d];
        let mut hess = vec![vec![0f64; d]; d];
        for (x, y) in &data {
            let z: f64 = w.iter().zip(x).map(|(a, b)| a * b).sum();
            let p = 1.0 / (1.0 + (-z).exp());
            for i in 0..d {
                grad[i] += (p - y) * x[i];
                for j in 0..d {
                    hess[i][j] += p * (1.0 - p) * x[i] * x[j];
                }
            }
        }
        for (i, row) in hess.iter_mut().enumerate() {
            row[i] += 1e-6;
            grad[i] += 1e-6 * w[i];
        }
        let step = solve(hess, grad);
        let size: f64 = step.iter().map(|s| s.abs()).sum();
        for (wi, s) in w.iter_mut().zip(step) {
            *wi -= s;
        }
        if size < 1e-9 {
            break;
        }
    }
    let (cosine, lexical, length) = match mode {
        Mode::Semantic => (w[1], 0.0, w[2]),
        Mode::Lexical => (0.0, w[1], w[2]),
        Mode::Hybrid => (w[1], w[2], w[3]),
    };
    Calibration {
        intercept: w[0] as f32,
        cosine: cosine as f32,
        lexical: lexical as f32,
        length: length as f32,
    }
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n)
            .max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))
            .unwrap_or(col);
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..n {
            let f = a[row][col] / a[col][col];
            let pivot_row = a[col].clone();
            for (x, p) in a[row].iter_mut().zip(&pivot_row).skip(col) {
                *x -= f * p;
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = vec![0f64; n];
    for row in (0..n).rev() {
        let rest: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    x
}

fn log_loss(mode: Mode, cal: &Calibration, pools: &[Vec<Candidate>]) -> f64 {
    let (mut sum, mut n) = (0f64, 0usize);
    for c in pools.iter().flatten().filter(|c| seen(mode, c)) {
        let p = (cal.probability(c.cosine, c.share, c.terms) as f64).clamp(1e-7, 1.0 - 1e-7);
        sum -= if c.relevant { p.ln() } else { (1.0 - p).ln() };
        n += 1;
    }
    sum / n as f64
}

/// Each claim's top 10 in `mode` by the calibrated probability.
fn top(mode: Mode, cal: &Calibration, pool: &[Candidate]) -> Vec<(f32, bool, usize)> {
    let mut scored: Vec<(f32, bool, usize)> = pool
        .iter()
        .filter(|c| seen(mode, c))
        .map(|c| {
            (
                cal.probability(c.cosine, c.share, c.terms),
                c.relevant,
                c.row,
            )
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)));
    scored.truncate(K);
    scored
}

fn mean_metrics(
    pools: &[Vec<Candidate>],
    claims: &Claims,
    score: &dyn Fn(&Candidate) -> f32,
) -> [f64; 3] {
    let mut sums = [0f64; 3];
    for (pool, (_, relevant)) in pools.iter().zip(claims) {
        let mut order: Vec<(f32, usize)> = pool.iter().map(|c| (score(c), c.row)).collect();
        order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let ranked: Vec<usize> = order.into_iter().map(|(_, r)| r).collect();
        for (s, v) in sums.iter_mut().zip(metrics(&ranked, relevant)) {
            *s += v;
        }
    }
    sums.map(|s| s / claims.len() as f64)
}
