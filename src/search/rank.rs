//! Ranking: hits, the exact scan over stored vectors, the fusion of the
//! semantic and lexical rankings, and the order every result list is given
//! in (score descending, then id ascending, so ties are broken the same way
//! on every run).

use std::collections::HashMap;

use super::options::{Mode, SearchOptions};
use super::relevance;
pub use crate::hit::{Hit, Ranked};
use crate::vector::dot;

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
    // A request past its deadline scores no more chunks; the caller's
    // check turns the partial answer into an error.
    let deadline = crate::deadline::current();
    (0..rows.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            if deadline.passed() {
                return Vec::new();
            }
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
/// `options.mode` says, by their evidence ([`super::relevance`]), and
/// scores them on the printed scale: `bound` is the most the query's terms
/// could score in BM25, `terms` how many distinct terms it has, `centre`
/// the query's cosine with the collection's centre (hybrid mode's no-match
/// rule reads it),
/// `cosine(row)` a record's cosine with the query for hybrid candidates the
/// semantic list did not reach. Without `options.min_score`, a query whose
/// best hits fail the mode's no-match rule gets none and one that passes
/// gets its `limit` best (`decision` may say it was decided already); with
/// it, hits scoring under it are left out (0 keeps the `limit` best). Either
/// list may be partial (graph candidates, matching records only).
pub fn combine(
    semantic: Vec<Hit>,
    lexical: Vec<Hit>,
    (bound, terms, centre): (f32, usize, f32),
    cosine: &dyn Fn(usize) -> f32,
    options: &SearchOptions,
    decision: Decision,
) -> Vec<Hit> {
    let semantic = ranking(semantic, false);
    let lexical = ranking(lexical, true);
    let share = |bm25: f32| {
        if bound > 0.0 {
            (bm25 / bound).clamp(0.0, 1.0)
        } else {
            0.0
        }
    };
    let mode = options.mode;
    let mut hits: Vec<Hit> = match mode {
        Mode::Semantic => semantic,
        Mode::Lexical => lexical,
        Mode::Hybrid => {
            let mut fused: HashMap<usize, Hit> = HashMap::with_capacity(semantic.len());
            for hit in semantic {
                fused.insert(hit.row, hit);
            }
            for hit in lexical {
                fused
                    .entry(hit.row)
                    .or_insert_with(|| Hit::new(hit.row, 0.0))
                    .lexical = hit.lexical;
            }
            fused.into_values().collect()
        }
    };
    // Each hit's evidence, with the measurements the no-match rule reads.
    let mut measured: Vec<(f32, f32, f32)> = Vec::with_capacity(hits.len());
    for hit in &mut hits {
        let cos = hit.semantic.map_or_else(|| cosine(hit.row), |r| r.score);
        let bm25 = hit.lexical.map_or(0.0, |r| share(r.score));
        hit.score = relevance::evidence(mode, cos, bm25, terms);
        measured.push((hit.score, cos, bm25));
    }
    measured.sort_by(|a, b| b.0.total_cmp(&a.0));
    let best = measured.first().map_or(f32::NEG_INFINITY, |m| m.0);
    let top = &measured[..measured.len().min(NO_MATCH_DEPTH)];
    let (best_cosine, best_share) = top
        .iter()
        .fold((f32::MIN, 0f32), |(c, s), m| (c.max(m.1), s.max(m.2)));
    let evidence = relevance::QueryEvidence {
        best_cosine,
        best_share,
        terms,
        centre,
    };
    let judged = decision == Decision::ByRule && options.min_score.is_none();
    if judged && !relevance::matching(mode).matches(&evidence) {
        return Vec::new();
    }
    let scale = relevance::scale(mode);
    for hit in &mut hits {
        hit.score = scale.score(hit.score, best);
    }
    rank(hits, options)
}

/// Who decides whether a text query matches anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The mode's own no-match rule, from the hits [`combine`] ranks.
    ByRule,
    /// Decided before, to match: lexical mode with the query's meaning at
    /// hand asks hybrid mode's rule first (`retrieve::search_parsed`).
    Matched,
}

/// How many of a query's best hits the no-match rule reads.
const NO_MATCH_DEPTH: usize = 10;

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
    fn hybrid_scores_by_calibrated_probability() {
        // Cosines 0.9, 0.8, 0.7; lexical matches 2 strongly, 1 weakly.
        let semantic = vec![Hit::new(0, 0.9), Hit::new(1, 0.8), Hit::new(2, 0.7)];
        let lexical = vec![Hit::new(1, 1.0), Hit::new(2, 9.0), Hit::new(5, 2.0)];
        let cosine = |row: usize| if row == 5 { 0.3 } else { f32::NAN };
        let options = SearchOptions {
            min_score: Some(0.0),
            ..Default::default()
        };
        let hits = combine(
            semantic.clone(),
            lexical.clone(),
            (10.0, 3, 0.0),
            &cosine,
            &options,
            Decision::ByRule,
        );
        let rows: Vec<usize> = hits.iter().map(|h| h.row).collect();
        let p = |c, b| relevance::evidence(Mode::Hybrid, c, b, 3);
        let mut expected = [
            (0, p(0.9, 0.0)),
            (1, p(0.8, 0.1)),
            (2, p(0.7, 0.9)),
            (5, p(0.3, 0.2)),
        ];
        expected.sort_by(|a, b| b.1.total_cmp(&a.1));
        assert_eq!(rows, expected.map(|e| e.0));
        let scale = relevance::scale(Mode::Hybrid);
        for (hit, (_, e)) in hits.iter().zip(expected) {
            assert!((hit.score - scale.score(e, expected[0].1)).abs() < 1e-6);
            assert!((0.0..=1.0).contains(&hit.score));
        }
        assert_eq!(
            hits.iter()
                .find(|h| h.row == 2)
                .unwrap()
                .lexical
                .map(|r| r.rank),
            Some(1)
        );
        assert_eq!(hits.iter().find(|h| h.row == 0).unwrap().lexical, None);
        let floor = hits[1].score;
        let floored = combine(
            semantic,
            lexical,
            (10.0, 3, 0.0),
            &cosine,
            &SearchOptions {
                min_score: Some(floor),
                ..options
            },
            Decision::ByRule,
        );
        assert_eq!(floored.len(), 2, "the floor applies to the probability");
    }

    #[test]
    fn no_match_is_decided_per_query_and_a_match_lists_the_k_best() {
        for mode in [Mode::Semantic, Mode::Hybrid] {
            let options = SearchOptions {
                mode,
                ..Default::default()
            };
            // A strong best hit: every hit is listed, the weak one too.
            let strong = vec![Hit::new(0, 0.95), Hit::new(1, -0.2)];
            let words = vec![Hit::new(0, 10.0)];
            let by_rule = Decision::ByRule;
            let hits = combine(strong, words, (10.0, 3, 0.0), &|_| 0.0, &options, by_rule);
            assert_eq!(hits.len(), 2, "{mode:?}: a match lists its k best");
            assert!(hits[0].score > 0.5 && hits[1].score < hits[0].score);
            // Nothing near: no hit at all, unless --min-score 0 asks.
            let weak = vec![Hit::new(0, 0.12), Hit::new(1, 0.05)];
            let measures = (0.0, 3, 0.0);
            let none = combine(
                weak.clone(),
                Vec::new(),
                measures,
                &|_| 0.0,
                &options,
                by_rule,
            );
            assert!(none.is_empty(), "{mode:?}: a cosine of 0.12 is no match");
            let all = SearchOptions {
                min_score: Some(0.0),
                ..options
            };
            assert_eq!(
                combine(weak, Vec::new(), measures, &|_| 0.0, &all, by_rule).len(),
                2
            );
        }
    }

    #[test]
    fn a_lexical_query_decided_to_match_lists_even_weak_word_hits() {
        let options = SearchOptions {
            mode: Mode::Lexical,
            ..Default::default()
        };
        // One query term of three, weakly: the words-only rule says no match.
        let weak = || vec![Hit::new(3, 1.0), Hit::new(4, 0.5)];
        let measures = (30.0, 3, 0.0);
        let none = |_: usize| 0.0;
        assert!(combine(vec![], weak(), measures, &none, &options, Decision::ByRule).is_empty());
        let hits = combine(vec![], weak(), measures, &none, &options, Decision::Matched);
        assert_eq!(hits.iter().map(|h| h.row).collect::<Vec<_>>(), [3, 4]);
        assert!(hits[0].score > hits[1].score);
    }
}
