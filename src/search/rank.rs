//! Ranking: hits, the exact scan over stored vectors, the fusion of the
//! semantic and lexical rankings, and the order every result list is given
//! in (score descending, then id ascending, so ties are broken the same way
//! on every run).

use super::options::{Fusion, Mode, SearchOptions};

/// A record's place in one ranking.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ranked {
    /// 1-based rank in that ranking.
    pub rank: usize,
    /// The ranking's score: cosine for semantic, BM25 for lexical.
    pub score: f32,
}

/// One result: a record's position in the index, the score it was ranked
/// by, and where it stood in each ranking that was used.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Position of the record (records are stored in id order).
    pub row: usize,
    /// The score results are ordered by: cosine similarity (semantic),
    /// BM25 (lexical) or the fused reciprocal-rank score (hybrid).
    pub score: f32,
    /// Its place in the semantic ranking, when that was used.
    pub semantic: Option<Ranked>,
    /// Its place in the lexical ranking, when that was used and it matched.
    pub lexical: Option<Ranked>,
}

impl Hit {
    /// A hit with no per-ranking detail.
    pub fn new(row: usize, score: f32) -> Hit {
        Hit {
            row,
            score,
            semantic: None,
            lexical: None,
        }
    }
}

/// Dot product; vectors are unit length, so this is the cosine.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Scores every row of `vectors` against `query`, skipping the rows in
/// `exclude`.
pub fn exact_scan(vectors: &[f32], dimension: usize, query: &[f32], exclude: &[usize]) -> Vec<Hit> {
    vectors
        .chunks_exact(dimension)
        .enumerate()
        .filter(|(row, _)| !exclude.contains(row))
        .map(|(row, v)| Hit::new(row, dot(v, query)))
        .collect()
}

/// Keeps the best `k` hits (ties by row), unordered.
pub fn keep_best(hits: &mut Vec<Hit>, k: usize) {
    if k == 0 {
        hits.clear();
    } else if hits.len() > k {
        hits.select_nth_unstable_by(k - 1, order);
        hits.truncate(k);
    }
}

/// The best `k` rows of `0..rows` that `keep` accepts, by `score`,
/// unordered; scored in parallel, a chunk of rows at a time.
pub fn top_k(
    rows: usize,
    k: usize,
    score: impl Fn(usize) -> f32 + Sync,
    keep: impl Fn(usize) -> bool + Sync,
) -> Vec<Hit> {
    top_k_chunks(rows, k, |range, out| out.extend(range.map(&score)), keep)
}

/// [`top_k`] with the scores of a chunk of rows computed in one call
/// (`scores(range, out)` appends one score per row of `range`), for
/// scoring loops that vectorise over rows.
pub fn top_k_chunks(
    rows: usize,
    k: usize,
    scores: impl Fn(std::ops::Range<usize>, &mut Vec<f32>) + Sync,
    keep: impl Fn(usize) -> bool + Sync,
) -> Vec<Hit> {
    use rayon::prelude::*;
    const CHUNK: usize = 8192;
    if k == 0 {
        return Vec::new();
    }
    let best = |hits: &mut Vec<Hit>| keep_best(hits, k);
    (0..rows.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let range = c * CHUNK..((c + 1) * CHUNK).min(rows);
            let mut buffer = Vec::with_capacity(range.len());
            scores(range.clone(), &mut buffer);
            let mut hits: Vec<Hit> = range
                .zip(buffer)
                .filter(|&(r, _)| keep(r))
                .map(|(r, s)| Hit::new(r, s))
                .collect();
            best(&mut hits);
            hits
        })
        .reduce(Vec::new, |mut a, b| {
            a.extend(b);
            best(&mut a);
            a
        })
}

fn order(a: &Hit, b: &Hit) -> std::cmp::Ordering {
    b.score.total_cmp(&a.score).then(a.row.cmp(&b.row))
}

/// Sorts a whole ranking best first and records each hit's place in it.
fn ranking(mut hits: Vec<Hit>, lexical: bool) -> Vec<Hit> {
    hits.sort_by(order);
    for (i, hit) in hits.iter_mut().enumerate() {
        let place = Some(Ranked {
            rank: i + 1,
            score: hit.score,
        });
        if lexical {
            hit.lexical = place;
        } else {
            hit.semantic = place;
        }
    }
    hits
}

/// Ranks semantic hits (cosine scores) and lexical hits (BM25 scores) as
/// `options.mode` says. Hybrid fuses them by reciprocal rank; the score
/// floor applies to the cosine in semantic and hybrid modes and to BM25 in
/// lexical mode. Either list may be partial (graph candidates, matching
/// records only).
pub fn combine(semantic: Vec<Hit>, lexical: Vec<Hit>, options: &SearchOptions) -> Vec<Hit> {
    let semantic = ranking(semantic, false);
    let lexical = ranking(lexical, true);
    let floor = options.min_score;
    match options.mode {
        Mode::Semantic => rank(semantic, options),
        Mode::Lexical => rank(lexical, options),
        Mode::Hybrid => {
            let mut fused: std::collections::HashMap<usize, Hit> =
                std::collections::HashMap::with_capacity(semantic.len());
            for hit in semantic {
                fused.insert(hit.row, hit);
            }
            for hit in lexical {
                fused
                    .entry(hit.row)
                    .or_insert_with(|| Hit::new(hit.row, 0.0))
                    .lexical = hit.lexical;
            }
            let hits = fused
                .into_values()
                .filter(|h| floor.is_none_or(|f| h.semantic.is_some_and(|s| s.score >= f)))
                .map(|mut h| {
                    h.score = Fusion::DEFAULT
                        .score(h.semantic.map(|r| r.rank), h.lexical.map(|r| r.rank));
                    h
                })
                .collect();
            rank(
                hits,
                &SearchOptions {
                    min_score: None,
                    ..*options
                },
            )
        }
    }
}

/// Orders hits best first (ties by row, the order records were added), applies the
/// score floor and keeps at most `limit`.
pub fn rank(mut hits: Vec<Hit>, options: &SearchOptions) -> Vec<Hit> {
    if let Some(floor) = options.min_score {
        hits.retain(|h| h.score >= floor);
    }
    if hits.len() > options.limit && options.limit > 0 {
        hits.select_nth_unstable_by(options.limit - 1, order);
        hits.truncate(options.limit);
    }
    hits.sort_by(order);
    hits.truncate(options.limit);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_orders_by_score_then_row_and_applies_floor() {
        let hits = vec![
            Hit::new(3, 0.5),
            Hit::new(1, 0.9),
            Hit::new(0, 0.5),
            Hit::new(2, 0.1),
        ];
        let options = SearchOptions {
            limit: 3,
            min_score: Some(0.2),
            ..Default::default()
        };
        let rows: Vec<usize> = rank(hits, &options).iter().map(|h| h.row).collect();
        assert_eq!(rows, [1, 0, 3]);
    }

    #[test]
    fn top_k_keeps_the_best_accepted_rows() {
        let scores: Vec<f32> = (0..20_000).map(|i| ((i * 7919) % 10_007) as f32).collect();
        let mut hits = top_k(scores.len(), 5, |r| scores[r], |r| r % 2 == 0);
        hits.sort_by(order);
        let mut expected: Vec<(usize, f32)> = scores
            .iter()
            .copied()
            .enumerate()
            .filter(|(r, _)| r % 2 == 0)
            .collect();
        expected.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let rows: Vec<usize> = hits.iter().map(|h| h.row).collect();
        let want: Vec<usize> = expected[..5].iter().map(|e| e.0).collect();
        assert_eq!(rows, want);
        assert!(top_k(10, 0, |_| 1.0, |_| true).is_empty());
    }

    #[test]
    fn hybrid_fuses_by_reciprocal_rank() {
        // Semantic order 0, 1, 2; lexical matches 2 then 1.
        let semantic = vec![Hit::new(0, 0.9), Hit::new(1, 0.8), Hit::new(2, 0.7)];
        let lexical = vec![Hit::new(1, 3.0), Hit::new(2, 5.0)];
        let options = SearchOptions::default();
        let hits = combine(semantic.clone(), lexical.clone(), &options);
        let rows: Vec<usize> = hits.iter().map(|h| h.row).collect();
        // 2: 1/63 + 1/61 > 1: 1/62 + 1/62 > 0: 1/61 only.
        assert_eq!(rows, [2, 1, 0]);
        assert_eq!(hits[0].lexical.map(|r| r.rank), Some(1));
        assert_eq!(hits[0].semantic.map(|r| r.rank), Some(3));
        assert_eq!(hits[2].lexical, None);
        let floored = combine(
            semantic,
            lexical,
            &SearchOptions {
                min_score: Some(0.75),
                ..options
            },
        );
        assert_eq!(floored.len(), 2, "row 2's cosine is under the floor");
    }
}
