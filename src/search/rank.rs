//! Ranking: hits, the exact scan over stored vectors, the fusion of the
//! semantic and lexical rankings, and the order every result list is given
//! in (score descending, then id ascending, so ties are broken the same way
//! on every run).

use std::collections::HashMap;

use super::options::{Mode, SearchOptions};
use super::relevance;
use super::verdict::Verdict;
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

/// A text query's ranking and its verdict.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ranking {
    /// The hits, best first.
    pub hits: Vec<Hit>,
    /// Whether the index holds anything about the query.
    pub verdict: Verdict,
}

/// What [`combine`] reads of a query besides its two lists: `bound` is
/// the most the query's terms could score in BM25, `terms` how many
/// distinct terms it has, `centre` its cosine with the collection's
/// centre (hybrid mode's no-match rule reads it), `cosine(row)` and
/// `bm25(row)` a record's cosine with the query and BM25 score for
/// hybrid candidates that one list did not reach.
pub struct Measures<'a> {
    /// BM25's most for the query.
    pub bound: f32,
    /// The query's distinct analysed terms.
    pub terms: usize,
    /// The query's cosine with the collection's centre.
    pub centre: f32,
    /// A record's cosine with the query.
    pub cosine: &'a dyn Fn(usize) -> f32,
    /// A record's BM25 score for the query.
    pub bm25: &'a dyn Fn(usize) -> f32,
}

/// Ranks semantic hits (cosine scores) and lexical hits (BM25 scores) as
/// `options.mode` says, by their evidence ([`super::relevance`]), and
/// scores each on the printed scale from its own measurements alone, so a
/// record scores the same whatever else the lists hold. The verdict comes
/// from the mode's no-match rule over the best ten and the best score
/// (`decision` may say it was decided already); with `options.strict`, a
/// query whose verdict is `none` gets no hits. `options.min_score` leaves
/// out hits scoring under it. Either list may be partial (graph
/// candidates, matching records only).
pub fn combine(
    semantic: Vec<Hit>,
    lexical: Vec<Hit>,
    measures: &Measures,
    options: &SearchOptions,
    decision: Decision,
) -> Ranking {
    let semantic = ranking(semantic, false);
    let lexical = ranking(lexical, true);
    let share = |bm25: f32| {
        if measures.bound > 0.0 {
            (bm25 / measures.bound).clamp(0.0, 1.0)
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
        let cos = match mode {
            Mode::Lexical => 0.0,
            _ => hit
                .semantic
                .map_or_else(|| (measures.cosine)(hit.row), |r| r.score),
        };
        let bm25 = match (mode, hit.lexical) {
            (Mode::Semantic, _) => 0.0,
            (_, Some(r)) => share(r.score),
            (_, None) => share((measures.bm25)(hit.row)),
        };
        hit.score = relevance::evidence(mode, cos, bm25, measures.terms);
        measured.push((hit.score, cos, bm25));
    }
    measured.sort_by(|a, b| b.0.total_cmp(&a.0));
    let top = &measured[..measured.len().min(NO_MATCH_DEPTH)];
    let (best_cosine, best_share) = top
        .iter()
        .fold((f32::MIN, 0f32), |(c, s), m| (c.max(m.1), s.max(m.2)));
    let evidence = relevance::QueryEvidence {
        best_cosine,
        best_share,
        terms: measures.terms,
        centre: measures.centre,
    };
    let scale = relevance::scale(mode);
    for hit in &mut hits {
        hit.score = scale.score(hit.score);
    }
    let best = measured.first().map(|m| scale.score(m.0));
    let verdict = match decision {
        Decision::ByRule => Verdict::of(mode, &evidence, best),
        Decision::Matched => Verdict::from_best(best),
        Decision::Given(verdict) => verdict,
    };
    if options.strict && verdict == Verdict::None {
        hits.clear();
    }
    Ranking {
        hits: rank(hits, options),
        verdict,
    }
}

/// Who decides a text query's verdict.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    /// The mode's own no-match rule, from the hits [`combine`] ranks.
    ByRule,
    /// Decided before, to match: only the best score splits strong from
    /// weak.
    Matched,
    /// Decided before: lexical mode with the query's meaning at hand asks
    /// hybrid mode (`retrieve::search_parsed`).
    Given(Verdict),
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

    fn measures<'a>(
        bound: f32,
        terms: usize,
        cosine: &'a dyn Fn(usize) -> f32,
        bm25: &'a dyn Fn(usize) -> f32,
    ) -> Measures<'a> {
        Measures {
            bound,
            terms,
            centre: 0.0,
            cosine,
            bm25,
        }
    }

    #[test]
    fn hybrid_scores_each_hit_by_its_own_measurements() {
        // Cosines 0.9, 0.8, 0.7; lexical matches 2 strongly, 1 weakly; 0
        // has words the lexical list did not reach.
        let semantic = vec![Hit::new(0, 0.9), Hit::new(1, 0.8), Hit::new(2, 0.7)];
        let lexical = vec![Hit::new(1, 1.0), Hit::new(2, 9.0), Hit::new(5, 2.0)];
        let cosine = |row: usize| if row == 5 { 0.3 } else { f32::NAN };
        let bm25 = |row: usize| if row == 0 { 0.5 } else { f32::NAN };
        let options = SearchOptions::default();
        let m = measures(10.0, 3, &cosine, &bm25);
        let hits = combine(
            semantic.clone(),
            lexical.clone(),
            &m,
            &options,
            Decision::ByRule,
        )
        .hits;
        let rows: Vec<usize> = hits.iter().map(|h| h.row).collect();
        let p = |c, b| relevance::evidence(Mode::Hybrid, c, b, 3);
        let mut expected = [
            (0, p(0.9, 0.05)),
            (1, p(0.8, 0.1)),
            (2, p(0.7, 0.9)),
            (5, p(0.3, 0.2)),
        ];
        expected.sort_by(|a, b| b.1.total_cmp(&a.1));
        assert_eq!(rows, expected.map(|e| e.0));
        let scale = relevance::scale(Mode::Hybrid);
        for (hit, (_, e)) in hits.iter().zip(expected) {
            assert!((hit.score - scale.score(e)).abs() < 1e-6);
            assert!((0.0..=1.0).contains(&hit.score));
        }
        let lexical_rank = |row: usize| hits.iter().find(|h| h.row == row).unwrap().lexical;
        assert_eq!(lexical_rank(2).map(|r| r.rank), Some(1));
        assert_eq!(lexical_rank(0), None);
        // A hit scores the same without the others, and the floor cuts by score.
        let alone = combine(
            vec![Hit::new(2, 0.7)],
            vec![Hit::new(2, 9.0)],
            &m,
            &options,
            Decision::ByRule,
        );
        let score = |hits: &[Hit], row: usize| hits.iter().find(|h| h.row == row).unwrap().score;
        assert_eq!(score(&alone.hits, 2), score(&hits, 2));
        let floor = hits[1].score;
        let floored = SearchOptions {
            min_score: Some(floor),
            ..options
        };
        let cut = combine(semantic, lexical, &m, &floored, Decision::ByRule);
        assert_eq!(cut.hits.len(), 2, "the floor applies to the probability");
    }

    #[test]
    fn every_query_lists_its_ranking_with_a_verdict_and_strict_hides_none() {
        let zero = |_: usize| 0.0;
        for mode in [Mode::Semantic, Mode::Hybrid] {
            let options = SearchOptions {
                mode,
                ..Default::default()
            };
            // A strong best hit: every hit is listed, the weak one too.
            let strong = vec![Hit::new(0, 0.95), Hit::new(1, -0.2)];
            let words = vec![Hit::new(0, 10.0)];
            let m = measures(10.0, 3, &zero, &zero);
            let ranking = combine(strong, words, &m, &options, Decision::ByRule);
            assert_eq!(ranking.hits.len(), 2, "{mode:?}: a match lists its k best");
            assert_eq!(ranking.verdict, Verdict::Strong, "{mode:?}");
            // Nothing near: the ranking all the same, with the verdict none.
            let weak = vec![Hit::new(0, 0.12), Hit::new(1, 0.05)];
            let m = measures(0.0, 3, &zero, &zero);
            let none = combine(weak.clone(), Vec::new(), &m, &options, Decision::ByRule);
            assert_eq!(none.verdict, Verdict::None, "{mode:?}: a cosine of 0.12");
            assert_eq!(none.hits.len(), 2);
            let strict = SearchOptions {
                strict: true,
                ..options
            };
            assert!(combine(weak, Vec::new(), &m, &strict, Decision::ByRule)
                .hits
                .is_empty());
        }
    }

    #[test]
    fn a_verdict_decided_before_is_kept() {
        let options = SearchOptions {
            mode: Mode::Lexical,
            ..Default::default()
        };
        let weak = || vec![Hit::new(3, 1.0), Hit::new(4, 0.5)];
        let zero = |_: usize| 0.0;
        let m = measures(30.0, 3, &zero, &zero);
        let by_rule = combine(vec![], weak(), &m, &options, Decision::ByRule);
        assert_eq!(by_rule.verdict, Verdict::None, "one term of three, weakly");
        let matched = combine(vec![], weak(), &m, &options, Decision::Matched);
        assert_eq!(matched.verdict, Verdict::Weak);
        assert_eq!(
            matched.hits.iter().map(|h| h.row).collect::<Vec<_>>(),
            [3, 4]
        );
        assert!(matched.hits[0].score > matched.hits[1].score);
        let given = combine(
            vec![],
            weak(),
            &m,
            &options,
            Decision::Given(Verdict::Strong),
        );
        assert_eq!(given.verdict, Verdict::Strong);
    }
}
